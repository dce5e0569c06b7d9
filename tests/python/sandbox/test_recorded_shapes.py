"""The sandbox answers in the shapes recorded at the service by default, as a user of bankfeed and
of the command meets them (docs/sandbox.md#where-the-sandbox-differs-from-the-real-service): the
template link of a 202 (polled by the client), the summary and statements at once, LoginIds that
are no RFC 4122 UUIDs, a cached read asked a question, and the knobs and flags that change each,
with what they refuse."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import urllib.error
import urllib.request
import uuid
from typing import Any

import pytest

import bankfeed as bf
from rawhelpers import Raw

COUNTRY = "What is the best country on earth?"
CITY_SHAPE = {"What city were you born in?": "Montreal", "What shape do people like most?": "Triangle"}
TEMPLATE = [{"rel": "{Endpoint}Async", "href": "/{Endpoint}Async", "example": "/{Endpoint}Async/{requestId}"}]


def test_the_client_polls_the_template_link_of_account_detail() -> None:
    with bf.Sandbox() as sb, sb.client() as client:
        raw = Raw(sb)
        _, opened = raw.login("greatday_nomfa")
        status, pending = raw.send("POST", "/GetAccountsDetail", {"RequestId": opened["RequestId"]})
        assert (status, pending["Links"]) == (202, TEMPLATE)
        before = len(sb.requests)
        # Another login: the one above is busy while its 202 processes.
        session = client.login("FlinksCapital", "bulk_1", "Everyday")
        assert session.accounts_detail().accounts
        paths = [entry["path"] for entry in sb.requests[before:]]
        assert any(path.endswith(f"/GetAccountsDetailAsync/{session.request_id}") for path in paths), paths
        assert not [path for path in paths if "{" in path or "}" in path], "a brace never reaches a path"


def test_the_summary_and_statements_answer_at_once_unless_the_knob_makes_them_wait() -> None:
    with bf.Sandbox() as sb, sb.client() as client:
        session = client.login("FlinksCapital", "greatday_nomfa", "Everyday")
        before = len(sb.requests)
        assert session.accounts_summary().accounts
        assert session.statements().raw["StatementsByAccount"]
        assert [entry["status"] for entry in sb.requests[before:]] == [200, 200]
    every = ["GetAccountsDetail", "getaccountssummary", "GetStatements", "Investments", "Attributes"]
    with bf.Sandbox(pending_operations=every) as sb, sb.client() as client:
        session = client.login("FlinksCapital", "greatday_nomfa", "Everyday")
        before = len(sb.requests)
        assert session.accounts_summary().accounts
        assert [entry["status"] for entry in sb.requests[before:]] == [202, 200]


def test_async_links_concrete_keeps_the_former_link() -> None:
    with bf.Sandbox(async_links="concrete") as sb, sb.client() as client:
        raw = Raw(sb)
        _, opened = raw.login("greatday_nomfa")
        request_id = opened["RequestId"]
        status, pending = raw.send("POST", "/GetAccountsDetail", {"RequestId": request_id})
        rel = "GetAccountsDetailAsync"
        assert (status, pending["Links"]) == (202, [{"rel": rel, "href": f"/{rel}", "example": f"/{rel}/{request_id}"}])
        assert client.login("FlinksCapital", "bulk_1", "Everyday").accounts_detail().accounts


def test_login_ids_are_no_rfc_4122_uuids_and_the_client_takes_them() -> None:
    with bf.Sandbox(logins=3, card_in_use_seconds=0.0) as sb, sb.client() as client:
        session = client.login("FlinksCapital", "greatday_nomfa", "Everyday", save=True)
        assert session.login_id is not None
        for login_id in [session.login_id, *sb.login_ids]:
            assert uuid.UUID(login_id).version is None, login_id
        assert uuid.UUID(session.request_id).version == 4
        # Every call that names one takes it, in either case.
        assert client.authorize_cached(session.login_id.upper()).login_id == session.login_id
        combined = bf.combine(client.investments_many(sb.login_ids))
        assert not combined.errors
        client.delete_login(session.login_id.upper())


def test_a_cached_read_asked_a_question_is_answered_into_a_session_of_its_login() -> None:
    with bf.Sandbox(logins=1, cached_challenges="always") as sb, sb.client() as client:
        login_id = sb.login_ids[0]
        with pytest.raises(bf.ChallengeRequired) as asked:
            client.authorize_cached(login_id)
        assert asked.value.prompts == [COUNTRY]
        challenge = asked.value.challenge
        assert isinstance(challenge, bf.Challenge)
        session = challenge.answer({COUNTRY: "Canada"})
        assert isinstance(session, bf.Session)
        # The 200 named no Login (as recorded); the session is that login's all the same.
        assert "Login" not in session.raw
        summary = session.accounts_summary()
        assert summary.raw["Login"]["Id"] == login_id


def test_per_user_asks_only_the_users_the_table_names() -> None:
    with bf.Sandbox(cached_challenges="per_user", logins=2) as sb, sb.client() as client:
        answers = bf.answers({COUNTRY: "Canada", **CITY_SHAPE})
        greatday = client.login("FlinksCapital", "Greatday", "Everyday", save=True, on_challenge=answers)
        assert greatday.login_id is not None
        with pytest.raises(bf.ChallengeRequired):
            client.authorize_cached(greatday.login_id)
        for login_id in sb.login_ids:
            assert client.authorize_cached(login_id).login_id == login_id
        # In a bulk call the asked login is its own error; the others go on.
        results = dict(client.investments_many([greatday.login_id, *sb.login_ids]))
        assert isinstance(results.pop(greatday.login_id), bf.ChallengeRequired)
        assert all(isinstance(result, bf.Investments) for result in results.values()), results


@pytest.mark.parametrize(
    ("knob", "value", "error", "says"),
    [
        ("async_links", "relative", bf.ConfigError, 'async_links must be "template" or "concrete", got "relative"'),
        ("async_links", 1, TypeError, "async_links must be a str, not int"),
        (
            "cached_challenges",
            "sometimes",
            bf.ConfigError,
            'cached_challenges must be "never", "always" or "per_user", got "sometimes"',
        ),
        ("cached_challenges", None, TypeError, "cached_challenges must be a str, not NoneType"),
        ("pending_operations", ["Transfers"], bf.ConfigError, 'pending_operations names "Transfers", which is no'),
        ("pending_operations", "GetAccountsDetail", TypeError, "pending_operations must be"),
    ],
    ids=["links-value", "links-type", "challenges-value", "challenges-type", "operations-value", "operations-str"],
)
def test_the_new_knobs_refuse_what_they_do_not_take(knob: str, value: Any, error: type[Exception], says: str) -> None:
    with pytest.raises(error) as caught:
        bf.Sandbox(**{knob: value})
    assert str(caught.value).startswith(says), str(caught.value)
    if isinstance(caught.value, bf.ConfigError):
        assert caught.value.field == knob


def send(url: str, method: str, path: str, body: object = None, **headers: str) -> tuple[int, dict[str, Any]]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url + path, data=data, method=method, headers={"Content-Type": "application/json", **headers}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_the_command_takes_the_knobs_as_flags() -> None:
    flags = [
        "--no-auth",
        "--async-links",
        "concrete",
        "--cached-challenges",
        "always",
        "--pending-operations",
        "GetStatements, GetAccountsDetail",
        "--card-in-use-seconds",
        "0",
        "--logins",
        "1",
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "bankfeed", "sandbox", "--port", "0", *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        started = re.fullmatch(r"bankfeed sandbox on (http://\S+) \(customer id (\S+)\)\n", first)
        assert started, first
        base = f"{started[1]}/v3/{started[2]}/BankingServices"
        [login_id] = bf.Sandbox.login_ids_for(1)
        status, asked = send(base, "POST", "/Authorize", {"LoginId": login_id, "MostRecentCached": True})
        assert (status, asked["SecurityChallenges"][0]["Prompt"]) == (203, COUNTRY), asked
        request_id = asked["RequestId"]
        answer = {"RequestId": request_id, "SecurityResponses": {COUNTRY: ["Canada"]}}
        status, opened = send(base, "POST", "/Authorize", answer)
        assert status == 200 and "Login" not in opened, opened
        status, pending = send(base, "POST", "/GetStatements", {"RequestId": request_id})
        assert status == 202 and pending["Links"][0]["rel"] == "GetStatementsAsync", pending
        status, summary = send(base, "POST", "/GetAccountsSummary", {"RequestId": request_id})
        assert status == 200, summary
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def test_a_bad_flag_value_is_named_as_written() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "bankfeed", "sandbox", "--port", "0", "--async-links", "relative"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2
    said = 'error: --async-links: must be "template" or "concrete", got "relative"'
    assert result.stderr.startswith(said), result.stderr
