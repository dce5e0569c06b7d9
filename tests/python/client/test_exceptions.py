"""Every exception class of ``bankfeed.errors``, raised from a real server answer.

A small stdlib HTTP server answers each operation with what a case says (an error body, a 203, a
202 forever, invalid JSON, a status the operation does not expect); the sandbox serves the one flow
that needs a real challenge sequence, and a closed port the transport failure. Each case checks the
class, its fields, that ``pickle`` keeps both, and that no secret the client holds (keys, the
authorize token, the password, an answer) appears in ``str``, ``repr`` or the pickled bytes. Every
case runs for ``bf.Client`` and ``bf.AsyncClient`` alike (the ``api`` fixture).
"""

from __future__ import annotations

import pickle
import socket
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest

import bankfeed as bf
from bankfeed import errors
from bfhelpers import GREATDAY, INSTITUTION, PASSWORD, THREE_ROUNDS, Api
from stubserver import Answer, Serve, error, serving

CUSTOMER = "43387ca6-0391-4c82-857d-70d95f087ecb"
LOGIN = "5e0c4f28-8a5c-4e5a-9d40-7c0b8f3f6a11"
REQUEST = "b2a4d1c0-3f5e-4a6b-9c7d-1e2f3a4b5c6d"

API_KEY = "ak-exc-7e1d2c3b4a"
SECRET_KEY = "sk-exc-0f9e8d7c6b"
TOKEN = "6f0e1d2c-3b4a-4958-8776-a5b4c3d2e1f0"
STUB_PASSWORD = "pw-exc-Hunter2"
WRONG_CHOICE = "Answer-exc-Nowhere"
SECRETS = (API_KEY, SECRET_KEY, TOKEN, STUB_PASSWORD, WRONG_CHOICE)

#: The fields any exception may carry; each one present must survive pickle unchanged.
FIELD_NAMES = (
    "code",
    "status",
    "message",
    "request_id",
    "body",
    "retry_after",
    "operation",
    "snippet",
    "timed_out",
    "waited",
    "prompt",
    "rule",
    "field",
    "rounds",
    "prompts",
)

AUTHORIZED = {
    "HttpStatusCode": 200,
    "Links": [{"rel": "AccountsDetail", "href": "/GetAccountsDetail", "example": None}],
    "Institution": "FlinksCapital",
    "Login": {
        "Username": "someone",
        "IsScheduledRefresh": False,
        "LastRefresh": "2026-11-20T08:15:42.1234567",
        "Type": "Personal",
        "Id": LOGIN,
    },
    "RequestId": REQUEST,
}
CHALLENGE = {
    "HttpStatusCode": 203,
    "Links": [{"rel": "Authorization", "href": "/Authorize", "example": None}],
    "SecurityChallenges": [
        {
            "Type": "MultipleChoice",
            "Prompt": "Which of these streets have you lived on?",
            "Iterables": ["Rue Sherbrooke", "Maple Avenue"],
        },
    ],
    "Institution": "FlinksCapital",
    "RequestId": REQUEST,
}
PENDING = {
    "FlinksCode": "OPERATION_PENDING",
    "Links": [],
    "HttpStatusCode": 202,
    "Message": "Your operation is still processing",
    "RequestId": REQUEST,
}


#: What the stub answers when a case does not say otherwise.
DEFAULTS = {
    "GenerateAuthorizeToken": Answer(200, {"HttpStatusCode": 200, "Token": TOKEN}),
    "Authorize": Answer(200, AUTHORIZED),
}


@pytest.fixture
def serve() -> Iterator[Serve]:
    """Starts stub servers with the given answers over :data:`DEFAULTS`; stops them after the test."""
    yield from serving(DEFAULTS)


