"""A real headless browser for the tests of what people see: Debian's ``chromium`` driven by
Playwright (no browser is downloaded: Playwright is pointed at the machine's executable).

``scripts/test`` installs both. Where chromium is missing the browser tests are skipped, except
under CI (``CI=true``), where a missing browser is a failure: those tests must run there.

Screenshots go to ``target/screenshots/<name>.png``, for a person to look at while building a
page; a test may also assert on them (their size, that they are not blank).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Page

SCREENSHOTS = Path(__file__).resolve().parents[2] / "target" / "screenshots"


def chromium_path() -> str:
    """The chromium executable, or a skip (a failure under CI) naming what to install."""
    found = os.environ.get("BANKFEED_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    message = "no chromium on PATH: install Debian's chromium package (scripts/test does)"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def screenshot(page: Page, name: str) -> Path:
    """Saves the whole page as ``target/screenshots/<name>.png`` and returns the path."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
