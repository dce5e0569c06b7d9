"""The notebook views of challenges as a browser draws them: each challenge with its answer form,
the choices numbered from 1, the 16 images as a grid numbered 1 to 16 whose 8th is the image
bf.typed_answer(c, "8") sends (docs/answering.md). Screenshots: target/screenshots/challenge-*.png."""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING

import pytest
from browserhelpers import screenshot
from typedhelpers import CHALLENGE_USERS, every_step

import bankfeed as bf

# Deselected by scripts/test --quick (CONTRIBUTING.md#the-quick-loop): a real Chromium starts.
pytestmark = pytest.mark.browser

if TYPE_CHECKING:
    from playwright.sync_api import Page


@pytest.mark.parametrize("username", [u for u in CHALLENGE_USERS if u.startswith("mfa_")])
def test_each_challenge_view_shows_its_answer_form(page: Page, sandbox: bf.Sandbox, username: str) -> None:
    html = "".join(f"<section>{step._repr_html_()}</section><hr>" for step in every_step(sandbox, username))
    page.set_content(f"<body style='font-family:sans-serif;font-size:13px'>{html}</body>")
    text = page.inner_text("body")
    assert "answer: " in text and "{prompt: answer}" not in text
    assert "answers.update(bf.typed_answer(c, typed))" in text
    shot = screenshot(page, f"challenge-{username}")
    assert shot.stat().st_size > 5000


def test_the_image_grid_is_numbered_as_typed_answer_reads_it(page: Page, sandbox: bf.Sandbox) -> None:
    step = every_step(sandbox, "mfa_image")[1]
    item = step.challenges[0]
    page.set_content(f"<body style='font-family:sans-serif'>{item._repr_html_()}</body>")
    figures = page.locator("figure")
    assert figures.count() == 16
    captions = [figures.nth(i).locator("figcaption b").inner_text() for i in range(16)]
    assert captions == [str(n) for n in range(1, 17)]
    # The image captioned 8 is the one bf.typed_answer(c, "8") sends.
    eighth = figures.nth(7).locator("img").get_attribute("src") or ""
    sent = bf.typed_answer(item, "8")[item.prompt][0]
    assert base64.b64decode(eighth.split(",", 1)[1]) == base64.b64decode(sent.split(",")[-1])
    # Every image is drawn (a broken one has no natural width).
    widths = page.eval_on_selector_all("img", "images => images.map(i => i.naturalWidth)")
    assert len(widths) == 16 and all(width > 0 for width in widths)
    screenshot(page, "challenge-image-grid")
