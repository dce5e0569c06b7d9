"""Options that keep secrets at their origin and calls bounded: https only (loopback excepted),
no userinfo, safe path segments from the caller and from the server, sendable keys, the poll
interval's floor, and the deadline of a whole call (docs/protocol.md#timing-and-limits)."""

from __future__ import annotations

import contextlib
import http.server
import json
import math
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import bankfeed as bf
from bfhelpers import GREATDAY, INSTITUTION, PASSWORD, raises

CUSTOMER = "43387ca6-0391-4c82-857d-70d95f087ecb"
LOGIN = "5e0e5f83-6e9b-4a2c-a6a3-0d8f4b1c9e21"
REQUEST = "11111111-2222-3333-4444-555555555555"
PREFIX = f"/v3/{CUSTOMER}"

#: Path segments that could move a request (and the keys it carries) to another path.
HOSTILE = ["..", "%2e%2e", "a\\b", "a\r\nb", "a/b", "../../BankingServices/Authorize", "a\nb", "."]
HOSTILE_IDS = ["dot-dot", "escaped-dot-dot", "backslash", "crlf", "slash", "traversal", "lf", "dot"]

#: What a scripted server answers: (status, JSON body), or None to take the request and never answer.
Answer = tuple[int, Any] | None
Script = Callable[[str, str, int], Answer]


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("BANKFEED_BASE_URL", "BANKFEED_CUSTOMER_ID", "BANKFEED_API_KEY", "BANKFEED_SECRET_KEY"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, script: Script) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.script = script
        self.log: list[tuple[str, str]] = []
        self.released = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _answer(self) -> None:
        server = self.server
        assert isinstance(server, _Server)
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        server.log.append((self.command, self.path))
        answer = server.script(self.command, self.path, len(server.log))
        if answer is None:
            server.released.wait(30)
            return
        status, body = answer
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_DELETE = _answer


@contextlib.contextmanager
def serve(script: Script) -> Iterator[_Server]:
    """A loopback server answering by ``script(method, path, number of the request)``."""
    server = _Server(script)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.released.set()
        server.shutdown()
        server.server_close()
        thread.join(5)


def session_answer(login_id: str = LOGIN, request_id: str = REQUEST) -> tuple[int, Any]:
    return 200, {"HttpStatusCode": 200, "RequestId": request_id, "Login": {"Id": login_id}, "Links": []}


def pending_answer(request_id: str = REQUEST, href: str | None = None) -> tuple[int, Any]:
    links = [] if href is None else [{"rel": "GetAccountsDetailAsync", "href": href}]
    return 202, {"FlinksCode": "OPERATION_PENDING", "HttpStatusCode": 202, "RequestId": request_id, "Links": links}


def client_of(server: _Server, **options: Any) -> bf.Client:
    settings: dict[str, Any] = {"max_retries": 0, "poll_interval": 0.01, "poll_timeout": 10, **options}
    return bf.Client(server.url, CUSTOMER, **settings)


# --- https only, except loopback ------------------------------------------------------------


@pytest.mark.parametrize("field", ["base_url", "investments_base_url"])
@pytest.mark.parametrize(
    "url",
    ["http://example.com", "http://10.0.0.1:8080", "http://0.0.0.0:9", "http://[::2]", "http://localhost.evil.com"],
)
def test_http_to_a_host_that_is_not_loopback_is_refused(clean_env: pytest.MonkeyPatch, field: str, url: str) -> None:
    urls: dict[str, Any] = {"base_url": "https://example.com", field: url}
    with raises(bf.ConfigError, field=field) as info:
        bf.Client(customer_id=CUSTOMER, **urls)
    text = str(info.value)
    assert field in text and "http://" in text and "https" in text and "allow_insecure_http" in text, text


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:9", "http://127.9.8.7", "http://[::1]:9", "http://localhost:9", "http://LOCALHOST"]
)
def test_http_to_a_loopback_host_is_allowed(clean_env: pytest.MonkeyPatch, url: str) -> None:
    client = bf.Client(url, CUSTOMER)
    assert client.base_url == url
    assert client.allow_insecure_http is False


def test_allow_insecure_http_lets_http_reach_any_host(clean_env: pytest.MonkeyPatch) -> None:
    client = bf.Client("http://example.com", CUSTOMER, investments_base_url="http://10.0.0.1", allow_insecure_http=True)
    assert client.allow_insecure_http is True
    assert "allow_insecure_http=True" in repr(client)
    assert "allow_insecure_http" not in repr(bf.Client("https://example.com", CUSTOMER))


@pytest.mark.parametrize(
    "url", ["ftp://example.com", "file:///etc/passwd", "ws://127.0.0.1:9", "example.com", "https://"]
)
def test_other_schemes_are_refused_even_when_insecure_http_is_allowed(clean_env: pytest.MonkeyPatch, url: str) -> None:
    with raises(bf.ConfigError, field="base_url"):
        bf.Client(url, CUSTOMER, allow_insecure_http=True)


