"""What a misbehaving server cannot make the client do: follow a redirect, sleep on an absurd
``Retry-After``, or keep a huge error body on an exception.

A stdlib HTTP server answers every request with one canned answer and records what it received;
``delete_login`` is the call (one request, no token, safe to repeat).
"""

from __future__ import annotations

import http.server
import json
import pickle
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

import bankfeed as bf
from bankfeed import errors

CUSTOMER = "43387ca6-0391-4c82-857d-70d95f087ecb"
LOGIN = "5e0c4f28-8a5c-4e5a-9d40-7c0b8f3f6a11"
REQUEST = "b2a4d1c0-3f5e-4a6b-9c7d-1e2f3a4b5c6d"
API_KEY = "ak-limits-5d4c3b2a1f"


class Recorder(http.server.ThreadingHTTPServer):
    """Answers every request with ``status``, ``headers`` and ``body``; keeps each request's path
    and headers."""

    def __init__(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self.status, self.body, self.headers = status, body, headers
        self.seen: list[tuple[str, str]] = []
        super().__init__(("127.0.0.1", 0), Handler)

    @property
    def url(self) -> str:
        """The base URL of the server."""
        return f"http://127.0.0.1:{self.server_address[1]}"


class Handler(http.server.BaseHTTPRequestHandler):
    """The request handler of :class:`Recorder`."""

    server: Recorder

    def answer(self) -> None:
        """Records the request and sends the canned answer."""
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length).decode("latin-1") if length else ""
        self.server.seen.append((self.path, str(self.headers) + body))
        self.send_response(self.server.status)
        for name, value in self.server.headers.items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(self.server.body)))
        self.end_headers()
        self.wfile.write(self.server.body)

    do_GET = do_POST = do_DELETE = answer

    def log_message(self, format: str, *args: Any) -> None:
        """Silent."""


@pytest.fixture
def servers() -> Iterator[list[Recorder]]:
    """Recorders started by the test, stopped after it."""
    started: list[Recorder] = []
    yield started
    for server in started:
        server.shutdown()
        server.server_close()


def start(started: list[Recorder], status: int, body: object, **headers: str) -> Recorder:
    """Starts a recorder answering ``status`` with ``body`` (JSON unless bytes)."""
    payload = body if isinstance(body, bytes) else json.dumps(body).encode()
    server = Recorder(status, payload, {"content-type": "application/json", **headers})
    threading.Thread(target=server.serve_forever, daemon=True).start()
    started.append(server)
    return server


def client(url: str, **options: Any) -> bf.Client:
    """A client of ``url`` with the api key set and short delays."""
    return bf.Client(base_url=url, customer_id=CUSTOMER, api_key=API_KEY, poll_interval=0.01, **options)


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_is_not_followed_and_names_its_location(servers: list[Recorder], status: int) -> None:
    target = start(servers, 200, {"Message": "stolen"})
    location = f"{target.url}/elsewhere"
    origin = start(servers, status, {"RequestId": REQUEST}, location=location)
    with pytest.raises(errors.ProtocolError) as info:
        client(origin.url, max_retries=2).delete_login(LOGIN)
    assert info.value.status == status
    assert location in str(info.value) and "base_url" in str(info.value)
    assert len(origin.seen) == 1, "never sent again"
    assert target.seen == [], "nothing, and no key, reached the redirect's target"


@pytest.mark.parametrize("retry_after", ["1e308", "18446744073709551616", "Fri, 31 Dec 9999 23:59:59 GMT"])
def test_an_absurd_retry_after_ends_the_call_with_the_servers_answer(servers: list[Recorder], retry_after: str) -> None:
    body = {"HttpStatusCode": 503, "FlinksCode": "RETRY_LATER", "Message": "later", "RequestId": REQUEST}
    server = start(servers, 503, body, **{"retry-after": retry_after})
    started = time.monotonic()
    with pytest.raises(errors.RetryLater) as info:
        client(server.url, max_retries=2, poll_timeout=60).delete_login(LOGIN)
    assert time.monotonic() - started < 5, "the wait is not slept"
    assert info.value.request_id == REQUEST and info.value.status == 503
    assert info.value.retry_after is not None and info.value.retry_after > 60
    assert len(server.seen) == 1


def test_a_huge_error_body_is_kept_as_a_short_snippet(servers: list[Recorder]) -> None:
    body = {
        "Message": "m" * 300_000,
        "Rows": list(range(200_000)),
        "FlinksCode": "INVALID_REQUEST",
        "RequestId": REQUEST,
    }
    server = start(servers, 400, body)
    with pytest.raises(errors.InvalidRequest) as info:
        client(server.url).delete_login(LOGIN)
    exc = info.value
    assert exc.code == "INVALID_REQUEST" and exc.request_id == REQUEST
    assert isinstance(exc.body, str) and len(exc.body) <= 201
    assert len(str(exc)) < 2_000
    assert len(pickle.dumps(exc)) < 10_000, "the exception pickles small"


def test_a_body_over_max_body_bytes_is_refused_and_the_default_is_large(servers: list[Recorder]) -> None:
    assert client("http://127.0.0.1:9").max_body_bytes == 128 * 1024 * 1024, "room for 100,000 transactions"
    server = start(servers, 200, {"Message": "x" * 5_000})
    with pytest.raises(errors.ProtocolError) as info:
        client(server.url, max_body_bytes=1_000).delete_login(LOGIN)
    assert "max_body_bytes" in str(info.value) and info.value.operation == "DeleteCard"
    with pytest.raises(errors.ConfigError) as refused:
        client(server.url, max_body_bytes=0)
    assert refused.value.field == "max_body_bytes"
