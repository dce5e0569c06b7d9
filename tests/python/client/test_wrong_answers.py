"""Answers of the right shape but the wrong value: the server refuses them, the step stays open."""

from __future__ import annotations

import asyncio
import pickle

import pytest

import bankfeed as bf
from bfhelpers import (
    GREATDAY,
    INSTITUTION,
    PASSWORD,
    WRONG_CODE,
    WRONG_TEXT,
    SandboxUser,
    answer_map,
    answers_for,
    choices_of,
    complete,
    raises,
    step_with,
)


def wrong_answers(step: bf.Challenge, correct: dict[str, list[str]], kind: str) -> dict[str, list[str]]:
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
    client: bf.Client, users: dict[str, SandboxUser], username: str, kind: str
) -> None:
    user = users[username]
    step = step_with(client, user, kind)
    correct = answers_for(step, answer_map(user))
    wrong = wrong_answers(step, correct, kind)
    step.validate(wrong)  # the shape is right: only the server can tell

    with raises(bf.InvalidSecurityResponse, code="INVALID_SECURITY_RESPONSE", request_id=step.request_id) as info:
        step.answer(wrong)
    assert isinstance(info.value, bf.ApiError)

    session = complete(step.answer(correct), answer_map(user))
    assert isinstance(session, bf.Session)


def test_a_handler_that_always_answers_wrongly_ends_in_invalid_security_response(client: bf.Client) -> None:
    calls: list[str] = []

    def wrongly(challenge: bf.Challenge) -> dict[str, str]:
        calls.append(challenge.request_id)
        return dict.fromkeys(challenge.prompts, WRONG_TEXT)

    with raises(bf.InvalidSecurityResponse, code="INVALID_SECURITY_RESPONSE"):
        client.login(INSTITUTION, "Greatday", PASSWORD, on_challenge=wrongly)
    assert len(calls) >= 1


def test_a_wrong_answer_in_the_middle_of_greatday(client: bf.Client) -> None:
    step = client.authorize(INSTITUTION, "Greatday", PASSWORD)
    assert isinstance(step, bf.Challenge)
    step = step.answer({"What city were you born in?": "Montreal"})
    assert isinstance(step, bf.Challenge)
    assert step.prompts == ["What is the best country on earth?"]
    with raises(bf.InvalidSecurityResponse, request_id=step.request_id):
        step.answer({"What is the best country on earth?": WRONG_TEXT})
    session = complete(step, GREATDAY)
    assert isinstance(session, bf.Session)


def test_a_wrong_answer_inside_login_keeps_the_challenge_to_answer_again(client: bf.Client) -> None:
    calls: list[str] = []

    def typed(challenge: bf.Challenge) -> dict[str, str]:
        calls.append(challenge.request_id)
        if len(calls) == 1:
            return dict.fromkeys(challenge.prompts, WRONG_TEXT)
        return {prompt: GREATDAY[prompt] for prompt in challenge.prompts}

    with raises(bf.InvalidSecurityResponse, code="INVALID_SECURITY_RESPONSE") as info:
        client.login(INSTITUTION, "Greatday", PASSWORD, on_challenge=typed)
    exc = info.value
    assert "stays open" in str(exc)
    assert isinstance(exc.challenge, bf.Challenge)
    assert exc.challenge.request_id == exc.request_id == calls[0]
    assert exc.challenge.prompts == ["What city were you born in?"]
    # No new live login: the same RequestId goes on, the handler answers the rest.
    session = complete(exc.challenge.answer(typed(exc.challenge)), GREATDAY)
    assert isinstance(session, bf.Session)
    # A copy in another process has no client to answer through; its fields are kept.
    copy = pickle.loads(pickle.dumps(exc))
    assert (type(copy), copy.challenge, copy.request_id, str(copy)) == (type(exc), None, exc.request_id, str(exc))


def test_an_async_login_keeps_an_async_challenge_to_answer_again(sandbox: bf.Sandbox) -> None:
    async def run() -> bf.AsyncSession:
        async with sandbox.async_client(poll_interval=0.01) as client:
            calls: list[str] = []

            async def typed(challenge: bf.AsyncChallenge) -> dict[str, str]:
                calls.append(challenge.request_id)
                if len(calls) == 1:
                    return dict.fromkeys(challenge.prompts, WRONG_TEXT)
                return {prompt: GREATDAY[prompt] for prompt in challenge.prompts}

            with raises(bf.InvalidSecurityResponse, code="INVALID_SECURITY_RESPONSE") as info:
                await client.login(INSTITUTION, "Greatday", PASSWORD, on_challenge=typed)
            challenge = info.value.challenge
            assert isinstance(challenge, bf.AsyncChallenge)
            step: bf.AsyncStep = challenge
            while isinstance(step, bf.AsyncChallenge):
                step = await step.answer(await typed(step))
            assert isinstance(step, bf.AsyncSession)
            return step

    assert asyncio.run(run()).request_id


def test_an_answer_to_a_challenge_already_passed_says_to_answer_the_pending_one(client: bf.Client) -> None:
    first = client.authorize(INSTITUTION, "Greatday", PASSWORD)
    assert isinstance(first, bf.Challenge)
    first.answer({"What city were you born in?": "Montreal"})
    with raises(bf.InvalidSecurityResponse, code="UNKNOWN_CHALLENGE_KEY") as info:
        first.answer({"What city were you born in?": "Montreal"})
    assert info.value.challenge is None  # that challenge is gone: nothing to answer again
    assert "answer the challenge again" not in str(info.value)
    assert "the step the last answer returned" in str(info.value)
