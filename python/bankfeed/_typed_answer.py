"""Typed answers: :func:`typed_answer` turns what a person types for one challenge into its wire
answer (docs/answering.md), by the rules of docs/protocol.md#challenges-and-answer-rules.

Numbers are for people: the first image or choice is 1. Nothing is guessed: a typed answer that
could mean two things, or none, is refused with :class:`bankfeed.InvalidAnswer` naming the
prompt and the rule, never what was typed (an answer is a secret).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from bankfeed.errors import InvalidAnswer

if TYPE_CHECKING:
    from bankfeed._native import SecurityChallenge

__all__ = ["typed_answer"]

#: What confirms a trusted-device challenge, typed in any case (Enter alone too).
_CONFIRMED = frozenset({"", "y", "yes", "verified", "done"})
_METHODS = {"text": "Text", "call": "Call"}
#: "2 Rex", "2: Rex", "2, Rex", "2. Rex", "2) Rex": a question's number, then its answer.
_NUMBERED = re.compile(r"\s*(\d+)(?:\s*[,:.)\-]\s*|\s+|\s*$)(.*)", re.DOTALL)


def _refuse(challenge: SecurityChallenge, rule: str) -> InvalidAnswer:
    # Worded as the core words its InvalidAnswer, so both read alike.
    prompt = challenge.prompt
    return InvalidAnswer(f"answer to {json.dumps(prompt, ensure_ascii=False)}: {rule}", prompt=prompt, rule=rule)


def _listed(choices: Sequence[str]) -> str:
    return ", ".join(f"{number} {choice!r}" for number, choice in enumerate(choices, 1))


def _number(text: str) -> int | None:
    text = text.strip()
    return int(text) if text.isascii() and text.isdigit() else None


def _pick(challenge: SecurityChallenge, text: str, what: str, *, list_choices: bool = True) -> int:
    """The index of the choice ``text`` names: its number (1 to n) or its exact text, in any case."""
    choices = challenge.choices or []
    n = len(choices)
    wanted = text.strip().casefold()
    by_text = [i for i, choice in enumerate(choices) if choice.strip().casefold() == wanted]
    if len(by_text) > 1:
        # Choices that differ only by case: the exact spelling decides, or nothing does.
        exact = [i for i in by_text if choices[i].strip() == text.strip()]
        by_text = exact if len(exact) == 1 else by_text
    number = _number(text)
    by_number = number - 1 if number is not None and 1 <= number <= n else None
    known = f"; the choices: {_listed(choices)}" if list_choices else ""
    if len(by_text) > 1:
        raise _refuse(challenge, f"{what} names several choices that differ only by case: type its number, 1 to {n}")
    if by_text and by_number is not None and by_text[0] != by_number:
        raise _refuse(challenge, f"{what} is the number of one choice and the text of another: type it unambiguously")
    if by_text:
        return by_text[0]
    if by_number is not None:
        return by_number
    if number is not None:
        raise _refuse(challenge, f"{what} must be a number from 1 to {n}{known}")
    if list_choices:
        raise _refuse(challenge, f"{what} must be the number of a choice, 1 to {n}, or its text{known}")
    raise _refuse(challenge, f"{what} must be a number from 1 to {n}")


def _one(challenge: SecurityChallenge, parts: list[str], what: str) -> str:
    if len(parts) != 1:
        raise _refuse(challenge, f"{what} is typed as one text, not {len(parts)}")
    return parts[0]


def _multiple(challenge: SecurityChallenge, parts: list[str]) -> list[str]:
    choices = challenge.choices or []
    what = "each answer"
    if len(parts) == 1:
        text = parts[0]
        wanted = text.strip().casefold()
        if any(choice.strip().casefold() == wanted for choice in choices):
            items = [text]
        else:
            tokens = [token for token in re.split(r"[,;\s]+", text) if token]
            # Numbers may be separated by spaces; texts only by commas (a choice may hold spaces).
            items = tokens if tokens and all(_number(t) is not None for t in tokens) else text.split(",")
    else:
        items = parts
    items = [item for item in items if item.strip()]
    if not items:
        raise _refuse(challenge, f"type one or more choices: their numbers, 1 to {len(choices)}, as '1, 3' or '1 3'")
    picked = [_pick(challenge, item, what) for item in items]
    if len(set(picked)) != len(picked):
        raise _refuse(challenge, "a choice is given twice")
    return [choices[i] for i in picked]


def _reset(challenge: SecurityChallenge, parts: list[str]) -> list[str]:
    choices = challenge.choices or []
    n = len(choices)
    rule = f"pick a question, by its number (1 to {n}) or its text, then answer it: '2 the answer'"
    if len(parts) == 2:
        question, answer = parts
        index = _pick(challenge, question, "the question")
    elif len(parts) == 1:
        text = parts[0]
        folded = text.casefold().lstrip()
        by_text = [
            i
            for i, choice in enumerate(choices)
            if folded.startswith(choice.strip().casefold()) and text.lstrip()[len(choice.strip()) :].strip()
        ]
        numbered = _NUMBERED.fullmatch(text)
        if numbered is not None:
            number = int(numbered.group(1))
            if not 1 <= number <= n:
                raise _refuse(challenge, f"the question must be a number from 1 to {n}")
            if by_text and by_text != [number - 1]:
                raise _refuse(challenge, f"the question is unclear: {rule}")
            index, answer = number - 1, numbered.group(2)
        elif len(by_text) == 1:
            index = by_text[0]
            answer = text.lstrip()[len(choices[index].strip()) :]
        else:
            raise _refuse(challenge, rule if not by_text else f"the question is unclear: {rule}")
    else:
        raise _refuse(challenge, rule)
    answer = answer.strip().lstrip(",:").strip() if len(parts) == 1 else answer
    if not answer.strip():
        raise _refuse(challenge, f"the question needs an answer after it: {rule}")
    return [choices[index], answer]


def _text_or_call(challenge: SecurityChallenge, parts: list[str]) -> dict[str, list[str]]:
    choices = challenge.choices or []
    n = len(choices)
    several = f"type the number of a phone number, 1 to {n}, then Text or Call: '1 Text'"
    rule = "type Text or Call" if n == 1 else several
    if len(parts) == 1:
        text = parts[0].strip()
        head, _, last = text.rpartition(" ") if " " in text else ("", "", text)
        pick, method = head.strip().rstrip(",:").strip(), last
    elif len(parts) == 2:
        pick, method = parts
    else:
        raise _refuse(challenge, rule)
    chosen = _METHODS.get(method.strip().casefold())
    if chosen is None:
        raise _refuse(challenge, f"the answer ends with Text or Call: {rule}")
    if not pick.strip():
        if n != 1:
            raise _refuse(challenge, f"there are {n} phone numbers: {several}")
        return {choices[0]: [chosen]}
    return {choices[_pick(challenge, pick, "the phone number")]: [chosen]}


def typed_answer(challenge: SecurityChallenge, typed: str | Sequence[str]) -> dict[str, list[str]]:
    """The wire answer ``{key: [values]}`` to one challenge, from what a person typed.

    Give each challenge of a step its typed answer and send them together::

        answers = {}
        for c in step.challenges:
            answers.update(bf.typed_answer(c, input(c.prompt + " ")))
        step = step.answer(answers)

    What is read, by type (docs/answering.md has the table):

    - ``QuestionAndAnswer``: the text as typed (not blank); a security code: six digits (spaces
      between them are dropped);
    - the question reset (a ``QuestionAndAnswer`` with choices): the question's number (1 to n)
      or its text, then the answer: ``"2 Rex"``, ``"2: Rex"``, or ``["2", "Rex"]``;
    - ``ImageSelection``: the number of an image, 1 to 16 (sent as that choice's base64 text);
    - ``MultipleChoice``: a choice's number (1 to n) or its exact text, in any case;
    - ``MultipleChoiceMultipleAnswers``: numbers (``"1, 3"`` or ``"1 3"``), texts separated by
      commas, or a list of either;
    - ``TextOrCall``: ``"Text"`` or ``"Call"`` in any case, after the phone number's number (or
      text) when there are several: ``"2 Text"`` or ``["2", "Text"]``; keyed by that number;
    - ``WaitUntilEUAccept``: Enter (``""``), ``y``, ``yes``, ``verified`` or ``done`` once the
      end user has confirmed on the trusted device: ``["VERIFIED"]``;
    - any other type: the text(s) as typed.

    Raises :class:`bankfeed.InvalidAnswer` (a ``ValueError``) for anything out of range, unclear
    or malformed: the message names the prompt and the rule, never what was typed.
    """
    given: object = typed
    if isinstance(given, str):
        parts = [given]
    elif isinstance(given, Sequence) and not isinstance(given, (bytes, bytearray)):
        parts = list(given)
        wrong = next((part for part in parts if not isinstance(part, str)), None)
        if wrong is not None:
            raise TypeError(
                f"a typed answer is a string or a list of strings, not a list holding {type(wrong).__name__}"
            )
    else:
        raise TypeError(f"a typed answer is a string or a list of strings, not {type(given).__name__}")
    prompt = challenge.prompt
    kind = challenge.type
    if kind == "ImageSelection":
        text = _one(challenge, parts, "the image")
        index = _pick(challenge, text, "the image", list_choices=False)
        return {prompt: [(challenge.choices or [])[index]]}
    if kind == "MultipleChoice":
        text = _one(challenge, parts, "the answer")
        return {prompt: [(challenge.choices or [])[_pick(challenge, text, "the answer")]]}
    if kind == "MultipleChoiceMultipleAnswers":
        return {prompt: _multiple(challenge, parts)}
    if kind == "TextOrCall":
        return _text_or_call(challenge, parts)
    if kind == "WaitUntilEUAccept":
        text = _one(challenge, parts, "the confirmation")
        if text.strip().casefold() not in _CONFIRMED:
            raise _refuse(
                challenge, "once the end user has confirmed on the trusted device, press Enter or type y, yes or done"
            )
        return {prompt: ["VERIFIED"]}
    if kind == "QuestionAndAnswer" and challenge.choices is not None:
        return {prompt: _reset(challenge, parts)}
    if challenge.is_security_code:
        code = "".join(_one(challenge, parts, "the security code").split())
        if not (len(code) == 6 and code.isascii() and code.isdigit()):
            raise _refuse(challenge, "a security code is exactly six digits")
        return {prompt: [code]}
    if kind == "QuestionAndAnswer":
        text = _one(challenge, parts, "the answer")
        if not text.strip():
            raise _refuse(challenge, "a question takes a non-empty answer")
        return {prompt: [text]}
    if not parts or any(not part.strip() for part in parts):
        raise _refuse(challenge, "the answer must be one or more non-empty texts")
    return {prompt: parts}
