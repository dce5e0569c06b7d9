"""The documented failures of a session or a login in use arise from what the sandbox is doing
(docs/sandbox.md#documented-failures): CONCURRENT_SESSION, CARD_IN_USE, UNAUTHORIZED at the
challenge stage, the two lifetimes of a RequestId, the no-retry answer; each also on purpose, and
each met by the client as the exception its code names."""

from __future__ import annotations

import pickle
import subprocess
import sys
import time

import pytest

import bankfeed as bf
from bfhelpers import GREATDAY

CITY = "What city were you born in?"


def pending_login(sb: bf.Sandbox, client: bf.Client) -> tuple[bf.Session, str]:
    """``test_pending`` logged in live and saved, its account detail left processing (one 202)."""
    session = client.login("FlinksCapital", "test_pending", "Everyday", save=True, on_challenge=bf.answers(GREATDAY))
    login_id = session.login_id
    assert login_id is not None
    with pytest.raises(bf.PendingTimeout):
        session.accounts_detail()
    return session, login_id


def test_a_second_live_session_while_one_is_in_progress_is_concurrent() -> None:
    with bf.Sandbox(slow_pending_polls=20) as sb, sb.client(poll_timeout=0.001) as client:
        session, login_id = pending_login(sb, client)
        with pytest.raises(bf.ConcurrentSession) as saved:
            client.authorize_saved(login_id)
        assert saved.value.code == "CONCURRENT_SESSION" and saved.value.status == 400
        with pytest.raises(bf.ConcurrentSession):
            client.login("FlinksCapital", "test_pending", "Everyday", on_challenge=bf.answers(GREATDAY))
        # A cached read touches no bank: never concurrent, and it replaces nothing live.
        assert client.authorize_cached(login_id).request_id
        with pytest.raises(bf.ConcurrentSession):
            client.authorize_saved(login_id)
        # Once the data is delivered, the session is no longer in progress.
        with sb.client(poll_timeout=30) as patient:
            assert patient.session(session.request_id, login_id=login_id).accounts_detail().accounts
            assert patient.login_saved(login_id, on_challenge=bf.answers(GREATDAY)).request_id


def test_bankfeeds_own_bulk_calls_never_meet_it() -> None:
    """Bulk calls read cached data: the same login read by several workers at once (each with a
    session still processing) is no concurrent session."""
    with bf.Sandbox(logins=4, pending_polls=3) as sb, sb.client() as client:
        combined = bf.combine(client.investments_many(sb.login_ids * 4, concurrency=16))
        assert not combined.errors
        details = bf.combine(client.accounts_detail_many(sb.login_ids * 4, concurrency=16))
        assert not details.errors
        assert all(entry["status"] != 400 for entry in sb.requests)


def test_deleting_a_login_whose_data_is_processing_is_card_in_use() -> None:
    # The login is new too: the knob set to 0 leaves its processing alone to hold it.
    with bf.Sandbox(slow_pending_polls=20, card_in_use_seconds=0.0) as sb, sb.client(poll_timeout=0.001) as client:
        session, login_id = pending_login(sb, client)
        with pytest.raises(bf.ConcurrentSession) as in_use:
            client.delete_login(login_id)
        assert in_use.value.code == "CARD_IN_USE" and in_use.value.status == 400
        with sb.client(poll_timeout=30) as patient:
            patient.session(session.request_id, login_id=login_id).accounts_detail()
            patient.delete_login(login_id)


