"""What an output directory holds, read back from its journal (docs/export.md#resume): per kind,
the logins written and failed and the rows, and the directories the export's tables are in.

Reading the state also finishes what a kill interrupted: a committed batch whose files were not
renamed yet is renamed into place, and temporary files of batches never committed are deleted
(``writer.py`` says why this leaves every login in a dataset once). What is read is checked first
(``ondisk/checks.py``): a damaged file, or a name that is not the export's own, stops the run before
anything is renamed or deleted.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from bankfeed._export.kinds import KINDS
from bankfeed._export.login_set import LoginIdSet
from bankfeed._export.logins import fold
from bankfeed._export.ondisk import checks
from bankfeed._export.ondisk.journal import Journal, read_journal, run_of
from bankfeed._export.ondisk.layout import (
    ENTRY_TEMPORARY,
    JOURNAL,
    LEFTOVERS,
    RAW,
    RUN_DATE,
    RUN_ID,
    RUNS,
    is_temporary_part,
    record_of_file,
    temporary_name,
)
from bankfeed._export.raw import committed_files, raw_directory
from bankfeed._export.storage import Storage

__all__ = [
    "KindState",
    "check_directories",
    "partitioned_directories",
    "read_state",
    "remove_leftovers",
    "remove_uncommitted",
    "scan_state",
    "table_directories",
]


@dataclass
class KindState:
    """One kind's committed batches, as the journal says."""

    #: The LoginIds written, as they were given: kept compactly (``login_set.py``; a ``set`` of
    #: them was 100 MB at 1,000,000 logins). :meth:`has` asks it.
    written: LoginIdSet = field(default_factory=LoginIdSet)
    #: LoginId (folded: ``logins.fold``) to its latest failure when that is a ``PendingTimeout``
    #: with its RequestId, which a resume polls where it stood; the other failures are not held
    #: (a run against an unreachable service lists every login as failed: a record each was
    #: hundreds of MB at 1,000,000 logins, BENCHMARKS.md, export): :meth:`failed_logins` lists
    #: them, and ``_failures.jsonl`` is written from the journal entries in :attr:`failure_entries`.
    pending: dict[Any, dict[str, Any]] = field(default_factory=dict)
    #: The journal entries counted (of the run read) that hold failures, oldest first, by name.
    failure_entries: list[str] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)
    batches: int = 0
    #: The journal entries a repair dropped (a file of their batch gone): their cursors no longer
    #: count (``events.py``).
    dropped: set[str] = field(default_factory=set)
    #: Of the run read (``read_state``'s ``run``): its batches, their rows, and the LoginIds of
    #: their failures as written (``runs.summaries`` sums the run up from these).
    run_batches: int = 0
    run_rows: int = 0
    run_failures: LoginIdSet = field(default_factory=LoginIdSet)
    #: The written LoginIds that were not given in lower case, by their folded text: empty when
    #: every one was (the service's own are), so that asking in any case costs no second set of
    #: them all.
    _folded: dict[str, str] = field(default_factory=dict)

    def add_written(self, login_id: str) -> None:
        self.written.add(login_id)
        folded = fold(login_id)
        if folded != login_id:
            self._folded[folded] = login_id
        self.pending.pop(folded, None)

    def failed_logins(self) -> Iterator[str]:
        """The LoginIds of the run read that failed and were not written, as their failures name
        them, in sorted order: read from the compact set of them, never a list."""
        return (login for login in self.run_failures if not self.has(login))

    def has_failures(self) -> bool:
        """Whether a login of the run read failed and was not written."""
        return next(self.failed_logins(), None) is not None

    def has(self, login_id: object) -> bool:
        """Whether ``login_id`` is written, given in any case (``logins.fold``)."""
        return self.spelling(login_id) is not None

    def spelling(self, login_id: object) -> Any:
        """``login_id`` as it was written, in whatever case; None when it was not."""
        if login_id in self.written:
            return login_id
        folded = fold(login_id)
        if folded in self.written:
            return folded
        return self._folded.get(folded)


