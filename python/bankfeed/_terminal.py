"""A ready ``on_challenge`` handler for a terminal: :class:`TerminalHandler` and its default
instance :data:`ask_in_terminal` (docs/answering.md#in-a-terminal).

It asks each challenge of a step in turn: free-text answers and codes not echoed, as
``getpass`` reads them, choices listed by number and read as ``input`` reads them, the 16 images
of an ImageSelection written to numbered files whose paths it prints. What
:func:`bankfeed.typed_answer` refuses is asked again with the rule. It runs where every plain
handler runs, on a thread of its own (docs/architecture.md#challenge-handlers), so it serves a
``Client`` and an ``AsyncClient``; the lines themselves are read by ``bankfeed._tty``, so that
the end of the call, however it ends, stops the reading and puts the terminal back.
"""

from __future__ import annotations

import base64
import getpass as _getpass
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from bankfeed import _tty
from bankfeed._display import _mime
from bankfeed._typed_answer import typed_answer
from bankfeed.errors import InvalidAnswer

if TYPE_CHECKING:
    from bankfeed._native import AsyncChallenge, Challenge, SecurityChallenge

__all__ = ["TerminalHandler", "ask_in_terminal"]

_SUFFIX = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/bmp": ".bmp", "image/webp": ".webp"}


def _inline_protocol(stream: TextIO) -> str | None:
    """``"iterm2"`` or ``"kitty"`` when the terminal says it draws images inline, else None."""
    isatty = getattr(stream, "isatty", None)
    if not (callable(isatty) and isatty()):
        return None
    if os.environ.get("TERM_PROGRAM") == "iTerm.app":
        return "iterm2"
    if os.environ.get("TERM") == "xterm-kitty" or "KITTY_WINDOW_ID" in os.environ:
        return "kitty"
    return None


def _inline(protocol: str, image: bytes) -> str:
    data = base64.b64encode(image).decode("ascii")
    if protocol == "iterm2":
        return f"\x1b]1337;File=inline=1;size={len(image)};height=4:{data}\x07"
    # kitty's graphics protocol: PNG data (f=100), sent in chunks of 4096 characters.
    chunks = [data[i : i + 4096] for i in range(0, len(data), 4096)] or [""]
    out = []
    for number, chunk in enumerate(chunks):
        more = 1 if number < len(chunks) - 1 else 0
        head = f"a=T,f=100,r=4,m={more}" if number == 0 else f"m={more}"
        out.append(f"\x1b_G{head};{chunk}\x1b\\")
    return "".join(out)


