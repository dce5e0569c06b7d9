"""Bulk calls (investments_many, attributes_many, accounts_detail_many) of both clients: every
login once, failures next to successes, completion order, the concurrency bound, closing the
iterator, the progress line, and bf.combine over the results."""

from __future__ import annotations

import asyncio
import itertools
import re
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest

import bankfeed as bf
from bfhelpers import GREATDAY, INSTITUTION, PASSWORD, Api, assert_investments, login_id_of, requests_after

BULK = 8
#: The bulk login refused as disabled (by a fault), and the one answered late (by a fault).
DISABLED = "bulk_00003"
LATE = "bulk_00000"
LATE_SECONDS = 0.3
#: poll_timeout of the mixed tests: test_pending stays pending longer, the others are done sooner.
POLL_TIMEOUT = 0.3


class Mixed:
    """A sandbox of BULK saved logins, and a list of LoginIds to fetch in which some fail."""

    def __init__(self) -> None:
        self.sb = bf.Sandbox(
            logins=BULK,
            tier2=True,  # the custom attributes case needs a Tier 2 customer
            pending_polls=1,
            slow_pending_polls=10_000,
            faults=[
                {
                    "kind": "status",
                    "status": 401,
                    "code": "DISABLED_LOGIN",
                    "message": "Login disabled",
                    "operation": "Authorize",
                    "username": DISABLED,
                    "times": None,
                },
                {"kind": "latency", "seconds": LATE_SECONDS, "operation": "Authorize", "username": LATE, "times": None},
            ],
        )
        session = self.sb.client(poll_interval=0.01).login(
            INSTITUTION, "test_pending", PASSWORD, on_challenge=bf.answers(GREATDAY), save=True
        )
        self.unknown = str(uuid.uuid4())
        self.not_a_guid = "not-a-login-id"
        self.pending = login_id_of(session)
        self.usernames = {login_id: f"bulk_{i:05d}" for i, login_id in enumerate(self.sb.login_ids)}
        self.disabled = self.sb.login_ids[int(DISABLED[-5:])]
        self.late = self.sb.login_ids[int(LATE[-5:])]
        self.ids = [*self.sb.login_ids, self.unknown, self.not_a_guid, self.pending]
        #: The class each failing LoginId ends in.
        self.failures: dict[str, type[BaseException]] = {
            self.disabled: bf.LoginDisabled,
            self.unknown: bf.InvalidLogin,
            self.not_a_guid: bf.ConfigError,
            self.pending: bf.PendingTimeout,
        }
        self.succeeding = [login_id for login_id in self.sb.login_ids if login_id != self.disabled]

    def client(self, api: Api) -> Any:
        return api.client(self.sb, poll_timeout=POLL_TIMEOUT)


@pytest.fixture(scope="module")
def mixed() -> Iterator[Mixed]:
    case = Mixed()
    yield case
    case.sb.close()


def check_mixed(mixed: Mixed, pairs: list[tuple[str, Any]], result_type: type) -> dict[str, Any]:
    """Every LoginId came exactly once, with the result or the exception it should; returns the
    pairs as a dict."""
    assert Counter(login_id for login_id, _ in pairs) == Counter(mixed.ids)
    results = dict(pairs)
    for login_id, expected in mixed.failures.items():
        assert type(results[login_id]) is expected, f"{login_id}: {results[login_id]!r}"
    assert results[mixed.disabled].code == "DISABLED_LOGIN"
    assert results[mixed.pending].request_id is not None
    for login_id in mixed.succeeding:
        assert isinstance(results[login_id], result_type), f"{mixed.usernames[login_id]}: {results[login_id]!r}"
    return results


def test_investments_many_gives_every_login_once_failures_next_to_successes(api: Api, mixed: Mixed) -> None:
    pairs = api.collect(mixed.client(api).investments_many(mixed.ids, concurrency=4))
    results = check_mixed(mixed, pairs, bf.Investments)
    for login_id in mixed.succeeding:
        assert_investments(results[login_id])
        assert results[login_id].raw["Login"]["Username"] == mixed.usernames[login_id]
    # In the order they finish: the login answered late comes after every other success.
    order = [login_id for login_id, _ in pairs]
    assert all(order.index(mixed.late) > order.index(other) for other in mixed.succeeding if other != mixed.late)


