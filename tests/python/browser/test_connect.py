"""``client.connect`` end to end in a real headless Chromium (docs/connect.md#from-a-script): the
browser opens the widget's URL, the widget signs the person in and redirects to the loopback
catcher, which answers "You can close this tab"; the LoginId caught opens a cached session on the
sandbox. A harness page that embeds the widget forwards its events to the catcher instead.

The widget here is a small fake of the service's last page, served by the test: it saves a login
of ``greatday_nomfa`` on the sandbox through its API (as the real widget saves the connection)
and, on "Finish", posts ``REDIRECT`` and navigates to the redirect URL with ``loginId``,
``institution``, ``accountId`` and ``tag``, as the sandbox's widget pages do (the shapes of
docs/connect.md#what-the-widget-reports), with what the sandbox's pages lack: ``jsRedirect``, a
widget that only posts its event. The same round through the sandbox's own pages is in
test_connect_end_to_end.py.
"""

from __future__ import annotations

import html
import json
import queue
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, quote, urlsplit

import pytest
from browserhelpers import screenshot
from widgethelpers import in_background

import bankfeed as bf

# Deselected by scripts/test --quick (CONTRIBUTING.md#the-quick-loop): a real Chromium starts.
pytestmark = pytest.mark.browser

if TYPE_CHECKING:
    from playwright.sync_api import Page

INSTITUTION = "FlinksCapital"

FINAL_PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Connect</title></head>
<body style="font-family:system-ui,sans-serif;margin:2rem">
<h1 id="institution">Flinks Capital</h1><p>Your accounts are ready.</p>
<button id="finish">Finish</button>
<script>
const query = new URLSearchParams(location.search);
const loginId = %(login_id)s;
document.getElementById("finish").onclick = () => {
  const target = new URL(query.get("redirectUrl"));
  target.searchParams.append("loginId", loginId);
  target.searchParams.append("institution", "FlinksCapital");
  for (const id of ["acct-1", "acct-2"]) target.searchParams.append("accountId", id);
  if (query.get("tag")) target.searchParams.append("tag", query.get("tag"));
  const event = {step: "REDIRECT", url: target.toString(), loginId, institution: "FlinksCapital",
                 accountId: ["acct-1", "acct-2"], tag: query.get("tag")};
  if (window.parent !== window) window.parent.postMessage(event, "*");
  if (window.opener) window.opener.postMessage(event, "*");
  if (query.get("jsRedirect") === "true") return;  // the page that embeds it navigates, if anyone
  (query.get("innerRedirect") === "true" ? window : window.top).location.href = target.toString();
};
</script></body></html>"""

#: A page of the integrator's that embeds the widget and forwards its events to a server: here
#: the catcher, by POST. The catcher answers no preflight and names no origin, so a page of
#: another origin sends a simple request (no-cors, a text body) and cannot read the answer.
HARNESS = """<!doctype html><html><body><iframe id="widget" src=%(src)s style="width:420px;height:300px"></iframe>
<ol id="events"></ol>
<script>
window.addEventListener("message", async (message) => {
  const item = document.createElement("li");
  item.textContent = message.data.step;
  document.getElementById("events").append(item);
  await fetch(%(catcher)s, {method: "POST", mode: "no-cors", body: JSON.stringify(message.data)});
  item.className = "forwarded";
});
</script></body></html>"""


class FakeWidget:
    """The fake widget's server: ``/v2/`` (the final page) and ``/harness``."""

    def __init__(self, sb: bf.Sandbox) -> None:
        self.sb = sb
        self.login_ids: list[str] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                if parts.path.startswith("/v2/"):
                    body = fake.final_page()
                elif parts.path == "/harness":
                    query = parse_qs(parts.query)
                    body = HARNESS % {
                        "src": html.escape(json.dumps(query["src"][0]), quote=False).replace("&quot;", '"'),
                        "catcher": json.dumps(query["catcher"][0]),
                    }
                else:
                    self.send_error(404)
                    return
                data = body.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def final_page(self) -> str:
        # The person signs in; the widget saves the connection and knows its LoginId.
        session = self.sb.client().authorize(INSTITUTION, "greatday_nomfa", "Everyday", save=True)
        assert isinstance(session, bf.Session) and session.login_id is not None
        self.login_ids.append(session.login_id)
        return FINAL_PAGE % {"login_id": json.dumps(session.login_id)}

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def sb() -> Iterator[bf.Sandbox]:
    with bf.Sandbox() as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def fake(sb: bf.Sandbox) -> Iterator[FakeWidget]:
    widget = FakeWidget(sb)
    yield widget
    widget.close()


def widget_base(sb: bf.Sandbox, fake: FakeWidget) -> str:
    """Where the widget the browser opens is served."""
    return f"{fake.url}/v2/"


def opened(url: bf.ConnectUrl, base: str) -> str:
    """The widget URL the client built (``<sandbox>/v2/``), pointed at ``base``."""
    return base + url.reveal().removeprefix(url.base)


def play(page: Page) -> None:
    """What the person does in the widget: here, its last page's Finish."""
    page.click("#finish")


def connect_in_background(client: bf.Client, **options: Any) -> tuple[queue.Queue[Any], Callable[[], Any]]:
    """``client.connect`` on a thread (the browser is driven from this one): the URLs it gives,
    and a function that waits for its outcome."""
    return in_background(lambda on_url: client.connect(on_url=on_url, timeout=30, **options))


def test_the_browser_is_redirected_to_the_catcher_and_the_login_id_opens_a_cached_session(
    page: Page, sb: bf.Sandbox, fake: FakeWidget
) -> None:
    client = sb.client(poll_interval=0.05)
    urls, result = connect_in_background(client, demo=True, tag="customer-42")
    url = urls.get(timeout=10)
    assert "authorizeToken=***" in str(url)
    page.goto(opened(url, widget_base(sb, fake)))
    screenshot(page, "connect-fake-widget")
    play(page)
    page.wait_for_selector("#connected")
    assert "You can close this tab" in (page.text_content("body") or "")
    assert page.url.startswith("http://127.0.0.1:") and "/bankfeed-" in page.url
    screenshot(page, "connect-catcher-close-tab")

    connection = result()
    assert (connection.login_id, connection.institution, connection.source) == (
        fake.login_ids[-1],
        INSTITUTION,
        "redirect",
    )
    assert (connection.account_ids, connection.tag) == (["acct-1", "acct-2"], "customer-42")
    session = client.authorize_cached(connection.login_id)
    assert isinstance(session, bf.Session)
    assert len(session.accounts_detail().accounts) >= 1


def test_a_page_that_embeds_the_widget_forwards_its_redirect_event(
    page: Page, sb: bf.Sandbox, fake: FakeWidget
) -> None:
    client = sb.client(poll_interval=0.05)
    # The widget only posts its event (jsRedirect); the page hands it to the catcher.
    urls, result = connect_in_background(client, inner_redirect=True, extra={"jsRedirect": True})
    url = urls.get(timeout=10)
    catcher = parse_qs(urlsplit(url.reveal()).query)["redirectUrl"][0]
    widget = opened(url, widget_base(sb, fake))
    page.goto(f"{fake.url}/harness?src={quote(widget, safe='')}&catcher={quote(catcher, safe='')}")
    play_in = page.frame_locator("#widget")
    play_in.locator("#finish").click()
    connection = result()
    assert connection.login_id == fake.login_ids[-1]
    assert connection.account_ids == ["acct-1", "acct-2"]
    assert connection.source == "event"
    page.wait_for_selector("#events li.forwarded")
    screenshot(page, "connect-harness")
