"""The README's step-by-step loop, taken from README.md as it is written, answers every challenge
type of the sandbox's users with what a person types at its input() (docs/answering.md)."""

from __future__ import annotations

import builtins
import re
import textwrap
from pathlib import Path

import pytest
from typedhelpers import CHALLENGE_USERS, first_step, typed_for

import bankfeed as bf

README = Path(__file__).resolve().parents[3] / "README.md"


def readme_loop() -> str:
    """The `while isinstance(step, bf.Challenge):` loop of the README's short example, verbatim."""
    example = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)[0]
    found = re.search(r"^( *)while isinstance\(step, bf\.Challenge\):\n(?:\1 .*\n)+", example, re.MULTILINE)
    assert found is not None, "the README's short example has no step-by-step loop"
    loop = textwrap.dedent(found.group(0))
    assert "bf.typed_answer(c, input(" in loop
    return loop


@pytest.mark.parametrize("username", CHALLENGE_USERS)
def test_the_readme_loop_answers_every_challenge_type_by_typed_answers(
    sandbox: bf.Sandbox, username: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    asked: list[str] = []

    def person(prompt: str = "") -> str:
        asked.append(prompt)
        return typed_for(prompt)

    monkeypatch.setattr(builtins, "input", person)
    namespace = {"bf": bf, "step": first_step(sandbox.client(poll_interval=0.01), username)}
    exec(compile(readme_loop(), "README.md", "exec"), namespace)
    assert isinstance(namespace["step"], bf.Session)
    assert asked, "the loop asked nothing"
    # What it printed for each challenge says how to answer it.
    assert capsys.readouterr().out.count("answer: ") >= len(asked)


def test_the_old_loop_fails_where_the_readme_loop_passes(sandbox: bf.Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    # The loop the README had before typed answers, `{c.prompt: input(...)}`: an image's number is
    # not an answer, so it fails where the README's loop passes.
    monkeypatch.setattr(builtins, "input", typed_for)
    step = first_step(sandbox.client(poll_interval=0.01), "mfa_image")
    step = step.answer({c.prompt: input(c.prompt + " ") for c in step.challenges})  # the city
    with pytest.raises(bf.InvalidAnswer, match="the answer must be exactly one of the 16 images"):
        step.answer({c.prompt: input(c.prompt + " ") for c in step.challenges})  # "8"
