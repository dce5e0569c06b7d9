"""The admin API of a sandbox in another process (docs/sandbox.md#the-admin-api): the request log,
faults and reset over HTTP, off by default, guarded by a token, and never reachable by a fault or
taken for a route of the service; and ``bf.RemoteSandbox``, which speaks it."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

import bankfeed as bf
import bankfeed._remote_sandbox as remote_sandbox


def admin_call(sb: bf.Sandbox, method: str, name: str, token: str | None) -> tuple[int, object]:
    request = urllib.request.Request(f"{sb.url}/_sandbox/{name}", method=method)
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@pytest.fixture(scope="module")
def process() -> Iterator[bf.RemoteSandbox]:
    """``python -m bankfeed sandbox --admin`` in a process of its own."""
    with bf.RemoteSandbox.start("--logins", "2") as sandbox:
        yield sandbox


def test_it_is_off_by_default_and_then_an_unknown_route_like_any_other() -> None:
    with bf.Sandbox() as sb:
        assert sb.admin_token is None
        status, body = admin_call(sb, "GET", "requests", "anything")
        # The framework's answer to any path the service does not route: no code (docs/protocol.md).
        assert status == 404 and "FlinksCode" not in body and "/_sandbox/requests" in body["Message"]  # type: ignore[index,operator]


def test_it_needs_the_token_and_never_shows_it() -> None:
    with bf.Sandbox(admin=True) as sb:
        token = sb.admin_token
        assert token and len(token) >= 32
        for wrong in (None, "", token[:-1], token + "x"):
            status, body = admin_call(sb, "GET", "requests", wrong)
            assert status == 401 and body["FlinksCode"] == "UNAUTHORIZED"  # type: ignore[index]
        assert admin_call(sb, "GET", "requests", token)[0] == 200
        assert token not in repr(sb)
        assert token not in repr(bf.RemoteSandbox(sb.url, token))
    with bf.Sandbox(admin=True) as other:
        assert other.admin_token != token


def test_no_fault_reaches_it_and_the_log_does_not_show_it() -> None:
    with bf.Sandbox(admin=True) as sb:
        remote = bf.RemoteSandbox(sb.url, str(sb.admin_token))
        # Every operation, every time: the admin paths are none of them.
        remote.inject({"kind": "drop_before_response", "times": None})
        for _ in range(3):
            assert remote.faults[0]["kind"] == "drop_before_response"
        assert remote.requests == [] and remote.request_count == 0
        remote.clear_faults()
        assert sb.faults == []


def test_a_process_is_steered_as_an_in_process_sandbox(process: bf.RemoteSandbox) -> None:
    process.reset()
    login_ids = bf.Sandbox.login_ids_for(2)
    process.inject({"kind": "status", "status": 503, "operation": "Investments", "retry_after": "0"})
    with process.client() as client:
        # The 503 is retried; the log shows it, then the investments.
        assert client.investments(login_ids[0]).accounts
        client.authorize_cached(login_ids[1])
    log = process.requests
    assert next(entry["status"] for entry in log if entry["operation"] == "Investments") == 503
    assert [entry["authorize"] for entry in log if entry["operation"] == "Authorize"] == ["cached", "cached"]
    assert process.request_count == len(log)
    assert process.faults == []
    process.reset()
    assert process.requests == [] and process.request_count == 0


def test_reset_forgets_sessions_and_saved_logins_but_keeps_the_bulk_ones(process: bf.RemoteSandbox) -> None:
    with process.client() as client:
        saved = client.login("FlinksCapital", "greatday_nomfa", "Everyday", save=True)
        assert saved.login_id is not None
        process.reset()
        with pytest.raises(bf.SessionError):
            saved.accounts_summary()
        with pytest.raises(bf.InvalidLogin):
            client.authorize_cached(saved.login_id)
        assert client.authorize_cached(bf.Sandbox.login_ids_for(2)[1]).request_id


def test_a_bad_fault_is_the_config_error_of_the_in_process_sandbox(process: bf.RemoteSandbox) -> None:
    with pytest.raises(bf.ConfigError) as remote:
        process.inject({"kind": "status", "status": 99})
    with bf.Sandbox() as sb, pytest.raises(bf.ConfigError) as local:
        sb.inject({"kind": "status", "status": 99})
    assert (remote.value.field, remote.value.rule) == (local.value.field, local.value.rule)
    assert process.faults == []


def test_a_wrong_token_or_a_sandbox_without_admin_says_what_to_do() -> None:
    with bf.Sandbox(admin=True) as sb, pytest.raises(bf.BankfeedError, match="token was refused"):
        bf.RemoteSandbox(sb.url, "nope")
    with bf.Sandbox() as plain, pytest.raises(bf.BankfeedError, match="start the sandbox with --admin"):
        bf.RemoteSandbox(plain.url, "nope")


def test_a_process_that_prints_nothing_in_time_is_stopped_with_the_next_step(monkeypatch: pytest.MonkeyPatch) -> None:
    # No wait without a deadline: a sandbox that does not come up is an error naming what to run.
    monkeypatch.setattr(remote_sandbox, "_START_TIMEOUT", 0.0)
    with pytest.raises(bf.BankfeedError, match=r"printed no URL and admin token within 0 s: run `-m bankfeed sandbox"):
        bf.RemoteSandbox.start()


def test_a_process_serves_the_widget_at_its_widget_url(process: bf.RemoteSandbox) -> None:
    # The process asks for keys (the public ones): without a token the widget says so.
    with urllib.request.urlopen(process.widget_url + "?demo=true", timeout=5) as page:
        html = page.read().decode()
    assert process.widget_url == f"{process.url}/v2/"
    assert 'id="error-page"' in html and "authorizeToken parameter is missing" in html


def test_its_login_ids_are_the_saved_logins_each_opening_a_session(process: bf.RemoteSandbox) -> None:
    login_ids = process.login_ids
    assert len(login_ids) == 2 and len(set(login_ids)) == 2
    with process.client() as client:
        for login_id in login_ids:
            assert client.authorize_cached(login_id).login_id == login_id


def test_its_login_ids_follow_the_seed_of_the_process() -> None:
    with bf.RemoteSandbox.start("--logins", "3", "--seed", "11") as seeded:
        assert seeded.login_ids == bf.Sandbox.login_ids_for(3, seed=11) != bf.Sandbox.login_ids_for(3)
        with seeded.client() as client:
            assert client.authorize_cached(seeded.login_ids[2]).request_id
