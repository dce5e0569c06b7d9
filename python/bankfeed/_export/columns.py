"""The columns every exported row starts with (docs/export.md#the-layout): ``login_id``, which
``bf.combine`` puts first, then the ``request_id`` the login's data came from and when it was
fetched (``fetched_at``, UTC).

A batch of logins is one combined table; each login's rows are consecutive, in the order the
logins were gathered, so a login's two values are repeated over its rows by index.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from bankfeed._native import _Gathering

if TYPE_CHECKING:
    import pyarrow

    from bankfeed._native import Table

__all__ = ["FETCHED_AT_TYPE", "Gathered", "with_provenance"]

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


class Gathered:
    """The results of some logins of one kind, gathered as they come into one combined table per
    table (``bf.combine``'s gathering, each result dropped once its rows are copied), with what
    each login's provenance columns need: its RequestId, when it was fetched, and its rows per
    table. What the export writes a batch of, and the dlt source yields."""

    def __init__(self, tables: Sequence[str], like: _Gathering | None = None) -> None:
        """``like``: the :attr:`gathering` of the previous batch of the same kind, finished; each
        table then starts as large as it grew there (see ``_Gathering``)."""
        self.tables = tuple(tables)
        #: Once :meth:`finish` is called, spent: it then holds only its tables' sizes.
        self.gathering = _Gathering(like)
        self.logins: list[str] = []
        self.request_ids: list[str | None] = []
        self.fetched_at: list[int] = []
        #: Per table, the rows of each login gathered, in order.
        self.counts: dict[str, list[int]] = {table: [] for table in self.tables}
        self.rows = 0

    def add(self, login_id: str, result: Any, fetched_at_us: int) -> int:
        """Gathers the result of ``login_id``, fetched at ``fetched_at_us`` (microseconds since
        the epoch); the rows it adds."""
        self.gathering.add((login_id, result))
        self.logins.append(login_id)
        self.request_ids.append(getattr(result, "request_id", None))
        self.fetched_at.append(fetched_at_us)
        added = 0
        for table in self.tables:
            count = len(getattr(result, table))
            self.counts[table].append(count)
            added += count
        self.rows += added
        return added

    def finish(self) -> dict[str, Table]:
        """The combined tables that have rows, ``login_id`` first; the gathering is then spent."""
        combined = self.gathering.finish()
        found = {table: combined.tables.get(table) for table in self.tables}
        return {table: gathered for table, gathered in found.items() if gathered is not None and len(gathered) > 0}

    def arrow(self, table: str, gathered: Table) -> pyarrow.Table:
        """``gathered``, the combined ``table`` of :meth:`finish`, as Arrow with its provenance."""
        return with_provenance(gathered.to_arrow(), self.request_ids, self.fetched_at, self.counts[table])
