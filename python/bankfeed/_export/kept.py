"""How ``bankfeed.spark.read`` and ``bankfeed.dask.read`` keep what they fetched, so that every
action (or compute) after them reads it instead of fetching every login again
(docs/scale-out.md#fetched-once): the engine's own keeping (a Spark local checkpoint, a Dask
persist) or, for Spark, ``land``, a path or URL to write the rows to as Parquet; ``once=False``
keeps nothing, and the frame is fetched again by every action."""

from __future__ import annotations

import os

from bankfeed.errors import _config_error

__all__ = ["check_keep"]


def check_keep(land: object, once: object) -> None:
    """``land`` is None or a path (text, or ``os.PathLike``); ``once`` a bool, and true with ``land``."""
    if not isinstance(once, bool):
        raise TypeError(f"once must be a bool, not {type(once).__name__}")
    if land is None:
        return
    if not isinstance(land, str | os.PathLike):
        raise TypeError(f"land must be a path or URL (str or os.PathLike), not {type(land).__name__}")
    if not os.fspath(land):
        raise _config_error("land", "must be a path or URL to write the rows to, got an empty one")
    if not once:
        raise _config_error("land", "writes the rows once for every action to read, which once=False refuses")
