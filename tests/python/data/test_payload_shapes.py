"""A 200 that is not the operation's payload (docs/errors.md#protocol-surprises).

A small stdlib HTTP server answers one operation with ``{}``, ``[]``, ``null``, a body naming a
RequestId but none of the operation's fields, an error envelope (``HttpStatusCode`` 500,
``AGGREGATION_ERROR``) or a valid empty payload, and every other operation with a valid answer. For
every data operation (and Authorize and GenerateAuthorizeToken), the first ones raise
``ProtocolError`` keeping the status, the RequestId and the start of the body, the envelope raises
the ``AggregationError`` it describes, and the valid empty payload is an empty result. ``from_json``
reads saved payloads the same way; DeleteCard, whose success body has no fixed shape, only raises
the error an envelope describes. Every call runs for ``bf.Client`` and ``bf.AsyncClient`` alike (the
``api`` fixture).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pytest

import bankfeed as bf
from bfhelpers import Api
from stubserver import Answer, Serve, serving

CUSTOMER = "43387ca6-0391-4c82-857d-70d95f087ecb"
LOGIN = "5e0c4f28-8a5c-4e5a-9d40-7c0b8f3f6a11"
REQUEST = "b2a4d1c0-3f5e-4a6b-9c7d-1e2f3a4b5c6d"
OTHER_REQUEST = "c3b5e2d1-4a6f-4b7c-8d9e-2f3a4b5c6d7e"
TOKEN = "6f0e1d2c-3b4a-4958-8776-a5b4c3d2e1f0"

AUTHORIZED = {
    "HttpStatusCode": 200,
    "Institution": "FlinksCapital",
    "Login": {"Username": "someone", "IsScheduledRefresh": False, "Type": "Personal", "Id": LOGIN},
    "RequestId": REQUEST,
}
DETAIL = {"HttpStatusCode": 200, "Accounts": [], "RequestId": REQUEST}
ENVELOPE = {
    "HttpStatusCode": 500,
    "Message": "The aggregation failed",
    "FlinksCode": "AGGREGATION_ERROR",
    "RequestId": OTHER_REQUEST,
}
#: A body naming a RequestId and no field of any operation but Authorize (whose field it is).
BARE = {"HttpStatusCode": 200, "FlinksCode": "OPERATION_PENDING", "RequestId": OTHER_REQUEST}


@dataclass(frozen=True)
class Operation:
    """A data operation: its name on the wire and in errors, the call that meets it, a valid empty
    payload of it, and the check of the result that payload gives."""

    name: str
    call: Callable[[Api, Any], object]
    empty: Mapping[str, Any]
    check: Callable[[Api, Any], None]
    #: Whether the client needs a secret key (only the token call).
    secret_key: bool = False


def session(api: Api, client: Any) -> Any:
    """The cached session every data call runs on."""
    return api.run(client.authorize_cached(LOGIN))


def no_rows(result: Any) -> None:
    """An Investments or Accounts result with no account."""
    assert len(result.accounts) == 0


def no_statements(result: Any) -> None:
    """A Statements result with no statement."""
    assert isinstance(result, bf.Statements) and len(result.statements) == 0 and result.files == []


def no_groups(result: Any) -> None:
    """An Attributes result with no group."""
    assert isinstance(result, bf.Attributes) and result.groups == [] and result.to_dict() == {}


def a_session(api: Api, result: Any) -> None:
    """An open session of the case's client."""
    assert isinstance(result, api.Session) and result.request_id == REQUEST


def data_result(check: Callable[[Any], None]) -> Callable[[Api, Any], None]:
    """``check`` of a data result, which is the same for both clients."""
    return lambda api, result: check(result)


