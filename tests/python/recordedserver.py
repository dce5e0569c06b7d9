"""A raw loopback server that answers as the real service does: every body it sends is a file of
``tests/corpus`` (keys and key order as recorded or documented there, values made up), with the
request's RequestId and LoginId put in. It is no sandbox: it knows only the flows the recordings
show, and it refuses what the real service would not do for a client:

- account detail finishes only on ``GET .../GetAccountsDetailAsync/{RequestId}``: its 202 names
  the link as a literal template, and a POST repeated forever stays pending (as a client that
  cannot read the template would see it);
- a request path holding a brace is answered 404, as a path no operation takes, and counted in
  ``braces``.

What a test may vary are values, never keys (:class:`Recorded`): which logins a cached read asks a
question of and the answer it takes, how many polls account detail needs, the summary variant,
which Authorize 200 a session opens with, ``Login.LastRefresh``, the institution's names, and the
sessions an earlier run left open. Each request is logged (:class:`Sent`), so that a test can say
what was sent, and what was not.
"""

from __future__ import annotations

import copy
import http.server
import json
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from stubserver import operation_of

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
CUSTOMER = "8d2c5e71-0f4a-4b96-a3e8-5c17d90b2f64"

#: LoginIds in the shape production mints them: a .NET sequential tail, whose variant nibble is
#: outside RFC 4122 (``uuid.UUID(x).version is None``). The first is the one a live login gives.
LOGIN_IDS = (
    "5b1e0c2d-9a4f-4e7b-5d21-08dc3f6a91e7",
    "a07c93f1-2e6d-4b18-6a3c-08dc3f6a91e8",
    "0C55D2AB-71F4-4E90-7B1A-08DC3F6A91E9",  # upper case: the service compares ids in any case
)
#: More of them, in lower case, with variant nibbles of every kind outside RFC 4122's ``8``-``b``
#: (``c`` is Microsoft's), for the tests that spell each one several ways.
MINTED = (
    "a41c9e20-5b7d-4e13-7f28-08dd3c51e7a9",
    "0d5e7b31-c2a4-4f60-0a19-08dc9e4f21b7",
    "e8b04c6d-19f3-4a7e-c3d5-08de11a07c42",
    "5b2f9a14-7e60-4c8d-f1e2-08db6d3c9f05",
    "c7e3a58b-2d91-4b06-6e4a-08dd7f12b3c8",
)
#: The logins of the tests of challenged cached reads: one asked, two that are not.
ASKED = "6a1f03c2-5d84-4e9b-5c21-08dc4be17a90"
FINE = ("1c7e9b40-2a65-4f38-6b03-08dc4be17a91", "93d4e0a7-b1c2-4d5e-7f60-08dc4be17a92")
#: The answer those tests give the cached read's question (a made-up one: the corpus holds no
#: request).
ANSWER = "Iceland"

_NAMESPACE = uuid.UUID("9b0f6c2e-4d3a-4e1b-8a57-6c2d1e0f3b49")


def recorded(name: str) -> dict[str, Any]:
    """The corpus file ``name`` (without ``.json``): its ``source``, ``request``, ``status`` and ``body``."""
    with (CORPUS / f"{name}.json").open(encoding="utf-8") as file:
        data: dict[str, Any] = json.load(file)
    return data


def corpus_names() -> list[str]:
    """Every file of the corpus, by name."""
    return sorted(path.stem for path in CORPUS.glob("*.json"))


def _prompt(name: str) -> str:
    prompt: str = recorded(name)["body"]["SecurityChallenges"][0]["Prompt"]
    return prompt


#: The questions the corpus asks: a live login's, and a challenged cached read's.
LIVE_PROMPT = _prompt("authorize-203")
CACHED_PROMPT = _prompt("authorize-cached-203")


def spellings(login_id: str) -> list[str]:
    """``login_id`` in lower case, in upper case, and mixed (lower, then upper from the third group)."""
    return [login_id.lower(), login_id.upper(), login_id[:9].lower() + login_id[9:].upper()]


def request_id_of(login_id: str) -> str:
    """The RequestId of the session an earlier run left open for ``login_id`` (in any case; see
    ``Recorded.resumable``): a random-looking version 5 GUID, as RequestIds are RFC 4122 ones."""
    return str(uuid.uuid5(_NAMESPACE, login_id.lower()))


@dataclass(frozen=True)
class Sent:
    """One request the server received."""

    method: str
    operation: str
    path: str
    #: The JSON body; empty for a request without one.
    body: dict[str, Any]

    @property
    def answers(self) -> bool:
        """Whether it is the answer to a challenge (an Authorize carrying ``SecurityResponses``)."""
        return self.operation == "Authorize" and "SecurityResponses" in self.body


@dataclass
class _Session:
    #: The LoginId the session is of, as its answers name it.
    login_id: str
    #: Whether it was opened by a cached read (its answer's 200 then has no Login, as recorded).
    cached: bool
    #: Whether it waits for the answer to its question.
    asked: bool


