"""What only bf.AsyncClient has: real coroutines, async handlers, cancellation that stops the Rust
work at once, timeouts, many calls on one loop, several loops in several threads, uvloop, and
calls from inside an already running loop."""

from __future__ import annotations

import asyncio
import collections.abc
import gc
import inspect
import itertools
import sys
import threading
import time
import warnings
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, NoReturn

import pytest

import bankfeed as bf
from bfhelpers import (
    AUTHORIZE,
    GREATDAY,
    INSTITUTION,
    PASSWORD,
    THREE_ROUNDS,
    assert_investments,
    assert_secret_free,
    fast_async_client,
    investment_posts,
    login_id_of,
    operations_since,
    requests_after,
)

#: How long the request counter is watched after a cancel: at a poll every 0.01 s, a poll going
#: on in the background would add about 20 requests in that time.
QUIET = 0.2


@pytest.fixture(scope="module")
def stuck() -> Iterator[tuple[bf.Sandbox, str]]:
    """A sandbox whose data calls stay pending for a minute, and a saved login of it."""
    with bf.Sandbox(pending_seconds=60) as sb:
        session = sb.client().authorize(INSTITUTION, "greatday_nomfa", PASSWORD, save=True)
        assert isinstance(session, bf.Session)
        yield sb, login_id_of(session)


@pytest.fixture(scope="module")
def bulk() -> Iterator[bf.Sandbox]:
    """A sandbox of 32 saved MFA-free logins whose data calls answer 202 once."""
    with bf.Sandbox(logins=32, pending_polls=1) as sb:
        yield sb


# --- Coroutines -----------------------------------------------------------------------------


def test_calls_are_coroutines_that_start_only_when_awaited(bulk: bf.Sandbox) -> None:
    client = fast_async_client(bulk)
    before = bulk.request_count
    call = client.investments(bulk.login_ids[0])
    assert isinstance(call, collections.abc.Coroutine)
    time.sleep(0.05)
    assert bulk.request_count == before, "nothing is sent before the first await"
    # Made outside any loop, run by asyncio.run.
    assert_investments(asyncio.run(call))
    assert bulk.request_count > before
    unused = client.authorize_cached(bulk.login_ids[0])
    unused.close()
    time.sleep(0.05)
    # The call's token, its Authorize, a 202 and the 200; nothing after.
    sent = ["GenerateAuthorizeToken", "Authorize", "Investments", "Investments"]
    assert operations_since(bulk, before) == sent, "a closed coroutine sent nothing"


def test_create_task_gather_and_wait_for_take_the_coroutines(bulk: bf.Sandbox) -> None:
    client = fast_async_client(bulk)
    ids = bulk.login_ids[:3]

    async def main() -> list[bf.Investments]:
        task = asyncio.create_task(client.investments(ids[0]))
        both = await asyncio.gather(client.investments(ids[1]), asyncio.wait_for(client.investments(ids[2]), 10))
        return [await task, *both]

    results = asyncio.run(main())
    assert [r.raw["Login"]["Username"] for r in results] == ["bulk_00000", "bulk_00001", "bulk_00002"]


def test_driving_a_call_outside_a_running_loop_is_a_clear_runtime_error(bulk: bf.Sandbox) -> None:
    call = fast_async_client(bulk).investments(bulk.login_ids[0])
    with pytest.raises(RuntimeError, match="running asyncio event loop") as info:
        call.send(None)
    assert "asyncio.run" in str(info.value) and "bf.Client" in str(info.value)


# --- Handlers -------------------------------------------------------------------------------


def test_an_async_handler_answers_every_round_on_the_loop_thread(sandbox: bf.Sandbox) -> None:
    client = fast_async_client(sandbox)
    threads: list[int] = []

    async def ask(challenge: bf.AsyncChallenge) -> dict[str, str]:
        assert isinstance(challenge, bf.AsyncChallenge)
        threads.append(threading.get_ident())
        await asyncio.sleep(0.01)  # e.g. awaiting the user's answer from a web form
        return {prompt: GREATDAY[prompt] for prompt in challenge.prompts}

    session = asyncio.run(client.login(INSTITUTION, THREE_ROUNDS, PASSWORD, on_challenge=ask))
    assert isinstance(session, bf.AsyncSession)
    assert threads == [threading.get_ident()] * 3


