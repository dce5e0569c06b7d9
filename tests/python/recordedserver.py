"""A raw loopback server that answers as the real service was recorded answering: every body comes
from a file of ``tests/corpus`` (keys and key order as recorded, values made up), with the
request's RequestId and LoginId put in. It is no sandbox: it knows only the flows the recordings
show, and it refuses what the real service would not do for a client:

- account detail finishes only on ``GET .../GetAccountsDetailAsync/{RequestId}``: its 202 names
  the link as a literal template, and a POST repeated forever stays pending (as a client that
  cannot read the template would see it);
- a request path holding a brace is refused with 400 and counted in ``braces``.
"""

from __future__ import annotations

import copy
import http.server
import json
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parents[1] / "corpus"

#: LoginIds in the shape production mints them: a .NET sequential tail, whose variant nibble is
#: outside RFC 4122 (``uuid.UUID(x).version is None``).
LOGIN_IDS = (
    "5b1e0c2d-9a4f-4e7b-5d21-08dc3f6a91e7",
    "a07c93f1-2e6d-4b18-6a3c-08dc3f6a91e8",
    "0C55D2AB-71F4-4E90-7B1A-08DC3F6A91E9",  # upper case: the service compares ids in any case
)


def recorded(name: str) -> dict[str, Any]:
    """The corpus file ``name`` (without ``.json``): its ``source``, ``request``, ``status`` and ``body``."""
    with (CORPUS / f"{name}.json").open(encoding="utf-8") as file:
        data: dict[str, Any] = json.load(file)
    return data


def corpus_names() -> list[str]:
    """Every file of the corpus, by name."""
    return sorted(path.stem for path in CORPUS.glob("*.json"))


@dataclass
class Recorded:
    """What the server knows: which logins ask a question on a cached read, how many polls account
    detail takes, and what came."""

    challenged: set[str] = field(default_factory=set)
    polls: int = 2
    summary_with_login: bool = False
    log: list[tuple[str, str]] = field(default_factory=list)
    braces: int = 0
    # RequestId -> (LoginId, whether the session came through a challenged cached read).
    sessions: dict[str, tuple[str, bool]] = field(default_factory=dict)
    detail_polls: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, method: str, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """The status and body for one request."""
        parts = [part for part in path.split("?")[0].split("/") if part]
        operation = parts[parts.index("BankingServices") + 1] if "BankingServices" in parts else parts[-1]
        with self.lock:
            self.log.append((method, operation))
            if "{" in path or "}" in path or "%7B" in path.upper():
                self.braces += 1
                return 400, {"HttpStatusCode": 400, "Message": "Invalid request.", "FlinksCode": "INVALID_REQUEST"}
            if operation == "Authorize":
                return self._authorize(body)
            request_id = parts[-1] if operation.endswith("Async") else str(_field(body, "RequestId") or "")
            if request_id.lower() not in self.sessions:
                return _filled("error-session-nonexistent-400", None, None)
            login_id, _ = self.sessions[request_id.lower()]
            if operation == "GetAccountsDetail":
                return _filled("pending-202-template", request_id, login_id)
            if operation == "GetAccountsDetailAsync" and method == "GET":
                done = self.detail_polls.get(request_id, 0) + 1
                self.detail_polls[request_id] = done
                name = "accounts-detail-200" if done >= self.polls else "pending-202-template"
                return _filled(name, request_id, login_id)
            if operation == "GetAccountsSummary":
                name = "accounts-summary-200-with-login" if self.summary_with_login else "accounts-summary-200"
                return _filled(name, request_id, login_id)
            if operation == "GetStatements":
                return _filled("statements-200", request_id, login_id)
            return 404, {"HttpStatusCode": 404, "Message": f"no route {operation}", "FlinksCode": "INVALID_REQUEST"}

    def _authorize(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        login_id = _field(body, "LoginId")
        answered = _field(body, "RequestId")
        if answered is not None and _field(body, "SecurityResponses") is not None:
            known = self.sessions.get(str(answered).lower())
            if known is None:
                return _filled("error-session-nonexistent-400", None, None)
            login, cached = known
            # The answer of a challenged cached read has no Login, as recorded.
            return _filled("authorize-answer-200-without-login" if cached else "authorize-200", str(answered), login)
        request_id = str(uuid.uuid4())
        if login_id is not None and _truthy(_field(body, "MostRecentCached")):
            login = str(login_id)
            challenged = login.lower() in {id.lower() for id in self.challenged}
            self.sessions[request_id] = (login, challenged)
            if challenged:
                return _filled("authorize-cached-203", request_id, login)
            return _filled("authorize-200", request_id, login)
        # A live login with credentials: the recorded question first.
        self.sessions[request_id] = (LOGIN_IDS[0], False)
        return _filled("authorize-203", request_id, LOGIN_IDS[0])


def _field(body: dict[str, Any], name: str) -> Any:
    """A key of the request body in any case, as the service binds them."""
    return next((value for key, value in body.items() if key.lower() == name.lower()), None)


def _truthy(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.lower() == "true")


def _filled(name: str, request_id: str | None, login_id: str | None) -> tuple[int, dict[str, Any]]:
    """A corpus answer with this request's RequestId and LoginId in place of the recorded ones."""
    data = recorded(name)
    body = copy.deepcopy(data["body"])
    if request_id is not None and "RequestId" in body:
        body["RequestId"] = request_id
    if login_id is not None and isinstance(body.get("Login"), dict):
        body["Login"]["Id"] = login_id
    return int(data["status"]), body


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {}
        status, answer = self.server.recorded.answer(self.command, self.path, body if isinstance(body, dict) else {})
        # Sent with the keys in the recorded order, as the service serializes them.
        data = json.dumps(answer, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_POST = do_GET = do_DELETE = _answer


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, recorded: Recorded) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.recorded = recorded

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


@contextmanager
def serving(recorded: Recorded) -> Iterator[str]:
    """Serves ``recorded`` on a free loopback port; yields its base URL."""
    server = _Server(recorded)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server.url
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
