"""Every fault the sandbox injects (docs/sandbox.md#faults) against every operation the client calls.

Each case ends either in success after retries or in the documented exception (docs/errors.md),
carrying the RequestId when the answer had one, within a few seconds. The request log shows that a
live Authorize with credentials is never sent twice, and a second server, the target of every
redirect, shows that nothing (no key, no token, no password) went anywhere but the origin.

One origin sandbox serves every case: each case injects its fault, runs its operation and clears.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

import bankfeed as bf

INSTITUTION = "FlinksCapital"
USERNAME = "greatday_nomfa"
PASSWORD = "Everyday"
API_KEY = "ak-faults-5c4b3a2910"
SECRET_KEY = "sk-faults-0a1b2c3d4e"
SECRETS = (API_KEY, SECRET_KEY, PASSWORD)

#: The longest any case may take; the slowest (a latency past the timeout) takes about 1 s.
BOUND = 4.0

#: The client of every case: small timeouts, so that a hang would show at once.
CLIENT_OPTIONS: dict[str, Any] = {
    "timeout": 2.0,
    "poll_interval": 0.01,
    "poll_timeout": 5.0,
    "max_body_bytes": 1_000_000,
}


@dataclass(frozen=True)
class Op:
    """An operation of the client, and the name the sandbox's faults give it."""

    name: str
    operation: str
    #: Safe to send twice: retried on transient failures.
    idempotent: bool = True
    #: Polled: the "session still loading" error is waited out.
    polled: bool = False


@dataclass(frozen=True)
class Fault:
    """A fault spec and the client options it needs."""

    name: str
    spec: Mapping[str, Any]
    options: Mapping[str, Any] = field(default_factory=dict)


OPS = (
    Op("authorize_credentials", "Authorize", idempotent=False),
    Op("authorize_cached", "Authorize"),
    Op("token", "GenerateAuthorizeToken"),
    Op("investments", "Investments", polled=True),
    Op("accounts_detail", "GetAccountsDetail", polled=True),
    Op("accounts_summary", "GetAccountsSummary", polled=True),
    Op("statements", "GetStatements", polled=True),
    Op("attributes_package", "Attributes", polled=True),
    Op("attributes_custom", "Attributes", polled=True),
    Op("delete_login", "DeleteCard"),
)

#: The redirect target's URL is filled in by the fixture (``{elsewhere}``).
FAULTS = (
    Fault("status_503_once", {"kind": "status", "status": 503, "retry_after": "0"}),
    Fault(
        "status_429_twice", {"kind": "status", "status": 429, "code": "TOO_MANY_REQUESTS", "retry_after": 0, "times": 2}
    ),
    Fault("status_503_always", {"kind": "status", "status": 503, "retry_after": "0", "times": None}),
    Fault("retry_after_absurd", {"kind": "status", "status": 503, "retry_after": "1e308"}),
    Fault("status_400", {"kind": "status", "status": 400, "code": "INVALID_REQUEST"}),
    Fault("latency", {"kind": "latency", "seconds": 0.3}),
    Fault("latency_past_timeout", {"kind": "latency", "seconds": 1.0}, {"timeout": 0.5}),
    Fault("drop_before_response", {"kind": "drop_before_response"}),
    Fault("drop_mid_body", {"kind": "drop_mid_body"}),
    Fault("malformed_json", {"kind": "malformed_json"}),
    Fault("truncated_body", {"kind": "truncated_body"}),
    Fault("wrong_content_type", {"kind": "wrong_content_type", "content_type": "text/html"}),
    Fault("html_error_page", {"kind": "html_error_page", "status": 502}),
    Fault("oversized_body", {"kind": "oversized_body", "bytes": 2_000_000}),
    Fault("redirect", {"kind": "redirect", "status": 307, "location": "{elsewhere}"}),
    Fault("session_loading", {"kind": "session_loading"}),
)

#: Known defects of the client, found by this matrix; the cases fail until they are fixed.
KNOWN_DEFECTS: dict[tuple[str, str], str] = {}


