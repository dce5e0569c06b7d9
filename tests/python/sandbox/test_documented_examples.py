"""The service's documented request and response examples, replayed against a sandbox and compared
field by field: every key of the documented answer is there, with a value of the documented type,
and the sandbox adds no key the documentation does not show. The examples are written out here in
bankfeed's own words and values (the request) and as key-to-type shapes (the answer); each names
its source in a comment. docs/protocol.md describes the same operations."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

import bankfeed as bf

# A shape: a type name ("text", "number", "bool"), several joined by "|" ("number|null"), a dict
# of key to shape (an object), or a one-item list (a list whose items all have that shape).
Shape = str | dict[str, Any] | list[Any]

GUID = "text"
BALANCE = {"Available": "number|null", "Current": "number|null", "Limit": "number|null"}
LOGIN = {"Username": "text", "IsScheduledRefresh": "bool", "LastRefresh": "text", "Type": "text|null", "Id": GUID}
ADDRESS = {
    "CivicAddress": "text|null",
    "City": "text|null",
    "Province": "text|null",
    "PostalCode": "text|null",
    "POBox": "text|null",
    "Country": "text|null",
}
HOLDER = {"Name": "text|null", "Address": ADDRESS, "Email": "text|null", "PhoneNumber": "text|null"}
LINK = {"rel": "text", "href": "text", "example": "text|null"}
AROUND = {
    "InstitutionName": "text",
    "Login": LOGIN,
    "InstitutionId": "number",
    "Institution": "text",
    "RequestId": GUID,
}

# GenerateAuthorizeToken: https://docs.flinks.com/reference/step-2-generate-authorize-token (the
# answer's fields as the authentication reference gives them).
TOKEN = {"HttpStatusCode": "number", "Token": GUID}

# GetAccountsDetail: https://docs.flinks.com/api/connect/endpoints/account-linking/get-accounts-detail
# (types and null-ness: https://help.flinks.com/support/solutions/articles/43000705311-data-types-in-getaccountsdetail).
DETAIL = {
    "HttpStatusCode": "number",
    "Accounts": [
        {
            "Transactions": [
                {
                    "Date": "text",
                    "Code": "null",
                    "Description": "text|null",
                    "Debit": "number|null",
                    "Credit": "number|null",
                    "Balance": "number|null",
                    "Id": GUID,
                }
            ],
            "TransitNumber": "text|null",
            "InstitutionNumber": "text|null",
            "OverdraftLimit": "number|null",
            "Title": "text|null",
            "AccountNumber": "text|null",
            "LastFourDigits": "text|null",
            "Balance": BALANCE,
            "Category": "text|null",
            "Type": "text|null",
            "Currency": "text|null",
            "Holder": HOLDER,
            "AccountType": "text|null",
            "Id": GUID,
        }
    ],
    **AROUND,
}

# GetAccountsSummary: https://docs.flinks.com/api/connect/endpoints/account-linking/get-accounts-summary
# (types: https://help.flinks.com/support/solutions/articles/43000705318-data-types-in-getaccountssummary).
# Its example's holder has an address; the sandbox's summary holder has only a name, as
# docs/protocol.md#account-detail-summary-and-statements says: compared without it.
SUMMARY = {
    "HttpStatusCode": "number",
    "Accounts": [
        {
            "EftEligibleRatio": "number",
            "ETransferEligibleRatio": "number",
            "Title": "text|null",
            "AccountNumber": "text|null",
            "LastFourDigits": "text|null",
            "Balance": BALANCE,
            "Category": "text|null",
            "Type": "text|null",
            "Currency": "text|null",
            "Holder": {"Name": "text|null"},
            "AccountType": "text|null",
            "Id": GUID,
        }
    ],
    "Links": [LINK],
    "Tag": "text",
    **AROUND,
}


def type_of(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "text"
    return "list" if isinstance(value, list) else "object"


def mismatches(shape: Shape, value: object, path: str = "") -> list[str]:
    """Where `value` departs from `shape`: a key missing or added, or a value of another type."""
    if isinstance(shape, dict):
        if not isinstance(value, dict):
            return [f"{path or '.'}: an object documented, {type_of(value)} sent"]
        found = [f"{path}.{key}: documented, not sent" for key in shape if key not in value]
        found += [f"{path}.{key}: sent, not documented" for key in value if key not in shape]
        for key in [key for key in shape if key in value]:
            found += mismatches(shape[key], value[key], f"{path}.{key}")
        return found
    if isinstance(shape, list):
        if not isinstance(value, list) or not value:
            return [f"{path}: a non-empty list documented, {type_of(value)} sent"]
        return [
            problem for index, item in enumerate(value) for problem in mismatches(shape[0], item, f"{path}[{index}]")
        ]
    if type_of(value) not in shape.split("|"):
        return [f"{path}: {shape} documented, {type_of(value)} sent"]
    return []


class Raw:
    """The requests of the examples, as a hand-written client sends them, with the sandbox's keys."""

    def __init__(self, sb: bf.Sandbox) -> None:
        self.sb = sb
        self.base = f"{sb.url}/v3/{sb.customer_id}/BankingServices"

    def send(self, method: str, path: str, body: object = None, **headers: str) -> tuple[int, dict[str, Any]]:
        data = None if body is None else json.dumps(body).encode()
        if data is not None:
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(self.base + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    def token(self) -> dict[str, Any]:
        assert self.sb.secret_key is not None
        status, minted = self.send("POST", "/GenerateAuthorizeToken", **{"flinks-auth-key": self.sb.secret_key})
        assert status == 200, minted
        return minted

    def data(self, operation: str, request_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """A banking operation, polled on its ...Async link until its 200."""
        key = {"x-api-key": self.sb.api_key or ""}
        status, answer = self.send("POST", f"/{operation}", {"RequestId": request_id, **body}, **key)
        while status == 202:
            status, answer = self.send("GET", f"/{operation}Async/{request_id}", **key)
        assert status == 200, answer
        return answer


@pytest.fixture(scope="module")
def opened() -> Iterator[tuple[Raw, str]]:
    """A sandbox with its default keys, and a session of greatday_nomfa opened with a Tag."""
    with bf.Sandbox() as sb:
        raw = Raw(sb)
        login = {
            "Institution": "FlinksCapital",
            "Username": "greatday_nomfa",
            "Password": "Everyday",
            "MostRecentCached": False,
            "Save": True,
            "Tag": "customer=1042",
        }
        status, session = raw.send("POST", "/Authorize", login, **{"flinks-auth-key": raw.token()["Token"]})
        assert status == 200, session
        yield raw, session["RequestId"]


def test_the_token_answer_has_the_documented_fields(opened: tuple[Raw, str]) -> None:
    raw, _ = opened
    assert mismatches(TOKEN, raw.token()) == []


def test_account_detail_has_the_documented_fields(opened: tuple[Raw, str]) -> None:
    raw, request_id = opened
    # The example asks with the RequestId alone; the account numbers come with WithAccountIdentity.
    answer = raw.data("GetAccountsDetail", request_id, {"WithAccountIdentity": True})
    assert mismatches(DETAIL, answer) == []


def test_the_account_summary_has_the_documented_fields(opened: tuple[Raw, str]) -> None:
    raw, request_id = opened
    answer = raw.data("GetAccountsSummary", request_id, {})
    assert mismatches(SUMMARY, answer) == []


def test_the_comparison_sees_a_missing_key_an_added_key_and_a_wrong_type() -> None:
    shape = {"A": "text", "B": ["number|null"]}
    assert mismatches(shape, {"A": "x", "B": [1, None]}) == []
    assert mismatches(shape, {"B": [1], "C": 2}) == [".A: documented, not sent", ".C: sent, not documented"]
    assert mismatches(shape, {"A": 1, "B": ["1"]}) == [
        ".A: text documented, number sent",
        ".B[0]: number|null documented, text sent",
    ]
