"""``bf.export`` and ``bf.aexport``: every login's data of the kinds asked for, fetched by the bulk
calls and written to a dataset per table as it comes (docs/export.md).

One export is described once (:class:`_Export`: what to fetch, what is already there, where each
result goes) and run by one of two loops that differ only in how they wait: the blocking bulk
iterator of a ``Client``, or the async one of an ``AsyncClient``.
"""

from __future__ import annotations

import errno
import json
import math
import os
import secrets
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bankfeed._export.cursor_store import CursorStore
from bankfeed._export.events import Events, states
from bankfeed._export.formulas import check_csv_formulas
from bankfeed._export.kinds import EVENT_KEYS, KINDS, Kind, check_money, check_what, parse_what, with_money
from bankfeed._export.location import described, shown
from bankfeed._export.lock import LOCK, ExportLock, take_lock
from bankfeed._export.logins import LoginIdList, fold, unique
from bankfeed._export.migrate import move_into_runs, written_before_runs
from bankfeed._export.outage import DEFAULT_MAX_CONSECUTIVE_FAILURES, StartBreaker, check_max_consecutive_failures
from bankfeed._export.planning import plan_stoppable
from bankfeed._export.progress import ExportProgress
from bankfeed._export.runs import last_run, next_run, run_of_record, summaries
from bankfeed._export.state import (
    FAILURES,
    MANIFEST,
    KindState,
    check_directories,
    previous_manifest,
    read_journal,
    read_runs,
    read_state,
    remove_leftovers,
    table_directories,
    write_run,
    write_summary,
)
from bankfeed._export.storage import Storage
from bankfeed._export.unknown import UnknownFields
from bankfeed._export.writer import JOURNAL, KindWriter, Limits, write_empty
from bankfeed._native import AsyncClient, Client, __version__
from bankfeed._type_aliases import AsyncChallengeHandler, ChallengeHandler
from bankfeed._views import export_report_html
from bankfeed.errors import SessionError, _check_count, _config_error

if TYPE_CHECKING:
    import distributed

__all__ = ["ExportReport", "aexport", "export"]

#: Logins handed to one bulk call: enough that the few logins of a chunk's end running alone
#: cost little (32 of 10,000 at the default concurrency), few enough that the call's bookkeeping
#: (a copy of each LoginId, the ones still owed) stays a few megabytes whatever the number of
#: logins: the export's memory must not grow with them (BENCHMARKS.md).
_CHUNK = 10_000

#: The formats an export writes.
_FORMATS = ("parquet", "csv")