def test_deleting_right_after_a_new_login_is_card_in_use_for_a_while() -> None:
    with bf.Sandbox() as sb, sb.client() as client:
        # By default, as the service's error reference reproduces it: a few seconds.
        login_id = client.login("FlinksCapital", "greatday_nomfa", "Everyday", save=True).login_id
        assert login_id is not None
        with pytest.raises(bf.ConcurrentSession, match="CARD_IN_USE") as in_use:
            client.delete_login(login_id)
        assert in_use.value.status == 400 and "connected a moment ago" in str(in_use.value)
    with bf.Sandbox(card_in_use_seconds=0.5, logins=1) as sb, sb.client() as client:
        login_id = client.login("FlinksCapital", "greatday_nomfa", "Everyday", save=True).login_id
        assert login_id is not None
        with pytest.raises(bf.ConcurrentSession, match="CARD_IN_USE"):
            client.delete_login(login_id)
        time.sleep(0.6)
        client.delete_login(login_id)
        # A login saved before is no new login: its Authorize does not hold it.
        client.authorize_cached(sb.login_ids[0])
        client.delete_login(sb.login_ids[0])
    with bf.Sandbox(card_in_use_seconds=0.0) as sb, sb.client() as client:
        # 0 turns it off: a test that saves a login and deletes it at once works.
        login_id = client.login("FlinksCapital", "greatday_nomfa", "Everyday", save=True).login_id
        assert login_id is not None
        client.delete_login(login_id)


def test_a_data_call_nobody_polls_holds_the_login_only_while_it_processes() -> None:
    """The service goes on processing a 202 nobody polls: the login is free once that is done,
    not 30 minutes later (one 202 by default: a second)."""
    with bf.Sandbox(card_in_use_seconds=0.0) as sb, sb.client(poll_timeout=0.001) as client:
        session = client.login("FlinksCapital", "greatday_nomfa", "Everyday", save=True)
        login_id = session.login_id
        assert login_id is not None
        with pytest.raises(bf.PendingTimeout):
            session.accounts_detail()
        with pytest.raises(bf.ConcurrentSession, match="CONCURRENT_SESSION"):
            client.authorize_saved(login_id)
        with pytest.raises(bf.ConcurrentSession, match="CARD_IN_USE"):
            client.delete_login(login_id)
        time.sleep(1.2)
        assert isinstance(client.authorize_saved(login_id), bf.Session)
        client.delete_login(login_id)


def test_a_data_call_at_the_challenge_stage_is_unauthorized() -> None:
    with bf.Sandbox() as sb, sb.client() as client:
        step = client.authorize("FlinksCapital", "Greatday", "Everyday")
        assert isinstance(step, bf.Challenge)
        with pytest.raises(bf.Unauthorized) as refused:
            client.session(step.request_id).accounts_summary()
        assert refused.value.code == "UNAUTHORIZED" and refused.value.request_id == step.request_id


def test_a_processing_lifetime_set_shorter_than_the_idle_one_holds() -> None:
    # The knob alone, the idle lifetime left at its 8 minutes: a pending session dies after it.
    with (
        bf.Sandbox(session_processing_seconds=0.3, slow_pending_polls=1000) as sb,
        sb.client(poll_timeout=0.001) as client,
    ):
        session, login_id = pending_login(sb, client)
        time.sleep(0.6)
        with pytest.raises(bf.SessionError, match="SESSION_EXPIRED"):
            client.session(session.request_id, login_id=login_id).accounts_detail()


def test_a_request_id_lives_longer_while_its_data_is_processing() -> None:
    lifetimes = bf.Sandbox(session_idle_seconds=0.4, session_processing_seconds=2.0, slow_pending_polls=1000)
    with lifetimes as sb, sb.client(poll_timeout=0.001) as client:
        idle = client.login("FlinksCapital", "greatday_nomfa", "Everyday")
        session, login_id = pending_login(sb, client)
        time.sleep(0.6)
        with pytest.raises(bf.SessionError) as expired:
            idle.accounts_summary()
        assert expired.value.code == "SESSION_EXPIRED"
        # Idle for longer than the idle lifetime, but processing: still there, still pending.
        with pytest.raises(bf.PendingTimeout):
            client.session(session.request_id, login_id=login_id).accounts_detail()
        time.sleep(2.2)
        with pytest.raises(bf.SessionError, match="SESSION_EXPIRED"):
            client.session(session.request_id, login_id=login_id).accounts_detail()


