"""What an output directory holds, read back from its journal (docs/export.md#resume), and the
two files that describe it to people and tools: ``_manifest.json`` and ``_failures.jsonl``.

Reading the state also finishes what a kill interrupted: a committed batch whose files were not
renamed yet is renamed into place, and temporary files of batches never committed are deleted
(``writer.py`` says why this leaves every login in a dataset once). What is read is checked first
(``records.py``): a damaged file, or a name that is not the export's own, stops the run before
anything is renamed or deleted.
"""

from __future__ import annotations

import errno
import json
import posixpath
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import IO, Any

from bankfeed._export import records
from bankfeed._export.kinds import KINDS
from bankfeed._export.login_set import LoginIdSet
from bankfeed._export.logins import fold
from bankfeed._export.raw import RAW, committed_files, raw_directory
from bankfeed._export.storage import RANDOM_SUFFIX, Storage
from bankfeed._export.writer import JOURNAL, temporary_name

__all__ = [
    "FAILURES",
    "MANIFEST",
    "Journal",
    "KindState",
    "check_directories",
    "partitioned_directories",
    "read_journal",
    "read_runs",
    "read_state",
    "remove_leftovers",
    "run_of",
    "table_directories",
    "write_run",
    "write_summary",
]

MANIFEST = "_manifest.json"
FAILURES = "_failures.jsonl"
#: Under the journal: one record per run, written when the run starts and again when it ends, so
#: that a run killed before its end (``kill -9``, a lost machine) is still known: to the manifest,
#: and to a resume, which must ask for what it asked (docs/export.md#resume).
RUNS = "runs"

#: A journal entry's temporary file (``.<batch>.json`` and the random part ``Storage.write_whole``
#: adds), and those of the files a run writes whole: what a kill can leave, and a run deletes.
_ENTRY_TEMPORARY = re.compile(rf"\.(?P<batch>{records.BATCH.pattern})\.json(?:{RANDOM_SUFFIX}|\.tmp)")
#: The length of a run's name (``records.RUN``).
_RUN_LENGTH = len("20261126T020000-3f9a1c")
#: The two levels of a run's partition of a table (``writer.partition``).
_RUN_DATE = re.compile(r"run_date=[0-9]{4}-[0-9]{2}-[0-9]{2}")
_RUN_ID = re.compile(rf"run_id={records.RUN.pattern}")
_LEFTOVERS = {
    (): re.compile(rf"\.(?:{re.escape(MANIFEST)}|{re.escape(FAILURES)}){RANDOM_SUFFIX}"),
    (JOURNAL,): re.compile(rf"\.\.cluster-{records.RUN.pattern}{RANDOM_SUFFIX}"),
    (JOURNAL, RUNS): re.compile(rf"\.{records.RUN.pattern}\.json{RANDOM_SUFFIX}"),
}


@dataclass
class KindState:
    """One kind's committed batches, as the journal says."""

    #: The LoginIds written, as they were given: kept compactly (``login_set.py``; a ``set`` of
    #: them was 100 MB at 1,000,000 logins). :meth:`has` asks it.
    written: LoginIdSet = field(default_factory=LoginIdSet)
    #: LoginId (folded: ``logins.fold``) to its latest failure, for the logins not written.
    failed: dict[Any, dict[str, Any]] = field(default_factory=dict)
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
        self.failed.pop(folded, None)

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


def _read(storage: Storage, path: str, what: str, name: str) -> str:
    """The text of ``path``, the ``what`` called ``name`` in messages; a ``ConfigError`` naming
    ``out`` and the file when it cannot be read."""
    try:
        return storage.read_text(path)
    except OSError as exc:
        reason = "it is a symbolic link, which is never followed" if exc.errno == errno.ELOOP else exc.strerror
        raise records.unreadable(storage.shown, what, name, reason or str(exc)) from None
    except UnicodeDecodeError:
        raise records.unreadable(storage.shown, what, name, "it is not UTF-8 text") from None


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

    def _load(self, name: str) -> dict[str, Any]:
        storage, kind = self._storage, self._kind
        text = _read(storage, storage.path(JOURNAL, kind, name), "journal entry", f"{JOURNAL}/{kind}/{name}")
        return records.journal_entry(storage.shown, kind, self._fmt, name, text, cursors=False)

    def __iter__(self) -> Iterator[tuple[str, dict[str, Any]]]:
        for name, _ in self._index:
            if name not in self._forgotten:
                yield name, self._load(name)

    def __len__(self) -> int:
        return len(self._index) - len(self._forgotten)

    def runs(self) -> list[str]:
        """The runs of its entries, each once, in the order of their first entry."""
        return list(dict.fromkeys(run for name, run in self._index if name not in self._forgotten))

    def of_run(self, run: str) -> Iterator[tuple[str, dict[str, Any]]]:
        """The entries of the run ``run``, oldest first."""
        for name, entry_run in self._index:
            if entry_run == run and name not in self._forgotten:
                yield name, self._load(name)

    def forget(self, name: str) -> None:
        """Leaves out the entry ``name`` from now on (a repair deleted it)."""
        self._forgotten.add(name)


