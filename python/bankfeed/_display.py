"""How each challenge is answered, said the same way in its ``repr`` and its notebook view
(``_repr_html_``): the prompt, the choices numbered for people (1 to n, as
:func:`bankfeed.typed_answer` reads them), the images of an ImageSelection as a numbered grid, and
the answer form of its type (docs/answering.md)::

    step                                    # in a notebook: each challenge and how to answer it
    c = step.challenges[0]
    step.answer(bf.typed_answer(c, "8"))    # the image numbered 8
"""

from __future__ import annotations

import base64
from html import escape
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # Annotations only: the core imports this module lazily, when a notebook asks for a view.
    from bankfeed._native import AsyncChallenge, Challenge, SecurityChallenge

__all__ = ["answer_form", "challenge_html", "security_challenge_html"]

_IMAGE_TYPES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF8", "image/gif"),
    (b"BM", "image/bmp"),
)


def _mime(image: bytes) -> str:
    for magic, mime in _IMAGE_TYPES:
        if image.startswith(magic):
            return mime
    if image[:4] == b"RIFF" and image[8:12] == b"WEBP":
        return "image/webp"
    return "application/octet-stream"


def _is_reset(challenge: SecurityChallenge) -> bool:
    """A QuestionAndAnswer with choices: pick a new question, then answer it (docs/protocol.md)."""
    return challenge.type == "QuestionAndAnswer" and challenge.choices is not None


def answer_form(challenge: SecurityChallenge) -> str:
    """One line: what the answer to ``challenge`` must be, its wire form and what a person types
    through :func:`bankfeed.typed_answer` (the rules of docs/protocol.md#challenges-and-answer-rules).
    Examples use the first choices, never an answer."""
    choices = challenge.choices or []
    n = len(choices)
    kind = challenge.type
    if kind == "ImageSelection":
        return (
            f"answer: the number of an image, 1 to {n}, through bf.typed_answer(c, '8'), "
            "which sends that image's base64 choice: {c.prompt: [c.choices[7]]}"
        )
    if kind == "MultipleChoice":
        first = repr(choices[0]) if choices else "'choice'"
        return (
            f"answer: one of the choices: {{c.prompt: [{first}]}}, "
            f"or its number, 1 to {n}, through bf.typed_answer(c, '1')"
        )
    if kind == "MultipleChoiceMultipleAnswers":
        some = ", ".join(repr(choice) for choice in choices[:2]) or "'choice'"
        return (
            f"answer: one or more of the choices, none twice: {{c.prompt: [{some}]}}, "
            f"or their numbers, 1 to {n}, through bf.typed_answer(c, '1, 2')"
        )
    if kind == "TextOrCall":
        phone = repr(choices[0]) if choices else "'phone number'"
        typed = "'Text'" if n == 1 else "'1 Text'"
        return (
            f"answer: keyed by the phone number, not the prompt: {{{phone}: ['Text']}} (or ['Call']), "
            f"or bf.typed_answer(c, {typed})"
        )
    if kind == "WaitUntilEUAccept":
        return (
            "answer: ['VERIFIED'] once confirmed on the trusted device: {c.prompt: ['VERIFIED']}, "
            "or bf.typed_answer(c, 'y')"
        )
    if _is_reset(challenge):
        return (
            "answer: [question, answer], a question of the choices then its answer: "
            "{c.prompt: [c.choices[0], 'the answer']}, "
            f"or bf.typed_answer(c, '1 the answer') (the question's number, 1 to {n}, then the answer)"
        )
    if challenge.is_security_code:
        return "answer: exactly six digits: {c.prompt: ['024680']}, or bf.typed_answer(c, '024680')"
    if kind == "QuestionAndAnswer":
        return "answer: one non-empty text: {c.prompt: ['the answer']}, or bf.typed_answer(c, 'the answer')"
    return "answer: one or more non-empty texts: {c.prompt: ['the answer']}, or bf.typed_answer(c, 'the answer')"


def _image_grid(images: list[bytes]) -> str:
    cells: list[str] = []
    for index, image in enumerate(images):
        uri = f"data:{_mime(image)};base64,{base64.b64encode(image).decode('ascii')}"
        # Numbered from 1, as a person reads and types it (bf.typed_answer(c, "8") is choices[7]).
        number = index + 1
        cells.append(
            '<figure style="margin:0;text-align:center">'
            f'<img src="{uri}" alt="image {number}" style="max-width:96px;max-height:96px">'
            f"<figcaption><b>{number}</b> <small><code>choices[{index}]</code></small></figcaption></figure>"
        )
    return (
        '<div style="display:grid;grid-template-columns:repeat(auto-fill,minmax(104px,1fr));gap:6px">'
        + "".join(cells)
        + "</div>"
    )


def security_challenge_html(challenge: SecurityChallenge) -> str:
    """One security challenge: its type and prompt, its images or its numbered choices, and the
    answer form of its type."""
    head = f"<b>{escape(challenge.type)}</b>: {escape(challenge.prompt)}"
    form = f'<div style="margin:2px 0"><code>{escape(answer_form(challenge))}</code></div>'
    images = challenge.images
    if images:
        return f"<div>{head}{form}{_image_grid(images)}</div>"
    if challenge.choices:
        items = "".join(f"<li>{escape(choice)}</li>" for choice in challenge.choices)
        return f"<div>{head}{form}<ol>{items}</ol></div>"
    return f"<div>{head}{form}</div>"


def _has_ipywidgets() -> bool:
    import importlib.util

    return importlib.util.find_spec("ipywidgets") is not None


def challenge_html(step: Challenge | AsyncChallenge) -> str:
    """Every challenge of a step, in the order to answer them, titled by the step's class, with
    the loop that answers them by typed answers (an ``AsyncChallenge``'s answer is awaited) and,
    with ipywidgets, the form to click."""
    parts = "".join(f"<li>{security_challenge_html(c)}</li>" for c in step.challenges)
    title = type(step).__name__
    call = "await step.answer" if title == "AsyncChallenge" else "step.answer"
    how = (
        f"answer all of these in one <code>{call}(answers)</code>: "
        "<code>answers = {}</code>, then for each <code>c</code> of <code>step.challenges</code> "
        "<code>answers.update(bf.typed_answer(c, typed))</code>"
    )
    form = (
        "; or click through <code>bf.ChallengeForm(step)</code>"
        if _has_ipywidgets()
        else "; <code>pip install 'bankfeed[notebook]'</code> gives a form to click: "
        "<code>bf.ChallengeForm(step)</code>"
    )
    return f"<div><b>{escape(title)}</b> <code>{escape(step.request_id)}</code>: {how}{form}<ol>{parts}</ol></div>"
