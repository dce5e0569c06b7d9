"""The sandbox's connection limits as a client sees them, with the defaults of ``bf.Sandbox()``
(docs/sandbox.md#limits): uploads that hold every connection do not keep a normal client waiting.

Issue 16: 1,100 request bodies sent a byte at a time held all 1,024 places of the sandbox, and every
normal call waited for one of them to time out. The Rust tests
(crates/bankfeed-sandbox/tests/it/sandbox/connections.rs) check the 408 of a slow body and the
making of room with small limits; this one runs the issue's numbers.
"""

from __future__ import annotations

import contextlib
import socket
import sys
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

import bankfeed as bf
from bfhelpers import INSTITUTION, PASSWORD

#: More uploads than the sandbox's 1,024 places.
UPLOADS = 1100


@contextlib.contextmanager
def open_files(count: int) -> Iterator[None]:
    """Room for ``count`` open files in this process, or the test is skipped."""
    if sys.platform == "win32":
        pytest.skip("sets the limit of open files with the resource module")
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft >= count:
        yield
        return
    if hard != resource.RLIM_INFINITY and hard < count:
        pytest.skip(f"needs {count} open files; the system allows {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (count, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def received(upload: socket.socket) -> bytes:
    """What the sandbox sent on ``upload`` so far, without waiting."""
    upload.setblocking(False)
    try:
        return upload.recv(65536)
    except (BlockingIOError, ConnectionError):
        return b""


def test_slow_uploads_on_every_connection_do_not_keep_a_normal_client_waiting() -> None:
    # Both ends of every connection are in this process.
    with open_files(2 * UPLOADS + 512), bf.Sandbox() as sb:
        address = urlsplit(sb.url)
        assert address.hostname is not None and address.port is not None
        head = (
            f"POST /v3/{sb.customer_id}/BankingServices/Authorize HTTP/1.1\r\nHost: {address.netloc}\r\n"
            "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"
        ).encode()
        uploads: list[socket.socket] = []
        try:
            for _ in range(UPLOADS):
                upload = socket.create_connection((address.hostname, address.port))
                upload.sendall(head)
                uploads.append(upload)
            # Past the second each connection has to send its request before it may be cut.
            time.sleep(1.5)
            started = time.monotonic()
            client = sb.client(timeout=20.0)
            session = client.login(INSTITUTION, "greatday_nomfa", PASSWORD)
            waited = time.monotonic() - started
            assert session.request_id
            # Each upload would hold its place for 30 s (the request-read timeout).
            assert waited < 10, f"answered after {waited:.1f} s"
            # The uploads that gave their places up were told why, in the service's envelope.
            time.sleep(0.5)
            answers = [answer for answer in map(received, uploads) if answer]
            assert len(answers) > UPLOADS - 1024, f"{len(answers)} uploads were cut"
            for answer in answers:
                assert answer.startswith(b"HTTP/1.1 408 "), answer
                assert b'"FlinksCode":"REQUEST_TIMEOUT"' in answer, answer
            client.close()
        finally:
            for upload in uploads:
                upload.close()
