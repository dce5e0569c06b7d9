"""The command line's way of saying a rule of ``bankfeed export`` (docs/export.md#the-command):
in flags, never in Python arguments. The rules themselves are ``ExportOptions.of``'s, the same for
``bf.export`` and the command, which checks them before anything starts.
"""

from __future__ import annotations

import re

__all__ = ["in_flags"]

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
