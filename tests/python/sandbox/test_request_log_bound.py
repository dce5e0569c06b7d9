"""The request log is bounded in bytes (docs/sandbox.md#the-request-log): a flood of large bodies
to a sandbox in another process, with keys and without, neither grows that process nor its log
past the bound, and a large body is kept as its size and the start of its masked text."""

from __future__ import annotations

import inspect
import json
import urllib.error
import urllib.request
from pathlib import Path

import bankfeed as bf

#: The size of each body: the largest the sandbox reads whole.
LARGE = 2 * 1024 * 1024
#: The bound the sandbox is started with.
BOUND = 4 * 1024 * 1024
#: The secret key a sandbox asks for by default: the public test instance's.
SECRET_KEY = inspect.signature(bf.Sandbox).parameters["secret_key"].default


def large_body() -> bytes:
    """An Authorize body of :data:`LARGE` bytes, mostly a list of small numbers (the costliest
    JSON to keep parsed), with a password that must never reach the log."""
    head = json.dumps({"Institution": "FlinksCapital", "Username": "greatday_nomfa", "Password": "Everyday"})
    filler = ",0" * ((LARGE - len(head) - len(',"Filler":[0]}')) // 2)
    body = (head[:-1] + ',"Filler":[0' + filler + "]}").encode()
    return body


def post(url: str, body: bytes, headers: dict[str, str]) -> int:
    request = urllib.request.Request(
        url, data=body, method="POST", headers={"Content-Type": "application/json", **headers}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            answer.read()
            return int(answer.status)
    except urllib.error.HTTPError as refused:
        refused.read()
        return int(refused.code)


def resident_bytes(pid: int) -> int:
    """The resident memory of process ``pid``, from ``/proc/<pid>/status``."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def flood(sb: bf.RemoteSandbox, body: bytes, count: int) -> None:
    """``count`` large Authorize bodies, every other one with a fresh token (refused or not, each
    is logged)."""
    base = f"{sb.url}/v3/{sb.customer_id}/BankingServices"
    for index in range(count):
        headers = {}
        if index % 2 == 0:
            minted = urllib.request.Request(
                f"{base}/GenerateAuthorizeToken", data=b"", method="POST", headers={"flinks-auth-key": SECRET_KEY}
            )
            with urllib.request.urlopen(minted, timeout=30) as answer:
                headers["flinks-auth-key"] = json.loads(answer.read())["Token"]
        status = post(f"{base}/Authorize", body, headers)
        assert status in (200, 401), (index, status)


def test_a_flood_of_large_bodies_keeps_the_process_and_the_log_within_bounds() -> None:
    body = large_body()
    with bf.RemoteSandbox.start("--request-log-bytes", str(BOUND)) as sb:
        assert sb._process is not None
        pid = sb._process.pid
        # The first ones make the allocator's room for a body in flight, which later ones reuse.
        flood(sb, body, 4)
        before = resident_bytes(pid)
        flood(sb, body, 40)
        grown = resident_bytes(pid) - before
        # Kept whole, 40 bodies would be 80 MiB as text, and some 2.7 GB parsed.
        assert grown < 48 * 1024 * 1024, f"the sandbox grew by {grown // 2**20} MiB"
        log = sb.requests
        dropped = sb.requests_dropped
    authorizes = [entry for entry in log if entry["operation"] == "Authorize"]
    assert len(authorizes) == 44 and dropped == 0
    newest = authorizes[-1]
    assert newest["body"] is None and newest["body_size"] == len(body)
    prefix = newest["body_prefix"]
    assert prefix is not None and len(prefix) == 64 * 1024
    assert "greatday_nomfa" in prefix and "Everyday" not in prefix


def test_past_the_bound_the_oldest_entries_are_dropped_and_counted() -> None:
    with bf.Sandbox(request_log_bytes=256 * 1024) as sb:
        base = f"{sb.url}/v3/{sb.customer_id}/BankingServices"
        for _ in range(10):
            assert post(f"{base}/Authorize", large_body(), {}) == 401
        log, dropped = sb.requests, sb.requests_dropped
        assert dropped >= 6 and dropped + len(log) == 10
        assert all(entry["body_size"] == len(large_body()) for entry in log)
        sb.reset()
        assert sb.requests_dropped == 0
