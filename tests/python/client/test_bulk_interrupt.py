"""Ctrl-C during a bulk call: a child process fetches many logins that stay pending, gets SIGINT,
and stops at once with KeyboardInterrupt, leaving nothing polling behind."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time

import pytest

#: How long after the signal the bulk call must have stopped.
STOP_WITHIN = 0.5
#: How long the child watches the request counter after it caught the interrupt.
QUIET = 0.3
#: How long without a request the child waits for, before it watches: the requests on the wire
#: when the call stopped have landed.
SETTLE = 0.05

#: What every child starts with: its imports, and what it does once it caught the interrupt:
#: watch the sandbox's request counter for requests sent after it.
PRELUDE = textwrap.dedent(
    """
    import asyncio, json, sys, threading, time
    import bankfeed as bf

    def watch(sb, report):
        report["caught"] = time.monotonic()
        report["at_catch"] = sb.request_count
        # A request on the wire when the call stopped may still land, later on a loaded machine:
        # wait (a second at most) for %(settle)r s without one. A call still running sends
        # dozens in that time, so it never settles, and the count below goes on growing.
        settle_by, seen = time.monotonic() + 1.0, sb.request_count
        while time.monotonic() < settle_by:
            time.sleep(%(settle)r)
            if sb.request_count == seen:
                break
            seen = sb.request_count
        report["first"] = sb.request_count
        time.sleep(%(quiet)r)
        report["later"] = sb.request_count
    """
) % {"quiet": QUIET, "settle": SETTLE}

CHILD = PRELUDE + textwrap.dedent(
    """
    mode, watching = sys.argv[1], sys.argv[2] == "watch"
    sb = bf.Sandbox(logins=200, pending_seconds=120)
    options = dict(poll_interval=0.01, poll_timeout=120)
    report = {}

    def announce_when_polling():
        # Each of the 200 logins sends a token call and its Authorize before it polls: past
        # that many requests they are polling. Counted, not slept for: on a loaded machine the
        # logins took more than the parent's half second to get there (30 s at most).
        until = time.monotonic() + 30
        while sb.request_count <= 2 * 200 and time.monotonic() < until:
            time.sleep(0.01)
        print("ready", flush=True)

    threading.Thread(target=announce_when_polling, daemon=True).start()
    try:
        if mode == "async":
            client = sb.async_client(**options)

            async def main():
                async for pair in client.investments_many(sb.login_ids, concurrency=64):
                    print("finished", pair, flush=True)

            asyncio.run(main())
        else:
            client = sb.client(**options)
            for pair in client.investments_many(sb.login_ids, concurrency=64, progress=mode == "progress"):
                print("finished", pair, flush=True)
    except KeyboardInterrupt:
        if watching:
            watch(sb, report)
        else:
            report["caught"] = time.monotonic()
        print(json.dumps(report), flush=True)
        raise
    """
)


def signal_child(script: str, *args: str) -> tuple[subprocess.CompletedProcess[str], float, float]:
    """Runs ``script`` in a child, sends SIGINT half a second after it prints ``ready``; returns
    the finished child and the monotonic times (shared by the processes) of the signal and of
    the exit."""
    child = subprocess.Popen(
        [sys.executable, "-c", script, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "ready\n"
        time.sleep(0.5)  # every login authorized and polling, or finishing one after another
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
        exited = time.monotonic()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    return subprocess.CompletedProcess(child.args, child.returncode, out, err), sent, exited


def interrupt(mode: str, watch: bool) -> tuple[subprocess.CompletedProcess[str], dict[str, float], float, float]:
    """Runs the child, sends SIGINT once its logins are polling; returns the finished child, its
    report, and the monotonic times of the signal and of the exit."""
    child, sent, exited = signal_child(CHILD, mode, "watch" if watch else "exit")
    lines = child.stdout.splitlines()
    assert lines and not any(line.startswith("finished") for line in lines), child.stdout
    return child, json.loads(lines[-1]), sent, exited


@pytest.mark.parametrize("mode", ["sync", "progress", "async"])
def test_ctrl_c_stops_a_bulk_call_at_once_and_nothing_polls_after(mode: str) -> None:
    child, report, sent, _ = interrupt(mode, watch=True)
    assert child.returncode != 0 and "KeyboardInterrupt" in child.stderr, child.stderr[-3000:]
    assert report["caught"] - sent < STOP_WITHIN, f"stopped {report['caught'] - sent:.2f} s after the signal"
    # Each of the 200 logins sends a token call and its Authorize before it polls.
    assert report["at_catch"] > 2 * 200, "the logins were polling when the signal came"
    assert report["later"] == report["first"], f"{report['later'] - report['first']} requests after Ctrl-C"


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_the_process_exits_soon_after_ctrl_c(mode: str) -> None:
    child, report, sent, exited = interrupt(mode, watch=False)
    assert child.returncode != 0 and "KeyboardInterrupt" in child.stderr, child.stderr[-3000:]
    assert report["caught"] - sent < STOP_WITHIN, f"stopped {report['caught'] - sent:.2f} s after the signal"
    assert exited - sent < 2 * STOP_WITHIN, f"the process exited {exited - sent:.2f} s after the signal"


#: A child whose logins finish one after another all along (no wait between two results), read
#: by a loop in C that runs no Python code between them: list(), or bf.combine.
STREAMING_CHILD = PRELUDE + textwrap.dedent(
    """
    sb = bf.Sandbox(logins=3000, pending_polls=0)
    client = sb.client(poll_interval=0.01, poll_timeout=120)
    report = {}
    try:
        print("ready", flush=True)
        results = client.investments_many(sb.login_ids, concurrency=32)
        gathered = list(results) if sys.argv[1] == "list" else bf.combine(results)
        report["finished"] = True
    except KeyboardInterrupt:
        watch(sb, report)
    print(json.dumps(report), flush=True)
    """
)


@pytest.mark.parametrize("mode", ["list", "combine"])
def test_ctrl_c_stops_a_bulk_call_whose_results_keep_coming(mode: str) -> None:
    # Between two results that are already there nothing waits, so Ctrl-C must be looked for
    # on every result, not only while waiting for one.
    child, sent, _ = signal_child(STREAMING_CHILD, mode)
    assert child.stdout.strip(), child.stderr[-3000:]
    report = json.loads(child.stdout.splitlines()[-1])
    assert "finished" not in report, "the call ended before the signal came: give it more logins"
    assert report["caught"] - sent < STOP_WITHIN, f"stopped {report['caught'] - sent:.2f} s after the signal"
    assert report["later"] == report["first"], f"{report['later'] - report['first']} requests after Ctrl-C"