def read_journal(storage: Storage, kind: str, fmt: str, prefix: str = "", *, cursors: bool = True) -> Journal:
    """The journal entries of ``kind`` whose batch names start with ``prefix``, oldest first,
    each checked (``records.journal_entry``): a ``ConfigError`` naming the first that is damaged
    or not the export's (cut short, edited, planted), which is never skipped: its batch's part
    files would stay, and its logins be written again. Each is read, checked and let go; the
    :class:`Journal` reads them again as they are used. ``cursors`` false: their cursors are not
    checked, for a reader that does not use them (a run's end)."""
    directory = storage.path(JOURNAL, kind)
    found: list[tuple[float, str, str]] = []
    for name in storage.listdir(directory):
        if not name.endswith(".json") or name.startswith(".") or not name.startswith(prefix):
            continue  # a temporary (see read_state), or a file no reading of the journal looks at
        text = _read(storage, storage.path(directory, name), "journal entry", f"{JOURNAL}/{kind}/{name}")
        entry = records.journal_entry(storage.shown, kind, fmt, name, text, cursors=cursors)
        found.append((float(entry["committed_at"]), name, run_of(entry)))
        del text, entry
    found.sort()
    return Journal(storage, kind, fmt, [(name, run) for _, name, run in found])


def run_of(entry: Mapping[str, Any]) -> str:
    """The run a journal entry's batch belongs to: its ``run``, or, in an export written before
    runs had partitions, the run its batch's name starts with."""
    run = entry.get("run")
    return run if isinstance(run, str) else str(entry["batch"])[:_RUN_LENGTH]


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
    kept: dict[str, set[str]] = {table: set() for table in KINDS[kind]}
    if entries is None:
        entries = read_journal(storage, kind, fmt, prefix)
    for name, entry in entries:
        # Each name below is checked (records.journal_entry): part-<batch>.<fmt> in a table of
        # the kind, so nothing outside the export's own files is renamed or deleted.
        files: Mapping[str, str] = entry.get("files") or {}
        batch = entry["batch"]
        complete = True
        # The tables' files, and the payloads' one with keep_raw (``raw.py``), in one commit:
        # each named under its table's directory, in its run's partition (``writer.partition``).
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
        state.batches += 1
        if each is not None:
            each(entry)
        for table, file in files.items():
            kept.setdefault(table, set()).add(file)
        for table, count in (entry.get("rows") or {}).items():
            state.rows[table] = state.rows.get(table, 0) + int(count)
        if run is not None and run_of(entry) != run:
            continue
        state.run_batches += 1
        state.run_rows += sum(int(count) for count in (entry.get("rows") or {}).values())
        for login, _ in entry.get("written") or []:
            state.add_written(login)
        for record in entry.get("failed") or []:
            if isinstance(record, dict) and isinstance(record.get("login_id"), str):
                state.run_failures.add(record["login_id"])
            if isinstance(record, dict) and not state.has(record.get("login_id")):
                state.failed[fold(record.get("login_id"))] = record
    state.written.compact()
    if not repair:
        return state
    # Temporary files that no committed batch names were left by a kill before their commit:
    # the parts, and a journal entry whose writing was cut before its rename (that rename is the
    # commit, so its batch was never committed, and its logins are fetched again).
    tops = [storage.path(kind, table) for table in KINDS[kind]] + [raw_directory(storage, kind)]
    for top in tops:
        for directory in partitioned_directories(storage, top):
            for name in storage.listdir(directory):
                if name.startswith(".part-" + prefix) and name.endswith(".tmp"):
                    storage.remove(storage.path(directory, name))
    journal = storage.path(JOURNAL, kind)
    for name in storage.listdir(journal):
        cut = _ENTRY_TEMPORARY.fullmatch(name)
        if cut and cut["batch"].startswith(prefix):
            storage.remove(storage.path(journal, name))
    return state


