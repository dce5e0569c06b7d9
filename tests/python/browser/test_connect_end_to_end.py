"""``client.connect`` against the sandbox's own widget pages, in a real headless Chromium, as a new
user meets it (docs/connect.md#from-a-script, docs/sandbox.md#the-hosted-widget): the URL the
client builds is opened, a person consents, picks the test bank, signs in, answers its challenges
(the image grid included) and picks accounts; the loopback catcher gets the redirect, and the
LoginId it returns opens a cached session whose accounts are the ones picked. The same with an
``AsyncClient``, and ``bf.ConnectWidget``'s front-end showing the sandbox's pages in its iframe.

``client.connect`` waits on a thread of its own: the browser is driven from this one, the one
Playwright's sync API belongs to.
"""

from __future__ import annotations

import asyncio
import json
import queue
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import pytest
from browserhelpers import screenshot
from widgethelpers import answer_round, in_background, sign_in, user_named

import bankfeed as bf

# Deselected by scripts/test --quick (CONTRIBUTING.md#the-quick-loop): a real Chromium starts.
pytestmark = pytest.mark.browser

if TYPE_CHECKING:
    from playwright.sync_api import Frame, Page


@pytest.fixture(scope="module")
def sb() -> Iterator[bf.Sandbox]:
    with bf.Sandbox() as sandbox:
        yield sandbox


def walk(where: Page | Frame, sb: bf.Sandbox, username: str) -> None:
    """What the person does: signs in as ``username`` and answers every round from the user's
    documented answers, until the flow leaves the challenges."""
    user = user_named(sb, username)
    sign_in(where, username)
    rounds = 0
    while True:
        where.wait_for_selector("#mfa-page, #account-page, #connected-page, #error-page", state="attached")
        if not where.query_selector("#mfa-page"):
            return
        rounds += 1
        assert rounds < 5, "the flow keeps asking"
        answer_round(where, user)


def test_client_connect_walks_the_sandbox_widget_to_a_cached_session(page: Page, sb: bf.Sandbox) -> None:
    client = sb.client(poll_interval=0.05)
    urls, result = in_background(
        lambda on_url: client.connect(
            on_url=on_url,
            demo=True,
            account_selector=True,
            account_selector_multiple=True,
            tag="customer-42",
            timeout=60,
        )
    )
    url = urls.get(timeout=10)
    # What the person is shown never holds the token; what the browser opens does.
    assert "authorizeToken=***" in str(url) and url.reveal().startswith(sb.widget_url)
    page.goto(url.reveal())
    page.click("#consent-accept")
    page.click("#institution-FlinksCapital")
    walk(page, sb, "Greatday")
    page.wait_for_selector("#account-page")
    boxes = page.query_selector_all("#account-list input")
    assert len(boxes) >= 2
    picked = [box.get_attribute("value") for box in boxes[:2]]
    for box in boxes[:2]:
        box.check()
    screenshot(page, "connect-sandbox-accounts")
    page.click("#account-submit")
    page.wait_for_selector("#connected")
    assert "You can close this tab" in (page.text_content("body") or "")
    screenshot(page, "connect-sandbox-close-tab")

    connection = result()
    assert (connection.institution, connection.tag, connection.source) == ("FlinksCapital", "customer-42", "redirect")
    assert connection.account_ids == picked
    assert connection.login_id not in repr(connection), "the LoginId is a secret in a repr"
    session = client.authorize_cached(connection.login_id)
    assert session.login_id == connection.login_id
    accounts = session.accounts_detail().accounts.column("account_id")
    assert set(picked) <= set(accounts), "the accounts picked are the login's"


