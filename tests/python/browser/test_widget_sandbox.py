"""The sandbox's imitation of the hosted connection widget, clicked through in a real headless
Chromium as a person would (docs/sandbox.md#the-hosted-widget): every page of the flow, each
challenge type, the events a page that embeds the widget receives, the redirect both ways, the
lists productType switches, the retries, and the token. Each page is saved as a screenshot under
target/screenshots/widget-*.png for a person to look at."""

from __future__ import annotations

import http.server
import json
import threading
import urllib.request
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from browserhelpers import screenshot
from widgethelpers import PASSWORD, answer_round, sign_in, user_named

import bankfeed as bf

# Deselected by scripts/test --quick (CONTRIBUTING.md#the-quick-loop): a real Chromium starts.
pytestmark = pytest.mark.browser

if TYPE_CHECKING:
    from playwright.sync_api import Frame, Page

#: Collects every event a page receives, and (top-level, where the widget posts to itself) the
#: widget's own, in window.__events; installed before each document's scripts run.
COLLECT = "window.__events = []; window.addEventListener('message', (e) => window.__events.push(e.data));"


class Harness:
    """A page on another origin (another loopback port) that embeds the widget in an iframe and
    records the events it receives, and a landing page for the redirect (``/done``)."""

    def __init__(self) -> None:
        self.widget_url = ""
        harness = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path.startswith("/embed"):
                    src = json.dumps(harness.widget_url).replace("<", "\\u003c")
                    body = (
                        "<!DOCTYPE html><title>harness</title><h1 id='harness'>Your app</h1>"
                        f"<script>{COLLECT} const f = document.createElement('iframe'); f.id = 'widget';"
                        f" f.width = 460; f.height = 720; f.src = {src}; document.body.append(f);</script>"
                    )
                else:
                    body = "<!DOCTYPE html><title>done</title><p id='landed'>Back in your app</p>"
                data = body.encode()
                self.send_response(200)
                self.send_header("content-type", "text/html; charset=utf-8")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def done(self) -> str:
        return f"{self.base}/done"

    def embed(self, page: Page, widget_url: str) -> Frame:
        """Opens the harness page embedding `widget_url`; the widget's frame."""
        self.widget_url = widget_url
        page.goto(f"{self.base}/embed")
        page.wait_for_selector("#widget")
        frame = page.frame_locator("#widget")
        frame.locator("#page-title").wait_for()
        found = page.query_selector("#widget")
        assert found is not None
        content = found.content_frame()
        assert content is not None
        return content


@pytest.fixture
def harness() -> Iterator[Harness]:
    running = Harness()
    yield running
    running.server.shutdown()
    running.server.server_close()


@pytest.fixture
def sb() -> Iterator[bf.Sandbox]:
    with bf.Sandbox(auth=False) as sandbox:
        yield sandbox


def widget(sb: bf.Sandbox, **params: str) -> str:
    return sb.widget_url + "?" + urlencode(params)


def events_of(page: Page) -> list[dict[str, Any]]:
    """The events the harness page received (it stays while the widget's frame navigates)."""
    return list(page.evaluate("window.__events || []"))


def record(page: Page) -> list[dict[str, Any]]:
    """The events a top-level widget page posts to itself, across its navigations. Only those a
    page posts as it loads are sure to arrive: one posted just before a form is sent reaches an
    embedding page, but not the page being replaced."""
    received: list[dict[str, Any]] = []

    def keep(event: dict[str, Any]) -> None:
        received.append(event)

    page.expose_function("__bankfeedRecord", keep)
    page.add_init_script("window.addEventListener('message', (e) => window.__bankfeedRecord(e.data));")
    return received


def steps_of(page: Page) -> list[str | None]:
    return [event.get("step") for event in events_of(page)]