def expected(op: Op, fault: Fault) -> type[BaseException] | None:
    """What the case ends in: None for success, else the documented exception class."""
    name = fault.name
    if name in ("latency", "wrong_content_type"):
        return None
    if name in ("status_503_once", "status_429_twice", "latency_past_timeout", "drop_before_response", "drop_mid_body"):
        if not op.idempotent:
            return {
                "status_503_once": bf.RetryLater,
                "status_429_twice": bf.RateLimited,
            }.get(name, bf.TransportError)
        if op.name == "delete_login" and name.startswith("drop"):
            # The first DeleteCard went through; its repeat finds no connection.
            return bf.InvalidLogin
        return None
    if name in ("status_503_always", "retry_after_absurd"):
        return bf.RetryLater
    if name == "status_400":
        return bf.InvalidRequest
    if name in ("malformed_json", "truncated_body"):
        # DeleteCard takes any body that is not JSON as text (docs/protocol.md#deletecard).
        return None if op.name == "delete_login" else bf.DecodeError
    if name == "html_error_page":
        return None if op.idempotent else bf.AggregationError
    if name in ("oversized_body", "redirect"):
        return bf.ProtocolError
    if name == "session_loading":
        return None if op.polled else bf.InvalidRequest
    raise AssertionError(f"no expectation for {name}")


@dataclass
class World:
    """The origin sandbox, the redirect target, and a saved login."""

    origin: bf.Sandbox
    elsewhere: bf.Sandbox
    login_id: str

    def client(self, **options: Any) -> bf.Client:
        """A client of the origin with the matrix's options."""
        return self.origin.client(**{**CLIENT_OPTIONS, **options})

    def save_login(self) -> None:
        """(Re)saves the login, after a case that may have deleted it: a deleted login connects
        again under a new LoginId (docs/sandbox.md#lastrefresh-loginids-and-languages), which the
        cases after it use."""
        self.origin.clear_faults()
        session = self.client().login(INSTITUTION, USERNAME, PASSWORD, save=True)
        assert session.login_id is not None
        self.login_id = session.login_id


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    """One origin for the whole matrix (pending_polls=1: every polled call sees a 202; tier2: the
    custom attributes set answers; card_in_use_seconds=0: the login saved again after a case that
    deletes it can be deleted by the next at once)."""
    with (
        bf.Sandbox(
            secret_key=SECRET_KEY, api_key=API_KEY, pending_polls=1, tier2=True, card_in_use_seconds=0.0
        ) as origin,
        bf.Sandbox() as elsewhere,
    ):
        client = origin.client(**CLIENT_OPTIONS)
        session = client.login(INSTITUTION, USERNAME, PASSWORD, save=True)
        assert session.login_id is not None
        yield World(origin, elsewhere, session.login_id)
        assert elsewhere.request_count == 0, elsewhere.requests


def runner(op: Op, world: World, client: bf.Client) -> tuple[Callable[[], Any], str | None]:
    """The call of `op`, with what it needs (a session) made before any fault is injected, and the
    RequestId its requests name, when the call is made on a session."""
    login_id = world.login_id
    if op.name == "authorize_credentials":
        return (lambda: client.authorize(INSTITUTION, USERNAME, PASSWORD)), None
    if op.name in ("authorize_cached", "token"):
        return (lambda: client.authorize_cached(login_id)), None
    if op.name == "investments":
        return (lambda: client.investments(login_id)), None
    if op.name == "attributes_package":
        return (lambda: client.attributes(login_id, package="credit_risk")), None
    if op.name == "attributes_custom":
        return (lambda: client.attributes(login_id, {"Card": ["balance_min", "count_nsf"]})), None
    if op.name == "delete_login":
        return (lambda: client.delete_login(login_id)), None
    session = client.authorize_cached(login_id)
    if op.name == "accounts_detail":
        return (lambda: session.accounts_detail()), session.request_id
    if op.name == "accounts_summary":
        return (lambda: session.accounts_summary()), session.request_id
    assert op.name == "statements"
    return (lambda: session.statements()), session.request_id


def credential_logins(requests: list[bf.RecordedRequest]) -> int:
    """The Authorize requests of a case (a credentials case sends no other)."""
    return sum(1 for r in requests if r["method"] == "POST" and r["path"].endswith("/BankingServices/Authorize"))


def cases() -> Iterator[Any]:
    for op in OPS:
        for fault in FAULTS:
            defect = KNOWN_DEFECTS.get((op.name, fault.name))
            marks = [pytest.mark.xfail(reason=defect, strict=True)] if defect else []
            yield pytest.param(op, fault, id=f"{op.name}-{fault.name}", marks=marks)


