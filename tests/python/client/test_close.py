"""client.close(), ``with bf.Client(...)`` and ``async with bf.AsyncClient(...)``: every call in
flight, in every thread and task, ends at once in bf.ClientClosed, nothing polls after, and later
calls are refused without a request. What follows a close is one case for both clients (the
``api`` fixture); how calls in flight are stopped is written per client, since a blocking call
waits in a thread and an async one in a task of its loop."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import pickle
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pytest

import bankfeed as bf
from bfhelpers import (
    INSTITUTION,
    PASSWORD,
    Api,
    assert_investments,
    fast_async_client,
    login_id_of,
    requests_after,
)

#: How soon after close() every call in flight must have raised.
WITHIN = 0.5
#: How long the request counter is watched after close().
QUIET = 0.2


@pytest.fixture(scope="module")
def stuck() -> Iterator[bf.Sandbox]:
    """16 saved logins whose data calls stay pending for a minute, statements included (they
    answer at once by default, as the service's do)."""
    every = ["GetAccountsDetail", "GetAccountsSummary", "GetStatements", "Investments", "Attributes"]
    with bf.Sandbox(logins=16, pending_seconds=60, pending_operations=every) as sb:
        yield sb


def client_of(sb: bf.Sandbox) -> bf.Client:
    return sb.client(poll_interval=0.01, poll_timeout=60)


def timed(call: Callable[[], object]) -> Callable[[], tuple[BaseException | None, float]]:
    """``call`` made to return (what it raised, when it ended)."""

    def run() -> tuple[BaseException | None, float]:
        try:
            call()
        except BaseException as exc:
            return exc, time.monotonic()
        return None, time.monotonic()

    return run


def is_closed(client: bf.Client | bf.AsyncClient) -> bool:
    """``client.closed``, read through a call so that a type checker does not keep an earlier value."""
    return client.closed


def wait_until_polling(sb: bf.Sandbox, requests: int) -> None:
    """Waits until the sandbox received ``requests`` more requests: the calls are in flight."""
    target = sb.request_count + requests
    deadline = time.monotonic() + 10
    while sb.request_count < target:
        assert time.monotonic() < deadline, "the calls did not start"
        time.sleep(0.01)


def test_close_cancels_the_calls_of_every_thread_at_once(stuck: bf.Sandbox) -> None:
    client = client_of(stuck)
    ids = stuck.login_ids
    session = client.authorize_cached(ids[0])
    calls: list[tuple[str, Callable[[], object]]] = [
        *[("Investments", lambda i=i: client.investments(ids[i])) for i in range(1, 6)],
        ("Attributes", lambda: client.attributes(ids[7], package="income")),
        ("GetAccountsDetail", lambda: session.accounts_detail()),
        ("GetStatements", lambda: session.statements()),
    ]
    with ThreadPoolExecutor(8) as pool:
        futures = [pool.submit(timed(call)) for _, call in calls]
        wait_until_polling(stuck, 8 * 5)
        assert not any(future.done() for future in futures)
        closed = time.monotonic()
        client.close()
        outcomes = [future.result(timeout=10) for future in futures]
    assert client.closed
    for (operation, _), (exc, ended) in zip(calls, outcomes, strict=True):
        assert isinstance(exc, bf.ClientClosed), f"{operation}: {exc!r}"
        assert ended - closed < WITHIN, f"{operation} ended {ended - closed:.2f} s after close()"
        assert exc.operation in (operation, "GetAccountsDetail"), exc.operation  # attributes poll the detail first
        assert "closed" in str(exc)
    assert requests_after(stuck, QUIET) == 0


def test_a_bulk_call_in_another_thread_ends_with_client_closed_pairs(stuck: bf.Sandbox) -> None:
    client = client_of(stuck)
    pairs: list[tuple[str, object]] = []

    def consume() -> None:
        for pair in client.investments_many(stuck.login_ids):
            pairs.append(pair)

    with ThreadPoolExecutor(1) as pool:
        future: Future[tuple[BaseException | None, float]] = pool.submit(timed(consume))
        wait_until_polling(stuck, 40)
        closed = time.monotonic()
        client.close()
        exc, ended = future.result(timeout=10)
    assert exc is None, repr(exc)
    assert ended - closed < WITHIN
    # Every login was still pending: each comes as cut off by the close, so that a reader
    # (bf.combine) keeps what was fetched and names every login that was not.
    assert_cut_off(pairs, stuck.login_ids)
    assert requests_after(stuck, QUIET) == 0


def assert_cut_off(pairs: list[tuple[str, object]], login_ids: list[str]) -> None:
    """Every LoginId of ``login_ids`` came once, with a ClientClosed saying the client was closed."""
    assert sorted(login_id for login_id, _ in pairs) == sorted(login_ids)
    for _, result in pairs:
        assert type(result) is bf.ClientClosed, repr(result)
        assert result.operation == "investments_many" and "the client was closed" in str(result)


def test_calls_after_close_are_refused_without_a_request(api: Api, stuck: bf.Sandbox) -> None:
    client = api.client(stuck, poll_timeout=60)
    session = api.run(client.authorize_cached(stuck.login_ids[0]))
    assert not is_closed(client)
    client.close()
    client.close()  # twice: nothing more
    assert is_closed(client)
    before = stuck.request_count
    calls: dict[str, Callable[[], object]] = {
        "Authorize": lambda: api.run(client.authorize(INSTITUTION, "greatday_nomfa", PASSWORD)),
        "Investments": lambda: api.run(client.investments(stuck.login_ids[1])),
        "DeleteCard": lambda: api.run(client.delete_login(stuck.login_ids[1])),
        "session": lambda: api.run(session.investments()),
        "known session": lambda: api.run(client.session(str(uuid.uuid4())).accounts_summary()),
        "bulk": lambda: api.collect(client.investments_many(stuck.login_ids)),
    }
    for name, call in calls.items():
        with pytest.raises(bf.ClientClosed):
            call()
        assert stuck.request_count == before, f"{name} sent a request"


def test_a_pickled_copy_of_a_closed_client_is_a_new_open_client(api: Api, stuck: bf.Sandbox) -> None:
    client = api.client(stuck, poll_timeout=60)
    client.close()
    copy = pickle.loads(pickle.dumps(client))
    assert type(copy) is type(client) and not copy.closed
    assert api.run(copy.authorize_cached(stuck.login_ids[0])).login_id == stuck.login_ids[0]


# --- How each client is closed: from another thread, by a with block -----------------------


def test_leaving_a_with_block_closes_the_client(stuck: bf.Sandbox) -> None:
    with ThreadPoolExecutor(2) as pool:
        with client_of(stuck) as client:
            assert isinstance(client, bf.Client) and not is_closed(client)
            calls = [timed(functools.partial(client.investments, login_id)) for login_id in stuck.login_ids[2:4]]
            futures = [pool.submit(call) for call in calls]
            wait_until_polling(stuck, 10)
        left = time.monotonic()
        outcomes = [future.result(timeout=10) for future in futures]
    assert is_closed(client)
    assert all(isinstance(exc, bf.ClientClosed) and ended - left < WITHIN for exc, ended in outcomes), outcomes


def test_a_with_block_left_by_an_exception_closes_the_client_and_lets_the_exception_through(
    stuck: bf.Sandbox,
) -> None:
    client = client_of(stuck)

    def leave_by_an_exception() -> None:
        with client:
            raise KeyError("mine")

    with pytest.raises(KeyError, match="mine"):
        leave_by_an_exception()
    assert client.closed


# --- AsyncClient: its tasks, async with, a close from the loop or another thread ------------


def test_async_close_cancels_every_awaiting_task(stuck: bf.Sandbox) -> None:
    client = fast_async_client(stuck)

    async def main() -> tuple[list[Any], float, float]:
        session = await client.authorize_cached(stuck.login_ids[0])
        tasks: list[asyncio.Future[Any]] = [
            asyncio.ensure_future(client.investments(login_id)) for login_id in stuck.login_ids[1:7]
        ]
        tasks.append(asyncio.ensure_future(session.accounts_detail()))
        tasks.append(asyncio.ensure_future(client.attributes(stuck.login_ids[8], package="income")))
        await asyncio.sleep(0.3)
        assert not any(task.done() for task in tasks)
        closed = time.monotonic()
        client.close()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        return results, closed, time.monotonic()

    results, closed, ended = asyncio.run(main())
    assert all(isinstance(result, bf.ClientClosed) for result in results), results
    assert ended - closed < WITHIN
    assert requests_after(stuck, QUIET) == 0

    async def later() -> None:
        with pytest.raises(bf.ClientClosed):
            await client.investments(stuck.login_ids[1])
        with pytest.raises(bf.ClientClosed):
            await client.session(str(uuid.uuid4())).accounts_summary()

    asyncio.run(later())


def test_async_close_ends_an_async_bulk_call(stuck: bf.Sandbox) -> None:
    client = fast_async_client(stuck)
    pairs: list[tuple[str, object]] = []

    async def main() -> BaseException | None:
        async def consume() -> None:
            async for pair in client.investments_many(stuck.login_ids):
                pairs.append(pair)

        task = asyncio.ensure_future(consume())
        await asyncio.sleep(0.3)
        client.close()
        try:
            await asyncio.wait_for(task, WITHIN)
        except BaseException as exc:
            return exc
        return None

    assert asyncio.run(main()) is None
    assert_cut_off(pairs, stuck.login_ids)
    assert requests_after(stuck, QUIET) == 0


def test_leaving_async_with_closes_the_client(stuck: bf.Sandbox) -> None:
    async def main() -> tuple[bf.AsyncClient, BaseException | None]:
        async with fast_async_client(stuck) as client:
            assert isinstance(client, bf.AsyncClient) and not is_closed(client)
            task = asyncio.ensure_future(client.investments(stuck.login_ids[9]))
            await asyncio.sleep(0.2)
        try:
            await asyncio.wait_for(task, WITHIN)
        except BaseException as exc:
            return client, exc
        return client, None

    client, exc = asyncio.run(main())
    assert client.closed and isinstance(exc, bf.ClientClosed), repr(exc)


def test_an_async_with_block_left_by_an_exception_closes_the_client_and_lets_the_exception_through(
    stuck: bf.Sandbox,
) -> None:
    client = fast_async_client(stuck)

    async def leave_by_an_exception() -> None:
        async with client:
            raise KeyError("mine")

    with pytest.raises(KeyError, match="mine"):
        asyncio.run(leave_by_an_exception())
    assert client.closed


def test_closing_an_async_client_from_another_thread(stuck: bf.Sandbox) -> None:
    client = fast_async_client(stuck)
    closer = threading.Timer(0.3, client.close)

    async def main() -> BaseException | None:
        closer.start()
        try:
            await client.investments(stuck.login_ids[10])
        except BaseException as exc:
            return exc
        return None

    started = time.monotonic()
    try:
        exc = asyncio.run(main())
    finally:
        closer.cancel()
    assert isinstance(exc, bf.ClientClosed) and time.monotonic() - started < 0.3 + WITHIN


def test_a_closed_client_does_not_close_another(stuck: bf.Sandbox) -> None:
    first, second = client_of(stuck), fast_async_client(stuck)
    first.close()
    session = asyncio.run(second.authorize_cached(stuck.login_ids[0]))
    assert login_id_of(session) == stuck.login_ids[0]
    with bf.Sandbox(logins=1, pending_polls=0) as fresh:
        assert_investments(client_of(fresh).investments(fresh.login_ids[0]))


def test_a_closed_client_still_referenced_keeps_no_connection_open() -> None:
    # A long-lived service keeps its closed client as an attribute: its pooled sockets must go.
    def sockets() -> int:
        count = 0
        for fd in os.listdir("/proc/self/fd"):
            with contextlib.suppress(FileNotFoundError):  # the listing's own descriptor, gone by now
                count += os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")
        return count

    def settled() -> int:
        # The sockets of earlier tests' clients may still be closing.
        counts = [sockets()]
        while len(counts) < 50 and (len(counts) < 3 or len(set(counts[-3:])) > 1):
            time.sleep(0.02)
            counts.append(sockets())
        return counts[-1]

    with bf.Sandbox(logins=40, pending_polls=0) as sb:
        before = settled()
        client = sb.client()
        with ThreadPoolExecutor(20) as pool:
            list(pool.map(client.authorize_cached, sb.login_ids))
        assert sockets() >= before + 4, "the pool kept no connection: nothing to check"
        client.close()
        deadline = time.monotonic() + 2
        while sockets() > before and time.monotonic() < deadline:
            time.sleep(0.02)
        assert sockets() <= before, f"{sockets() - before} socket(s) still open after close()"
        assert client.closed
