r"""A server that repeats what a call sent in its error (docs/errors.md#secrets-a-server-repeats):
the keys, the authorize tokens the call minted, the username and password, the answers. Each is
masked wherever the client keeps or shows the server's text: ``str`` and ``repr`` of the exception,
its ``message``, ``code``, ``request_id``, ``body`` and ``snippet``, the log records, and an
export's ``_failures.jsonl`` and journal.

A raw loopback server plays the service (bodies from ``tests/corpus``) and answers the operation a
test names with the secrets the request carried: in ``Message`` and in fields of a JSON error
(raw, JSON-escaped with ``\uXXXX``, URL-encoded), in a plain-text error, in a 200 that is not
JSON (the snippet of a protocol surprise), and in a redirect's ``Location``.
"""

from __future__ import annotations

import copy
import http.server
import json
import logging
import threading
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus, urlencode

import pytest

import bankfeed as bf
from recordedserver import LIVE_PROMPT, recorded
from stubserver import operation_of

CUSTOMER = "43387ca6-0391-4c82-857d-70d95f087ecb"
INSTITUTION = "FlinksCapital"
API_KEY = "ak-echo-3f9c2a71"
SECRET_KEY = "sk-echo-8d41b6e0"
USERNAME = "echo-user-5b2e"
#: A quote, a slash, a plus, an ampersand, a space and letters outside ASCII: each escaped
#: differently by JSON, a URL and HTML.
PASSWORD = 'pw "Échö"/+&7'
ANSWER = "Ünïcorn Öl 42"
#: The answer of a second try, after the service refused the first.
ANOTHER_ANSWER = "Zweiter Versuch 43"
LOGINS = ["5b1e0c2d-9a4f-4e7b-5d21-08dc3f6a91e7", "a07c93f1-2e6d-4b18-6a3c-08dc3f6a91e8"]

#: How the server repeats what it was sent: in a JSON error (its Message, its code, its RequestId
#: and other fields), in a plain-text error, in a 200 that is not JSON, in a redirect's Location.
MODES = ("json", "text", "garbled", "redirect")


@dataclass
class Echoing:
    """What the server answers: the operations it refuses, each with how it repeats what it was
    sent (``{operation: mode}``, a mode of :data:`MODES`), and the tokens it minted."""

    refuse: dict[str, str] = field(default_factory=dict)
    minted: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: Repeat every secret any request carried so far (an earlier call's, another login's), not
    #: only the refused request's own.
    earlier: bool = False
    #: With ``earlier``: each refused request waits until this many were refused, so that each
    #: repeats what the others carried (the logins of a bulk call).
    gather: threading.Barrier | None = None
    #: Every secret the requests carried so far, in order.
    seen: list[str] = field(default_factory=list)


class EchoServer(http.server.ThreadingHTTPServer):
    """The service on loopback, answering each operation of ``echoing.refuse`` with what the
    request carried."""

    daemon_threads = True

    def __init__(self, echoing: Echoing) -> None:
        super().__init__(("127.0.0.1", 0), EchoHandler)
        self.echoing = echoing

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


def corpus(name: str, request_id: str, login_id: str | None = None) -> tuple[int, Any]:
    """A corpus answer with this request's RequestId and LoginId."""
    data = recorded(name)
    body = copy.deepcopy(data["body"])
    if "RequestId" in body:
        body["RequestId"] = request_id
    if login_id is not None and isinstance(body.get("Login"), dict):
        body["Login"]["Id"] = login_id
    return int(data["status"]), body


def carried(headers: Any, body: Any) -> list[str]:
    """The secrets a request carried, and the client's keys, which the server knows."""
    values = [API_KEY, SECRET_KEY]
    values += [headers[name] for name in ("x-api-key", "flinks-auth-key", "authorization") if headers.get(name)]
    if isinstance(body, dict):
        values += [str(body[key]) for key in ("Username", "Password") if key in body]
        for answers in (body.get("SecurityResponses") or {}).values():
            values += [str(answer) for answer in answers]
    return values


def form(values: Iterable[str]) -> str:
    """``values`` as a URL's query encodes them."""
    return urlencode([("v", value) for value in values])