OPERATIONS = [
    Operation(
        "Investments",
        lambda a, c: a.run(session(a, c).investments()),
        {"Accounts": [], "Securities": [], "Value": 0, "Cash": 0, "RequestId": REQUEST},
        data_result(no_rows),
    ),
    Operation("GetAccountsDetail", lambda a, c: a.run(session(a, c).accounts_detail()), DETAIL, data_result(no_rows)),
    Operation("GetAccountsSummary", lambda a, c: a.run(session(a, c).accounts_summary()), DETAIL, data_result(no_rows)),
    Operation(
        "GetStatements",
        lambda a, c: a.run(session(a, c).statements()),
        {"HttpStatusCode": 200, "StatementsByAccount": [], "RequestId": REQUEST},
        data_result(no_statements),
    ),
    Operation(
        "GetIncomeAttributes",
        lambda a, c: a.run(session(a, c).attributes(package="income")),
        {"HttpStatusCode": 200, "Login": {"Id": LOGIN}, "RequestId": REQUEST},
        data_result(no_groups),
    ),
    Operation(
        "Attributes",
        lambda a, c: a.run(session(a, c).attributes({"Card": ["balance_min"]})),
        {"HttpStatusCode": 200, "Login": {"Id": LOGIN}, "RequestId": REQUEST},
        data_result(no_groups),
    ),
    Operation("Authorize", session, {"HttpStatusCode": 200, "RequestId": REQUEST}, a_session),
    Operation("GenerateAuthorizeToken", session, {"HttpStatusCode": 200, "Token": TOKEN}, a_session, secret_key=True),
]
IDS = [operation.name for operation in OPERATIONS]

#: What the stub answers an operation a case is not about.
DEFAULTS = {
    "GenerateAuthorizeToken": Answer(200, {"HttpStatusCode": 200, "Token": TOKEN}),
    "Authorize": Answer(200, AUTHORIZED),
    "GetAccountsDetail": Answer(200, DETAIL),
}


@pytest.fixture
def serve() -> Iterator[Serve]:
    """Starts stub servers with the given answers over :data:`DEFAULTS`; stops them after the test."""
    yield from serving(DEFAULTS)


def call(api: Api, serve: Serve, operation: Operation, answer: object) -> object:
    """Runs ``operation`` with a client of the case's kind against a stub that answers it ``answer``."""
    server = serve({operation.name: Answer(200, answer)})
    keys: dict[str, Any] = {"secret_key": "sk-shapes-1"} if operation.secret_key else {}
    client = api.client_at(server.url, CUSTOMER, api_key="ak-shapes-1", max_retries=0, poll_timeout=5.0, **keys)
    return operation.call(api, client)


@pytest.mark.parametrize("operation", OPERATIONS, ids=IDS)
@pytest.mark.parametrize("body", ["{}", "[]", "null"])
def test_a_200_that_is_not_an_object_with_a_payload_field_is_a_protocol_error(
    api: Api, serve: Serve, operation: Operation, body: str
) -> None:
    with pytest.raises(bf.ProtocolError) as raised:
        call(api, serve, operation, body)
    error = raised.value
    # Whatever the token call answers instead of its token is withheld: it may hold one.
    snippet = "" if operation.name == "GenerateAuthorizeToken" else body
    # The answer names no RequestId: a data operation's error keeps its session's, to fetch again.
    request_id = None if operation.name in ("Authorize", "GenerateAuthorizeToken") else REQUEST
    expected = (operation.name, 200, request_id, snippet)
    assert (error.operation, error.status, error.request_id, error.snippet) == expected
    assert "200" in str(error) and operation.name in str(error)


@pytest.mark.parametrize(
    "operation", [op for op in OPERATIONS if op.name != "Authorize"], ids=[name for name in IDS if name != "Authorize"]
)
def test_a_protocol_error_keeps_the_request_id_the_body_named(api: Api, serve: Serve, operation: Operation) -> None:
    with pytest.raises(bf.ProtocolError) as raised:
        call(api, serve, operation, BARE)
    error = raised.value
    assert (error.operation, error.status, error.request_id) == (operation.name, 200, OTHER_REQUEST)
    if operation.name == "GenerateAuthorizeToken":
        assert error.snippet == ""  # withheld, as every answer of the token call that is not its token
    else:
        assert "OPERATION_PENDING" in error.snippet and len(error.snippet) <= 201