def read_state(
    storage: Storage,
    kind: str,
    fmt: str,
    prefix: str = "",
    *,
    run: str | None = None,
    repair: bool = True,
    entries: Iterable[tuple[str, dict[str, Any]]] | None = None,
    each: Callable[[dict[str, Any]], None] | None = None,
) -> KindState:
    """The state of ``kind`` (of the batches starting with ``prefix``), after finishing the
    commits a kill interrupted and deleting what no commit kept. ``entries``: its journal, read
    already (:func:`read_journal`); read now when None, and checked whole before anything is
    renamed or deleted. The rows count every run's batches; the logins written and failed are
    those of the run ``run`` (docs/export.md#runs), of every run when None.

    With ``repair`` false nothing is renamed or deleted, and a batch counts as soon as its journal
    entry exists: what a cluster run's driver reads while workers may still be committing
    (docs/scale-out.md#stopping-a-cluster-run); a later resume repairs.

    ``each`` is given every entry that counts (the batches a repair dropped left out), oldest
    first, in the same reading of the journal: what else a run reads of it (``events.states``)."""
    state = KindState(rows=dict.fromkeys(KINDS[kind], 0))
    if entries is None:
        entries = read_journal(storage, kind, fmt, prefix)
    for name, entry in entries:
        # Each name below is checked (checks.journal_entry): part-<batch>.<fmt> in a table of
        # the kind, so nothing outside the export's own files is renamed or deleted.
        files: Mapping[str, str] = entry.get("files") or {}
        batch = entry["batch"]
        complete = True
        # The tables' files, and the payloads' one with keep_raw (``raw.py``), in one commit:
        # each named under its table's directory, in its run's partition (``layout.partition``).
        committed = [(storage.path(kind, table), file) for table, file in files.items()]
        committed += committed_files(storage, kind, entry)
        for top, file in committed:
            final = storage.path(top, file)
            temporary = storage.path(top, posixpath.dirname(file), temporary_name(batch, fmt))
            if not storage.is_file(final):
                if not repair:
                    # Looked for again: the worker may have renamed it between the two looks.
                    complete = complete and (storage.is_file(temporary) or storage.is_file(final))
                elif storage.is_file(temporary):
                    storage.rename(temporary, final)
                else:
                    complete = False
        if not complete and not repair:
            continue
        if not complete:
            # A file of the batch is gone (deleted by hand, say): the batch is dropped whole, so
            # that its logins are fetched again rather than half present.
            for top, file in committed:
                storage.remove(storage.path(top, file))
            storage.remove(storage.path(JOURNAL, kind, name))
            state.dropped.add(name)
            if isinstance(entries, Journal):
                entries.forget(name)
            continue
        _count(state, name, entry, run, each)
    state.written.compact()
    if not repair:
        return state
    remove_uncommitted(storage, kind, prefix)
    return state


def _count(
    state: KindState,
    name: str,
    entry: dict[str, Any],
    run: str | None,
    each: Callable[[dict[str, Any]], None] | None,
) -> None:
    """Counts the journal entry ``entry`` (its file ``name``), whose batch is whole, into
    ``state`` (``read_state``)."""
    state.batches += 1
    if each is not None:
        each(entry)
    for table, count in (entry.get("rows") or {}).items():
        state.rows[table] = state.rows.get(table, 0) + int(count)
    if run is not None and run_of(entry) != run:
        return
    state.run_batches += 1
    state.run_rows += sum(int(count) for count in (entry.get("rows") or {}).values())
    for login, _ in entry.get("written") or []:
        state.add_written(login)
    failures = entry.get("failed") or []
    if failures:
        state.failure_entries.append(name)
    for record in failures:
        if isinstance(record, dict) and isinstance(record.get("login_id"), str):
            state.run_failures.add(record["login_id"])
        if isinstance(record, dict) and not state.has(record.get("login_id")):
            folded = fold(record.get("login_id"))
            if record.get("error") == "PendingTimeout" and isinstance(record.get("request_id"), str):
                state.pending[folded] = record
            else:
                # A later failure of another kind: the login starts over.
                state.pending.pop(folded, None)


def scan_state(
    storage: Storage, kind: str, fmt: str, *, run: str | None, each: Callable[[dict[str, Any]], None] | None = None
) -> tuple[Journal, KindState | None]:
    """The journal of ``kind`` read once: each entry read, checked (``checks.journal_entry``) and,
    in the common case, counted into the state as :func:`read_state` counts it, in the same
    reading: when the entries come oldest first in the order of their names (a process names its
    batches in the order it commits them) and every file they name is in place. The state is None
    otherwise (a repair to make, or a cluster run's batches committed in another order): then
    :func:`read_state` reads the checked journal again, once every kind is checked. Nothing is
    renamed or deleted here; :func:`remove_uncommitted` deletes what no commit kept. Each
    reading of a journal of 1,000,000 logins takes minutes (BENCHMARKS.md, export)."""
    directory = storage.path(JOURNAL, kind)
    state: KindState | None = KindState(rows=dict.fromkeys(KINDS[kind], 0))
    found: list[tuple[float, str, str]] = []
    latest = float("-inf")
    for name in sorted(storage.listdir(directory)):
        if record_of_file(name) is None:
            continue  # a temporary (see ``read_state``), or a file no reading of the journal looks at
        text = checks.read_text(storage, storage.path(directory, name), "journal entry", f"{JOURNAL}/{kind}/{name}")
        entry = checks.journal_entry(storage.shown, kind, fmt, name, text)
        committed_at = float(entry["committed_at"])
        found.append((committed_at, name, run_of(entry)))
        if state is not None and (committed_at < latest or not _in_place(storage, kind, entry)):
            state = None  # the rest is only checked
        latest = max(latest, committed_at)
        if state is not None:
            _count(state, name, entry, run, each)
        del text, entry
    found.sort()
    journal = Journal(storage, kind, fmt, [(name, entry_run) for _, name, entry_run in found])
    journal.committed_at = {name: committed_at for committed_at, name, _ in found}
    if state is not None:
        state.written.compact()
    return journal, state


