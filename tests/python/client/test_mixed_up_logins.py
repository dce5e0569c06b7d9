"""A server (or a caching proxy in front of it) that answers the cached Authorize of one login with
the session of another: every call made for a LoginId refuses it as a ``ProtocolError`` naming both
LoginIds, and sends nothing for the other login (docs/errors.md#protocol-surprises).

Before, the session took the other login's id: the data call went out for that login, its answer
passed the check against it, and its data came back under the LoginId asked for, in single calls,
bulk calls and ``bf.combine`` alike.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

import bankfeed as bf
from bfhelpers import Api
from stubserver import Answer, Serve, serving

CUSTOMER = "43387ca6-0391-4c82-857d-70d95f087ecb"
ASKED = "5e0c4f28-8a5c-4e5a-9d40-7c0b8f3f6a11"
OTHER = "0b9a3c1d-2e4f-4a5b-8c6d-7e8f9a0b1c2d"
REQUEST = "b2a4d1c0-3f5e-4a6b-9c7d-1e2f3a4b5c6d"


def login(login_id: str) -> dict[str, Any]:
    return {"Id": login_id, "Username": "someone", "IsScheduledRefresh": False, "Type": "Personal"}


#: The other login's data, as its own calls would answer: what must never come out as ASKED's.
OTHERS_DATA = {
    "Authorize": Answer(200, {"HttpStatusCode": 200, "Login": login(OTHER), "RequestId": REQUEST}),
    "Investments": Answer(
        200, {"Accounts": [], "Securities": [], "Value": 1, "Cash": 1, "Login": login(OTHER), "RequestId": REQUEST}
    ),
    "GetAccountsDetail": Answer(
        200, {"HttpStatusCode": 200, "Accounts": [], "Login": login(OTHER), "RequestId": REQUEST}
    ),
    "GetIncomeAttributes": Answer(
        200, {"HttpStatusCode": 200, "Income": {"Id": REQUEST}, "Login": login(OTHER), "RequestId": REQUEST}
    ),
}


@pytest.fixture
def serve() -> Iterator[Serve]:
    yield from serving(OTHERS_DATA)


def client_of(api: Api, url: str) -> Any:  # bf.Client or bf.AsyncClient
    cls = bf.AsyncClient if api.is_async else bf.Client
    return cls(url, CUSTOMER, poll_interval=0.01, max_retries=0)


def assert_refused(error: object) -> None:
    assert isinstance(error, bf.ProtocolError), repr(error)
    assert error.operation == "Authorize"
    assert ASKED in str(error) and OTHER in str(error), str(error)
    assert error.request_id == REQUEST


def test_a_single_call_refuses_the_session_of_another_login_and_fetches_nothing(api: Api, serve: Serve) -> None:
    stub = serve({})
    client = client_of(api, stub.url)
    calls: list[Callable[[], Any]] = [
        lambda: client.investments(ASKED),
        lambda: client.attributes(ASKED, package="income"),
        lambda: client.authorize_cached(ASKED),
    ]
    for call in calls:
        with pytest.raises(bf.ProtocolError) as raised:
            api.run(call())
        assert_refused(raised.value)
    # Only the three Authorize calls: no data call went out for the other login.
    assert [operation for _, operation in stub.log] == ["Authorize"] * 3


@pytest.mark.parametrize("call", ["investments_many", "attributes_many", "accounts_detail_many"])
def test_a_bulk_call_gives_that_login_the_error_and_combine_writes_no_row(api: Api, serve: Serve, call: str) -> None:
    stub = serve({})
    client = client_of(api, stub.url)
    options: dict[str, Any] = {"package": "income"} if call == "attributes_many" else {}
    pairs = api.collect(getattr(client, call)([ASKED], **options))
    assert [login_id for login_id, _ in pairs] == [ASKED]
    assert_refused(pairs[0][1])
    combined = bf.combine(pairs)
    assert list(combined.errors) == [ASKED]
    assert all(len(table) == 0 for table in combined.tables.values())
    assert [operation for _, operation in stub.log] == ["Authorize"]