@pytest.mark.parametrize(("op", "fault"), list(cases()))
def test_fault(world: World, op: Op, fault: Fault) -> None:
    """One operation under one fault: success after retries, or the documented exception, in time."""
    origin = world.origin
    origin.clear_faults()
    client = world.client(**fault.options)
    call, request_id = runner(op, world, client)
    spec = {
        key: (value.format(elsewhere=world.elsewhere.url) if isinstance(value, str) else value)
        for key, value in fault.spec.items()
    }
    seen = len(origin.requests)
    origin.inject({**spec, "operation": op.operation})
    outcome: BaseException | None = None
    started = time.monotonic()
    try:
        call()
    except bf.BankfeedError as error:
        outcome = error
    finally:
        elapsed = time.monotonic() - started
        left = origin.faults
        origin.clear_faults()
    try:
        want = expected(op, fault)
        assert elapsed < BOUND, f"took {elapsed:.2f} s"
        if want is None:
            assert outcome is None, f"expected success, got {outcome!r}"
            # Every fault but the endless one is used, so the call did meet it.
            assert left == [], left
        else:
            assert isinstance(outcome, want), f"expected {want.__name__}, got {outcome!r}"
            check_error(op, fault, outcome)
            if request_id is not None and isinstance(outcome, bf.ApiError):
                # The session's RequestId, which the failed request named.
                assert outcome.request_id == request_id, outcome
        if not op.idempotent:
            # A live Authorize the server saw is never sent again. The log line of a request
            # still being served (a latency past the timeout) comes when its answer does.
            deadline = time.monotonic() + 2.0
            while credential_logins(origin.requests[seen:]) == 0 and time.monotonic() < deadline:
                time.sleep(0.02)
            assert credential_logins(origin.requests[seen:]) == 1, origin.requests[seen:]
        assert world.elsewhere.request_count == 0, world.elsewhere.requests
    finally:
        if op.name == "delete_login":
            world.save_login()


def check_error(op: Op, fault: Fault, error: BaseException) -> None:
    """The fields the documented exception keeps, and no secret in its text."""
    # A body quoted from the summary's 200 (answered at once, so a fault may mangle it) can hold
    # an account called "Everyday Chequing": the sandbox's data, not the password sent.
    text = f"{error}\n{error!r}".replace("Everyday Chequing", "")
    for secret in SECRETS:
        assert secret not in text
    if isinstance(error, bf.ApiError):
        # The operation the service (or the proxy in front of it) refused; a package's
        # attributes are named by the package's endpoint (GetCreditRiskAttributes).
        named = {"attributes_package": "GetCreditRiskAttributes"}.get(op.name, op.operation)
        assert error.operation == named, (error.operation, named)
        if fault.name == "html_error_page":
            assert error.request_id is None
            # The page is named by its title, not quoted: its markup is on `body`.
            assert str(error).startswith("HTTP 502: an HTML page titled "), str(error)
            assert "<" not in str(error) and "<" in error.body
        elif fault.spec["kind"] in ("status", "session_loading"):
            # Every error envelope the fault layer makes up names a RequestId: the request's own
            # when it named one.
            assert error.request_id, error
        if fault.name == "status_503_always":
            assert error.attempts == (3 if op.idempotent else 1), error.attempts
        if fault.name == "retry_after_absurd":
            assert error.attempts == 1
    elif isinstance(error, bf.ProtocolError):
        assert error.status == (307 if fault.name == "redirect" else 200)
        if fault.name == "redirect":
            assert error.request_id, error
            assert "redirected to" in error.message
    elif isinstance(error, bf.TransportError):
        assert error.attempts == 1
        assert error.timed_out == (fault.name == "latency_past_timeout")
    elif isinstance(error, bf.DecodeError):
        assert error.status in (200, 202)


def test_a_fault_for_one_user_spares_the_others(world: World) -> None:
    """A fault with a username hits that user's requests only, however the request names the user."""
    origin = world.origin
    client = world.client()
    origin.clear_faults()
    origin.inject({"kind": "status", "status": 400, "code": "INVALID_REQUEST", "username": "Greatday", "times": None})
    session = client.authorize_cached(world.login_id)
    session.accounts_summary()
    origin.clear_faults()
    origin.inject(
        {"kind": "status", "status": 400, "code": "INVALID_REQUEST", "username": "GREATDAY_NOMFA", "times": None}
    )
    try:
        # By the credentials' Username, by the LoginId, by the session's RequestId.
        with pytest.raises(bf.InvalidRequest):
            client.authorize(INSTITUTION, USERNAME, PASSWORD)
        with pytest.raises(bf.InvalidRequest):
            client.authorize_cached(world.login_id)
        with pytest.raises(bf.InvalidRequest) as caught:
            session.accounts_summary()
        assert caught.value.request_id == session.request_id
    finally:
        origin.clear_faults()


