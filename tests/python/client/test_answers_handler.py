"""bf.answers: canned answers as a challenge handler, read without a client, then logging in
through ``bf.Client`` and ``bf.AsyncClient`` alike (the ``api`` fixture), where it is called as
it is given (docs/architecture.md#challenge-handlers)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import cast

import pytest

import bankfeed as bf
from bfhelpers import (
    AUTHORIZE,
    GREATDAY,
    INSTITUTION,
    PASSWORD,
    THREE_ROUNDS,
    Api,
    assert_secret_free,
    operations_since,
    raises,
)

#: (type, prompt, choices) of one fake security challenge.
FakeItem = tuple[str, str, list[str] | None]


def fake_step(*items: FakeItem) -> bf.Challenge:
    """A stand-in with the attributes of a bf.Challenge the handler reads."""
    challenges = [SimpleNamespace(type=kind, prompt=prompt, choices=choices) for kind, prompt, choices in items]
    # Typed as what it stands in for: the handler reads only these attributes.
    return cast(bf.Challenge, SimpleNamespace(challenges=challenges, prompts=[c.prompt for c in challenges]))


CITY: FakeItem = ("QuestionAndAnswer", "What city were you born in?", None)
PHONES = ["(514) 555-0101", "(438) 555-0199"]
TEXT_OR_CALL: FakeItem = ("TextOrCall", "How would you like to receive your security code?", PHONES)


def test_a_string_becomes_a_one_item_list_under_the_exact_prompt() -> None:
    handler = bf.answers({"What city were you born in?": "Montreal"})
    assert handler(fake_step(CITY)) == {"What city were you born in?": ["Montreal"]}


def test_lists_are_kept_as_lists() -> None:
    step = fake_step(("MultipleChoiceMultipleAnswers", "Cards?", ["Visa", "Amex", "MC"]))
    assert bf.answers({"Cards?": ["Visa", "MC"]})(step) == {"Cards?": ["Visa", "MC"]}
    assert bf.answers({"Cards?": ("Amex",)})(step) == {"Cards?": ["Amex"]}


def test_prompts_match_case_insensitively_and_are_sent_verbatim() -> None:
    handler = bf.answers({"WHAT CITY WERE YOU BORN IN?": "Montreal"})
    assert handler(fake_step(CITY)) == {"What city were you born in?": ["Montreal"]}


def test_an_exact_match_wins_over_a_case_insensitive_one() -> None:
    handler = bf.answers({"Pet?": "exact", "pet?": "lower"})
    assert handler(fake_step(("QuestionAndAnswer", "pet?", None))) == {"pet?": ["lower"]}
    assert handler(fake_step(("QuestionAndAnswer", "Pet?", None))) == {"Pet?": ["exact"]}


def test_text_or_call_is_keyed_by_the_chosen_choice() -> None:
    handler = bf.answers({"(438) 555-0199": "Call"})
    assert handler(fake_step(TEXT_OR_CALL)) == {"(438) 555-0199": ["Call"]}


def test_prompts_without_an_answer_are_left_out() -> None:
    handler = bf.answers({"What city were you born in?": "Montreal"})
    step = fake_step(CITY, ("QuestionAndAnswer", "What shape do people like most?", None), TEXT_OR_CALL)
    assert handler(step) == {"What city were you born in?": ["Montreal"]}
    assert handler(fake_step(("QuestionAndAnswer", "Unknown?", None))) == {}


def test_pairs_are_accepted_like_a_mapping() -> None:
    handler = bf.answers([("What city were you born in?", ["Montreal"])])
    assert handler(fake_step(CITY)) == {"What city were you born in?": ["Montreal"]}


def test_the_result_is_a_fresh_copy_each_time() -> None:
    handler = bf.answers({"What city were you born in?": ["Montreal"]})
    first = handler(fake_step(CITY))
    first["What city were you born in?"].append("tampered")
    assert handler(fake_step(CITY)) == {"What city were you born in?": ["Montreal"]}


@pytest.mark.parametrize(
    ("bad", "came"),
    [(42, "not int"), (b"bytes", "not bytes"), ([1, 2], "not a list holding int"), (None, "not NoneType")],
    ids=["int", "bytes", "ints", "none"],
)
def test_values_that_are_not_strings_are_refused_without_echoing_them(bad: object, came: str) -> None:
    with pytest.raises(TypeError) as info:
        # A wrong type on purpose: the run-time check is what is under test.
        bf.answers({"What city were you born in?": bad})  # type: ignore[arg-type]
    message = str(info.value)
    assert "What city were you born in?" in message
    # What came is named by its type only, never by its value.
    assert message.endswith(came), message
    assert repr(bad) not in message.removesuffix(came)


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (5, "answers takes a mapping of prompt to answer, or (prompt, answer) pairs, not int"),
        ("Montreal", "answers takes a mapping of prompt to answer, or (prompt, answer) pairs, not str"),
        ([("q", "a", "b")], "answers takes a mapping of prompt to answer, or (prompt, answer) pairs; got a tuple of 3"),
        (["Montreal"], "answers takes a mapping of prompt to answer, or (prompt, answer) pairs; got str among"),
    ],
    ids=["int", "str", "triple", "flat"],
)
def test_what_is_not_answers_is_refused_by_its_type(given: object, message: str) -> None:
    with pytest.raises(TypeError) as info:
        bf.answers(given)  # type: ignore[arg-type]
    assert str(info.value).startswith(message), info.value
    assert "Montreal" not in str(info.value)


def test_the_repr_lists_the_prompts_but_never_the_answers() -> None:
    handler = bf.answers(dict(GREATDAY, **{"(514) 555-0101": "Text"}))
    text = repr(handler)
    for prompt in GREATDAY:
        assert prompt in text
    for answer in ("Montreal", "Canada", "Triangle"):
        assert answer not in text
    assert "Text'" not in text and '"Text"' not in text
    assert_secret_free(text, str(handler))


def test_the_handler_logs_greatday_in(api: Api, sandbox: bf.Sandbox) -> None:
    lowered = {prompt.lower(): answer for prompt, answer in GREATDAY.items()}
    session = api.run(api.client(sandbox).login(INSTITUTION, "Greatday", PASSWORD, on_challenge=bf.answers(lowered)))
    assert isinstance(session, api.Session)


def test_a_missing_answer_fails_before_sending_and_names_the_prompt(api: Api, sandbox: bf.Sandbox) -> None:
    client = api.client(sandbox)
    handler = bf.answers({"What city were you born in?": "Montreal"})
    before = sandbox.request_count
    with raises(bf.InvalidAnswer, prompt="What is the best country on earth?") as info:
        api.run(client.login(INSTITUTION, THREE_ROUNDS, PASSWORD, on_challenge=handler))
    assert "What is the best country on earth?" in str(info.value)
    # The credentials call and the first answer were sent (each with its token); the second
    # round was not.
    assert operations_since(sandbox, before) == AUTHORIZE * 2
