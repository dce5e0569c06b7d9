"""``bf.export`` and ``bf.aexport``: every login's data of the kinds asked for, fetched by the bulk
calls and written to a dataset per table as it comes (docs/export.md).

The arguments are checked once into an ``ExportOptions`` (``options.py``); the export is planned
once (``plan.py``: what to fetch, what is already there, where each result goes), run by one of
two loops that differ only in how they wait (the blocking bulk iterator of a ``Client``, or the
async one of an ``AsyncClient``) while ``tally.py`` counts what comes, and ended by
``finish.py``, which writes the manifest and makes the report.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from bankfeed._export.finish import finish
from bankfeed._export.kinds import with_money
from bankfeed._export.options import ExportOptions
from bankfeed._export.outage import DEFAULT_MAX_CONSECUTIVE_FAILURES
from bankfeed._export.plan import ExportPlan
from bankfeed._export.planning import plan_stoppable
from bankfeed._export.report import ExportReport
from bankfeed._export.tally import Tally
from bankfeed._export.writer import KindWriter
from bankfeed._native import AsyncClient, Client
from bankfeed._type_aliases import AsyncChallengeHandler, ChallengeHandler

if TYPE_CHECKING:
    import distributed

__all__ = ["aexport", "export"]


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
    _check_client(client)
    options = ExportOptions.of(
        what=what,
        format=format,
        concurrency=concurrency,
        resume=resume,
        wait_lock=wait_lock,
        allow_shared_out=allow_shared_out,
        progress=progress,
        days=days,
        batch_logins=batch_logins,
        on_challenge=on_challenge,
        csv_formulas=csv_formulas,
        money=money,
        max_consecutive_failures=max_consecutive_failures,
        full_refresh=full_refresh,
        keep_raw=keep_raw,
        scheduler=scheduler,
        partition_size=partition_size,
    )
    return _run(client, login_ids, out, options, raise_interrupt=True)


def _check_client(client: object) -> None:
    """``client``: a ``bf.Client``; an ``AsyncClient`` is pointed to ``bf.aexport``."""
    if not isinstance(client, Client):
        raise TypeError(
            f"client must be a bf.Client, not {type(client).__name__}"
            + ("; await bf.aexport(...) exports with an AsyncClient" if isinstance(client, AsyncClient) else "")
        )


def _run(
    client: Client,
    login_ids: Iterable[str],
    out: str | os.PathLike[str],
    options: ExportOptions,
    *,
    raise_interrupt: bool,
) -> ExportReport:
    """:func:`export`, its arguments checked into ``options``; with ``raise_interrupt`` false (the
    command), Ctrl-C ends the run with a report whose ``interrupted`` is true instead of raising."""
    plan = ExportPlan.make(login_ids, out, options, client=client)
    try:
        # The bulk calls' tables hold money as the export does.
        client = with_money(client, plan.money)
        return _write(client, plan, raise_interrupt=raise_interrupt)
    finally:
        # On every way out: the lock lives no longer than the run, also when the exception that
        # ended it is kept (a notebook keeps the last one).
        plan.release()


def _take(plan: ExportPlan, tally: Tally, writer: KindWriter, login_id: Any, result: object) -> bool:
    """Gathers one pair of a bulk call; whether the batch is due to be committed."""
    if not plan.started_over(writer.kind, login_id, result):
        tally.take(writer, login_id, result)
    return writer.due()


def _write(client: Client, plan: ExportPlan, *, raise_interrupt: bool) -> ExportReport:
    """Runs the planned export, in this process or on the cluster of its ``scheduler``."""
    tally = Tally.of(plan)
    options = plan.options
    if options.scheduler is not None:
        from bankfeed._export import cluster

        return cluster.run(
            client,
            plan,
            tally,
            options.scheduler,
            partition_size=options.partition_size,
            raise_interrupt=raise_interrupt,
        )
    plan.start()
    tally.show_progress(plan)
    try:
        for kind in plan.kinds:
            writer = plan.writer(kind)
            try:
                for chunk, request_ids, added in plan.chunks(kind):
                    # Leaving the block when the run stops asking closes the call (outage.py).
                    with plan.call(client, kind, chunk, request_ids, added) as results:
                        for login_id, result in results:
                            if _take(plan, tally, writer, login_id, result):
                                writer.commit()
                            if tally.stopping:
                                break
                    if tally.stopping:
                        break
            finally:
                # What was gathered is complete: it is written, also when Ctrl-C ends the run.
                writer.commit()
            if tally.stopping:
                tally.leave_untried(plan, kind)
                break
    except KeyboardInterrupt:
        report = finish(plan, tally, interrupted=True)
        if raise_interrupt:
            raise
        return report
    except BaseException:
        # A failure of the run itself (a full disk): the manifest says where it stopped.
        finish(plan, tally, interrupted=True)
        raise
    return finish(plan, tally, interrupted=False)


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
    options = ExportOptions.of(
        what=what,
        format=format,
        concurrency=concurrency,
        resume=resume,
        wait_lock=wait_lock,
        allow_shared_out=allow_shared_out,
        progress=progress,
        days=days,
        batch_logins=batch_logins,
        on_challenge=on_challenge,
        csv_formulas=csv_formulas,
        money=money,
        max_consecutive_failures=max_consecutive_failures,
        full_refresh=full_refresh,
        keep_raw=keep_raw,
    )
    # In a thread of its own, whose wait for the lock a cancellation stops (planning.py).
    plan = await plan_stoppable(ExportPlan.release, ExportPlan.make, login_ids, out, options, client=client)
    try:
        return await _awrite(with_money(client, plan.money), plan)
    finally:
        # Off the event loop (an fsspec lock is an object to remove), and done when the task is
        # cancelled meanwhile.
        await asyncio.shield(asyncio.to_thread(plan.release))


async def _awrite(client: AsyncClient, plan: ExportPlan) -> ExportReport:
    """Runs the planned export on this event loop."""
    import asyncio

    tally = Tally.of(plan)
    # Writes the run's record: not on the event loop, like every write of the export.
    await asyncio.to_thread(plan.start)
    tally.show_progress(plan)
    try:
        for kind in plan.kinds:
            writer = plan.writer(kind)
            try:
                for chunk, request_ids, added in plan.chunks(kind):
                    async with plan.call(client, kind, chunk, request_ids, added) as results:
                        async for login_id, result in results:
                            if _take(plan, tally, writer, login_id, result):
                                await asyncio.to_thread(writer.commit)
                            if tally.stopping:
                                break
                    if tally.stopping:
                        break
            finally:
                await asyncio.shield(asyncio.to_thread(writer.commit))
            if tally.stopping:
                await asyncio.to_thread(tally.leave_untried, plan, kind)
                break
    except BaseException:
        await asyncio.shield(asyncio.to_thread(finish, plan, tally, True))
        raise
    return await asyncio.to_thread(finish, plan, tally, False)
