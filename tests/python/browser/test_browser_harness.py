"""The browser the other tests of this axis use starts, runs scripts and takes screenshots."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from browserhelpers import screenshot

# Deselected by scripts/test --quick (CONTRIBUTING.md#the-quick-loop): a real Chromium starts.
pytestmark = pytest.mark.browser

if TYPE_CHECKING:
    from playwright.sync_api import Page


def test_the_headless_browser_runs_scripts_and_takes_screenshots(page: Page) -> None:
    page.set_content("<h1 id=t>before</h1><script>document.getElementById('t').textContent = 'after'</script>")
    assert page.text_content("#t") == "after"
    assert screenshot(page, "harness").stat().st_size > 1000
