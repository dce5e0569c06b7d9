"""Notebook views (``_repr_html_``) of challenges: the prompts, the choices, and the images of an
ImageSelection challenge as a numbered grid, so a person can pick one and answer with its index::

    step                                   # in a notebook: each challenge, images as a grid
    c = step.challenges[0]
    step.answer({c.prompt: c.choices[3]})  # the image numbered 3
"""

from __future__ import annotations

import base64
from html import escape
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # Annotations only: the core imports this module lazily, when a notebook asks for a view.
    from bankfeed._native import AsyncChallenge, Challenge, SecurityChallenge

__all__ = ["challenge_html", "security_challenge_html"]

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


def _image_grid(images: list[bytes]) -> str:
    cells: list[str] = []
    for index, image in enumerate(images):
        uri = f"data:{_mime(image)};base64,{base64.b64encode(image).decode('ascii')}"
        cells.append(
            '<figure style="margin:0;text-align:center">'
            f'<img src="{uri}" alt="choice {index}" style="max-width:96px;max-height:96px">'
            f"<figcaption><code>choices[{index}]</code></figcaption></figure>"
        )
    return (
        '<div style="display:grid;grid-template-columns:repeat(auto-fill,minmax(104px,1fr));gap:6px">'
        + "".join(cells)
        + "</div>"
    )


def security_challenge_html(challenge: SecurityChallenge) -> str:
    """One security challenge: its type and prompt, then its images or its choices."""
    head = f"<b>{escape(challenge.type)}</b>: {escape(challenge.prompt)}"
    images = challenge.images
    if images:
        return f"<div>{head}{_image_grid(images)}</div>"
    if challenge.choices:
        items = "".join(
            f"<li><code>choices[{i}]</code> {escape(choice)}</li>" for i, choice in enumerate(challenge.choices)
        )
        return f"<div>{head}<ul>{items}</ul></div>"
    return f"<div>{head}</div>"


def challenge_html(step: Challenge | AsyncChallenge) -> str:
    """Every challenge of a step, in the order to answer them, titled by the step's class: an
    ``AsyncChallenge``'s answer is awaited."""
    parts = "".join(f"<li>{security_challenge_html(c)}</li>" for c in step.challenges)
    title = type(step).__name__
    call = "await challenge.answer" if title == "AsyncChallenge" else "challenge.answer"
    return (
        f"<div><b>{escape(title)}</b> <code>{escape(step.request_id)}</code>: answer all of these in one "
        f"<code>{call}({{prompt: answer}})</code><ol>{parts}</ol></div>"
    )