def test_greatday_nomfa_connects_to_the_redirect_and_a_cached_session(
    sb: bf.Sandbox, harness: Harness, page: Page
) -> None:
    page.add_init_script(COLLECT)
    page.goto(widget(sb, demo="true", customerName="Acme Budget", redirectUrl=harness.done, tag="signup-42"))
    page.wait_for_selector("#consent-page")
    assert "Acme Budget" in page.inner_text("#consent-text")
    screenshot(page, "widget-consent")
    page.click("#consent-accept")
    page.wait_for_selector("#institution-page")
    assert page.inner_text("#institution-FlinksCapital").strip().endswith("Flinks Capital")
    screenshot(page, "widget-institutions")
    page.click("#institution-FlinksCapital")
    page.wait_for_selector("#credential-page")
    screenshot(page, "widget-credentials")
    sign_in(page, "greatday_nomfa")
    page.wait_for_url(f"{harness.done}?**")
    query = parse_qs(urlsplit(page.url).query)
    # A demo connection says so first, as the service's recorded callbacks do.
    assert list(query) == ["demo", "loginId", "institution", "tag"]
    assert query["demo"] == ["true"]
    assert query["institution"] == ["FlinksCapital"] and query["tag"] == ["signup-42"]
    login_id = query["loginId"][0]
    with sb.client() as client:
        session = client.authorize_cached(login_id)
        assert session.login_id == login_id


@pytest.mark.parametrize(
    "username",
    [
        "Greatday",
        "mfa_image",
        "mfa_text_or_call",
        "mfa_multiple_choice",
        "mfa_multiple_answers",
        "mfa_reset_questions",
        "mfa_trusted_device",
        "mfa_three_questions",
    ],
)
def test_users_with_challenges_answer_each_page(sb: bf.Sandbox, page: Page, username: str) -> None:
    user = user_named(sb, username)
    received = record(page)
    fetched: list[str] = []
    page.on("request", lambda request: fetched.append(request.url))
    page.goto(widget(sb, demo="true", consentEnable="false", institution="FlinksCapital"))
    sign_in(page, username)
    rounds = 0
    while True:
        # Without a redirectUrl the flow ends on the result page (connected-query).
        page.wait_for_selector("#mfa-page, #connected-query, #error-page")
        if not page.query_selector("#mfa-page"):
            break
        rounds += 1
        screenshot(page, f"widget-mfa-{username}-{rounds}")
        page.wait_for_function("document.readyState === 'complete'")
        types = [event["mfaTypes"] for event in received if event.get("step") == "COMPONENT_LOAD_MFA"]
        assert types[-1] == [
            fieldset.get_attribute("data-type") for fieldset in page.query_selector_all("fieldset.challenge")
        ]
        answer_round(page, user)
        assert rounds < 5, "the flow keeps asking"
    assert page.query_selector("#connected-page"), page.inner_text("body")
    assert "/v2/Result/FlinksCapital?demo=true&loginId=" in page.url, page.url
    screenshot(page, f"widget-connected-{username}")
    page.wait_for_function("document.readyState === 'complete'")
    asked = [kind for event in received if event.get("step") == "COMPONENT_LOAD_MFA" for kind in event["mfaTypes"]]
    assert asked == user["challenge_types"], "the widget asks what the API asks"
    redirect = received[-1]
    assert redirect["step"] == "REDIRECT"
    with sb.client() as client:
        assert client.authorize_cached(redirect["loginId"]).login_id == redirect["loginId"]
    outside = [url for url in fetched if not url.startswith((sb.url + "/", "data:"))]
    assert not outside, f"the pages load nothing from elsewhere: {outside}"


def test_the_image_grid_has_sixteen_images_to_click(sb: bf.Sandbox, page: Page) -> None:
    page.goto(widget(sb, demo="true", consentEnable="false", institution="FlinksCapital"))
    sign_in(page, "mfa_image")
    page.wait_for_selector("#mfa-page")
    page.fill("#answer-0", "Montreal")
    page.click("#mfa-submit")
    page.wait_for_selector("#challenge-0[data-type='ImageSelection']")
    images = page.query_selector_all("#challenge-0 button.image img")
    assert len(images) == 16
    boxes = [image.bounding_box() for image in images]
    assert all(box is not None and box["width"] > 50 and box["height"] > 50 for box in boxes), boxes
    assert len({round(box["y"]) for box in boxes if box}) == 4, "a 4 by 4 grid"
    page.click("#image-0-0")
    page.wait_for_selector("#mfa-error")
    screenshot(page, "widget-mfa-image-wrong")
    page.click("#image-0-7")
    page.wait_for_selector("#connected-query")


