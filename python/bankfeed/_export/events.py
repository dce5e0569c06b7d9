"""Transactions written once across the runs of an export (docs/export.md#transactions-once).

A table of events (``kinds.EVENT_KEYS``: the transactions of ``accounts`` and of ``investments``)
is incremental: each run writes only the transactions no earlier run wrote, and those that changed
since (a newer version, which a reader takes by the newest ``run_id``). Where each login stands is
kept in the journal, with the batch that wrote it (``writer.py``), so that it is committed with
the rows, or not at all: each entry holds, per login it wrote, a *cursor*:

- ``through``: per account, the date of its newest transaction seen (``accounts`` only); the next
  run asks the service for the transactions from :data:`OVERLAP_DAYS` before the newest of them
  (``DateFrom``), since banks post late;
- ``seen``: per date, the transactions the batch wrote, each as a short hash of its key (account
  and transaction id) to a short hash of its content; what a later run compares with. For
  ``accounts`` only the dates a later run can be answered with are kept (those of the overlap), so
  a login's cursor stays small however long the export lives; ``investments``, which has no
  ``DateFrom``, is answered with the whole history each time, and keeps every key;
- ``reset``: the batch started the login's history over (``full_refresh``): earlier cursors no
  longer count.

A login's state is its cursors merged in the order of the journal (:func:`merge`), kept on disk
for the run (``cursor_store.py``): a run never holds every login's state in memory.
"""

from __future__ import annotations

import datetime
import hashlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from bankfeed._export.cursor_store import CursorStore
from bankfeed._export.logins import fold

__all__ = ["OVERLAP_DAYS", "Events", "check_cursor", "merge", "states"]

#: Days before the newest transaction of a login that the next run asks for again: a bank posts
#: a transaction days after its date (a card payment, a cheque), and may correct one; those days
#: come again each run, and what did not change in them is not written again.
OVERLAP_DAYS = 7

#: The key and content hashes: 48 and 32 bits, as hex. Within one login's transactions a key's
#: collision is improbable beyond concern (2^-48 a pair), and a content's would only miss one change.
_KEY_HEX = 12
_CONTENT_HEX = 8


def _hash(text: str, size: int) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=size // 2).hexdigest()


def _day(value: object) -> str:
    return value.isoformat() if isinstance(value, datetime.date) else ""


def merge(state: dict[str, Any] | None, cursor: Mapping[str, Any], *, windowed: bool) -> dict[str, Any]:
    """``state`` (a login's, None at first) with a later batch's ``cursor`` applied; with
    ``windowed``, only the dates of the overlap kept."""
    if state is None or cursor.get("reset"):
        state = {"through": {}, "seen": {}}
    through: dict[str, str] = state["through"]
    for account, day in (cursor.get("through") or {}).items():
        if day > through.get(account, ""):
            through[account] = day
    seen: dict[str, dict[str, str]] = state["seen"]
    for day, hashes in (cursor.get("seen") or {}).items():
        seen.setdefault(day, {}).update(hashes)
    if windowed and through:
        start = _start(max(through.values()))
        for day in [day for day in seen if day < start]:
            del seen[day]
    return state


def _start(newest: str) -> str:
    """The first day of the overlap before ``newest`` (``YYYY-MM-DD``)."""
    return (datetime.date.fromisoformat(newest) - datetime.timedelta(days=OVERLAP_DAYS)).isoformat()


def check_cursor(cursor: object) -> str | None:
    """What is wrong with a cursor read back from the journal (``ondisk/checks.py``); None when it is one."""
    if not isinstance(cursor, dict):
        return "it is not an object"
    through, seen = cursor.get("through", {}), cursor.get("seen", {})
    if not isinstance(through, dict) or not all(isinstance(v, str) and len(v) == 10 for v in through.values()):
        return "its through is not an object of dates"
    if not isinstance(seen, dict) or not all(
        isinstance(day, str) and isinstance(hashes, dict) and all(isinstance(v, str) for v in hashes.values())
        for day, hashes in seen.items()
    ):
        return "its seen is not an object of dates to objects of hashes"
    if not isinstance(cursor.get("reset", False), bool):
        return "its reset is not true or false"
    return None


