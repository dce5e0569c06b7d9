"""The columns every exported row starts with (docs/export.md#the-layout): ``login_id``, which
``bf.combine`` puts first, then the ``request_id`` the login's data came from and when it was
fetched (``fetched_at``, UTC).

A batch of logins is one combined table; each login's rows are consecutive, in the order the
logins were gathered, so a login's two values are repeated over its rows by index.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow

__all__ = ["FETCHED_AT_TYPE", "with_provenance"]

#: The type of ``fetched_at``: microseconds, UTC, as the tables' own timestamps.
FETCHED_AT_TYPE = ("us", "UTC")


def _indices(counts: Sequence[int]) -> object:
    """The login of every row: ``i`` repeated ``counts[i]`` times."""
    try:
        import numpy
    except ImportError:  # pragma: no cover - pyarrow installs numpy; a bare pyarrow has none
        return [login for login, count in enumerate(counts) for _ in range(count)]
    return numpy.repeat(numpy.arange(len(counts), dtype=numpy.int64), numpy.asarray(counts, dtype=numpy.int64))


def with_provenance(
    table: pyarrow.Table, request_ids: Sequence[str | None], fetched_at: Sequence[int], counts: Sequence[int]
) -> pyarrow.Table:
    """``table`` (a combined table, ``login_id`` first) with ``request_id`` and ``fetched_at``
    after ``login_id``: login ``i`` of the batch has ``counts[i]`` rows in it, its RequestId
    ``request_ids[i]`` and its time ``fetched_at[i]`` (microseconds since the epoch)."""
    import pyarrow

    indices = pyarrow.array(_indices(counts), pyarrow.int64())
    request_id = pyarrow.array(request_ids, pyarrow.string()).take(indices)
    fetched = pyarrow.array(fetched_at, pyarrow.timestamp(*FETCHED_AT_TYPE)).take(indices)
    table = table.add_column(1, pyarrow.field("request_id", pyarrow.string()), request_id)
    return table.add_column(2, pyarrow.field("fetched_at", pyarrow.timestamp(*FETCHED_AT_TYPE)), fetched)
