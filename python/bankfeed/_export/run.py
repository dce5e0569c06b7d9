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
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bankfeed._export.formulas import check_csv_formulas
from bankfeed._export.kinds import KINDS, Kind, check_money, check_what, parse_what, with_money
from bankfeed._export.location import described, shown
from bankfeed._export.lock import LOCK, ExportLock, take_lock
from bankfeed._export.logins import LoginIdList, fold, unique
from bankfeed._export.progress import ExportProgress
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
    write_run,
    write_summary,
)
from bankfeed._export.storage import Storage
from bankfeed._export.unknown import UnknownFields
from bankfeed._export.writer import JOURNAL, KindWriter, Limits, write_empty
from bankfeed._native import AsyncClient, Client, __version__
from bankfeed._types import AsyncChallengeHandler, ChallengeHandler
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
    written until then is complete, and the manifest says so. ``out`` is the output directory as
    it is shown everywhere: a URL without its user, password and query (docs/export.md#where-it-writes).

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
    #: Per kind, the fields of this run's payloads that no table reads: path to the number of
    #: objects that carried it (docs/export.md#fields-the-service-adds).
    unknown_fields: Mapping[str, Mapping[str, int]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Whether every login asked for was written (none failed, and the run was not stopped)."""
        return self.logins_failed == 0 and not self.interrupted

    def _repr_html_(self) -> str:
        """The notebook view: the output, the counts, the rows per table, the failures by class."""
        return export_report_html(self)

    def __repr__(self) -> str:
        rows = sum(self.written.values())
        state = ", interrupted" if self.interrupted else ""
        return (
            f"ExportReport(out={shown(self.out)!r}, logins_written={self.logins_written}, "
            f"logins_failed={self.logins_failed}, logins_skipped={self.logins_skipped}, rows={rows}, "
            f"elapsed={self.elapsed:.1f}{state})"
        )


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
    run_id: str = field(default_factory=lambda: time.strftime("%Y%m%dT%H%M%S") + "-" + secrets.token_hex(3))
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
        try:
            export._check_output(resume)
            # Not asked, and no earlier run of the export recorded one: the client's.
            export.money = export.money or client.money
            remove_leftovers(storage)
            # Every kind of the export checked before any is repaired: a damaged or planted entry
            # stops the run with nothing renamed or deleted (records.py).
            names = {*export.kinds_before, *(kind.name for kind in kinds)}
            journals = {name: read_journal(storage, name, fmt) for name in names}
            states = [read_state(storage, kind.name, fmt, entries=journals.pop(kind.name)) for kind in kinds]
            del journals
            export.asked = _as_written(export.asked, states)
            for kind, state in zip(kinds, states, strict=True):
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
            export.skipped_logins = sum(1 for login in export.asked if all(state.has(login) for state in states))
        except BaseException:
            export.release()
            raise
        return export

    def release(self) -> None:
        """Lets the next run write the directory (``lock.py``); nothing after the first call."""
        if self.lock is not None:
            self.lock.release()

    def _check_output(self, resume: bool) -> None:
        storage = self.storage
        try:
            # Made now, before anything is fetched: an output that cannot be one is a usage error.
            storage.makedirs(storage.root)
            storage.makedirs(storage.path(JOURNAL))
            check_directories(storage)
            # One run at a time, from here on: nothing in the directory was read yet (lock.py).
            self.lock = take_lock(storage, self.run_id, wait=self.wait_lock)
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
        if not resume and present:
            raise _config_error(
                "out",
                f"already holds an export ({storage.shown}: {', '.join(present)}): pass resume=True (--resume) to "
                "go on with it, or write to an empty directory",
            )
        if resume:
            self._check_asked_as_before(previous_manifest(storage), read_runs(storage))

    def _check_asked_as_before(self, previous: Mapping[str, Any] | None, runs: list[dict[str, Any]]) -> None:
        """A resume goes on with the export as it was asked: the same format, and each kind asked
        before with the same options (days, package, query), or one table would hold rows of two
        kinds. Earlier runs' records say how (a killed run's too), and a manifest written before
        runs had records says what it can."""
        shown = self.storage.shown
        before_formats = [record.get("format") for record in runs] + [(previous or {}).get("format")]
        before_format = next((fmt for fmt in reversed(before_formats) if fmt), None)
        if before_format not in (None, self.fmt):
            raise _config_error(
                "format",
                f"must be the format the export in {shown} was written in, {before_format!r}, to resume it; got "
                f"{self.fmt!r}",
            )
        self._check_money_as_before(previous, runs)
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
                f"must ask for {kind.name} as the export in {shown} did, {was}, to resume it; got {now}: one table "
                "would hold rows of both. Export these to another directory",
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
            self.progress = ExportProgress(self.total)

    def record(self, **ended: Any) -> dict[str, Any]:
        """This run's record (``state.write_run``): how it was asked, and ``ended`` once it ended."""
        return {
            "run": self.run_id,
            "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.started)),
            # The order of runs started within one second.
            "started": self.started,
            "finished_at": None,
            "format": self.fmt,
            "money": self.money,
            "kinds": self.kinds_asked(),
            "logins_asked": len(self.asked),
            "logins_fetched": None,
            "logins_failed": None,
            "interrupted": None,
            **ended,
        }

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
            csv_formulas=self.csv_formulas,
            keep_raw=self.run_id if self.keep_raw else None,
        )
        self.writers[kind.name] = writer
        return writer

    def chunks(self, kind: Kind, size: int = _CHUNK) -> Iterator[tuple[list[Any], dict[str, str]]]:
        """The bulk calls of ``kind``: its logins in chunks of ``size`` (the partitions of a cluster
        run), each with the RequestIds to resume; made one at a time, as they are run. Then the
        logins :meth:`take` found resumed with a RequestId whose session had expired since (a
        resume the next night), started over with no RequestId rather than failed once more."""
        resumes = self.resumes[kind.name]
        for chunk in self.todo[kind.name].slices(size):
            yield chunk, {login: resumes[fold(login)] for login in chunk if fold(login) in resumes}
        expired = self.expired.pop(kind.name, [])
        for start in range(0, len(expired), size):
            yield expired[start : start + size], {}

    def call(self, client: Any, kind: Kind, chunk: list[Any], request_ids: Mapping[str, str]) -> Any:
        return kind.bulk_call(client)(
            chunk,
            concurrency=self.concurrency,
            request_ids=request_ids or None,
            on_challenge=self.on_challenge,
            **kind.options,
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
        else:
            writer.add(login_id, result, time.time_ns() // 1000)
            self.unknown.add(writer.kind.name, result)
        self.done += 1
        if self.progress is not None:
            self.progress.update(self.done, self.failed, sum(w.gathered for w in self.writers.values()))
        return writer.due()

    def absorb(
        self, done: int, written: int, rows: Mapping[str, int], failures: list[tuple[Any, BaseException]]
    ) -> None:
        """Counts what a partition of a cluster run did: ``done`` logins, of which ``written``
        were, ``rows`` per ``"kind/table"``, and the ``failures``."""
        self.done += done
        self.failed += len(failures)
        self.failures.extend(failures)
        for name, count in rows.items():
            self.remote_rows[name] = self.remote_rows.get(name, 0) + count
        if self.progress is not None:
            self.progress.update(self.done, self.failed, sum(self.remote_rows.values()))

    def finish(self, interrupted: bool, repair: bool = True) -> ExportReport:
        """Writes the manifest and the failures; the report of this run. ``repair`` false: the
        journal is read as it stands, since workers of a cluster run may still be committing."""
        if self.progress is not None:
            self.progress.close(interrupted)
        _release_arrow_memory()
        for kind in self.kinds:
            for table in kind.tables:
                directory = self.storage.path(kind.name, table)
                if not any(name.startswith("part-") for name in self.storage.listdir(directory)):
                    self.storage.makedirs(directory)
                    write_empty(
                        self.storage, kind, table, self.fmt, f"{self.run_id}-000000", money=self.money or "float"
                    )
        # The journal is the truth of the directory (earlier runs, a cluster's partitions), for
        # this run's kinds and those of earlier runs alike.
        kinds_asked: dict[str, Mapping[str, Any]] = {**self.kinds_before, **self.kinds_asked()}
        states: dict[str, KindState] = {
            name: read_state(self.storage, name, self.fmt, repair=repair) for name in kinds_asked
        }
        run = self.record(
            finished_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            logins_fetched=self.done,
            logins_failed=self.failed,
            interrupted=interrupted,
            unknown_fields=self.unknown.as_record(),
        )
        write_run(self.storage, run)
        write_summary(
            self.storage,
            states,
            fmt=self.fmt,
            version=__version__,
            run=run,
            kinds_asked=kinds_asked,
            previous=previous_manifest(self.storage),
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
    keep_raw: bool = False,
) -> ExportReport:
    """Fetches every login's data of the kinds in ``what`` and writes it under ``out``, one
    dataset per table, as it comes (docs/export.md).

    ``what`` holds ``"investments"``, ``"accounts"`` (account detail with its transactions;
    ``days=90`` or ``365``) and ``"attributes:<package>"`` (or ``("attributes", {"attributes":
    {group: [names]}, ...})``). ``out`` is a directory, or an fsspec URL when fsspec is installed.
    The layout: ``out/<kind>/<table>/part-*.parquet`` (``format="csv"`` writes CSV: a text cell
    that a spreadsheet would run as a formula, one starting with ``=``, ``+``, ``-``, ``@``, a tab
    or a carriage return, is written with a leading ``'``, unless ``csv_formulas="raw"``; numbers
    are never changed), each row starting with ``login_id``, ``request_id`` and ``fetched_at``;
    ``out/_failures.jsonl`` lists the logins that failed, ``out/_manifest.json`` what was asked and
    written. A login is written in a table once or not at all, whatever stops the run (an output
    that cannot be written, a full disk, raises its ``OSError``); ``resume=True`` goes on with an export
    that was stopped or had failures: logins already written are skipped, with no request sent,
    failed ones are tried again, and one that was still pending polls its RequestId again; a
    resume must ask for each kind as the export did (the same ``days``, package or query).
    ``money`` (``"float"`` or ``"decimal"``) is how every amount, balance, value, price and
    quantity column is written: float64, or an exact decimal128 read from the payload's digits
    (docs/export.md#money). The export's first run fixes it: left out, a later run goes on with
    the export's, and a new export takes the client's ``money`` option (float unless set); a run
    asking for another is a ``ConfigError`` naming ``money``.
    ``keep_raw=True`` also keeps each login's payload of each kind, as the service sent it, in the
    table ``out/_raw/<kind>`` (``login_id``, ``request_id``, ``fetched_at``, ``run_id``,
    ``payload``: JSON text), written and committed with the login's rows, so a resume writes it once
    (docs/export.md#the-payloads-kept).
    ``login_ids`` may be any iterable of text (a list, a pandas or polars Series, a NumPy or
    pyarrow array); duplicates are fetched once, in any case (the service compares LoginIds so).
    Results are written a batch at a time: at ``batch_logins`` logins, or every 5 seconds,
    whichever comes first, so a kill loses at most that much. Ctrl-C stops the run after writing
    what was fetched, then raises ``KeyboardInterrupt``.

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
    if scheduler is not None and keep_raw:
        raise _config_error("keep_raw", "is not taken by a cluster run (scheduler=) yet: export without it")
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
                for chunk, request_ids in run.chunks(kind):
                    with run.call(client, kind, chunk, request_ids) as results:
                        for login_id, result in results:
                            if run.take(writer, login_id, result):
                                writer.commit()
            finally:
                # What was gathered is complete: it is written, also when Ctrl-C ends the run.
                writer.commit()
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
    keep_raw: bool = False,
) -> ExportReport:
    """:func:`export` for an ``AsyncClient``: the same files, lock and report. The files are
    written in a worker thread, so that the event loop goes on meanwhile (waiting for the lock
    too); cancelling the task stops the run as Ctrl-C stops ``bf.export``. ``on_challenge`` takes
    what ``AsyncClient.investments_many`` takes (an ``async def`` handler runs on this event loop).

    Example::

        async with bf.AsyncClient() as client:
            report = await bf.aexport(client, login_ids, "exports/today")
    """
    import asyncio

    if not isinstance(client, AsyncClient):
        raise TypeError(f"client must be a bf.AsyncClient, not {type(client).__name__}; bf.export takes a bf.Client")
    _check_keep_raw(keep_raw)
    run = await asyncio.to_thread(
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
                for chunk, request_ids in run.chunks(kind):
                    async with run.call(client, kind, chunk, request_ids) as results:
                        async for login_id, result in results:
                            if run.take(writer, login_id, result):
                                await asyncio.to_thread(writer.commit)
            finally:
                await asyncio.shield(asyncio.to_thread(writer.commit))
    except BaseException:
        await asyncio.shield(asyncio.to_thread(run.finish, True))
        raise
    return await asyncio.to_thread(run.finish, False)
