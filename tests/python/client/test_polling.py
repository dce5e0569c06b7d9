"""202 polling of data calls, for ``bf.Client`` and ``bf.AsyncClient`` alike (the ``api``
fixture): repeated until 200, bounded by poll_timeout, a session still loading retried, and a call
that stopped (its poll timeout, a failure between two polls) resumed with the RequestId it names.
Only the blocking client's wait is measured for the GIL: an ``AsyncClient`` call does not block a
thread while it waits, it yields to its event loop (runtime/test_async_client.py)."""

from __future__ import annotations

import ctypes
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import pytest

import bankfeed as bf
from bfhelpers import INSTITUTION, PASSWORD, Api, assert_investments, investment_posts, login_id_of, raises

T = TypeVar("T")

#: The longest another Python thread may wait for the GIL while a call waits on the network.
#: CPython hands the GIL over every 5 ms (sys.getswitchinterval()); 0.2 s leaves room for a
#: loaded machine and is still five times shorter than the one-second wait it guards.
MAX_STALL = 0.2


def open_session(api: Api, sb: bf.Sandbox, **options: Any) -> Any:
    """A saved session of the user without challenges, on a client of ``sb`` of the case's kind."""
    session = api.run(api.client(sb, **options).authorize(INSTITUTION, "greatday_nomfa", PASSWORD, save=True))
    assert isinstance(session, api.Session)
    return session


def stall_during(call: Callable[[], T]) -> tuple[T, float, float]:
    """Runs ``call`` while another Python thread notes the time at every turn of a loop.

    Returns the call's result, how long it lasted, and the longest stretch of the call during
    which that thread did not run a single turn: the time it waited for the GIL. While the GIL is
    released the thread turns every few microseconds; while the call holds it, the thread stops
    for the whole call.
    """
    stop = threading.Event()
    ready = threading.Event()
    gaps: list[tuple[float, float]] = []

    def ticker() -> None:
        previous = time.monotonic()
        ready.set()
        while not stop.is_set():
            now = time.monotonic()
            if now - previous > 0.001:
                gaps.append((previous, now))
            previous = now
        # The last stretch counts too: when the GIL comes back to this thread only once the call
        # has ended and `stop` is set (other threads of the process took it first), the loop ends
        # at its next check, and the wait would otherwise go unrecorded.
        now = time.monotonic()
        if now - previous > 0.001:
            gaps.append((previous, now))

    thread = threading.Thread(target=ticker, daemon=True)
    thread.start()
    assert ready.wait(5)
    started = time.monotonic()
    try:
        result = call()
    finally:
        ended = time.monotonic()
        stop.set()
        thread.join(5)
    # A gap that began before the call or ended after it counts only for its part inside the call.
    longest = max((min(end, ended) - max(begin, started) for begin, end in gaps), default=0.0)
    return result, ended - started, longest


@pytest.mark.parametrize("via", ["session", "client"])
def test_investments_returns_the_payload(api: Api, sandbox: bf.Sandbox, via: str) -> None:
    client = api.client(sandbox)
    session = api.run(client.authorize(INSTITUTION, "greatday_nomfa", PASSWORD, save=True))
    assert isinstance(session, api.Session) and session.login_id is not None
    payload = api.run(session.investments() if via == "session" else client.investments(session.login_id))
    assert_investments(payload)
    if via == "session":
        assert payload.request_id is not None
        assert payload.request_id.lower() == session.request_id.lower()


def test_investments_polls_until_200(api: Api) -> None:
    with bf.Sandbox(pending_polls=3) as sb:
        session = open_session(api, sb, poll_interval=0.01, poll_timeout=10)
        assert investment_posts(sb) == 0
        payload = api.run(session.investments())
        assert_investments(payload)
        posts = [r for r in sb.requests if r["path"].rstrip("/").endswith("/Investments")]
        assert [r["method"].upper() for r in posts] == ["POST"] * 4
        assert [int(r["status"]) for r in posts] == [202, 202, 202, 200]


def test_pending_timeout_is_raised_when_the_poll_timeout_runs_out(api: Api) -> None:
    with bf.Sandbox(pending_seconds=30) as sb:
        session = open_session(api, sb, poll_interval=0.05, poll_timeout=0.3)
        started = time.monotonic()
        with raises(bf.PendingTimeout) as info:
            api.run(session.investments())
        elapsed = time.monotonic() - started
        assert elapsed < 2.0
        exc = info.value
        assert exc.request_id is not None
        assert exc.request_id.lower() == session.request_id.lower()
        assert exc.waited >= 0.3
        assert exc.waited <= elapsed + 0.05
        assert investment_posts(sb) >= 2