@dataclass(frozen=True)
class ExportReport:
    """What an export did (``bf.export`` returns it; the command prints it).

    ``written`` counts the rows this run wrote per table (``"investments/positions"``), ``failed``
    lists this run's failures as ``(login_id, exception)`` (a login that failed in two kinds is
    there twice), and the counts are of distinct logins: written in every kind asked, failed in at
    least one, or skipped because an earlier run had written them (``resume``). ``interrupted``
    is true when Ctrl-C (or another stop) ended the run before every login was done; what was
    written until then is complete, and the manifest says so. ``run`` names the run written, the
    ``run_id`` column of its rows (docs/export.md#runs). ``out`` is the output directory as
    it is shown everywhere: a URL without its user, password and query (docs/export.md#where-it-writes).
    ``outage`` says why the run wrote nothing when every login it tried failed because the service
    could not be reached or refused the keys (the failures by class, ``"20 TransportError in
    GenerateAuthorizeToken"``), None otherwise; ``logins_not_tried`` counts the logins it then did
    not ask for, after ``max_consecutive_failures`` such failures in a row
    (docs/export.md#an-unreachable-service). ``kinds`` counts, per kind, the logins this run
    fetched (``"fetched"``: written or failed) and of those ``"failed"``.

    Example::

        report = bf.export(client, login_ids, "nightly/", what=["investments", "accounts"])
        print(report.logins_written, report.logins_failed, report.written["investments/positions"])
        for login_id, error in report.failed:
            print(login_id, type(error).__name__, error)
    """

    out: str
    written: Mapping[str, int]
    failed: list[tuple[str, BaseException]]
    logins_written: int
    logins_failed: int
    logins_skipped: int
    elapsed: float
    interrupted: bool = False
    logins_not_tried: int = 0
    outage: str | None = None
    #: Per kind, the logins this run fetched (written or failed) and of those failed.
    kinds: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    #: The run written (docs/export.md#runs): its name, the ``run_id`` of its rows.
    run: str = ""
    #: Per kind, the fields of this run's payloads that no table reads: path to the number of
    #: objects that carried it (docs/export.md#fields-the-service-adds).
    unknown_fields: Mapping[str, Mapping[str, int]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Whether every login asked for was written (none failed, and the run was not stopped)."""
        return self.logins_failed == 0 and self.logins_not_tried == 0 and not self.interrupted

    def _repr_html_(self) -> str:
        """The notebook view: the output, the counts, the rows per table, the failures by class."""
        return export_report_html(self)

    def __repr__(self) -> str:
        rows = sum(self.written.values())
        state = ", interrupted" if self.interrupted else ""
        if self.logins_not_tried:
            state += f", logins_not_tried={self.logins_not_tried}"
        return (
            f"ExportReport(out={shown(self.out)!r}, logins_written={self.logins_written}, "
            f"logins_failed={self.logins_failed}, logins_skipped={self.logins_skipped}, rows={rows}, "
            f"elapsed={self.elapsed:.1f}{state})"
        )


def _tried_key(login: Any) -> str:
    """How the logins tried and not tried are compared: folded (``logins.fold``), a LoginId that
    is not text by its ``repr``, as its failure names it."""
    return fold(login) if isinstance(login, str) else repr(login)


def _texts(login_ids: object) -> list[Any]:
    """The LoginIds in order, each once, as a list (:func:`bankfeed._export.logins.unique`)."""
    return list(unique(login_ids))


def _release_arrow_memory() -> None:
    """Hands back to the system what Arrow's memory pool keeps of the batches written.

    The pool (mimalloc in pyarrow's wheels) keeps freed pages for the next batch; after the last
    one nothing reuses them, and reading the journal back at the end would otherwise add its
    memory on top of them: at 100,000 logins that end was the peak of the whole run
    (BENCHMARKS.md, export)."""
    pyarrow = sys.modules.get("pyarrow")
    if pyarrow is not None:
        pyarrow.default_memory_pool().release_unused()


def _options_json(options: Mapping[str, Any]) -> dict[str, Any]:
    """A kind's options as its run record keeps them: JSON (what JSON has no type for, as text)."""
    value: dict[str, Any] = json.loads(json.dumps(dict(options), default=str))
    return value


def _options(options: object) -> str:
    """A kind's options as two runs' are compared."""
    return json.dumps(_options_json(options) if isinstance(options, Mapping) else options, sort_keys=True)


def _how_asked(kind: str, label: object, options: object) -> str:
    """How a kind was asked, for a message: accounts by their days, the others by ``what``."""
    if kind == "accounts":
        days = options.get("days") if isinstance(options, Mapping) else None
        return f"days={days}" if days else "with the service's default days"
    return f"what={label}" if label else f"options {_options(options)}"


def _as_written(asked: LoginIdList, states: list[KindState]) -> LoginIdList:
    """``asked``, each LoginId spelled as a kind of the export wrote it when it was written in
    another case: a kind added by a resume then writes the spelling the others have, and a join
    of two tables on ``login_id`` matches. ``asked`` itself (not a copy) when none differs."""

    def written_as(login: Any) -> Any:
        for state in states:
            spelled = state.spelling(login)
            if spelled is not None:
                return spelled
        return login

    if not any(state.written for state in states) or all(written_as(login) == login for login in asked):
        return asked
    return LoginIdList(written_as(login) for login in asked)


#: What an output directory holds when an export wrote it.
_OURS = (*KINDS, JOURNAL, MANIFEST, FAILURES)


def _wrote(storage: Storage, name: str) -> bool:
    """Whether ``name``, one of :data:`_OURS` in the output, is there because an export wrote:
    a journal holding only the lock is what a refused or empty run leaves."""
    return name != JOURNAL or storage.listdir(storage.path(JOURNAL)) not in ([], [LOCK])


def _check_keep_raw(keep_raw: object) -> None:
    """``keep_raw``: True or False; anything else is a ``ConfigError`` naming it."""
    if not isinstance(keep_raw, bool):
        raise _config_error("keep_raw", f"must be True or False, got {keep_raw!r}")


def _seconds(field: str, value: object) -> float:
    """``wait_lock``: seconds, at least 0 (``inf``: for as long as it takes)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{field} must be a number of seconds, not {type(value).__name__}")
    if math.isnan(value) or value < 0:
        raise _config_error(field, f"must be a number of seconds of at least 0, got {value}")
    return float(value)


@dataclass
class _Export:
    """One export, before and while it runs: the kinds, the output, what each kind has left."""

    storage: Storage
    kinds: list[Kind]
    fmt: str
    #: Compact: held for the whole run (``logins.py`` says why).
    asked: LoginIdList
    concurrency: int
    limits: Limits
    show: bool
    #: This process's name: its record, its lock, the start of its batches' names.
    run_id: str = field(
        default_factory=lambda: time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + "-" + secrets.token_hex(3)
    )
    #: The run this process goes on with (``resume``); None: it starts a run of its own, named
    #: after it (``runs.py``).
    resumed_run: str | None = None
    #: The name of the run this process starts, when it resumes none: its own, unless an
    #: earlier run's sorts after it (``runs.next_run``).
    new_run: str | None = None
    #: Whether the last process of the run resumed went to its end (a resume of a run that has
    #: nothing left to do is refused then, rather than writing nothing and ending well).
    resumed_ended: bool = False
    #: A resume of an export written before runs had records: every batch of it counts as this
    #: run's, as a resume counted them then.
    resumes_unrecorded: bool = False
    started: float = field(default_factory=time.time)
    clock: float = field(default_factory=time.monotonic)
    #: Seconds to wait for another run's lock of the directory, and the lock once taken
    #: (``lock.py``): held from before the directory is read until :meth:`release`.
    wait_lock: float = 0.0
    lock: ExportLock | None = None
    #: Logins an earlier run wrote in every kind: nothing is fetched for them.
    skipped_logins: int = 0
    todo: dict[str, LoginIdList] = field(default_factory=dict)
    resumes: dict[str, dict[str, str]] = field(default_factory=dict)
    #: Per kind, the logins resumed whose session had expired: see :meth:`chunks`.
    expired: dict[str, list[Any]] = field(default_factory=dict)
    writers: dict[str, KindWriter] = field(default_factory=dict)
    failures: list[tuple[str, BaseException]] = field(default_factory=list)
    done: int = 0
    failed: int = 0
    progress: ExportProgress | None = None
    #: What the partitions of a cluster run wrote, which has no writer here (docs/scale-out.md):
    #: the rows per ``"kind/table"``.
    remote_rows: dict[str, int] = field(default_factory=dict)
    #: The kinds earlier runs of this export asked for, and how (``what``, ``options``): the
    #: manifest describes them too.
    kinds_before: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    #: What answers a login's challenges (``on_challenge``); None: nothing is answered.
    on_challenge: Any = None
    #: How CSV files write a text cell a spreadsheet would run (``formulas.py``).
    csv_formulas: str = "escape"
    #: How the tables hold money (docs/export.md#money): fixed by the export's first run; None
    #: until :meth:`plan` has read what earlier runs recorded.
    money: str | None = None
    #: Stops the run when the service is not there (``outage.py``); the logins tried while it
    #: counts (folded: at most ``max_consecutive_failures`` of them), and those then not tried.
    breaker: StartBreaker = field(default_factory=lambda: StartBreaker(DEFAULT_MAX_CONSECUTIVE_FAILURES))
    tried: set[str] = field(default_factory=set)
    #: Per kind, the logins listed as not tried; on a cluster, which ones (by :func:`_tried_key`),
    #: as its partitions listed them.
    not_tried: Counter[str] = field(default_factory=Counter)
    untried: dict[str, set[str]] = field(default_factory=dict)
    #: Logins done (written or failed) by this run, per kind: what the progress shows; and failed.
    kind_done: Counter[str] = field(default_factory=Counter)
    kind_failed: Counter[str] = field(default_factory=Counter)
    #: Per kind with a table of transactions, what earlier runs wrote of it (``events.py``).
    events: dict[str, Events] = field(default_factory=dict)
    #: Every login of this run starts its transactions over (``full_refresh``).
    full_refresh: bool = False
    #: The fields of this run's payloads that no table reads, per kind.
    unknown: UnknownFields = field(default_factory=UnknownFields)
    #: Whether each login's payload is kept in ``_raw/<kind>`` (``raw.py``).
    keep_raw: bool = False

    @classmethod
    def plan(
        cls,
        login_ids: object,
        out: str | os.PathLike[str],
        *,
        what: Iterable[object] | str,
        fmt: str,
        concurrency: int,
        resume: bool,
        wait_lock: object = 0.0,
        allow_shared_out: bool = False,
        progress: bool,
        days: object,
        batch_logins: int,
        client: Client | AsyncClient,
        on_challenge: object = None,
        csv_formulas: object = "escape",
        money: object = None,
        max_consecutive_failures: object = DEFAULT_MAX_CONSECUTIVE_FAILURES,
        stop: threading.Event | None = None,
        full_refresh: bool = False,
    ) -> _Export:
        if fmt not in _FORMATS:
            raise _config_error("format", f'must be "parquet" or "csv", got {fmt!r}')
        if fmt == "parquet":
            try:
                import pyarrow.parquet  # noqa: F401
            except ImportError:
                raise _config_error(
                    "format", '"parquet" needs pyarrow: pip install \'bankfeed[arrow]\', or pass format="csv"'
                ) from None
        _check_count("batch_logins", batch_logins)
        _check_count("concurrency", concurrency)
        formulas = check_csv_formulas(csv_formulas)
        breaker = StartBreaker(check_max_consecutive_failures(max_consecutive_failures))
        wait = _seconds("wait_lock", wait_lock)
        kinds = parse_what(what, days=days)
        check_what(kinds, client, on_challenge=on_challenge)
        # A directory another user could steer is refused as it is made or found (storage.py).
        storage = Storage(out, refuse_shared=not allow_shared_out)
        limits = Limits(logins=batch_logins)
        # The command line's LoginIds come as a LoginIdList already (each once): not copied.
        asked = login_ids if isinstance(login_ids, LoginIdList) else LoginIdList(unique(login_ids))
        export = cls(
            storage, kinds, fmt, asked, concurrency, limits, progress, on_challenge=on_challenge, csv_formulas=formulas
        )
        export.wait_lock = wait
        export.money = None if money is None else check_money(money)
        export.breaker = breaker
        if not isinstance(full_refresh, bool):
            raise TypeError(f"full_refresh must be True or False, not {type(full_refresh).__name__}")
        export.full_refresh = full_refresh
        try:
            export._check_output(resume, stop)
            # Not asked, and no earlier run of the export recorded one: the client's.
            export.money = export.money or client.money
            remove_leftovers(storage)
            # Every kind of the export checked before any is repaired: a damaged or planted entry
            # stops the run with nothing renamed or deleted (records.py).
            names = {*export.kinds_before, *(kind.name for kind in kinds)}
            journals = {name: read_journal(storage, name, fmt) for name in names}
            # What this run wrote already: nothing, but for a resume.
            run = None if export.resumes_unrecorded else export.partition_run
            states_of_kinds = []
            for kind in kinds:
                entries = journals.pop(kind.name)
                table = next((table for name, table in EVENT_KEYS if name == kind.name), None)
                # Where each login's transactions stand, for this run to go on from: read in the
                # same pass over the journal as the state (``events.states``); not at all when
                # every login starts its history over.
                before, apply = states(kind.name) if table is not None and not full_refresh else ({}, None)
                state = read_state(storage, kind.name, fmt, run=run, entries=entries, each=apply)
                states_of_kinds.append(state)
                if table is not None:
                    export.events[kind.name] = Events(kind.name, table, before, full_refresh=full_refresh)
            del journals
            export.asked = _as_written(export.asked, states_of_kinds)
            for kind, state in zip(kinds, states_of_kinds, strict=True):
                # All of them, not a copy, when nothing was written before (no resume).
                export.todo[kind.name] = (
                    LoginIdList(login for login in export.asked if not state.has(login))
                    if state.written
                    else export.asked
                )
                # A login whose data was still pending polls its RequestId where it stood (by its
                # folded LoginId: given in another case this time, it is the same login).
                export.resumes[kind.name] = {
                    login: record["request_id"]
                    for login, record in state.failed.items()
                    if record.get("error") == "PendingTimeout" and isinstance(record.get("request_id"), str)
                }
            export.skipped_logins = sum(
                1 for login in export.asked if all(state.has(login) for state in states_of_kinds)
            )
            if export.resumed_run is not None and export.resumed_ended and export.total == 0:
                raise _config_error(
                    "resume",
                    f"has nothing to resume: the last run of {storage.shown}, {export.resumed_run}, has every login "
                    "asked written in every kind asked. Without resume=True (--resume) the export's next run starts",
                )
        except BaseException:
            export.release()
            raise
        return export

    @property
    def partition_run(self) -> str:
        """The run whose partition this process writes (docs/export.md#runs)."""
        return self.resumed_run or self.new_run or self.run_id

    def release(self) -> None:
        """Lets the next run write the directory (``lock.py``); nothing after the first call. The
        on-disk states of the transactions' cursors go with it (``cursor_store.py``)."""
        for events in self.events.values():
            if isinstance(events.previous, CursorStore):
                events.previous.close()
        if self.lock is not None:
            self.lock.release()

    def _check_output(self, resume: bool, stop: threading.Event | None = None) -> None:
        storage = self.storage
        try:
            # Made now, before anything is fetched: an output that cannot be one is a usage error.
            storage.makedirs(storage.root)
            storage.makedirs(storage.path(JOURNAL))
            check_directories(storage)
            # One run at a time, from here on: nothing in the directory was read yet (lock.py).
            self.lock = take_lock(storage, self.run_id, wait=self.wait_lock, stop=stop)
            present = [name for name in storage.listdir(storage.root) if name in _OURS and _wrote(storage, name)]
        except (FileExistsError, NotADirectoryError):
            raise _config_error(
                "out", f"must be a directory: {storage.shown}, or a directory above it, is a file"
            ) from None
        except OSError as exc:
            raise _config_error(
                "out", f"cannot be the output directory: {described(exc, storage.given)}: {storage.shown}"
            ) from None
        # An existing directory the run could not write (a read-only mount, another user's) is
        # refused now, before anything is read or fetched, like one that cannot be made.
        unwritable = storage.unwritable()
        if unwritable is not None:
            raise _config_error("out", f"cannot be written: {unwritable}: {storage.shown}")
        if not present:
            return
        # An export already there: this is its next run, or, with resume, goes on with its last.
        records = read_runs(storage)
        self._check_asked_as_before(previous_manifest(storage), records, resume=resume)
        if written_before_runs(storage, self.fmt, records):
            # Its rows outside the runs' partitions: moved into them first, as its first run.
            move_into_runs(storage, self.fmt, records)
            records = read_runs(storage)
        if resume and records:
            self.resumed_run = last_run(records)
            self.resumed_ended = records[-1].get("finished_at") is not None and not records[-1].get("interrupted")
        else:
            self.resumes_unrecorded = resume
            self.new_run = next_run(self.run_id, [run_of_record(record) for record in records])

    def _check_asked_as_before(
        self, previous: Mapping[str, Any] | None, runs: list[dict[str, Any]], *, resume: bool
    ) -> None:
        """A run of an export asks for it as its first run did (docs/export.md#what-a-run-must-ask-as-before):
        the same format, each kind asked before with the same options (days, package, query), or
        one table would hold rows of two meanings; and, but in a resume, every kind the export
        has, so that each run has each kind's snapshot. Earlier runs' records say how (a killed
        run's too), and a manifest written before runs had records says what it can."""
        shown = self.storage.shown
        for name, value in self.fixed().items():
            said = [(previous or {}).get(name)] + [record.get(name) for record in runs]
            was = next((before for before in reversed(said) if before is not None), None)
            if was not in (None, value):
                raise _config_error(
                    name,
                    f"must be what the export in {shown} has had since its first run, {was!r}; got {value!r}: one "
                    "table would hold rows of both. Start a new export in another directory for these",
                )
        self._check_money_as_before(previous, runs)
        if self.fmt == "csv":
            self._check_formulas_as_before(previous, runs)
        before: dict[str, Mapping[str, Any]] = {}
        for record in [previous or {}, *runs]:
            kinds = record.get("kinds") or {}
            before.update({name: entry for name, entry in kinds.items() if isinstance(entry, Mapping)})
        self.kinds_before = {name: entry for name, entry in before.items() if name in KINDS}
        for kind in self.kinds:
            entry = self.kinds_before.get(kind.name)
            # A manifest written before runs had records has no options to compare.
            if entry is None or "options" not in entry or _options(entry["options"]) == _options(kind.options):
                continue
            days = kind.name == "accounts"
            was = _how_asked(kind.name, entry.get("what"), entry.get("options"))
            now = _how_asked(kind.name, kind.label, kind.options)
            if now == was:  # the same query file, its contents changed
                was, now = f"{was} ({_options(entry.get('options'))})", f"{now} ({_options(kind.options)})"
            raise _config_error(
                "days" if days else "what",
                f"must ask for {kind.name} as the export in {shown} did since its first run, {was}; got {now}: one "
                "table would hold rows of both. Start a new export in another directory for these",
            )
        missing = [name for name in self.kinds_before if name not in {kind.name for kind in self.kinds}]
        if missing and not resume:
            labels = [str(self.kinds_before[name].get("what") or name) for name in self.kinds_before]
            raise _config_error(
                "what",
                f"must ask for every kind of the export in {shown}, {', '.join(labels)}, so that each run has each "
                f"kind's snapshot; this run leaves out {', '.join(missing)}. A kind can be added (it starts its own "
                "history); to drop one, start a new export in another directory",
            )

    def _check_money_as_before(self, previous: Mapping[str, Any] | None, runs: list[dict[str, Any]]) -> None:
        """The money type is the export's, fixed by its first run (docs/export.md#money): not
        asked, it is the one recorded; asked otherwise, the run is refused, or one column would
        hold floats in some files and decimals in others. An export written before the option
        recorded none: its money is float."""
        recorded = [record.get("money") for record in runs] + [(previous or {}).get("money")]
        before = next((money for money in reversed(recorded) if money), None)
        if before is None and (runs or previous):
            before = "float"
        if before is None:
            return
        if self.money is None:
            self.money = before
        elif self.money != before:
            raise _config_error(
                "money",
                f"must be the money type the export in {self.storage.shown} was started with, {before!r}, to go on "
                f"with it; got {self.money!r}: a column would hold floats in some files and decimals in others. "
                f"Leave money out to go on as it was, or export to another directory",
            )

    def _check_formulas_as_before(self, previous: Mapping[str, Any] | None, runs: list[dict[str, Any]]) -> None:
        """A CSV resume writes its cells as the export did (docs/export.md#resume): with the
        ``csv_formulas`` of its last run; a run whose record does not say it, or an export with a
        manifest and no run records, wrote them escaped (the only way there was then)."""
        written = [record.get("csv_formulas") or "escape" for record in runs if record.get("format") != "parquet"]
        before = written[-1] if written else ("escape" if previous is not None else None)
        if before in (None, self.csv_formulas):
            return
        raise _config_error(
            "csv_formulas",
            f"must be the one the export in {self.storage.shown} was written with, {before!r}, to go on with it; got "
            f"{self.csv_formulas!r}: its CSV files would hold cells written both ways. Export these to another "
            "directory",
        )

    @property
    def total(self) -> int:
        return sum(len(todo) for todo in self.todo.values())

    def start(self) -> None:
        try:
            write_run(self.storage, self.record())
        except OSError as exc:
            # The run's first write, before anything is fetched: an output it may not write (an
            # object store's bucket, which only writing tells) is a usage error, as a local one
            # is found by ``_check_output``. A full disk stays what it is (docs/export.md#exit-status).
            if exc.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
                raise
            raise _config_error(
                "out", f"cannot be written: {described(exc, self.storage.given)}: {self.storage.shown}"
            ) from None
        if self.show:
            kinds = {name: len(todo) for name, todo in self.todo.items()}
            self.progress = ExportProgress(len(self.asked) - self.skipped_logins, kinds)

    def record(self, **ended: Any) -> dict[str, Any]:
        """This run's record (``state.write_run``): how it was asked, and ``ended`` once it ended."""
        return {
            "run": self.run_id,
            "part_of": self.partition_run,
            "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.started)),
            # The order of runs started within one second.
            "started": self.started,
            "finished_at": None,
            **self.fixed(),
            "money": self.money,
            # How its CSV cells were written (a later run must write them the same way); null for
            # Parquet, which holds every text as it came.
            "csv_formulas": self.csv_formulas if self.fmt == "csv" else None,
            "full_refresh": self.full_refresh,
            "kinds": self.kinds_asked(),
            "logins_asked": len(self.asked),
            "logins_fetched": None,
            "logins_failed": None,
            "interrupted": None,
            **ended,
        }

    def fixed(self) -> dict[str, Any]:
        """The options of the whole export that change what its rows mean, fixed by its first run
        (docs/export.md#what-a-run-must-ask-as-before), as each process's record keeps them and a
        later run compares them: the format. An option of the same nature (how amounts are typed,
        say) goes here too, and in nothing else."""
        return {"format": self.fmt}

    def kinds_asked(self) -> dict[str, dict[str, Any]]:
        """How this run asks for each of its kinds: ``what`` and ``options``, as records keep them."""
        return {kind.name: {"what": kind.label, "options": _options_json(kind.options)} for kind in self.kinds}

    def writer(self, kind: Kind) -> KindWriter:
        writer = KindWriter(
            self.storage,
            kind,
            self.fmt,
            self.run_id,
            self.limits,
            run=self.partition_run,
            csv_formulas=self.csv_formulas,
            events=self.events.get(kind.name),
            keep_raw=self.keep_raw,
        )
        self.writers[kind.name] = writer
        return writer

    def chunks(self, kind: Kind, size: int = _CHUNK) -> Iterator[tuple[list[Any], dict[str, str], dict[str, Any]]]:
        """The bulk calls of ``kind``: its logins in chunks of ``size`` (the partitions of a cluster
        run), each with the RequestIds to resume and the options it adds to the kind's (the
        ``date_from`` of logins whose transactions an earlier run wrote: the logins are grouped by
        it, ``events.py``); made one at a time, as they are run. Then the logins :meth:`take`
        found resumed with a RequestId whose session had expired since (a resume the next night),
        started over with no RequestId rather than failed once more."""
        resumes = self.resumes[kind.name]
        for options, logins in self._by_date_from(kind, self.todo[kind.name]):
            for chunk in logins.slices(size):
                yield chunk, {login: resumes[fold(login)] for login in chunk if fold(login) in resumes}, options
        expired = self.expired.pop(kind.name, [])
        for options, logins in self._by_date_from(kind, LoginIdList(expired)):
            for chunk in logins.slices(size):
                yield chunk, {}, options

    def _by_date_from(self, kind: Kind, logins: LoginIdList) -> Iterator[tuple[dict[str, Any], LoginIdList]]:
        """``logins`` grouped by the day their transactions are asked from: all of them, with no
        option added, when the kind has no dates to ask from or none was written before."""
        events = self.events.get(kind.name)
        if events is None or not events.windowed or not events.previous:
            yield {}, logins
            return
        # Compact, as the logins asked are (``logins.py``): a group may be every login.
        groups: dict[str | None, LoginIdList] = {}
        for login in logins:
            day = events.date_from(login)
            group = groups.get(day)
            if group is None:
                group = groups[day] = LoginIdList()
            group.append(login)
        for day, group in sorted(groups.items(), key=lambda item: item[0] or ""):
            yield ({} if day is None else {"date_from": day}), group

    def call(
        self, client: Any, kind: Kind, chunk: list[Any], request_ids: Mapping[str, str], options: Mapping[str, Any]
    ) -> Any:
        return kind.bulk_call(client)(
            chunk,
            concurrency=self.concurrency,
            request_ids=request_ids or None,
            on_challenge=self.on_challenge,
            **kind.options,
            **options,
        )

    def take(self, writer: KindWriter, login_id: Any, result: object) -> bool:
        """Gathers one pair of a bulk call; whether the batch is due to be committed."""
        resumes = self.resumes[writer.kind.name]
        if isinstance(result, SessionError) and resumes.pop(fold(login_id), None) is not None:
            # Resumed, and its session expired meanwhile: fetched again by :meth:`chunks` (once:
            # it is no longer resumed).
            self.expired.setdefault(writer.kind.name, []).append(login_id)
            return writer.due()
        if isinstance(result, BaseException):
            writer.fail(login_id if isinstance(login_id, str) else repr(login_id), result)
            self.failures.append((login_id, result))
            self.failed += 1
            self.kind_failed[writer.kind.name] += 1
        else:
            writer.add(login_id, result, time.time_ns() // 1000)
            self.unknown.add(writer.kind.name, result)
        if self.breaker.armed:
            self.tried.add(fold(login_id) if isinstance(login_id, str) else repr(login_id))
        self.breaker.observe(result)
        self.done += 1
        self.kind_done[writer.kind.name] += 1
        if self.progress is not None:
            self.progress.update(self.kind_done, self.kind_failed, sum(w.gathered for w in self.writers.values()))
        return writer.due()

    @property
    def logins_not_tried(self) -> int:
        """Logins the run asked nothing for, in any kind, once it stopped asking. In one process
        the logins it tried are all known (it stops within the first ``max_consecutive_failures``).
        On a cluster each partition stops by itself and lists the logins it did not ask for: a
        login counts when every kind that had it to fetch listed it so."""
        if not self.not_tried:
            return 0
        if not self.untried:
            return max(0, len(self.asked) - self.skipped_logins - len(self.tried))
        never = set().union(*self.untried.values())
        for kind in self.kinds:
            listed = self.untried.get(kind.name, set())
            for login in self.todo[kind.name]:
                key = _tried_key(login)
                if key not in listed:
                    # Asked for in this kind (or its partition was stopped before it began).
                    never.discard(key)
        return len(never)

    @property
    def stopping(self) -> bool:
        """Whether the run stops asking: the service is not there (``outage.py``)."""
        return self.breaker.tripped

    def leave_untried(self, kind: Kind) -> None:
        """Lists, as not tried, the logins of ``kind`` and of the kinds after it that the run
        did not ask for once it stopped asking; committed a batch at a time, as failures are."""
        error = self.breaker.not_tried()
        later = self.kinds[self.kinds.index(kind) :]
        for each in later:
            writer = self.writers.get(each.name) if each is kind else None
            writer = writer or self.writer(each)
            for login in self.todo[each.name]:
                shown = login if isinstance(login, str) else repr(login)
                if each is kind and (fold(login) if isinstance(login, str) else shown) in self.tried:
                    continue
                writer.fail(shown, error)
                self.not_tried[each.name] += 1
                if self.not_tried[each.name] % self.limits.logins == 0:
                    writer.commit()
            writer.commit()

    def absorb(
        self,
        done: int,
        written: int,
        rows: Mapping[str, int],
        failures: list[tuple[Any, BaseException]],
        *,
        kind: str = "",
        breaker: StartBreaker | None = None,
        not_tried: Iterable[Any] = (),
    ) -> None:
        """Counts what a partition of a cluster run did: ``done`` logins of ``kind``, of which
        ``written`` were, ``rows`` per ``"kind/table"``, the ``failures``, and what its
        ``breaker`` saw and the logins it left ``not_tried``."""
        self.done += done
        self.kind_done[kind] += done
        self.kind_failed[kind] += len(failures)
        self.failed += len(failures)
        self.failures.extend(failures)
        untried = self.untried.setdefault(kind, set())
        for login in not_tried:
            untried.add(_tried_key(login))
            self.not_tried[kind] += 1
        if breaker is not None:
            self.breaker.merge(breaker)
        for name, count in rows.items():
            self.remote_rows[name] = self.remote_rows.get(name, 0) + count
        if self.progress is not None:
            self.progress.update(self.kind_done, self.kind_failed, sum(self.remote_rows.values()))

    def finish(self, interrupted: bool, repair: bool = True) -> ExportReport:
        """Writes the manifest and the failures; the report of this run. ``repair`` false: the
        journal is read as it stands, since workers of a cluster run may still be committing."""
        if self.progress is not None:
            self.progress.close(interrupted)
        _release_arrow_memory()
        for kind in self.kinds:
            for table in kind.tables:
                # A table no run wrote a row in yet: an empty file in this run's partition.
                directories = table_directories(self.storage, kind.name, table)
                if not any(
                    name.startswith("part-") for directory in directories for name in self.storage.listdir(directory)
                ):
                    write_empty(
                        self.storage,
                        kind,
                        table,
                        self.fmt,
                        f"{self.run_id}-000000",
                        self.partition_run,
                        self.money or "float",
                    )
        # The journal is the truth of the directory (earlier runs, a cluster's partitions), for
        # this run's kinds and those of earlier runs alike.
        kinds_asked: dict[str, Mapping[str, Any]] = {**self.kinds_before, **self.kinds_asked()}
        # Each read an entry at a time (``state.Journal``): the logins written are held compactly,
        # this run's only, and each earlier run's counted and let go (``runs.summaries``).
        # Without their cursors checked: the end reads none (the start checked them).
        journals = {name: read_journal(self.storage, name, self.fmt, cursors=False) for name in kinds_asked}
        states: dict[str, KindState] = {
            name: read_state(self.storage, name, self.fmt, run=self.partition_run, repair=repair, entries=entries)
            for name, entries in journals.items()
        }
        # Each login once, whatever its kinds, as the report counts them.
        not_tried = self.logins_not_tried
        run = self.record(
            finished_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            logins_fetched=self.done,
            logins_failed=self.failed,
            interrupted=interrupted,
            logins_not_tried=not_tried,
            unknown_fields=self.unknown.as_record(),
        )
        write_run(self.storage, run)
        # This run's logins written, gathered already (with ``repair``: the same batches counted).
        known = {self.partition_run: states} if repair else None
        listed = [summary.shown() for summary in summaries(read_runs(self.storage), journals, known)]
        del journals
        write_summary(
            self.storage,
            states,
            fmt=self.fmt,
            version=__version__,
            run=run,
            kinds_asked=kinds_asked,
            previous=previous_manifest(self.storage),
            runs=listed,
        )
        # Written now in every kind of this run: at the end, and not already at the start.
        ours = [states[kind.name] for kind in self.kinds]
        everywhere = sum(1 for login in self.asked if all(state.has(login) for state in ours))
        failed_now = {login if isinstance(login, str) else repr(login) for login, _ in self.failures}
        # Every table of this run's kinds, a kind that Ctrl-C stopped before it began too (0 rows),
        # as a cluster run reports them.
        written = {f"{kind.name}/{table}": 0 for kind in self.kinds for table in kind.tables}
        for name, count in self.remote_rows.items():
            written[name] = written.get(name, 0) + count
        for name, writer in self.writers.items():
            for table, count in writer.rows.items():
                written[f"{name}/{table}"] = written.get(f"{name}/{table}", 0) + count
        return ExportReport(
            out=self.storage.shown,
            written=written,
            failed=self.failures,
            logins_written=everywhere - self.skipped_logins,
            logins_failed=len(failed_now),
            logins_skipped=self.skipped_logins,
            elapsed=time.monotonic() - self.clock,
            interrupted=interrupted,
            logins_not_tried=not_tried,
            outage=self.breaker.describe() if self.breaker.outage and not interrupted else None,
            kinds={
                kind.name: {"fetched": self.kind_done[kind.name], "failed": self.kind_failed[kind.name]}
                for kind in self.kinds
            },
            run=self.partition_run,
            unknown_fields=run["unknown_fields"],
        )


def export(
    client: Client,
    login_ids: Iterable[str],
    out: str | os.PathLike[str],
    *,
    what: Iterable[object] | str = ("investments",),
    format: str = "parquet",
    concurrency: int = 32,
    resume: bool = False,
    wait_lock: float = 0.0,
    allow_shared_out: bool = False,
    progress: bool = False,
    days: int | str | None = None,
    batch_logins: int = 1000,
    scheduler: distributed.Client | str | None = None,
    partition_size: int = 1000,
    on_challenge: ChallengeHandler | None = None,
    csv_formulas: str = "escape",
    money: str | None = None,
    max_consecutive_failures: int = DEFAULT_MAX_CONSECUTIVE_FAILURES,
    full_refresh: bool = False,
    keep_raw: bool = False,
) -> ExportReport:
    """Fetches every login's data of the kinds in ``what`` and writes it under ``out``, one
    dataset per table, as it comes (docs/export.md).

    ``what`` holds ``"investments"``, ``"accounts"`` (account detail with its transactions;
    ``days=90`` or ``365``) and ``"attributes:<package>"`` (or ``("attributes", {"attributes":
    {group: [names]}, ...})``). ``out`` is a directory, or an fsspec URL when fsspec is installed.
    The layout: ``out/<kind>/<table>/run_date=<date>/run_id=<run>/part-*.parquet``
    (``format="csv"`` writes CSV: a text cell that a spreadsheet would run as a formula, one
    starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return, is written with a leading
    ``'``, unless ``csv_formulas="raw"``; numbers are never changed), each row starting with
    ``login_id``, ``request_id`` and ``fetched_at``;
    ``out/_failures.jsonl`` lists the logins that failed, ``out/_manifest.json`` what was asked and
    written. A login is written in a table once or not at all, whatever stops the run (an output
    that cannot be written, a full disk, raises its ``OSError``); ``resume=True`` goes on with a
    run that was stopped or had failures: logins already written are skipped, with no request sent,
    failed ones are tried again, and one that was still pending polls its RequestId again.
    ``money`` (``"float"`` or ``"decimal"``) is how every amount, balance, value, price and
    quantity column is written: float64, or an exact decimal128 read from the payload's digits
    (docs/export.md#money). The export's first run fixes it: left out, a later run goes on with
    the export's, and a new export takes the client's ``money`` option (float unless set); a run
    asking for another is a ``ConfigError`` naming ``money``.
    ``keep_raw=True`` also keeps each login's payload of each kind, as the service sent it, in the
    table ``out/_raw/<kind>``, in the run's partition as every table (``login_id``, ``request_id``,
    ``fetched_at``, ``payload``: JSON text; ``run_date`` and ``run_id`` from the partition), written
    and committed with the login's rows, so a resume writes it once
    (docs/export.md#the-payloads-kept).
    ``login_ids`` may be any iterable of text (a list, a pandas or polars Series, a NumPy or
    pyarrow array); duplicates are fetched once, in any case (the service compares LoginIds so).

    An ``out`` that holds an export gets its next run (docs/export.md#runs): each run's rows go
    to a partition of their own, ``<kind>/<table>/run_date=<date>/run_id=<run>/``
    (``ExportReport.run`` names it); the snapshot tables get every login again, the transactions
    only what no earlier run wrote (asked from 7 days before each login's newest, ``DateFrom``),
    and ``full_refresh=True`` asks for them all again and starts each login's history over
    (docs/export.md#transactions-once); ``bf.read_latest`` reads the newest. A run asks for the
    export's kinds, ``days``, package or query and format as its first run did. ``resume=True``
    goes on with the last run instead, and is refused when it has nothing left to do.
    Results are written a batch at a time: at ``batch_logins`` logins, or every 5 seconds,
    whichever comes first, so a kill loses at most that much. Ctrl-C stops the run after writing
    what was fetched, then raises ``KeyboardInterrupt``.

    When the first ``max_consecutive_failures`` logins (20 by default; 0: never stop) all fail
    because the service could not be reached or refused the keys (``TransportError``,
    ``Unauthorized``, an answer that is not the service's, a refused token call), before any login
    came through, the run stops asking: the logins left are listed in ``_failures.jsonl`` as
    ``NotTried``, ``report.logins_not_tried`` counts them and ``report.outage`` says what failed
    (docs/export.md#an-unreachable-service). On a cluster each partition stops so by itself.

    One run at a time writes ``out`` (docs/export.md#one-run-at-a-time): while another holds it,
    a ``ConfigError`` naming ``out`` and that run, at once or once ``wait_lock`` seconds have
    passed waiting for it. An ``out`` another user owns, or one every user can write in without
    the sticky bit, is refused unless ``allow_shared_out=True``. A resume touches only the
    export's own files: a journal, run record or manifest that is damaged or names anything else
    is a ``ConfigError`` naming the file and the field, with nothing changed.

    ``scheduler`` (a ``distributed.Client``, or a scheduler's address such as
    ``"tcp://10.0.0.5:8786"``; ``pip install 'bankfeed[dask]'``) runs the same export on a Dask
    cluster (docs/scale-out.md): the logins are split into partitions of ``partition_size``, each
    partition's bulk call runs on a worker, which writes its part files straight to ``out``; ``out``
    must then be a path every worker shares, or an fsspec URL. The files, the resume and the report
    are those of a run in one process; a partition whose worker died is run again, with no login
    written twice.

    A login whose cached read is asked a security question is a failure of its own
    (:class:`bankfeed.ChallengeRequired`, its line in ``_failures.jsonl`` saying what the person
    must do), unless ``on_challenge`` answers it as the bulk calls take it (``bf.answers({...})``,
    or a function of the challenge, whose ``login_id`` names the login): without a handler nothing
    is answered (docs/export.md#logins-asked-a-question). On a cluster the handler goes to the
    workers with each partition, so it must pickle (a function of a module they import, or
    ``bf.answers``).

    Example::

        with bf.Client() as client:   # base_url, customer_id and the keys from BANKFEED_*
            report = bf.export(client, login_ids, "exports/2026-11-26", what=["investments", "accounts"])
        print(report)
        positions = pandas.read_parquet("exports/2026-11-26/investments/positions")
    """
    return _run(
        client,
        login_ids,
        out,
        what=what,
        format=format,
        concurrency=concurrency,
        resume=resume,
        wait_lock=wait_lock,
        allow_shared_out=allow_shared_out,
        progress=progress,
        days=days,
        batch_logins=batch_logins,
        raise_interrupt=True,
        scheduler=scheduler,
        partition_size=partition_size,
        on_challenge=on_challenge,
        csv_formulas=csv_formulas,
        money=money,
        max_consecutive_failures=max_consecutive_failures,
        full_refresh=full_refresh,
        keep_raw=keep_raw,
    )


def _run(
    client: Client,
    login_ids: Iterable[str],
    out: str | os.PathLike[str],
    *,
    what: Iterable[object] | str,
    format: str,
    concurrency: int,
    resume: bool,
    wait_lock: float = 0.0,
    allow_shared_out: bool = False,
    progress: bool,
    days: int | str | None,
    batch_logins: int,
    raise_interrupt: bool,
    scheduler: distributed.Client | str | None = None,
    partition_size: int = 1000,
    on_challenge: ChallengeHandler | None = None,
    csv_formulas: str = "escape",
    money: str | None = None,
    max_consecutive_failures: int = DEFAULT_MAX_CONSECUTIVE_FAILURES,
    full_refresh: bool = False,
    keep_raw: bool = False,
) -> ExportReport:
    """:func:`export`; with ``raise_interrupt`` false (the command), Ctrl-C ends the run with a
    report whose ``interrupted`` is true instead of raising."""
    if not isinstance(client, Client):
        raise TypeError(
            f"client must be a bf.Client, not {type(client).__name__}"
            + ("; await bf.aexport(...) exports with an AsyncClient" if isinstance(client, AsyncClient) else "")
        )
    _check_count("partition_size", partition_size)
    _check_keep_raw(keep_raw)
    if scheduler is not None:
        from bankfeed._export import cluster

        cluster.check_scheduler(scheduler)
        cluster.check_handler(on_challenge)
    run = _Export.plan(
        login_ids,
        out,
        what=what,
        fmt=format,
        concurrency=concurrency,
        resume=resume,
        wait_lock=wait_lock,
        allow_shared_out=allow_shared_out,
        progress=progress,
        days=days,
        batch_logins=batch_logins,
        client=client,
        on_challenge=on_challenge,
        csv_formulas=csv_formulas,
        money=money,
        max_consecutive_failures=max_consecutive_failures,
        full_refresh=full_refresh,
    )
    run.keep_raw = keep_raw
    try:
        # The bulk calls' tables hold money as the export does.
        client = with_money(client, run.money)
        return _write(client, run, scheduler, partition_size=partition_size, raise_interrupt=raise_interrupt)
    finally:
        # On every way out: the lock lives no longer than the run, also when the exception that
        # ended it is kept (a notebook keeps the last one).
        run.release()


def _write(
    client: Client,
    run: _Export,
    scheduler: distributed.Client | str | None,
    *,
    partition_size: int,
    raise_interrupt: bool,
) -> ExportReport:
    """Runs the planned export ``run``, in this process or on the cluster of ``scheduler``."""
    if scheduler is not None:
        from bankfeed._export import cluster

        return cluster.run(client, run, scheduler, partition_size=partition_size, raise_interrupt=raise_interrupt)
    run.start()
    try:
        for kind in run.kinds:
            writer = run.writer(kind)
            try:
                for chunk, request_ids, options in run.chunks(kind):
                    # Leaving the block when the run stops asking closes the call (outage.py).
                    with run.call(client, kind, chunk, request_ids, options) as results:
                        for login_id, result in results:
                            if run.take(writer, login_id, result):
                                writer.commit()
                            if run.stopping:
                                break
                    if run.stopping:
                        break
            finally:
                # What was gathered is complete: it is written, also when Ctrl-C ends the run.
                writer.commit()
            if run.stopping:
                run.leave_untried(kind)
                break
    except KeyboardInterrupt:
        report = run.finish(interrupted=True)
        if raise_interrupt:
            raise
        return report
    except BaseException:
        # A failure of the run itself (a full disk): the manifest says where it stopped.
        run.finish(interrupted=True)
        raise
    return run.finish(interrupted=False)


async def aexport(
    client: AsyncClient,
    login_ids: Iterable[str],
    out: str | os.PathLike[str],
    *,
    what: Iterable[object] | str = ("investments",),
    format: str = "parquet",
    concurrency: int = 32,
    resume: bool = False,
    wait_lock: float = 0.0,
    allow_shared_out: bool = False,
    progress: bool = False,
    days: int | str | None = None,
    batch_logins: int = 1000,
    on_challenge: AsyncChallengeHandler | None = None,
    csv_formulas: str = "escape",
    money: str | None = None,
    max_consecutive_failures: int = DEFAULT_MAX_CONSECUTIVE_FAILURES,
    full_refresh: bool = False,
    keep_raw: bool = False,
) -> ExportReport:
    """:func:`export` for an ``AsyncClient``: the same files, lock and report. The files are
    written in a worker thread, so that the event loop goes on meanwhile (waiting for the lock
    too); cancelling the task stops the run as Ctrl-C stops ``bf.export``, and stops a wait for
    the lock at once (the lock is then not taken). ``on_challenge`` takes what
    ``AsyncClient.investments_many`` takes (an ``async def`` handler runs on this event loop).

    Example::

        async with bf.AsyncClient() as client:
            report = await bf.aexport(client, login_ids, "exports/today")
    """
    import asyncio

    if not isinstance(client, AsyncClient):
        raise TypeError(f"client must be a bf.AsyncClient, not {type(client).__name__}; bf.export takes a bf.Client")
    _check_keep_raw(keep_raw)
    # In a thread of its own, whose wait for the lock a cancellation stops (planning.py).
    run = await plan_stoppable(
        _Export.release,
        _Export.plan,
        login_ids,
        out,
        what=what,
        fmt=format,
        concurrency=concurrency,
        resume=resume,
        wait_lock=wait_lock,
        allow_shared_out=allow_shared_out,
        progress=progress,
        days=days,
        batch_logins=batch_logins,
        client=client,
        on_challenge=on_challenge,
        csv_formulas=csv_formulas,
        money=money,
        max_consecutive_failures=max_consecutive_failures,
        full_refresh=full_refresh,
    )
    run.keep_raw = keep_raw
    try:
        return await _awrite(with_money(client, run.money), run)
    finally:
        # Off the event loop (an fsspec lock is an object to remove), and done when the task is
        # cancelled meanwhile.
        await asyncio.shield(asyncio.to_thread(run.release))


async def _awrite(client: AsyncClient, run: _Export) -> ExportReport:
    """Runs the planned export ``run`` on this event loop."""
    import asyncio

    # Writes the run's record: not on the event loop, like every write of the export.
    await asyncio.to_thread(run.start)
    try:
        for kind in run.kinds:
            writer = run.writer(kind)
            try:
                for chunk, request_ids, options in run.chunks(kind):
                    async with run.call(client, kind, chunk, request_ids, options) as results:
                        async for login_id, result in results:
                            if run.take(writer, login_id, result):
                                await asyncio.to_thread(writer.commit)
                            if run.stopping:
                                break
                    if run.stopping:
                        break
            finally:
                await asyncio.shield(asyncio.to_thread(writer.commit))
            if run.stopping:
                await asyncio.to_thread(run.leave_untried, kind)
                break
    except BaseException:
        await asyncio.shield(asyncio.to_thread(run.finish, True))
        raise
    return await asyncio.to_thread(run.finish, False)