@dataclass
class Recorded:
    """What the server knows, which a test may change while it serves: the values it varies and
    the requests that came."""

    #: The LoginIds (any case) whose cached Authorize asks the corpus's question first.
    challenged: set[str] = field(default_factory=set)
    #: The only answer taken to a question (else 401 ``INVALID_SECURITY_RESPONSE``); None takes any.
    answer: str | None = None
    #: The GET of ``GetAccountsDetailAsync`` that finds account detail ready (1: the first).
    polls: int = 2
    #: The summary variant: with ``Login`` and account ``Type``, or as recorded without.
    summary_with_login: bool = False
    #: The corpus file of the Authorize 200 that opens a session with its ``Login``.
    authorized: str = "authorize-200"
    #: ``Login.LastRefresh`` in every answer, in place of the corpus's.
    last_refresh: str | None = None
    #: Values of ``InstitutionName``, ``InstitutionId`` and ``Institution`` in place of the
    #: corpus's, in the answers that have those keys.
    institution: Mapping[str, Any] = field(default_factory=dict)
    #: LoginIds whose session of an earlier run is still open, under :func:`request_id_of`.
    resumable: set[str] = field(default_factory=set)
    #: A cached read of a key (any case) opens a session of the value, named as written.
    mixed_up: Mapping[str, str] = field(default_factory=dict)
    #: Changes the values of an answer, given its corpus file's name and its body, before it is
    #: sent (hostile text in account detail, say); it must leave the keys as they are.
    change_values: Callable[[str, Any], None] | None = None
    #: Adds keys to an answer, given its corpus file's name and its body, before it is sent: a
    #: field the service added since the corpus was recorded.
    add_fields: Callable[[str, Any], None] | None = None
    log: list[Sent] = field(default_factory=list)
    braces: int = 0
    sessions: dict[str, _Session] = field(default_factory=dict)
    detail_polls: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        for login_id in self.resumable:
            self.sessions[request_id_of(login_id)] = _Session(login_id.lower(), cached=True, asked=False)

    def calls(self) -> list[tuple[str, str]]:
        """Every request received, as ``(method, operation)``."""
        with self.lock:
            return [(sent.method, sent.operation) for sent in self.log]

    def answer_to(self, method: str, path: str, body: dict[str, Any]) -> tuple[int, object]:
        """The status and body for one request."""
        operation = operation_of(path)
        with self.lock:
            self.log.append(Sent(method, operation, path, body))
            if "{" in path or "}" in path or "%7B" in path.upper():
                self.braces += 1
                return self._no_route(path)
            if operation == "Authorize":
                return self._authorize(body)
            if operation == "DeleteCard":
                return self._filled("delete-card-200", None, None)
            if operation == "SetScheduledRefresh":
                return self._filled("scheduled-refresh-200", None, None)
            if operation == "GetMFAQuestions":
                return self._filled("mfa-questions-200", None, None)
            if operation == "AnswerMFAQuestions":
                return self._filled("answer-mfa-questions-200", None, None)
            return self._data(method, operation, path, body)

    def _data(self, method: str, operation: str, path: str, body: dict[str, Any]) -> tuple[int, object]:
        parts = [unquote(part) for part in path.split("?")[0].split("/") if part]
        if "attributes" in parts:
            request_id = parts[parts.index("attributes") + 1]
        elif operation.endswith("Async"):
            request_id = parts[-1]
        else:
            request_id = str(_field(body, "RequestId") or "")
        session = self.sessions.get(request_id.lower())
        if session is None or session.asked:
            return self._filled("error-session-nonexistent-400", None, None)
        login_id = session.login_id
        if operation == "GetAccountsDetail":
            return self._filled("pending-202-template", request_id, login_id)
        if operation == "GetAccountsDetailAsync" and method == "GET":
            done = self.detail_polls.get(request_id, 0) + 1
            self.detail_polls[request_id] = done
            name = "accounts-detail-200" if done >= self.polls else "pending-202-template"
            return self._filled(name, request_id, login_id)
        if operation == "GetAccountsSummary":
            name = "accounts-summary-200-with-login" if self.summary_with_login else "accounts-summary-200"
            return self._filled(name, request_id, login_id)
        if operation == "GetStatements":
            return self._filled("statements-200", request_id, login_id)
        if operation == "Investments":
            return self._filled("investments-200", request_id, login_id)
        if "attributes" in parts:
            return self._filled("attributes-200", request_id, login_id)
        return self._no_route(path)

    def _authorize(self, body: dict[str, Any]) -> tuple[int, object]:
        login_id = _field(body, "LoginId")
        answered = _field(body, "RequestId")
        responses = _field(body, "SecurityResponses")
        if answered is not None and responses is not None:
            session = self.sessions.get(str(answered).lower())
            if session is None or not session.asked:
                return self._filled("error-session-nonexistent-400", None, None)
            asked = CACHED_PROMPT if session.cached else LIVE_PROMPT
            if self.answer is not None and responses != {asked: [self.answer]}:
                return self._filled("error-invalid-security-response-401", None, None)
            session.asked = False
            # The answer of a challenged cached read has no Login, as recorded.
            name = "authorize-answer-200-without-login" if session.cached else self.authorized
            return self._filled(name, str(answered), session.login_id)
        request_id = str(uuid.uuid4())
        if login_id is not None:
            login = str(login_id)
            cached = _truthy(_field(body, "MostRecentCached"))
            if cached and login.lower() in {each.lower() for each in self.challenged}:
                self.sessions[request_id] = _Session(login.lower(), cached=True, asked=True)
                return self._filled("authorize-cached-203", request_id, None)
            named = next((to for asked, to in self.mixed_up.items() if asked.lower() == login.lower()), None)
            # The service names a LoginId in lower case, whatever the case it was asked in.
            self.sessions[request_id] = _Session(named or login.lower(), cached=cached, asked=False)
            return self._filled(self.authorized, request_id, named or login.lower())
        # A live login with credentials: the recorded question first.
        self.sessions[request_id] = _Session(LOGIN_IDS[0], cached=False, asked=True)
        return self._filled("authorize-203", request_id, None)

    def _filled(self, name: str, request_id: str | None, login_id: str | None) -> tuple[int, object]:
        """A corpus answer with this request's values in place of the corpus's: its RequestId, the
        session's LoginId, and the values the test asked for."""
        data = recorded(name)
        body = copy.deepcopy(data["body"])
        if isinstance(body, dict):
            if request_id is not None and "RequestId" in body:
                body["RequestId"] = request_id
            for key, value in self.institution.items():
                if key in body:
                    body[key] = value
            login = body.get("Login")
            if isinstance(login, dict):
                if login_id is not None:
                    login["Id"] = login_id
                if self.last_refresh is not None:
                    login["LastRefresh"] = self.last_refresh
            # An attributes group's Id is the LoginId (docs/protocol.md#attributes).
            card = body.get("Card")
            if isinstance(card, dict) and login_id is not None:
                card["Id"] = login_id
        if self.change_values is not None:
            keys = _keys(body)
            self.change_values(name, body)
            assert _keys(body) == keys, f"change_values changed the keys of {name}"
        if self.add_fields is not None:
            self.add_fields(name, body)
        return int(data["status"]), body

    def _no_route(self, path: str) -> tuple[int, object]:
        status, body = self._filled("error-no-route-404", None, None)
        assert isinstance(body, dict)
        body["Message"] = f"No HTTP resource was found that matches the request URI '{path}'."
        return status, body


