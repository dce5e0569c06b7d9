"""The notebook views of tables and results as a browser draws them (docs/notebooks.md): each
fits a notebook's width or scrolls inside its own box, its charts are drawn, and it reads on a
dark theme as on a light one. The screenshots (target/screenshots/views-*.png) are for a person
to look at."""

from __future__ import annotations

import functools
import json
from typing import TYPE_CHECKING, Any

import pytest
from browserhelpers import screenshot

import bankfeed as bf
import datahelpers as dh

# Deselected by scripts/test --quick (CONTRIBUTING.md#the-quick-loop): a real Chromium starts.
pytestmark = pytest.mark.browser

if TYPE_CHECKING:
    from playwright.sync_api import Page

#: A notebook's output area: its colours on a light and on a dark theme.
THEMES = {
    "light": "background:#fff;color:#111",
    "dark": "background:#1e1e1e;color:#ddd",
}


@functools.cache
def views() -> dict[str, str]:
    """Every view of ``greatday_nomfa``'s natural data, made once."""
    data = dh.fetched(None, None)
    session = data.client.authorize_cached(data.login_id)
    tier2 = dh.attribute_sandbox(0)
    attributes = tier2.client.attributes(tier2.login_id, package="all")
    combined = bf.combine([(data.login_id, data.investments), ("0b9a7e4c", bf.InvalidLogin("unknown login"))])
    report = bf.ExportReport(
        out="nightly/", written={"investments/accounts": 3, "investments/positions": 12}, failed=[],
        logins_written=1, logins_failed=0, logins_skipped=0, elapsed=0.4,
    )  # fmt: skip
    return {
        "table": data.detail.transactions._repr_html_(),
        "investments": data.investments._repr_html_(),
        "accounts": data.detail._repr_html_(),
        "accounts-100k": dh.fetched(0, 100_000).detail._repr_html_(),
        "statements": data.statements._repr_html_(),
        "attributes": attributes._repr_html_(),
        "session": session._repr_html_(),
        "combined": combined._repr_html_(),
        "report": report._repr_html_(),
    }


@pytest.mark.parametrize("theme", list(THEMES))
@pytest.mark.parametrize(
    "view",
    ["table", "investments", "accounts", "accounts-100k", "statements", "attributes", "session", "combined", "report"],
)
def test_a_view_draws_within_the_notebook_width(page: Page, view: str, theme: str) -> None:
    page.set_viewport_size({"width": 900, "height": 700})
    html = views()[view]
    page.set_content(f'<body style="{THEMES[theme]};font-family:sans-serif;margin:8px">{html}</body>')
    box = page.locator(".bankfeed-view").bounding_box()
    assert box is not None
    # The view never widens the page: a wide table scrolls inside the view's own box.
    assert box["width"] <= 900
    assert page.evaluate("document.documentElement.scrollWidth") <= 900
    for chart in page.locator(".bankfeed-view svg").all():
        size = chart.bounding_box()
        assert size is not None and size["width"] > 100 and size["height"] > 40
    assert screenshot(page, f"views-{view}-{theme}").stat().st_size > 2000


#: Values that would run in the page if a view did not escape them.
HOSTILE = ['<script>window.pwned = "script"</script>', "<img src=x onerror=\"window.pwned = 'img'\">"]


def test_hostile_values_are_shown_as_text_and_never_run(page: Page) -> None:
    data = dh.fetched(None, None)
    raw: Any = json.loads(json.dumps(data.investments.raw))
    raw["Accounts"][0]["Name"] = HOSTILE[0]
    raw["Accounts"][1]["Name"] = HOSTILE[1]
    inv = bf.Investments.from_json(json.dumps(raw))
    page.set_content(f"<body>{inv._repr_html_()}</body>")
    page.wait_for_timeout(200)
    assert page.evaluate("window.pwned === undefined")
    shown = page.locator(".bankfeed-view").inner_text()
    assert HOSTILE[0] in shown  # the table's cell, as the account has it
    labels = page.locator(".bankfeed-view svg title").all_text_contents()
    assert HOSTILE[0] in labels  # the bar's label in the chart
    screenshot(page, "views-hostile")
