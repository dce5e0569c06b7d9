"""bf.TerminalHandler's options, without a terminal: its input, getpass and output replaced, the
images drawn inline only where the terminal says it can (iTerm2, kitty), and bf.ChallengeForm's
hint when ipywidgets is missing (docs/answering.md)."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from typedhelpers import first_step

import bankfeed as bf

INLINE = ("\x1b]1337;File=", "\x1b_G")


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def image_step(sandbox: bf.Sandbox) -> bf.Challenge:
    step = first_step(sandbox.client(poll_interval=0.01), "mfa_image")
    assert isinstance(step, bf.Challenge)
    step = step.answer({"What city were you born in?": "Montreal"})
    assert isinstance(step, bf.Challenge)
    return step


@pytest.mark.parametrize(
    ("env", "tty", "drawn"),
    [
        ({"TERM_PROGRAM": "iTerm.app"}, True, INLINE[0]),
        ({"TERM": "xterm-kitty"}, True, INLINE[1]),
        ({"TERM": "xterm-kitty"}, False, None),
        ({"TERM": "xterm-256color"}, True, None),
    ],
)
def test_images_are_drawn_inline_only_where_the_terminal_can(
    sandbox: bf.Sandbox,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    env: dict[str, str],
    tty: bool,
    drawn: str | None,
) -> None:
    for name in ("TERM_PROGRAM", "TERM", "KITTY_WINDOW_ID"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    out = Tty() if tty else io.StringIO()
    asked: list[str] = []

    def person(prompt: str) -> str:
        asked.append(prompt)
        return "8"

    handler = bf.TerminalHandler(image_dir=tmp_path, input=person, getpass=person, output=out)
    step = image_step(sandbox)
    answers = handler(step)
    assert answers == bf.typed_answer(step.challenges[0], "8")
    assert asked == ["Number of your image (1 to 16): "]
    shown = out.getvalue()
    assert str(tmp_path / "08.png") in shown
    if drawn is None:
        assert not any(marker in shown for marker in INLINE)
    else:
        assert shown.count(drawn) >= 16


def test_a_refused_answer_is_asked_again_with_the_rule(sandbox: bf.Sandbox, tmp_path: Path) -> None:
    typed = iter(["0", "sixteen", "16"])
    out = io.StringIO()
    handler = bf.TerminalHandler(image_dir=tmp_path, input=lambda _p: next(typed), output=out)
    step = image_step(sandbox)
    assert handler(step) == bf.typed_answer(step.challenges[0], "16")
    assert out.getvalue().count("Not taken: the image must be a number from 1 to 16. Try again.") == 2
    assert "sixteen" not in out.getvalue()
    assert repr(handler) == f"bankfeed.TerminalHandler(image_dir={str(tmp_path)!r})"
    assert repr(bf.ask_in_terminal) == "bankfeed.TerminalHandler(image_dir=None)"


def test_the_form_without_ipywidgets_says_what_to_install(sandbox: bf.Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    step = image_step(sandbox)
    monkeypatch.setitem(sys.modules, "ipywidgets", None)  # an import of it now fails
    with pytest.raises(ImportError, match=r"pip install 'bankfeed\[notebook\]'"):
        bf.ChallengeForm(step)
    monkeypatch.setattr("importlib.util.find_spec", lambda name, *_: None)
    html = step._repr_html_()
    assert "pip install &#x27;bankfeed[notebook]&#x27;" in html or "pip install 'bankfeed[notebook]'" in html
    assert "bf.typed_answer(c, &#x27;8&#x27;)" in html