def test_the_harness_receives_the_events_in_order(sb: bf.Sandbox, harness: Harness, page: Page) -> None:
    url = widget(
        sb,
        demo="true",
        redirectUrl=harness.done,
        innerRedirect="true",
        accountSelectorEnable="true",
        tag="t",
    )
    frame = harness.embed(page, url)
    frame.click("#consent-accept")
    frame.click("#institution-FlinksCapital")
    sign_in(frame, "Greatday")
    frame.wait_for_selector("#mfa-page")
    screenshot(page, "widget-harness-mfa")
    answer_round(frame, user_named(sb, "Greatday"))
    frame.wait_for_selector("#account-page")
    screenshot(page, "widget-accounts")
    chosen = frame.get_attribute("#account-list input:checked", "value")
    frame.click("#account-submit")
    frame.wait_for_url(f"{harness.done}?**")
    assert steps_of(page) == [
        "APP_MOUNTED",
        "COMPONENT_LOAD_CONSENT",
        "COMPONENT_ACCEPT_CONSENT",
        "COMPONENT_LOAD_INSTITUTION_SELECTOR",
        "INSTITUTION_SELECTED",
        "COMPONENT_LOAD_CREDENTIAL",
        "SUBMIT_CREDENTIAL",
        "COMPONENT_LOAD_MFA",
        "SUBMIT_MFA",
        "COMPONENT_LOAD_ACCOUNT_SELECTION",
        "ACCOUNT_SELECTED",
        "REDIRECT",
    ]
    events = events_of(page)
    assert events[4] == {"step": "INSTITUTION_SELECTED", "institution": "FlinksCapital"}
    assert events[7]["mfaTypes"] == ["QuestionAndAnswer"]
    assert events[10]["accountId"] == chosen
    redirect = events[-1]
    assert redirect["accountId"] == chosen and redirect["tag"] == "t"
    assert redirect["url"] == (
        f"{harness.done}?demo=true&loginId={redirect['loginId']}&institution=FlinksCapital&accountId={chosen}&tag=t"
    )


def test_stringify_posts_the_events_as_json_text(sb: bf.Sandbox, harness: Harness, page: Page) -> None:
    frame = harness.embed(page, widget(sb, demo="true", consentEnable="false", stringify="true"))
    frame.click("#institution-FlinksCapital")
    frame.wait_for_selector("#credential-page")
    received = events_of(page)
    assert all(isinstance(event, str) for event in received), received
    assert [json.loads(str(event))["step"] for event in received] == [
        "APP_MOUNTED",
        "COMPONENT_LOAD_INSTITUTION_SELECTOR",
        "INSTITUTION_SELECTED",
        "COMPONENT_LOAD_CREDENTIAL",
    ]


def test_a_popup_posts_to_its_opener_and_the_close_button_says_so(sb: bf.Sandbox, harness: Harness, page: Page) -> None:
    page.goto(f"{harness.base}/done")
    page.evaluate(COLLECT)
    url = widget(sb, demo="true", consentEnable="false", closeEnable="true")
    with page.expect_popup() as opened:
        page.evaluate("(url) => window.open(url, 'widget', 'width=480,height=720')", url)
    popup = opened.value
    popup.click("#institution-FlinksCapital")
    popup.wait_for_selector("#credential-page")
    popup.click("#widget-close")
    page.wait_for_function("window.__events.length >= 5")
    assert steps_of(page) == [
        "APP_MOUNTED",
        "COMPONENT_LOAD_INSTITUTION_SELECTOR",
        "INSTITUTION_SELECTED",
        "COMPONENT_LOAD_CREDENTIAL",
        "COMPONENT_CLOSE_SESSION",
    ]
    assert events_of(page)[-1] == {"step": "COMPONENT_CLOSE_SESSION", "institution": "FlinksCapital"}
    assert popup.query_selector("#credential-page"), "the close button does nothing else"


@pytest.mark.parametrize("inner", [True, False], ids=["inner", "top"])
def test_inner_redirect_navigates_the_frame_or_the_top_window(
    sb: bf.Sandbox, harness: Harness, page: Page, inner: bool
) -> None:
    url = widget(sb, demo="true", consentEnable="false", redirectUrl=harness.done, innerRedirect=str(inner).lower())
    frame = harness.embed(page, url)
    frame.click("#institution-FlinksCapital")
    sign_in(frame, "greatday_nomfa")
    if inner:
        frame.wait_for_url(f"{harness.done}?**")
        assert page.url == f"{harness.base}/embed", "the app's page stays"
        assert page.inner_text("#harness") == "Your app"
        assert steps_of(page)[-1] == "REDIRECT"
    else:
        page.wait_for_url(f"{harness.done}?**")
        assert "loginId" in parse_qs(urlsplit(page.url).query)
        screenshot(page, "widget-redirect-top")


