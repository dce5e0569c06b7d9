"""How the ``bankfeed`` command reads its arguments: argparse, with its usage errors as the rest of
the command gives them (docs/export.md#the-command, its exit status): one line on stderr, exit
status 2, and never a value the command does not take echoed back, since it may be a key typed where it does not
belong (a shell's history and every user's process list already hold it; the terminal, a CI log
and a cron mail need not).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import NoReturn

__all__ = ["CommandParser", "unknown_arguments"]

#: Words in a flag that say its value is a secret of some kind.
_SECRET_WORDS = ("key", "secret", "password", "token")


class CommandParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are one line (``bankfeed export: error: ...``),
    with where to read the usage, instead of the usage itself on a dozen lines. Its subcommands'
    parsers are of this class too (``add_subparsers`` makes them of their parent's class)."""

    def error(self, message: str) -> NoReturn:
        print(f"error: {message} (usage: {self.prog} --help)", file=sys.stderr)
        raise SystemExit(2)


def unknown_arguments(extra: Sequence[str]) -> str:
    """The message for arguments no parser took: the flags named, never the values (see the
    module's docstring), and where keys come from when a flag looks like one."""
    flags = [item.split("=", 1)[0] for item in extra if item.startswith("-") and item != "-"]
    values = len(extra) - len(flags)
    named = ", ".join(flags) if flags else ""
    more = f"{values} value{'s' if values != 1 else ''} not taken by any flag" if values else ""
    message = "unrecognized arguments: " + "; ".join(part for part in (named, more) if part)
    if any(word in flag.lower() for flag in flags for word in _SECRET_WORDS):
        message += "; keys are never given on the command line: set BANKFEED_API_KEY and BANKFEED_SECRET_KEY"
    return message