# --- The blocking client's wait and the GIL -------------------------------------------------


@pytest.mark.timing
def test_a_waiting_call_lets_other_python_threads_run() -> None:
    """Client only: a blocking call releases the GIL while it waits."""
    with bf.Sandbox(pending_seconds=1.0) as sb:
        session = open_session(Api("sync"), sb, poll_interval=0.05, poll_timeout=10)
        payload, elapsed, stall = stall_during(session.investments)
    assert_investments(payload)
    assert elapsed >= 0.9, "the call must wait long enough for a held GIL to show"
    # A held GIL would stop the other thread for the whole second.
    assert stall < MAX_STALL, f"another thread waited {stall:.3f} s for the GIL during a {elapsed:.2f} s call"


@pytest.mark.timing
def test_the_stall_measure_sees_a_held_gil() -> None:
    """The control of the test above: a C call that keeps the GIL (ctypes.PyDLL does not release
    it) stops the other thread for its whole length, and the same call releasing the GIL
    (ctypes.CDLL) does not. So the measure tells a held GIL from a released one."""
    usleep_holding = ctypes.PyDLL(None).usleep
    usleep_releasing = ctypes.CDLL(None).usleep
    _, elapsed, stall = stall_during(lambda: usleep_holding(1_000_000))
    assert elapsed >= 0.9 and stall >= 0.8, f"stall {stall:.3f} s during a GIL-holding {elapsed:.2f} s call"
    _, elapsed, stall = stall_during(lambda: usleep_releasing(1_000_000))
    assert elapsed >= 0.9 and stall < MAX_STALL, f"stall {stall:.3f} s during a GIL-releasing {elapsed:.2f} s call"


# --- Retried and resumed --------------------------------------------------------------------


def test_a_session_still_loading_is_retried_within_the_deadline(api: Api) -> None:
    with bf.Sandbox(loading_polls=2, pending_polls=1) as sb:
        session = open_session(api, sb, poll_interval=0.01, poll_timeout=10)
        assert_investments(api.run(session.investments()))
        posts = [r for r in sb.requests if r["path"].rstrip("/").endswith("/Investments")]
        assert [int(r["status"]) for r in posts] == [400, 400, 202, 200]


#: A failure between two polls, as the sandbox makes it (docs/sandbox.md#faults): the network
#: gone, and a proxy's page where a 202 belonged.
BETWEEN_POLLS = {
    "connection lost": ({"kind": "drop_before_response"}, bf.TransportError),
    "proxy page": ({"kind": "html_error_page", "status": 202}, bf.DecodeError),
}


@pytest.mark.parametrize(("fault", "cls"), BETWEEN_POLLS.values(), ids=BETWEEN_POLLS.keys())
def test_a_failure_between_two_polls_names_the_request_id_to_resume(
    api: Api, fault: dict[str, Any], cls: type[bf.TransportError | bf.DecodeError]
) -> None:
    with bf.Sandbox(pending_polls=3, logins=2) as sb:
        client = api.client(sb, max_retries=0)
        first, second = sb.login_ids
        # The first Investments request is answered (202), the second is the fault.
        sb.inject({"kind": "latency", "seconds": 0, "operation": "Investments"}, {**fault, "operation": "Investments"})
        with raises(cls) as info:
            api.run(client.investments(first))
        exc = info.value
        assert exc.request_id is not None, str(exc)
        assert f'client.investments(login_id, request_id="{exc.request_id}")' in str(exc)
        # Resumed where it stood: no new Authorize, the same RequestId's data.
        authorizes = sum(r["path"].endswith("/Authorize") for r in sb.requests)
        assert api.run(client.investments(first, request_id=exc.request_id)).request_id == exc.request_id
        assert sum(r["path"].endswith("/Authorize") for r in sb.requests) == authorizes

        # A bulk call's pair names its request_ids=, which resumes it.
        sb.inject({"kind": "latency", "seconds": 0, "operation": "Investments"}, {**fault, "operation": "Investments"})
        failed = dict(api.collect(client.investments_many([second], concurrency=1)))[second]
        assert isinstance(failed, cls) and failed.request_id is not None, failed
        assert f'request_ids={{login_id: "{failed.request_id}"}}' in str(failed)
        resumed = dict(api.collect(client.investments_many([second], request_ids={second: failed.request_id})))[second]
        assert isinstance(resumed, bf.Investments) and resumed.request_id == failed.request_id


