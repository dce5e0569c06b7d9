"""The calls on a saved login outside a session, for ``bf.Client`` and ``bf.AsyncClient`` alike
(the ``api`` fixture): the nightly refresh, and the security questions and their stored answers
(docs/protocol.md#operations-beyond-the-interface)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

import bankfeed as bf
from bfhelpers import INSTITUTION, PASSWORD, Api, login_id_of, raises

#: Greatday's questions and answers (docs/sandbox.md#users).
GREATDAY = {
    "What city were you born in?": "Montreal",
    "What is the best country on earth?": "Canada",
    "What shape do people like most?": "Triangle",
}


@pytest.fixture
def client(api: Api, sandbox: bf.Sandbox) -> Any:
    """A client of the shared sandbox, of the kind the case runs against."""
    return api.client(sandbox)


def saved_greatday(api: Api, client: Any) -> str:
    """A saved connection of Greatday, through its one question: its LoginId."""
    handler = bf.answers(GREATDAY)
    return login_id_of(api.run(client.login(INSTITUTION, "Greatday", PASSWORD, save=True, on_challenge=handler)))


def test_set_scheduled_refresh_shows_in_the_logins_answers(api: Api, client: Any) -> None:
    session = api.run(client.authorize(INSTITUTION, "greatday_nomfa", PASSWORD, save=True))
    login_id = login_id_of(session)
    assert api.run(client.set_scheduled_refresh(login_id, True)) is True
    assert api.run(client.authorize_cached(login_id)).login["IsScheduledRefresh"] is True
    assert api.run(client.set_scheduled_refresh(login_id, active=False)) is False
    assert api.run(client.authorize_cached(login_id)).login["IsScheduledRefresh"] is False
    with raises(bf.InvalidLogin, code="INVALID_LOGIN"):
        api.run(client.set_scheduled_refresh(str(uuid.uuid4()), True))


def test_mfa_questions_and_stored_answers(api: Api, client: Any) -> None:
    login_id = saved_greatday(api, client)
    questions = api.run(client.mfa_questions(login_id))
    assert sorted(questions) == sorted(GREATDAY)
    assert api.run(client.answer_mfa_questions(login_id, dict(GREATDAY))) is None
    # A live refresh gives the stored answers itself: the session opens with no challenge.
    assert isinstance(api.run(client.authorize_saved(login_id)), api.Session)
    with raises(bf.ApiError, code="INVALID_REQUEST") as info:
        api.run(client.answer_mfa_questions(login_id, {"Favourite colour?": "Blue"}))
    assert "Favourite colour?" in str(info.value) and "Blue" not in str(info.value)


@pytest.mark.parametrize(
    ("answers", "named"),
    [({}, "at least one"), ({"What shape do people like most?": "  "}, "What shape do people like most?")],
)
def test_answers_are_checked_before_sending_without_showing_them(
    api: Api, client: Any, answers: dict[str, str], named: str
) -> None:
    with pytest.raises(bf.ConfigError, match="answers") as info:
        api.run(client.answer_mfa_questions(str(uuid.uuid4()), answers))
    assert named in str(info.value)
    with pytest.raises(TypeError, match='the answer to "Q\\?" must be a str, not int'):
        api.run(client.answer_mfa_questions(str(uuid.uuid4()), {"Q?": 1234}))


def test_nightly_refresh_status_lists_the_scheduled_logins_a_question_would_stop(
    api: Api, fresh_sandbox: bf.Sandbox
) -> None:
    client = api.client(fresh_sandbox)
    login_id = saved_greatday(api, client)
    assert api.run(client.nightly_refresh_status()) == []
    api.run(client.set_scheduled_refresh(login_id, True))
    [card] = api.run(client.nightly_refresh_status())
    assert card["LoginId"] == login_id and card["LastRefreshState"] == "AnsweringSecurityChallenge"
    api.run(client.answer_mfa_questions(login_id, dict(GREATDAY)))
    assert api.run(client.nightly_refresh_status()) == []


def test_institutions_lists_every_institution(api: Api, client: Any) -> None:
    [institution] = api.run(client.institutions())
    assert institution["Id"] == 14 and institution["Country"] == "CA"
    assert {entry["Language"] for entry in institution["Localizations"]} == {"en", "fr"}