@pytest.mark.parametrize(
    ("investments", "product_type", "shown"),
    [
        (True, "investment", "investment"),
        (True, "INVESTMENT", "investment"),
        (True, "Banking", "banking"),
        (False, "investment", "banking"),
    ],
)
def test_product_type_switches_the_list(page: Page, investments: bool, product_type: str, shown: str) -> None:
    with bf.Sandbox(auth=False, investments=investments) as sb:
        page.goto(widget(sb, demo="true", consentEnable="false", productType=product_type))
        page.wait_for_selector("#institution-list")
        assert page.get_attribute("#institution-list", "data-product") == shown
        names = page.inner_text("#institution-list")
        assert ("Questrade" in names) is (shown == "investment")
        assert ("RBC Royal Bank" in names) is (shown == "banking")
        assert "Flinks Capital" in names
        if investments and shown == "investment":
            screenshot(page, "widget-institutions-investment")


def test_the_test_institution_needs_demo(sb: bf.Sandbox, page: Page) -> None:
    page.goto(widget(sb, consentEnable="false", institutionFilterEnable="true"))
    page.wait_for_selector("#institution-list")
    assert page.query_selector("#institution-FlinksCapital") is None
    page.fill("#institution-search", "scotia")
    visible = [item.inner_text() for item in page.query_selector_all("#institution-list li") if item.is_visible()]
    assert len(visible) == 1 and "Scotiabank" in visible[0], visible


def test_wrong_passwords_are_retried_up_to_maximum_retry(sb: bf.Sandbox, page: Page) -> None:
    received = record(page)
    page.goto(widget(sb, demo="true", consentEnable="false", institution="FlinksCapital", maximumRetry="3"))
    for attempt in (1, 2):
        sign_in(page, "Greatday", "wrong-password")
        page.wait_for_selector("#credential-error")
        assert f"({3 - attempt} left)" in page.inner_text("#credential-error")
        assert page.input_value("#username") == "Greatday"
        assert page.input_value("#password") == ""
        page.wait_for_function("document.readyState === 'complete'")
        errors = [event for event in received if event.get("step") == "ERROR"]
        error = {"step": "ERROR", "flinksCode": "INVALID_PASSWORD", "requestId": None, "institution": "FlinksCapital"}
        assert errors == [error] * attempt
        assert received[-1]["step"] == "COMPONENT_LOAD_CREDENTIAL_RETRY"
    screenshot(page, "widget-credentials-retry")
    sign_in(page, "Greatday", "wrong-password")
    page.wait_for_selector("#error-page")
    assert page.inner_text("#error-code") == "INVALID_PASSWORD"
    assert "attempt 3 of 3" in page.inner_text("#error-message")
    page.wait_for_function("document.readyState === 'complete'")
    assert received[-1]["step"] == "MAXIMUM_RETRY_REACHED"
    assert received[-1]["flinksCode"] == "INVALID_PASSWORD"
    assert page.query_selector("form") is None, "no way on from the final page"
    screenshot(page, "widget-error-maximum-retry")


def test_the_right_password_after_a_wrong_one_connects(sb: bf.Sandbox, page: Page) -> None:
    page.goto(widget(sb, demo="true", consentEnable="false", institution="FlinksCapital"))
    sign_in(page, "greatday_nomfa", "nope")
    page.wait_for_selector("#credential-error")
    sign_in(page, "greatday_nomfa")
    page.wait_for_selector("#connected-query")
    screenshot(page, "widget-connected")


def test_the_sign_in_page_says_it_is_the_sandbox_and_whom_to_type(sb: bf.Sandbox, page: Page) -> None:
    page.set_viewport_size({"width": 480, "height": 1000})
    page.goto(widget(sb, demo="true", consentEnable="false", institution="FlinksCapital", headerEnable="false"))
    page.wait_for_selector("#sandbox-users")
    hint = page.inner_text("#sandbox-users")
    assert "This is the bankfeed sandbox" in hint and "Everyday" in hint and "bankfeed users" in hint
    listed = page.locator("#sandbox-users li").all_inner_texts()
    assert [line.split()[0] for line in listed] == [user["username"] for user in sb.users]
    assert "Greatday Montreal · Canada · Triangle" in listed and "mfa_image Montreal · image 8" in listed
    assert page.locator("#sandbox-users").is_visible()
    screenshot(page, "widget-credentials-test-users")
    # A username the sandbox does not know: the error says where the users are.
    sign_in(page, "alice")
    page.wait_for_selector("#credential-error")
    assert "bankfeed users" in page.inner_text("#credential-error")
    assert page.locator("#sandbox-users").is_visible()
    screenshot(page, "widget-credentials-unknown-user")
    # What the page lists is enough to get through: the first user and its answer.
    sign_in(page, "Greatday")
    answer_round(page, user_named(sb, "Greatday"))
    page.wait_for_selector("#connected-query")


