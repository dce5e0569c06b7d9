"""Where each login's transactions stood after the earlier runs of an export (``events.py``), held
on disk for the length of a run.

The journal is where the cursors live (each batch's entry holds those of its logins); a run reads
them back at its start, merged per login in the journal's order, and looks each login up as it
writes it. Kept as Python dicts, that state is the largest thing a run would hold: for
``investments``, whose cursor keeps every transaction's key, several kilobytes a login, gigabytes
at 1,000,000 logins (BENCHMARKS.md, export). So the merged states are kept in a temporary SQLite file
(one JSON text per login), made when the first cursor is read and deleted with the run: an index of
the journal for the run, never a store of its own (a run that finds none builds it again).
"""

from __future__ import annotations

import json
import shutil
import tempfile
import threading
import weakref
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from bankfeed._export.logins import fold

__all__ = ["CursorStore"]

#: LoginIds asked in one query (SQLite's limit of parameters is 999 in old builds).
_QUERY = 500


def _close(connection: Any, directory: str) -> None:
    connection.close()
    shutil.rmtree(directory, ignore_errors=True)


class CursorStore(Mapping[Any, dict[str, Any]]):
    """Folded LoginId (``logins.fold``) to its merged state (``events.merge``): a read-only mapping
    once built with :meth:`apply`. Without ``sqlite3`` (a Python built without it) the states are
    kept as JSON text in memory, which is still a fraction of the dicts."""

    def __init__(self) -> None:
        self._connection: Any = None
        self._memory: dict[Any, str] | None = None
        self._count = 0
        # The async export runs its batches' commits in a worker thread, one at a time.
        self._lock = threading.Lock()
        self._closer: weakref.finalize[Any, CursorStore] | None = None

    def _open(self) -> None:
        try:
            import sqlite3
        except ImportError:
            self._memory = {}
            return
        directory = tempfile.mkdtemp(prefix="bankfeed-cursors-")
        connection = sqlite3.connect(str(Path(directory) / "cursors.sqlite"), check_same_thread=False)
        # A scratch file: nothing to recover after a crash, so no journal and no fsync.
        connection.execute("PRAGMA journal_mode=OFF")
        connection.execute("PRAGMA synchronous=OFF")
        connection.execute("CREATE TABLE state (login TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID")
        self._connection = connection
        self._closer = weakref.finalize(self, _close, connection, directory)

    def _fetch(self, logins: list[Any]) -> dict[Any, str]:
        """The stored JSON of each of ``logins`` that has one."""
        if self._memory is not None:
            return {login: self._memory[login] for login in logins if login in self._memory}
        if self._connection is None:
            return {}
        found: dict[Any, str] = {}
        for start in range(0, len(logins), _QUERY):
            part = logins[start : start + _QUERY]
            marks = ",".join("?" * len(part))
            found.update(self._connection.execute(f"SELECT login, value FROM state WHERE login IN ({marks})", part))
        return found

    def apply(self, cursors: Mapping[Any, Mapping[str, Any]], merge: Any) -> None:
        """Merges a journal entry's ``cursors`` (by LoginId as written) into the states, with
        ``merge(state, cursor)`` (``events.merge``): entries are applied oldest first."""
        if not cursors:
            return
        with self._lock:
            if self._connection is None and self._memory is None:
                self._open()
            logins = list({fold(login) for login in cursors})
            stored = self._fetch(logins)
            merged: dict[Any, Any] = {login: json.loads(text) for login, text in stored.items()}
            for login, cursor in cursors.items():
                folded = fold(login)
                merged[folded] = merge(merged.get(folded), cursor)
            rows = [(login, json.dumps(state, separators=(",", ":"))) for login, state in merged.items()]
            self._count += sum(1 for login in merged if login not in stored)
            if self._memory is not None:
                self._memory.update(rows)
            else:
                with self._connection:
                    self._connection.executemany("INSERT OR REPLACE INTO state (login, value) VALUES (?, ?)", rows)

    def __getitem__(self, login: Any) -> dict[str, Any]:
        with self._lock:
            text = self._fetch([login]).get(login) if isinstance(login, str) else None
        if text is None:
            raise KeyError(login)
        value: dict[str, Any] = json.loads(text)
        return value

    def __contains__(self, login: object) -> bool:
        if not isinstance(login, str):
            return False
        with self._lock:
            return login in self._fetch([login])

    def __iter__(self) -> Iterator[Any]:
        if self._memory is not None:
            yield from list(self._memory)
        elif self._connection is not None:
            with self._lock:
                logins = [login for (login,) in self._connection.execute("SELECT login FROM state")]
            yield from logins

    def __len__(self) -> int:
        return self._count

    def close(self) -> None:
        """Deletes the file now (also done when the store is collected)."""
        if self._closer is not None:
            self._closer()
        self._connection = None
        self._memory = None
        self._count = 0