def test_faults_are_a_sequence_and_listed_until_spent(world: World) -> None:
    """The first unspent fault that matches is used; ``faults`` shows what is left."""
    origin = world.origin
    origin.clear_faults()
    origin.inject(
        {"kind": "status", "status": 503, "retry_after": "0", "operation": "Authorize"},
        {"kind": "status", "status": 429, "retry_after": "0", "operation": "Authorize"},
        {"kind": "session_loading", "operation": "DeleteCard", "times": 5},
    )
    assert [fault["status"] if fault["kind"] == "status" else fault["kind"] for fault in origin.faults] == [
        503,
        429,
        "session_loading",
    ]
    seen = len(origin.requests)
    world.client().authorize_cached(world.login_id)
    statuses = [r["status"] for r in origin.requests[seen:] if r["path"].endswith("/Authorize")]
    assert statuses == [503, 429, 200]
    assert origin.faults == [
        {
            "kind": "session_loading",
            "operation": "DeleteCard",
            "username": None,
            "times": 5,
        }
    ]
    origin.clear_faults()
    assert origin.faults == []


def test_faults_given_at_construction() -> None:
    """``faults=`` arms the sandbox from its first request."""
    with bf.Sandbox(faults=[{"kind": "status", "status": 401, "code": "UNAUTHORIZED", "operation": "Authorize"}]) as sb:
        client = sb.client(**CLIENT_OPTIONS)
        with pytest.raises(bf.Unauthorized):
            client.authorize(INSTITUTION, USERNAME, PASSWORD)
        step = client.authorize(INSTITUTION, USERNAME, PASSWORD)
        assert isinstance(step, bf.Session)
        # Each Authorize after its token; the first Authorize got the fault.
        answered = [(r["path"].rsplit("/", 1)[-1], r["status"]) for r in sb.requests]
        first, second = (
            [("GenerateAuthorizeToken", 200), ("Authorize", 401)],
            [("GenerateAuthorizeToken", 200), ("Authorize", 200)],
        )
        assert answered == [*first, *second]


def test_dropped_connections_are_logged_with_status_0(world: World) -> None:
    """A request answered by a closed connection shows in the log, with status 0."""
    origin = world.origin
    origin.clear_faults()
    origin.inject({"kind": "drop_before_response", "operation": "Authorize"})
    seen = len(origin.requests)
    with pytest.raises(bf.TransportError):
        world.client().authorize(INSTITUTION, USERNAME, PASSWORD)
    assert [r["status"] for r in origin.requests[seen:] if r["path"].endswith("/Authorize")] == [0]


@pytest.mark.parametrize(
    ("spec", "named"),
    [
        ({}, "kind"),
        ({"kind": "boom"}, "kind"),
        ({"kind": "status"}, "status"),
        ({"kind": "status", "status": 700}, "status"),
        ({"kind": "status", "status": True}, "status"),
        ({"kind": "latency", "seconds": "1"}, "seconds"),
        ({"kind": "redirect"}, "location"),
        ({"kind": "redirect", "location": "http://x/\r\nSet-Cookie: a=b"}, "location"),
        ({"kind": "drop_mid_body", "seconds": 1}, "seconds"),
        ({"kind": "drop_mid_body", "times": 0}, "times"),
        ({"kind": "drop_mid_body", "operation": "GetEverything"}, "operation"),
        ({"kind": "oversized_body", "bytes": -1}, "bytes"),
    ],
)
def test_a_bad_fault_is_refused_naming_its_key(world: World, spec: dict[str, Any], named: str) -> None:
    """A fault that cannot be read raises ConfigError naming the item and the key; nothing is armed."""
    with pytest.raises(bf.ConfigError) as caught:
        world.origin.inject({"kind": "latency", "seconds": 0}, spec)
    assert "item 1" in str(caught.value)
    assert named in str(caught.value)
    assert world.origin.faults == []


def test_faults_must_be_a_list_of_dicts() -> None:
    """A lone dict, or a list holding something else, is refused at construction."""
    with pytest.raises(bf.ConfigError, match="faults"):
        bf.Sandbox(faults={"kind": "latency", "seconds": 0})  # type: ignore[arg-type]
    with pytest.raises(bf.ConfigError, match="item 0"):
        bf.Sandbox(faults=["latency"])  # type: ignore[list-item]


@pytest.mark.parametrize("kind", ["drop_before_response", "drop_mid_body"])
def test_a_dropped_cached_authorize_is_retried_without_a_secret_key(kind: str) -> None:
    """The two known defects above are the token's: without a secret key the retry succeeds."""
    with bf.Sandbox() as sb:
        client = sb.client(**CLIENT_OPTIONS)
        login_id = client.login(INSTITUTION, USERNAME, PASSWORD, save=True).login_id
        assert login_id is not None
        sb.inject({"kind": kind, "operation": "Authorize"})
        assert client.authorize_cached(login_id).login_id == login_id
        assert sb.faults == []