def generate_token(sb: bf.Sandbox) -> str:
    url = f"{sb.url}/v3/{sb.customer_id}/BankingServices/GenerateAuthorizeToken"
    request = urllib.request.Request(url, method="POST", headers={"flinks-auth-key": sb.secret_key or ""})
    with urllib.request.urlopen(request) as answer:
        return str(json.load(answer)["Token"])


def test_the_token_is_required_and_single_use(page: Page) -> None:
    with bf.Sandbox() as sb:
        page.goto(widget(sb, demo="true"))
        page.wait_for_selector("#error-page")
        assert "missing" in page.inner_text("#error-message")
        assert page.inner_text("#error-code") == "UNAUTHORIZED"
        screenshot(page, "widget-error-token")
        url = widget(sb, demo="true", consentEnable="false", authorizeToken=generate_token(sb))
        page.goto(url)
        page.wait_for_selector("#institution-page")
        page.click("#institution-FlinksCapital")
        sign_in(page, "greatday_nomfa")
        page.wait_for_selector("#connected-query")
        page.goto(url)
        page.wait_for_selector("#error-page")
        assert "used already" in page.inner_text("#error-message")
        logged = [entry for entry in sb.requests if entry["path"].startswith("/v2/")]
        opened = [entry for entry in logged if entry["body"] and "authorizeToken" in entry["body"]]
        assert opened and all(entry["body"]["authorizeToken"] == "***" for entry in opened)
        signed_in = [entry for entry in logged if entry["body"] and "password" in entry["body"]]
        assert signed_in[0]["body"]["password"] == "***" and signed_in[0]["username"] == "greatday_nomfa"
        assert PASSWORD not in json.dumps(sb.requests), "the log holds no secret"


def test_without_keys_no_token_is_asked(sb: bf.Sandbox, page: Page) -> None:
    page.goto(widget(sb, demo="true"))
    page.wait_for_selector("#consent-page")


#: Greatday asks one of its three questions; in French, by these prompts (docs/sandbox.md#users).
GREATDAY_IN_FRENCH = {
    "Dans quelle ville êtes-vous né?": "Montreal",
    "Quel est le meilleur pays au monde?": "Canada",
    "Quelle forme les gens préfèrent-ils?": "Triangle",
}


#: The ids of the visible buttons whose words spill out of them, or (the action buttons: Continue,
#: Decline, Text me, ...) wrap onto a second line.
MISFITS = """Array.from(document.querySelectorAll('button')).filter((b) => {
  if (b.offsetParent === null) { return false; }
  if (b.scrollWidth > b.clientWidth + 1 || b.scrollHeight > b.clientHeight + 1) { return true; }
  if (!b.matches('.primary, .secondary, .link')) { return false; }
  const words = document.createRange();
  words.selectNodeContents(b);
  return new Set(Array.from(words.getClientRects()).map((line) => Math.round(line.top))).size > 1;
}).map((b) => b.id)"""


def assert_buttons_fit(page: Page) -> None:
    """Every visible button's words fit inside it, an action button's on one line (French words
    are longer than English ones)."""
    misfits = page.evaluate(MISFITS)
    assert misfits == [], f"the words do not fit these buttons: {misfits}"


def assert_french_page(page: Page, section: str, title: str) -> None:
    page.wait_for_selector(f"#{section}")
    assert page.get_attribute("html", "lang") == "fr"
    assert page.inner_text("#page-title") == title
    assert page.inner_text("#widget-header-text") == "Connexion sécurisée · bac à sable bankfeed"
    assert_buttons_fit(page)


