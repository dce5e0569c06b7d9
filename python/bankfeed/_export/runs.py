"""The runs of an export (docs/export.md#runs): which run a process writes, and what each run
did, as ``--list-runs`` and the manifest show it.

An export directory is written night after night, a run each time; each run's rows are in a
partition of their own (``layout.partition``). A run is written by one process, or by several when
it is resumed (``--resume``: the process goes on with the last run, skipping what it wrote). Each
process has its record in the journal (``run_records.write_run``), which names the run it is
``part_of``; a record without that field (an export written before runs had partitions) is a run
of its own.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bankfeed._export.login_set import LoginIdSet, count_in_all
from bankfeed._export.ondisk.layout import run_after
from bankfeed._export.ondisk.run_records import run_of_record

if TYPE_CHECKING:
    from bankfeed._export.ondisk.journal import Journal
    from bankfeed._export.state import KindState

__all__ = ["RunSummary", "last_run", "list_runs", "next_run", "summaries"]


def last_run(records: Sequence[Mapping[str, Any]]) -> str | None:
    """The run of the latest process (``records`` oldest first), the one a resume goes on with;
    None when the export has no run yet."""
    return run_of_record(records[-1]) if records else None


def next_run(name: str, earlier: Sequence[str]) -> str:
    """The name of a new run, ``name`` (this process's) unless an ``earlier`` run's sorts after
    it (started within the same second, or under a clock set back): then a name just after the
    latest, so that the runs' names sort in the order they ran, which is how a reader finds the
    newest (docs/export.md#runs)."""
    latest = max(earlier, default="")
    if name > latest:
        return name
    return run_after(latest)


@dataclass
class RunSummary:
    """One run as ``--list-runs`` prints it and the manifest lists it."""

    run: str
    #: The run's date, UTC (its partition's ``run_date``).
    date: str
    started_at: str | None = None
    finished_at: str | None = None
    #: The processes that wrote it: the first, then each resume.
    processes: list[str] = field(default_factory=list)
    #: The kinds its processes asked for.
    kinds: set[str] = field(default_factory=set)
    #: The logins written in every kind it asked for.
    logins: int = 0
    #: The logins that failed in some kind and were not written in it since.
    logins_failed: int = 0
    rows: int = 0
    #: The logins its last process did not try, the service being unreachable (``outage.py``).
    not_tried: int = 0
    #: Whether its last process ended before every login was done (stopped, or killed: no end).
    interrupted: bool = False
    #: Per kind, the fields of its payloads that no table reads, path to count, added up over its
    #: processes: each counts the logins it fetched (docs/export.md#fields-the-service-adds).
    unknown_fields: dict[str, dict[str, int]] = field(default_factory=dict)
    #: Per kind, how many journal entries its counts come from: what tells whether a summary
    #: kept in a record (:meth:`kept`) still holds.
    entries: dict[str, int] = field(default_factory=dict)

    def kept(self) -> dict[str, Any]:
        """What a run's record keeps of its summary (``summary``), so that later runs do not count
        it from the journal again: its counts, and the entries they come from."""
        return {
            "logins": self.logins,
            "logins_failed": self.logins_failed,
            "rows": self.rows,
            "kinds": sorted(kind for kind in self.entries),
            "entries": dict(sorted(self.entries.items())),
        }

    @property
    def status(self) -> str:
        """``complete``, ``failures`` (some logins failed: ``--resume`` tries them again) or
        ``interrupted`` (stopped or killed before its end: ``--resume`` goes on)."""
        if self.interrupted:
            return "interrupted"
        return "failures" if self.logins_failed else "complete"

    def shown(self) -> dict[str, Any]:
        """What the manifest's ``runs`` holds of it."""
        return {
            "run": self.run,
            "run_date": self.date,
            "status": self.status,
            "interrupted": self.interrupted,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "logins_written": self.logins,
            "logins_failed": self.logins_failed,
            "logins_not_tried": self.not_tried,
            "rows": self.rows,
            "unknown_fields": {
                kind: dict(sorted(self.unknown_fields[kind].items())) for kind in sorted(self.unknown_fields)
            },
            "processes": list(self.processes),
            "what": sorted(self.kinds),
        }

    def line(self) -> str:
        """Its line of ``--list-runs``: the run, its date, status, logins and rows."""
        return f"{self.run}  {self.date}  {self.status:<11}  {self.logins:>9,} logins  {self.rows:>12,} rows"


def _date(run: str) -> str:
    return f"{run[0:4]}-{run[4:6]}-{run[6:8]}"


def summaries(
    records: Sequence[Mapping[str, Any]],
    journals: Mapping[str, Journal],
    known: Mapping[str, Mapping[str, KindState]] | None = None,
) -> list[RunSummary]:
    """Every run of an export, oldest first, from its processes' ``records`` (oldest first) and
    its ``journals`` (per kind, ``journal.read_journal``'s). The logins of one run are gathered at a
    time, compactly, and counted: never every run's at once. ``known``: per run, per kind, its
    state read already for that run (this run's, by ``state.read_state``), which is not read
    again."""
    runs: dict[str, RunSummary] = {}

    def summary(run: str) -> RunSummary:
        if run not in runs:
            runs[run] = RunSummary(run, _date(run))
        return runs[run]

    for record in records:
        found = summary(run_of_record(record))
        found.processes.append(str(record["run"]))
        found.started_at = found.started_at or record.get("started_at")
        found.finished_at = record.get("finished_at")
        found.interrupted = record.get("finished_at") is None or bool(record.get("interrupted"))
        not_tried = record.get("logins_not_tried")
        found.not_tried = not_tried if isinstance(not_tried, int) else 0
        found.kinds.update(record.get("kinds") or {})
        for kind, fields in (record.get("unknown_fields") or {}).items():
            counts = found.unknown_fields.setdefault(kind, {})
            for path, count in fields.items():
                counts[path] = counts.get(path, 0) + count
    # A run's summary as the end of its last process counted it (``finish.py``): kept, unless the
    # run may still change (the last one: a resume goes on with it, or it is being written) or
    # its entries are no longer those it counted (a repair dropped one, a resume was killed
    # after committing some): then counted from the journal again.
    stored = {run_of_record(record): record["summary"] for record in records if record.get("summary")}
    last = run_of_record(records[-1]) if records else None
    names = dict.fromkeys(run for journal in journals.values() for run in journal.runs())
    for run in names:
        found = summary(run)
        found.entries = {kind: count for kind, journal in journals.items() if (count := journal.count(run))}
        kept = stored.get(run)
        if run != last and run not in (known or {}) and kept is not None and kept["entries"] == found.entries:
            found.kinds.update(kept["kinds"])
            found.logins, found.logins_failed, found.rows = kept["logins"], kept["logins_failed"], kept["rows"]
            continue
        written: dict[str, LoginIdSet] = {}
        failed: dict[str, LoginIdSet] = {}
        for kind, journal in journals.items():
            given = (known or {}).get(run, {}).get(kind)
            counted = _count_run(journal.of_run(run)) if given is None else _count_known(given)
            if counted is None:
                continue
            found.kinds.add(kind)
            written[kind], failed[kind], rows = counted
            found.rows += rows
        sets = [written.get(kind, LoginIdSet()) for kind in sorted(found.kinds)]
        found.logins = count_in_all(sets)
        found.logins_failed = _count_union(list(failed.values()))
        del written, failed, sets
    return sorted(runs.values(), key=lambda run: run.run)


def _count_known(state: KindState) -> tuple[LoginIdSet, LoginIdSet, int] | None:
    """:func:`_count_run` of a run whose state was read (``state.read_state``)."""
    if not state.run_batches:
        return None
    failed = LoginIdSet(login for login in state.run_failures if login not in state.written)
    return state.written, failed, state.run_rows


def _count_run(entries: Iterable[tuple[str, Mapping[str, Any]]]) -> tuple[LoginIdSet, LoginIdSet, int] | None:
    """One kind's entries of one run: the logins written, those that failed and were not written,
    and the rows; None when there is no entry."""
    written = LoginIdSet()
    failures = LoginIdSet()
    rows = 0
    any_entry = False
    for _, entry in entries:
        any_entry = True
        for login, _ in entry.get("written") or []:
            written.add(login)
        for failure in entry.get("failed") or []:
            login = failure.get("login_id")
            if isinstance(login, str):
                failures.add(login)
        rows += sum(int(count) for count in (entry.get("rows") or {}).values())
    if not any_entry:
        return None
    # A login that failed and was written in the same run (before or after) counts as written.
    failed = LoginIdSet(login for login in failures if login not in written)
    return written, failed, rows


def _count_union(sets: list[LoginIdSet]) -> int:
    """How many values are in at least one of ``sets``."""
    if not sets:
        return 0
    if len(sets) == 1:
        return len(sets[0])
    count, last = 0, None
    for value in heapq.merge(*sets):
        if value != last:
            count += 1
            last = value
    return count


def list_runs(out: str) -> list[RunSummary]:
    """The runs of the export in ``out``, oldest first, read without changing anything (a run
    may be writing meanwhile: only whole files are read). A damaged or foreign file of the
    journal is a ``ConfigError`` naming ``out``, as for a run (``ondisk/checks.py``)."""
    from bankfeed._export.kinds import KINDS
    from bankfeed._export.ondisk.journal import read_journal
    from bankfeed._export.ondisk.layout import JOURNAL, MANIFEST
    from bankfeed._export.ondisk.manifest import previous_manifest
    from bankfeed._export.ondisk.run_records import read_runs
    from bankfeed._export.storage import Storage
    from bankfeed.errors import _config_error

    storage = Storage(out)
    if not storage.exists(storage.path(JOURNAL)) and not storage.exists(storage.path(MANIFEST)):
        raise _config_error("out", f"holds no export: {storage.shown} has no {JOURNAL}/ and no {MANIFEST}")
    records = read_runs(storage)
    formats = [record.get("format") for record in records] + [(previous_manifest(storage) or {}).get("format")]
    fmt = next((value for value in reversed(formats) if value), "parquet")
    journals = {kind: read_journal(storage, kind, fmt) for kind in KINDS}
    return summaries(records, journals)
