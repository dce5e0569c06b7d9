"""The journal (docs/export.md#how-files-are-written): one entry per committed batch of a kind,
``_journal/<kind>/<batch>.json``, written whole as the batch's commit (``writer.py`` says when),
and read back an entry at a time, each checked (``checks.journal_entry``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from bankfeed._export.ondisk import checks
from bankfeed._export.ondisk.layout import JOURNAL, RUN_LENGTH, record_file, record_of_file
from bankfeed._export.storage import Storage

__all__ = ["Journal", "failure_record", "read_journal", "run_of", "write_entry"]


def failure_record(login_id: str, error: BaseException, kind: str) -> dict[str, Any]:
    """A failed login as ``_failures.jsonl`` and the journal keep it: the exception's class, the
    service's code, the message, its RequestId (a ``PendingTimeout``'s is the one a resume polls),
    the operation. No secret: bankfeed's exceptions carry none
    (docs/errors.md#what-every-error-keeps)."""
    return {
        "login_id": login_id,
        "kind": kind,
        "error": type(error).__name__,
        "code": getattr(error, "code", None),
        "message": str(error),
        "request_id": getattr(error, "request_id", None),
        "operation": getattr(error, "operation", None),
    }


def write_entry(
    storage: Storage,
    kind: str,
    batch: str,
    *,
    run: str,
    written: Iterable[tuple[str, str | None]],
    failed: list[dict[str, Any]],
    files: Mapping[str, str],
    rows: Mapping[str, int],
    raw: str | None,
    cursors: Mapping[str, Any] | None,
) -> float:
    """Writes the journal entry of ``batch`` of ``kind``, whole or not at all: the batch's commit.
    ``written`` pairs each login written with its RequestId; ``failed`` holds
    :func:`failure_record`-s; ``files`` and ``rows`` name each table's file and count its rows;
    ``raw`` names the file of payloads (``keep_raw``), ``cursors`` each login's transactions cursor
    (``events.py``). When it was committed (its ``committed_at``)."""
    committed_at = time.time()
    entry: dict[str, Any] = {
        "batch": batch,
        "kind": kind,
        "run": run,
        "committed_at": committed_at,
        "written": [[login, request_id] for login, request_id in written],
        "failed": failed,
        "files": dict(files),
        "rows": dict(rows),
        **({"raw": raw} if raw is not None else {}),
    }
    if cursors:
        entry["cursors"] = cursors
    storage.write_whole(storage.path(JOURNAL, kind, record_file(batch)), json.dumps(entry).encode("utf-8"))
    return committed_at


class Journal:
    """The journal entries of one kind, oldest first, as :func:`read_journal` found them: each
    checked once, then held as its name and run only, and read again from its file when iterated.
    A journal holds every login's entry (and each one's transactions cursor): read whole into
    memory it would grow with the logins, gigabytes at 1,000,000 (BENCHMARKS.md, export)."""

    def __init__(self, storage: Storage, kind: str, fmt: str, index: list[tuple[str, str]]) -> None:
        self._storage = storage
        self._kind = kind
        self._fmt = fmt
        #: (name, run) of each entry, oldest first.
        self._index = index
        self._forgotten: set[str] = set()
        #: When each entry was committed, by name: how a later reading orders them with the
        #: entries it finds new (:func:`read_journal`'s ``known``).
        self.committed_at: dict[str, float] = {}

    def known(self) -> dict[str, tuple[float, str]]:
        """Each entry still counted (a repair dropped none of it), by name: when it was
        committed, and its run."""
        return {
            name: (self.committed_at[name], run)
            for name, run in self._index
            if name not in self._forgotten and name in self.committed_at
        }

    def _load(self, name: str) -> dict[str, Any]:
        storage, kind = self._storage, self._kind
        text = checks.read_text(storage, storage.path(JOURNAL, kind, name), "journal entry", f"{JOURNAL}/{kind}/{name}")
        return checks.journal_entry(storage.shown, kind, self._fmt, name, text, cursors=False)

    def read(self, name: str) -> dict[str, Any]:
        """The entry ``name``, read again from its file and checked."""
        return self._load(name)

    def __iter__(self) -> Iterator[tuple[str, dict[str, Any]]]:
        for name, _ in self._index:
            if name not in self._forgotten:
                yield name, self._load(name)

    def __len__(self) -> int:
        return len(self._index) - len(self._forgotten)

    def runs(self) -> list[str]:
        """The runs of its entries, each once, in the order of their first entry."""
        return list(dict.fromkeys(run for name, run in self._index if name not in self._forgotten))

    def count(self, run: str) -> int:
        """How many of its entries are of the run ``run`` (none read)."""
        return sum(1 for name, entry_run in self._index if entry_run == run and name not in self._forgotten)

    def of_run(self, run: str) -> Iterator[tuple[str, dict[str, Any]]]:
        """The entries of the run ``run``, oldest first."""
        for name, entry_run in self._index:
            if entry_run == run and name not in self._forgotten:
                yield name, self._load(name)

    def forget(self, name: str) -> None:
        """Leaves out the entry ``name`` from now on (a repair deleted it)."""
        self._forgotten.add(name)


def read_journal(
    storage: Storage,
    kind: str,
    fmt: str,
    prefix: str = "",
    *,
    cursors: bool = True,
    known: Mapping[str, tuple[float, str]] | None = None,
) -> Journal:
    """The journal entries of ``kind`` whose batch names start with ``prefix``, oldest first,
    each checked (``checks.journal_entry``): a ``ConfigError`` naming the first that is damaged
    or not the export's (cut short, edited, planted), which is never skipped: its batch's part
    files would stay, and its logins be written again. Each is read, checked and let go; the
    :class:`Journal` reads them again as they are used. ``cursors`` false: their cursors are not
    checked, for a reader that does not use them (a run's end).

    ``known``: the entries this run checked already (:meth:`Journal.known` of its start's
    reading) or committed itself, by name, with when they were committed and their run; those
    still there are not read again here. The run holds the export's lock from before its start's
    reading, so only the entries it committed, or a cluster run's workers did, are new: each of
    those is read and checked (BENCHMARKS.md, export: each reading of a journal of 1,000,000
    logins takes minutes)."""
    directory = storage.path(JOURNAL, kind)
    found: list[tuple[float, str, str]] = []
    for name in storage.listdir(directory):
        if record_of_file(name) is None or not name.startswith(prefix):
            continue  # a temporary (see ``state.read_state``), or a file no reading of the journal looks at
        if known is not None and name in known:
            committed_at, run = known[name]
            found.append((committed_at, name, run))
            continue
        text = checks.read_text(storage, storage.path(directory, name), "journal entry", f"{JOURNAL}/{kind}/{name}")
        entry = checks.journal_entry(storage.shown, kind, fmt, name, text, cursors=cursors)
        found.append((float(entry["committed_at"]), name, run_of(entry)))
        del text, entry
    found.sort()
    journal = Journal(storage, kind, fmt, [(name, run) for _, name, run in found])
    journal.committed_at = {name: committed_at for committed_at, name, _ in found}
    return journal


def run_of(entry: Mapping[str, Any]) -> str:
    """The run a journal entry's batch belongs to: its ``run``, or, in an export written before
    runs had partitions, the run its batch's name starts with."""
    run = entry.get("run")
    return run if isinstance(run, str) else str(entry["batch"])[:RUN_LENGTH]
