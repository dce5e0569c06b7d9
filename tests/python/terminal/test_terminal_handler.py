"""bf.ask_in_terminal in a real pseudo-terminal: a script logs each challenge user in with it, and
the test answers at its prompts as a person types; hidden answers are not echoed, refused
answers are asked again, Ctrl-D and Ctrl-C end the login cleanly (docs/answering.md#in-a-terminal)."""

from __future__ import annotations

import os
import pty
import re
import select
import sys
import time
from pathlib import Path

import pytest
from typedhelpers import CHALLENGE_USERS, TYPED

SCRIPT = Path(__file__).with_name("login_in_terminal.py")

#: Where the terminal asks in two parts, what a person types at each: (first, second).
TWO_PARTS = {
    "New security question 1": ("1", "Rex"),
    "New security question 2": ("2", "Civic"),
    "New security question 3": ("5", "Quebec City"),
    "How would you like to receive your security code?": ("1", "text"),
}
HIDDEN = ("Answer (hidden): ", "Code (hidden): ", "Your answer (hidden): ")
ASKS = re.compile(
    r"(Answer \(hidden\): |Code \(hidden\): |Your answer \(hidden\): |Numbers? of [^\n]*?\): "
    r"|Text or Call\? |Press Enter once you have confirmed on your trusted device: )$"
)
ENDS = re.compile(r"(LOGGED IN: \w+|ENDED: \w+|INTERRUPTED: echo \w+)")
PROMPT_LINE = re.compile(r"^(" + "|".join(re.escape(p) for p in TYPED) + r")\r?$", re.MULTILINE)


class Terminal:
    """A child process on a pseudo-terminal, read and typed at as a person would."""

    def __init__(self, *args: str) -> None:
        pid, fd = pty.fork()
        if pid == 0:  # the child: the script, its stdin, stdout and /dev/tty the pty
            os.execv(sys.executable, [sys.executable, str(SCRIPT), *args])
        self.pid, self.fd = pid, fd
        self.out = ""
        self.seen = 0

    def read_until(self, pattern: re.Pattern[str], timeout: float = 60) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while True:
            found = pattern.search(self.out, self.seen)
            if found is not None:
                self.seen = found.end()
                return found
            left = deadline - time.monotonic()
            assert left > 0, f"timed out waiting for {pattern.pattern!r}; the terminal shows:\n{self.out[-2000:]}"
            ready, _, _ = select.select([self.fd], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.fd, 65536)
                except OSError:  # the child has gone: its pty is closed
                    chunk = b""
                assert chunk, f"the script ended; the terminal shows:\n{self.out[-2000:]}"
                self.out += chunk.decode("utf-8", "replace")

    def type(self, text: str) -> None:
        os.write(self.fd, text.encode() + b"\r")  # Enter, as a terminal sends it

    def key(self, raw: bytes) -> None:
        os.write(self.fd, raw)

    def close(self) -> int:
        try:
            while chunk := os.read(self.fd, 65536):
                self.out += chunk.decode("utf-8", "replace")
        except OSError:  # the child has gone and its pty is closed: all its output is read
            pass
        os.close(self.fd)
        return os.waitpid(self.pid, 0)[1]

    def current_prompt(self) -> str:
        prompts = PROMPT_LINE.findall(self.out, 0, self.seen)
        assert prompts, "the terminal printed no challenge prompt before asking"
        return str(prompts[-1])


def answer(terminal: Terminal, ask: str) -> str:
    prompt = terminal.current_prompt()
    if ask.startswith(("Number of the question", "Number of the phone")):
        return TWO_PARTS[prompt][0]
    if ask.startswith(("Your answer", "Text or Call")):
        return TWO_PARTS[prompt][1]
    return TYPED[prompt]


def log_in(terminal: Terminal) -> tuple[str, list[tuple[str, int]]]:
    """Answers every prompt; returns how the script ended and the answers typed where hidden,
    each with where the terminal's output was when it was typed."""
    hidden: list[tuple[str, int]] = []
    while True:
        found = terminal.read_until(re.compile(ASKS.pattern + "|" + ENDS.pattern, re.MULTILINE))
        if ENDS.fullmatch(found.group(0)):
            return found.group(0), hidden
        typed = answer(terminal, found.group(0))
        if found.group(0) in HIDDEN:
            hidden.append((typed, len(terminal.out)))
        terminal.type(typed)


@pytest.mark.parametrize(
    ("username", "flavor"),
    [(user, "sync") for user in CHALLENGE_USERS]
    + [(user, "async") for user in ("mfa_image", "mfa_text_or_call", "mfa_trusted_device", "mfa_reset_questions")],
)
def test_a_person_logs_in_at_the_terminal(username: str, flavor: str, tmp_path: Path) -> None:
    terminal = Terminal(username, flavor, str(tmp_path))
    try:
        ended, hidden = log_in(terminal)
    finally:
        status = terminal.close()
    assert ended == "LOGGED IN: " + ("AsyncSession" if flavor == "async" else "Session"), terminal.out[-2000:]
    assert status == 0
    # What was typed at getpass is not echoed: the terminal does not show it once typed.
    assert hidden or username in ("mfa_trusted_device", "mfa_multiple_choice", "mfa_multiple_answers")
    for secret, at in hidden:
        shown = terminal.out[at:]
        assert secret not in shown and secret.replace(" ", "") not in shown, "a hidden answer echoed"
    if username == "mfa_image":
        files = sorted(path.name for path in tmp_path.iterdir())
        assert files == [f"{n:02d}.png" for n in range(1, 17)]
        for n in (1, 8, 16):
            assert f"{n:>2}  {tmp_path / f'{n:02d}.png'}" in terminal.out
        assert (tmp_path / "08.png").read_bytes().startswith(b"\x89PNG")


def test_choices_are_numbered_and_a_refused_answer_is_asked_again(tmp_path: Path) -> None:
    terminal = Terminal("mfa_multiple_choice", "sync", str(tmp_path))
    try:
        terminal.read_until(re.compile(r"Number of your answer \(1 to 4\): $"))
        assert " 1  Rue Sherbrooke" in terminal.out and " 4  None of the above" in terminal.out
        terminal.type("9")
        terminal.read_until(re.compile(r"Not taken: the answer must be a number from 1 to 4; the choices: .*Try again"))
        terminal.read_until(re.compile(r"Number of your answer \(1 to 4\): $"))
        terminal.type("2")
        ended, _ = log_in(terminal)
    finally:
        terminal.close()
    assert ended == "LOGGED IN: Session"
    # A visible answer is echoed: the check above would see a hidden one that was.
    assert "9\r\n" in terminal.out


def test_ctrl_d_ends_the_login(tmp_path: Path) -> None:
    terminal = Terminal("mfa_multiple_choice", "sync", str(tmp_path))
    try:
        terminal.read_until(re.compile(r"Number of your answer \(1 to 4\): $"))
        terminal.key(b"\x04")
        terminal.read_until(ENDS)
    finally:
        status = terminal.close()
    assert (
        "ENDED: EOFError (no answer to 'Which of these streets have you lived on?': the terminal's input ended)"
        in terminal.out
    )
    assert status == 0


def test_ctrl_c_at_a_hidden_answer_puts_the_echo_back(tmp_path: Path) -> None:
    terminal = Terminal("mfa_securid", "sync", str(tmp_path))
    try:
        terminal.read_until(re.compile(r"Code \(hidden\): $"))
        terminal.key(b"\x03")
        terminal.read_until(ENDS)
    finally:
        terminal.close()
    assert "INTERRUPTED: echo on" in terminal.out