def table_directories(storage: Storage, kind: str, table: str) -> list[str]:
    """The directories of ``table`` that hold its files: the table's own (an export written
    before runs had partitions), and each run's partition (``writer.partition``)."""
    return partitioned_directories(storage, storage.path(kind, table))


def partitioned_directories(storage: Storage, top: str) -> list[str]:
    """The directories of the table in ``top`` (a kind's table, or its payloads' ``_raw/<kind>``)
    that hold its files: ``top`` itself, and each run's partition in it (``writer.partition``)."""
    found = [top]
    for date in storage.listdir(top):
        if _RUN_DATE.fullmatch(date):
            for run in storage.listdir(storage.path(top, date)):
                if _RUN_ID.fullmatch(run):
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
    for where, pattern in _LEFTOVERS.items():
        directory = storage.path(*where)
        for name in storage.listdir(directory):
            if pattern.fullmatch(name):
                storage.remove(storage.path(directory, name))


def write_run(storage: Storage, record: Mapping[str, Any]) -> None:
    """Writes the record of the run ``record["run"]``, whole or not at all."""
    directory = storage.path(JOURNAL, RUNS)
    storage.makedirs(directory)
    # `default=str`: a query given from Python may hold what JSON has no type for; the record
    # must be written all the same, and a resume compares it as text.
    data = json.dumps(record, default=str, sort_keys=True).encode("utf-8")
    storage.write_whole(storage.path(directory, f"{record['run']}.json"), data)


def read_runs(storage: Storage) -> list[dict[str, Any]]:
    """The records of the runs of the export in ``storage``, oldest first."""
    directory = storage.path(JOURNAL, RUNS)
    runs: list[dict[str, Any]] = []
    for name in storage.listdir(directory):
        if not name.endswith(".json") or name.startswith("."):
            continue
        text = _read(storage, storage.path(directory, name), "run record", f"{JOURNAL}/{RUNS}/{name}")
        runs.append(records.run_record(storage.shown, name, text))
    runs.sort(key=lambda record: (str(record.get("started_at")), float(record.get("started") or 0), record["run"]))
    return runs


#: A line of the manifest that opens one of its lists of every login (``_dump`` writes them a
#: login a line, as the manifests of earlier versions did).
_LOGINS_LIST = re.compile(r'\s*"logins_(?:written|failed)": \[\s*')


def previous_manifest(storage: Storage) -> dict[str, Any] | None:
    """The manifest an earlier run left, if any, checked (``records.manifest``), with its lists
    of logins left empty: nothing reads them back (the journal says what was written), and at
    1,000,000 logins each is 40 MB of text and a million ``str``."""
    path = storage.path(MANIFEST)
    if not storage.exists(path):
        return None
    return records.manifest(storage.shown, MANIFEST, _read_without_logins(storage, path))


def _read_without_logins(storage: Storage, path: str) -> str:
    """The text of the manifest ``path``, each list of logins written a login a line left out."""
    kept: list[str] = []
    try:
        with storage.open_text(path) as file:
            skipping = False
            for line in file:
                if skipping:
                    stripped = line.lstrip()
                    if stripped.startswith("]"):
                        kept.append(stripped)
                        skipping = False
                    continue
                kept.append(line)
                skipping = _LOGINS_LIST.fullmatch(line) is not None
    except OSError as exc:
        reason = "it is a symbolic link, which is never followed" if exc.errno == errno.ELOOP else exc.strerror
        raise records.unreadable(storage.shown, "manifest", MANIFEST, reason or str(exc)) from None
    except UnicodeDecodeError:
        raise records.unreadable(storage.shown, "manifest", MANIFEST, "it is not UTF-8 text") from None
    return "".join(kept)