def stub_client(api: Api, url: str, **options: Any) -> Any:
    # Keys on, so that the token call runs and every secret has a chance to leak; no retries,
    # so a retryable status reaches the caller at once.
    settings: dict[str, Any] = {"poll_interval": 0.01, "poll_timeout": 5.0, "max_retries": 0, **options}
    return api.client_at(url, CUSTOMER, api_key=API_KEY, secret_key=SECRET_KEY, **settings)


# --- what the client does against the stub --------------------------------------------------------


def cached(api: Api, client: Any) -> object:
    return api.run(client.authorize_cached(LOGIN))


def detail(api: Api, client: Any) -> object:
    return api.run(api.run(client.authorize_cached(LOGIN)).accounts_detail())


def delete(api: Api, client: Any) -> object:
    return api.run(client.delete_login(LOGIN))


def live(api: Api, client: Any) -> object:
    return api.run(client.authorize(INSTITUTION, "someone", STUB_PASSWORD))


def wrong_choice(api: Api, client: Any) -> object:
    step = api.run(client.authorize(INSTITUTION, "someone", STUB_PASSWORD))
    assert isinstance(step, api.Challenge)
    return api.run(step.answer({step.prompts[0]: WRONG_CHOICE}))


def investments_of_a_session_without_login(api: Api, client: Any) -> object:
    session = api.run(client.authorize(INSTITUTION, "someone", STUB_PASSWORD))
    assert isinstance(session, api.Session) and session.login_id is None
    return api.run(session.investments())


@dataclass(frozen=True)
class Case:
    """A stub answer (``answers``: operation -> answer), the call that meets it, and what it raises."""

    id: str
    answers: Mapping[str, Answer]
    call: Callable[[Api, Any], object]
    expected: type[errors.BankfeedError]
    fields: Mapping[str, Any]
    options: Mapping[str, Any] = field(default_factory=dict)


def api_case(
    id: str,
    expected: type[errors.BankfeedError],
    status: int,
    code: str,
    *,
    call: Callable[[Api, Any], object] = cached,
    operation: str = "Authorize",
    headers: tuple[tuple[str, str], ...] = (),
    **extra: Any,
) -> Case:
    message = f"the service says {code.lower()}"
    answer = error(status, code, message, REQUEST, headers)
    fields = {
        "code": code,
        "status": status,
        "message": message,
        "request_id": REQUEST,
        "body": answer.body,
        # Which call the service refused: the login (Authorize) or its data.
        "operation": operation,
        **extra,
    }
    return Case(id, {operation: answer}, call, expected, fields)