def test_a_plain_handler_serves_the_async_client_too(sandbox: bf.Sandbox) -> None:
    def ask(challenge: bf.AsyncChallenge) -> dict[str, str]:
        return {prompt: GREATDAY[prompt] for prompt in challenge.prompts}

    session = asyncio.run(fast_async_client(sandbox).login(INSTITUTION, "Greatday", PASSWORD, on_challenge=ask))
    assert isinstance(session, bf.AsyncSession)


class Refused(Exception):
    pass


def test_an_exception_of_an_async_handler_comes_out_as_it_was(sandbox: bf.Sandbox) -> None:
    exc = Refused("the user closed the form")

    async def ask(challenge: bf.AsyncChallenge) -> NoReturn:
        await asyncio.sleep(0)
        raise exc

    with pytest.raises(Refused) as info:
        asyncio.run(fast_async_client(sandbox).login(INSTITUTION, "Greatday", PASSWORD, on_challenge=ask))
    assert info.value is exc


#: What a handler returns instead of the answers, and the type its TypeError names.
NOT_ANSWERS: list[tuple[Callable[[Any], Any], str]] = [
    (lambda challenge: 42, "int"),
    (lambda challenge: None, "None"),
    (lambda challenge: [GREATDAY[prompt] for prompt in challenge.prompts], "list"),
    # The answer on its own: its type is named, never its value.
    (lambda challenge: GREATDAY[challenge.prompts[0]], "str"),
]
NOT_ANSWERS_IDS = ["int", "None", "list-of-answers", "an-answer"]


def refused_as_not_answers(info: pytest.ExceptionInfo[TypeError], got: str) -> None:
    """The TypeError of a handler that returned ``got``: it names on_challenge, what came and
    what it must return, and holds no answer."""
    text = str(info.value)
    assert f"on_challenge returned {got}, not the answers" in text, text
    assert "mapping of each prompt" in text and "a str or a list of str" in text, text
    assert 'answer to "answers"' not in text, "the handler, not an answer, is blamed"
    assert_secret_free(text, repr(info.value), extra=GREATDAY.values())


@pytest.mark.parametrize(("returns", "got"), NOT_ANSWERS, ids=NOT_ANSWERS_IDS)
def test_a_handler_returning_no_mapping_is_a_type_error_naming_what_came(
    sandbox: bf.Sandbox, returns: Callable[[Any], Any], got: str
) -> None:
    async def ask(challenge: bf.AsyncChallenge) -> Any:
        await asyncio.sleep(0)
        return returns(challenge)

    before = sandbox.request_count
    with pytest.raises(TypeError) as info:
        asyncio.run(fast_async_client(sandbox).login(INSTITUTION, "Greatday", PASSWORD, on_challenge=ask))
    refused_as_not_answers(info, got)
    with pytest.raises(TypeError) as info:
        asyncio.run(fast_async_client(sandbox).login(INSTITUTION, "Greatday", PASSWORD, on_challenge=returns))
    refused_as_not_answers(info, got)
    with pytest.raises(TypeError) as info:
        sandbox.client().login(INSTITUTION, "Greatday", PASSWORD, on_challenge=returns)
    refused_as_not_answers(info, got)
    assert operations_since(sandbox, before) == AUTHORIZE * 3, "each call sent its Authorize, and no answers"


def test_an_async_handler_on_the_sync_client_is_refused_and_its_coroutine_closed(sandbox: bf.Sandbox) -> None:
    made: list[collections.abc.Coroutine[Any, Any, dict[str, str]]] = []

    async def ask(challenge: bf.Challenge) -> dict[str, str]:
        return {prompt: GREATDAY[prompt] for prompt in challenge.prompts}

    def asks(challenge: bf.Challenge) -> Any:
        made.append(ask(challenge))
        return made[-1]

    with pytest.raises(TypeError) as info:
        sandbox.client().login(INSTITUTION, "Greatday", PASSWORD, on_challenge=asks)
    text = str(info.value)
    assert "on_challenge returned a coroutine" in text, text
    assert "plain" in text and "bf.AsyncClient" in text, text
    assert [inspect.getcoroutinestate(coroutine) for coroutine in made] == [inspect.CORO_CLOSED]
    assert_secret_free(text, repr(info.value), extra=GREATDAY.values())

    # Given the async def itself, as a user would: Python warns of no coroutine left unawaited.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(TypeError, match="on_challenge returned a coroutine"):
            sandbox.client().login(INSTITUTION, "Greatday", PASSWORD, on_challenge=ask)  # type: ignore[arg-type]
        gc.collect()
    assert not [w for w in caught if "never awaited" in str(w.message)], [str(w.message) for w in caught]


