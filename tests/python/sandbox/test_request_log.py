"""What a test can see of the requests its code sent (docs/sandbox.md#the-request-log): the
operation, the shape of each Authorize, the user, LoginId and RequestId it concerns, the body with
every secret masked, the status and the time."""

from __future__ import annotations

import contextlib
import json
import time
import urllib.request

import bankfeed as bf
from bfhelpers import API_KEY, GREATDAY, SECRET_KEY, assert_secret_free


def test_each_authorize_says_which_shape_it_was_and_what_it_concerns() -> None:
    before = time.time()
    with bf.Sandbox() as sb, sb.client() as client:
        # The three rounds of questions: one Authorize per answer (docs/sandbox.md#users).
        session = client.login(
            "FlinksCapital", "greatday_three_rounds", "Everyday", save=True, on_challenge=bf.answers(GREATDAY)
        )
        login_id = session.login_id
        assert login_id is not None
        client.authorize_saved(login_id)
        cached = client.authorize_cached(login_id)
        cached.accounts_detail()
        log = sb.requests
    kinds = [entry["authorize"] for entry in log if entry["operation"] == "Authorize"]
    # A nightly job asserts it never logs in live: "credentials" and "saved" are the live ones.
    assert kinds == ["credentials", "challenge_answer", "challenge_answer", "challenge_answer", "saved", "cached"]
    # Every request but the token calls, which concern no user.
    users = {entry["username"] for entry in log if entry["operation"] != "GenerateAuthorizeToken"}
    assert users == {"greatday_three_rounds"}
    first, *answers = [entry for entry in log if entry["operation"] == "Authorize"][:4]
    # The RequestId an Authorize was given, and the LoginId once the session opened.
    assert first["request_id"] == session.request_id and first["status"] == 203
    assert {entry["request_id"] for entry in answers} == {session.request_id}
    assert answers[-1]["login_id"] == login_id and answers[-1]["status"] == 200
    detail = [entry for entry in log if entry["operation"] == "GetAccountsDetail"]
    # The POST, then the ...Async GET its 202 named: both the operation, both about the session.
    assert [(entry["method"], entry["status"]) for entry in detail] == [("POST", 202), ("GET", 200)]
    assert {(entry["request_id"], entry["login_id"]) for entry in detail} == {(cached.request_id, login_id)}
    assert detail[0]["body"]["RequestId"] == cached.request_id and detail[1]["body"] is None
    times = [entry["time"] for entry in log]
    assert before <= times[0] and times == sorted(times) and times[-1] <= time.time()


def test_the_options_a_call_sent_are_in_the_body() -> None:
    with bf.Sandbox(logins=1) as sb, sb.client() as client:
        client.investments(sb.login_ids[0])
        session = client.authorize_cached(sb.login_ids[0])
        session.statements(number_of_statements="Months3")
        log, login_id = sb.requests, sb.login_ids[0]
    statements = [entry for entry in log if entry["operation"] == "GetStatements"]
    assert statements[0]["body"]["NumberOfStatements"] == "Months3"
    investments = [entry for entry in log if entry["operation"] == "Investments"]
    assert investments and all(entry["login_id"] == login_id for entry in investments)


def test_no_password_answer_key_or_token_reaches_the_log() -> None:
    """Breaks when the masking of recorded.rs is removed: the log then holds the password and the
    answers as sent."""
    with bf.Sandbox(api_key=API_KEY, secret_key=SECRET_KEY) as sb, sb.client() as client:
        client.login("FlinksCapital", "greatday_three_rounds", "Everyday", on_challenge=bf.answers(GREATDAY))
        log = sb.requests
    text = json.dumps(log)
    assert_secret_free(text, extra=["Everyday", "Montreal", "Canada", "Triangle"])
    credentials = next(entry for entry in log if entry["authorize"] == "credentials")
    assert credentials["body"]["Password"] == "***"
    answer = next(entry for entry in log if entry["authorize"] == "challenge_answer")
    # The prompts stay: a test checks which questions its code answered.
    assert answer["body"]["SecurityResponses"] == {"What city were you born in?": ["***"]}


def test_unknown_paths_and_faulted_requests_are_logged_too() -> None:
    with bf.Sandbox(logins=1) as sb, sb.client(max_retries=0) as client:
        sb.inject({"kind": "status", "status": 503, "operation": "Investments"})
        with contextlib.suppress(bf.RetryLater):
            client.investments(sb.login_ids[0])
        with contextlib.suppress(OSError):
            urllib.request.urlopen(f"{sb.url}/nowhere")
        log, login_id = sb.requests, sb.login_ids[0]
    faulted = next(entry for entry in log if entry["status"] == 503)
    assert faulted["operation"] == "Investments" and faulted["login_id"] == login_id
    assert faulted["username"] == "bulk_00000"
    nowhere = log[-1]
    assert nowhere["path"] == "/nowhere" and nowhere["operation"] is None and nowhere["status"] == 404
