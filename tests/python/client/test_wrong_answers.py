"""Answers of the right shape but the wrong value, for ``bf.Client`` and ``bf.AsyncClient`` alike
(the ``api`` fixture): the server refuses them, the step stays open to be answered again."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

import bankfeed as bf
from bfhelpers import (
    GREATDAY,
    INSTITUTION,
    PASSWORD,
    THREE_ROUNDS,
    WRONG_CODE,
    WRONG_TEXT,
    AnyChallenge,
    Api,
    SandboxUser,
    answer_map,
    answers_for,
    choices_of,
    raises,
)


@pytest.fixture
def client(api: Api, sandbox: bf.Sandbox) -> Any:
    """A client of the shared sandbox, of the kind the case runs against."""
    return api.client(sandbox)


def wrong_answers(step: AnyChallenge, correct: dict[str, list[str]], kind: str) -> dict[str, list[str]]:
    """``correct`` with every challenge of type ``kind`` answered wrongly, within the rules."""
    wrong = dict(correct)
    for item in step.challenges:
        if item.type != kind:
            continue
        right = correct[item.prompt]
        if kind == "QuestionAndAnswer":
            six_digits = len(right[0]) == 6 and right[0].isdigit()
            wrong[item.prompt] = [WRONG_CODE if six_digits else WRONG_TEXT]
        elif kind in ("MultipleChoice", "ImageSelection", "MultipleChoiceMultipleAnswers"):
            wrong[item.prompt] = [next(c for c in choices_of(item) if c not in right)]
    assert wrong != correct
    return wrong


CASES = [
    ("Greatday", "QuestionAndAnswer"),
    ("mfa_securid", "QuestionAndAnswer"),
    ("mfa_multiple_choice", "MultipleChoice"),
    ("mfa_multiple_answers", "MultipleChoiceMultipleAnswers"),
    ("mfa_image", "ImageSelection"),
    ("mfa_text_or_call", "QuestionAndAnswer"),
]


@pytest.mark.parametrize(("username", "kind"), CASES, ids=[f"{u}-{k}" for u, k in CASES])
def test_a_wrong_answer_is_refused_and_the_challenge_can_be_answered_again(
    api: Api, client: Any, users: dict[str, SandboxUser], username: str, kind: str
) -> None:
    user = users[username]
    step = api.step_with(client, user, kind)
    correct = answers_for(step, answer_map(user))
    wrong = wrong_answers(step, correct, kind)
    step.validate(wrong)  # the shape is right: only the server can tell

    with raises(bf.InvalidSecurityResponse, code="INVALID_SECURITY_RESPONSE", request_id=step.request_id) as info:
        api.run(step.answer(wrong))
    assert isinstance(info.value, bf.ApiError)

    session = api.complete(api.run(step.answer(correct)), answer_map(user))
    assert isinstance(session, api.Session)


def test_a_handler_that_always_answers_wrongly_ends_in_invalid_security_response(api: Api, client: Any) -> None:
    calls: list[str] = []

    def wrongly(challenge: Any) -> dict[str, str]:
        calls.append(challenge.request_id)
        return dict.fromkeys(challenge.prompts, WRONG_TEXT)

    with raises(bf.InvalidSecurityResponse, code="INVALID_SECURITY_RESPONSE"):
        api.run(client.login(INSTITUTION, "Greatday", PASSWORD, on_challenge=api.handler(wrongly)))
    assert len(calls) >= 1


def test_a_wrong_answer_in_the_middle_of_greatday(api: Api, client: Any) -> None:
    step = api.run(client.authorize(INSTITUTION, THREE_ROUNDS, PASSWORD))
    assert isinstance(step, api.Challenge)
    step = api.run(step.answer({"What city were you born in?": "Montreal"}))
    assert isinstance(step, api.Challenge)
    assert step.prompts == ["What is the best country on earth?"]
    with raises(bf.InvalidSecurityResponse, request_id=step.request_id):
        api.run(step.answer({"What is the best country on earth?": WRONG_TEXT}))
    session = api.complete(step, GREATDAY)
    assert isinstance(session, api.Session)


def test_a_wrong_answer_inside_login_keeps_the_challenge_to_answer_again(api: Api, client: Any) -> None:
    calls: list[str] = []

    def typed(challenge: Any) -> dict[str, str]:
        calls.append(challenge.request_id)
        if len(calls) == 1:
            return dict.fromkeys(challenge.prompts, WRONG_TEXT)
        return {prompt: GREATDAY[prompt] for prompt in challenge.prompts}

    with raises(bf.InvalidSecurityResponse, code="INVALID_SECURITY_RESPONSE") as info:
        api.run(client.login(INSTITUTION, THREE_ROUNDS, PASSWORD, on_challenge=api.handler(typed)))
    exc = info.value
    assert "stays open" in str(exc)
    # The challenge to answer again is one of the client's own kind.
    assert isinstance(exc.challenge, api.Challenge)
    assert exc.challenge.request_id == exc.request_id == calls[0]
    assert exc.challenge.prompts == ["What city were you born in?"]
    # No new live login: the same RequestId goes on, the handler answers the rest.
    session = api.complete(api.run(exc.challenge.answer(typed(exc.challenge))), GREATDAY)
    assert isinstance(session, api.Session)
    # A copy in another process has no client to answer through; its fields are kept.
    copy = pickle.loads(pickle.dumps(exc))
    assert (type(copy), copy.challenge, copy.request_id, str(copy)) == (type(exc), None, exc.request_id, str(exc))


def test_an_answer_to_a_challenge_already_passed_says_to_answer_the_pending_one(api: Api, client: Any) -> None:
    first = api.run(client.authorize(INSTITUTION, THREE_ROUNDS, PASSWORD))
    assert isinstance(first, api.Challenge)
    api.run(first.answer({"What city were you born in?": "Montreal"}))
    with raises(bf.InvalidSecurityResponse, code="UNKNOWN_CHALLENGE_KEY") as info:
        api.run(first.answer({"What city were you born in?": "Montreal"}))
    assert info.value.challenge is None  # that challenge is gone: nothing to answer again
    assert "answer the challenge again" not in str(info.value)
    assert "the step the last answer returned" in str(info.value)
