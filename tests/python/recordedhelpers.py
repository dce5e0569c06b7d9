"""Answers in the shapes the real service was recorded sending (docs/protocol.md#authorize,
docs/protocol.md#account-detail-summary-and-statements), with made-up values: LoginIds as it mints
them (a .NET sequential tail whose variant is outside RFC 4122), ``LastRefresh`` with six or seven
fractional digits, ``InstitutionName`` and ``InstitutionId`` beside ``Institution``, summaries with
and without ``Login`` and account ``Type``, and the fields it sends null. The keys come in the
recorded order.

:func:`service` is the answers of a :mod:`stubserver` that knows every LoginId it is asked for:
each cached Authorize opens a session of its own, and each data call answers the data of the
login whose session it names, so that single calls, sessions, bulk calls and exports can be driven
through the public API as against the real service.
"""

from __future__ import annotations

import datetime as dt
import threading
import uuid
from typing import Any
from urllib.parse import unquote

from stubserver import Answer, Answering, Request

CUSTOMER = "43387ca6-0391-4c82-857d-70d95f087ecb"

#: LoginIds in the shape the real service mints them: a .NET sequential GUID, whose last group
#: starts ``08d`` and whose variant nibble (the first of the fourth group) is none of RFC 4122's
#: ``8``-``b``: ``uuid.UUID(x).version`` is None for each.
MINTED = (
    "a41c9e20-5b7d-4e13-7f28-08dd3c51e7a9",
    "0d5e7b31-c2a4-4f60-0a19-08dc9e4f21b7",
    "e8b04c6d-19f3-4a7e-c3d5-08de11a07c42",
    "5b2f9a14-7e60-4c8d-f1e2-08db6d3c9f05",
    "c7e3a58b-2d91-4b06-6e4a-08dd7f12b3c8",
)

#: The institution as the recorded answers name it three times: made-up values, the name and the
#: short name told apart so that a test sees which one was read.
INSTITUTION_NAME = "Capital Test Bank"
INSTITUTION_ID = 31
INSTITUTION = "CapitalTestBank"

#: ``LastRefresh`` as the service writes it: seven fractional digits, or six, with or without Z;
#: each is this moment, in UTC (seven digits are cut to microseconds).
LAST_REFRESH = dt.datetime(2025, 11, 3, 17, 22, 8, 441773, tzinfo=dt.timezone.utc)
LAST_REFRESHES = (
    "2025-11-03T17:22:08.4417736",
    "2025-11-03T17:22:08.441773",
    "2025-11-03T17:22:08.4417736Z",
    "2025-11-03T17:22:08.441773Z",
)

_NAMESPACE = uuid.UUID("9b0f6c2e-4d3a-4e1b-8a57-6c2d1e0f3b49")


def spellings(login_id: str) -> list[str]:
    """``login_id`` in lower case, in upper case, and mixed (lower, then upper from the third group)."""
    return [login_id.lower(), login_id.upper(), login_id[:9].lower() + login_id[9:].upper()]


def request_id_of(login_id: str) -> str:
    """The RequestId of the session the stub opens for ``login_id`` (in any case): a random-looking
    version 5 GUID, as the service's RequestIds are RFC 4122 ones."""
    return str(uuid.uuid5(_NAMESPACE, login_id.lower()))


def login(login_id: str, last_refresh: str = LAST_REFRESHES[0], kind: str | None = "Personal") -> dict[str, Any]:
    """``Login`` in the recorded key order."""
    return {
        "Username": "someone",
        "IsScheduledRefresh": False,
        "LastRefresh": last_refresh,
        "Type": kind,
        "Id": login_id,
    }


def link(rel: str, href: str) -> dict[str, Any]:
    """One element of ``Links``, with the null ``example`` the recorded answers carry."""
    return {"rel": rel, "href": href, "example": None}