def test_allow_insecure_http_takes_a_bool(clean_env: pytest.MonkeyPatch) -> None:
    with pytest.raises(TypeError, match="allow_insecure_http"):
        bf.Client("https://example.com", CUSTOMER, allow_insecure_http=1)  # type: ignore[arg-type]


def test_the_sandbox_client_keeps_working(sandbox: bf.Sandbox) -> None:
    assert sandbox.url.startswith("http://127.0.0.1:")
    session = sandbox.client(poll_interval=0.01).login(INSTITUTION, "greatday_nomfa", PASSWORD)
    assert isinstance(session, bf.Session)


# --- no userinfo ------------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["base_url", "investments_base_url"])
@pytest.mark.parametrize(
    "url", ["https://user:pw-Zq81x@example.com", "https://pw-Zq81x@example.com", "http://u:pw-Zq81x@127.0.0.1:9"]
)
def test_userinfo_in_a_url_is_refused_and_never_repeated(clean_env: pytest.MonkeyPatch, field: str, url: str) -> None:
    urls: dict[str, Any] = {"base_url": "https://example.com", field: url}
    with raises(bf.ConfigError, field=field, extra_secrets=["pw-Zq81x"]) as info:
        bf.Client(customer_id=CUSTOMER, **urls)
    assert "user name or password" in str(info.value)


