"""``bf.ConnectWidget``'s front-end in a real browser: its ESM loaded in a page with a fake
anywidget ``model``, showing a fake widget in its iframe that posts events as the service's
widget does (docs/connect.md#in-a-notebook). Its kernel side is tested in a real kernel
(tests/python/notebook/test_connect_widget_kernel.py)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import pytest
from browserhelpers import screenshot

# Deselected by scripts/test --quick (CONTRIBUTING.md#the-quick-loop): a real Chromium starts.
pytestmark = pytest.mark.browser

if TYPE_CHECKING:
    from playwright.sync_api import Page

LOGIN_ID = "8b35f6c8-e7b6-41d3-98f8-08d68b7f8d31"

#: The fake widget: posts APP_MOUNTED at once; its button posts REDIRECT as the last page does.
FAKE_WIDGET = """<!doctype html><html><body style="font-family:sans-serif">
<h2>Flinks Capital</h2><button id="finish">Finish</button><button id="odd">Odd</button>
<script>
parent.postMessage({step: "APP_MOUNTED"}, "*");
document.getElementById("odd").onclick = () => {
  // Spellings the kernel reads a LoginId from as well (Connection.from_event).
  const events = [
    {step: "SUBMIT", LOGINID: "%(login)s"},
    {step: "SUBMIT", URL: "http://localhost/x?institution=FlinksCapital&LoginId=%(login)s"},
    {step: "SUBMIT", Url: "http://localhost/x?login%%49d=%(login)s&accountId=a1"},
    {step: "SUBMIT", url: "loginid=%(login)s"},
    {step: "SUBMIT", url: "http://localhost/a=b?loginId=%(login)s#loginId=%(login)s"},
    {step: "SUBMIT", detail: {LoginId: "%(login)s", links: ["?loginid=%(login)s"]}},
  ];
  for (const event of events) parent.postMessage(event, "*");
};
document.getElementById("finish").onclick = () => {
  const url = "http://localhost/bankfeed-connected?loginId=%(login)s&institution=FlinksCapital&accountId=a1";
  parent.postMessage(JSON.stringify({step: "REDIRECT", url, loginId: "%(login)s", institution: "FlinksCapital",
                                     accountId: ["a1"]}), "*");
};
</script></body></html>""".replace("%(login)s", LOGIN_ID).replace("%%", "%")

#: A fake anywidget model: the traits, set() and save_changes() counted, as the front-end sees it.
HOST = """<!doctype html><html><body>
<div id="cell"></div>
<script type="module">
const state = {url: %(url)s, height: "240px", events: [], redirect: {}};
window.saved = 0;
window.model = {
  get: (name) => state[name],
  set: (name, value) => { state[name] = value; },
  save_changes: () => { window.saved += 1; },
  on: () => {}, off: () => {},
  state,
};
const esm = %(esm)s;
const module = await import(URL.createObjectURL(new Blob([esm], {type: "text/javascript"})));
window.cleanup = module.default.render({model: window.model, el: document.getElementById("cell")});
window.rendered = true;
</script></body></html>"""


def esm() -> str:
    widget = pytest.importorskip("bankfeed._widget")
    text: str = widget._ESM
    return text


def host(page: Page) -> None:
    url = "data:text/html," + quote(FAKE_WIDGET)
    page.set_content(HOST % {"url": json.dumps(url), "esm": json.dumps(esm())})
    page.wait_for_function("window.rendered === true")


def state(page: Page) -> Any:
    return page.evaluate("JSON.parse(JSON.stringify(window.model.state))")


def test_the_widget_is_shown_and_its_events_synced_the_login_id_masked(page: Page) -> None:
    host(page)
    frame = page.frame_locator("#bankfeed-connect-frame")
    frame.locator("#finish").wait_for()
    page.wait_for_function("window.model.state.events.length === 1")
    assert state(page)["events"] == [{"step": "APP_MOUNTED"}]
    screenshot(page, "connect-widget-open")

    frame.locator("#finish").click()
    page.wait_for_function("window.model.state.events.length === 2")
    synced = state(page)
    # The REDIRECT event reaches the kernel whole, once, to become .result ...
    assert synced["redirect"]["loginId"] == LOGIN_ID and synced["redirect"]["accountId"] == ["a1"]
    # ... while the event list, which a saved notebook keeps, masks the LoginId.
    assert synced["events"][1]["loginId"] == "***" and LOGIN_ID not in json.dumps(synced["events"])
    assert page.evaluate("window.saved") == 2
    # The iframe gives way to the outcome.
    assert page.locator("#bankfeed-connect-frame").count() == 0
    assert "Bank connected (FlinksCapital)" in (page.text_content("#bankfeed-connect-status") or "")
    screenshot(page, "connect-widget-connected")


def test_messages_from_anything_but_its_own_iframe_are_ignored(page: Page) -> None:
    host(page)
    page.wait_for_function("window.model.state.events.length === 1")
    page.evaluate(f'window.postMessage({{step: "REDIRECT", loginId: "{LOGIN_ID}"}}, "*")')
    page.evaluate("new Promise((resolve) => setTimeout(resolve, 200))")
    assert state(page)["redirect"] == {} and len(state(page)["events"]) == 1
    # Removed with its view: no listener is left behind.
    page.evaluate("window.cleanup()")


def test_every_spelling_of_the_login_id_the_kernel_reads_is_masked_in_the_events(page: Page) -> None:
    host(page)
    frame = page.frame_locator("#bankfeed-connect-frame")
    frame.locator("#odd").click()
    page.wait_for_function("window.model.state.events.length === 7")
    events = state(page)["events"]
    assert LOGIN_ID not in json.dumps(events), json.dumps(events)
    assert json.dumps(events).count("***") == 8
    # Only the LoginId goes: the rest of each event is kept as it came.
    assert events[2]["URL"] == "http://localhost/x?institution=FlinksCapital&LoginId=***"
    assert events[3]["Url"] == "http://localhost/x?login%49d=***&accountId=a1"
    assert events[6]["detail"] == {"LoginId": "***", "links": ["?loginid=***"]}
    assert state(page)["redirect"] == {}
