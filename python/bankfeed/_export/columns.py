"""The columns every exported row starts with (docs/export.md#the-layout): ``login_id``, then
the ``request_id`` the login's data came from and when it was fetched (``fetched_at``, UTC).

A batch of logins is one combined table per table, gathered by the core (``_Gathering`` with
provenance), which writes each login's LoginId, RequestId and time beside its rows as it copies
them: no index, no repetition afterwards.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from bankfeed._native import _Gathering

if TYPE_CHECKING:
    from bankfeed._native import Table

__all__ = ["Gathered"]


class Gathered:
    """The results of some logins of one kind, gathered as they come into one combined table per
    table (``bf.combine``'s gathering, each result dropped once its rows are copied), with the
    provenance columns, and the LoginIds and RequestIds gathered (the batch's journal entry).
    What the export writes a batch of, and the dlt source yields."""

    def __init__(self, tables: Sequence[str], like: _Gathering | None = None) -> None:
        """``like``: the :attr:`gathering` of the previous batch of the same kind, finished; each
        table then starts as large as it grew there (see ``_Gathering``)."""
        self.tables = tuple(tables)
        #: Once :meth:`finish` is called, spent: it then holds only its tables' sizes.
        self.gathering = _Gathering(like, provenance=True)
        self.logins: list[str] = []
        self.request_ids: list[str | None] = []
        self.rows = 0

    def add(self, login_id: str, result: Any, fetched_at_us: int) -> int:
        """Gathers the result of ``login_id``, fetched at ``fetched_at_us`` (microseconds since
        the epoch); the rows it adds."""
        added = self.gathering.add((login_id, result), fetched_at_us)
        self.logins.append(login_id)
        self.request_ids.append(getattr(result, "request_id", None))
        self.rows += added
        return added

    def finish(self) -> dict[str, Table]:
        """The combined tables that have rows, ``login_id``, ``request_id`` and ``fetched_at``
        first; the gathering is then spent."""
        combined = self.gathering.finish()
        found = {table: combined.tables.get(table) for table in self.tables}
        return {table: gathered for table, gathered in found.items() if gathered is not None and len(gathered) > 0}