CASES = [
    # Service errors, classified by code first (the status of a code varies between versions).
    api_case("Unauthorized", errors.Unauthorized, 401, "UNAUTHORIZED"),
    api_case("Unauthorized-access-denied", errors.Unauthorized, 403, "ACCESS_DENIED"),
    api_case("InvalidLogin", errors.InvalidLogin, 401, "INVALID_LOGIN"),
    api_case("LoginDisabled", errors.LoginDisabled, 401, "DISABLED_LOGIN"),
    api_case("InvalidSecurityResponse", errors.InvalidSecurityResponse, 401, "INVALID_SECURITY_RESPONSE"),
    api_case(
        "SessionError", errors.SessionError, 400, "SESSION_NONEXISTENT", call=detail, operation="GetAccountsDetail"
    ),
    api_case("ConcurrentSession", errors.ConcurrentSession, 401, "CONCURRENT_SESSION"),
    api_case(
        "ConcurrentSession-card-in-use",
        errors.ConcurrentSession,
        400,
        "CARD_IN_USE",
        call=delete,
        operation="DeleteCard",
    ),
    api_case("RetryLater", errors.RetryLater, 401, "RETRY_LATER"),
    api_case(
        "RateLimited",
        errors.RateLimited,
        429,
        "TOO_MANY_REQUESTS",
        call=detail,
        operation="GetAccountsDetail",
        headers=(("Retry-After", "7"),),
        retry_after=7.0,
    ),
    api_case(
        "InvalidRequest", errors.InvalidRequest, 400, "INVALID_REQUEST", call=detail, operation="GetAccountsDetail"
    ),
    api_case("InstitutionUnavailable", errors.InstitutionUnavailable, 405, "DISABLED_INSTITUTION"),
    api_case(
        "AggregationError",
        errors.AggregationError,
        500,
        "AGGREGATION_ERROR",
        call=detail,
        operation="GetAccountsDetail",
    ),
    api_case("ApiError-unknown-code", errors.ApiError, 418, "SOMETHING_NEW"),
    Case(
        "AggregationError-text-body",
        {"GetAccountsDetail": Answer(500, "upstream exploded")},
        detail,
        errors.AggregationError,
        # No RequestId in the body: the error keeps that of the session it was sent in, to resume.
        {
            "code": None,
            "status": 500,
            "message": None,
            "request_id": REQUEST,
            "body": "upstream exploded",
            "operation": "GetAccountsDetail",
        },
    ),
    Case(
        "AggregationError-envelope-in-a-200",
        {"GetAccountsDetail": Answer(200, {"HttpStatusCode": 500, "FlinksCode": "AGGREGATION_ERROR"})},
        detail,
        errors.AggregationError,
        # An error the service sends with a 200 names its operation too.
        {"code": "AGGREGATION_ERROR", "status": 500, "operation": "GetAccountsDetail"},
    ),
    # What the client raises about an answer it did not expect.
    Case(
        "ChallengeRequired",
        {"Authorize": Answer(203, CHALLENGE)},
        cached,
        errors.ChallengeRequired,
        {"request_id": REQUEST, "prompts": ["Which of these streets have you lived on?"]},
    ),
    Case(
        "InvalidAnswer",
        {"Authorize": Answer(203, CHALLENGE)},
        wrong_choice,
        errors.InvalidAnswer,
        {"prompt": "Which of these streets have you lived on?"},
    ),
    Case(
        "ConfigError-session-without-login",
        {"Authorize": Answer(200, {key: value for key, value in AUTHORIZED.items() if key != "Login"})},
        investments_of_a_session_without_login,
        errors.ConfigError,
        {"field": "login_id"},
    ),
    Case(
        "PendingTimeout",
        # Without a link, a 202 of account detail is polled on GetAccountsDetailAsync.
        {"GetAccountsDetail": Answer(202, PENDING), "GetAccountsDetailAsync": Answer(202, PENDING)},
        detail,
        errors.PendingTimeout,
        {"operation": "GetAccountsDetail", "request_id": REQUEST},
        options={"poll_timeout": 0.2},
    ),
    Case(
        "DecodeError-200",
        {"GetAccountsDetail": Answer(200, "not json {")},
        detail,
        errors.DecodeError,
        {"operation": "GetAccountsDetail", "status": 200, "snippet": "not json {"},
    ),
    Case(
        "DecodeError-202",
        {"GetAccountsDetail": Answer(202, "<html>busy</html>")},
        detail,
        errors.DecodeError,
        {"operation": "GetAccountsDetail", "status": 202, "snippet": "<html>busy</html>"},
    ),
    Case(
        "ProtocolError-data-call-203",
        {"GetAccountsDetail": Answer(203, CHALLENGE)},
        detail,
        errors.ProtocolError,
        {"operation": "GetAccountsDetail", "status": 203, "request_id": REQUEST},
    ),
    Case(
        "ProtocolError-deletecard-202",
        {"DeleteCard": Answer(202, PENDING)},
        delete,
        errors.ProtocolError,
        {"operation": "DeleteCard", "status": 202, "request_id": REQUEST},
    ),
    Case(
        "ProtocolError-token-without-token",
        {"GenerateAuthorizeToken": Answer(200, {"HttpStatusCode": 200})},
        live,
        errors.ProtocolError,
        {"operation": "GenerateAuthorizeToken", "status": 200, "request_id": None},
    ),
]


