"""The browser axis: what people see in a real headless Chromium (Debian's, driven by
Playwright): the sandbox's imitation of the hosted connection widget, the LoginId caught from its
redirect, and the notebook views of challenges, tables and results (docs/notebooks.md)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from browserhelpers import chromium_path

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One headless Chromium per test module. Not per session: Playwright's sync API keeps an
    event loop running on the main thread while it is open, and every later test that calls
    ``asyncio.run`` (the async client's tests) would fail with "cannot be called from a running
    event loop"."""
    executable = chromium_path()
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        # --no-sandbox: CI runs as root, where Chromium's own sandbox refuses to start.
        chromium = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A fresh page (its own context: no cookies or storage shared between tests)."""
    context = browser.new_context(viewport={"width": 480, "height": 800})
    yield context.new_page()
    context.close()