def _keys(value: Any) -> Any:
    """The keys of ``value`` and of everything in it, in order: what a change of values keeps."""
    if isinstance(value, dict):
        return [(key, _keys(item)) for key, item in value.items()]
    if isinstance(value, list):
        return [_keys(item) for item in value]
    return None


def _field(body: dict[str, Any], name: str) -> Any:
    """A key of the request body in any case, as the service binds them."""
    return next((value for key, value in body.items() if key.lower() == name.lower()), None)


def _truthy(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.lower() == "true")


class RecordedServer(http.server.ThreadingHTTPServer):
    """The server of ``recorded``, on a free loopback port."""

    daemon_threads = True

    def __init__(self, recorded: Recorded) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.recorded = recorded

    @property
    def url(self) -> str:
        """The base URL of the server."""
        return f"http://127.0.0.1:{self.server_address[1]}"

    @property
    def log(self) -> list[Sent]:
        """Every request received, in order."""
        with self.recorded.lock:
            return list(self.recorded.log)

    def answered(self) -> list[Sent]:
        """The answers to challenges that reached the server."""
        return [sent for sent in self.log if sent.answers]

    def data_calls(self) -> list[Sent]:
        """The requests received other than Authorize."""
        return [sent for sent in self.log if sent.operation != "Authorize"]


class _Handler(http.server.BaseHTTPRequestHandler):
    server: RecordedServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {}
        status, answer = self.server.recorded.answer_to(self.command, self.path, body if isinstance(body, dict) else {})
        # Sent with the keys in the corpus's order, as the service serializes them; a text body
        # (DeleteCard's) as text.
        text = isinstance(answer, str)
        data = answer.encode() if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8" if text else "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_POST = do_GET = do_DELETE = do_PATCH = _answer


@contextmanager
def serving(recorded: Recorded | None = None) -> Iterator[RecordedServer]:
    """Serves ``recorded`` (by default a :class:`Recorded` of no change) until the block ends."""
    server = RecordedServer(recorded if recorded is not None else Recorded())
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


#: Starts a server of a :class:`Recorded` made of these values.
Serve = Callable[..., RecordedServer]


def servers(**defaults: Any) -> Iterator[Serve]:
    """The body of a fixture: yields a function that starts a server of ``Recorded(**values)``
    over ``defaults`` for each call; stops them all after."""
    with ExitStack() as stack:

        def start(**values: Any) -> RecordedServer:
            return stack.enter_context(serving(Recorded(**{**defaults, **values})))

        yield start