def params() -> list[Any]:
    return [pytest.param(case, id=case.id) for case in CASES]


def present_fields(exc: BaseException) -> dict[str, Any]:
    return {name: getattr(exc, name) for name in FIELD_NAMES if hasattr(exc, name)}


E = TypeVar("E", bound=errors.BankfeedError)


def check_pickle_and_secrets(exc: E) -> E:
    """Pickles ``exc``: same class, text and fields; no secret in its text, repr or bytes."""
    data = pickle.dumps(exc)
    copy: E = pickle.loads(data)
    assert type(copy) is type(exc)
    assert str(copy) == str(exc)
    assert present_fields(copy) == present_fields(exc)
    texts = (str(exc), repr(exc), repr(copy), data.decode("latin-1"))
    for secret in (*SECRETS, PASSWORD):
        for text in texts:
            assert secret not in text, f"{secret!r} leaked in {text[:300]!r}"
    return copy


@pytest.mark.parametrize("case", params())
def test_a_server_answer_raises_its_class_with_its_fields(api: Api, serve: Serve, case: Case) -> None:
    server = serve(case.answers)
    client = stub_client(api, server.url, **case.options)
    with pytest.raises(errors.BankfeedError) as info:
        case.call(api, client)
    exc = info.value
    assert type(exc) is case.expected, f"{type(exc).__name__}: {exc}"
    assert isinstance(exc, errors.BankfeedError)
    for name, expected in case.fields.items():
        assert getattr(exc, name) == expected, f"{name}: {getattr(exc, name)!r} != {expected!r}"
    copy = check_pickle_and_secrets(exc)
    if isinstance(exc, errors.ApiError):
        assert isinstance(copy, errors.ApiError)
        assert case.fields["status"] == exc.status
        # The text names the status and the code, so that a log line alone says what happened.
        assert str(exc.status) in str(exc)
        assert exc.code is None or exc.code in str(exc)
    else:
        assert exc.message == str(exc), "outside ApiError, message is the whole text"
    if isinstance(exc, errors.ChallengeRequired):
        # Answerable where it was raised; a challenge is bound to its client, so not after pickling.
        assert isinstance(exc.challenge, api.Challenge) and exc.challenge.request_id == REQUEST
        assert isinstance(copy, errors.ChallengeRequired) and copy.challenge is None
    if isinstance(exc, errors.InvalidAnswer):
        assert exc.rule, "the rule broken is named"
        assert [op for _, op in server.log].count("Authorize") == 1, "nothing is sent for an invalid answer"
    if isinstance(exc, errors.PendingTimeout):
        assert 0.2 <= exc.waited < 5.0
    if isinstance(exc, (errors.ProtocolError, errors.DecodeError)):
        (answer,) = case.answers.values()
        if exc.operation == "GenerateAuthorizeToken":
            assert exc.snippet == "", "what the token call answers instead of its token may hold one"
        else:
            # The start of the body that really came, cut with an ellipsis when long.
            assert exc.snippet and answer.payload().decode().startswith(exc.snippet.removesuffix("…"))


def test_a_429_is_retried_then_raised_as_rate_limited(api: Api, serve: Serve) -> None:
    answer = error(429, "TOO_MANY_REQUESTS", "slow down", REQUEST, (("Retry-After", "0"),))
    server = serve({"GetAccountsDetail": answer})
    client = stub_client(api, server.url, max_retries=2)
    with pytest.raises(errors.RateLimited) as info:
        detail(api, client)
    assert info.value.status == 429 and info.value.retry_after == 0.0
    assert [op for _, op in server.log].count("GetAccountsDetail") == 3, "the first try and two retries"
    assert info.value.attempts == 3 and "after 3 attempts" in str(info.value)
    assert check_pickle_and_secrets(info.value).attempts == 3


