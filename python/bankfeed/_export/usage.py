"""The usage errors of ``bankfeed export`` that need nothing started, found before the embedded
sandbox starts or anything is read (docs/export.md#the-command), and the command line's way of
saying a rule: in flags, never in Python arguments.

The run checks the same arguments again (``bf.export`` has no command line to check them first):
these checks only move the command's report ahead of everything else.
"""

from __future__ import annotations

import argparse
import re

from bankfeed._export.formulas import check_csv_formulas
from bankfeed._export.kinds import parse_what
from bankfeed._export.run import _FORMATS, _OURS, _seconds, _wrote
from bankfeed._export.storage import Storage
from bankfeed.errors import _check_count, _config_error

__all__ = ["check_usage", "in_flags"]

#: ``name=VALUE (--flag [VALUE])``: a rule naming the Python argument and, in brackets, its flag.
_BOTH = re.compile(r"\b[a-z_]+=\S+ \((--[a-z-]+(?: [A-Z]+)?)\)")
#: Python arguments a rule names with no flag beside them, and their flags.
_ARGUMENTS = {'format="csv"': "--format csv", "resume=True": "--resume"}


def in_flags(rule: str) -> str:
    """``rule`` as the command line says it: ``pass resume=True (--resume)`` becomes ``pass
    --resume``; the Python spelling is for ``bf.export``'s callers."""
    rule = _BOTH.sub(r"\1", rule)
    for argument, flag in _ARGUMENTS.items():
        rule = rule.replace(argument, flag)
    return rule


def check_usage(args: argparse.Namespace) -> None:
    """Raises the ``ConfigError`` the run would raise for ``args`` (named as the run names it),
    for every argument that can be judged before anything starts."""
    fmt = args.format or "parquet"
    if fmt not in _FORMATS:
        raise _config_error("format", f'must be "parquet" or "csv", got {fmt!r}')
    _check_count("concurrency", args.concurrency)
    _check_count("batch_logins", args.batch_logins)
    if args.partition_size is not None:
        _check_count("partition_size", args.partition_size)
    check_csv_formulas(args.csv_formulas)
    _seconds("wait_lock", args.wait_lock)
    parse_what(args.what, days=args.days)
    if args.resume or "://" in args.out:
        return  # a URL's filesystem is opened by the run, which then checks it
    storage = Storage(args.out)
    try:
        present = [name for name in storage.listdir(storage.root) if name in _OURS and _wrote(storage, name)]
    except OSError:
        return  # not there yet, or not a directory: the run makes it, or says why it cannot
    if present:
        raise _config_error(
            "out",
            f"already holds an export ({storage.shown}: {', '.join(present)}): pass --resume to go on with it, "
            "or write to an empty directory",
        )