def test_the_knobs_are_flags_of_the_command_too() -> None:
    help_text = subprocess.run(
        [sys.executable, "-m", "bankfeed", "sandbox", "--help"], capture_output=True, text=True, check=True
    ).stdout
    for flag in (
        "--session-idle-seconds",
        "--session-processing-seconds",
        "--card-in-use-seconds",
        "--max-wrong-answers",
    ):
        assert flag in help_text
    with pytest.raises(bf.ConfigError, match="session_idle_seconds"):
        bf.Sandbox(session_idle_seconds=0)
    with pytest.raises(bf.ConfigError, match="max_wrong_answers"):
        bf.Sandbox(max_wrong_answers=0)


def test_repeated_wrong_answers_end_in_the_no_retry_error() -> None:
    with bf.Sandbox(max_wrong_answers=2) as sb, sb.client() as client:
        # Its first question is the city's (docs/sandbox.md#users).
        step = client.authorize("FlinksCapital", "greatday_three_rounds", "Everyday")
        assert isinstance(step, bf.Challenge)
        with pytest.raises(bf.InvalidSecurityResponse) as first:
            step.answer({CITY: "Paris"})
        assert first.value.code == "INVALID_SECURITY_RESPONSE"
        with pytest.raises(bf.InvalidSecurityResponse) as last:
            step.answer({CITY: "Paris"})
        assert last.value.code == "INVALID_SECURITY_RESPONSE_NO_RETRY" and last.value.status == 401
        # The session is closed: the right answer comes too late.
        with pytest.raises(bf.SessionError):
            step.answer({CITY: "Montreal"})


def test_faults_keep_working_whatever_the_state() -> None:
    fault = {"kind": "status", "status": 400, "code": "CONCURRENT_SESSION", "operation": "Authorize"}
    with bf.Sandbox(faults=[fault]) as sb, sb.client() as client:
        with pytest.raises(bf.ConcurrentSession):
            client.login("FlinksCapital", "greatday_nomfa", "Everyday")
        assert client.login("FlinksCapital", "greatday_nomfa", "Everyday").request_id


@pytest.mark.parametrize("user", ["test_pending", "test_dispatched"])
def test_a_slow_users_202s_carry_the_results_so_far_and_a_timeout_keeps_them(user: str) -> None:
    with bf.Sandbox(slow_pending_polls=5) as sb, sb.client(poll_timeout=0.001) as client:
        session = client.login("FlinksCapital", user, "Everyday", on_challenge=bf.answers(GREATDAY))
        with pytest.raises(bf.PendingTimeout) as first:
            session.accounts_detail()
        with sb.client(poll_interval=0.01, poll_timeout=0.025) as later:
            with pytest.raises(bf.PendingTimeout) as second:
                later.session(session.request_id).accounts_detail()
            detail = sb.client(poll_timeout=30).session(session.request_id).accounts_detail()
    full = [account["Id"] for account in detail.raw["Accounts"]]
    so_far = [[account["Id"] for account in (exc.value.partial or {})["Accounts"]] for exc in (first, second)]
    # More at each poll, never all before the 200, each the first of the answer to come.
    assert 0 < len(so_far[0]) <= len(so_far[1]) < len(full)
    assert all(ids == full[: len(ids)] for ids in so_far)
    assert pickle.loads(pickle.dumps(first.value)).partial == first.value.partial


def test_a_quick_users_202s_carry_nothing_and_the_timeout_says_so() -> None:
    with (
        bf.Sandbox(pending_polls=5) as sb,
        sb.client(poll_timeout=0.001) as client,
        pytest.raises(bf.PendingTimeout) as pending,
    ):
        client.login("FlinksCapital", "greatday_nomfa", "Everyday").accounts_detail()
    assert pending.value.partial is None
