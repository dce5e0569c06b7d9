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
from bankfeed._export.kinds import check_money, parse_what
from bankfeed._export.ondisk.layout import FORMATS
from bankfeed._export.options import check_seconds
from bankfeed._export.outage import check_max_consecutive_failures
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
    if fmt not in FORMATS:
        raise _config_error("format", f'must be "parquet" or "csv", got {fmt!r}')
    _check_count("concurrency", args.concurrency)
    _check_count("batch_logins", args.batch_logins)
    if args.partition_size is not None:
        _check_count("partition_size", args.partition_size)
    check_csv_formulas(args.csv_formulas)
    check_seconds("wait_lock", args.wait_lock)
    parse_what(args.what, days=args.days)
    if args.money is not None:
        check_money(args.money)
    check_max_consecutive_failures(args.max_consecutive_failures)