# --- Cancellation and timeouts --------------------------------------------------------------


def cancelled_by(
    stuck: tuple[bf.Sandbox, str], cancel: Callable[[Awaitable[bf.Investments]], Awaitable[object]]
) -> tuple[type[BaseException], float, int]:
    """Runs ``cancel(call)`` on a call that stays pending; returns what it raised, how long it
    took, and the requests of the ``QUIET`` seconds after it (``requests_after``), counted inside
    the loop, before asyncio.run cancels whatever is left at its end."""
    sb, login_id = stuck
    client = fast_async_client(sb)

    async def main() -> tuple[type[BaseException], float, int]:
        started = time.monotonic()
        try:
            await cancel(client.investments(login_id))
        except BaseException as exc:
            elapsed = time.monotonic() - started
            return type(exc), elapsed, await asyncio.to_thread(requests_after, sb, QUIET)
        raise AssertionError("the pending call returned")

    return asyncio.run(main())


def test_wait_for_times_out_and_no_polling_goes_on(stuck: tuple[bf.Sandbox, str]) -> None:
    # asyncio.wait_for raises asyncio.TimeoutError: the builtin TimeoutError from 3.11, a class
    # of its own on 3.10, the floor this suite runs on too.
    before = investment_posts(stuck[0])
    raised, elapsed, later = cancelled_by(stuck, lambda call: asyncio.wait_for(call, 0.1))
    assert raised is asyncio.TimeoutError
    assert elapsed < 0.6
    assert investment_posts(stuck[0]) - before >= 2, "the call was polling when it was cancelled"
    assert later == 0, f"{later} requests after the cancel"


def test_the_measure_sees_polling_that_goes_on(stuck: tuple[bf.Sandbox, str]) -> None:
    """The control of the tests here: a call shielded from wait_for's cancel goes on polling
    after the timeout, and the counter sees it."""

    def shielded(call: Awaitable[bf.Investments]) -> Awaitable[object]:
        return asyncio.wait_for(asyncio.shield(call), 0.1)

    raised, _, later = cancelled_by(stuck, shielded)
    assert raised is asyncio.TimeoutError
    assert later >= 5, f"only {later} requests from a call left running"


def test_cancelling_the_task_cancels_the_call(stuck: tuple[bf.Sandbox, str]) -> None:
    async def cancel_soon(call: Awaitable[bf.Investments]) -> object:
        task = asyncio.ensure_future(call)
        await asyncio.sleep(0.1)
        task.cancel()
        return await task

    raised, elapsed, later = cancelled_by(stuck, cancel_soon)
    assert raised is asyncio.CancelledError
    assert elapsed < 0.6
    assert later == 0, f"{later} requests after the cancel"


@pytest.mark.skipif(sys.version_info < (3, 11), reason="asyncio.timeout is new in 3.11")
def test_asyncio_timeout_cancels_the_call(stuck: tuple[bf.Sandbox, str]) -> None:
    async def within(call: Awaitable[bf.Investments]) -> object:
        if sys.version_info >= (3, 11):
            async with asyncio.timeout(0.1):
                return await call
        return await call

    raised, elapsed, later = cancelled_by(stuck, within)
    assert raised is TimeoutError
    assert elapsed < 0.6
    assert later == 0, f"{later} requests after the cancel"


def test_a_cancelled_call_leaves_the_client_usable(bulk: bf.Sandbox) -> None:
    client = fast_async_client(bulk)

    async def main() -> bf.Investments:
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(client.investments(bulk.login_ids[0]), 0.0001)
        return await client.investments(bulk.login_ids[0])

    assert_investments(asyncio.run(main()))


