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

CHILD = textwrap.dedent(
    """
    import asyncio, json, sys, time
    import bankfeed as bf

    mode, watch = sys.argv[1], sys.argv[2] == "watch"
    sb = bf.Sandbox(logins=200, pending_seconds=120)
    options = dict(poll_interval=0.01, poll_timeout=120)
    report = {}
    try:
        if mode == "async":
            client = bf.AsyncClient(sb.url, sb.customer_id, **options)

            async def main():
                print("ready", flush=True)
                async for pair in client.investments_many(sb.login_ids, concurrency=64):
                    print("finished", pair, flush=True)

            asyncio.run(main())
        else:
            client = sb.client(**options)
            print("ready", flush=True)
            for pair in client.investments_many(sb.login_ids, concurrency=64, progress=mode == "progress"):
                print("finished", pair, flush=True)
    except KeyboardInterrupt:
        report["caught"] = time.monotonic()
        if watch:
            report["at_catch"] = sb.request_count
            time.sleep(0.03)  # a request on the wire when the call stopped may still land
            report["first"] = sb.request_count
            time.sleep(%(quiet)r)
            report["later"] = sb.request_count
        print(json.dumps(report), flush=True)
        raise
    """
) % {"quiet": QUIET}


def interrupt(mode: str, watch: bool) -> tuple[subprocess.CompletedProcess[str], dict[str, float], float, float]:
    """Runs the child, sends SIGINT once its logins are polling; returns the finished child, its
    report, and the monotonic times (shared by the processes) of the signal and of the exit."""
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, mode, "watch" if watch else "exit"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "ready\n"
        time.sleep(0.5)  # every login authorized and polling
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=30)
        exited = time.monotonic()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    lines = out.splitlines()
    assert lines and not any(line.startswith("finished") for line in lines), out
    return subprocess.CompletedProcess(child.args, child.returncode, out, err), json.loads(lines[-1]), sent, exited


@pytest.mark.parametrize("mode", ["sync", "progress", "async"])
def test_ctrl_c_stops_a_bulk_call_at_once_and_nothing_polls_after(mode: str) -> None:
    child, report, sent, _ = interrupt(mode, watch=True)
    assert child.returncode != 0 and "KeyboardInterrupt" in child.stderr, child.stderr[-3000:]
    assert report["caught"] - sent < STOP_WITHIN, f"stopped {report['caught'] - sent:.2f} s after the signal"
    assert report["at_catch"] > 200, "the logins were polling when the signal came"
    assert report["later"] == report["first"], f"{report['later'] - report['first']} requests after Ctrl-C"


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_the_process_exits_soon_after_ctrl_c(mode: str) -> None:
    child, report, sent, exited = interrupt(mode, watch=False)
    assert child.returncode != 0 and "KeyboardInterrupt" in child.stderr, child.stderr[-3000:]
    assert report["caught"] - sent < STOP_WITHIN, f"stopped {report['caught'] - sent:.2f} s after the signal"
    assert exited - sent < 2 * STOP_WITHIN, f"the process exited {exited - sent:.2f} s after the signal"
