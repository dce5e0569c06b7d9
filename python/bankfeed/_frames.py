"""Conversions of :class:`bankfeed.Table` to pyarrow, pandas and polars.

Each library is optional; a missing one raises ImportError naming the extra that installs it. A
library that is installed but fails to import raises its own error, whose cause is elsewhere.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # Annotations only: each library is imported at run time by the conversion that needs it.
    import pandas
    import polars
    import pyarrow

    from bankfeed._native import Table

__all__ = ["column", "to_arrow", "to_pandas", "to_polars"]


def _require(module: str, extra: str) -> None:
    """Imports ``module``, or raises ImportError naming the extra of bankfeed that installs it."""
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name != module:
            raise  # the library is there but one of its own imports is not: that is the news
        raise ImportError(f"this needs {module}: pip install 'bankfeed[{extra}]'", name=module) from exc


def to_arrow(table: Table) -> pyarrow.Table:
    """The table as a ``pyarrow.Table``, through the Arrow C stream (no copy of the data)."""
    _require("pyarrow", "arrow")
    import pyarrow

    return pyarrow.RecordBatchReader.from_stream(table).read_all()


def to_pandas(table: Table) -> pandas.DataFrame:
    """The table as a ``pandas.DataFrame``: dates as datetime64, numbers as float64."""
    _require("pandas", "pandas")
    _require("pyarrow", "pandas")
    # pyarrow has no type information: name the type its to_pandas gives.
    frame: pandas.DataFrame = to_arrow(table).to_pandas(date_as_object=False)
    return frame


def to_polars(table: Table) -> polars.DataFrame:
    """The table as a ``polars.DataFrame``, through the Arrow C stream."""
    _require("polars", "polars")
    import polars

    return polars.DataFrame(table)


def column(table: Table, name: object) -> Any:
    """``table[name]``: the column as a ``pyarrow.Array`` when pyarrow imports (no copy of the
    data), as a list otherwise; KeyError names the columns."""
    if not isinstance(name, str):
        raise TypeError(f"a column is named by a str (one of {table.columns}); got {type(name).__name__}")
    if name not in table.columns:
        raise KeyError(f"no column {name!r}; columns: {table.columns}")
    try:
        import pyarrow
    except ModuleNotFoundError as exc:
        if exc.name != "pyarrow":
            raise
        return table.column(name)
    return pyarrow.RecordBatchReader.from_stream(table).read_all().column(name).combine_chunks()
