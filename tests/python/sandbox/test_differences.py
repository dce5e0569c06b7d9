"""The list of docs/sandbox.md#where-the-sandbox-differs-from-the-real-service stays true: each
item names a check here, a request to a sandbox and the answer that shows the difference, and
every check must still show it. A difference that is fixed fails its check, so its item is taken
off the list (and its check with it)."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

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


def instant_processing(raw: Raw) -> bool:
    _, opened = raw.login("greatday_nomfa")
    first, _ = raw.send("POST", "/GetAccountsSummary", {"RequestId": opened["RequestId"]})
    poll, _ = raw.send("GET", f"/GetAccountsSummaryAsync/{opened['RequestId']}")
    return (first, poll) == (202, 200)


def no_rate_limit(raw: Raw) -> bool:
    return all(raw.token() for _ in range(30))


def plain_http(raw: Raw) -> bool:
    return raw.sb.url.startswith("http://127.0.0.1:")


def keys_can_be_off(raw: Raw) -> bool:
    with bf.Sandbox(auth=False) as open_sb:
        live = {"Institution": "FlinksCapital", "Username": "greatday_nomfa", "Password": "Everyday"}
        status, _ = Raw(open_sb).send("POST", "/Authorize", {**live, "MostRecentCached": False})
    return status == 200


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
        one_institution,
        sandbox_only_users,
        instant_processing,
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