def authorized(request_id: str, login_of: dict[str, Any] | None) -> dict[str, Any]:
    """An Authorize 200 as recorded: with ``Login`` (a live or cached read) or without it (the
    answer to a challenge of a cached read)."""
    body: dict[str, Any] = {
        "HttpStatusCode": 200,
        "Links": [
            link("AccountsDetail", "/GetAccountsDetail"),
            link("AccountsSummary", "/GetAccountsSummary"),
            link("Statements", "/GetStatements"),
        ],
        "InstitutionName": INSTITUTION_NAME,
    }
    if login_of is not None:
        body["Login"] = login_of
    body.update({"InstitutionId": INSTITUTION_ID, "Institution": INSTITUTION, "RequestId": request_id})
    return body


def challenged(request_id: str, prompt: str) -> dict[str, Any]:
    """An Authorize 203 as recorded, asking one question; its keys in the recorded order."""
    return {
        "HttpStatusCode": 203,
        "Links": [link("Authorization", "/Authorize")],
        "SecurityChallenges": [{"Type": "QuestionAndAnswer", "Prompt": prompt}],
        "InstitutionName": INSTITUTION_NAME,
        "InstitutionId": INSTITUTION_ID,
        "Institution": INSTITUTION,
        "RequestId": request_id,
    }


def holder(name: str = "Pat Example") -> dict[str, Any]:
    """A whole ``Holder`` as the recorded summary has it."""
    return {
        "Name": name,
        "Address": {
            "CivicAddress": "12 Example Lane",
            "City": "Sampleton",
            "Province": "QC",
            "PostalCode": "H0H 0H0",
            "POBox": None,
            "Country": "CA",
        },
        "Email": "pat@example.test",
        "PhoneNumber": "(555) 010-2030",
    }


def summary_account(index: int, *, kind: str | None = None) -> dict[str, Any]:
    """An account of a summary as recorded: ``LastFourDigits``, ``Balance.Available`` and
    ``Balance.Limit`` null, the ratios per account; with ``kind``, a ``Type`` after ``Category``,
    a ``Holder`` with its name only and an ``Available`` balance (the other recorded variant)."""
    account: dict[str, Any] = {
        "EftEligibleRatio": 0.5,
        "ETransferEligibleRatio": 1.0,
        "Title": f"Account {index}",
        "AccountNumber": f"77{index:05d}",
        "LastFourDigits": None,
        "Balance": {"Available": 10.5 if kind else None, "Current": 1250.0 + index, "Limit": None},
        "Category": "Operations",
    }
    if kind is not None:
        account["Type"] = kind
    account.update(
        {
            "Currency": "CAD",
            "Holder": {"Name": "Pat Example"} if kind else holder(),
            "AccountType": "Personal",
            "Id": str(uuid.uuid5(_NAMESPACE, f"account {index}")),
        }
    )
    return account


def detail_account(index: int) -> dict[str, Any]:
    """An account of an account detail, with a transaction: ``AccountType`` and ``Holder`` null,
    as a recorded detail sends them."""
    return {
        "Transactions": [
            {
                "Date": "2025-10-31",
                "Code": None,
                "Description": "GROCERY 42",
                "Debit": 42.1,
                "Credit": None,
                "Balance": 1207.9,
                "Id": str(uuid.uuid5(_NAMESPACE, f"transaction {index}")),
            }
        ],
        "TransitNumber": None,
        "InstitutionNumber": None,
        "OverdraftLimit": 0,
        "Title": f"Account {index}",
        "AccountNumber": f"77{index:05d}",
        "Balance": {"Available": None, "Current": 1250.0 + index, "Limit": None},
        "Category": "Operations",
        "Type": "Chequing",
        "Currency": "CAD",
        "Holder": None,
        "AccountType": None,
        "Id": str(uuid.uuid5(_NAMESPACE, f"account {index}")),
    }


def around(body: dict[str, Any], request_id: str, login_of: dict[str, Any] | None) -> dict[str, Any]:
    """``body`` followed by the envelope the recorded data answers end with: ``InstitutionName``,
    ``Login`` when given, ``InstitutionId``, ``Institution``, ``RequestId``."""
    whole = {**body, "InstitutionName": INSTITUTION_NAME}
    if login_of is not None:
        whole["Login"] = login_of
    whole.update({"InstitutionId": INSTITUTION_ID, "Institution": INSTITUTION, "RequestId": request_id})
    return whole


