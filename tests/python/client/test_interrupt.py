"""Ctrl-C stops a waiting call at once. Client only: a blocking call waits on the thread that
gets the signal, where an ``AsyncClient`` call is a task that is cancelled instead
(runtime/test_async_client.py). A logging setup that fails is one case for both clients."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import pytest

import bankfeed as bf
from bfhelpers import INSTITUTION, PASSWORD, Api, ctrl_c_after, login_id_of


def test_ctrl_c_interrupts_a_long_poll_promptly() -> None:
    with bf.Sandbox(pending_seconds=60) as sb:
        client = sb.client(poll_interval=0.2, poll_timeout=60)
        session = client.authorize(INSTITUTION, "greatday_nomfa", PASSWORD, save=True)
        assert isinstance(session, bf.Session)
        with ctrl_c_after(0.5) as fired:
            with pytest.raises(KeyboardInterrupt):
                session.investments()
            returned = time.monotonic()
        assert fired, "the call ended before the interrupt"
        assert returned - fired[0] < 1.0

        # The client still works after an interrupted call.
        again = client.authorize_cached(login_id_of(session))
        assert isinstance(again, bf.Session)


CALLS: dict[str, Callable[[bf.Sandbox, str], object]] = {
    "Client": lambda sb, login_id: sb.client().investments(login_id),
    "AsyncClient": lambda sb, login_id: sb.async_client().investments(login_id),
    "investments_many": lambda sb, login_id: sb.client().investments_many([login_id]),
}


@pytest.mark.parametrize("call", CALLS.values(), ids=CALLS.keys())
def test_a_ctrl_c_that_comes_as_a_call_starts_stops_it(
    monkeypatch: pytest.MonkeyPatch, call: Callable[[bf.Sandbox, str], object]
) -> None:
    # A call first asks the bankfeed loggers their levels (docs/logging.md). Python raises a
    # Ctrl-C at the next bytecode it runs, which can be inside that question: the call must end
    # with it, not go on (it did, and a `kill -INT` just after a start was lost).
    with bf.Sandbox(logins=1) as sb:
        login_id = sb.login_ids[0]
        before = sb.request_count

        def interrupted(level: int) -> bool:
            raise KeyboardInterrupt

        monkeypatch.setattr(logging.getLogger("bankfeed.http"), "isEnabledFor", interrupted)
        with pytest.raises(KeyboardInterrupt):
            call(sb, login_id)
        monkeypatch.undo()
        assert sb.request_count == before, "the interrupted call sent a request"


def test_a_logging_setup_that_fails_to_answer_does_not_fail_a_call(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    # Only an interrupt leaves: a logger whose level cannot be read means no logging, not no call.
    def broken(level: int) -> bool:
        raise RuntimeError("a broken logging setup")

    monkeypatch.setattr(logging.getLogger("bankfeed.http"), "isEnabledFor", broken)
    with bf.Sandbox(logins=1) as sb:
        assert api.run(api.client(sb).investments(sb.login_ids[0])).accounts
