"""A person playing the sandbox's widget pages in a real browser (docs/sandbox.md#the-hosted-widget):
signing in and answering each round of challenges from a sandbox user's documented answers, by
the pages' element ids, as the browser tests of the widget and of ``client.connect`` do; and
``client.connect`` waiting on a thread while the browser is driven from the test's own (the one
Playwright's sync API belongs to)."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import bankfeed as bf

if TYPE_CHECKING:
    from playwright.sync_api import Frame, Page

PASSWORD = "Everyday"


def sign_in(where: Page | Frame, username: str, password: str = PASSWORD) -> None:
    where.fill("#username", username)
    where.fill("#password", password)
    where.click("#credential-submit")


def answer_round(where: Page | Frame, user: bf.SandboxUser) -> None:
    """Answers the round on the page as a person would, from the user's documented answers:
    types text, picks choices by their text, clicks the right image, presses Text."""
    answers: dict[str, list[str]] = user["answers"]
    fieldsets = where.query_selector_all("fieldset.challenge")
    pressed = False
    for index, fieldset in enumerate(fieldsets):
        kind = fieldset.get_attribute("data-type")
        prompt = fieldset.query_selector("legend")
        assert prompt is not None
        prompt_text = prompt.inner_text().strip()
        if kind == "TextOrCall":
            labels = fieldset.query_selector_all("label.choice")
            phone = next(label for label in labels if label.inner_text().strip() in answers)
            phone.click()
            where.click("#mfa-text")
            pressed = True
            continue
        if kind == "WaitUntilEUAccept":
            where.click("#mfa-confirm")
            pressed = True
            continue
        answer = answers[prompt_text]
        if kind == "ImageSelection":
            where.click(f"#challenge-{index} img[src='data:image/png;base64,{answer[0]}']")
            pressed = True
        elif kind in ("MultipleChoice", "MultipleChoiceMultipleAnswers"):
            for label in fieldset.query_selector_all("label.choice"):
                if label.inner_text().strip() in answer:
                    label.click()
        elif fieldset.query_selector("select"):
            where.select_option(f"#question-{index}", label=answer[0])
            where.fill(f"#answer-{index}", answer[1])
        else:
            where.fill(f"#answer-{index}", answer[0])
    if not pressed:
        where.click("#mfa-submit")


def user_named(sb: bf.Sandbox, username: str) -> bf.SandboxUser:
    return next(user for user in sb.users if user["username"] == username)


def in_background(run: Callable[[Callable[[bf.ConnectUrl], None]], Any]) -> tuple[queue.Queue[Any], Any]:
    """``run(on_url)`` on a thread: the URLs it gives, and a function waiting for its outcome."""
    urls: queue.Queue[Any] = queue.Queue()
    outcome: list[Any] = []

    def target() -> None:
        try:
            outcome.append(run(urls.put))
        except BaseException as error:
            outcome.append(error)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()

    def result() -> Any:
        thread.join(30)
        assert outcome, "connect did not return"
        if isinstance(outcome[0], BaseException):
            raise outcome[0]
        return outcome[0]

    return urls, result