def write_summary(
    storage: Storage,
    states: Mapping[str, KindState],
    *,
    fmt: str,
    version: str,
    run: Mapping[str, Any],
    kinds_asked: Mapping[str, Mapping[str, Any]],
    previous: Mapping[str, Any] | None,
    runs: list[dict[str, Any]],
) -> None:
    """Writes ``_failures.jsonl`` (one JSON object per login not written, per kind) and
    ``_manifest.json`` (what was asked, by which bankfeed, the logins written and the rows), each
    whole or not at all. ``states`` maps each kind of the export to its state, ``kinds_asked`` to
    how it was asked (``what``, ``options``); ``run`` is this process's record (:func:`write_run`),
    already written, ``runs`` every run of the export as the manifest lists it
    (``runs.RunSummary.shown``)."""
    lines = [
        json.dumps(record, sort_keys=True)
        for state in states.values()
        for record in sorted(state.failed.values(), key=lambda record: str(record.get("login_id")))
    ]
    storage.write_whole(storage.path(FAILURES), ("\n".join(lines) + ("\n" if lines else "")).encode("utf-8"))
    # Every run the journal knows, this one included (killed ones too), after those of a manifest
    # written before runs had records.
    known = {summary["run"] for summary in runs} | {name for summary in runs for name in summary["processes"]}
    listed: list[Any] = [old for old in (previous or {}).get("runs") or [] if old.get("run") not in known]
    listed.extend(runs)
    kinds: dict[str, Any] = dict((previous or {}).get("kinds") or {})
    # This process's run, as ``runs`` sums it up over the processes that wrote it.
    name = run.get("part_of") or run.get("run")
    this_run: Mapping[str, Any] = next((summary for summary in runs if summary["run"] == name), {})
    for kind, state in states.items():
        asked = kinds_asked.get(kind) or {}
        kinds[kind] = {
            "what": str(asked.get("what") or kind),
            "options": dict(asked.get("options") or {}),
            "tables": {table: f"{kind}/{table}" for table in KINDS[kind]},
            "rows": state.rows,
            # Streamed from the compact set, in its sorted order (``_dump``).
            "logins_written": _Streamed(state.written),
            "logins_failed": sorted(str(record.get("login_id")) for record in state.failed.values()),
            # The fields no table reads, as the newest run that fetched the kind counted them
            # (docs/export.md#fields-the-service-adds).
            "unknown_fields": dict((this_run.get("unknown_fields") or {}).get(kind) or {})
            if kind in (run.get("kinds") or {})
            else dict(((previous or {}).get("kinds") or {}).get(kind, {}).get("unknown_fields") or {}),
        }
    manifest = {
        "bankfeed_version": version,
        "format": fmt,
        # How its tables hold money, fixed by its first run (docs/export.md#money).
        "money": run.get("money"),
        # The export's kinds, this run's and earlier ones'.
        "what": [entry.get("what", kind) for kind, entry in kinds.items()],
        "layout": "<kind>/<table>/run_date=<date>/run_id=<run>/part-<batch>."
        + fmt
        + "; every row starts with login_id, request_id, fetched_at",
        "updated_at": _utc(time.time()),
        # Complete: this run went to its end, no login of it failed, and every login it wrote in
        # one kind of the export is written in all of them.
        "complete": not run.get("interrupted")
        and all(not state.failed for state in states.values())
        and _same_logins(list(states.values())),
        "kinds": kinds,
        "runs": listed,
    }
    # Streamed into its file, a piece at a time: at 100,000 logins the manifest as one string
    # would be the export's largest single allocation. The login lists go unindented, a line each.
    storage.write_streamed(storage.path(MANIFEST), lambda file: _dump(manifest, file))


def _same_logins(states: list[KindState]) -> bool:
    """Whether every login written in one of ``states`` is written in all of them."""
    return all(all(other.has(login) for login in state.written) for state in states for other in states)


class _Streamed:
    """A list of the manifest written a value at a time from ``values`` (never a list first)."""

    def __init__(self, values: Iterable[Any]) -> None:
        self.values = values


def _dump(manifest: Mapping[str, Any], file: IO[str]) -> None:
    """The manifest as ``json.dump(manifest, file, indent=1)`` writes it, each :class:`_Streamed`
    list a value a line, as it is iterated."""
    _write_value(manifest, file, 0)
    file.write("\n")


def _write_value(value: Any, file: IO[str], depth: int) -> None:
    inner = "\n" + " " * (depth + 1)
    if isinstance(value, _Streamed):
        empty = True
        for item in value.values:
            file.write(("[" if empty else ",") + inner + json.dumps(item))
            empty = False
        file.write("[]" if empty else "\n" + " " * depth + "]")
    elif isinstance(value, Mapping) and any(isinstance(item, _Streamed | Mapping) for item in value.values()):
        for index, (key, item) in enumerate(value.items()):
            file.write(("{" if index == 0 else ",") + inner + json.dumps(key) + ": ")
            _write_value(item, file, depth + 1)
        file.write("\n" + " " * depth + "}")
    else:
        # A JSON text never holds a raw newline: its lines are indented as they stand here.
        text = json.dumps(value, indent=1, separators=(",", ": "))
        file.write(text.replace("\n", "\n" + " " * depth))


def _utc(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))