def test_userinfo_from_the_environment_is_refused_too(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("BANKFEED_BASE_URL", "https://user:pw-Zq81x@example.com")
    with raises(bf.ConfigError, field="base_url", extra_secrets=["pw-Zq81x"]):
        bf.Client(customer_id=CUSTOMER)


# --- safe path segments -----------------------------------------------------------------------


@pytest.mark.parametrize("customer_id", [*HOSTILE, "", " c", "c\n", "a?b", "a#b", "é", "a" * 129], ids=repr)
def test_a_customer_id_that_is_not_a_safe_segment_is_refused(clean_env: pytest.MonkeyPatch, customer_id: str) -> None:
    with raises(bf.ConfigError, field="customer_id") as info:
        bf.Client("https://example.com", customer_id)
    assert "GUID" in str(info.value)


def test_a_hostile_customer_id_from_the_environment_is_refused(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("BANKFEED_CUSTOMER_ID", "..")
    with raises(bf.ConfigError, field="customer_id"):
        bf.Client("https://example.com")


@pytest.mark.parametrize("customer_id", [CUSTOMER, "cust_1", "ABC-def"])
def test_guids_and_plain_segments_are_customer_ids(clean_env: pytest.MonkeyPatch, customer_id: str) -> None:
    assert bf.Client("https://example.com", customer_id).customer_id == customer_id


@pytest.mark.parametrize("login_id", HOSTILE, ids=HOSTILE_IDS)
def test_a_caller_login_id_that_is_not_a_safe_segment_is_refused_before_sending(login_id: str) -> None:
    with serve(lambda method, path, n: session_answer()) as server:
        client = client_of(server)
        for call in (client.authorize_cached, client.delete_login, client.investments):
            with raises(bf.ConfigError, field="login_id"):
                call(login_id)
        with raises(bf.ConfigError, field="login_id"):
            client.attributes(login_id, package="income")
        assert server.log == []


@pytest.mark.parametrize("bad", HOSTILE, ids=HOSTILE_IDS)
def test_a_202_naming_a_hostile_request_id_is_a_protocol_error(bad: str) -> None:
    def script(method: str, path: str, n: int) -> Answer:
        return session_answer() if path.endswith("/Authorize") else pending_answer(request_id=bad, href="/X")

    with serve(script) as server:
        with raises(bf.ProtocolError, operation="Investments", status=202, request_id=REQUEST) as info:
            client_of(server).investments(LOGIN)
        assert "RequestId" in str(info.value)
        assert server.log == [("POST", f"{PREFIX}/BankingServices/Authorize"), ("POST", f"{PREFIX}/Investments")]


@pytest.mark.parametrize("bad", [*HOSTILE, "https://evil.example/x"], ids=[*HOSTILE_IDS, "absolute"])
def test_a_202_naming_a_hostile_async_link_is_a_protocol_error(bad: str) -> None:
    def script(method: str, path: str, n: int) -> Answer:
        return session_answer() if path.endswith("/Authorize") else pending_answer(href=bad)

    with serve(script) as server:
        session = client_of(server).authorize_cached(LOGIN)
        with raises(bf.ProtocolError, operation="GetAccountsDetail", status=202, request_id=REQUEST) as info:
            session.accounts_detail()
        assert "href" in str(info.value)
        assert [path for _, path in server.log] == [
            f"{PREFIX}/BankingServices/Authorize",
            f"{PREFIX}/BankingServices/GetAccountsDetail",
        ]


@pytest.mark.parametrize("unusable", ["/", "", "/{Endpoint}Async", "{x}/../Authorize"])
def test_a_202_naming_no_usable_link_is_polled_on_the_operations_own_endpoint(unusable: str) -> None:
    # Production names its link as the template /{Endpoint}Async (docs/protocol.md#polling): none of
    # these reaches a path; account detail goes to its own GetAccountsDetailAsync/{RequestId}.
    def script(method: str, path: str, n: int) -> Answer:
        if path.endswith("/Authorize"):
            return session_answer()
        return pending_answer(href=unusable) if n < 3 else (200, {"HttpStatusCode": 200, "Accounts": []})

    with serve(script) as server:
        client_of(server).authorize_cached(LOGIN).accounts_detail()
        assert [path for _, path in server.log] == [
            f"{PREFIX}/BankingServices/Authorize",
            f"{PREFIX}/BankingServices/GetAccountsDetail",
            f"{PREFIX}/BankingServices/GetAccountsDetailAsync/{REQUEST}",
        ]


@pytest.mark.parametrize("field", ["LoginId", "RequestId"])
@pytest.mark.parametrize("bad", HOSTILE, ids=HOSTILE_IDS)
def test_a_session_naming_a_hostile_id_never_puts_it_in_a_url(field: str, bad: str) -> None:
    answer = session_answer(login_id=bad) if field == "LoginId" else session_answer(request_id=bad)
    with serve(lambda method, path, n: answer) as server:
        with raises(bf.ProtocolError, operation="Authorize", status=200) as info:
            client_of(server).attributes(LOGIN, package="income")
        assert field in str(info.value)
        assert server.log == [("POST", f"{PREFIX}/BankingServices/Authorize")]


# --- keys -------------------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["api_key", "secret_key"])
@pytest.mark.parametrize(
    "key", ["ak-Zq81x\r\nX-Evil: 1", "ak Zq81x", "ak-Zq81x\x00", "ak-Zq81x-é", "\tak-Zq81x"], ids=repr
)
def test_a_key_a_header_cannot_carry_is_refused_without_being_named(
    clean_env: pytest.MonkeyPatch, field: str, key: str
) -> None:
    keys: dict[str, Any] = {field: key}
    with raises(bf.ConfigError, field=field, extra_secrets=["Zq81x"]) as info:
        bf.Client("https://example.com", CUSTOMER, **keys)
    assert "header" in str(info.value)


@pytest.mark.parametrize("field", ["api_key", "secret_key"])
def test_an_empty_key_given_explicitly_is_refused(clean_env: pytest.MonkeyPatch, field: str) -> None:
    keys: dict[str, Any] = {field: ""}
    with raises(bf.ConfigError, field=field) as info:
        bf.Client("https://example.com", CUSTOMER, **keys)
    assert "empty" in str(info.value)


def test_keys_from_the_environment_are_checked_and_an_empty_variable_is_unset(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("BANKFEED_API_KEY", "ak Zq81x")
    with raises(bf.ConfigError, field="api_key", extra_secrets=["Zq81x"]):
        bf.Client("https://example.com", CUSTOMER)
    clean_env.setenv("BANKFEED_API_KEY", "")
    assert "api_key=None" in repr(bf.Client("https://example.com", CUSTOMER))


# --- the poll interval's floor ----------------------------------------------------------------


@pytest.mark.parametrize("value", [0, 0.0, 0.001, 0.0099])
def test_a_poll_interval_below_the_floor_is_raised_to_it(clean_env: pytest.MonkeyPatch, value: float) -> None:
    assert bf.Client("https://example.com", CUSTOMER, poll_interval=value).poll_interval == pytest.approx(0.01)


def test_a_poll_interval_above_the_floor_is_kept_and_a_negative_one_refused(clean_env: pytest.MonkeyPatch) -> None:
    assert bf.Client("https://example.com", CUSTOMER, poll_interval=0.02).poll_interval == pytest.approx(0.02)
    with raises(bf.ConfigError, field="poll_interval"):
        bf.Client("https://example.com", CUSTOMER, poll_interval=-0.001)


def test_poll_interval_zero_does_not_flood_the_server() -> None:
    def script(method: str, path: str, n: int) -> Answer:
        return session_answer() if path.endswith("/Authorize") else pending_answer()

    with serve(script) as server:
        with raises(bf.PendingTimeout, operation="Investments"):
            client_of(server, poll_interval=0, poll_timeout=0.5).investments(LOGIN)
        polls = len(server.log) - 1
    # One request per 10 ms at most, plus the first: 51; 1,477 in 2 s was the flood.
    assert 2 <= polls <= 52, polls


# --- bounds of a call -------------------------------------------------------------------------


def test_the_deadline_is_none_by_default_and_shown_when_set(clean_env: pytest.MonkeyPatch) -> None:
    client = bf.Client("https://example.com", CUSTOMER)
    assert client.deadline is None
    assert "deadline" not in repr(client)
    bounded = bf.Client("https://example.com", CUSTOMER, deadline=2.5)
    assert bounded.deadline == 2.5
    assert "deadline=2.5" in repr(bounded)


@pytest.mark.parametrize("value", [0, -1, math.nan, math.inf, 1e300])
def test_a_deadline_must_be_a_positive_number_of_seconds(clean_env: pytest.MonkeyPatch, value: float) -> None:
    with raises(bf.ConfigError, field="deadline"):
        bf.Client("https://example.com", CUSTOMER, deadline=value)


@pytest.mark.parametrize("value", ["1", True, [1]], ids=repr)
def test_a_deadline_of_another_type_is_a_type_error(clean_env: pytest.MonkeyPatch, value: object) -> None:
    with pytest.raises(TypeError, match="deadline"):
        bf.Client("https://example.com", CUSTOMER, deadline=value)  # type: ignore[arg-type]


def test_the_deadline_ends_a_call_to_a_silent_server() -> None:
    with serve(lambda method, path, n: None) as server:
        client = client_of(server, timeout=60, deadline=0.5)
        started = time.monotonic()
        with raises(bf.TransportError, operation="Authorize", timed_out=True) as info:
            client.investments(LOGIN)
        elapsed = time.monotonic() - started
    assert "deadline" in str(info.value)
    assert 0.4 <= elapsed < 5, elapsed


def test_the_deadline_that_ends_a_data_call_keeps_its_session_request_id() -> None:
    # The session is open, and the data call's first request gets no answer before the deadline:
    # as any failure of a data operation, the error keeps the RequestId to resume polling with.
    def script(method: str, path: str, n: int) -> Answer:
        return session_answer(request_id="r-open") if path.endswith("/Authorize") else None

    with serve(script) as server:
        client = client_of(server, timeout=60, deadline=0.5)
        with raises(bf.TransportError, operation="Investments", timed_out=True, request_id="r-open") as info:
            client.investments(LOGIN)
    assert "deadline" in str(info.value) and "r-open" in str(info.value)


def test_the_deadline_ends_a_pending_operation_with_pending_timeout() -> None:
    def script(method: str, path: str, n: int) -> Answer:
        return session_answer() if path.endswith("/Authorize") else pending_answer(request_id="r-pending")

    with serve(script) as server:
        client = client_of(server, poll_timeout=60, deadline=0.5)
        started = time.monotonic()
        with raises(bf.PendingTimeout, operation="Investments", request_id="r-pending") as info:
            client.investments(LOGIN)
        elapsed = time.monotonic() - started
    assert 0.3 <= info.value.waited <= elapsed < 5, (info.value.waited, elapsed)


def test_poll_timeout_cuts_a_poll_request_the_server_never_answers() -> None:
    def script(method: str, path: str, n: int) -> Answer:
        if path.endswith("/Authorize"):
            return session_answer()
        return pending_answer(request_id="r-silent") if n == 2 else None

    with serve(script) as server:
        client = client_of(server, timeout=60, poll_timeout=0.5)
        started = time.monotonic()
        with raises(bf.PendingTimeout, operation="Investments", request_id="r-silent"):
            client.investments(LOGIN)
        elapsed = time.monotonic() - started
    # Without the cut, the silent poll would have lasted the 60 s request timeout.
    assert elapsed < 5, elapsed


def test_the_deadline_spans_the_challenge_rounds_and_the_handler(sandbox: bf.Sandbox) -> None:
    def slow(challenge: bf.Challenge) -> dict[str, str]:
        time.sleep(0.4)
        return {c.prompt: GREATDAY[c.prompt] for c in challenge.challenges}

    client = sandbox.client(poll_interval=0.01, deadline=0.3)
    started = time.monotonic()
    with raises(bf.TransportError, operation="Authorize", timed_out=True):
        client.login(INSTITUTION, "Greatday", PASSWORD, on_challenge=slow)
    assert time.monotonic() - started < 5
    # The same login without a deadline passes: the handler alone is not what failed.
    roomy = sandbox.client(poll_interval=0.01)
    assert isinstance(roomy.login(INSTITUTION, "Greatday", PASSWORD, on_challenge=slow), bf.Session)


def test_a_deadline_long_enough_changes_nothing(sandbox: bf.Sandbox) -> None:
    client = sandbox.client(poll_interval=0.01, poll_timeout=10, deadline=30)
    session = client.login(INSTITUTION, "greatday_nomfa", PASSWORD, save=True)
    assert session.login_id is not None
    inv = client.investments(session.login_id)
    assert isinstance(inv, bf.Investments)
