"""Answers that break a rule (docs/protocol.md#challenges-and-answer-rules) raise InvalidAnswer before anything
is sent, from ``bf.Challenge`` and ``bf.AsyncChallenge`` alike (the ``api`` fixture)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import bankfeed as bf
from bfhelpers import Answers, AnyChallenge, Api, SandboxUser, Want, answer_map, answers_for, choices_of, raises

#: (answers, the prompt the error must name, the values sent that must not be echoed).
Broken = tuple[Answers, str, list[str]]
#: Turns a step and its correct answers into answers that break one rule.
Breaker = Callable[[AnyChallenge, dict[str, list[str]]], Broken]


def _target(step: AnyChallenge, kind: str) -> bf.SecurityChallenge:
    return next(c for c in step.challenges if c.type == kind)


def _security_code(item: bf.SecurityChallenge) -> bool:
    return item.type == "QuestionAndAnswer" and not item.choices and "SecurID" in item.prompt


# Each case: user, which step to reach, and a Breaker.
def missing_prompt(step: AnyChallenge, correct: dict[str, list[str]]) -> Broken:
    last = step.prompts[-1]
    return {k: v for k, v in correct.items() if k != last}, last, []


def key_that_is_no_prompt(step: AnyChallenge, correct: dict[str, list[str]]) -> Broken:
    # The key is not named: a key that is no prompt could be an answer written in its place.
    key = "What is your favourite colour?"
    return {**correct, key: "Blue-qz"}, "answers", ["Blue-qz", key]


def blank_question(step: AnyChallenge, correct: dict[str, list[str]]) -> Broken:
    prompt = step.prompts[0]
    return {prompt: "   "}, prompt, []


def multiple_choice_two_answers(step: AnyChallenge, correct: dict[str, list[str]]) -> Broken:
    item = _target(step, "MultipleChoice")
    return {item.prompt: choices_of(item)[:2]}, item.prompt, []


def multiple_choice_not_a_choice(step: AnyChallenge, correct: dict[str, list[str]]) -> Broken:
    item = _target(step, "MultipleChoice")
    return {item.prompt: "Baker Street-qz"}, item.prompt, ["Baker Street-qz"]


def multiple_answers_empty(step: AnyChallenge, correct: dict[str, list[str]]) -> Broken:
    item = _target(step, "MultipleChoiceMultipleAnswers")
    return {item.prompt: []}, item.prompt, []


def multiple_answers_not_a_choice(step: AnyChallenge, correct: dict[str, list[str]]) -> Broken:
    item = _target(step, "MultipleChoiceMultipleAnswers")
    return {item.prompt: [choices_of(item)[0], "Discover-qz"]}, item.prompt, ["Discover-qz"]


def image_not_an_image(step: AnyChallenge, correct: dict[str, list[str]]) -> Broken:
    item = _target(step, "ImageSelection")
    return {item.prompt: "aW1hZ2UtcXo="}, item.prompt, ["aW1hZ2UtcXo="]


def text_or_call_keyed_by_the_prompt(step: AnyChallenge, correct: dict[str, list[str]]) -> Broken:
    item = _target(step, "TextOrCall")
    return {item.prompt: "Text"}, item.prompt, []


def text_or_call_keyed_by_a_stranger(step: AnyChallenge, correct: dict[str, list[str]]) -> Broken:
    assert _target(step, "TextOrCall").choices
    return {"(555) 000-0000": "Text"}, "answers", ["(555) 000-0000"]


def text_or_call_neither_text_nor_call(step: AnyChallenge, correct: dict[str, list[str]]) -> Broken:
    item = _target(step, "TextOrCall")
    return {choices_of(item)[0]: "Email-qz"}, item.prompt, ["Email-qz"]


def trusted_device_not_verified(step: AnyChallenge, correct: dict[str, list[str]]) -> Broken:
    item = _target(step, "WaitUntilEUAccept")
    return {item.prompt: "Sure-qz"}, item.prompt, ["Sure-qz"]


def code_of_five_digits(step: AnyChallenge, correct: dict[str, list[str]]) -> Broken:
    item = next(c for c in step.challenges if _security_code(c))
    return {item.prompt: "12345"}, item.prompt, ["12345"]


def code_with_a_letter(step: AnyChallenge, correct: dict[str, list[str]]) -> Broken:
    item = next(c for c in step.challenges if _security_code(c))
    return {item.prompt: "12a456"}, item.prompt, ["12a456"]


CASES: list[tuple[str, Want, Breaker]] = [
    ("mfa_three_questions", "QuestionAndAnswer", missing_prompt),
    ("Greatday", "QuestionAndAnswer", key_that_is_no_prompt),
    ("Greatday", "QuestionAndAnswer", blank_question),
    ("mfa_multiple_choice", "MultipleChoice", multiple_choice_two_answers),
    ("mfa_multiple_choice", "MultipleChoice", multiple_choice_not_a_choice),
    ("mfa_multiple_answers", "MultipleChoiceMultipleAnswers", multiple_answers_empty),
    ("mfa_multiple_answers", "MultipleChoiceMultipleAnswers", multiple_answers_not_a_choice),
    ("mfa_image", "ImageSelection", image_not_an_image),
    ("mfa_text_or_call", "TextOrCall", text_or_call_keyed_by_the_prompt),
    ("mfa_text_or_call", "TextOrCall", text_or_call_keyed_by_a_stranger),
    ("mfa_text_or_call", "TextOrCall", text_or_call_neither_text_nor_call),
    ("mfa_trusted_device", "WaitUntilEUAccept", trusted_device_not_verified),
    ("mfa_securid", _security_code, code_of_five_digits),
    ("mfa_securid", _security_code, code_with_a_letter),
]
IDS = [case[2].__name__ for case in CASES]


@pytest.mark.parametrize(("username", "want", "breaker"), CASES, ids=IDS)
@pytest.mark.parametrize("method", ["answer", "validate"])
def test_a_broken_rule_raises_invalid_answer_without_sending(
    api: Api,
    sandbox: bf.Sandbox,
    users: dict[str, SandboxUser],
    username: str,
    want: Want,
    breaker: Breaker,
    method: str,
) -> None:
    user = users[username]
    step: Any = api.step_with(api.client(sandbox), user, want)
    assert isinstance(step, api.Challenge)
    correct = answers_for(step, answer_map(user))
    bad, named, sent = breaker(step, correct)

    before = sandbox.request_count
    with raises(bf.InvalidAnswer, extra_secrets=sent) as info:
        if method == "answer":
            api.run(step.answer(bad))
        else:
            step.validate(bad)
    assert sandbox.request_count == before, "nothing may be sent when a rule is broken"

    exc = info.value
    assert isinstance(exc, ValueError)
    assert isinstance(exc, bf.BankfeedError)
    assert named in str(exc)
    assert exc.prompt == named
    assert exc.rule

    # The step is untouched: the right answers still pass the rules and open the session.
    assert step.validate(correct) is None  # pins the documented None
    assert sandbox.request_count == before
    assert isinstance(api.complete(step, answer_map(user)), api.Session)


@pytest.mark.parametrize(
    "answers",
    [{"What city were you born in?": 42}, {"What city were you born in?": [b"Montreal"]}, ["not", "a", "mapping"]],
    ids=["int", "bytes", "list"],
)
def test_answers_of_the_wrong_type_are_refused(api: Api, sandbox: bf.Sandbox, answers: object) -> None:
    step = api.run(api.client(sandbox).authorize("FlinksCapital", "Greatday", "Everyday"))
    assert isinstance(step, api.Challenge)
    before = sandbox.request_count
    with pytest.raises((bf.InvalidAnswer, TypeError)):
        # A wrong type on purpose: the run-time check is what is under test.
        api.run(step.answer(answers))  # type: ignore[arg-type]
    assert sandbox.request_count == before
