"""Conversions of :class:`bankfeed.Table` to pyarrow, pandas and polars.

Each library is optional; a missing one raises ImportError naming the extra that installs it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["to_arrow", "to_pandas", "to_polars"]


def _require(module: str, extra: str) -> Any:
    try:
        return __import__(module)
    except ImportError as exc:
        raise ImportError(
            f"this needs {module}: pip install 'bankfeed[{extra}]'"
        ) from exc


def to_arrow(table: Any) -> Any:
    """The table as a ``pyarrow.Table``, through the Arrow C stream (no copy of the data)."""
    pa = _require("pyarrow", "arrow")
    return pa.RecordBatchReader.from_stream(table).read_all()


def to_pandas(table: Any) -> Any:
    """The table as a ``pandas.DataFrame``: dates as datetime64, numbers as float64."""
    _require("pandas", "pandas")
    _require("pyarrow", "pandas")
    return to_arrow(table).to_pandas(date_as_object=False)


def to_polars(table: Any) -> Any:
    """The table as a ``polars.DataFrame``, through the Arrow C stream."""
    pl = _require("polars", "polars")
    return pl.DataFrame(table)