def test_a_failed_first_data_request_keeps_the_sessions_request_id_and_authorize_none(api: Api) -> None:
    with bf.Sandbox(logins=1, faults=[{"kind": "drop_before_response", "operation": "Investments"}]) as sb:
        client, login_id = api.client(sb, max_retries=0), sb.login_ids[0]
        with raises(bf.TransportError) as info:
            api.run(client.investments(login_id))
        # The session the cached Authorize opened is the one to resume: no second Authorize.
        assert info.value.request_id is not None
        resumed = api.run(client.investments(login_id, request_id=info.value.request_id))
        assert resumed.request_id == info.value.request_id
        assert sum(r["path"].endswith("/Authorize") for r in sb.requests) == 1
        # A failed Authorize opened nothing: no RequestId, and no advice to resume.
        sb.inject({"kind": "drop_before_response", "operation": "Authorize"})
        with raises(bf.TransportError) as info:
            api.run(client.investments(login_id))
        assert info.value.request_id is None
        assert "stays open" not in str(info.value)


#: Polls a data call answers 202 in the resuming tests: at 0.01 s a poll, longer than IMPATIENT.
SLOW_POLLS = 25
IMPATIENT = 0.05


@pytest.fixture
def slow_sandbox() -> Iterator[bf.Sandbox]:
    with bf.Sandbox(pending_polls=SLOW_POLLS) as sb:
        yield sb


def authorizes(sb: bf.Sandbox) -> int:
    return sum(1 for r in sb.requests if r["path"].rstrip("/").endswith("/Authorize"))


def test_investments_resume_with_the_request_id_a_pending_timeout_names(api: Api, slow_sandbox: bf.Sandbox) -> None:
    impatient = api.client(slow_sandbox, poll_timeout=IMPATIENT)
    login_id = login_id_of(api.run(impatient.authorize(INSTITUTION, "greatday_nomfa", PASSWORD, save=True)))
    with raises(bf.PendingTimeout, operation="Investments") as info:
        api.run(impatient.investments(login_id))
    request_id = info.value.request_id
    assert request_id is not None and f'request_id="{request_id}"' in str(info.value)
    posted, logins = investment_posts(slow_sandbox), authorizes(slow_sandbox)
    assert 1 <= posted < SLOW_POLLS

    patient = api.client(slow_sandbox)
    investments = api.run(patient.investments(login_id, request_id=request_id))
    assert_investments(investments)
    assert investments.request_id is not None and investments.request_id.lower() == request_id.lower()
    # No new session: polling went on where it stood, to the 202s left and the 200.
    assert authorizes(slow_sandbox) == logins
    assert investment_posts(slow_sandbox) == SLOW_POLLS + 1


def test_attributes_resume_with_request_id(api: Api, slow_sandbox: bf.Sandbox) -> None:
    impatient = api.client(slow_sandbox, poll_timeout=IMPATIENT)
    login_id = login_id_of(api.run(impatient.authorize(INSTITUTION, "greatday_nomfa", PASSWORD, save=True)))
    with raises(bf.PendingTimeout) as info:
        api.run(impatient.attributes(login_id, package="income"))
    request_id = info.value.request_id
    assert request_id is not None and request_id in str(info.value)
    # Pending on the account detail it waits for first, the message still names the attributes call.
    assert info.value.operation == "GetAccountsDetail"
    assert f'client.attributes(login_id, ..., request_id="{request_id}")' in str(info.value)
    logins = authorizes(slow_sandbox)
    attributes = api.run(api.client(slow_sandbox).attributes(login_id, package="income", request_id=request_id))
    assert isinstance(attributes, bf.Attributes) and len(attributes.values) > 0
    assert authorizes(slow_sandbox) == logins


def test_a_session_data_call_resumes_through_client_session(api: Api, slow_sandbox: bf.Sandbox) -> None:
    impatient = api.client(slow_sandbox, poll_timeout=IMPATIENT)
    login_id = login_id_of(api.run(impatient.authorize(INSTITUTION, "greatday_nomfa", PASSWORD, save=True)))
    session = api.run(impatient.authorize_cached(login_id))
    with raises(bf.PendingTimeout, operation="GetAccountsDetail", request_id=session.request_id) as info:
        api.run(session.accounts_detail())
    assert f'client.session("{session.request_id}", login_id=login_id)' in str(info.value)
    logins = authorizes(slow_sandbox)
    detail = api.run(api.client(slow_sandbox).session(session.request_id, login_id=login_id).accounts_detail())
    assert isinstance(detail, bf.Accounts) and len(detail.accounts) > 0
    assert authorizes(slow_sandbox) == logins
