"""A form to answer a live login's challenges in Jupyter: :class:`ChallengeForm`
(docs/answering.md#in-a-notebook). ipywidgets (the ``notebook`` extra) is imported only when a
form is made.

The kernel delivers widget messages (a click, a changed value) only between cells, so the form
never waits inside a cell: a click sends the answers off the kernel's message thread (a thread
for a ``Challenge``, a task of the running loop for an ``AsyncChallenge``), and what comes back
(a new round, the session, an error) redraws the form. The session is then in ``form.session``
for the next cell, and handed to ``on_session``.

Answers are secrets, and a widget's value is synced state, which a saved notebook ("save widget
state", an HTML export) keeps: every answer widget is put back as it was drawn as soon as Answer
reads it, and the widgets of a round are closed (dropped from the kernel's and the page's
widget state) once the form has drawn the next one (docs/notebooks.md#what-a-view-never-shows).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from html import escape
from typing import TYPE_CHECKING, Any

from bankfeed._display import _is_reset, _mime
from bankfeed._typed_answer import typed_answer
from bankfeed.errors import BankfeedError, InvalidAnswer

if TYPE_CHECKING:
    from bankfeed._native import AsyncChallenge, AsyncSession, Challenge, SecurityChallenge, Session

__all__ = ["ChallengeForm"]


def _widgets() -> Any:
    try:
        import ipywidgets
    except ImportError as missing:
        raise ImportError(
            "bf.ChallengeForm needs ipywidgets: pip install 'bankfeed[notebook]' "
            "(without it, show the step itself: its view says how to answer each challenge)"
        ) from missing
    return ipywidgets


def _what_to_do(challenge: SecurityChallenge) -> str:
    """What the person at the form does for ``challenge``, in plain words: the form is for the
    person who answers, never code (the wire form is in the step's own view, for developers)."""
    kind = challenge.type
    count = len(challenge.choices or [])
    if kind == "ImageSelection":
        return f"Click your image (numbered 1 to {count}), then Answer."
    if kind == "MultipleChoice":
        return "Pick one answer, then Answer."
    if kind == "MultipleChoiceMultipleAnswers":
        return "Tick every answer that applies, then Answer."
    if kind == "TextOrCall":
        return "Pick the phone number to reach you at, then Text or Call, then Answer."
    if kind == "WaitUntilEUAccept":
        return "Confirm this sign-in on your trusted device first."
    if _is_reset(challenge):
        return "Choose a question, then type its answer."
    if challenge.is_security_code:
        return "Type the code you were given (six digits)."
    return "Type your answer (it stays hidden)."


class _Field:
    """The widgets of one challenge, and what a person typed through them (as typed_answer reads)."""

    def __init__(self, w: Any, challenge: SecurityChallenge) -> None:
        self.challenge = challenge
        choices = challenge.choices or []
        numbered = [(f"{n}. {choice}", str(n)) for n, choice in enumerate(choices, 1)]
        kind = challenge.type
        #: The widgets a person sets, by role: "text", "answer", "choice", "checks", "images",
        #: "phone", "method", "question". Tests set them as a person would.
        self.parts: dict[str, Any] = {}
        #: What an answer widget holds as drawn, by role: what ``clear`` puts back.
        self._drawn: dict[str, Any] = {}
        shown: list[Any] = []
        if kind == "ImageSelection":
            cells = []
            buttons = []
            for n, image in enumerate(challenge.images or [], 1):
                fmt = _mime(image).partition("/")[2] or "png"
                picture = w.Image(value=image, format=fmt, layout=w.Layout(width="96px", height="96px"))
                button = w.ToggleButton(description=str(n), value=False, layout=w.Layout(width="96px"))
                button.observe(self._only_one, names="value")
                buttons.append(button)
                cells.append(w.VBox([picture, button]))
            self.parts["images"] = buttons
            shown.append(w.GridBox(cells, layout=w.Layout(grid_template_columns="repeat(8, 104px)")))
        elif kind == "MultipleChoice":
            self.parts["choice"] = w.RadioButtons(options=numbered, value=None)
            shown.append(self.parts["choice"])
        elif kind == "MultipleChoiceMultipleAnswers":
            self.parts["checks"] = [w.Checkbox(value=False, description=label, indent=False) for label, _ in numbered]
            shown.extend(self.parts["checks"])
        elif kind == "TextOrCall":
            self.parts["phone"] = w.RadioButtons(options=numbered, value="1" if len(choices) == 1 else None)
            self.parts["method"] = w.ToggleButtons(options=["Text", "Call"], value=None)
            shown.extend([self.parts["phone"], self.parts["method"]])
        elif kind == "WaitUntilEUAccept":
            shown.append(w.HTML("Confirm on the trusted device, then press the button below."))
        elif kind == "QuestionAndAnswer" and challenge.choices is not None:
            self.parts["question"] = w.Dropdown(options=numbered, value=None, description="Question")
            self.parts["answer"] = w.Password(description="Answer", placeholder="hidden")
            shown.extend([self.parts["question"], self.parts["answer"]])
        else:
            # Answers are secrets: a Password widget does not show them (nor does its view).
            placeholder = "six digits" if challenge.is_security_code else "hidden"
            self.parts["text"] = w.Password(placeholder=placeholder)
            shown.append(self.parts["text"])
        head = w.HTML(f"<b>{escape(challenge.prompt)}</b><br><small>{escape(_what_to_do(challenge))}</small>")
        self.box = w.VBox([head, *shown])
        self._drawn = {role: self._values(role) for role in self.parts}

    def _values(self, role: str) -> Any:
        part = self.parts[role]
        return [one.value for one in part] if isinstance(part, list) else part.value

    def clear(self) -> None:
        """Puts every answer widget back as it was drawn: what was typed or picked leaves the
        synced state."""
        for role, drawn in self._drawn.items():
            part = self.parts[role]
            if isinstance(part, list):
                for one, value in zip(part, drawn, strict=True):
                    one.value = value
            else:
                part.value = drawn

    def close(self) -> None:
        """Closes every widget of this challenge: none stays in the widget state."""
        boxes = [self.box]
        while boxes:
            widget = boxes.pop()
            boxes.extend(getattr(widget, "children", ()))
            widget.close()

    def _only_one(self, change: dict[str, Any]) -> None:
        if change["new"]:
            for button in self.parts["images"]:
                if button is not change["owner"] and button.value:
                    button.value = False

    def typed(self) -> str | list[str]:
        parts = self.parts
        if "images" in parts:
            return next((b.description for b in parts["images"] if b.value), "")
        if "choice" in parts:
            return parts["choice"].value or ""
        if "checks" in parts:
            return [str(n) for n, box in enumerate(parts["checks"], 1) if box.value]
        if "phone" in parts:
            return [parts["phone"].value or "", parts["method"].value or ""]
        if "question" in parts:
            return [parts["question"].value or "", parts["answer"].value]
        if "text" in parts:
            return str(parts["text"].value)
        return ""


class ChallengeForm:
    """An interactive form that walks a live login through its challenges in Jupyter.

    ::

        step = client.authorize("FlinksCapital", "mfa_image", "Everyday")
        form = bf.ChallengeForm(step, on_session=lambda s: print("connected"))
        form          # the last line of a cell shows it; click, then Answer; "connected" prints under it
        # a later cell, once the form says so:
        session = form.session

    Each challenge gets the widgets of its type: the 16 images as a grid of numbered toggle
    buttons, choices as radio buttons (one answer) or checkboxes (several), free-text answers
    and codes in password fields, the question reset as a question picker and an answer,
    TextOrCall as the phone number then Text or Call, and the trusted device as a confirm
    button. Answer sends every answer through :func:`bankfeed.typed_answer` and
    ``step.answer`` off the kernel's message thread (a thread for a :class:`bankfeed.Challenge`,
    a task of the running loop for a :class:`bankfeed.AsyncChallenge`), so the cell never
    blocks; a new round redraws the form. When the session opens, ``form.session`` holds it and
    ``on_session(session)`` is called inside ``with form.output:``, an ipywidgets ``Output`` shown
    at the form's bottom, so what it prints shows in the cell that made the form. Each challenge
    says in plain words what to do (no code: the form is for the person answering). An error (a
    refused answer, the server's :class:`bankfeed.InvalidSecurityResponse`, ...) is shown in the
    form and kept in ``form.error``; when the challenge is still open the form asks it again.

    No answer stays in the widget state a saved notebook keeps: Answer puts every field back as
    it was drawn as soon as it has read it (also when an answer is refused, which is then given
    again), and the widgets of a round are closed once the next round, or the outcome, is drawn.

    Needs ipywidgets (``pip install 'bankfeed[notebook]'``); without it, a step's own view says
    how to answer each challenge.
    """

    def __init__(
        self,
        step: Challenge | AsyncChallenge,
        *,
        on_session: Callable[[Session | AsyncSession], object] | None = None,
    ) -> None:
        self._w = _widgets()
        w = self._w
        #: The challenge being answered (the latest round).
        self.step: Challenge | AsyncChallenge | None = step
        #: The session, once the login is through; None until then.
        self.session: Session | AsyncSession | None = None
        #: The last error, or None; shown in the form.
        self.error: BaseException | None = None
        #: The widgets of each challenge of the current round.
        self.fields: list[_Field] = []
        self._on_session = on_session
        self._task: asyncio.Future[Any] | None = None
        self.submit = w.Button(description="Answer", button_style="primary", icon="check")
        self.submit.on_click(self._clicked)
        self.status = w.HTML()
        #: Where ``on_session`` prints: shown at the bottom of the form, in the cell that made it.
        self.output = w.Output()
        self.widget = w.VBox([])
        self._render(step)

    def __repr__(self) -> str:
        state = "open" if self.session is not None else "failed" if self.step is None else "waiting for answers"
        return f"bankfeed.ChallengeForm({state})"

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    def _say(self, html: str, *, error: bool = False) -> None:
        color = "#b00020" if error else "#1b5e20"
        self.status.value = f'<div style="color:{color}">{html}</div>' if html else ""

    def _render(self, step: Challenge | AsyncChallenge | None) -> None:
        """Draws ``step`` (None: the login is over), closes the widgets of the round before, then
        makes ``step`` ``self.step``: a cell that waits for the step to change finds its widgets
        drawn and the old ones gone."""
        finished = self.fields
        if step is None:
            self.fields = []
            self.widget.children = [self.status, self.output]
        else:
            self.fields = [_Field(self._w, c) for c in step.challenges]
            trusted = all(c.type == "WaitUntilEUAccept" for c in step.challenges)
            self.submit.description = "Confirmed on the trusted device" if trusted else "Answer"
            self.submit.disabled = False
            self.widget.children = [*(field.box for field in self.fields), self.submit, self.status, self.output]
        for field in finished:
            field.close()
        self.step = step

    def _clicked(self, _button: object = None) -> None:
        step = self.step
        if step is None or self.submit.disabled:
            return
        # Read, then cleared at once, whatever happens next: the answers leave the widget state.
        typed = [(field.challenge, field.typed()) for field in self.fields]
        for field in self.fields:
            field.clear()
        answers: dict[str, list[str]] = {}
        try:
            for challenge, value in typed:
                answers.update(typed_answer(challenge, value))
        except InvalidAnswer as refused:
            self.error = refused
            self._say(f"Not sent: {escape(str(refused))}. Give the answers again, then Answer.", error=True)
            return
        if type(step).__name__ == "AsyncChallenge":
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                # The kernel runs cells and widget messages on its loop: none means no kernel.
                self.error = RuntimeError("an AsyncChallenge is answered on a running event loop, and none is running")
                self._say("Not sent: no event loop is running here to answer an AsyncChallenge.", error=True)
                return
            self.error = None
            self.submit.disabled = True
            self._say("Sending the answers…")
            self._task = loop.create_task(self._send_async(step, answers))
        else:
            self.error = None
            self.submit.disabled = True
            self._say("Sending the answers…")
            threading.Thread(
                target=self._send, args=(step, answers), name="bankfeed ChallengeForm", daemon=True
            ).start()

    def _send(self, step: Any, answers: dict[str, list[str]]) -> None:
        try:
            result = step.answer(answers)
        except BaseException as error:  # shown in the form: nothing else waits for it
            self._failed(error)
        else:
            self._next(result)

    async def _send_async(self, step: Any, answers: dict[str, list[str]]) -> None:
        try:
            result = await step.answer(answers)
        except BaseException as error:  # as above; a cancellation is shown too, then raised
            self._failed(error)
            if isinstance(error, asyncio.CancelledError):
                raise
        else:
            self._next(result)

    def _next(self, result: Any) -> None:
        if hasattr(result, "challenges"):
            self._say("The bank asks again: answer these.")
            self._render(result)
            return
        self._say("Connected: the session is in <code>form.session</code>.")
        self._render(None)
        if self._on_session is not None:
            # Its prints go to the form's own output: a callback's output otherwise goes to the
            # kernel's log, not to the cell (docs/answering.md#in-a-notebook). Its failure is caught
            # inside, since the output swallows what leaves it in a kernel.
            with self.output:
                try:
                    self._on_session(result)
                except Exception as error:  # the callback's own failure, shown where it happened
                    self.error = error
                    self._say(f"on_session raised {escape(type(error).__name__)}: {escape(str(error))}", error=True)
        # Last: a cell that waits for the session finds the form (and the callback) done.
        self.session = result

    def _failed(self, error: BaseException) -> None:
        still_open = getattr(error, "challenge", None)
        name = escape(type(error).__name__)
        # Exceptions of bankfeed never carry an answer; another's text is not shown.
        text = escape(str(error)) if isinstance(error, BankfeedError) else ""
        if still_open is not None:
            self._say(f"{name}: {text}", error=True)
            self._render(still_open)
        else:
            self._say(f"{name}: {text}. The login has ended: start a new one.", error=True)
            self._render(None)
        # Last, as above: the error is set once the form shows it.
        self.error = error