def _in_place(storage: Storage, kind: str, entry: dict[str, Any]) -> bool:
    """Whether every file the journal entry ``entry`` commits is where its commit put it."""
    committed = [(storage.path(kind, table), file) for table, file in (entry.get("files") or {}).items()]
    committed += committed_files(storage, kind, entry)
    return all(storage.is_file(storage.path(top, file)) for top, file in committed)


def remove_uncommitted(storage: Storage, kind: str, prefix: str = "") -> None:
    """Deletes the temporary files of ``kind`` that no committed batch names (of the batches
    starting with ``prefix``): what a kill left before their commit. Only once every entry of
    the export was checked."""
    # Temporary files that no committed batch names were left by a kill before their commit:
    # the parts, and a journal entry whose writing was cut before its rename (that rename is the
    # commit, so its batch was never committed, and its logins are fetched again).
    tops = [storage.path(kind, table) for table in KINDS[kind]] + [raw_directory(storage, kind)]
    for top in tops:
        for directory in partitioned_directories(storage, top):
            for name in storage.listdir(directory):
                if is_temporary_part(name, prefix):
                    storage.remove(storage.path(directory, name))
    journal = storage.path(JOURNAL, kind)
    for name in storage.listdir(journal):
        cut = ENTRY_TEMPORARY.fullmatch(name)
        if cut and cut["batch"].startswith(prefix):
            storage.remove(storage.path(journal, name))


def table_directories(storage: Storage, kind: str, table: str) -> list[str]:
    """The directories of ``table`` that hold its files: the table's own (an export written
    before runs had partitions), and each run's partition (``layout.partition``)."""
    return partitioned_directories(storage, storage.path(kind, table))


def partitioned_directories(storage: Storage, top: str) -> list[str]:
    """The directories of the table in ``top`` (a kind's table, or its payloads' ``_raw/<kind>``)
    that hold its files: ``top`` itself, and each run's partition in it (``layout.partition``)."""
    found = [top]
    for date in storage.listdir(top):
        if RUN_DATE.fullmatch(date):
            for run in storage.listdir(storage.path(top, date)):
                if RUN_ID.fullmatch(run):
                    found.append(storage.path(top, date, run))
    return found


def check_directories(storage: Storage) -> None:
    """Refuses, before anything in them is read, the directories of the export already there that
    another user could steer (``Storage.makedirs`` says which); nothing when the storage does not
    check (an fsspec URL, or shared outputs allowed)."""
    if not storage.refuse_shared:
        return
    directories = [storage.path(JOURNAL, RUNS)]
    for kind, tables in KINDS.items():
        directories += [
            storage.path(JOURNAL, kind),
            storage.path(kind),
            *(storage.path(kind, table) for table in tables),
            storage.path(RAW),
            raw_directory(storage, kind),
        ]
    for directory in directories:
        if storage.exists(directory):
            storage.makedirs(directory)
    # Then the runs' partitions in them (each checked with the directories above it).
    for kind, tables in KINDS.items():
        tops = [storage.path(kind, table) for table in tables] + [raw_directory(storage, kind)]
        for top in tops:
            for directory in partitioned_directories(storage, top)[1:]:
                storage.makedirs(directory)


def remove_leftovers(storage: Storage) -> None:
    """Deletes the temporary files of a run killed while it wrote the manifest, the failures, a
    run's record or a cluster's marker whole (each under a random name). Only under the lock:
    another run's are never deleted."""
    for where, pattern in LEFTOVERS.items():
        directory = storage.path(*where)
        for name in storage.listdir(directory):
            if pattern.fullmatch(name):
                storage.remove(storage.path(directory, name))
