"""Log records never run Python on the IO threads (docs/logging.md#threads-and-the-gil).

Records are queued where they happen and handed to ``logging`` by one thread of bankfeed's own,
which a fork waits for. So:

- a handler that blocks delays no call: an unrelated client's ``deadline`` still ends its call on
  time (before, every IO thread stopped in the handler, and a ``deadline=2`` call took 7.5 s);
- a child forked while records are being emitted never hangs in its first call (before, about one
  child in ten inherited a lock held mid-write by an IO thread, and hung past its deadline);
- a record keeps the time and the thread of its event, and a blocking call's records come before
  its result.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator

import bankfeed as bf
from bfhelpers import INSTITUTION, PASSWORD

#: What a blocked handler waits at most: far beyond any call under test.
HELD = 60.0


class Blocking(logging.Handler):
    """A handler that blocks on every record until released, as one writing to a full pipe or a
    stalled network sink does."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.go = threading.Event()
        self.entered = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        self.entered.set()
        self.go.wait(HELD)


@contextlib.contextmanager
def handled_by(handler: logging.Handler) -> Iterator[None]:
    logger = logging.getLogger("bankfeed")
    previous = logger.level
    logger.setLevel(logging.DEBUG)
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous)


def test_a_handler_that_blocks_delays_no_call(sandbox: bf.Sandbox) -> None:
    handler = Blocking()
    outcome: list[object] = []
    with handled_by(handler):
        client = sandbox.client(poll_interval=0.01, deadline=2)

        def call() -> None:
            session = client.login(INSTITUTION, "greatday_nomfa", PASSWORD, save=True)
            outcome.append(session)
            outcome.append(client.authorize_cached(session.login_id or "").accounts_summary())

        worker = threading.Thread(target=call, daemon=True)
        started = time.monotonic()
        worker.start()
        worker.join(30)
        elapsed = time.monotonic() - started
        assert handler.entered.is_set(), "records reached the handler"
        finished = not worker.is_alive()
        handler.go.set()
    assert finished, "the calls waited for a handler that blocks"
    assert isinstance(outcome[-1], bf.Accounts), outcome
    # Each call waits for its records for a moment at most (docs/logging.md#threads-and-the-gil).
    assert elapsed < 20, elapsed


def test_an_async_call_is_not_held_by_a_handler_that_blocks(sandbox: bf.Sandbox) -> None:
    handler = Blocking()

    async def main() -> bf.AsyncSession | bf.AsyncChallenge:
        client = sandbox.async_client(poll_interval=0.01, deadline=2)
        return await asyncio.wait_for(client.authorize(INSTITUTION, "greatday_nomfa", PASSWORD), 30)

    with handled_by(handler):
        try:
            session = asyncio.run(main())
            # An AsyncClient call does not wait for its records: they follow its result by a
            # moment (docs/logging.md#threads-and-the-gil), so the first may reach the handler
            # only now, and it must still be attached then (on a loaded machine, the moment
            # outlasted the `with`, and the record went to a logger without it).
            entered = handler.entered.wait(5)
        finally:
            handler.go.set()
    assert isinstance(session, bf.AsyncSession)
    assert entered, "records reached the handler"


def test_records_keep_the_time_and_thread_of_their_event_and_come_before_the_result(sandbox: bf.Sandbox) -> None:
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    client = sandbox.client(poll_interval=0.01)
    with handled_by(Keep(logging.DEBUG)):
        before = time.time()
        session = client.authorize(INSTITUTION, "greatday_nomfa", PASSWORD)
        after = time.time()
        # No wait: the call's records were emitted before it returned. (Records of earlier calls
        # still waiting for a handler may come too: a record goes to the handlers there are when
        # it is emitted.)
        ours = [record for record in records if session.request_id in record.getMessage()]
    assert ours, [record.getMessage() for record in records]
    assert all(before <= record.created <= after for record in ours), [r.created for r in ours]
    assert {record.threadName for record in ours} == {"bankfeed-io"}


#: A parent that logs every request at DEBUG through a handler holding a lock of its own (as a
#: handler serialising writes to a shared file does) while it forks children that each make a
#: call with a deadline. A child that inherits the lock held dies in its first record.
FORKS = """
import logging, os, signal, sys, threading, time, warnings
import bankfeed as bf

warnings.simplefilter("ignore", DeprecationWarning)
writing = threading.Lock()

class Serialised(logging.Handler):
    def emit(self, record):
        with writing:
            time.sleep(0.002)

logging.getLogger("bankfeed").setLevel(logging.DEBUG)
logging.getLogger("bankfeed").addHandler(Serialised())

with bf.Sandbox() as sb:
    client = sb.client(poll_interval=0.001, deadline=5)
    stop = threading.Event()

    def busy():
        while not stop.is_set():
            client.authorize(%(institution)r, "greatday_nomfa", %(password)r)

    workers = [threading.Thread(target=busy, daemon=True) for _ in range(3)]
    for worker in workers:
        worker.start()
    time.sleep(0.2)
    hung = 0
    for _ in range(%(children)d):
        pid = os.fork()
        if pid == 0:
            try:
                bf.Client(sb.url, sb.customer_id, deadline=5).authorize(%(institution)r, "greatday_nomfa", %(password)r)
            finally:
                os._exit(0)
        started = time.monotonic()
        while not os.waitpid(pid, os.WNOHANG)[0]:
            if time.monotonic() - started > 15:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                hung += 1
                break
            time.sleep(0.01)
    stop.set()
    print("hung", hung)
"""


def test_children_forked_while_records_are_emitted_never_hang(sandbox: bf.Sandbox) -> None:
    code = FORKS % {"institution": INSTITUTION, "password": PASSWORD, "children": 30}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "hung 0", done.stdout
