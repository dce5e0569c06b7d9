"""bf.ask_in_terminal in a real pseudo-terminal: a script logs each challenge user in with it, and
the test answers at its prompts as a person types; hidden answers are not echoed, refused
answers are asked again, Ctrl-D and Ctrl-C end the login cleanly, and every way out of the call
(Ctrl-C, its deadline, SIGTERM, SIGHUP) leaves the terminal as it was, read by the program alone
(docs/answering.md#in-a-terminal)."""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import sys
import termios
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
READ = re.compile(r"READ: .*\(echo \w+\)")
PROMPT_LINE = re.compile(r"^(" + "|".join(re.escape(p) for p in TYPED) + r")\r?$", re.MULTILINE)


class Terminal:
    """A child process on a pseudo-terminal, read and typed at as a person would."""

    def __init__(self, *args: str) -> None:
        pid, fd = pty.fork()
        if pid == 0:  # the child: the script, its stdin, stdout and /dev/tty the pty
            # As a terminal's shell starts it: a signal ignored here (SIGHUP under nohup) would
            # stay ignored across exec, and the tests of what the program does on it could not run.
            for signum in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT):
                signal.signal(signum, signal.SIG_DFL)
            os.execv(sys.executable, [sys.executable, str(SCRIPT), *args])
        self.pid, self.fd = pid, fd
        self.out = ""
        self.seen = 0
        self.status: int | None = None

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

    def echo_is_on(self) -> bool:
        """Whether the terminal echoes what is typed (its settings, read from the pty's master side,
        outlive the program)."""
        return bool(termios.tcgetattr(self.fd)[3] & termios.ECHO)

    def close_keeping_settings(self) -> int:
        """Waits for the child to end and reads all its output; the pty stays open, so that its
        settings can still be read. Returns the child's wait status."""
        if self.status is None:
            deadline = time.monotonic() + 30
            try:
                while True:
                    left = deadline - time.monotonic()
                    if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                        # Still waiting for input after a failed test: it will not get any.
                        os.kill(self.pid, signal.SIGKILL)
                        deadline = time.monotonic() + 30
                        continue
                    chunk = os.read(self.fd, 65536)
                    if not chunk:
                        break
                    self.out += chunk.decode("utf-8", "replace")
            except OSError:  # the child has gone and its pty is closed: all its output is read
                pass
            self.status = os.waitpid(self.pid, 0)[1]
        return self.status

    def close(self) -> int:
        status = self.close_keeping_settings()
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        return status

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


#: Where the handler is waiting for a person when the call ends: a hidden answer (echo off) or a
#: visible one.
WAITING = {
    "hidden": ("mfa_securid", re.compile(r"Code \(hidden\): $")),
    "visible": ("mfa_multiple_choice", re.compile(r"Number of your answer \(1 to 4\): $")),
}


@pytest.mark.parametrize("flavor", ["sync", "async"])
@pytest.mark.parametrize("waiting", ["hidden", "visible"])
def test_after_ctrl_c_the_program_goes_on_and_reads_the_next_line_itself(
    waiting: str, flavor: str, tmp_path: Path
) -> None:
    username, prompt = WAITING[waiting]
    terminal = Terminal(username, flavor, str(tmp_path), "go-on")
    try:
        terminal.read_until(prompt)
        terminal.key(b"\x03")
        assert terminal.read_until(ENDS).group(0) == "INTERRUPTED: echo on", terminal.out[-2000:]
        # Typed ahead, before the program asks: the handler's thread must not take it.
        terminal.type("my next line")
        read = terminal.read_until(READ, timeout=15).group(0)
    finally:
        status = terminal.close()
    # The program gets the line, and it was echoed as it was typed.
    assert read == "READ: 'my next line' (echo on)"
    assert "my next line\r\n" in terminal.out.split("INTERRUPTED: echo on", 1)[1]
    assert status == 0


@pytest.mark.parametrize("flavor", ["sync", "async"])
@pytest.mark.parametrize("waiting", ["hidden", "visible"])
def test_a_call_that_ends_at_its_deadline_leaves_the_terminal_to_the_program(
    waiting: str, flavor: str, tmp_path: Path
) -> None:
    username, prompt = WAITING[waiting]
    terminal = Terminal(username, flavor, str(tmp_path), "deadline")
    try:
        terminal.read_until(prompt)
        ended = terminal.read_until(re.compile(r"ENDED: \w+ \(echo \w+\)")).group(0)
        terminal.type("my next line")
        read = terminal.read_until(READ, timeout=15).group(0)
    finally:
        terminal.close()
    assert ended.endswith("(echo on)"), ended
    assert read == "READ: 'my next line' (echo on)"


@pytest.mark.parametrize("flavor", ["sync", "async"])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_sigterm_and_sighup_at_a_hidden_answer_put_the_echo_back(
    signum: signal.Signals, flavor: str, tmp_path: Path
) -> None:
    terminal = Terminal("mfa_securid", flavor, str(tmp_path))
    try:
        terminal.read_until(re.compile(r"Code \(hidden\): $"))
        assert not terminal.echo_is_on()  # getpass's: what is typed now is not shown
        os.kill(terminal.pid, signum)
        status = terminal.close_keeping_settings()
        echo = terminal.echo_is_on()
    finally:
        terminal.close()
    # The program ends as the signal says (a shell or supervisor sees it killed by the signal) ...
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signum, status
    # ... and the person's terminal echoes again.
    assert echo, "the terminal was left without echo"
