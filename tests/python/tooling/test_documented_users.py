"""The test users of the public test instance behave as documented (docs/sandbox.md#users)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import bankfeed as bf
from bfhelpers import (
    GREATDAY,
    INSTITUTION,
    PASSWORD,
    SLOW_PENDING_POLLS,
    THREE_ROUNDS,
    assert_investments,
    investment_posts,
    is_guid,
    login_id_of,
    raises,
)


def greatday_prompts(seed: int, logins: int) -> list[str]:
    """The question Greatday asks at each of ``logins`` logins of a new sandbox of ``seed``, each
    answered in its one round."""
    asked: list[str] = []
    with bf.Sandbox(seed=seed) as sb:
        client = sb.client()
        for _ in range(logins):
            step = client.authorize(INSTITUTION, "Greatday", PASSWORD)
            assert isinstance(step, bf.Challenge)
            assert [c.type for c in step.challenges] == ["QuestionAndAnswer"]
            prompt = step.challenges[0].prompt
            asked.append(prompt)
            session = step.answer({prompt: GREATDAY[prompt]})
            assert isinstance(session, bf.Session), "one answer opens the session"
            assert is_guid(session.request_id) and is_guid(session.login_id)
    return asked


def test_greatday_asks_one_of_its_three_questions_per_login_picked_with_the_seed() -> None:
    asked = greatday_prompts(seed=7, logins=12)
    assert set(asked) == set(GREATDAY), asked
    assert greatday_prompts(seed=7, logins=12) == asked, "the same seed asks in the same order"


def test_greatday_three_rounds_asks_the_three_questions_one_per_step(client: bf.Client) -> None:
    step = client.authorize(INSTITUTION, THREE_ROUNDS, PASSWORD)
    asked: list[str] = []
    while isinstance(step, bf.Challenge):
        assert [c.type for c in step.challenges] == ["QuestionAndAnswer"]
        prompt = step.challenges[0].prompt
        asked.append(prompt)
        step = step.answer({prompt: GREATDAY[prompt]})
    assert asked == list(GREATDAY)
    assert isinstance(step, bf.Session)
    assert is_guid(step.request_id) and is_guid(step.login_id)


def test_greatday_nomfa_opens_a_session_at_once(client: bf.Client) -> None:
    session = client.authorize(INSTITUTION, "greatday_nomfa", PASSWORD)
    assert isinstance(session, bf.Session)
    assert is_guid(session.request_id) and is_guid(session.login_id)


@pytest.mark.parametrize(
    ("username", "exc_type", "code"),
    [
        ("test_disabled_account", bf.LoginDisabled, "DISABLED_LOGIN"),
        ("test_service_unavailable", bf.RetryLater, "RETRY_LATER"),
    ],
    ids=["disabled", "service_unavailable"],
)
@pytest.mark.parametrize("how", ["authorize", "login"])
def test_refused_users_raise_their_error(
    client: bf.Client, username: str, exc_type: type[bf.ApiError], code: str, how: str
) -> None:
    call: Callable[[str, str, str], object] = client.authorize if how == "authorize" else client.login
    with raises(exc_type, code=code, status=401) as info:
        call(INSTITUTION, username, PASSWORD)
    assert isinstance(info.value, bf.ApiError)
    assert code in str(info.value)


@pytest.mark.parametrize("username", ["test_pending", "test_dispatched"])
@pytest.mark.parametrize("via", ["session", "client"])
def test_slow_users_poll_investments_to_200(client: bf.Client, sandbox: bf.Sandbox, username: str, via: str) -> None:
    session = client.login(INSTITUTION, username, PASSWORD, on_challenge=bf.answers(GREATDAY), save=True)
    requests_before, posts_before = sandbox.request_count, investment_posts(sandbox)
    payload = session.investments() if via == "session" else client.investments(login_id_of(session))
    assert_investments(payload)
    if via == "session":
        assert payload.request_id is not None
        assert payload.request_id.lower() == session.request_id.lower()
    assert investment_posts(sandbox) - posts_before >= SLOW_PENDING_POLLS + 1
    assert sandbox.request_count - requests_before >= SLOW_PENDING_POLLS + 1
