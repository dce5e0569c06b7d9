"""Type aliases of the public API, importable at run time (``bf.Step``, ``bf.ChallengeHandler``, ...).

Annotate your own challenge handlers and step loops with them::

    def ask(challenge: bf.Challenge) -> bf.Answers:
        return {prompt: input(prompt) for prompt in challenge.prompts}

    step: bf.Step = client.authorize(institution, username, password)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TypeAlias

from bankfeed._native import Challenge, Session

__all__ = ["Answer", "Answers", "ChallengeHandler", "Step"]

#: One answer: a string, or a list of strings (several choices, or ``[question, answer]``).
Answer: TypeAlias = str | Sequence[str]

#: The answers to a challenge step: prompt (or chosen choice of a TextOrCall) to its answer.
Answers: TypeAlias = Mapping[str, Answer]

#: What ``authorize``, ``authorize_saved`` and ``Challenge.answer`` return.
Step: TypeAlias = Session | Challenge

#: An ``on_challenge`` handler: takes the challenge step, returns its answers (see ``bf.answers``).
ChallengeHandler: TypeAlias = Callable[[Challenge], Answers]