@pytest.mark.parametrize("kind", ["package", "custom", "detail"])
def test_attributes_many_and_accounts_detail_many_too(api: Api, mixed: Mixed, kind: str) -> None:
    client = mixed.client(api)
    if kind == "package":
        results = client.attributes_many(mixed.ids, package="income", concurrency=4)
    elif kind == "custom":
        results = client.attributes_many(mixed.ids, {"Card": ["balance_min", "count_nsf"]}, concurrency=4)
    else:
        results = client.accounts_detail_many(mixed.ids, with_transactions=True, days="Days365", concurrency=4)
    result_type = bf.Accounts if kind == "detail" else bf.Attributes
    found = check_mixed(mixed, api.collect(results), result_type)
    if kind == "custom":
        assert all(set(found[i].values.column("attribute")) == {"balance_min", "count_nsf"} for i in mixed.succeeding)
    if kind == "detail":
        assert all(len(found[i].transactions) > 0 for i in mixed.succeeding)


def test_combine_gathers_the_results_in_one_table_per_kind(api: Api, mixed: Mixed) -> None:
    pairs = api.collect(mixed.client(api).investments_many(mixed.ids))
    combined = bf.combine(pairs)
    assert combined.kind == "Investments"
    positions = combined.positions
    assert positions.columns[0] == "login_id"
    assert set(positions.column("login_id")) == set(mixed.succeeding)
    expected = sum(len(result.positions) for _, result in pairs if isinstance(result, bf.Investments))
    assert len(positions) == expected
    assert set(combined.errors) == set(mixed.failures)
    assert all(type(combined.errors[i]) is cls for i, cls in mixed.failures.items())