@pytest.mark.parametrize("operation", OPERATIONS, ids=IDS)
def test_a_200_whose_envelope_says_error_is_that_error(api: Api, serve: Serve, operation: Operation) -> None:
    with pytest.raises(bf.AggregationError) as raised:
        call(api, serve, operation, ENVELOPE)
    error = raised.value
    assert (error.status, error.code, error.message, error.request_id) == (
        500,
        "AGGREGATION_ERROR",
        "The aggregation failed",
        OTHER_REQUEST,
    )
    assert error.body == ENVELOPE
    assert isinstance(error, bf.ApiError)


@pytest.mark.parametrize("operation", OPERATIONS, ids=IDS)
def test_a_valid_empty_payload_is_an_empty_result(api: Api, serve: Serve, operation: Operation) -> None:
    operation.check(api, call(api, serve, operation, operation.empty))


@pytest.mark.parametrize("operation", OPERATIONS, ids=IDS)
def test_a_200_that_is_not_json_stays_a_decode_error(api: Api, serve: Serve, operation: Operation) -> None:
    with pytest.raises(bf.DecodeError) as raised:
        call(api, serve, operation, "<html>busy</html>")
    assert (raised.value.operation, raised.value.status) == (operation.name, 200)


def test_delete_card_answering_an_error_envelope_is_that_error(api: Api, serve: Serve) -> None:
    server = serve({"DeleteCard": Answer(200, ENVELOPE)})
    client = api.client_at(server.url, CUSTOMER, api_key="ak-shapes-1", max_retries=0)
    with pytest.raises(bf.AggregationError) as raised:
        api.run(client.delete_login(LOGIN))
    assert (raised.value.status, raised.value.request_id, raised.value.body) == (500, OTHER_REQUEST, ENVELOPE)


@pytest.mark.parametrize("body", ["{}", "[]", '{"Message": "Deleted."}'])
def test_delete_card_answering_any_other_body_returns_it(api: Api, serve: Serve, body: str) -> None:
    server = serve({"DeleteCard": Answer(200, body)})
    client = api.client_at(server.url, CUSTOMER, api_key="ak-shapes-1", max_retries=0)
    assert api.run(client.delete_login(LOGIN)) == json.loads(body)


# --- saved payloads -----------------------------------------------------------------------------

FromJson = Callable[[str], object]
READERS: list[tuple[str, FromJson, Mapping[str, Any]]] = [
    ("Investments", bf.Investments.from_json, {"Accounts": [], "RequestId": REQUEST}),
    ("GetAccountsDetail", bf.Accounts.from_json, {"Accounts": [], "RequestId": REQUEST}),
    ("Attributes", bf.Attributes.from_json, {"Login": {"Id": LOGIN}, "RequestId": REQUEST}),
]
READER_IDS = [name for name, _, _ in READERS]


@pytest.mark.parametrize(("name", "read", "empty"), READERS, ids=READER_IDS)
@pytest.mark.parametrize("body", ["{}", "[]", "null", '{"Something": 1}'])
def test_from_json_of_something_else_is_a_protocol_error(
    name: str, read: FromJson, empty: Mapping[str, Any], body: str
) -> None:
    with pytest.raises(bf.ProtocolError) as raised:
        read(body)
    assert (raised.value.operation, raised.value.status, raised.value.snippet) == (name, 200, body)


@pytest.mark.parametrize(("name", "read", "empty"), READERS, ids=READER_IDS)
def test_from_json_of_an_error_envelope_is_that_error(name: str, read: FromJson, empty: Mapping[str, Any]) -> None:
    with pytest.raises(bf.AggregationError) as raised:
        read(json.dumps(ENVELOPE))
    assert (raised.value.status, raised.value.request_id) == (500, OTHER_REQUEST)


@pytest.mark.parametrize(("name", "read", "empty"), READERS, ids=READER_IDS)
def test_from_json_of_a_valid_empty_payload_is_empty(name: str, read: FromJson, empty: Mapping[str, Any]) -> None:
    result = read(json.dumps(empty))
    if isinstance(result, bf.Attributes):
        no_groups(result)
    else:
        no_rows(result)