def test_the_browser_opened_at_the_launch_page_lands_on_the_widget(
    monkeypatch: pytest.MonkeyPatch, page: Page, sb: bf.Sandbox
) -> None:
    # What webbrowser.open is given (the launch page, no secret in it) is what the person's
    # browser opens; the launch page sends it on to the widget.
    client = sb.client(poll_interval=0.05)
    opened: queue.Queue[str] = queue.Queue()

    def open_tab(url: str) -> bool:
        opened.put(url)
        return True

    monkeypatch.setattr("webbrowser.open", open_tab)
    _, result = in_background(
        lambda on_url: client.connect(consent=False, institution="FlinksCapital", account_selector=True, timeout=60)
    )
    launch = opened.get(timeout=10)
    assert "authorizeToken" not in launch and "redirectUrl" not in launch
    page.goto(launch)
    assert page.url.startswith(sb.widget_url) and "authorizeToken=" in page.url
    walk(page, sb, "Greatday")
    page.wait_for_selector("#account-page")
    page.query_selector_all("#account-list input")[0].check()
    page.click("#account-submit")
    page.wait_for_selector("#connected")
    connection = result()
    assert client.authorize_cached(connection.login_id).login_id == connection.login_id


def test_async_connect_through_the_image_grid(page: Page, sb: bf.Sandbox) -> None:
    async def connect(on_url: Callable[[bf.ConnectUrl], None]) -> tuple[bf.Connection, str | None]:
        async with sb.async_client(poll_interval=0.05) as client:
            connection = await client.connect(on_url=on_url, consent=False, institution="FlinksCapital", timeout=60)
            session = await client.authorize_cached(connection.login_id)
            return connection, session.login_id

    # The event loop runs on the thread, as a notebook's does beside its front-end.
    urls, result = in_background(lambda on_url: asyncio.run(connect(on_url)))
    url = urls.get(timeout=10)
    page.goto(url.reveal())
    sign_in(page, "mfa_image")
    page.fill("#answer-0", "Montreal")
    page.click("#mfa-submit")
    page.wait_for_selector("#challenge-0[data-type=ImageSelection]")
    assert len(page.query_selector_all("#challenge-0 img")) == 16
    page.click("#image-0-7")  # mfa_image's right image is the 8th
    page.wait_for_selector("#connected")
    connection, opened = result()
    assert connection.institution == "FlinksCapital" and opened == connection.login_id


#: bf.ConnectWidget's front-end with a fake anywidget model (the traits, set, save_changes), as
#: in test_connect_widget_js.py, its iframe showing the sandbox's real pages.
HOST = """<!doctype html><html><body><div id="cell"></div>
<script type="module">
const state = {url: %(url)s, height: "640px", events: [], redirect: {}};
window.model = {get: (n) => state[n], set: (n, v) => { state[n] = v; }, save_changes: () => {},
                on: () => {}, off: () => {}, state};
const esm = %(esm)s;
const module = await import(URL.createObjectURL(new Blob([esm], {type: "text/javascript"})));
module.default.render({model: window.model, el: document.getElementById("cell")});
window.rendered = true;
</script></body></html>"""


def test_the_notebook_widget_shows_the_sandbox_widget_and_gets_its_connection(page: Page, sb: bf.Sandbox) -> None:
    widget_module = pytest.importorskip("bankfeed._widget")
    client = sb.client(poll_interval=0.05)
    url = client.connect_url(demo=True, consent=False, inner_redirect=True, redirect_url="http://localhost/done")
    page.set_content(HOST % {"url": json.dumps(url.reveal()), "esm": json.dumps(widget_module._ESM)})
    page.wait_for_function("window.rendered === true")
    frame = page.frame_locator("#bankfeed-connect-frame")
    frame.locator("#institution-FlinksCapital").click()
    inner = next(f for f in page.frames if f.url.startswith(sb.widget_url))
    sign_in(inner, "mfa_multiple_answers")
    inner.wait_for_selector("#mfa-page")
    screenshot(page, "connect-sandbox-notebook-widget")
    # Its one round answered, the widget redirects, and the iframe gives way to the outcome.
    answer_round(inner, user_named(sb, "mfa_multiple_answers"))
    page.wait_for_function("window.model.state.redirect.loginId !== undefined")
    state = page.evaluate("JSON.parse(JSON.stringify(window.model.state))")
    steps = [event["step"] for event in state["events"]]
    assert steps[0] == "APP_MOUNTED" and steps[-1] == "REDIRECT" and "SUBMIT_MFA" in steps
    assert "Bank connected" in (page.text_content("#bankfeed-connect-status") or "")
    connection = bf.Connection.from_event(state["redirect"])
    assert client.authorize_cached(connection.login_id).login_id == connection.login_id
