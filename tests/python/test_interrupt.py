"""Ctrl-C stops a waiting call at once."""

from __future__ import annotations

import _thread
import threading
import time

import pytest

import bankfeed as bf
from bfhelpers import INSTITUTION, PASSWORD, login_id_of


def test_ctrl_c_interrupts_a_long_poll_promptly() -> None:
    with bf.Sandbox(pending_seconds=60) as sb:
        client = sb.client(poll_interval=0.2, poll_timeout=60)
        session = client.authorize(INSTITUTION, "greatday_nomfa", PASSWORD, save=True)
        assert isinstance(session, bf.Session)
        fired: list[float] = []

        def interrupt() -> None:
            fired.append(time.monotonic())
            _thread.interrupt_main()

        timer = threading.Timer(0.5, interrupt)
        timer.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                session.investments()
            returned = time.monotonic()
        finally:
            timer.cancel()
        assert fired, "the call ended before the interrupt"
        assert returned - fired[0] < 1.0

        # The client still works after an interrupted call.
        again = client.authorize_cached(login_id_of(session))
        assert isinstance(again, bf.Session)
