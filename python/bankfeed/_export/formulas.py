"""Spreadsheet formulas in CSV part files (docs/export.md#csv-and-spreadsheets).

A spreadsheet that opens a CSV file runs a cell that starts with ``=``, ``+``, ``-`` or ``@`` (or
a tab or carriage return before one) as a formula: ``=HYPERLINK(...)`` sends what the sheet holds
to any site, ``+cmd|...`` starts a program through DDE. A transaction's description, an account's
title or a holder's name is text the service passes on from the institution, and from whoever
named the payment: by default such a text cell is written with a leading ``'``, which
spreadsheets take as "this is text" (OWASP's advice on CSV injection). Numbers (a negative amount)
are never changed, since only text cells are looked at. ``csv_formulas="raw"`` writes every cell
as it came, for a reader that is no spreadsheet.
"""

from __future__ import annotations

from typing import Any

from bankfeed.errors import _config_error

__all__ = ["CSV_FORMULAS", "check_csv_formulas", "escaped_cell", "escaped_columns"]

#: The values of ``csv_formulas``: neutralised (the default), or as they came.
CSV_FORMULAS = ("escape", "raw")

#: The first characters that make a spreadsheet read a cell as a formula.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

#: The same, as the pattern of Arrow's ``replace_substring_regex`` (RE2): the first character,
#: kept after the ``'`` put before it.
_FORMULA_PATTERN = "^([=+\\-@\t\r])"


def check_csv_formulas(value: object) -> str:
    """``value`` when it is one of :data:`CSV_FORMULAS`; else a ``ConfigError`` naming
    ``csv_formulas``."""
    if not isinstance(value, str) or value not in CSV_FORMULAS:
        raise _config_error("csv_formulas", f'must be "escape" or "raw", got {value!r}')
    return value


def escaped_cell(value: Any) -> Any:
    """``value`` as a CSV cell that no spreadsheet runs: a text starting as a formula gets a
    leading ``'``; anything else (a number, a date, None) is returned as it is."""
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    return value


def escaped_columns(table: Any) -> Any:
    """``table`` (a ``pyarrow.Table``) with :func:`escaped_cell` applied to every text column,
    computed by Arrow over each column at once."""
    import pyarrow
    import pyarrow.compute

    for index, column in enumerate(table.schema):
        if pyarrow.types.is_string(column.type) or pyarrow.types.is_large_string(column.type):
            escaped = pyarrow.compute.replace_substring_regex(
                table.column(index), pattern=_FORMULA_PATTERN, replacement="'\\1", max_replacements=1
            )
            table = table.set_column(index, column, escaped)
    return table
