"""``bf.export(..., scheduler=...)`` and ``bankfeed export --scheduler``: the export of
``run.py`` on a Dask cluster (docs/scale-out.md#export-on-a-dask-cluster).

The driver plans as a run in one process does (what an earlier run wrote, which logins are left
per kind), splits each kind's logins into partitions and submits one task per (kind, partition).
A task runs on a worker: the kind's bulk call over its partition, written by the same
:class:`KindWriter` as in one process (the payloads too, with ``keep_raw``), straight to the
output, with batch names that start with the run and the partition. The driver gathers what each
partition wrote and failed, the fields no table reads that it counted, and the logins it left not
tried, then writes ``_failures.jsonl`` and the manifest once.

A worker that dies mid-partition leaves committed batches and perhaps temporary files. The
scheduler runs the partition again; the new attempt first reads the journal of its own
partition (``read_state`` with the partition's prefix): committed batches are kept and their
logins skipped, temporary files deleted. So no login is written twice
(docs/scale-out.md#a-worker-that-dies).
"""

from __future__ import annotations

import contextlib
import secrets
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bankfeed._export.events import Events
from bankfeed._export.finish import finish
from bankfeed._export.kinds import Kind
from bankfeed._export.ondisk.layout import CLUSTER_MARKER, JOURNAL
from bankfeed._export.outage import DEFAULT_MAX_CONSECUTIVE_FAILURES, StartBreaker
from bankfeed._export.state import read_state
from bankfeed._export.storage import Storage
from bankfeed._export.unknown import UnknownFields
from bankfeed._export.writer import KindWriter, Limits
from bankfeed.errors import ClientClosed, SessionError, _config_error

if TYPE_CHECKING:
    import distributed

    from bankfeed._export.plan import ExportPlan
    from bankfeed._export.report import ExportReport
    from bankfeed._export.tally import Tally
    from bankfeed._native import Client

__all__ = ["run"]

#: How long the driver waits, after Ctrl-C, for the running partitions to commit what they
#: gathered and return; a second Ctrl-C stops waiting.
_GRACE = 30.0

#: How often a running partition looks whether the driver asked it to stop (seconds).
_WATCH = 0.5


def _connect(scheduler: object) -> tuple[distributed.Client, bool]:
    """The ``distributed.Client`` of ``scheduler``, and whether it is ours to close."""
    import distributed

    if isinstance(scheduler, distributed.Client):
        return scheduler, False
    try:
        # Not the process's default client: the caller's own Dask work goes where it went before.
        return distributed.Client(scheduler, set_as_default=False), True
    except (OSError, TimeoutError, ValueError, TypeError) as exc:
        raise _config_error(
            "scheduler",
            f"must be the address of a running Dask scheduler (tcp://host:8786) or a distributed.Client; "
            f"{scheduler!r} could not be reached: {type(exc).__name__}: {exc}",
        ) from None


@dataclass(frozen=True)
class _Partition:
    """One task: a kind's bulk call over some logins, written under ``out``. What travels to the
    worker, with the client (as the client object: docs/scale-out.md#what-travels-to-the-workers)."""

    out: str
    kind: Kind
    fmt: str
    run_id: str
    index: int
    logins: tuple[Any, ...]
    request_ids: Mapping[str, str]
    concurrency: int
    limits: Limits
    #: The name of the driver's stop event, and the file that proves the worker sees ``out``.
    stop: str
    marker: str
    #: The run whose partition of each table the files go to (``layout.partition``).
    run: str = ""
    #: What answers a login's challenges, as in one process (``bf.export``'s ``on_challenge``).
    on_challenge: Any = None
    #: How CSV files write a text cell a spreadsheet would run (``formulas.py``).
    csv_formulas: str = "escape"
    #: Failures in a row at the partition's start that stop it asking (``outage.py``).
    max_consecutive_failures: int = DEFAULT_MAX_CONSECUTIVE_FAILURES
    #: What the partition's bulk call adds to the kind's options (``date_from``: ``run.chunks``).
    options: Mapping[str, Any] = field(default_factory=dict)
    #: What earlier runs wrote of the kind's transactions, of this partition's logins (``events.py``).
    events: Events | None = None
    #: Whether each login's payload is kept in ``_raw/<kind>``, as in one process (``raw.py``).
    keep_raw: bool = False

    @property
    def prefix(self) -> str:
        """The start of the batch names of every attempt of this partition."""
        return f"{self.run_id}-p{self.index:06d}-"

    @property
    def key(self) -> str:
        """The task's key on the cluster (its name on the dashboard): the kind and the partition."""
        return f"bankfeed-export-{self.kind.name}-p{self.index:06d}-{self.run_id}"

    def __repr__(self) -> str:
        # What a worker's log shows of a failed task: short, and nothing but names and counts.
        return f"<bankfeed export partition {self.kind.name} p{self.index:06d}: {len(self.logins)} logins>"