def states(kind: str) -> tuple[CursorStore, Callable[[Mapping[str, Any]], None]]:
    """An empty store of each login's state (by folded LoginId), on disk (``cursor_store.py``),
    and what applies a journal entry of ``kind`` to it: given the entries oldest first (those of
    batches a repair dropped left out: ``state.read_state``'s ``each``), each is read, applied and
    let go in turn."""
    found = CursorStore()
    windowed = kind == "accounts"

    def merged(state: dict[str, Any] | None, cursor: Mapping[str, Any]) -> dict[str, Any]:
        return merge(state, cursor, windowed=windowed)

    def apply(entry: Mapping[str, Any]) -> None:
        found.apply(entry.get("cursors") or {}, merged)

    return found, apply


class Events:
    """The event table of one kind in one run: what earlier runs wrote of each login
    (``previous``: by folded LoginId, its merged state), which transactions of a batch to write,
    and the batch's cursors. ``full_refresh``: every login starts its history over."""

    def __init__(self, kind: str, table: str, previous: Mapping[str, Any], *, full_refresh: bool = False) -> None:
        self.kind = kind
        self.table = table
        #: By folded LoginId, its state: a ``CursorStore`` on disk in a run, a dict in a partition.
        self.previous: Mapping[Any, Any] = {} if full_refresh else previous
        self.full_refresh = full_refresh
        #: Only ``accounts`` answers from a date (``DateFrom``); its state keeps the overlap only.
        self.windowed = kind == "accounts"

    def of(self, logins: Iterable[Any]) -> Events:
        """The same, for ``logins`` only: what a partition of a cluster run takes to its worker."""
        found = ((fold(login), self.previous.get(fold(login))) for login in logins)
        previous = {login: state for login, state in found if state is not None}
        return Events(self.kind, self.table, previous, full_refresh=self.full_refresh)

    def date_from(self, login_id: object) -> str | None:
        """The first day the next request of ``login_id`` asks for (``DateFrom``): the overlap
        before its newest transaction; None (everything) for a login with none yet, or a kind
        without dates."""
        state = self.previous.get(fold(login_id))
        if not self.windowed or not state or not state["through"]:
            return None
        return _start(max(state["through"].values()))

    def sift(
        self, rows: Iterable[tuple[Any, ...]], columns: list[str], logins: Iterable[str]
    ) -> tuple[list[bool], dict[str, Any]]:
        """Which of ``rows`` (of the table, with ``columns``; ``login_id`` first) to write: those
        no earlier run wrote, and the changed ones; and the cursor of each login of ``logins``
        that has one to keep."""
        account, transaction, date = (columns.index(name) for name in ("account_id", "transaction_id", "date"))
        # The content: every column but the provenance (login_id, request_id, fetched_at).
        content_from = columns.index("fetched_at") + 1
        keep: list[bool] = []
        cursors: dict[str, dict[str, Any]] = {}
        lookups: dict[str, dict[str, str]] = {}
        # The batch's logins' states, each read once (from disk, in a run).
        before: dict[Any, Any] = {}

        def previous(login: Any) -> Any:
            folded = fold(login)
            if folded not in before:
                before[folded] = self.previous.get(folded)
            return before[folded]

        for row in rows:
            login = row[0]
            lookup = lookups.get(login)
            if lookup is None:
                state = previous(login)
                lookup = {
                    key: value for hashes in (state or {}).get("seen", {}).values() for key, value in hashes.items()
                }
                lookups[login] = lookup
            key = _hash(f"{row[account]}\x1f{row[transaction]}", _KEY_HEX)
            content = _hash(repr(row[content_from:]), _CONTENT_HEX)
            new = lookup.get(key) != content
            keep.append(new)
            day = _day(row[date])
            cursor = cursors.setdefault(login, {"through": {}, "seen": {}})
            if day and day > cursor["through"].get(row[account], ""):
                cursor["through"][row[account]] = day
            if new:
                lookup[key] = content
                cursor["seen"].setdefault(day, {})[key] = content
        if self.windowed:
            # Only the overlap's days are ever compared again: the cursor keeps those.
            for login, cursor in cursors.items():
                through = (previous(login) or {}).get("through", {})
                newest = max([*through.values(), *cursor["through"].values()], default="")
                if newest:
                    start = _start(newest)
                    cursor["seen"] = {day: hashes for day, hashes in cursor["seen"].items() if day >= start}
        for login in logins:
            found = cursors.get(login)
            if self.full_refresh:
                cursors[login] = {**(found or {"through": {}, "seen": {}}), "reset": True}
            elif found is not None and not self.windowed:
                found.pop("through")
        return keep, cursors