class TerminalHandler:
    """An ``on_challenge`` handler that asks a person at a terminal.

    ``bf.ask_in_terminal`` is one with the defaults::

        session = client.login("FlinksCapital", "mfa_image", "Everyday", on_challenge=bf.ask_in_terminal)

    Free-text answers and security codes are read as ``getpass`` reads them (not echoed);
    choices are listed by number and read as ``input`` reads them, as are TextOrCall (the phone number's number, then
    Text or Call) and the trusted device (Enter once confirmed). The images of an ImageSelection
    are written to ``01.png`` ... ``16.png`` in ``image_dir`` (a new temporary directory when
    None) and their paths printed; in iTerm2 or kitty they are drawn inline too. An answer
    :func:`bankfeed.typed_answer` refuses is asked again, with the rule. End of input (Ctrl-D)
    raises ``EOFError``, which ends the login; Ctrl-C stops it as any call.

    The terminal is read only while the call waits for the answer: when the call ends first (Ctrl-C,
    its deadline, the client's ``close()``), the reading stops and the echo is back on before the
    call raises, so the program's next ``input()`` gets the next line. SIGTERM, SIGHUP and SIGQUIT
    (and SIGINT set to end the process) put the echo back before they end the process, when the
    call runs on the main thread, where Python runs signal handlers; SIGKILL cannot be caught.

    ``input`` and ``getpass`` are called with a prompt and return the typed line (by default,
    the line is read from the terminal as :func:`input` and :func:`getpass.getpass` read it, in a
    way the end of the call can stop; functions of your own are not stopped); ``output`` is
    where the questions are written (default ``sys.stdout``).
    """

    __slots__ = ("_getpass", "_input", "_output", "image_dir")

    def __init__(
        self,
        *,
        image_dir: str | os.PathLike[str] | None = None,
        input: Callable[[str], str] | None = None,
        getpass: Callable[[str], str] | None = None,
        output: TextIO | None = None,
    ) -> None:
        self.image_dir = None if image_dir is None else Path(image_dir)
        self._input = input
        self._getpass = getpass
        self._output = output

    def __repr__(self) -> str:
        return f"bankfeed.TerminalHandler(image_dir={None if self.image_dir is None else str(self.image_dir)!r})"

    def _guard_call(self) -> Callable[[], None] | None:
        """Run on the thread that waits for the call, before this handler starts
        (``bankfeed._handlers``): while a hidden answer may turn the echo off, signals that end
        the process put it back first. Returns the undo, run there when the call ends."""
        return _tty.guard_signals() if self._getpass is None else None

    @property
    def _out(self) -> TextIO:
        return self._output if self._output is not None else sys.stdout

    def _say(self, text: str) -> None:
        self._out.write(text + "\n")
        self._out.flush()

    def _ask(self, prompt: str) -> str:
        self._out.flush()
        if self._input is not None:
            return self._input(prompt)
        terminal = _tty.terminal_of_stdin()
        if terminal is not None:
            return _tty.read_line(terminal, prompt, hidden=False, stream=self._out)
        # Not a terminal (a pipe, a file): input() reads it, through sys.stdin's own buffer.
        if self._output is not None:
            self._out.write(prompt)
            self._out.flush()
            return input()
        return input(prompt)

    def _ask_hidden(self, prompt: str) -> str:
        self._out.flush()
        if self._getpass is not None:
            return self._getpass(prompt)
        try:
            return _tty.read_line(_tty.CONTROLLING, prompt, hidden=True, stream=self._output)
        except _tty.NoTerminal:
            # No terminal to hide the answer on: getpass warns, and reads stdin.
            return _getpass.getpass(prompt, stream=self._output)

    def _images(self, challenge: SecurityChallenge) -> None:
        images = challenge.images or []
        folder = self.image_dir if self.image_dir is not None else Path(tempfile.mkdtemp(prefix="bankfeed-images-"))
        folder.mkdir(parents=True, exist_ok=True)
        protocol = _inline_protocol(self._out)
        width = len(str(len(images)))
        for number, image in enumerate(images, 1):
            path = folder / f"{number:0{max(width, 2)}d}{_SUFFIX.get(_mime(image), '.img')}"
            path.write_bytes(image)
            line = f"  {number:>{width}}  {path}"
            if protocol is not None:
                line += "  " + _inline(protocol, image)
            self._say(line)

    def _choices(self, choices: list[str]) -> None:
        width = len(str(len(choices)))
        for number, choice in enumerate(choices, 1):
            self._say(f"  {number:>{width}}  {choice}")

    def _typed(self, challenge: SecurityChallenge) -> str | list[str]:
        """What the person types for ``challenge``, as :func:`typed_answer` reads it."""
        choices = challenge.choices or []
        n = len(choices)
        kind = challenge.type
        if kind == "ImageSelection":
            self._images(challenge)
            return self._ask(f"Number of your image (1 to {n}): ")
        if kind == "MultipleChoice":
            self._choices(choices)
            return self._ask(f"Number of your answer (1 to {n}): ")
        if kind == "MultipleChoiceMultipleAnswers":
            self._choices(choices)
            return self._ask(f"Numbers of your answers (1 to {n}, separated by commas): ")
        if kind == "TextOrCall":
            self._choices(choices)
            number = "1" if n == 1 else self._ask(f"Number of the phone to use (1 to {n}): ")
            return [number, self._ask("Text or Call? ")]
        if kind == "WaitUntilEUAccept":
            return self._ask("Press Enter once you have confirmed on your trusted device: ")
        if kind == "QuestionAndAnswer" and challenge.choices is not None:
            self._choices(choices)
            question = self._ask(f"Number of the question to answer (1 to {n}): ")
            return [question, self._ask_hidden("Your answer (hidden): ")]
        if challenge.is_security_code:
            return self._ask_hidden("Code (hidden): ")
        return self._ask_hidden("Answer (hidden): ")

    def answer_one(self, challenge: SecurityChallenge) -> dict[str, list[str]]:
        """Asks one challenge until :func:`bankfeed.typed_answer` takes the answer; returns it."""
        self._say(f"\n{challenge.prompt}")
        while True:
            try:
                typed = self._typed(challenge)
            except EOFError:
                # Ctrl-D: the person gives no answer, and the login ends with this error.
                raise EOFError(f"no answer to {challenge.prompt!r}: the terminal's input ended") from None
            try:
                return typed_answer(challenge, typed)
            except InvalidAnswer as refused:
                self._say(f"  Not taken: {refused.rule}. Try again.")

    def __call__(self, step: Challenge | AsyncChallenge) -> dict[str, list[str]]:
        """The answers to every challenge of ``step``, asked in turn."""
        answers: dict[str, list[str]] = {}
        for challenge in step.challenges:
            answers.update(self.answer_one(challenge))
        return answers


#: The terminal handler with its defaults: ``client.login(..., on_challenge=bf.ask_in_terminal)``.
ask_in_terminal = TerminalHandler()