def summary(request_id: str, login_of: dict[str, Any] | None = None, *, kind: str | None = None) -> dict[str, Any]:
    """A GetAccountsSummary 200: as recorded without ``Login`` (and accounts without ``Type``), or
    with both when given."""
    accounts = [summary_account(index, kind=kind) for index in range(2)]
    links = [link("AccountsDetail", "/GetAccountsDetail"), link("Statements", "/GetStatements")]
    return around({"HttpStatusCode": 200, "Accounts": accounts, "Links": links}, request_id, login_of)


def detail(request_id: str, login_of: dict[str, Any] | None) -> dict[str, Any]:
    """A GetAccountsDetail 200 of two accounts."""
    return around({"HttpStatusCode": 200, "Accounts": [detail_account(0), detail_account(1)]}, request_id, login_of)


def statements(request_id: str, login_of: dict[str, Any] | None) -> dict[str, Any]:
    """A GetStatements 200 as recorded: every account listed, with no statement."""
    by_account = [{"AccountNumber": f"77{index:05d}", "Statements": []} for index in range(2)]
    return around({"HttpStatusCode": 200, "StatementsByAccount": by_account}, request_id, login_of)


def service(*, prompt: str | None = None) -> dict[str, Answering]:
    """The answers of a stub service that knows every LoginId: a cached Authorize opens the
    login's session (its RequestId :func:`request_id_of` the LoginId), and each data call answers
    that login's data, its ``Login.Id`` in lower case (the service compares LoginIds in any case).
    With ``prompt``, a cached Authorize is first challenged with that question (any answer opens
    the session, answered without ``Login``, as recorded)."""
    opened: dict[str, str] = {}
    lock = threading.Lock()

    def login_of(request_id: str) -> dict[str, Any] | None:
        with lock:
            login_id = opened.get(request_id)
        return None if login_id is None else login(login_id.lower())

    def authorize(request: Request) -> Answer:
        body = request.json() or {}
        login_id = body.get("LoginId")
        if isinstance(login_id, str):
            request_id = request_id_of(login_id)
            with lock:
                opened[request_id] = login_id
            if prompt is not None and body.get("MostRecentCached") is True:
                return Answer(203, challenged(request_id, prompt))
            return Answer(200, authorized(request_id, login(login_id.lower())))
        # The answer to a challenge: the session of the login it was asked for, without Login.
        return Answer(200, authorized(str(body.get("RequestId")), None))

    def data(make: Any) -> Answering:
        def answer(request: Request) -> Answer:
            request_id = str((request.json() or {}).get("RequestId"))
            return Answer(200, make(request_id, login_of(request_id)))

        return answer

    def investments(request: Request) -> Answer:
        body = request.json() or {}
        request_id, login_id = str(body.get("RequestId")), str(body.get("LoginId"))
        payload = {"Accounts": [], "Securities": [], "Value": 0, "Cash": 0}
        return Answer(200, {**payload, "Login": login(login_id.lower(), kind=None), "RequestId": request_id})

    def income(request: Request) -> Answer:
        # insight/login/{loginId}/attributes/{requestId}/GetIncomeAttributes
        parts = unquote(request.path.split("?")[0]).split("/")
        login_id, request_id = parts[parts.index("login") + 1], parts[parts.index("attributes") + 1]
        group = {"Id": login_id.lower(), "sum_employer_income_current_month": 1200.5}
        body = {"HttpStatusCode": 200, "Income": group, "Login": {"Id": login_id.lower()}, "RequestId": request_id}
        return Answer(200, body)

    return {
        "Authorize": authorize,
        "GetAccountsDetail": data(detail),
        "GetAccountsSummary": data(summary),
        "GetStatements": data(statements),
        "Investments": investments,
        "GetIncomeAttributes": income,
        "DeleteCard": Answer(200, {"Message": "The card was deleted"}),
        "SetScheduledRefresh": Answer(200, {"Message": "SUCCESS"}),
        "GetMFAQuestions": Answer(200, {"Message": "SUCCESS", "Questions": [{"Question": "Which bridge is oldest?"}]}),
        "AnswerMFAQuestions": Answer(200, {"Message": "SUCCESS"}),
    }
