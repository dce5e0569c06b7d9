"""The interpreter exits cleanly with calls in flight: no crash, no panic, the expected exit code.

Each run is a fresh interpreter that starts calls on threads (against a server that never
answers, or a sandbox whose data stays pending), lets them wait, and leaves while they still
wait: by the end of the script, by ``sys.exit`` or by an uncaught exception, with daemon threads,
and once with non-daemon threads the interpreter waits for. A waiting call wakes every 50 ms to
take the GIL, so runs repeated many times meet the interpreter at every stage of its shutdown
(docs/architecture.md#exit-with-calls-in-flight)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

#: How long one run may take: far more than the second it needs, far below "forever".
DEADLINE = 60.0

#: What a crash, a panic or a failure at shutdown prints.
CRASH_MARKS = (
    "panicked",
    "Fatal Python error",
    "Segmentation fault",
    "core dumped",
    "Aborted",
    "fatal runtime error",
    "Logging error",
    "Exception ignored",
)

SCRIPT = textwrap.dedent(
    """
    import logging, socket, sys, threading, time
    import bankfeed as bf

    server, leave, threads = sys.argv[1:4]
    # Records go to stdout, so that stderr holds only what a crash or a panic would print; with
    # sandbox-debug, records of the IO threads reach Python while the interpreter goes away.
    logging.basicConfig(level=logging.DEBUG if server == "sandbox-debug" else logging.WARNING, stream=sys.stdout)
    if server == "silent":
        # Connections wait in the listen backlog; nothing is ever answered.
        silent = socket.socket()
        silent.bind(("127.0.0.1", 0))
        silent.listen(64)
        url = "http://127.0.0.1:%d" % silent.getsockname()[1]
        # Non-daemon threads are waited for: their calls end on this timeout.
        timeout = 1.0 if threads == "nondaemon" else 240.0
        client = bf.Client(url, "43387ca6-0391-4c82-857d-70d95f087ecb", timeout=timeout, max_retries=0)
        login_id = "5e0e5f83-6e9b-4a2c-a6a3-0d8f4b1c9e21"
        calls = [lambda: client.authorize_cached(login_id), lambda: client.authorize("FlinksCapital", "u", "p")]
    elif server == "handler":
        # Logins whose challenge handler runs on the threads, again and again.
        sb = bf.Sandbox()
        client = sb.client(poll_interval=0.01)
        answers = bf.answers({
            "What city were you born in?": "Montreal",
            "What is the best country on earth?": "Canada",
            "What shape do people like most?": "Triangle",
        })

        def handler(challenge):
            time.sleep(0.005)
            return answers(challenge)

        def logins():
            while True:
                client.login("FlinksCapital", "Greatday", "Everyday", on_challenge=handler)

        calls = [logins]
    else:
        sb = bf.Sandbox(pending_seconds=120)
        client = sb.client(poll_interval=0.01)
        session = client.authorize("FlinksCapital", "greatday_nomfa", "Everyday")
        calls = [session.investments, session.accounts_detail, session.statements]

    started = threading.Barrier(9)

    def work(call):
        started.wait()
        try:
            call()
        except bf.TransportError:
            pass
        except RuntimeError as error:
            # A handler is not called once the exit has begun (docs/architecture.md#exit-with-calls-in-flight).
            assert "exiting" in str(error), error

    for i in range(8):
        threading.Thread(target=work, args=(calls[i % len(calls)],), daemon=threads == "daemon").start()
    started.wait()
    time.sleep(0.3)
    print("leaving", flush=True)
    if leave == "sys.exit":
        sys.exit(3)
    if leave == "raise":
        raise RuntimeError("left by an uncaught exception")
    """
)

#: (server, how the main thread leaves, threads), the exit code each run must end with, and how
#: many times it runs: more for the cases that run Python code from Rust on the threads at exit
#: (IO threads logging, handlers), which aborted about one run in twelve before the exit gate.
CASES = [
    (("silent", "end", "daemon"), 0, 2),
    (("silent", "sys.exit", "daemon"), 3, 2),
    (("silent", "raise", "daemon"), 1, 2),
    (("sandbox", "end", "daemon"), 0, 2),
    (("sandbox", "sys.exit", "daemon"), 3, 2),
    (("sandbox-debug", "end", "daemon"), 0, 8),
    (("sandbox-debug", "sys.exit", "daemon"), 3, 4),
    (("handler", "end", "daemon"), 0, 4),
]


def run_once(case: tuple[str, str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, *case], capture_output=True, text=True, timeout=DEADLINE, check=False
    )


def check(case: tuple[str, str, str], expected: int, done: subprocess.CompletedProcess[str]) -> None:
    where = f"{case}: exit code {done.returncode}, stderr: {done.stderr[-3000:]}"
    assert done.returncode == expected, where
    assert "leaving" in done.stdout, where
    for mark in CRASH_MARKS:
        assert mark not in done.stderr, where
    if case[1] == "raise":
        assert done.stderr.rstrip().endswith("RuntimeError: left by an uncaught exception"), where
    else:
        assert done.stderr == "", where


def test_exit_with_calls_in_flight_many_times() -> None:
    runs = [(case, expected) for case, expected, repeat in CASES for _ in range(repeat)]
    started = time.monotonic()
    # Two at a time: the machine's cores, and interpreters that exit while another one runs.
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda run: run_once(run[0]), runs))
    for (case, expected), done in zip(runs, results, strict=True):
        check(case, expected, done)
    assert len(results) >= 20
    assert time.monotonic() - started < 10 * DEADLINE


@pytest.mark.parametrize("leave", ["end", "sys.exit"])
def test_non_daemon_threads_are_waited_for_until_their_calls_end(leave: str) -> None:
    started = time.monotonic()
    done = run_once(("silent", leave, "nondaemon"))
    check(("silent", leave, "nondaemon"), 3 if leave == "sys.exit" else 0, done)
    # Their calls ended on the 1 s timeout, not on the interpreter's exit.
    assert time.monotonic() - started >= 1.0
