"""The sandbox as a replay server (docs/cassettes.md#replay-for-any-client): a session recorded
in-process against the embedded sandbox, then served by ``bf.Sandbox(replay=...)`` (and by
``python -m bankfeed sandbox --replay``) to clients that know nothing of cassettes: a plain
``bf.Client`` given its URL, raw HTTP, and the PyPI ``flinks`` package. They get the answers an
in-process replay gets; a request the cassette has no answer for gets the service's error shape
with the in-process player's text; the options of the imitation are refused. And the sandbox as a
recorder of such a client (docs/cassettes.md#recording-any-client): ``record=``/``upstream=``."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

# The tables are compared as pandas compares them; without pandas (the bare collection of
# scripts/test) the file is skipped, not an error that stops the collection.
pytest.importorskip("pandas")

import pandas as pd

import bankfeed as bf
from bfhelpers import GREATDAY, INSTITUTION, PASSWORD, sandbox_process

#: A user without a challenge, for the clients that answer none themselves.
NO_MFA = "greatday_nomfa"


def tables(client: bf.Client) -> dict[str, pd.DataFrame]:
    """A credentials login whose question is answered, account detail (polled through 202s) and
    investments: every table, as DataFrames."""
    session = client.login(INSTITUTION, "Greatday", PASSWORD, on_challenge=bf.answers(GREATDAY), save=True)
    accounts = session.accounts_detail(with_transactions=True, days="Days90")
    investments = session.investments()
    found = {f"accounts.{name}": getattr(accounts, name).to_pandas() for name in ("accounts", "transactions")}
    for name in ("accounts", "positions", "transactions", "securities"):
        found[f"investments.{name}"] = getattr(investments, name).to_pandas()
    found["ids"] = pd.DataFrame({"login_id": [session.login_id], "request_id": [session.request_id]})
    return found


def test_a_plain_client_replays_through_the_server_as_an_in_process_replay_does(tmp_path: Path) -> None:
    path = tmp_path / "session.yaml"
    with bf.Sandbox(pending_polls=2) as sb:
        api_key, secret_key = sb.api_key, sb.secret_key
        with sb.client(cassette=path, record_mode="once", poll_interval=0.01) as client:
            tables(client)
        customer_id = sb.customer_id
    recorded = path.read_text(encoding="utf-8").count("\n- request:")

    in_process = tables(
        bf.Client("http://127.0.0.1:9", customer_id, cassette=path, api_key=api_key, secret_key=secret_key)
    )
    with bf.Sandbox(replay=path) as replay:
        assert replay.replay == str(path) and replay.play_count() == (0, recorded)
        # No cassette in the client: it only knows the server's URL.
        served = tables(bf.Client(replay.url, customer_id, poll_interval=0.01, api_key=api_key, secret_key=secret_key))
        assert replay.play_count() == (recorded, recorded), "every recorded interaction, once each"
        assert replay.request_count == recorded, "the request log logs a replay's requests"
    for name, table in in_process.items():
        assert len(table) > 0 or name == "investments.transactions", name
        pd.testing.assert_frame_equal(served[name], table, check_exact=True, obj=name)
    assert served["ids"]["login_id"][0].startswith("ca55e77e-"), "the cassette's pseudonyms"


@pytest.fixture(scope="module")
def summary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cassette of a login without challenge and its accounts summary, recorded in-process
    against a sandbox that asks for no key (the PyPI clients send none)."""
    path = tmp_path_factory.mktemp("replay") / "summary.yaml"
    with bf.Sandbox(auth=False) as sb, sb.client(cassette=path, record_mode="once") as client:
        client.login(INSTITUTION, NO_MFA, PASSWORD, save=True).accounts_summary()
    return path


