"""``bankfeed cassette check PATH...``: the check of committed cassettes without the values of the
sessions that recorded them (docs/cassettes.md#checking-committed-cassettes), for a CI job or a
pre-commit hook. The check itself is the core's (:func:`bankfeed.check_cassette`).

Exit status: 0 every cassette is clean, 1 one holds a secret where a placeholder must be, has a
sidecar file missing or changed, or is no cassette, 2 usage (no path, a path that does not exist,
a directory with no cassette in it)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import bankfeed as bf

#: The endings of the files a directory given is searched for.
CASSETTE_SUFFIXES = (".yaml", ".yml")


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """Adds ``cassette`` (with its one subcommand, ``check``) to the subcommands of ``bankfeed``."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "cassette", help="work with cassettes (recorded sessions): check them"
    )
    actions = parser.add_subparsers(dest="cassette_command", required=True)
    check = actions.add_parser(
        "check",
        help="check committed cassettes for secrets",
        description="Checks cassettes without the values of the sessions that recorded them: each file "
        "parses, and every secret field (the key headers, Authorization, cookies, a login's password and "
        "username, every SecurityResponses answer, tokens) holds the placeholder REDACTED, and every sidecar "
        "file it refers to is there, unchanged (its SHA-256). Each finding "
        "names the file, the interaction and the field, never the value. A directory is searched for "
        "*.yaml and *.yml files. Exit status: 0 clean, 1 a finding, 2 usage.",
    )
    check.add_argument("paths", nargs="+", metavar="PATH", help="a cassette file, or a directory of them")
    return check


def cassettes(paths: list[str]) -> list[Path] | str:
    """The cassette files ``paths`` name, in order (a directory's sorted), or the usage error."""
    found: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            inside = sorted(p for p in path.rglob("*") if p.suffix in CASSETTE_SUFFIXES and p.is_file())
            if not inside:
                return f"{given}: a directory with no .yaml or .yml file in it"
            found.extend(inside)
        elif path.exists():
            found.append(path)
        else:
            return f"{given}: no such file or directory"
    return found


def run(args: argparse.Namespace) -> int:
    """Checks every cassette ``args.paths`` name; prints each finding, then a summary."""
    files = cassettes(args.paths)
    if isinstance(files, str):
        print(f"error: {files}", file=sys.stderr)
        return 2
    findings = [finding for path in files for finding in bf.check_cassette(path)]
    for finding in findings:
        print(finding)
    if findings:
        print(f"{len(findings)} finding(s) in {len(files)} cassette(s)", file=sys.stderr)
        return 1
    print(f"{len(files)} cassette(s) clean")
    return 0
