"""202 polling of data calls: repeated until 200, bounded by poll_timeout, the GIL released."""

from __future__ import annotations

import threading
import time

import pytest

import bankfeed as bf
from bfhelpers import INSTITUTION, PASSWORD, assert_investments, investment_posts, raises


def open_session(sb, **options):
    client = sb.client(**options)
    session = client.authorize(INSTITUTION, "greatday_nomfa", PASSWORD, save=True)
    assert isinstance(session, bf.Session)
    return client, session


@pytest.mark.parametrize("via", ["session", "client"])
def test_investments_returns_the_payload(client, sandbox, via):
    session = client.authorize(INSTITUTION, "greatday_nomfa", PASSWORD, save=True)
    payload = session.investments() if via == "session" else client.investments(session.login_id)
    assert_investments(payload)
    if via == "session":
        assert payload.request_id.lower() == session.request_id.lower()


def test_investments_polls_until_200():
    with bf.Sandbox(pending_polls=3) as sb:
        client, session = open_session(sb, poll_interval=0.01, poll_timeout=10)
        assert investment_posts(sb) == 0
        payload = session.investments()
        assert_investments(payload)
        posts = [r for r in sb.requests if r["path"].rstrip("/").endswith("/Investments")]
        assert [r["method"].upper() for r in posts] == ["POST"] * 4
        assert [int(r["status"]) for r in posts] == [202, 202, 202, 200]


def test_pending_timeout_is_raised_when_the_poll_timeout_runs_out():
    with bf.Sandbox(pending_seconds=30) as sb:
        client, session = open_session(sb, poll_interval=0.05, poll_timeout=0.3)
        started = time.monotonic()
        with raises(bf.PendingTimeout) as info:
            session.investments()
        elapsed = time.monotonic() - started
        assert elapsed < 2.0
        exc = info.value
        assert exc.request_id.lower() == session.request_id.lower()
        assert exc.waited >= 0.3
        assert exc.waited <= elapsed + 0.05
        assert investment_posts(sb) >= 2


def test_a_waiting_call_lets_other_python_threads_run():
    with bf.Sandbox(pending_seconds=1.0) as sb:
        client, session = open_session(sb, poll_interval=0.05, poll_timeout=10)
        count = 0
        stop = threading.Event()

        def counter():
            nonlocal count
            while not stop.is_set():
                count += 1

        thread = threading.Thread(target=counter, daemon=True)
        started = time.monotonic()
        thread.start()
        try:
            payload = session.investments()
        finally:
            stop.set()
            thread.join(5)
        elapsed = time.monotonic() - started
        assert_investments(payload)
        assert elapsed >= 0.9
        # A held GIL would starve the counter for the whole second.
        assert count > 10_000


def test_a_session_still_loading_is_retried_within_the_deadline():
    with bf.Sandbox(loading_polls=2, pending_polls=1) as sb:
        client, session = open_session(sb, poll_interval=0.01, poll_timeout=10)
        assert_investments(session.investments())
        posts = [r for r in sb.requests if r["path"].rstrip("/").endswith("/Investments")]
        assert [int(r["status"]) for r in posts] == [400, 400, 202, 200]