def test_a_timeout_while_an_async_handler_waits_cancels_the_handler_and_the_login(sandbox: bf.Sandbox) -> None:
    client = fast_async_client(sandbox)
    cancelled: list[bool] = []

    async def ask(challenge: bf.AsyncChallenge) -> dict[str, str]:
        try:
            await asyncio.sleep(10)  # the user never answers
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return {}

    async def main() -> tuple[int, int]:
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(client.login(INSTITUTION, "Greatday", PASSWORD, on_challenge=ask), 0.2)
        first = sandbox.request_count
        await asyncio.sleep(0.1)
        return first, sandbox.request_count

    first, later = asyncio.run(main())
    assert cancelled == [True]
    assert later == first


def test_a_deadline_that_runs_out_while_an_async_handler_waits_cancels_the_handler(sandbox: bf.Sandbox) -> None:
    # The call ends in Rust here, not by a cancel of the awaiting task: the handler's task must
    # be stopped all the same, not left to run in the background with an answer nobody reads.
    client = fast_async_client(sandbox, deadline=0.3)
    seen: list[str] = []

    async def ask(challenge: bf.AsyncChallenge) -> dict[str, str]:
        try:
            await asyncio.sleep(3)  # the user never answers
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise
        seen.append("finished")
        return {}

    async def main() -> list[str]:
        with pytest.raises(bf.TransportError, match="deadline"):
            await client.login(INSTITUTION, "Greatday", PASSWORD, on_challenge=ask)
        await asyncio.sleep(0.1)  # the loop runs the cancellation
        # Read before asyncio.run's own shutdown, which cancels every task left anyway.
        return list(seen)

    assert asyncio.run(main()) == ["cancelled"]


# --- Concurrency ----------------------------------------------------------------------------


@pytest.mark.timing
def test_calls_gathered_on_one_loop_wait_together() -> None:
    with bf.Sandbox(logins=16, pending_seconds=0.3) as sb:
        client = fast_async_client(sb, poll_interval=0.02)

        async def main() -> list[bf.Investments]:
            return await asyncio.gather(*(client.investments(login_id) for login_id in sb.login_ids))

        started = time.monotonic()
        results = asyncio.run(main())
        elapsed = time.monotonic() - started
    assert len(results) == 16
    assert [r.raw["Login"]["Username"] for r in results] == [f"bulk_{i:05d}" for i in range(16)]
    # One after the other they would take 16 x 0.3 s.
    assert elapsed < 1.6, f"16 calls of 0.3 s each took {elapsed:.2f} s together"


@pytest.mark.parametrize("loop_kind", ["asyncio", "uvloop"])
def test_calls_finishing_together_round_after_round_all_wake_their_loop(bulk: bf.Sandbox, loop_kind: str) -> None:
    """Calls finish on the IO threads while the loop drains the wake-ups of the ones before: a
    wake-up lost in between left every later call of that loop waiting forever (it took a few
    dozen rounds of 50 calls; the fix drains the socket before it disarms)."""
    new_loop: Callable[[], asyncio.AbstractEventLoop] = asyncio.new_event_loop
    if loop_kind == "uvloop":
        new_loop = pytest.importorskip("uvloop").new_event_loop
    client = fast_async_client(bulk)

    async def rounds() -> int:
        for round_number in range(200):
            calls = [asyncio.ensure_future(client.authorize_cached(login_id)) for login_id in bulk.login_ids]
            calls += [asyncio.ensure_future(client.authorize_cached(bulk.login_ids[0])) for _ in range(18)]
            _, waiting = await asyncio.wait(calls, timeout=5)
            if waiting:
                for call in waiting:
                    call.cancel()
                return round_number
        return -1

    loop = new_loop()
    try:
        stalled_at = loop.run_until_complete(rounds())
    finally:
        client.close()
        loop.close()
    assert stalled_at == -1, f"calls of round {stalled_at} waited 5 s for answers that had come"


def test_the_loop_runs_other_tasks_while_a_call_waits() -> None:
    with bf.Sandbox(pending_seconds=0.5) as sb:
        session = sb.client().login(INSTITUTION, "greatday_nomfa", PASSWORD, save=True)
        client = fast_async_client(sb, poll_interval=0.05)
        ticks: list[float] = []

        async def ticker() -> None:
            while True:
                ticks.append(time.monotonic())
                await asyncio.sleep(0.01)

        async def main() -> bf.Investments:
            task = asyncio.create_task(ticker())
            try:
                return await client.investments(login_id_of(session))
            finally:
                task.cancel()

        assert_investments(asyncio.run(main()))
    gaps = [b - a for a, b in itertools.pairwise(ticks)]
    assert len(ticks) > 20 and max(gaps) < 0.2, f"{len(ticks)} ticks, longest gap {max(gaps):.3f} s"


