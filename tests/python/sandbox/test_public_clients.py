"""Clients written for the real service, run unchanged against the sandbox run as a process
(docs/sandbox.md#clients-written-for-the-real-service): the PyPI ``pyflinks`` and ``flinks``
packages, and the requests a keyed client sends, replayed over raw HTTP with the default keys.

Neither package can send keys (the real test instance would answer them 401), so they meet a
sandbox started with ``--no-auth``, as the docs tell their users to. Each goes through what such
a client's users do: a live login with a challenge, account detail polled through its 202,
the accounts summary, statements, and DeleteCard.
"""

from __future__ import annotations

import importlib
import inspect
import json
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import bankfeed as bf
from bfhelpers import sandbox_process

#: The answers to Greatday's three questions; it asks one of them per login (docs/sandbox.md#users).
GREATDAY = {
    "What city were you born in?": "Montreal",
    "What is the best country on earth?": "Canada",
    "What shape do people like most?": "Triangle",
}


def start(*args: str) -> Iterator[tuple[str, str]]:
    """The sandbox process with ``args``, and one 202 before each data answer: its URL and
    customer id."""
    with sandbox_process("--pending-polls", "1", *args) as served:
        yield served.url, served.customer_id


@pytest.fixture(scope="module")
def unkeyed() -> Iterator[tuple[str, str]]:
    # The clients delete the login they connected a moment before, which the service (and the
    # sandbox, for 3 s by default) refuses with CARD_IN_USE: turned off, the flow is the subject.
    yield from start("--no-auth", "--card-in-use-seconds", "0")


@pytest.fixture(scope="module")
def keyed() -> Iterator[tuple[str, str]]:
    yield from start()


def polled(first: dict[str, Any], poll: Any) -> dict[str, Any]:
    """The 200 a data call ends in: ``first``, or the answers of ``poll`` after its 202s."""
    answer = first
    for _ in range(20):
        if answer["HttpStatusCode"] != 202:
            return answer
        assert answer["FlinksCode"] in ("OPERATION_PENDING", "OPERATION_DISPATCHED"), answer
        answer = poll()
    raise AssertionError(f"still 202 after 20 polls: {answer}")


@pytest.mark.parametrize("package", ["pyflinks", "flinks"])
def test_a_public_python_client_runs_unchanged(unkeyed: tuple[str, str], package: str) -> None:
    url, customer_id = unkeyed
    client = importlib.import_module(package).Client(customer_id, base_url=f"{url}/v3/")
    banking = client.banking_services

    asked = banking.authorize(institution="FlinksCapital", username="Greatday", password="Everyday", save=True)
    assert asked["HttpStatusCode"] == 203, asked
    request_id = asked["RequestId"]
    [challenge] = asked["SecurityChallenges"]
    assert challenge["Type"] == "QuestionAndAnswer" and challenge["Prompt"] in GREATDAY, challenge
    opened = banking.authorize(
        request_id=request_id, security_responses={challenge["Prompt"]: [GREATDAY[challenge["Prompt"]]]}
    )
    assert opened["HttpStatusCode"] == 200, opened
    login_id = opened["Login"]["Id"]

    detail = polled(
        banking.get_accounts_detail(request_id, with_transactions=True),
        lambda: banking.get_accounts_detail_async(request_id),
    )
    assert detail["HttpStatusCode"] == 200 and detail["Accounts"], detail.get("FlinksCode")
    assert all("Transactions" in account for account in detail["Accounts"])
    assert detail["Login"]["Id"] == login_id

    summary = polled(
        banking.get_accounts_summary(request_id),
        lambda: client._call("GET", banking._build_path("GetAccountsSummaryAsync", request_id)),
    )
    assert summary["HttpStatusCode"] == 200 and summary["Accounts"], summary.get("FlinksCode")

    statements = polled(
        banking.get_statements(request_id, number_of_statements="MostRecent"),
        lambda: banking.get_statements_async(request_id),
    )
    assert statements["HttpStatusCode"] == 200 and statements["StatementsByAccount"], statements.get("FlinksCode")

    deleted = banking.delete_card(login_id)
    assert deleted["HttpStatusCode"] == 200, deleted
    # The LoginId is gone: a cached Authorize of it is refused, which both packages raise.
    errors = importlib.import_module(f"{package}.exceptions")
    with pytest.raises(errors.TransportError, match="status code: 401") as refused:
        banking.authorize(login_id=login_id, most_recent_cached=True)
    assert refused.value.response.json()["FlinksCode"] == "INVALID_LOGIN", refused.value.response.text


