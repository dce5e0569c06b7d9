"""Canned challenge answers: :func:`answers` turns a mapping into an ``on_challenge`` handler."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    # Annotations only: the handler reads a Challenge's attributes and needs no import at run time.
    from bankfeed._native import AsyncChallenge, Challenge

__all__ = ["CannedAnswers", "answers"]

#: One canned answer: a string, or several strings (the choices of a multiple-answers challenge).
Answer: TypeAlias = str | Iterable[str]

_TEXT_OR_CALL = "TextOrCall"


def _as_list(key: str, value: object) -> tuple[str, ...]:
    """One answer as a tuple of strings; the error names the key, never the value.

    ``value`` is checked at run time whatever its annotation says: untyped callers pass anything.
    """
    if isinstance(value, str):
        return (value,)
    # Only the type of what came is named: the value is an answer, a secret.
    if isinstance(value, (bytes, bytearray)) or not isinstance(value, Iterable):
        raise TypeError(f"the answer to {key!r} must be a string or a list of strings, not {type(value).__name__}")
    items = tuple(value)
    wrong = next((item for item in items if not isinstance(item, str)), None)
    if wrong is not None:
        raise TypeError(
            f"the answer to {key!r} must be a string or a list of strings, not a list holding {type(wrong).__name__}"
        )
    return items


class CannedAnswers:
    """A challenge handler that answers from a fixed mapping: what :func:`answers` returns.

    Calling it with a :class:`bankfeed.Challenge` or a :class:`bankfeed.AsyncChallenge` returns
    ``{prompt: [answer, ...]}`` for every challenge of the step it has an answer for, so one
    handler serves ``Client`` and ``AsyncClient`` alike; annotate it as ``bf.CannedAnswers``
    (``bf.ChallengeHandler`` names the sync client's handlers only). Its ``repr`` lists the
    prompts, never the answers.
    """

    __slots__ = ("_answers", "_folded")

    def __init__(self, mapping: Mapping[str, Answer] | Iterable[tuple[str, Answer]]) -> None:
        # Read as objects: the types are checked below, for callers without a type checker.
        given: object = mapping
        takes = "answers takes a mapping of prompt to answer, or (prompt, answer) pairs"
        if isinstance(given, (str, bytes)) or not isinstance(given, Iterable):
            raise TypeError(f"{takes}, not {type(given).__name__}")
        pairs: Iterable[object] = given.items() if isinstance(given, Mapping) else given
        table: dict[str, tuple[str, ...]] = {}
        for pair in pairs:
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                # Named by shape only: a pair holds an answer.
                kind = type(pair).__name__
                shape = f"a {kind} of {len(pair)} items" if isinstance(pair, (tuple, list)) else kind
                raise TypeError(f"{takes}; got {shape} among the pairs")
            key, value = pair
            if not isinstance(key, str):
                raise TypeError("answers are keyed by prompt: every key must be a string")
            table[key] = _as_list(key, value)
        folded: dict[str, str] = {}
        for key in table:
            # The first key wins when two differ only by case.
            folded.setdefault(key.strip().casefold(), key)
        self._answers = table
        self._folded = folded

    @property
    def prompts(self) -> list[str]:
        """The keys this handler knows (prompts, or TextOrCall choices), in the given order."""
        return list(self._answers)

    def _lookup(self, prompt: str) -> tuple[str, ...] | None:
        if prompt in self._answers:
            return self._answers[prompt]
        key = self._folded.get(prompt.strip().casefold())
        return None if key is None else self._answers[key]

    def __call__(self, challenge: Challenge | AsyncChallenge) -> dict[str, list[str]]:
        """The answers to the challenges of ``challenge`` this handler knows, keyed as the server wants."""
        result: dict[str, list[str]] = {}
        for item in challenge.challenges:
            if item.type == _TEXT_OR_CALL:
                # Keyed by the chosen choice, not the prompt: the first choice with an answer wins.
                for choice in item.choices or ():
                    if choice in self._answers:
                        result[choice] = list(self._answers[choice])
                        break
                continue
            found = self._lookup(item.prompt)
            if found is not None:
                # The server wants the prompt verbatim, whatever the case of the canned key.
                result[item.prompt] = list(found)
        return result

    def __repr__(self) -> str:
        return f"bankfeed.answers(prompts={self.prompts!r})"

    def __len__(self) -> int:
        return len(self._answers)


def answers(mapping: Mapping[str, Answer] | Iterable[tuple[str, Answer]]) -> CannedAnswers:
    """A challenge handler built from canned answers, for ``client.login(..., on_challenge=...)``.

    ``mapping`` maps a prompt to its answer: a string, or a list of strings (several choices of a
    ``MultipleChoiceMultipleAnswers`` challenge; ``[question, answer]`` for a new-question challenge).
    For each challenge of a step the prompt is looked up exactly first, then case-insensitively;
    the answer is always sent under the server's exact prompt. A ``TextOrCall`` challenge is
    answered by a key equal to one of its ``choices`` (the phone number), passed through as is.
    Prompts without a canned answer are left out, so the call then fails with
    :class:`bankfeed.InvalidAnswer` naming the prompt, before anything is sent.

    The handler's ``repr`` shows the prompts it knows, never the answers.

    Example::

        import bankfeed as bf

        handler = bf.answers({
            "What city were you born in?": "Montreal",
            "what is the best country on earth?": "Canada",     # case does not matter
            "What shape do people like most?": ["Triangle"],
            "(514) 555-0101": "Text",                           # a TextOrCall choice
        })
        session = client.login("FlinksCapital", "Greatday", "Everyday", on_challenge=handler)
        print(handler)   # bankfeed.answers(prompts=['What city were you born in?', ...])

    The handler is a :class:`CannedAnswers`, which an ``AsyncClient`` takes as well.
    """
    return CannedAnswers(mapping)
