"""One export, planned (docs/export.md): what to fetch for each kind, what an earlier run of the
output left (``resume.py`` checks it), which run this process writes, and where each result
goes. ``run.py`` plans an export here, runs it, counts what comes (``tally.py``) and ends it
(``finish.py``).
"""

from __future__ import annotations

import errno
import os
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from bankfeed._export.cursor_store import CursorStore
from bankfeed._export.events import Events, states
from bankfeed._export.kinds import EVENT_KEYS, Kind, check_what, options_json
from bankfeed._export.location import described
from bankfeed._export.logins import LOGINS_PER_CALL, LoginIdList, fold, unique
from bankfeed._export.ondisk.journal import Journal, read_journal
from bankfeed._export.ondisk.layout import new_run
from bankfeed._export.ondisk.run_records import write_run
from bankfeed._export.options import ExportOptions
from bankfeed._export.resume import Before, check_output, fixed
from bankfeed._export.state import KindState, read_state, remove_leftovers, remove_uncommitted, scan_state
from bankfeed._export.storage import Storage
from bankfeed._export.writer import KindWriter, Limits
from bankfeed._native import AsyncClient, Client
from bankfeed.errors import SessionError, _config_error

__all__ = ["ExportPlan"]


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


@dataclass
class ExportPlan:
    """One export, planned: the kinds, the output, what each kind has left, the run written."""

    options: ExportOptions
    storage: Storage
    #: Compact: held for the whole run (``logins.py`` says why).
    asked: LoginIdList
    #: What the output held before this run (``resume.py``); None until :meth:`make` has looked.
    before: Before | None = None
    #: This process's name: its record, its lock, the start of its batches' names.
    run_id: str = field(default_factory=new_run)
    started: float = field(default_factory=time.time)
    clock: float = field(default_factory=time.monotonic)
    #: How the tables hold money (docs/export.md#money): fixed by the export's first run.
    money: str | None = None
    #: Logins an earlier run wrote in every kind: nothing is fetched for them.
    skipped_logins: int = 0
    todo: dict[str, LoginIdList] = field(default_factory=dict)
    resumes: dict[str, dict[str, str]] = field(default_factory=dict)
    #: Per kind, the logins resumed whose session had expired: see :meth:`chunks`.
    expired: dict[str, list[Any]] = field(default_factory=dict)
    #: Per kind with a table of transactions, what earlier runs wrote of it (``events.py``).
    events: dict[str, Events] = field(default_factory=dict)
    #: Where each kind's results go, once it began (:meth:`writer`).
    writers: dict[str, KindWriter] = field(default_factory=dict)
    #: Per kind, the journal entries the start read and checked, by name: when each was
    #: committed, and its run. The end reads none of them again to order it (``finish.py``).
    checked: dict[str, dict[str, tuple[float, str]]] = field(default_factory=dict)

    @classmethod
    def make(
        cls,
        login_ids: object,
        out: str | os.PathLike[str],
        options: ExportOptions,
        *,
        client: Client | AsyncClient,
        stop: threading.Event | None = None,
    ) -> ExportPlan:
        """The plan of an export of ``login_ids`` to ``out``, its directory locked (until
        :meth:`release`). ``stop``: ends a wait for the lock (``planning.py``)."""
        kinds = list(options.kinds)
        check_what(kinds, client, on_challenge=options.on_challenge)
        # A directory another user could steer is refused as it is made or found (storage.py).
        storage = Storage(out, refuse_shared=not options.allow_shared_out)
        # The command line's LoginIds come as a LoginIdList already (each once): not copied.
        asked = login_ids if isinstance(login_ids, LoginIdList) else LoginIdList(unique(login_ids))
        plan = cls(options, storage, asked)
        fmt, full_refresh = options.fmt, options.full_refresh
        try:
            plan.before = before = check_output(
                storage,
                plan.run_id,
                kinds=kinds,
                fmt=fmt,
                money=options.money,
                csv_formulas=options.csv_formulas,
                resume=options.resume,
                wait_lock=options.wait_lock,
                stop=stop,
            )
            # Named after every earlier process (``Before.process_name``); the lock, taken before
            # the earlier ones could be read, keeps the name it was taken with.
            plan.run_id = before.process_name
            # Not asked, and no earlier run of the export recorded one: the client's.
            plan.money = before.money or client.money
            remove_leftovers(storage)
            # Every kind of the export checked before any is repaired: a damaged or planted entry
            # stops the run with nothing renamed or deleted (ondisk/checks.py).
            names = {*before.kinds_before, *(kind.name for kind in kinds)}
            journals = {
                name: read_journal(storage, name, fmt) for name in sorted(names - {kind.name for kind in kinds})
            }
            # What this run wrote already: nothing, but for a resume.
            run = None if before.resumes_unrecorded else plan.partition_run
            scanned: list[tuple[Journal, KindState | None]] = []
            for kind in kinds:
                table = next((table for name, table in EVENT_KEYS if name == kind.name), None)
                # Where each login's transactions stand, for this run to go on from: read in the
                # same pass over the journal as its check and the state (``state.scan_state``);
                # not at all when every login starts its history over.
                cursors, apply = states(kind.name) if table is not None and not full_refresh else ({}, None)
                if table is not None:
                    plan.events[kind.name] = Events(kind.name, table, cursors, full_refresh=full_refresh)
                scanned.append(scan_state(storage, kind.name, fmt, run=run, each=apply))
            # Every kind checked: what a kill interrupted is finished now. In the common case the
            # state was counted as the journal was checked; a repair to make reads it again.
            states_of_kinds = []
            for kind, (entries, scanned_state) in zip(kinds, scanned, strict=True):
                state = scanned_state
                if state is None:
                    events = plan.events.get(kind.name)
                    apply = None
                    if events is not None and isinstance(events.previous, CursorStore):
                        events.previous.close()
                        cursors, apply = states(kind.name)
                        plan.events[kind.name] = Events(kind.name, events.table, cursors, full_refresh=full_refresh)
                    state = read_state(storage, kind.name, fmt, run=run, entries=entries, each=apply)
                else:
                    remove_uncommitted(storage, kind.name)
                plan.checked[kind.name] = entries.known()
                states_of_kinds.append(state)
            plan.checked.update((name, entries.known()) for name, entries in journals.items())
            del journals, scanned
            plan.asked = _as_written(plan.asked, states_of_kinds)
            for kind, state in zip(kinds, states_of_kinds, strict=True):
                # All of them, not a copy, when nothing was written before (no resume).
                plan.todo[kind.name] = (
                    LoginIdList(login for login in plan.asked if not state.has(login)) if state.written else plan.asked
                )
                # A login whose data was still pending polls its RequestId where it stood (by its
                # folded LoginId: given in another case this time, it is the same login).
                plan.resumes[kind.name] = {login: record["request_id"] for login, record in state.pending.items()}
            plan.skipped_logins = sum(1 for login in plan.asked if all(state.has(login) for state in states_of_kinds))
            if before.resumed_run is not None and before.resumed_ended and plan.total == 0:
                raise _config_error(
                    "resume",
                    f"has nothing to resume: the last run of {storage.shown}, {before.resumed_run}, has every login "
                    "asked written in every kind asked. Without resume=True (--resume) the export's next run starts",
                )
        except BaseException:
            plan.release()
            raise
        return plan

    @property
    def kinds(self) -> tuple[Kind, ...]:
        return self.options.kinds

    @property
    def fmt(self) -> str:
        return self.options.fmt

    @property
    def limits(self) -> Limits:
        """When a batch is committed (``writer.py``)."""
        return Limits(logins=self.options.batch_logins)

    @property
    def kinds_before(self) -> Mapping[str, Mapping[str, Any]]:
        """The kinds earlier runs of this export asked for, and how: the manifest describes them too."""
        return self.before.kinds_before if self.before is not None else {}

    @property
    def partition_run(self) -> str:
        """The run whose partition this process writes (docs/export.md#runs)."""
        if self.before is None:
            return self.run_id
        return self.before.resumed_run or self.before.new_run or self.run_id

    @property
    def total(self) -> int:
        return sum(len(todo) for todo in self.todo.values())

    def release(self) -> None:
        """Lets the next run write the directory (``lock.py``); nothing after the first call. The
        on-disk states of the transactions' cursors go with it (``cursor_store.py``)."""
        for events in self.events.values():
            if isinstance(events.previous, CursorStore):
                events.previous.close()
        if self.before is not None:
            self.before.lock.release()

    def start(self) -> None:
        """Writes this run's record: the run's first write, before anything is fetched."""
        try:
            write_run(self.storage, self.record())
        except OSError as exc:
            # An output it may not write (an object store's bucket, which only writing tells) is a
            # usage error, as a local one is found by ``resume.check_output``. A full disk stays
            # what it is (docs/export.md#exit-status).
            if exc.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
                raise
            raise _config_error(
                "out", f"cannot be written: {described(exc, self.storage.given)}: {self.storage.shown}"
            ) from None

    def record(self, **ended: Any) -> dict[str, Any]:
        """This run's record (``run_records.write_run``): how it was asked, and ``ended`` once it ended."""
        return {
            "run": self.run_id,
            "part_of": self.partition_run,
            "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.started)),
            # The order of runs started within one second.
            "started": self.started,
            "finished_at": None,
            **fixed(self.fmt),
            "money": self.money,
            # How its CSV cells were written (a later run must write them the same way); null for
            # Parquet, which holds every text as it came.
            "csv_formulas": self.options.csv_formulas if self.fmt == "csv" else None,
            "full_refresh": self.options.full_refresh,
            "kinds": self.kinds_asked(),
            "logins_asked": len(self.asked),
            "logins_fetched": None,
            "logins_failed": None,
            "interrupted": None,
            **ended,
        }

    def kinds_asked(self) -> dict[str, dict[str, Any]]:
        """How this run asks for each of its kinds: ``what`` and ``options``, as records keep them."""
        return {kind.name: {"what": kind.label, "options": options_json(kind.options)} for kind in self.kinds}

    def writer(self, kind: Kind) -> KindWriter:
        """Where the results of ``kind`` go in this process (``writer.py``)."""
        writer = KindWriter(
            self.storage,
            kind,
            self.fmt,
            self.run_id,
            self.limits,
            run=self.partition_run,
            csv_formulas=self.options.csv_formulas,
            events=self.events.get(kind.name),
            keep_raw=self.options.keep_raw,
        )
        self.writers[kind.name] = writer
        return writer

    def chunks(
        self, kind: Kind, size: int = LOGINS_PER_CALL
    ) -> Iterator[tuple[list[Any], dict[str, str], dict[str, Any]]]:
        """The bulk calls of ``kind``: its logins in chunks of ``size`` (the partitions of a cluster
        run), each with the RequestIds to resume and the options it adds to the kind's (the
        ``date_from`` of logins whose transactions an earlier run wrote: the logins are grouped by
        it, ``events.py``); made one at a time, as they are run. Then the logins
        :meth:`started_over` found resumed with a RequestId whose session had expired since (a
        resume the next night), started over with no RequestId rather than failed once more."""
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
        """The bulk call of one chunk (:meth:`chunks`)."""
        return kind.bulk_call(client)(
            chunk,
            concurrency=self.options.concurrency,
            request_ids=request_ids or None,
            on_challenge=self.options.on_challenge,
            **kind.options,
            **options,
        )

    def started_over(self, kind: Kind, login_id: Any, result: object) -> bool:
        """Whether ``result`` is of a login resumed whose session expired meanwhile: then it is not
        a failure, but fetched again by :meth:`chunks` (once: it is no longer resumed)."""
        resumes = self.resumes[kind.name]
        if isinstance(result, SessionError) and resumes.pop(fold(login_id), None) is not None:
            self.expired.setdefault(kind.name, []).append(login_id)
            return True
        return False