def send(url: str, method: str, path: str, body: object = None, **headers: str) -> tuple[int, dict[str, Any]]:
    """One request as a hand-written client sends it; the status and the JSON answer."""
    data = None if body is None else json.dumps(body).encode()
    if data is not None:
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(url + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_a_keyed_clients_requests_replayed_with_the_default_keys(keyed: tuple[str, str]) -> None:
    url, customer_id = keyed
    base = f"/v3/{customer_id}/BankingServices"
    # The public test instance's keys: the defaults of a sandbox, as docs/sandbox.md#keys lists them.
    defaults = inspect.signature(bf.Sandbox).parameters
    secret_key, api_key = defaults["secret_key"].default, defaults["api_key"].default

    status, minted = send(url, "POST", f"{base}/GenerateAuthorizeToken", **{"flinks-auth-key": secret_key})
    assert status == 200 and minted["Token"], minted
    token = minted["Token"]
    live = {"Institution": "FlinksCapital", "Username": "Greatday", "Password": "Everyday", "MostRecentCached": False}

    status, asked = send(url, "POST", f"{base}/Authorize", live, **{"flinks-auth-key": token})
    assert status == 203, asked
    prompt = asked["SecurityChallenges"][0]["Prompt"]
    answer = {"RequestId": asked["RequestId"], "SecurityResponses": {prompt: [GREATDAY[prompt]]}}
    status, opened = send(url, "POST", f"{base}/Authorize", answer, **{"flinks-auth-key": token})
    assert status == 200, opened
    request_id = opened["RequestId"]

    status, pending = send(
        url, "POST", f"{base}/GetAccountsDetail", {"RequestId": request_id}, **{"x-api-key": api_key}
    )
    assert (status, pending["FlinksCode"]) == (202, "OPERATION_PENDING"), pending
    status, detail = send(url, "GET", f"{base}/GetAccountsDetailAsync/{request_id}", **{"x-api-key": api_key})
    assert status == 200 and detail["Accounts"], detail

    # The token opened its session: another session may not use it.
    status, refused = send(url, "POST", f"{base}/Authorize", live, **{"flinks-auth-key": token})
    assert (status, refused["FlinksCode"]) == (401, "UNAUTHORIZED"), refused
    assert refused["Message"].startswith("You must provide a valid authorize token"), refused
    # A data call without the API key is refused too.
    status, refused = send(url, "POST", f"{base}/GetAccountsDetail", {"RequestId": request_id})
    assert (status, refused["FlinksCode"]) == (401, "UNAUTHORIZED"), refused


def test_pyflinks_calls_beyond_the_interface_unchanged(unkeyed: tuple[str, str]) -> None:
    """pyflinks's calls of the operations the interface lacks
    (docs/protocol.md#operations-beyond-the-interface): the implemented ones answer as documented
    and act on the saved login, the others are refused as not enabled, never with a 404."""
    url, customer_id = unkeyed
    pyflinks = importlib.import_module("pyflinks")
    errors = importlib.import_module("pyflinks.exceptions")
    client = pyflinks.Client(customer_id, base_url=f"{url}/v3/")
    banking = client.banking_services

    asked = banking.authorize(institution="FlinksCapital", username="Greatday", password="Everyday", save=True)
    prompt = asked["SecurityChallenges"][0]["Prompt"]
    opened = banking.authorize(request_id=asked["RequestId"], security_responses={prompt: [GREATDAY[prompt]]})
    login_id = opened["Login"]["Id"]
    assert opened["Login"]["IsScheduledRefresh"] is False

    assert banking.set_scheduled_refresh(login_id, is_activated=True)["HttpStatusCode"] == 200
    assert banking.authorize(login_id=login_id, most_recent_cached=True)["Login"]["IsScheduledRefresh"] is True
    banking.set_scheduled_refresh(login_id, is_activated=False)
    assert banking.authorize(login_id=login_id, most_recent_cached=True)["Login"]["IsScheduledRefresh"] is False

    listed = banking.get_mfa_questions(login_id)
    assert listed["Message"] == "SUCCESS"
    assert sorted(question["Question"] for question in listed["Questions"]) == sorted(GREATDAY)
    stored = banking.set_mfa_questions(
        login_id, [{"Question": question, "Answer": answer} for question, answer in GREATDAY.items()]
    )
    assert stored == {"Message": "Answers updated"}
    # A live refresh gives the stored answers itself: no challenge.
    refreshed = banking.authorize(login_id=login_id, most_recent_cached=False)
    assert refreshed["HttpStatusCode"] == 200, refreshed

    not_enabled: list[Callable[[], Any]] = [
        lambda: banking.authorize_multiple([login_id]),
        lambda: client.categorization.get_categorization(login_id, refreshed["RequestId"]),
    ]
    for call in not_enabled:
        with pytest.raises(errors.TransportError, match="status code: 401") as refused:
            call()
        answer = refused.value.response.json()
        assert answer["FlinksCode"] == "ACCESS_DENIED" and "not enabled" in answer["Message"], answer