@dataclass
class _Done:
    """What a partition did, sent back to the driver: no rows, only logins, counts and failures."""

    kind: str
    index: int
    #: Logins handled (written or failed); fewer than the partition's when it was stopped.
    done: int = 0
    #: How many logins any attempt of this partition wrote in this run.
    written: int = 0
    rows: dict[str, int] = field(default_factory=dict)
    failures: list[tuple[Any, BaseException]] = field(default_factory=list)
    #: What the partition's start looked like (``outage.py``), and the logins it listed as not
    #: tried, as its task holds them: the driver counts each login once over every kind from them.
    breaker: StartBreaker = field(default_factory=lambda: StartBreaker(0))
    not_tried: list[Any] = field(default_factory=list)
    #: The fields of the payloads this attempt fetched that no table reads (``unknown.py``).
    unknown_fields: dict[str, int] = field(default_factory=dict)


class _StopWatch:
    """The driver's request to stop (a ``distributed.Event``), seen from a partition: looked at
    once before the partition starts, then watched by a thread that closes the bulk call."""

    def __init__(self, name: str) -> None:
        import distributed

        self._event = distributed.Event(name)
        self._finished = threading.Event()
        self.stopping = False

    def requested(self) -> bool:
        self.stopping = bool(self._event.is_set())
        return self.stopping

    def watch(self, close: Callable[[], None]) -> None:
        """Calls ``close`` when the driver asks to stop, from a thread of its own: the bulk call
        may be waiting for a login for minutes, and its ``close()`` ends that wait at once."""

        def watching() -> None:
            # Short looks rather than a long `wait` on the scheduler: a wait still open when the
            # worker or the scheduler closes is logged there as an error.
            while not self._finished.wait(_WATCH):
                try:
                    if self._event.is_set():
                        self.stopping = True
                        close()
                        return
                except Exception:
                    return  # the scheduler is gone: the worker is going too

        threading.Thread(target=watching, name="bankfeed-export-stop", daemon=True).start()

    def finished(self) -> None:
        self._finished.set()


