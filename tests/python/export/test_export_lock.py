"""One run at a time writes an export directory (docs/export.md#one-run-at-a-time): a second run,
a real process started while the first writes, is refused at once naming the first, or waits for
it with ``--wait-lock``; a run killed by ``kill -9`` leaves nothing that stops the next; the lock
object of an fsspec output, left by a killed run of this host, is taken over, and one a live
process holds is not.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyarrow")

import pyarrow.dataset

import bankfeed as bf
from bankfeed._export.lock import take_lock
from bankfeed._export.planning import plan_stoppable
from bankfeed._export.storage import Storage

LOGINS = 24


class Service:
    """A sandbox in a process of its own, slow enough (each data call pending a few polls) that
    an export of its logins, one at a time, takes seconds. It asks for no keys."""

    def __init__(self, url: str, customer_id: str, login_ids: list[str]) -> None:
        self.url = url
        self.customer_id = customer_id
        self.login_ids = login_ids


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    ids = tmp_path_factory.mktemp("service") / "ids.txt"
    server = subprocess.Popen(
        [
            *[sys.executable, "-m", "bankfeed", "sandbox", "--port", "0", "--no-auth"],
            *["--logins", str(LOGINS), "--pending-polls", "3", "--login-ids-file", str(ids)],
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        assert " on " in line, server.communicate()
        url = line.split(" on ")[1].split(" ")[0]
        customer = line.split("customer id ")[1].rstrip(")\n")
        yield Service(url, customer, ids.read_text().split())
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(30)


def arguments(service: Service, out: Path, *extra: str) -> list[str]:
    return [
        *[sys.executable, "-m", "bankfeed", "export", *service.login_ids, "--out", str(out)],
        *["--base-url", service.url, "--customer-id", service.customer_id, "--poll-interval", "0.1"],
        *["--concurrency", "1", "--batch-logins", "2", "--quiet", *extra],
    ]


def environment() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if not key.startswith("BANKFEED_")}


def start(service: Service, out: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        arguments(service, out, *extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment()
    )


def run(service: Service, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        arguments(service, out, *extra), capture_output=True, text=True, env=environment(), timeout=300, check=False
    )


def wait_until_committed(process: subprocess.Popen[str], out: Path) -> None:
    """Until the first batch of ``process`` is committed: it holds the lock, and writes."""
    journal = out / "_journal" / "investments"
    until = time.monotonic() + 120
    while not (journal.exists() and any(journal.glob("*.json"))):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < until, "no batch committed in 120 s"
        time.sleep(0.02)


def logins_of(out: Path, table: str = "accounts") -> Counter[str]:
    data = pyarrow.dataset.dataset(out / "investments" / table).to_table()
    return Counter(data.column("login_id").to_pylist())


def assert_each_login_once(out: Path, service: Service) -> None:
    accounts = pyarrow.dataset.dataset(out / "investments" / "accounts").to_table()
    keys = list(zip(accounts.column("login_id").to_pylist(), accounts.column("account_id").to_pylist(), strict=True))
    assert len(keys) == len(set(keys)), "no login is in the dataset twice"
    assert set(logins_of(out)) == set(service.login_ids)


def test_a_second_run_is_refused_at_once_naming_the_first_or_waits_for_it(service: Service, tmp_path: Path) -> None:
    out = tmp_path / "out"
    # Polled every 0.4 s rather than 0.1: the first run lasts about half a minute, longer than the
    # two refused commands take to start on a loaded machine (each imports bankfeed and pyarrow),
    # so that they meet its lock rather than an export it has finished.
    first = start(service, out, "--poll-interval", "0.4")
    try:
        wait_until_committed(first, out)
        began = time.monotonic()
        refused = run(service, out, "--resume")
        assert refused.returncode == 2, refused.stderr
        assert time.monotonic() - began < 30, "refused at once, not after the first run"
        [line] = refused.stderr.strip().splitlines()
        assert line.startswith("error: --out: ") and "Traceback" not in refused.stderr
        assert f"process {first.pid} on {socket.gethostname()}" in line, line
        assert "--wait-lock" in line, line
        # Waiting less than the first run takes: refused after that wait, as it says.
        waited = run(service, out, "--resume", "--wait-lock", "0.5")
        assert waited.returncode == 2 and "still after 0.5 s of waiting" in waited.stderr, waited.stderr
        assert first.poll() is None, "the first run was still writing while the others were refused"
        # Waiting long enough: the second one goes on once the first has ended, and finds nothing
        # to resume (the run has every login), which it says.
        second = run(service, out, "--resume", "--wait-lock", "300")
        assert first.wait(60) == 0, first.communicate()
    finally:
        if first.poll() is None:
            first.kill()
        first.communicate()
    assert second.returncode == 2 and "error: --resume: has nothing to resume" in second.stderr, second.stderr
    assert_each_login_once(out, service)
    manifest = json.loads((out / "_manifest.json").read_text())
    assert manifest["complete"] is True
    assert manifest["kinds"]["investments"]["logins_written"] == sorted(service.login_ids)
    assert [run["logins_written"] for run in manifest["runs"]] == [LOGINS], "the second one wrote nothing"


def test_a_run_killed_holding_the_lock_leaves_nothing_that_stops_the_next(service: Service, tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = start(service, out)
    wait_until_committed(first, out)
    first.send_signal(signal.SIGKILL)
    first.communicate(timeout=60)
    # The lock still names the killed run; the system released it with its process.
    assert json.loads((out / "_journal" / "lock").read_text())["pid"] == first.pid
    done = run(service, out, "--resume")
    assert done.returncode == 0, done.stderr
    assert_each_login_once(out, service)
    assert (out / "_journal" / "lock").read_text() == "", "released at the end: no longer anyone's"


def test_export_refuses_or_waits_while_another_holds_the_lock(tmp_path: Path) -> None:
    with bf.Sandbox(logins=2) as sb:
        client = sb.client(poll_interval=0.01)
        bf.export(client, sb.login_ids[:1], tmp_path)
        holder = take_lock(Storage(tmp_path), "20261126T000000-abcdef", wait=0)
        try:
            with pytest.raises(bf.ConfigError) as raised:
                bf.export(client, sb.login_ids, tmp_path, resume=True)
            assert raised.value.field == "out"
            assert f"the run 20261126T000000-abcdef (process {os.getpid()} on {socket.gethostname()}" in str(
                raised.value
            )
            with pytest.raises(bf.ConfigError, match="is being written by the run 20261126T000000-abcdef"):
                asyncio.run(bf.aexport(sb.async_client(poll_interval=0.01), sb.login_ids, tmp_path, resume=True))
            threading.Timer(0.5, holder.release).start()
            began = time.monotonic()
            report = bf.export(client, sb.login_ids, tmp_path, resume=True, wait_lock=30)
        finally:
            holder.release()
    assert time.monotonic() - began >= 0.4, "it waited for the holder"
    assert (report.logins_written, report.logins_skipped) == (1, 1)
    # The run released it: the next one goes on at once (and finds nothing to resume).
    with pytest.raises(bf.ConfigError, match="nothing to resume"):
        bf.export(client, sb.login_ids, tmp_path, resume=True)
    for wrong, error in [(-1, bf.ConfigError), (float("nan"), bf.ConfigError), ("5", TypeError), (True, TypeError)]:
        with pytest.raises(error, match="wait_lock"):
            bf.export(client, sb.login_ids, tmp_path, resume=True, wait_lock=wrong)  # type: ignore[arg-type]


def threads_left(before: set[threading.Thread], within: float) -> list[threading.Thread]:
    """The threads started since ``before`` still running after ``within`` seconds."""
    deadline = time.monotonic() + within
    while (
        left := [thread for thread in threading.enumerate() if thread not in before]
    ) and time.monotonic() < deadline:
        time.sleep(0.02)
    return left


def test_a_cancelled_aexport_stops_waiting_for_the_lock_at_once(tmp_path: Path) -> None:
    with bf.Sandbox(logins=2) as sb:
        client = sb.client(poll_interval=0.01)
        bf.export(client, sb.login_ids[:1], tmp_path)
        holder = take_lock(Storage(tmp_path), "20261126T000000-abcdef", wait=0)
        before = set(threading.enumerate())
        try:

            async def cancelled_while_waiting() -> float:
                exporting = bf.aexport(
                    sb.async_client(poll_interval=0.01), sb.login_ids, tmp_path, resume=True, wait_lock=60
                )
                task = asyncio.ensure_future(exporting)
                await asyncio.sleep(0.5)
                assert not task.done(), "it waits for the holder"
                cancelled = time.monotonic()
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task
                return time.monotonic() - cancelled

            began = time.monotonic()
            assert asyncio.run(cancelled_while_waiting()) < 0.5, "the task ended at once"
            # Nothing of the run is left waiting: asyncio.run waited for no thread of it either.
            assert time.monotonic() - began < 3
            assert threads_left(before, within=1.0) == []
            # The holder still holds the lock: another run is refused, naming it.
            with pytest.raises(bf.ConfigError, match="the run 20261126T000000-abcdef"):
                bf.export(client, sb.login_ids, tmp_path, resume=True)
        finally:
            holder.release()
        # The cancelled run never took it once the holder let go: the next run takes it at once.
        time.sleep(0.5)
        report = bf.export(client, sb.login_ids, tmp_path, resume=True)
    assert (report.logins_written, report.logins_skipped) == (1, 1)


def test_a_plan_made_just_as_its_task_is_cancelled_is_released() -> None:
    released: list[str] = []

    def plan(*, stop: threading.Event) -> str:
        time.sleep(0.3)  # the lock taken anyway: it came free just as the task was cancelled
        return "the run holding the lock"

    async def cancelled() -> None:
        task = asyncio.ensure_future(plan_stoppable(released.append, plan))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    before = set(threading.enumerate())
    asyncio.run(cancelled())
    assert threads_left(before, within=1.0) == []
    assert released == ["the run holding the lock"]


def test_the_lock_of_an_fsspec_output_is_taken_over_only_from_a_process_gone(tmp_path: Path) -> None:
    fsspec = pytest.importorskip("fsspec")
    memory = fsspec.filesystem("memory")
    out = f"memory://bankfeed-lock-{os.getpid()}/out"
    lock = f"/bankfeed-lock-{os.getpid()}/out/_journal/lock"
    ended = subprocess.Popen(["true"])
    ended.wait()

    def holder(pid: int) -> bytes:
        record: dict[str, Any] = {"host": socket.gethostname(), "pid": pid, "run": "20261126T000000-abcdef"}
        return json.dumps(record).encode()

    with bf.Sandbox(logins=2) as sb:
        client = sb.client(poll_interval=0.01)
        first = bf.export(client, sb.login_ids[:1], out)
        assert first.logins_written == 1 and not memory.exists(lock), "removed at the end of the run"
        # Held by a live process (this one, as another run would be): refused, the object kept.
        memory.pipe_file(lock, holder(os.getpid()))
        with pytest.raises(bf.ConfigError) as raised:
            bf.export(client, sb.login_ids, out, resume=True)
        assert f"process {os.getpid()} on {socket.gethostname()}" in str(raised.value)
        assert memory.cat_file(lock) == holder(os.getpid())
        # Left by a run whose process is gone: taken over.
        memory.pipe_file(lock, holder(ended.pid))
        report = bf.export(client, sb.login_ids, out, resume=True)
    assert (report.logins_written, report.logins_skipped) == (1, 1)
    assert not memory.exists(lock)
    memory.rm(f"/bankfeed-lock-{os.getpid()}", recursive=True)
