"""The repr and the notebook view of every challenge give the answer form of its type, and the
typed example they show is one bf.typed_answer takes (docs/answering.md)."""

from __future__ import annotations

import ast
import re
from html import unescape

import pytest
from typedhelpers import CHALLENGE_USERS, every_step

import bankfeed as bf

#: What the view of each type must say (a distinctive part of its answer form).
FORMS = {
    "ImageSelection": "answer: the number of an image, 1 to 16, through bf.typed_answer(c, '8')",
    "MultipleChoice": "answer: one of the choices",
    "MultipleChoiceMultipleAnswers": "answer: one or more of the choices, none twice",
    "TextOrCall": "answer: keyed by the phone number, not the prompt: {'(514) 555-0101': ['Text']}",
    "WaitUntilEUAccept": "answer: ['VERIFIED'] once confirmed on the trusted device",
    "reset": "answer: [question, answer], a question of the choices then its answer",
    "code": "answer: exactly six digits",
    "QuestionAndAnswer": "answer: one non-empty text",
}


def kind_of(item: bf.SecurityChallenge) -> str:
    if item.type == "QuestionAndAnswer" and item.choices is not None:
        return "reset"
    return "code" if item.is_security_code else item.type


@pytest.mark.parametrize("username", CHALLENGE_USERS)
def test_every_view_says_how_its_type_is_answered(sandbox: bf.Sandbox, username: str) -> None:
    seen = set()
    for step in every_step(sandbox, username):
        whole = repr(step)
        page = unescape(step._repr_html_())
        assert "{prompt: answer}" not in whole + page
        assert "answers.update(bf.typed_answer(c, typed))" in page
        for item in step.challenges:
            form = FORMS[kind_of(item)]
            seen.add(kind_of(item))
            assert form in repr(item) and form in whole and form in unescape(item._repr_html_()) and form in page
            # The typed example the form shows is one typed_answer takes.
            example = re.search(r"bf\.typed_answer\(c, ('[^']*')\)", repr(item))
            assert example is not None
            bf.typed_answer(item, ast.literal_eval(example.group(1)))
    assert seen


def test_choices_are_numbered_from_1_in_the_view(sandbox: bf.Sandbox) -> None:
    (step,) = every_step(sandbox, "mfa_multiple_choice")
    html = step.challenges[0]._repr_html_()
    # An ordered list: a browser numbers it 1, 2, ... as bf.typed_answer reads the number.
    assert "<ol><li>Rue Sherbrooke</li><li>Maple Avenue</li>" in html
