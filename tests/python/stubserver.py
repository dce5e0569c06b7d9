"""A small stdlib HTTP server that answers each operation as a test says, for the tests that need
answers the sandbox never gives (error codes, 203 to a data call, bodies that are not payloads).

Requests are routed by operation name (see :func:`operation_of`) and logged as
``(method, operation)``; each is also kept whole in ``requests`` (a :class:`Request`). An answer is
fixed, or made from the request by a function (a stub that answers each login with its own
LoginId).
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Answer:
    """One HTTP answer of the stub: a JSON value (sent as JSON) or text (sent as it is)."""

    status: int
    body: object
    headers: tuple[tuple[str, str], ...] = ()

    def payload(self) -> bytes:
        """The bytes sent."""
        return self.body.encode() if isinstance(self.body, str) else json.dumps(self.body).encode()


@dataclass(frozen=True)
class Request:
    """One request the stub received."""

    method: str
    #: The path as sent, its query included.
    path: str
    body: bytes

    def json(self) -> Any:
        """The body read as JSON (None when it is empty)."""
        return json.loads(self.body) if self.body else None


#: What the stub answers an operation with: an :class:`Answer`, or a function making one from the
#: request.
Answering = Answer | Callable[[Request], Answer]


def error(
    status: int,
    code: str | None,
    message: str | None = None,
    request_id: str | None = None,
    headers: tuple[tuple[str, str], ...] = (),
) -> Answer:
    """An error answer shaped like the service's: ``{"HttpStatusCode", "Message", "FlinksCode"}``."""
    body: dict[str, Any] = {"HttpStatusCode": status}
    if message is not None:
        body["Message"] = message
    if code is not None:
        body["FlinksCode"] = code
    if request_id is not None:
        body["RequestId"] = request_id
    return Answer(status, body, headers)


def operation_of(path: str) -> str:
    """The operation a request path names: the segment after ``BankingServices``
    (``DeleteCard``, ``GetAccountsDetailAsync``, ...), the use-case operation of an attributes path,
    ``Attributes`` for the custom attributes call (whose path ends with the RequestId), else the
    last segment (``Investments``)."""
    parts = [part for part in path.split("?")[0].split("/") if part]
    if "BankingServices" in parts[:-1]:
        return parts[parts.index("BankingServices") + 1]
    if "attributes" in parts:
        after = parts[parts.index("attributes") + 1 :]
        return after[1] if len(after) > 1 else "Attributes"
    return parts[-1] if parts else ""


class StubServer(http.server.ThreadingHTTPServer):
    """Answers ``answers[operation]`` (or ``defaults[operation]``) to every request of that
    operation, 404 to the others, and logs them."""

    def __init__(self, answers: Mapping[str, Answering], defaults: Mapping[str, Answering]) -> None:
        super().__init__(("127.0.0.1", 0), StubHandler)
        self.answers = {**defaults, **answers}
        self.log: list[tuple[str, str]] = []
        self.requests: list[Request] = []

    @property
    def url(self) -> str:
        """The base URL of the stub."""
        return f"http://127.0.0.1:{self.server_address[1]}"


class StubHandler(http.server.BaseHTTPRequestHandler):
    """Serves :class:`StubServer`'s answers."""

    server: StubServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        request = Request(self.command, self.path, self.rfile.read(length) if length else b"")
        operation = operation_of(self.path)
        self.server.log.append((self.command, operation))
        self.server.requests.append(request)
        answering = self.server.answers.get(operation, error(404, "INVALID_REQUEST", f"no route {operation}"))
        answer = answering if isinstance(answering, Answer) else answering(request)
        data = answer.payload()
        self.send_response(answer.status)
        content_type = "text/plain" if isinstance(answer.body, str) else "application/json; charset=utf-8"
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in answer.headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    do_POST = do_GET = do_DELETE = do_PATCH = _answer


Serve = Callable[[Mapping[str, Answering]], StubServer]


def serving(defaults: Mapping[str, Answering]) -> Iterator[Serve]:
    """The body of a fixture: starts stub servers answering over ``defaults``; stops them after."""
    servers: list[tuple[StubServer, threading.Thread]] = []

    def start(answers: Mapping[str, Answering]) -> StubServer:
        server = StubServer(answers, defaults)
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        servers.append((server, thread))
        return server

    yield start
    for server, thread in servers:
        server.shutdown()
        server.server_close()
        thread.join(5)