def test_several_event_loops_in_several_threads_share_one_client(bulk: bf.Sandbox) -> None:
    client = fast_async_client(bulk)
    ids = bulk.login_ids
    start = threading.Barrier(4)
    results: dict[int, list[str]] = {}
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        async def main() -> list[bf.Investments]:
            return await asyncio.gather(*(client.investments(login_id) for login_id in ids[n * 8 : n * 8 + 8]))

        try:
            start.wait(5)
            results[n] = [r.raw["Login"]["Username"] for r in asyncio.run(main())]
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not errors, errors
    assert results == {n: [f"bulk_{i:05d}" for i in range(n * 8, n * 8 + 8)] for n in range(4)}


class YieldingLoop(asyncio.SelectorEventLoop):
    """An event loop whose ``is_closed`` lets other threads run, as any Python code may: the
    first call on a loop asks every loop known so far whether it is closed."""

    def is_closed(self) -> bool:
        time.sleep(0.005)
        return super().is_closed()


def test_loops_of_several_threads_starting_at_once_each_get_their_calls(bulk: bf.Sandbox) -> None:
    # The first call of each new loop looked through the known loops while the others added
    # theirs: a PanicException ("dictionary changed size during iteration"), which no `except
    # Exception` catches, killed the worker.
    client = fast_async_client(bulk)
    ids = bulk.login_ids
    kept = YieldingLoop()  # known, and open, while the threads start theirs
    try:
        assert_investments(kept.run_until_complete(client.investments(ids[0])))
        start = threading.Barrier(6)
        outcomes: list[object] = []

        def worker(n: int) -> None:
            event_loop = YieldingLoop()
            try:
                start.wait(5)
                outcomes.append(event_loop.run_until_complete(client.investments(ids[n])))
            except BaseException as exc:
                outcomes.append(exc)
            finally:
                event_loop.close()

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
    finally:
        kept.close()
    assert len(outcomes) == 6 and all(isinstance(o, bf.Investments) for o in outcomes), outcomes


def test_under_uvloop(bulk: bf.Sandbox, sandbox: bf.Sandbox) -> None:
    uvloop = pytest.importorskip("uvloop")
    client = fast_async_client(bulk)

    async def main() -> tuple[list[bf.Investments], Any]:
        many = await asyncio.gather(*(client.investments(login_id) for login_id in bulk.login_ids[:4]))
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(client.investments(bulk.login_ids[0]), 0.0001)
        ask = bf.answers(GREATDAY)

        async def handler(challenge: bf.AsyncChallenge) -> Any:
            await asyncio.sleep(0)
            return ask(challenge)

        session = await fast_async_client(sandbox).login(INSTITUTION, "Greatday", PASSWORD, on_challenge=handler)
        return many, session

    loop = uvloop.new_event_loop()
    try:
        assert type(loop).__module__.startswith("uvloop")
        many, session = loop.run_until_complete(main())
    finally:
        loop.close()
    assert len(many) == 4 and all(isinstance(r, bf.Investments) for r in many)
    assert isinstance(session, bf.AsyncSession)


def test_inside_an_already_running_loop_as_in_a_notebook(bulk: bf.Sandbox) -> None:
    """A notebook cell is a coroutine run by the kernel's loop: the calls are awaited inside it,
    from nested coroutines and from tasks the cell starts."""
    client = fast_async_client(bulk)
    ids = bulk.login_ids

    async def cell() -> list[str]:
        assert asyncio.get_running_loop().is_running()

        async def helper(login_id: str) -> str:
            session = await client.authorize_cached(login_id)
            inv = await session.investments()
            return str(inv.raw["Login"]["Username"])

        first = await helper(ids[0])
        task = asyncio.get_running_loop().create_task(helper(ids[1]))
        pairs = [pair async for pair in client.investments_many(ids[2:4])]
        names = sorted(str(r.raw["Login"]["Username"]) for _, r in pairs if isinstance(r, bf.Investments))
        return [first, await task, *names]

    async def kernel() -> list[str]:
        return await cell()

    assert asyncio.run(kernel()) == ["bulk_00000", "bulk_00001", "bulk_00002", "bulk_00003"]