def test_progress_writes_a_line_to_stderr(
    api: Api, mixed: Mixed, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The plain line, also where tqdm is installed (a None entry makes its import fail).
    monkeypatch.setitem(sys.modules, "tqdm", None)
    capsys.readouterr()
    pairs = api.collect(mixed.client(api).investments_many(mixed.ids, progress=True))
    assert len(pairs) == len(mixed.ids)
    captured = capsys.readouterr()
    total = len(mixed.ids)
    assert re.search(rf"{total}/{total} \({len(mixed.failures)} failed\)", captured.err), captured.err
    assert str(total) not in captured.out
    # Without progress, nothing.
    api.collect(mixed.client(api).investments_many(mixed.ids[:2]))
    assert capsys.readouterr().err == ""


def test_an_empty_or_lazy_list_of_login_ids(api: Api, mixed: Mixed) -> None:
    client = mixed.client(api)
    assert api.collect(client.investments_many([])) == []
    lazy = (login_id for login_id in mixed.succeeding[:3])
    assert sorted(login_id for login_id, _ in api.collect(client.investments_many(lazy))) == sorted(
        mixed.succeeding[:3]
    )


@pytest.mark.parametrize(
    ("login_ids", "says"),
    [("5e0e5f83-6e9b-4a2c-a6a3-0d8f4b1c9e21", "wrap it in a list"), (None, "NoneType"), ([1, 2], r"login_ids\[0\]")],
    ids=["one-str", "none", "ints"],
)
def test_login_ids_not_a_list_of_str_are_a_type_error(api: Api, mixed: Mixed, login_ids: Any, says: str) -> None:
    with pytest.raises(TypeError, match=says):
        api.collect(mixed.client(api).investments_many(login_ids))


def test_a_login_id_given_twice_is_fetched_twice(api: Api, mixed: Mixed) -> None:
    twice = [mixed.succeeding[0], mixed.succeeding[0], mixed.succeeding[1]]
    pairs = api.collect(mixed.client(api).investments_many(twice))
    assert sorted(login_id for login_id, _ in pairs) == sorted(twice)
    assert all(isinstance(result, bf.Investments) for _, result in pairs)


@pytest.mark.parametrize("value", [0, -1])
def test_a_concurrency_below_one_is_refused(api: Api, mixed: Mixed, value: int) -> None:
    with pytest.raises(bf.ConfigError, match="concurrency"):
        api.collect(mixed.client(api).investments_many(mixed.ids, concurrency=value))


# --- Resuming -------------------------------------------------------------------------------


def authorizes(sb: bf.Sandbox) -> int:
    return sum(1 for r in sb.requests if r["path"].rstrip("/").endswith("/Authorize"))


@pytest.mark.parametrize("call", ["investments", "attributes", "accounts_detail"])
def test_the_pending_logins_of_a_bulk_call_resume_with_request_ids(api: Api, call: str) -> None:
    with bf.Sandbox(logins=4, pending_polls=25) as sb:

        def many(client: Any, ids: Any, **options: Any) -> list[tuple[str, Any]]:
            if call == "attributes":
                options["package"] = "income"
            pairs: list[tuple[str, Any]] = api.collect(getattr(client, f"{call}_many")(ids, **options))
            return pairs

        fresh = str(uuid.uuid4())  # not pending: no RequestId to resume, it starts afresh
        pairs = many(api.client(sb, poll_timeout=0.05), sb.login_ids)
        pending = {i: r.request_id for i, r in pairs if isinstance(r, bf.PendingTimeout)}
        assert sorted(pending) == sorted(sb.login_ids) and all(pending.values()), pairs
        # Each message names the way this bulk call resumes, with that login's RequestId.
        for login_id, error in pairs:
            advice = f"client.{call}_many(..., request_ids={{login_id: {pending[login_id]!r}}})".replace("'", '"')
            assert advice in str(error), str(error)
        logins = authorizes(sb)
        resumed = dict(many(api.client(sb), [*pending, fresh], request_ids=pending))
        # No new session for a resumed login: only the fresh one authorized (and is unknown).
        assert authorizes(sb) == logins + 1
        assert isinstance(resumed.pop(fresh), bf.InvalidLogin)
        expected = {"investments": bf.Investments, "attributes": bf.Attributes, "accounts_detail": bf.Accounts}[call]
        assert sorted(resumed) == sorted(pending)
        assert all(isinstance(result, expected) for result in resumed.values()), resumed


def test_request_ids_that_cannot_be_used_are_refused_before_anything_starts(api: Api) -> None:
    with bf.Sandbox(logins=2) as sb:
        client = api.client(sb)
        ids = sb.login_ids
        with pytest.raises(TypeError, match=r"request_ids must be a mapping of login_id to request_id.*not list"):
            client.investments_many(ids, request_ids=["r"])
        with pytest.raises(
            bf.ConfigError, match='request_ids may only name LoginIds of login_ids, got "stray"'
        ) as info:
            client.investments_many(ids, request_ids={"stray": "r"})
        assert info.value.field == "request_ids"
        with pytest.raises(TypeError, match=r"request_ids\[.{5,}\] must be a str, not int"):
            client.attributes_many(ids, package="income", request_ids={ids[0]: 7})
        # A RequestId that cannot go into a URL, by the rule of request_id= of a single call.
        with pytest.raises(bf.ConfigError, match=r'request_ids for ".{8}.*" must be a path segment .* got "\.\./x"'):
            client.accounts_detail_many(ids, request_ids={ids[1]: "../x"})
        assert sb.request_count == 0


@pytest.mark.parametrize("call", ["attributes", "accounts_detail"])
def test_a_request_id_of_another_login_is_refused_not_labelled_with_the_login_given(api: Api, call: str) -> None:
    with bf.Sandbox(logins=2) as sb:
        client = api.client(sb)
        mine, theirs = sb.login_ids
        session = api.run(client.authorize_cached(theirs))
        options: dict[str, Any] = {"package": "income"} if call == "attributes" else {}
        many = getattr(client, f"{call}_many")
        pairs = api.collect(many([mine], request_ids={mine: session.request_id}, **options))
        [(login_id, error)] = pairs
        assert login_id == mine
        # The account detail answers for the RequestId's own login (attributes wait for it first):
        # refused, instead of rows of `theirs` labelled `mine`.
        assert isinstance(error, bf.ProtocolError), error
        assert (error.operation, error.status, error.request_id) == ("GetAccountsDetail", 200, session.request_id)
        assert mine in str(error) and theirs in str(error), str(error)
        assert "resume each login with its own RequestId" in str(error)
        assert error.snippet.startswith("{"), error.snippet  # the answer's start, kept as for any ProtocolError
        assert not [r for r in sb.requests if "/attributes/" in r["path"]], "no attributes call was sent"
        # With its own login, the RequestId reads that login's data.
        [(login_id, result)] = api.collect(many([theirs], request_ids={theirs: session.request_id}, **options))
        assert login_id == theirs and isinstance(result, bf.Attributes if call == "attributes" else bf.Accounts)


# --- The concurrency bound ------------------------------------------------------------------

#: Each Authorize of the bound test answers this late; logins run in waves of `concurrency`.
WAVE = 0.2
LOGINS = 6


@pytest.fixture(scope="module")
def waves() -> Iterator[bf.Sandbox]:
    latency = {"kind": "latency", "seconds": WAVE, "operation": "Authorize", "times": None}
    with bf.Sandbox(logins=LOGINS, pending_polls=0, faults=[latency]) as sb:
        yield sb


@pytest.mark.parametrize(("concurrency", "rounds"), [(2, 3), (3, 2), (6, 1)])
@pytest.mark.timing
def test_concurrency_bounds_the_logins_in_flight(api: Api, waves: bf.Sandbox, concurrency: int, rounds: int) -> None:
    client = api.client(waves)
    started = time.monotonic()
    pairs = api.collect(client.investments_many(waves.login_ids, concurrency=concurrency))
    elapsed = time.monotonic() - started
    assert all(isinstance(result, bf.Investments) for _, result in pairs) and len(pairs) == LOGINS
    # `rounds` waves of WAVE each: fewer means more logins ran at once than allowed; more means
    # fewer did (the bound was not used up).
    assert rounds * WAVE <= elapsed < (rounds + 0.9) * WAVE, f"{elapsed:.2f} s at concurrency {concurrency}"


# --- Stopping -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def stuck() -> Iterator[bf.Sandbox]:
    """Saved logins whose data calls stay pending for a minute."""
    with bf.Sandbox(logins=8, pending_seconds=60) as sb:
        yield sb


def close_after_first(api: Api, results: Any) -> Any:
    """Takes the first pair of ``results``, lets the other logins poll a moment, then closes the
    iterator; returns the first result."""
    if api.is_async:

        async def first_then_close() -> tuple[str, Any]:
            pair: tuple[str, Any] = await results.__anext__()
            await asyncio.sleep(0.1)
            await results.aclose()
            return pair

        _, first = api.run(first_then_close())
    else:
        _, first = next(results)
        time.sleep(0.1)
        results.close()
    return first


@pytest.mark.parametrize("progress", [False, True], ids=["plain", "progress"])
def test_closing_the_iterator_stops_every_login(api: Api, stuck: bf.Sandbox, progress: bool) -> None:
    client = api.client(stuck, poll_timeout=60)
    results = client.investments_many([str(uuid.uuid4()), *stuck.login_ids], concurrency=8, progress=progress)
    assert isinstance(close_after_first(api, results), bf.InvalidLogin)
    assert (later := requests_after(stuck)) == 0, f"{later} requests after close()"


@pytest.mark.parametrize("progress", [False, True], ids=["plain", "progress"])
def test_leaving_a_with_block_stops_every_login(api: Api, stuck: bf.Sandbox, progress: bool) -> None:
    client = api.client(stuck, poll_timeout=60)
    ids = [str(uuid.uuid4()), *stuck.login_ids]
    if api.is_async:

        async def first_in_block() -> Any:
            async with client.investments_many(ids, concurrency=8, progress=progress) as results:
                _, first = await results.__anext__()
                await asyncio.sleep(0.1)
            return first

        first = api.run(first_in_block())
    else:
        with client.investments_many(ids, concurrency=8, progress=progress) as results:
            _, first = next(results)
            time.sleep(0.1)
    assert isinstance(first, bf.InvalidLogin)
    assert (later := requests_after(stuck)) == 0, f"{later} requests after the block"


def test_a_cancelled_acombine_stops_every_login(stuck: bf.Sandbox) -> None:
    async def cancelled() -> BaseException:
        # Not closed: closing the client would stop the logins whatever acombine does.
        client = stuck.async_client(poll_interval=0.01, poll_timeout=60)
        try:
            await asyncio.wait_for(bf.acombine(client.investments_many(stuck.login_ids, concurrency=8)), 0.2)
        except asyncio.TimeoutError as exc:
            return exc
        raise AssertionError("acombine ended while every login was pending")

    # The exception is kept, with the traceback that holds acombine's frame and its iterator.
    kept = asyncio.run(cancelled())
    assert (later := requests_after(stuck)) == 0, f"{later} requests after the cancel"
    assert kept.__traceback__ is not None


#: A child that asks a sync bulk iterator for more after its end: after the last pair, after
#: close() and the ClientClosed pairs of the logins it cut off, after those of its closed client.
#: In process, a next() that blocks holding the GIL would freeze the whole test run.
NEXT_AFTER_THE_END = """
import sys, uuid
import bankfeed as bf
with bf.Sandbox(logins=4, pending_seconds=0 if sys.argv[1] == "exhausted" else 60) as sb:
    client = sb.client(poll_interval=0.01)
    results = client.investments_many([str(uuid.uuid4()), *sb.login_ids])
    if sys.argv[1] == "exhausted":
        assert len(list(results)) == 5
    else:
        next(results)
        results.close() if sys.argv[1] == "closed" else client.close()
        rest = list(results)
        assert sorted(login_id for login_id, _ in rest) == sorted(sb.login_ids), rest
        assert all(isinstance(result, bf.ClientClosed) for _, result in rest), rest
    try:
        next(results)
    except StopIteration:
        print("ended", flush=True)
        sys.exit(0)
    print("gave more", flush=True)
"""


@pytest.mark.parametrize("end", ["exhausted", "closed", "client_closed"])
def test_a_sync_iterator_that_ended_stays_ended(end: str) -> None:
    # A next() that waited for the pending logins would take their 60 s: 30 s catches it, and
    # leaves a loaded machine time to start Python and a sandbox (1.5 s did not, under load).
    child = subprocess.run([sys.executable, "-c", NEXT_AFTER_THE_END, end], capture_output=True, text=True, timeout=30)
    assert child.returncode == 0 and child.stdout == "ended\n", child.stderr[-2000:]


def test_a_closed_async_iterator_ends(stuck: bf.Sandbox) -> None:
    api = Api("async")
    try:
        results = api.client(stuck, poll_timeout=60).investments_many([str(uuid.uuid4()), *stuck.login_ids])
        close_after_first(api, results)

        async def after() -> None:
            rest = [await asyncio.wait_for(results.__anext__(), 2) for _ in stuck.login_ids]
            assert sorted(login_id for login_id, _ in rest) == sorted(stuck.login_ids)
            assert all(isinstance(result, bf.ClientClosed) for _, result in rest), rest
            with pytest.raises(StopAsyncIteration):
                await asyncio.wait_for(results.__anext__(), 2)
            with pytest.raises(StopAsyncIteration):
                await asyncio.wait_for(results.__anext__(), 2)

        api.run(after())
    finally:
        api.close()


def test_a_bulk_iterator_left_unfinished_and_dropped_stops_too(api: Api, stuck: bf.Sandbox) -> None:
    client = api.client(stuck, poll_timeout=60)
    if api.is_async:

        async def start_then_drop() -> None:
            results = client.investments_many([str(uuid.uuid4()), *stuck.login_ids])
            await results.__anext__()
            await asyncio.sleep(0.1)

        api.run(start_then_drop())
    else:
        results = client.investments_many([str(uuid.uuid4()), *stuck.login_ids])
        next(results)
        time.sleep(0.1)
        del results
    time.sleep(0.05)
    before = stuck.request_count
    time.sleep(0.2)
    assert stuck.request_count == before, f"{stuck.request_count - before} requests after the iterator was dropped"


def test_waiting_for_the_next_result_lets_other_threads_run() -> None:
    with bf.Sandbox(logins=4, pending_seconds=0.5) as sb:
        client = sb.client(poll_interval=0.02, poll_timeout=10)
        turns: list[float] = []
        stop = threading.Event()

        def ticker() -> None:
            while not stop.is_set():
                turns.append(time.monotonic())
                time.sleep(0.002)

        thread = threading.Thread(target=ticker, daemon=True)
        thread.start()
        try:
            started = time.monotonic()
            pairs = list(client.investments_many(sb.login_ids))
            ended = time.monotonic()
        finally:
            stop.set()
            thread.join(5)
    assert all(isinstance(result, bf.Investments) for _, result in pairs)
    inside = [t for t in turns if started <= t <= ended]
    gaps = [b - a for a, b in itertools.pairwise([started, *inside, ended])]
    # A wait holding the GIL would stop the ticker for the whole half second.
    assert ended - started >= 0.45 and max(gaps) < 0.2, f"the ticker stopped for {max(gaps):.3f} s"


def test_closing_the_iterator_from_another_thread_ends_a_waiting_next() -> None:
    # Every login stays pending: the iterating thread waits in next() when close() comes.
    with bf.Sandbox(logins=4, pending_polls=100_000) as sb:
        results = sb.client(poll_interval=0.05).investments_many(sb.login_ids, concurrency=4)
        got: list[list[tuple[str, Any]]] = []
        waiter = threading.Thread(target=lambda: got.append(list(results)))
        waiter.start()
        time.sleep(0.3)
        results.close()
        waiter.join(2)
        assert not waiter.is_alive(), "next() went on waiting after close()"
        # Every login was still pending: each comes back as cut off by the close, none is lost.
        [pairs] = got
        assert sorted(login_id for login_id, _ in pairs) == sorted(sb.login_ids)
        assert all(isinstance(result, bf.ClientClosed) for _, result in pairs), pairs
        before = sb.request_count
        time.sleep(0.3)
        assert sb.request_count == before, "logins went on polling after close()"


def test_aclose_ends_an_anext_that_is_waiting() -> None:
    async def main(sb: bf.Sandbox) -> None:
        results = sb.async_client(poll_interval=0.05).investments_many(sb.login_ids, concurrency=4)
        waiting = asyncio.ensure_future(anext(results))
        await asyncio.sleep(0.3)
        await results.aclose()
        # The waiting anext ends with the first login the close cut off; the others follow.
        pairs = [await asyncio.wait_for(waiting, 2)]
        pairs += [pair async for pair in results]
        assert sorted(login_id for login_id, _ in pairs) == sorted(sb.login_ids)
        assert all(isinstance(result, bf.ClientClosed) for _, result in pairs), pairs
        before = sb.request_count
        await asyncio.sleep(0.3)
        assert sb.request_count == before, "logins went on polling after aclose()"

    with bf.Sandbox(logins=4, pending_polls=100_000) as sb:
        asyncio.run(main(sb))


# --- A bulk call stopped before its end: every login asked is accounted for -----------------


#: When the watchdogs stop a bulk call of `slow`: some logins are done by then, most are not.
WATCHDOG = 0.8


@pytest.fixture(scope="module")
def slow() -> Iterator[bf.Sandbox]:
    """40 saved logins, each pending for a few polls: a bulk call of them at a concurrency of 4
    takes about two seconds."""
    with bf.Sandbox(logins=40, pending_polls=3) as sb:
        yield sb


def check_cut_short(combined: bf.Combined[Any], asked: list[str], cut_by: str) -> None:
    """``combined`` holds every LoginId of ``asked`` once: in its tables (fetched) or in its errors
    (a ClientClosed naming the bulk call and what cut it), and some of each."""
    fetched = set(combined.positions.to_pandas()["login_id"]) if combined.kind else set()
    errors = combined.errors
    assert fetched.isdisjoint(errors)
    assert fetched | set(errors) == set(asked)
    assert errors, "the stop came after every login had finished"
    for error in errors.values():
        assert type(error) is bf.ClientClosed, repr(error)
        assert error.operation == "investments_many"
        assert cut_by in str(error) and "before this login finished" in str(error), str(error)


def combine_stopped(api: Api, results: Any, stop: Callable[[], Awaitable[None] | None]) -> bf.Combined[Any]:
    """``bf.combine`` (``bf.acombine`` for an async client) of ``results``, with ``stop`` called by
    a watchdog ``WATCHDOG`` seconds in (awaited when it returns an awaitable), as a job bounds a
    whole bulk call."""
    if api.is_async:

        async def bounded() -> bf.Combined[Any]:
            async def watchdog() -> None:
                await asyncio.sleep(WATCHDOG)
                stopped = stop()
                if stopped is not None:
                    await stopped

            dog = asyncio.ensure_future(watchdog())
            combined = await bf.acombine(results)
            await dog
            return combined

        gathered: bf.Combined[Any] = api.run(bounded())
        return gathered
    timer = threading.Timer(WATCHDOG, stop)
    timer.start()
    combined = bf.combine(results)
    timer.join()
    return combined


@pytest.mark.parametrize("progress", [False, True], ids=["plain", "progress"])
def test_a_watchdog_closing_the_iterator_leaves_every_unfetched_login_in_errors(
    api: Api, slow: bf.Sandbox, progress: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A job that bounds a bulk call with a timer: what was fetched is kept, every other login is
    named in ``errors`` (before, the reader just ended: a partial result that looked whole)."""
    monkeypatch.setitem(sys.modules, "tqdm", None)
    client = api.client(slow, poll_interval=0.05)
    results = client.investments_many(slow.login_ids, concurrency=4, progress=progress)
    stop = results.aclose if api.is_async else results.close
    combined = combine_stopped(api, results, stop)
    check_cut_short(combined, slow.login_ids, "was closed")
    assert combined.kind == "Investments", f"nothing was fetched in {WATCHDOG} s"


def test_closing_the_client_during_a_bulk_read_keeps_what_was_fetched(api: Api, slow: bf.Sandbox) -> None:
    """``client.close()`` while ``combine`` reads: the rows fetched are kept and every other login
    is a ClientClosed in ``errors``, instead of one ClientClosed for the call that lost them all."""
    client = api.client(slow, poll_interval=0.05)
    results = client.investments_many(slow.login_ids, concurrency=4)
    combined = combine_stopped(api, results, client.close)
    check_cut_short(combined, slow.login_ids, "the client was closed")
    assert combined.kind == "Investments", f"nothing was fetched in {WATCHDOG} s"
    with pytest.raises(bf.ClientClosed):
        # A bulk call of a closed client is refused, as every call is.
        client.investments_many(slow.login_ids)


def test_a_login_given_twice_and_cut_off_comes_back_twice(api: Api, stuck: bf.Sandbox) -> None:
    ids = [*stuck.login_ids[:2], stuck.login_ids[0]]
    results = api.client(stuck, poll_timeout=60).investments_many(ids)
    api.close_results(results)
    cut_off = api.collect(results)
    assert Counter(login_id for login_id, _ in cut_off) == Counter(ids)
    assert all(isinstance(result, bf.ClientClosed) for _, result in cut_off), cut_off
    assert api.collect(results) == []
