"""bf.typed_answer: what a person types for one challenge -> its wire answer, for every type; every
refusal names the prompt and the rule and never what was typed (docs/answering.md)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import pytest
from typedhelpers import CHALLENGE_USERS, first_step, typed_for

import bankfeed as bf

CARDS = ["Visa Infinite", "Mastercard World", "Amex Gold", "Visa Classic"]
YEARS = ["1998", "2003", "2010", "2015"]
PHONES = ["(514) 555-0101", "(438) 555-0199"]
QUESTIONS = ["What was the name of your first pet?", "What was the make of your first car?", "In what city?"]
IMAGES = [f"aW1hZ2V{n:02d}" for n in range(16)]


def challenge(kind: str, prompt: str = "Prompt?", choices: list[str] | None = None) -> bf.SecurityChallenge:
    lowered = prompt.lower()
    code = kind == "QuestionAndAnswer" and choices is None and ("security code" in lowered or "6-digit" in lowered)
    fake = SimpleNamespace(type=kind, prompt=prompt, choices=choices, images=None, is_security_code=code)
    # Typed as what it stands in for: typed_answer reads only these attributes.
    return cast(bf.SecurityChallenge, fake)


def refused(item: bf.SecurityChallenge, typed: Any) -> bf.InvalidAnswer:
    with pytest.raises(bf.InvalidAnswer) as info:
        bf.typed_answer(item, typed)
    error = info.value
    assert isinstance(error, ValueError) and error.prompt == item.prompt and item.prompt in str(error)
    assert error.rule in str(error)
    return error


def assert_secret_free(error: Exception, typed: str) -> None:
    """The typed text appears nowhere in the error: not in its text, not in its fields."""
    text = " ".join([str(error), repr(error), *(str(v) for v in vars(error).values())])
    assert typed not in text, "the typed answer leaked into the error"


def test_free_text_is_sent_as_typed() -> None:
    item = challenge("QuestionAndAnswer", "What city were you born in?")
    assert bf.typed_answer(item, " Montreal ") == {"What city were you born in?": [" Montreal "]}
    assert bf.typed_answer(item, ["Montreal"]) == {"What city were you born in?": ["Montreal"]}
    refused(item, "   ")
    refused(item, ["a", "b"])


def test_a_security_code_is_six_digits_spaces_between_them_dropped() -> None:
    item = challenge("QuestionAndAnswer", "Enter the 6-digit security code from your SecurID token")
    assert bf.typed_answer(item, "123 456") == {item.prompt: ["123456"]}
    assert bf.typed_answer(item, "654321\n") == {item.prompt: ["654321"]}
    for wrong in ("12345", "1234567", "12345a", "\uff11\uff12\uff13\uff14\uff15\uff16"):
        assert refused(item, wrong).rule == "a security code is exactly six digits"


def test_an_image_is_its_number_from_1_to_16() -> None:
    item = challenge("ImageSelection", "Select your personal image", IMAGES)
    assert bf.typed_answer(item, "8") == {item.prompt: [IMAGES[7]]}
    assert bf.typed_answer(item, " 1 ") == {item.prompt: [IMAGES[0]]}
    assert bf.typed_answer(item, "16") == {item.prompt: [IMAGES[15]]}
    for wrong in ("0", "17", "-1", "eight", "", "1 2"):
        error = refused(item, wrong)
        assert error.rule == "the image must be a number from 1 to 16"
        # The base64 choices are never listed in a message.
        assert IMAGES[0] not in str(error)


def test_a_multiple_choice_is_a_number_or_the_exact_text_in_any_case() -> None:
    item = challenge("MultipleChoice", "Which street?", ["Rue Sherbrooke", "Maple Avenue", "Elm Street"])
    assert bf.typed_answer(item, "2") == {"Which street?": ["Maple Avenue"]}
    assert bf.typed_answer(item, "maple AVENUE") == {"Which street?": ["Maple Avenue"]}
    assert "1 'Rue Sherbrooke'" in refused(item, "4").rule
    assert "must be the number of a choice, 1 to 3, or its text" in refused(item, "Maple").rule
    refused(item, "1, 2")
    refused(item, ["1", "2"])


def test_a_choice_whose_text_is_a_number_is_read_as_text_when_out_of_range() -> None:
    item = challenge("MultipleChoice", "What year?", YEARS)
    assert bf.typed_answer(item, "2003") == {"What year?": ["2003"]}
    assert bf.typed_answer(item, "2") == {"What year?": ["2003"]}
    # "2" is the number of one choice and the text of another: refused, never guessed.
    clash = challenge("MultipleChoice", "Which?", ["2", "1"])
    assert "number of one choice and the text of another" in refused(clash, "2").rule
    assert "number of one choice and the text of another" in refused(clash, "1").rule


def test_multiple_answers_take_numbers_texts_or_a_list() -> None:
    item = challenge("MultipleChoiceMultipleAnswers", "Which cards?", CARDS)
    expected = {"Which cards?": ["Visa Infinite", "Amex Gold"]}
    for typed in ("1, 3", "1 3", "1,3", " 1 ,  3 ", "visa infinite, AMEX GOLD", "1, amex gold", ["1", "Amex Gold"]):
        assert bf.typed_answer(item, typed) == expected, typed
    assert bf.typed_answer(item, "Visa Classic") == {"Which cards?": ["Visa Classic"]}
    assert refused(item, "1, 1").rule == "a choice is given twice"
    assert "from 1 to 4" in refused(item, "1, 5").rule
    assert "one or more choices" in refused(item, "").rule
    refused(item, "Visa")


def test_the_reset_takes_a_question_then_its_answer() -> None:
    item = challenge("QuestionAndAnswer", "New security question 1", QUESTIONS)
    pet = {"New security question 1": [QUESTIONS[0], "Rex"]}
    for typed in ("1 Rex", "1: Rex", "1, Rex", "1. Rex", "1) Rex", "What was the name of your first pet? Rex"):
        assert bf.typed_answer(item, typed) == pet, typed
    assert bf.typed_answer(item, ["1", "Rex"]) == pet
    assert bf.typed_answer(item, ["what was the name of your first pet?", "Rex"]) == pet
    assert bf.typed_answer(item, "3 Quebec City") == {item.prompt: [QUESTIONS[2], "Quebec City"]}
    assert "number from 1 to 3" in refused(item, "4 Rex").rule
    assert "needs an answer" in refused(item, "1").rule
    assert "needs an answer" in refused(item, ["2", " "]).rule
    assert "pick a question" in refused(item, "Rex").rule
    refused(item, ["1", "Rex", "more"])


def test_text_or_call_is_keyed_by_the_chosen_phone_number() -> None:
    item = challenge("TextOrCall", "How would you like to receive your code?", PHONES)
    assert bf.typed_answer(item, "1 Text") == {PHONES[0]: ["Text"]}
    assert bf.typed_answer(item, "2 call") == {PHONES[1]: ["Call"]}
    assert bf.typed_answer(item, "2, CALL") == {PHONES[1]: ["Call"]}
    assert bf.typed_answer(item, ["2", "Text"]) == {PHONES[1]: ["Text"]}
    assert bf.typed_answer(item, "(438) 555-0199 Text") == {PHONES[1]: ["Text"]}
    # Two phone numbers: "Text" alone does not say which.
    assert refused(item, "Text").rule.startswith("there are 2 phone numbers")
    assert "Text or Call" in refused(item, "1 Email").rule
    assert "from 1 to 2" in refused(item, "3 Text").rule
    single = challenge("TextOrCall", "How?", PHONES[:1])
    assert bf.typed_answer(single, "text") == {PHONES[0]: ["Text"]}
    assert bf.typed_answer(single, "Call") == {PHONES[0]: ["Call"]}


def test_the_trusted_device_is_confirmed_by_enter_or_yes() -> None:
    item = challenge("WaitUntilEUAccept", "Confirm on your trusted device")
    for typed in ("", "y", "Yes", "VERIFIED", "done", "  "):
        assert bf.typed_answer(item, typed) == {item.prompt: ["VERIFIED"]}, typed
    for typed in ("n", "no", "later"):
        assert "once the end user has confirmed" in refused(item, typed).rule


def test_an_unknown_type_takes_its_texts_as_typed() -> None:
    item = challenge("SomethingNew", "Say?")
    assert bf.typed_answer(item, "a") == {"Say?": ["a"]}
    assert bf.typed_answer(item, ["a", "b"]) == {"Say?": ["a", "b"]}
    refused(item, "")


def test_what_is_not_text_is_a_type_error_naming_only_its_type() -> None:
    item = challenge("QuestionAndAnswer")
    with pytest.raises(TypeError, match="not bytes"):
        bf.typed_answer(item, cast(Any, b"secret"))
    with pytest.raises(TypeError, match="holding int"):
        bf.typed_answer(item, cast(Any, [1234]))


SECRET = "Hunter-42 secret"


@pytest.mark.parametrize(
    ("item", "typed"),
    [
        (challenge("QuestionAndAnswer", "Enter the security code"), SECRET),
        (challenge("ImageSelection", "Pick", IMAGES), SECRET),
        (challenge("MultipleChoice", "Pick", CARDS), SECRET),
        (challenge("MultipleChoiceMultipleAnswers", "Pick", CARDS), f"1, {SECRET}"),
        (challenge("QuestionAndAnswer", "New question", QUESTIONS), SECRET),
        (challenge("TextOrCall", "How?", PHONES), f"{SECRET} Text"),
        (challenge("TextOrCall", "How?", PHONES), f"1 {SECRET}"),
        (challenge("WaitUntilEUAccept", "Confirm"), SECRET),
        (challenge("QuestionAndAnswer", "What city?"), [SECRET, SECRET]),
    ],
    ids=lambda value: getattr(value, "type", None) or "typed",
)
def test_no_refusal_repeats_what_was_typed(item: bf.SecurityChallenge, typed: Any) -> None:
    error = refused(item, typed)
    assert_secret_free(error, "Hunter")


def test_the_secret_check_catches_a_leak() -> None:
    # The property above, shown to fail when broken: a message that repeats the typed text.
    leaky = bf.InvalidAnswer(f"answer to 'What city?': {SECRET} is wrong", prompt="What city?", rule="x")
    with pytest.raises(AssertionError, match="leaked"):
        assert_secret_free(leaky, "Hunter")


@pytest.mark.parametrize("username", CHALLENGE_USERS)
def test_typed_answers_pass_the_answer_rules_and_the_sandbox(sandbox: bf.Sandbox, username: str) -> None:
    client = sandbox.client(poll_interval=0.01)
    step = first_step(client, username)
    rounds = 0
    while isinstance(step, bf.Challenge):
        answers: dict[str, list[str]] = {}
        for item in step.challenges:
            answers.update(bf.typed_answer(item, typed_for(item.prompt)))
        step.validate(answers)
        step = step.answer(answers)
        rounds += 1
    assert isinstance(step, bf.Session) and rounds >= 1
