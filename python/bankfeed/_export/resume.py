"""What an output already holds, checked before a run writes in it (docs/export.md#runs): the
directory made or found and locked, an export there asked for as its first run asked
(docs/export.md#what-a-run-must-ask-as-before), an export written before runs moved into them,
and which run this process writes: the last one again (``resume``), or a new one.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bankfeed._export.kinds import KINDS, Kind, options_key
from bankfeed._export.location import described
from bankfeed._export.lock import ExportLock, take_lock
from bankfeed._export.migrate import move_into_runs, written_before_runs
from bankfeed._export.ondisk.layout import FAILURES, JOURNAL, LOCK, MANIFEST
from bankfeed._export.ondisk.manifest import previous_manifest
from bankfeed._export.ondisk.run_records import read_runs
from bankfeed._export.runs import last_run, next_run
from bankfeed._export.state import check_directories
from bankfeed._export.storage import Storage
from bankfeed.errors import ConfigError, _config_error

__all__ = ["Before", "check_output", "fixed"]

#: What an output directory holds when an export wrote it.
_OURS = (*KINDS, JOURNAL, MANIFEST, FAILURES)


@dataclass
class Before:
    """What the output held before this run, as :func:`check_output` found it."""

    #: This run's lock of the directory (``lock.py``): held from before the directory is read.
    lock: ExportLock
    #: The run this process goes on with (``resume``); None: it starts a run of its own.
    resumed_run: str | None = None
    #: Whether the last process of the run resumed went to its end (a resume of a run that has
    #: nothing left to do is refused then, rather than writing nothing and ending well).
    resumed_ended: bool = False
    #: A resume of an export written before runs had records: every batch of it counts as this
    #: run's, as a resume counted them then.
    resumes_unrecorded: bool = False
    #: The name of the run this process starts, when it resumes none: its own name
    #: (:attr:`process_name`).
    new_run: str | None = None
    #: This process's name, which starts its batches' names: the one it was given, unless an
    #: earlier process's sorts after it (started within the same second, or under a clock set
    #: back): then one just after the latest (``runs.next_run``). So the journal's entries sort
    #: in the order they were committed, which its reading counts on to read each once
    #: (``state.scan_state``), and the newest run's name sorts last (docs/export.md#runs).
    process_name: str = ""
    #: The kinds earlier runs of this export asked for, and how (``what``, ``options``): the
    #: manifest describes them too.
    kinds_before: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    #: The export's money type as earlier runs recorded it; None: a new export's.
    money: str | None = None


def fixed(fmt: str) -> dict[str, Any]:
    """The options of the whole export that change what its rows mean, fixed by its first run
    (docs/export.md#what-a-run-must-ask-as-before), as each process's record keeps them and a
    later run compares them: the format. An option of the same nature (how amounts are typed,
    say) goes here too, and in nothing else."""
    return {"format": fmt}


def _wrote(storage: Storage, name: str) -> bool:
    """Whether ``name``, one of :data:`_OURS` in the output, is there because an export wrote:
    a journal holding only the lock is what a refused or empty run leaves."""
    return name != JOURNAL or storage.listdir(storage.path(JOURNAL)) not in ([], [LOCK])


def _how_asked(kind: str, label: object, options: object) -> str:
    """How a kind was asked, for a message: accounts by their days, the others by ``what``."""
    if kind == "accounts":
        days = options.get("days") if isinstance(options, Mapping) else None
        return f"days={days}" if days else "with the service's default days"
    return f"what={label}" if label else f"options {options_key(options)}"


def _not_an_output(storage: Storage, exc: OSError) -> ConfigError:
    """The ``ConfigError`` naming ``out`` when it cannot be made or read as the output directory."""
    if isinstance(exc, FileExistsError | NotADirectoryError):
        return _config_error("out", f"must be a directory: {storage.shown}, or a directory above it, is a file")
    return _config_error("out", f"cannot be the output directory: {described(exc, storage.given)}: {storage.shown}")


def check_output(
    storage: Storage,
    run_id: str,
    *,
    kinds: Sequence[Kind],
    fmt: str,
    money: str | None,
    csv_formulas: str,
    resume: bool,
    wait_lock: float,
    stop: threading.Event | None = None,
) -> Before:
    """Makes or finds the output, takes its lock for the run ``run_id``, and checks an export
    already there against how this run asks (``money``: None when not asked). A ``ConfigError``
    naming the argument otherwise, with the lock let go."""
    try:
        # Made now, before anything is fetched: an output that cannot be one is a usage error.
        storage.makedirs(storage.root)
        storage.makedirs(storage.path(JOURNAL))
        check_directories(storage)
        # One run at a time, from here on: nothing in the directory was read yet (lock.py).
        lock = take_lock(storage, run_id, wait=wait_lock, stop=stop)
    except OSError as exc:
        raise _not_an_output(storage, exc) from None
    try:
        return _check_locked(storage, run_id, lock, kinds, fmt, money, csv_formulas, resume)
    except BaseException:
        lock.release()
        raise


def _check_locked(
    storage: Storage,
    run_id: str,
    lock: ExportLock,
    kinds: Sequence[Kind],
    fmt: str,
    money: str | None,
    csv_formulas: str,
    resume: bool,
) -> Before:
    """:func:`check_output` once the lock is taken."""
    try:
        present = [name for name in storage.listdir(storage.root) if name in _OURS and _wrote(storage, name)]
    except OSError as exc:
        raise _not_an_output(storage, exc) from None
    # An existing directory the run could not write (a read-only mount, another user's) is
    # refused now, before anything is read or fetched, like one that cannot be made.
    unwritable = storage.unwritable()
    if unwritable is not None:
        raise _config_error("out", f"cannot be written: {unwritable}: {storage.shown}")
    before = Before(lock, money=money, process_name=run_id)
    if not present:
        return before
    # An export already there: this is its next run, or, with resume, goes on with its last.
    records = read_runs(storage)
    previous = previous_manifest(storage)
    _check_fixed(storage, fmt, previous, records)
    before.money = _money_before(storage, money, previous, records)
    if fmt == "csv":
        _check_formulas_as_before(storage, csv_formulas, previous, records)
    before.kinds_before = _check_kinds_as_before(storage, kinds, previous, records, resume=resume)
    if written_before_runs(storage, fmt, records):
        # Its rows outside the runs' partitions: moved into them first, as its first run.
        move_into_runs(storage, fmt, records)
        records = read_runs(storage)
    before.process_name = next_run(run_id, [str(record["run"]) for record in records])
    if resume and records:
        before.resumed_run = last_run(records)
        before.resumed_ended = records[-1].get("finished_at") is not None and not records[-1].get("interrupted")
    else:
        before.resumes_unrecorded = resume
        # A run's name is that of its first process, which sorts after every earlier process's
        # (and so after every earlier run's: a process sorts after the run it resumed).
        before.new_run = before.process_name
    return before


def _check_fixed(storage: Storage, fmt: str, previous: Mapping[str, Any] | None, runs: list[dict[str, Any]]) -> None:
    """The options :func:`fixed` names are the export's since its first run: earlier runs'
    records say them (a killed run's too), and a manifest written before runs had records."""
    for name, value in fixed(fmt).items():
        said = [(previous or {}).get(name)] + [record.get(name) for record in runs]
        was = next((before for before in reversed(said) if before is not None), None)
        if was not in (None, value):
            raise _config_error(
                name,
                f"must be what the export in {storage.shown} has had since its first run, {was!r}; got {value!r}: "
                "one table would hold rows of both. Start a new export in another directory for these",
            )


def _check_kinds_as_before(
    storage: Storage,
    kinds: Sequence[Kind],
    previous: Mapping[str, Any] | None,
    runs: list[dict[str, Any]],
    *,
    resume: bool,
) -> dict[str, Mapping[str, Any]]:
    """A run of an export asks for each kind asked before with the same options (days, package,
    query), or one table would hold rows of two meanings; and, but in a resume, for every kind
    the export has, so that each run has each kind's snapshot. The kinds earlier runs asked for."""
    shown = storage.shown
    before: dict[str, Mapping[str, Any]] = {}
    for record in [previous or {}, *runs]:
        asked = record.get("kinds") or {}
        before.update({name: entry for name, entry in asked.items() if isinstance(entry, Mapping)})
    kinds_before = {name: entry for name, entry in before.items() if name in KINDS}
    for kind in kinds:
        entry = kinds_before.get(kind.name)
        # A manifest written before runs had records has no options to compare.
        if entry is None or "options" not in entry or options_key(entry["options"]) == options_key(kind.options):
            continue
        days = kind.name == "accounts"
        was = _how_asked(kind.name, entry.get("what"), entry.get("options"))
        now = _how_asked(kind.name, kind.label, kind.options)
        if now == was:  # the same query file, its contents changed
            was, now = f"{was} ({options_key(entry.get('options'))})", f"{now} ({options_key(kind.options)})"
        raise _config_error(
            "days" if days else "what",
            f"must ask for {kind.name} as the export in {shown} did since its first run, {was}; got {now}: one "
            "table would hold rows of both. Start a new export in another directory for these",
        )
    missing = [name for name in kinds_before if name not in {kind.name for kind in kinds}]
    if missing and not resume:
        labels = [str(kinds_before[name].get("what") or name) for name in kinds_before]
        raise _config_error(
            "what",
            f"must ask for every kind of the export in {shown}, {', '.join(labels)}, so that each run has each "
            f"kind's snapshot; this run leaves out {', '.join(missing)}. A kind can be added (it starts its own "
            "history); to drop one, start a new export in another directory",
        )
    return kinds_before


def _money_before(
    storage: Storage, money: str | None, previous: Mapping[str, Any] | None, runs: list[dict[str, Any]]
) -> str | None:
    """The money type is the export's, fixed by its first run (docs/export.md#money): not
    asked, it is the one recorded; asked otherwise, the run is refused, or one column would
    hold floats in some files and decimals in others. An export written before the option
    recorded none: its money is float. The money the run goes on with; None: not recorded."""
    recorded = [record.get("money") for record in runs] + [(previous or {}).get("money")]
    before: str | None = next((str(kept) for kept in reversed(recorded) if kept), None)
    if before is None and (runs or previous):
        before = "float"
    if before is None:
        return money
    if money is not None and money != before:
        raise _config_error(
            "money",
            f"must be the money type the export in {storage.shown} was started with, {before!r}, to go on "
            f"with it; got {money!r}: a column would hold floats in some files and decimals in others. "
            f"Leave money out to go on as it was, or export to another directory",
        )
    return before


def _check_formulas_as_before(
    storage: Storage, csv_formulas: str, previous: Mapping[str, Any] | None, runs: list[dict[str, Any]]
) -> None:
    """A CSV resume writes its cells as the export did (docs/export.md#resume): with the
    ``csv_formulas`` of its last run; a run whose record does not say it, or an export with a
    manifest and no run records, wrote them escaped (the only way there was then)."""
    written = [record.get("csv_formulas") or "escape" for record in runs if record.get("format") != "parquet"]
    before = written[-1] if written else ("escape" if previous is not None else None)
    if before in (None, csv_formulas):
        return
    raise _config_error(
        "csv_formulas",
        f"must be the one the export in {storage.shown} was written with, {before!r}, to go on with it; got "
        f"{csv_formulas!r}: its CSV files would hold cells written both ways. Export these to another "
        "directory",
    )