def test_language_fr_shows_every_page_in_french(sb: bf.Sandbox, page: Page) -> None:
    page.set_viewport_size({"width": 420, "height": 900})
    page.goto(widget(sb, demo="true", language="fr", customerName="Budget Acme", closeEnable="true"))
    assert_french_page(page, "consent-page", "Connectez votre compte")
    assert page.inner_text("#consent-text").startswith("Budget Acme utilise le bac à sable bankfeed")
    assert page.inner_text("#consent-accept") == "Continuer"
    assert page.inner_text("#consent-deny") == "Refuser"
    assert page.get_attribute("#widget-close", "aria-label") == "Fermer"
    screenshot(page, "widget-fr-consent")
    page.click("#consent-accept")
    assert_french_page(page, "institution-page", "Sélectionnez votre institution")
    rbc = page.inner_text("#institution-RBC")
    assert "RBC Banque Royale" in rbc and "absente du bac à sable" in rbc, rbc
    screenshot(page, "widget-fr-institutions")
    page.click("#institution-FlinksCapital")
    assert_french_page(page, "credential-page", "Connexion à Flinks Capital")
    assert page.inner_text("label[for=username]") == "Nom d'utilisateur"
    assert page.inner_text("label[for=password]") == "Mot de passe"
    assert page.inner_text("#credential-submit") == "Continuer"
    assert page.inner_text("#credential-back") == "← Choisir une autre institution"
    screenshot(page, "widget-fr-credentials")
    sign_in(page, "Greatday", "wrong-password")
    assert_french_page(page, "credential-page", "Connexion à Flinks Capital")
    assert page.inner_text("#credential-error") == (
        "Nom d'utilisateur ou mot de passe incorrect. Vérifiez-les et réessayez (essais restants : 2). Les "
        "utilisateurs de test du bac à sable sont listés ci-dessous, et par la commande bankfeed users."
    )
    screenshot(page, "widget-fr-credentials-retry")
    sign_in(page, "Greatday")
    assert_french_page(page, "mfa-page", "Vérification de sécurité")
    prompt = page.inner_text("#prompt-0").strip()
    assert prompt in GREATDAY_IN_FRENCH, "the challenge is asked in French"
    assert page.inner_text("#mfa-submit") == "Continuer"
    page.fill("#answer-0", "Nulle part")
    page.click("#mfa-submit")
    assert_french_page(page, "mfa-page", "Vérification de sécurité")
    assert page.inner_text("#mfa-error") == "Réponse incorrecte ou incomplète. Réessayez."
    screenshot(page, "widget-fr-mfa-retry")
    page.fill("#answer-0", GREATDAY_IN_FRENCH[page.inner_text("#prompt-0").strip()])
    page.click("#mfa-submit")
    # The result page the flow ends on keeps the flow's language.
    page.wait_for_selector("#connected-query")
    assert_french_page(page, "connected-page", "Votre compte est connecté")
    assert page.inner_text("#connected-text") == "Vous pouvez maintenant fermer cette fenêtre."
    assert page.inner_text("#connected-page p.fine").startswith("Transmis à votre application :")
    screenshot(page, "widget-fr-connected")
    assert page.title() == "Votre compte est connecté · bac à sable bankfeed"


def test_language_fr_shows_the_account_selection_and_text_or_call_in_french(sb: bf.Sandbox, page: Page) -> None:
    page.set_viewport_size({"width": 420, "height": 900})
    query = {"demo": "true", "language": "fr", "consentEnable": "false", "institution": "FlinksCapital"}
    page.goto(widget(sb, **query, accountSelectorEnable="true"))
    sign_in(page, "greatday_nomfa")
    assert_french_page(page, "account-page", "Sélectionnez un compte")
    balance = page.inner_text("#account-list .balance")
    assert balance.endswith("$ CAD") and "," in balance, balance
    screenshot(page, "widget-fr-accounts")
    page.goto(widget(sb, **query))
    sign_in(page, "mfa_text_or_call")
    assert_french_page(page, "mfa-page", "Recevoir un code de sécurité")
    assert page.inner_text("#mfa-text") == "Par texto"
    assert page.inner_text("#mfa-call") == "Par appel"
    screenshot(page, "widget-fr-mfa-text-or-call")
    page.goto(widget(sb, **query))
    sign_in(page, "mfa_trusted_device")
    assert_french_page(page, "mfa-page", "Confirmez sur votre appareil de confiance")
    assert page.inner_text("#mfa-confirm") == "J'ai confirmé"
    screenshot(page, "widget-fr-mfa-trusted-device")