def _run_partition(task: _Partition, client: Client) -> _Done:
    """Runs on a worker: the partition's logins not yet written by an earlier attempt, fetched and
    written a batch at a time."""
    stop = _StopWatch(task.stop)
    done = _Done(task.kind.name, task.index, breaker=StartBreaker(task.max_consecutive_failures))
    breaker = done.breaker
    if stop.requested():
        return done
    storage = Storage(task.out)
    if not storage.exists(task.marker):
        # A local path on a worker of another machine is that machine's own directory: writing
        # there would lose the files silently (docs/scale-out.md#where-the-workers-write).
        raise _config_error(
            "out",
            f"is not reachable from the Dask worker on {socket.gethostname()}: {storage.shown} is not the driver's "
            "output there; give a path every worker shares, or an fsspec URL (s3://, gs://)",
        )
    kind = task.kind
    # An earlier attempt of this partition died: keep what it committed, delete what it did not.
    state = read_state(storage, kind.name, task.fmt, prefix=task.prefix)
    todo = [login for login in task.logins if not state.has(login)]
    left = set(todo)
    request_ids = {login: rid for login, rid in task.request_ids.items() if login in left}
    for record in state.pending.values():
        # Still pending when its worker died: polled where it stood, as a resume does (this
        # partition's own records: the LoginIds as its task holds them).
        login = record.get("login_id")
        if (
            record.get("error") == "PendingTimeout"
            and isinstance(login, str)
            and isinstance(record.get("request_id"), str)
            and login in left
        ):
            request_ids[login] = record["request_id"]
    # A name of its own per attempt: two attempts never write the same file.
    writer = KindWriter(
        storage,
        kind,
        task.fmt,
        task.prefix + secrets.token_hex(3),
        task.limits,
        run=task.run or task.run_id,
        csv_formulas=task.csv_formulas,
        events=task.events,
        keep_raw=task.keep_raw,
    )
    unknown = UnknownFields()
    try:
        # The partition's bulk call; then, once, one for the logins resumed with a RequestId whose
        # session had expired meanwhile, started over (docs/export.md#resume).
        calls: list[tuple[list[Any], dict[str, str]]] = [(todo, request_ids)]
        tried: set[Any] = set()
        while calls:
            logins, resume = calls.pop()
            expired: list[Any] = []
            if not logins:
                continue
            call = kind.bulk_call(client)(
                logins,
                concurrency=task.concurrency,
                request_ids=resume or None,
                on_challenge=task.on_challenge,
                **kind.options,
                **task.options,
            )
            with call as results:
                stop.watch(results.close)
                for login_id, result in results:
                    if isinstance(result, BaseException):
                        if stop.stopping and isinstance(result, ClientClosed):
                            continue  # not done: stopped by the driver, not failed
                        if isinstance(result, SessionError) and login_id in resume:
                            expired.append(login_id)
                            continue
                        writer.fail(login_id if isinstance(login_id, str) else repr(login_id), result)
                        done.failures.append((login_id, result))
                    else:
                        writer.add(login_id, result, time.time_ns() // 1000)
                        unknown.add(kind.name, result)
                    if breaker.armed:
                        tried.add(login_id)
                    done.done += 1
                    if writer.due():
                        writer.commit()
                    if breaker.observe(result):
                        break  # the service is not there: the partition stops asking (outage.py)
            if breaker.tripped:
                error = breaker.not_tried()
                for login in todo:
                    if login not in tried:
                        writer.fail(login if isinstance(login, str) else repr(login), error)
                        done.not_tried.append(login)
                break
            if expired and not stop.stopping:  # a driver's stop ends the partition here too
                calls.append((expired, {}))
    finally:
        stop.finished()
        writer.commit()
    done.done += len(state.written)
    done.written = len(state.written) + writer.logins_written
    done.rows = {f"{kind.name}/{table}": state.rows.get(table, 0) + writer.rows.get(table, 0) for table in kind.tables}
    done.unknown_fields = unknown.by_kind.get(kind.name, {})
    return done


def _partitions(export: ExportPlan, size: int, stop: str, marker: str) -> list[_Partition]:
    # A URL as given: its credentials are the workers' way in (never shown: ``location.py``).
    location = export.storage.root if export.storage.is_local else export.storage.given
    tasks = []
    for kind in export.kinds:
        events = export.events.get(kind.name)
        for index, (logins, request_ids, options) in enumerate(export.chunks(kind, size)):
            tasks.append(
                _Partition(
                    location,
                    kind,
                    export.fmt,
                    export.run_id,
                    index,
                    tuple(logins),
                    request_ids,
                    export.options.concurrency,
                    export.limits,
                    stop,
                    marker,
                    export.partition_run,
                    export.options.on_challenge,
                    export.options.csv_formulas,
                    export.options.max_consecutive_failures,
                    options,
                    None if events is None else events.of(logins),
                    export.options.keep_raw,
                )
            )
    return tasks


def run(
    client: Client,
    export: ExportPlan,
    tally: Tally,
    scheduler: object,
    *,
    partition_size: int,
    raise_interrupt: bool,
) -> ExportReport:
    """Runs the planned ``export`` on the cluster of ``scheduler``, counted in ``tally``; the
    report, as ``_run``'s."""
    dask_client, ours = _connect(scheduler)
    try:
        return _drive(client, export, tally, dask_client, partition_size, raise_interrupt)
    finally:
        if ours:
            dask_client.close()


def _drive(
    client: Client,
    export: ExportPlan,
    tally: Tally,
    dask_client: distributed.Client,
    size: int,
    raise_interrupt: bool,
) -> ExportReport:
    import distributed

    storage = export.storage
    marker = storage.path(JOURNAL, CLUSTER_MARKER + export.run_id)
    storage.makedirs(storage.path(JOURNAL))
    storage.write_whole(marker, b"written by the driver of a cluster export: each worker looks for it\n")
    stop = distributed.Event(f"bankfeed-export-stop-{export.run_id}", client=dask_client)
    tasks = _partitions(export, size, stop.name, marker)
    for kind in export.kinds:
        for table in kind.tables:
            tally.remote_rows.setdefault(f"{kind.name}/{table}", 0)
    export.start()
    tally.show_progress(export)
    # The client goes as the object: its pickle is its configuration, and its repr, which is what
    # a worker logs of a failed task, hides the keys (docs/scale-out.md#keys). One `map`: the
    # scheduler gets every partition in one message, however many there are.
    futures: list[distributed.Future[_Done]] = (
        dask_client.map(_run_partition, tasks, client=client, key=[task.key for task in tasks], pure=False)
        if tasks
        else []
    )
    taken: set[object] = set()

    def take(future: distributed.Future[_Done]) -> None:
        done: _Done = future.result()
        taken.add(future.key)
        tally.absorb(
            done.done,
            done.written,
            done.rows,
            done.failures,
            kind=done.kind,
            breaker=done.breaker,
            not_tried=done.not_tried,
        )
        tally.unknown.merge(done.kind, done.unknown_fields)

    try:
        # The loop named: the caller's client need not be the process's default one.
        for future in distributed.as_completed(futures, loop=dask_client.loop):
            take(future)
    except KeyboardInterrupt:
        report = finish(export, tally, interrupted=True, repair=_stop(dask_client, stop, futures, taken, take))
        if raise_interrupt:
            raise
        return report
    except BaseException:
        # A partition's own failure (an output the workers cannot write, a worker killed again
        # and again): the others stop, and the manifest says where the run stood.
        finish(export, tally, interrupted=True, repair=_stop(dask_client, stop, futures, taken, take))
        raise
    finally:
        storage.remove(marker)
    return finish(export, tally, interrupted=False)


def _stop(
    dask_client: distributed.Client,
    stop: distributed.Event,
    futures: list[distributed.Future[_Done]],
    taken: set[object],
    take: Callable[[distributed.Future[_Done]], None],
) -> bool:
    """Asks every partition to stop, waits for the running ones to commit and return, and counts
    what they did; whether every partition has ended (docs/scale-out.md#stopping-a-cluster-run)."""
    import distributed

    # A second Ctrl-C, or the grace run out, ends the wait: what is not done then is cancelled.
    with contextlib.suppress(BaseException):
        stop.set()
        # Partitions not started yet end at once when they start; the running ones close their
        # bulk calls and commit what they gathered.
        for _ in distributed.as_completed(
            [future for future in futures if not future.done()], loop=dask_client.loop, timeout=_GRACE
        ):
            pass
    finished = [future for future in futures if future.done()]
    dask_client.cancel([future for future in futures if not future.done()])
    for future in finished:
        if future.key not in taken and future.status == "finished":
            # What a stopped partition wrote counts in the report; one that cannot be read back
            # is still in the journal, which the manifest is written from.
            with contextlib.suppress(Exception):
                take(future)
    return len(finished) == len(futures)
