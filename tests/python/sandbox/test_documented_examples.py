"""The service's documented request and response examples, replayed against a sandbox and compared
field by field: every key of the documented answer is there, with a value of the documented type,
and the sandbox adds no key the documentation does not show, but where a comment says which and
why (a key the interface has and the example leaves out, say). The examples are written out here in
bankfeed's own words and values (the request) and as key-to-type shapes (the answer); each names
its source in a comment. docs/protocol.md describes the same operations."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import bankfeed as bf
from rawhelpers import Raw

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


# Authorize, 203: https://docs.flinks.com/docs/authorize-1 (its multi-factor example: one link to
# /Authorize, the challenges as Type and Prompt, the institution and the RequestId to answer with).
# InstitutionName and InstitutionId the example leaves out; the service's recorded 203s carry them
# (docs/sandbox.md#where-the-sandbox-differs-from-the-real-service), and so does the sandbox.
CHALLENGED = {
    "Links": [LINK],
    "HttpStatusCode": "number",
    "SecurityChallenges": [{"Type": "text", "Prompt": "text"}],
    "InstitutionName": "text",
    "InstitutionId": "number",
    "Institution": "text",
    "RequestId": GUID,
}

# Authorize, 200: https://docs.flinks.com/api/authorize/endpoints/authorize (the links to the data
# operations, the institution's name, the login) and its types:
# https://help.flinks.com/support/solutions/articles/43000705319-data-types-in-authorize.
AUTHORIZED = {"HttpStatusCode": "number", "Links": [LINK], **AROUND}

# GetStatements, its ...Async answer: https://docs.flinks.com/api/connect/endpoints/account-linking/get-statements
# (the accounts with statements; the service lists the others with "Statements": [], as its
# recorded answers show, and so does the sandbox: NO_STATEMENTS).
STATEMENTS = {
    "HttpStatusCode": "number",
    "StatementsByAccount": [
        {
            "AccountNumber": "text",
            "Statements": [{"UniqueId": "text", "FileType": "text", "Base64Bytes": "text"}],
        }
    ],
    # The example shows Login, Institution and RequestId only; the sandbox sends the envelope of
    # the other data answers (InstitutionName and InstitutionId too), as their references show it.
    **AROUND,
}

# An account listed without statements (a card, a loan).
NO_STATEMENTS = {"AccountNumber": "text", "Statements": "list"}

# GetIncomeAttributes: https://docs.flinks.com/api/enrich/endpoints/consumer-attributes/get-income-attributes
# (Card holds Id, the LoginId, and one field per attribute; the attributes are checked apart, since
# their names are the package's). HttpStatusCode is the interface's (docs/protocol.md#attributes).
INCOME = {"HttpStatusCode": "number", "Card": {"Id": GUID}, "Login": LOGIN, "RequestId": GUID}

# DeleteCard: https://docs.flinks.com/api/connect/endpoints/account-linking/delete-card shows no
# body; docs/protocol.md#deletecard says what the client reads: a JSON message, or text.
DELETED = {"HttpStatusCode": "number", "Message": "text"}

# Errors: the columns of https://docs.flinks.com/api/authorize/error-codes (status, code, message)
# in the body that docs/protocol.md#errors describes (its RequestId may be absent: the sandbox
# sends none).
REFUSED = {"HttpStatusCode": "number", "Message": "text", "FlinksCode": "text"}


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
        status, session = raw.send("POST", "/Authorize", login, **{"flinks-auth-key": raw.token()})
        assert status == 200, session
        yield raw, session["RequestId"]


def test_the_token_answer_has_the_documented_fields(opened: tuple[Raw, str]) -> None:
    raw, _ = opened
    assert mismatches(TOKEN, raw.minted()) == []


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


# Greatday asks one of its three questions; these are the public test instance's answers.
GREATDAY_ANSWERS = {"What city were you born in?": "Montreal", "What is the best country on earth?": "Canada"}


def test_the_challenge_and_the_answered_authorize_have_the_documented_fields(opened: tuple[Raw, str]) -> None:
    raw, _ = opened
    token = {"flinks-auth-key": raw.token()}
    live = {"Institution": "FlinksCapital", "Username": "Greatday", "Password": "Everyday", "MostRecentCached": False}
    status, asked = raw.send("POST", "/Authorize", {**live, "Save": True}, **token)
    assert status == 203, asked
    assert mismatches(CHALLENGED, asked) == []
    prompt = asked["SecurityChallenges"][0]["Prompt"]
    answer = {
        "RequestId": asked["RequestId"],
        "SecurityResponses": {prompt: [GREATDAY_ANSWERS.get(prompt, "Triangle")]},
    }
    status, session = raw.send("POST", "/Authorize", answer, **token)
    assert status == 200, session
    assert mismatches(AUTHORIZED, session) == []


def test_the_statements_have_the_documented_fields(opened: tuple[Raw, str]) -> None:
    raw, request_id = opened
    answer = raw.data("GetStatements", request_id, {"NumberOfStatements": "MostRecent"})
    listed = answer["StatementsByAccount"]
    with_statements = [account for account in listed if account["Statements"]]
    without = [account for account in listed if not account["Statements"]]
    assert with_statements and without, listed
    assert mismatches(STATEMENTS, {**answer, "StatementsByAccount": with_statements}) == []
    assert [problem for account in without for problem in mismatches(NO_STATEMENTS, account)] == []


def test_the_income_attributes_have_the_documented_fields(opened: tuple[Raw, str]) -> None:
    raw, request_id = opened
    # Attributes are computed from the account detail of the session, so it is fetched first.
    login_id = raw.data("GetAccountsDetail", request_id, {})["Login"]["Id"]
    answer = raw.insight(f"/login/{login_id}/attributes/{request_id}/GetIncomeAttributes")
    card = answer.get("Card", {})
    named = {name: value for name, value in card.items() if name != "Id"}
    assert mismatches(INCOME, {**answer, "Card": {"Id": card.get("Id")}}) == []
    assert card["Id"] == login_id
    assert named, card
    assert {name: type_of(value) for name, value in named.items() if type_of(value) not in {"number", "text"}} == {}


def test_the_delete_card_answer_has_the_fields_the_client_reads() -> None:
    # Deleted right after the login that connected it: CARD_IN_USE turned off.
    with bf.Sandbox(card_in_use_seconds=0.0) as sb:
        raw = Raw(sb)
        login = {"Institution": "FlinksCapital", "Username": "greatday_nomfa", "Password": "Everyday"}
        status, session = raw.send(
            "POST",
            "/Authorize",
            {**login, "MostRecentCached": False, "Save": True},
            **{"flinks-auth-key": raw.token()},
        )
        assert status == 200, session
        status, deleted = raw.send("DELETE", f"/DeleteCard/{session['Login']['Id']}", **{"x-api-key": sb.api_key or ""})
    assert status == 200, deleted
    assert mismatches(DELETED, deleted) == []


def test_an_unknown_login_id_is_refused_with_the_documented_fields(opened: tuple[Raw, str]) -> None:
    raw, _ = opened
    unknown = "5e115eac-1209-4f19-641c-08d6d484e2fe"
    status, refused = raw.send(
        "POST",
        "/Authorize",
        {"LoginId": unknown, "MostRecentCached": True},
        **{"flinks-auth-key": raw.token()},
    )
    assert (status, refused.get("FlinksCode")) == (401, "INVALID_LOGIN"), refused
    assert mismatches(REFUSED, refused) == []


def test_an_unknown_request_id_is_refused_with_the_documented_fields(opened: tuple[Raw, str]) -> None:
    raw, _ = opened
    unknown = "f56f8b80-9949-4c60-ad63-dcdc0fd1456b"
    status, refused = raw.send(
        "POST", "/GetAccountsSummary", {"RequestId": unknown}, **{"x-api-key": raw.sb.api_key or ""}
    )
    assert (status, refused.get("FlinksCode")) == (400, "SESSION_NONEXISTENT"), refused
    assert mismatches(REFUSED, refused) == []
