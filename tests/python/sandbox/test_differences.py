"""The list of docs/sandbox.md#where-the-sandbox-differs-from-the-real-service stays true: each
item names a check here, a request to a sandbox and the answer that shows the difference, and
every check must still show it. A difference that is fixed fails its check, so its item is taken
off the list (and its check with it)."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import bankfeed as bf
from rawhelpers import Raw

PAGE = Path(__file__).resolve().parents[3] / "docs" / "sandbox.md"
SECTION = "## Where the sandbox differs from the real service"


def fixed_as_of_day(raw: Raw) -> bool:
    status, opened = raw.login("greatday_nomfa")
    assert status == 200, opened
    raw.send("POST", "/GetAccountsDetail", {"RequestId": opened["RequestId"], "DaysOfTransactions": "Days365"})
    _, detail = raw.send("GET", f"/GetAccountsDetailAsync/{opened['RequestId']}")
    newest = max(t["Date"] for account in detail["Accounts"] for t in account["Transactions"])
    return bool(opened["Login"]["LastRefresh"] == "2026-11-20T08:15:42.1234567" and newest <= "2026-11-20")


def one_institution(raw: Raw) -> bool:
    status, refused = raw.authorize(
        {"Institution": "RBC", "Username": "greatday_nomfa", "Password": "Everyday", "MostRecentCached": False}
    )
    return (status, refused.get("FlinksCode")) == (401, "INVALID_REQUEST")


def sandbox_only_users(raw: Raw) -> bool:
    status, asked = raw.login("mfa_image")
    return status == 203 and asked["SecurityChallenges"][-1]["Type"] in {"QuestionAndAnswer", "ImageSelection"}


def last_refresh_seven_digits(raw: Raw) -> bool:
    _, opened = raw.login("greatday_nomfa")
    fraction = opened["Login"]["LastRefresh"].rsplit(".", 1)[1]
    return len(fraction) == 7


def instant_processing(raw: Raw) -> bool:
    _, opened = raw.login("greatday_nomfa")
    first, _ = raw.send("POST", "/GetAccountsDetail", {"RequestId": opened["RequestId"]})
    poll, _ = raw.send("GET", f"/GetAccountsDetailAsync/{opened['RequestId']}")
    return (first, poll) == (202, 200)


def saved_greatday(raw: Raw) -> str:
    """Greatday logged in live and saved, its question answered: its LoginId."""
    status, asked = raw.login("Greatday", Save=True)
    assert status == 203, asked
    prompt = asked["SecurityChallenges"][0]["Prompt"]
    status, opened = raw.authorize({"RequestId": asked["RequestId"], "SecurityResponses": {prompt: [GREATDAY[prompt]]}})
    assert status == 200, opened
    return str(opened["Login"]["Id"])


def cached_reads_open_at_once(raw: Raw) -> bool:
    status, cached = raw.authorize({"LoginId": saved_greatday(raw), "MostRecentCached": True})
    return status == 200 and "Login" in cached


def login_ids_never_rfc_4122(raw: Raw) -> bool:
    _, opened = raw.login("greatday_nomfa")
    return uuid.UUID(opened["Login"]["Id"]).variant != uuid.RFC_4122


def summary(raw: Raw) -> dict[str, Any]:
    """The summary of a new session of greatday_nomfa, answered at once."""
    _, opened = raw.login("greatday_nomfa")
    status, answer = raw.send("POST", "/GetAccountsSummary", {"RequestId": opened["RequestId"]})
    assert status == 200, answer
    return answer


def summary_names_its_login(raw: Raw) -> bool:
    return "Login" in summary(raw)


def summary_accounts_typed_and_named(raw: Raw) -> bool:
    accounts = summary(raw)["Accounts"]
    return all("Type" in account and set(account["Holder"]) == {"Name"} for account in accounts)


def last_four_and_available_given(raw: Raw) -> bool:
    accounts = summary(raw)["Accounts"]
    return all(isinstance(account["LastFourDigits"], str) for account in accounts) and any(
        account["Balance"]["Available"] is not None for account in accounts
    )


def account_type_personal(raw: Raw) -> bool:
    return all(account["AccountType"] == "Personal" for account in summary(raw)["Accounts"])


def statements_of_deposit_accounts(raw: Raw) -> bool:
    _, opened = raw.login("greatday_nomfa")
    status, answer = raw.send("POST", "/GetStatements", {"RequestId": opened["RequestId"]})
    assert status == 200, answer
    return any(account["Statements"] for account in answer["StatementsByAccount"])


def redirect_without_request_id(raw: Raw) -> bool:
    query = urllib.parse.urlencode(
        {
            "demo": "true",
            "consentEnable": "false",
            "institution": "FlinksCapital",
            "redirectUrl": "https://example.com/done",
            "authorizeToken": raw.token(),
        }
    )
    with urllib.request.urlopen(f"{raw.sb.widget_url}?{query}", timeout=10) as response:
        form = response.read().decode()
    flow = re.search(r'action="/v2/flow/([^"]+)"', form)
    assert flow, form
    fields = urllib.parse.urlencode({"action": "credentials", "username": "greatday_nomfa", "password": "Everyday"})
    request = urllib.request.Request(f"{raw.sb.url}/v2/flow/{flow[1]}", data=fields.encode(), method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        done = response.read().decode()
    events = re.search(r'<script type="application/json" id="widget-events">(.*?)</script>', done, re.S)
    assert events, done
    [redirect] = [event for event in json.loads(events[1]) if event["step"] == "REDIRECT"]
    asked = urllib.parse.parse_qs(urllib.parse.urlsplit(redirect["url"]).query)
    return asked["demo"] == ["true"] and "loginId" in asked and "requestId" not in asked


def no_rate_limit(raw: Raw) -> bool:
    return all(raw.token() for _ in range(30))


def plain_http(raw: Raw) -> bool:
    return raw.sb.url.startswith("http://127.0.0.1:")


def keys_can_be_off(raw: Raw) -> bool:
    with bf.Sandbox(auth=False) as open_sb:
        live = {"Institution": "FlinksCapital", "Username": "greatday_nomfa", "Password": "Everyday"}
        status, _ = Raw(open_sb).send("POST", "/Authorize", {**live, "MostRecentCached": False})
    return status == 200


# The answers to Greatday's questions, which it asks one of (docs/sandbox.md#users).
GREATDAY = {
    "What city were you born in?": "Montreal",
    "What is the best country on earth?": "Canada",
    "What shape do people like most?": "Triangle",
}


def token_carries_answers(raw: Raw) -> bool:
    token = raw.token()
    status, asked = raw.authorize(
        {"Institution": "FlinksCapital", "Username": "Greatday", "Password": "Everyday", "MostRecentCached": False},
        token,
    )
    assert status == 203, asked
    prompt = asked["SecurityChallenges"][0]["Prompt"]
    answer = {"What city were you born in?": "Montreal", "What is the best country on earth?": "Canada"}.get(
        prompt, "Triangle"
    )
    status, _ = raw.authorize({"RequestId": asked["RequestId"], "SecurityResponses": {prompt: [answer]}}, token)
    return status == 200


def content_type_refusal(raw: Raw) -> bool:
    live = {
        "Institution": "FlinksCapital",
        "Username": "greatday_nomfa",
        "Password": "Everyday",
        "MostRecentCached": False,
    }
    status, refused = raw.send(
        "POST", "/Authorize", live, content_type="text/plain", **{"flinks-auth-key": raw.token()}
    )
    return (status, refused.get("FlinksCode")) == (401, "INVALID_REQUEST") and "Content-Type" in refused["Message"]


# The sandbox's own French texts of Greatday's questions (docs/sandbox.md#lastrefresh-loginids-and-languages).
FRENCH_GREATDAY = {
    "Dans quelle ville êtes-vous né?",
    "Quel est le meilleur pays au monde?",
    "Quelle forme les gens préfèrent-ils?",
}


def french_prompts(raw: Raw) -> bool:
    status, asked = raw.login("Greatday", Language="fr")
    return status == 203 and asked["SecurityChallenges"][0]["Prompt"] in FRENCH_GREATDAY


def unsupported_language(raw: Raw) -> bool:
    status, refused = raw.login("Greatday", Language="de")
    return (status, refused.get("FlinksCode")) == (401, "INVALID_REQUEST") and "Language" in refused["Message"]


def investments_kept(raw: Raw) -> bool:
    _, opened = raw.login("greatday_nomfa", Save=True)
    login_id = opened["Login"]["Id"]
    _, cached = raw.authorize({"LoginId": login_id, "MostRecentCached": True})
    body = {"LoginId": login_id, "RequestId": cached["RequestId"], "MostRecentCached": True}
    url = f"{raw.sb.url}/v3/{raw.sb.customer_id}/Investments"
    for _ in range(5):
        request = urllib.request.Request(
            url,
            data=json.dumps(body).encode(),
            method="POST",
            headers={"Content-Type": "application/json", "x-api-key": raw.sb.api_key or ""},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            if response.status == 200:
                return bool(json.loads(response.read()).get("Accounts"))
    return False


CHECKS: dict[str, Callable[[Raw], bool]] = {
    check.__name__: check
    for check in (
        fixed_as_of_day,
        last_refresh_seven_digits,
        one_institution,
        sandbox_only_users,
        cached_reads_open_at_once,
        instant_processing,
        login_ids_never_rfc_4122,
        summary_names_its_login,
        summary_accounts_typed_and_named,
        last_four_and_available_given,
        account_type_personal,
        statements_of_deposit_accounts,
        redirect_without_request_id,
        no_rate_limit,
        plain_http,
        keys_can_be_off,
        token_carries_answers,
        content_type_refusal,
        french_prompts,
        unsupported_language,
        investments_kept,
    )
}


def listed_checks() -> list[str]:
    """The checks the page's section names, in its order."""
    text = PAGE.read_text(encoding="utf-8")
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    return re.findall(r"\(check `(\w+)`\)", section.replace("\n  ", " "))


@pytest.fixture(scope="module")
def raw() -> Iterator[Raw]:
    with bf.Sandbox() as sb:  # the defaults a team starts with: keys on, one 202 per data call
        yield Raw(sb)


def test_every_listed_difference_has_a_check_and_every_check_is_listed() -> None:
    listed = listed_checks()
    assert len(listed) == len(set(listed)), listed
    assert set(listed) == set(CHECKS), f"listed {sorted(listed)}, checked {sorted(CHECKS)}"


@pytest.mark.parametrize("name", list(CHECKS))
def test_each_listed_difference_still_exists(raw: Raw, name: str) -> None:
    assert CHECKS[name](raw), (
        f"the difference checked by {name} no longer exists: take its item off "
        "docs/sandbox.md#where-the-sandbox-differs-from-the-real-service, and its check off this file"
    )