def send(url: str, method: str, path: str, body: object = None) -> tuple[int, dict[str, Any]]:
    """One request as a hand-written client sends it; the status and the JSON answer."""
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json", "x-api-key": "any-key-at-all"}
    request = urllib.request.Request(url + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def raw_session(url: str, customer_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The login and the summary by raw HTTP: the Authorize's answer and the summary's."""
    base = f"/v3/{customer_id}/BankingServices"
    # The keys in another order than bankfeed sent them: a body is compared as JSON.
    login = {
        "Save": True,
        "MostRecentCached": False,
        "Password": PASSWORD,
        "Username": NO_MFA,
        "Institution": INSTITUTION,
    }
    status, opened = send(url, "POST", f"{base}/Authorize", login)
    assert status == 200, opened
    status, accounts = send(url, "POST", f"{base}/GetAccountsSummary", {"RequestId": opened["RequestId"]})
    assert status == 200, accounts
    return opened, accounts


def test_raw_http_and_a_bankfeed_client_get_the_same_answers(summary: Path) -> None:
    # Keys off, as when it was recorded: sb.client() then asks for no token, as it did not.
    with bf.Sandbox(replay=summary, auth=False) as replay:
        opened, accounts = raw_session(replay.url, replay.customer_id)
        assert opened["RequestId"].startswith("ca55e77e-") and opened["Login"]["Username"] == "REDACTED"
        replay.reset()
        client = replay.client()
        got = client.login(INSTITUTION, NO_MFA, PASSWORD, save=True).accounts_summary().accounts.to_pandas()
    assert got["account_id"].tolist() == [account["Id"] for account in accounts["Accounts"]]


def test_a_request_past_the_recording_or_unmatched_is_the_players_error(summary: Path) -> None:
    with bf.Sandbox(replay=summary) as replay:
        url, customer_id = replay.url, replay.customer_id
        opened, _ = raw_session(url, customer_id)
        base = f"/v3/{customer_id}/BankingServices"
        status, again = send(url, "POST", f"{base}/GetAccountsSummary", {"RequestId": opened["RequestId"]})
        assert (status, again["FlinksCode"], again["HttpStatusCode"]) == (400, "CASSETTE_RUN_OUT", 400), again
        assert "all were played" in again["Message"]
        login = {"Institution": INSTITUTION, "Username": NO_MFA, "Password": "not-the-password", "Save": False}
        status, unmatched = send(url, "POST", f"{base}/Authorize", login)
    assert (status, unmatched["FlinksCode"]) == (400, "CASSETTE_UNMATCHED"), unmatched
    message = unmatched["Message"]
    assert "the closest recorded request is interaction 0: POST /v3/{customer_id}/BankingServices/Authorize" in message
    assert (
        "body.Save: recorded true, sent false" in message and "body.MostRecentCached: only in the recorded" in message
    )
    assert "not-the-password" not in message, "a password is compared redacted, never shown"
    # The text an in-process replay of the same request raises.
    client = bf.Client("http://127.0.0.1:9", customer_id, cassette=summary)
    with pytest.raises(bf.CassetteError) as info:
        client.login(INSTITUTION, NO_MFA, "not-the-password", save=False)
    assert info.value.closest is not None and info.value.closest in message
    assert info.value.differences and all(line in message for line in info.value.differences if "Most" not in line)


def test_the_pypi_flinks_client_replays_through_the_server(summary: Path) -> None:
    flinks = pytest.importorskip("flinks")
    errors = pytest.importorskip("flinks.exceptions")
    with bf.Sandbox(replay=summary) as replay:
        _, expected = raw_session(replay.url, replay.customer_id)
        replay.reset()
        banking = flinks.Client(replay.customer_id, base_url=f"{replay.url}/v3/").banking_services
        opened = banking.authorize(institution=INSTITUTION, username=NO_MFA, password=PASSWORD, save=True)
        assert opened["HttpStatusCode"] == 200 and opened["RequestId"].startswith("ca55e77e-"), opened
        assert banking.get_accounts_summary(opened["RequestId"]) == expected
        # Played once: asked again, the package raises the server's refusal with its code.
        with pytest.raises(errors.ProtocolError, match="CASSETTE_RUN_OUT"):
            banking.get_accounts_summary(opened["RequestId"])
        assert replay.play_count() == (2, 2)


def test_the_command_serves_a_cassette(summary: Path) -> None:
    with sandbox_process("--replay", str(summary)) as served:
        assert served.stdout.readline().startswith(f"replaying {summary}: ")
        raw_session(served.url, served.customer_id)


def test_an_option_of_the_imitation_is_refused_with_replay(summary: Path) -> None:
    with pytest.raises(bf.ConfigError) as info:
        bf.Sandbox(replay=summary, pending_polls=3, faults=[{"kind": "status", "status": 503}])
    assert info.value.field == "replay" and "leave out pending_polls, faults" in str(info.value)
    done = subprocess.run(
        [sys.executable, "-m", "bankfeed", "sandbox", "--replay", str(summary), "--logins", "2"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stderr.startswith("error: --replay: "), done.stderr
    assert "leave out logins" in done.stderr


def test_the_imitations_methods_are_refused_and_a_missing_cassette_named(summary: Path, tmp_path: Path) -> None:
    with bf.Sandbox(replay=summary) as replay:
        for call in (lambda: replay.inject({"kind": "status", "status": 503}), lambda: replay.advance(1)):
            with pytest.raises(ValueError, match="serves a cassette"):
                call()
    with bf.Sandbox() as imitation:
        assert imitation.play_count() is None and imitation.replay is None
    missing = tmp_path / "missing.yaml"
    with pytest.raises(bf.CassetteError, match="does not exist"):
        bf.Sandbox(replay=missing)


def flinks_session(url: str, customer_id: str) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """A login asked a question, and the accounts summary, by the PyPI ``flinks`` package: the
    prompt asked, the Authorize's 200 and the summary."""
    flinks = pytest.importorskip("flinks")
    banking = flinks.Client(customer_id, base_url=f"{url}/v3/").banking_services
    asked = banking.authorize(institution=INSTITUTION, username="Greatday", password=PASSWORD, save=True)
    [challenge] = asked["SecurityChallenges"]
    prompt: str = challenge["Prompt"]
    opened = banking.authorize(request_id=asked["RequestId"], security_responses={prompt: [GREATDAY[prompt]]})
    return prompt, opened, banking.get_accounts_summary(opened["RequestId"])


def test_a_client_recorded_through_the_sandbox_replays_from_its_cassette(tmp_path: Path) -> None:
    path = tmp_path / "flinks.yaml"
    with bf.Sandbox(auth=False) as upstream, bf.Sandbox(record=path, upstream=upstream.url) as recorder:
        assert recorder.record == str(path) and recorder.replay is None
        prompt, opened, summary = flinks_session(recorder.url, recorder.customer_id)
        sent = upstream.request_count
    assert not opened["RequestId"].startswith("ca55e77e-"), "the client got the upstream's answers as they came"
    text = path.read_text(encoding="utf-8").lower()
    for value in (PASSWORD, "Greatday", GREATDAY[prompt], opened["RequestId"], opened["Login"]["Id"]):
        assert value.lower() not in text, f"{value} in the cassette"
    assert bf.check_cassette(path) == []

    with bf.Sandbox(replay=path) as replay:
        again, reopened, resummary = flinks_session(replay.url, replay.customer_id)
        assert replay.play_count() == (sent, sent)
    assert again == prompt and reopened["RequestId"].startswith("ca55e77e-")
    # The titles are disguised, as the holders' names are (docs/cassettes.md#redaction); the
    # accounts are the same.
    assert [account["Id"] for account in resummary["Accounts"]] == [account["Id"] for account in summary["Accounts"]]


@pytest.mark.parametrize(
    ("options", "field", "words"),
    [
        ({"upstream": "https://bank.example.com"}, "allow_live_record", ["lockout"]),
        ({}, "upstream", ["must be given with record"]),
        ({"upstream": "http://127.0.0.1:9/v3/"}, "upstream", ["root"]),
        ({"upstream": "http://127.0.0.1:9", "replay": "x.yaml"}, "record", ["not both"]),
        ({"upstream": "http://127.0.0.1:9", "seed": 3}, "record", ["leave out seed"]),
    ],
)
def test_a_recording_is_refused_naming_what_it_lacks(
    tmp_path: Path, options: dict[str, Any], field: str, words: list[str]
) -> None:
    with pytest.raises(bf.ConfigError) as info:
        bf.Sandbox(record=tmp_path / "x.yaml", **options)
    assert info.value.field == field and all(word in str(info.value) for word in words), info.value
    assert not (tmp_path / "x.yaml").exists()


def test_the_command_records_a_client_through_it(tmp_path: Path) -> None:
    path = tmp_path / "raw.yaml"
    with (
        bf.Sandbox(auth=False) as upstream,
        sandbox_process("--record", str(path), "--upstream", upstream.url) as served,
    ):
        assert served.stdout.readline().startswith(f"recording into {path}: every request is forwarded to ")
        raw_session(served.url, served.customer_id)
    assert path.read_text(encoding="utf-8").count("\n- request:") == 2, "written after each answer"
    with bf.Sandbox(replay=path) as replay:
        raw_session(replay.url, replay.customer_id)


def test_the_command_asks_for_allow_live_record_by_its_flag(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "bankfeed", "sandbox", "--record", str(tmp_path / "x.yaml")]
    done = subprocess.run([*command, "--upstream", "https://bank.example.com"], capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.startswith("error: --allow-live-record: "), done.stderr