class EchoHandler(http.server.BaseHTTPRequestHandler):
    server: EchoServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        body = json.loads(raw) if raw else None
        operation = operation_of(self.path)
        echoing = self.server.echoing
        if operation == "GenerateAuthorizeToken":
            token = str(uuid.uuid4())
            with echoing.lock:
                echoing.minted.append(token)
            return self._send(200, {"Token": token})
        values = carried(self.headers, body)
        with echoing.lock:
            echoing.seen.extend(value for value in values if value not in echoing.seen)
        mode = echoing.refuse.get(operation)
        if mode is None:
            return self._send(*self._served(operation, body))
        if echoing.earlier:
            if echoing.gather is not None:
                echoing.gather.wait()
            with echoing.lock:
                values = list(echoing.seen)
        auth = self.headers.get("flinks-auth-key")
        status = 401 if operation == "Authorize" else 400
        if mode in ("json", "invalid_answer"):
            code = "INVALID_SECURITY_RESPONSE" if mode == "invalid_answer" else f"REFUSED_{values[-1]}"
            self._send(
                status,
                {
                    "HttpStatusCode": status,
                    "FlinksCode": code,
                    "Message": f"refused {' | '.join(values)}; as JSON {json.dumps(body)}; as a form {form(values)}",
                    "RequestId": auth if auth and auth not in (API_KEY, SECRET_KEY) else str(uuid.uuid4()),
                    "Echo": body,
                    "Headers": dict(self.headers.items()),
                    "Escaped": json.dumps(body, ensure_ascii=True),
                    "Form": form(values),
                },
            )
        elif mode == "text":
            self._send(status, f"refused: {' '.join(values)}\r\n{raw.decode()}\r\n{form(values)}")
        elif mode == "garbled":
            # Every secret within the first 200 characters (the snippet), each cut somewhere past.
            self._send(200, f"<{'|'.join(values)}> {json.dumps(body)} {form(values)}")
        else:
            location = f"http://127.0.0.1:9/steal?{form(values)}"
            self._send(302, f"moved: {' '.join(values)}", (("Location", location),))

    def _served(self, operation: str, body: Any) -> tuple[int, Any]:
        request_id = str(uuid.uuid4())
        if operation == "Authorize":
            if isinstance(body, dict) and "Username" in body:
                return corpus("authorize-203", request_id)
            if isinstance(body, dict) and "SecurityResponses" in body:
                return corpus("authorize-200", str(body["RequestId"]), LOGINS[0])
            login = str(body.get("LoginId")) if isinstance(body, dict) else LOGINS[0]
            return corpus("authorize-200", request_id, login.lower())
        if operation == "Investments":
            return corpus("investments-200", str(body.get("RequestId") if isinstance(body, dict) else request_id))
        return 404, {"HttpStatusCode": 404, "Message": f"no route {operation}"}

    def _send(self, status: int, body: object, headers: Iterable[tuple[str, str]] = ()) -> None:
        text = isinstance(body, str)
        data = body.encode() if isinstance(body, str) else json.dumps(body, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8" if text else "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    do_POST = do_GET = do_DELETE = do_PATCH = _answer


@pytest.fixture
def echoing() -> Iterator[tuple[EchoServer, Echoing]]:
    echoing = Echoing()
    server = EchoServer(echoing)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield server, echoing
    server.shutdown()
    server.server_close()
    thread.join(5)


@pytest.fixture
def records() -> Iterator[list[logging.LogRecord]]:
    """Every record of logger ``bankfeed`` at DEBUG while the test runs."""

    class Keep(logging.Handler):
        def __init__(self) -> None:
            super().__init__(logging.NOTSET)
            self.kept: list[logging.LogRecord] = []

        def emit(self, record: logging.LogRecord) -> None:
            self.kept.append(record)

    logger = logging.getLogger("bankfeed")
    keep, previous = Keep(), logger.level
    logger.setLevel(logging.DEBUG)
    logger.addHandler(keep)
    yield keep.kept
    logger.removeHandler(keep)
    logger.setLevel(previous)


def client_of(server: EchoServer) -> bf.Client:
    return bf.Client(
        server.url,
        CUSTOMER,
        api_key=API_KEY,
        secret_key=SECRET_KEY,
        poll_interval=0.01,
        max_retries=0,
    )


def forms(secret: str) -> set[str]:
    """``secret`` as it is and in each escaped form a server could repeat it in."""
    return {
        secret,
        json.dumps(secret)[1:-1],
        json.dumps(secret, ensure_ascii=False)[1:-1],
        quote(secret),
        quote_plus(secret),
        quote(secret, safe=""),
    }


def leaks(texts: Iterable[str], secrets: Iterable[str]) -> list[str]:
    """Each secret (in any of its forms, in any letter case) found in ``texts``, and each start of
    one (4 characters or more) left at a cut (``…``)."""
    found = []
    for text in texts:
        lowered = text.lower()
        for secret in secrets:
            if any(each.lower() in lowered for each in forms(secret)):
                found.append(f"{secret!r} in {text!r}")
            for at in (index for index, c in enumerate(text) if c == "…"):
                before = text[:at]
                if any(before.endswith(secret[:n]) for n in range(4, len(secret))):
                    found.append(f"the start of {secret!r} at a cut in {text!r}")
    return found


def shown(error: BaseException) -> list[str]:
    """Everything an exception shows of the server's text."""
    texts = [str(error), repr(error)]
    for name in ("message", "code", "request_id", "snippet"):
        value = getattr(error, name, None)
        if value is not None:
            texts.append(str(value))
    if hasattr(error, "body"):
        body = error.body
        texts += [repr(body), json.dumps(body, ensure_ascii=False)]
    return texts


def sent_secrets(echoing: Echoing) -> list[str]:
    return [API_KEY, SECRET_KEY, USERNAME, PASSWORD, ANSWER, ANOTHER_ANSWER, *echoing.minted]


def assert_masked(echoing: Echoing, texts: list[str], records: list[logging.LogRecord]) -> None:
    logged = [record.getMessage() for record in records]
    assert echoing.minted, "no token was minted: the call did not run as meant"
    assert leaks(texts + logged, sent_secrets(echoing)) == []


@pytest.mark.parametrize("mode", MODES)
def test_a_login_refused_with_the_credentials_repeated_masks_them(
    echoing: tuple[EchoServer, Echoing], records: list[logging.LogRecord], mode: str
) -> None:
    server, state = echoing
    state.refuse["Authorize"] = mode
    with pytest.raises(bf.BankfeedError) as info:
        client_of(server).authorize(INSTITUTION, USERNAME, PASSWORD)
    texts = shown(info.value)
    assert "***" in " ".join(texts), texts
    assert_masked(state, texts, records)


@pytest.mark.parametrize("mode", [*MODES, "invalid_answer"])
def test_a_refused_answer_repeated_by_the_server_is_masked(
    echoing: tuple[EchoServer, Echoing], records: list[logging.LogRecord], mode: str
) -> None:
    server, state = echoing
    step = client_of(server).authorize(INSTITUTION, USERNAME, PASSWORD)
    assert isinstance(step, bf.Challenge)
    state.refuse["Authorize"] = mode
    with pytest.raises(bf.BankfeedError) as info:
        step.answer({LIVE_PROMPT: ANSWER})
    if mode == "invalid_answer":
        # The challenge stays open, as it came: only what the server said is masked.
        assert isinstance(info.value, bf.InvalidSecurityResponse) and info.value.challenge is not None
    assert_masked(state, shown(info.value), records)


def test_a_login_whose_answer_is_refused_masks_the_answer_and_the_credentials(
    echoing: tuple[EchoServer, Echoing], records: list[logging.LogRecord]
) -> None:
    server, state = echoing

    def answer_then_refuse(challenge: bf.Challenge) -> dict[str, str]:
        state.refuse["Authorize"] = "json"
        return {LIVE_PROMPT: ANSWER}

    with pytest.raises(bf.BankfeedError) as info:
        client_of(server).login(INSTITUTION, USERNAME, PASSWORD, on_challenge=answer_then_refuse)
    assert_masked(state, shown(info.value), records)


@pytest.mark.parametrize("operation", ["Authorize", "Investments"])
@pytest.mark.parametrize("mode", MODES)
def test_a_data_call_refused_with_the_key_and_token_repeated_masks_them(
    echoing: tuple[EchoServer, Echoing], records: list[logging.LogRecord], mode: str, operation: str
) -> None:
    server, state = echoing
    state.refuse[operation] = mode
    with pytest.raises(bf.BankfeedError) as info:
        client_of(server).investments(LOGINS[0])
    assert_masked(state, shown(info.value), records)


def test_a_bulk_calls_failures_mask_what_each_login_sent(
    echoing: tuple[EchoServer, Echoing], records: list[logging.LogRecord]
) -> None:
    server, state = echoing
    state.refuse["Authorize"] = "json"
    results = list(client_of(server).investments_many(LOGINS))
    errors = [result for _, result in results if isinstance(result, BaseException)]
    assert len(errors) == len(LOGINS), results
    assert_masked(state, [text for error in errors for text in shown(error)], records)


@pytest.mark.parametrize("mode", MODES)
def test_each_login_of_a_bulk_call_masks_the_tokens_minted_for_the_others(
    echoing: tuple[EchoServer, Echoing], records: list[logging.LogRecord], mode: str
) -> None:
    server, state = echoing
    # Each login's refusal waits for the other's Authorize, then repeats both logins' tokens.
    state.refuse["Authorize"], state.earlier, state.gather = mode, True, threading.Barrier(len(LOGINS), timeout=10)
    results = list(client_of(server).investments_many(LOGINS))
    errors = [result for _, result in results if isinstance(result, BaseException)]
    assert len(errors) == len(LOGINS) == len(state.minted), results
    assert_masked(state, [text for error in errors for text in shown(error)], records)


@pytest.mark.parametrize("mode", MODES)
def test_an_answer_masks_the_credentials_its_login_sent_in_the_call_before(
    echoing: tuple[EchoServer, Echoing], records: list[logging.LogRecord], mode: str
) -> None:
    server, state = echoing
    step = client_of(server).authorize(INSTITUTION, USERNAME, PASSWORD)
    assert isinstance(step, bf.Challenge)
    # The answer's call sends no password: the server repeats the one of the Authorize before.
    state.refuse["Authorize"], state.earlier = mode, True
    with pytest.raises(bf.BankfeedError) as info:
        step.answer({LIVE_PROMPT: ANSWER})
    texts = shown(info.value)
    assert "***" in " ".join(texts), texts
    assert_masked(state, texts, records)


def test_a_challenge_answered_again_masks_the_answer_refused_before(
    echoing: tuple[EchoServer, Echoing], records: list[logging.LogRecord]
) -> None:
    server, state = echoing
    step = client_of(server).authorize(INSTITUTION, USERNAME, PASSWORD)
    assert isinstance(step, bf.Challenge)
    state.refuse["Authorize"] = "invalid_answer"
    with pytest.raises(bf.InvalidSecurityResponse) as refused:
        step.answer({LIVE_PROMPT: ANSWER})
    challenge = refused.value.challenge
    assert isinstance(challenge, bf.Challenge)
    state.refuse["Authorize"], state.earlier = "json", True
    with pytest.raises(bf.BankfeedError) as info:
        challenge.answer({LIVE_PROMPT: ANOTHER_ANSWER})
    assert ANSWER in state.seen and PASSWORD in state.seen
    assert_masked(state, shown(info.value), records)


@pytest.mark.parametrize("mode", MODES)
def test_a_data_call_through_a_session_masks_what_opened_it(
    echoing: tuple[EchoServer, Echoing], records: list[logging.LogRecord], mode: str
) -> None:
    server, state = echoing
    step = client_of(server).authorize(INSTITUTION, USERNAME, PASSWORD)
    assert isinstance(step, bf.Challenge)
    session = step.answer({LIVE_PROMPT: ANSWER})
    assert isinstance(session, bf.Session)
    state.refuse["Investments"], state.earlier = mode, True
    with pytest.raises(bf.BankfeedError) as info:
        session.investments()
    texts = shown(info.value)
    assert "***" in " ".join(texts), texts
    assert_masked(state, texts, records)


def test_an_exports_failures_and_journal_mask_what_each_login_sent(
    echoing: tuple[EchoServer, Echoing], records: list[logging.LogRecord], tmp_path: Path
) -> None:
    server, state = echoing
    state.refuse["Authorize"] = "json"
    report = bf.export(client_of(server), LOGINS, tmp_path, what=["investments"])
    assert report.logins_failed == len(LOGINS)
    written = [path.read_bytes().decode("utf-8", "replace") for path in tmp_path.rglob("*") if path.is_file()]
    assert_masked(state, [*written, repr(report), str(report)], records)
    # The failures, and the journal's copy of them, were written with the server's words masked.
    failures = (tmp_path / "_failures.jsonl").read_text(encoding="utf-8")
    assert failures.count("***") >= len(LOGINS), failures
    assert any(path.parent.name == "_journal" for path in tmp_path.rglob("*")), list(tmp_path.rglob("*"))