def test_too_many_challenges_on_the_sandbox(api: Api) -> None:
    with bf.Sandbox() as sb:
        client = api.client(sb, max_challenge_rounds=1)
        with pytest.raises(errors.TooManyChallenges) as info:
            api.run(client.login(INSTITUTION, THREE_ROUNDS, PASSWORD, on_challenge=bf.answers(GREATDAY)))
    exc = info.value
    assert type(exc) is errors.TooManyChallenges
    assert exc.rounds == 1
    assert isinstance(exc.request_id, str) and len(exc.request_id) == 36
    copy = check_pickle_and_secrets(exc)
    assert isinstance(copy, errors.TooManyChallenges) and copy.rounds == 1
    for answer in GREATDAY.values():
        assert answer not in str(exc) and answer not in repr(exc)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_transport_error_from_a_closed_port(api: Api) -> None:
    client = stub_client(api, f"http://127.0.0.1:{closed_port()}")
    with pytest.raises(errors.TransportError) as info:
        api.run(client.authorize_cached(LOGIN))
    exc = info.value
    assert type(exc) is errors.TransportError
    # With a secret key the token call is the first request, so it is the one that fails.
    assert exc.operation in ("GenerateAuthorizeToken", "Authorize")
    assert exc.timed_out is False
    check_pickle_and_secrets(exc)


def test_a_closed_client_raises_client_closed_naming_the_operation(api: Api) -> None:
    client = stub_client(api, f"http://127.0.0.1:{closed_port()}")
    client.close()
    with pytest.raises(errors.ClientClosed) as info:
        api.run(client.authorize_cached(LOGIN))
    exc = info.value
    assert type(exc) is errors.ClientClosed
    assert exc.operation == "Authorize"
    assert "closed" in str(exc) and "new client" in str(exc)
    check_pickle_and_secrets(exc)


def test_a_connect_that_nobody_finishes_raises_connect_timeout(api: Api) -> None:
    with bf.Sandbox() as sb:
        client = api.client(sb)
        with pytest.raises(errors.ConnectTimeout) as info:
            api.run(client.connect(on_url=lambda url: None, timeout=0.1))
    exc = info.value
    assert type(exc) is errors.ConnectTimeout and isinstance(exc, TimeoutError)
    assert exc.waited == pytest.approx(0.1)
    check_pickle_and_secrets(exc)


def test_a_request_a_cassette_has_no_answer_for_raises_cassette_error(api: Api, tmp_path: Path) -> None:
    path = tmp_path / "institutions.yaml"
    with bf.Sandbox() as sb:
        recording = api.client(sb, cassette=path, record_mode="once")
        api.run(recording.institutions())
        recording.close()
        url, customer_id = sb.url, sb.customer_id
    client = api.client_at(url, customer_id, cassette=path)
    with pytest.raises(errors.CassetteError) as info:
        api.run(client.authorize_cached(LOGIN))
    exc = info.value
    assert type(exc) is errors.CassetteError
    assert exc.path == str(path) and exc.request is not None and "Authorize" in exc.request
    assert exc.closest is not None and exc.differences
    assert LOGIN not in str(exc), "the LoginId sent shows as its pseudonym"
    check_pickle_and_secrets(exc)


def test_every_exception_class_is_raised_by_a_case() -> None:
    raised = {case.expected.__name__ for case in CASES}
    raised |= {"TooManyChallenges", "TransportError", "ClientClosed", "ConnectTimeout", "CassetteError"}
    # BankfeedError itself is raised only when the bridge cannot build a richer exception.
    assert raised | {"BankfeedError"} == set(errors.__all__)


@pytest.mark.parametrize("name", errors.__all__)
def test_every_class_is_a_bankfeed_error_exported_by_the_package(name: str) -> None:
    cls = getattr(errors, name)
    assert issubclass(cls, errors.BankfeedError)
    assert getattr(bf, name) is cls
    assert name in bf.__all__
