"""Logging in, for ``bf.Client`` and ``bf.AsyncClient`` alike (the ``api`` fixture): every sandbox
user round by round and through ``login(on_challenge=...)``, the trusted-device and three-question
flows, image challenges and their notebook view, ``ChallengeRequired``, the handler's own
exceptions and where it runs, the bound of challenge rounds, and blank credentials."""

from __future__ import annotations

import base64
import contextvars
import threading
from types import SimpleNamespace
from typing import Any, NoReturn, cast

import pytest

import bankfeed as bf
from bfhelpers import (
    AUTHORIZE,
    GREATDAY,
    INSTITUTION,
    PASSWORD,
    REFUSED,
    THREE_ROUNDS,
    Api,
    SandboxUser,
    answer_map,
    answers_for,
    choices_of,
    is_guid,
    login_id_of,
    operations_since,
    raises,
    usernames,
)

USERS = usernames()


class HandlerFailed(Exception):
    pass


@pytest.fixture
def client(api: Api, sandbox: bf.Sandbox) -> Any:
    """A client of the shared sandbox, of the kind the case runs against."""
    return api.client(sandbox)


def test_the_sandbox_has_a_user_per_challenge_type(users: dict[str, SandboxUser]) -> None:
    kinds = {kind for user in users.values() for kind in user["challenge_types"]}
    assert kinds >= {
        "QuestionAndAnswer",
        "ImageSelection",
        "MultipleChoice",
        "MultipleChoiceMultipleAnswers",
        "TextOrCall",
        "WaitUntilEUAccept",
    }
    for documented in (
        "Greatday",
        "greatday_nomfa",
        "test_disabled_account",
        "test_service_unavailable",
        "test_pending",
        "test_dispatched",
    ):
        assert documented in users
    # Greatday asks one of its three questions per login, so its answers are all three; the
    # former three-rounds flow is a user of its own (docs/sandbox.md#users).
    assert users["Greatday"]["challenge_types"] == ["QuestionAndAnswer"]
    assert answer_map(users["Greatday"]) == {prompt: [answer] for prompt, answer in GREATDAY.items()}
    assert users[THREE_ROUNDS]["challenge_types"] == ["QuestionAndAnswer"] * 3
    for user in users.values():
        assert user["description"]
        if user["username"] != "Greatday":
            assert len(answer_map(user)) == len(user["challenge_types"])


# --- Every user -----------------------------------------------------------------------------


@pytest.mark.parametrize("username", USERS)
def test_step_by_step(api: Api, client: Any, users: dict[str, SandboxUser], username: str) -> None:
    user = users[username]
    if username in REFUSED:
        exc_type, code = REFUSED[username]
        with raises(exc_type, code=code):
            api.run(client.authorize(INSTITUTION, username, PASSWORD, save=True))
        return
    seen: list[str] = []
    session = api.login_step_by_step(client, user, seen=seen)
    assert seen == list(user["challenge_types"])
    assert isinstance(session, api.Session)
    assert is_guid(session.request_id) and is_guid(session.login_id)


@pytest.mark.parametrize("username", USERS)
def test_login_with_canned_answers(api: Api, client: Any, users: dict[str, SandboxUser], username: str) -> None:
    user = users[username]
    seen: list[str] = []
    canned = bf.answers(user["answers"])

    def answer(challenge: Any) -> dict[str, list[str]]:
        assert isinstance(challenge, api.Challenge)
        seen.extend(item.type for item in challenge.challenges)
        return canned(challenge)

    on_challenge = api.handler(answer)
    if username in REFUSED:
        exc_type, code = REFUSED[username]
        with raises(exc_type, code=code):
            api.run(client.login(INSTITUTION, username, PASSWORD, on_challenge=on_challenge))
        assert seen == []
        return
    session = api.run(client.login(INSTITUTION, username, PASSWORD, on_challenge=on_challenge, save=True))
    if not seen and user["challenge_types"]:
        # The trusted-device flow: the challenge comes on a live login by saved connection.
        login_id = login_id_of(session)
        session = api.run(client.login_saved(login_id, on_challenge=on_challenge))
        assert session.login_id == login_id
    assert isinstance(session, api.Session)
    assert seen == list(user["challenge_types"])
    assert is_guid(session.request_id) and is_guid(session.login_id)


def test_the_trusted_device_challenge_comes_on_authorize_saved(
    api: Api, client: Any, users: dict[str, SandboxUser]
) -> None:
    session = api.run(client.authorize(INSTITUTION, "mfa_trusted_device", PASSWORD, save=True))
    assert isinstance(session, api.Session)
    step = api.run(client.authorize_saved(login_id_of(session)))
    assert isinstance(step, api.Challenge)
    assert [c.type for c in step.challenges] == ["WaitUntilEUAccept"]
    final = api.run(step.answer(answers_for(step, answer_map(users["mfa_trusted_device"]))))
    assert isinstance(final, api.Session)
    assert final.login_id == session.login_id and final.request_id != session.request_id


def test_three_questions_come_at_once_and_are_answered_in_one_call(
    api: Api, client: Any, users: dict[str, SandboxUser], sandbox: bf.Sandbox
) -> None:
    step = api.run(client.authorize(INSTITUTION, "mfa_three_questions", PASSWORD))
    assert isinstance(step, api.Challenge) and len(step.challenges) == 3
    before = sandbox.request_count
    assert isinstance(api.run(step.answer(answers_for(step, answer_map(users["mfa_three_questions"])))), api.Session)
    assert operations_since(sandbox, before) == AUTHORIZE, "one Authorize answered all three"


# --- Image challenges -----------------------------------------------------------------------


def test_image_selection_gives_16_png_images(api: Api, client: Any, users: dict[str, SandboxUser]) -> None:
    step = api.step_with(client, users["mfa_image"], "ImageSelection")
    item = next(c for c in step.challenges if c.type == "ImageSelection")
    images = item.images
    assert images is not None and len(images) == 16 == len(choices_of(item))
    assert all(isinstance(image, bytes) and image.startswith(b"\x89PNG\r\n\x1a\n") for image in images)
    assert all(3000 <= len(choice) <= 5500 for choice in choices_of(item))
    # The images are counted, not dumped, in the repr.
    assert len(repr(item)) < 1000 and len(repr(step)) < 1000
    # Questions have no images.
    assert all(c.images is None for c in step.challenges if c.type != "ImageSelection")
    assert isinstance(api.complete(step, answer_map(users["mfa_image"])), api.Session)


def test_notebook_view_shows_the_images_as_a_numbered_grid(
    api: Api, client: Any, users: dict[str, SandboxUser]
) -> None:
    step = api.run(client.authorize(INSTITUTION, "mfa_image", PASSWORD))
    assert isinstance(step, api.Challenge)
    first = step._repr_html_()
    assert "What city were you born in?" in first and "<img" not in first
    step = api.run(step.answer(answers_for(step, answer_map(users["mfa_image"]))))
    assert isinstance(step, api.Challenge)
    item = next(c for c in step.challenges if c.type == "ImageSelection")
    html = item._repr_html_()
    assert html.count('<img src="data:image/png;base64,') == 16
    assert "<b>1</b>" in html and "<b>16</b>" in html and "choices[15]" in html
    # Each image is shown as the bytes it decodes to, in the order of choices, numbered from 1 as
    # bf.typed_answer reads the number: the image numbered 8 is choices[7].
    assert item.images is not None
    eighth = html.split('alt="image 8"')[0].rsplit("<img", 1)[1]
    assert base64.b64encode(item.images[7]).decode() in eighth
    assert bf.typed_answer(item, "8") == {item.prompt: [choices_of(item)[7]]}
    assert "answer: the number of an image, 1 to 16, through bf.typed_answer(c, &#x27;8&#x27;)" in html
    whole = step._repr_html_()
    assert item.prompt in whole and whole.count("<img") == 16 and step.request_id in whole


def test_notebook_view_escapes_what_the_server_sent() -> None:
    import bankfeed._display as display

    fake = SimpleNamespace(
        type="MultipleChoice", prompt="<script>alert(1)</script>", images=None, choices=["a & b", "<i>"]
    )
    # Typed as what it stands in for: the view reads only these attributes.
    html = display.security_challenge_html(cast(bf.SecurityChallenge, fake))
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "a &amp; b" in html and "&lt;i&gt;" in html


# --- login(): handlers and ChallengeRequired ------------------------------------------------


def test_login_without_a_handler_raises_an_answerable_challenge_required(api: Api, client: Any) -> None:
    with raises(bf.ChallengeRequired) as info:
        api.run(client.login(INSTITUTION, THREE_ROUNDS, PASSWORD))
    challenge = info.value.challenge
    assert isinstance(challenge, api.Challenge)
    assert challenge.prompts == ["What city were you born in?"]
    assert info.value.request_id == challenge.request_id
    assert is_guid(challenge.request_id)
    session = api.complete(challenge, GREATDAY)
    assert isinstance(session, api.Session)


def test_login_without_a_handler_works_when_nothing_is_asked(api: Api, client: Any) -> None:
    assert isinstance(api.run(client.login(INSTITUTION, "greatday_nomfa", PASSWORD)), api.Session)


@pytest.mark.parametrize("exc", [HandlerFailed("the user gave up"), KeyError("missing")], ids=["custom", "keyerror"])
def test_the_handlers_own_exception_propagates_as_it_was(api: Api, client: Any, exc: Exception) -> None:
    def fail(challenge: Any) -> NoReturn:
        raise exc

    with pytest.raises(type(exc)) as info:
        api.run(client.login(INSTITUTION, "Greatday", PASSWORD, on_challenge=api.handler(fail)))
    assert info.value is exc


def test_a_handler_failing_in_a_later_round_propagates_too(api: Api, client: Any) -> None:
    rounds: list[list[str]] = []

    def answer(challenge: Any) -> dict[str, str]:
        rounds.append(challenge.prompts)
        if len(rounds) == 2:
            raise HandlerFailed("round two")
        return {p: GREATDAY[p] for p in challenge.prompts}

    with pytest.raises(HandlerFailed, match="round two"):
        api.run(client.login(INSTITUTION, THREE_ROUNDS, PASSWORD, on_challenge=api.handler(answer)))
    assert rounds == [["What city were you born in?"], ["What is the best country on earth?"]]


def test_a_plain_handler_runs_off_the_calling_thread_in_the_callers_context(api: Api, client: Any) -> None:
    """So that the call's deadline and close() end it whatever the handler does; its context
    variables are the caller's (docs/architecture.md#challenge-handlers). A plain function, not
    ``api.handler``: an ``AsyncClient`` runs a plain handler on a thread too."""
    request: contextvars.ContextVar[str] = contextvars.ContextVar("request")
    request.set("the caller's")
    seen: list[tuple[int, str]] = []

    def handler(challenge: Any) -> dict[str, str]:
        seen.append((threading.get_ident(), request.get()))
        return {p: GREATDAY[p] for p in challenge.prompts}

    assert isinstance(api.run(client.login(INSTITUTION, THREE_ROUNDS, PASSWORD, on_challenge=handler)), api.Session)
    assert len(seen) == 3
    assert all(ident != threading.get_ident() and value == "the caller's" for ident, value in seen), seen


def test_the_bound_of_challenge_rounds_raises_too_many_challenges(api: Api, sandbox: bf.Sandbox) -> None:
    tight = api.client(sandbox, max_challenge_rounds=1)
    with raises(bf.TooManyChallenges):
        api.run(tight.login(INSTITUTION, THREE_ROUNDS, PASSWORD, on_challenge=api.handler(bf.answers(GREATDAY))))
    # Three rounds fit in three.
    roomy = api.client(sandbox, max_challenge_rounds=3)
    session = api.run(roomy.login(INSTITUTION, THREE_ROUNDS, PASSWORD, on_challenge=api.handler(bf.answers(GREATDAY))))
    assert isinstance(session, api.Session)


@pytest.mark.parametrize("blank", ["", "   ", "\t", " \n "], ids=["empty", "spaces", "tab", "newline"])
@pytest.mark.parametrize("field", ["institution", "username", "password"])
def test_blank_credentials_are_refused_before_anything_is_sent(
    api: Api, fresh_sandbox: bf.Sandbox, field: str, blank: str
) -> None:
    credentials = {"institution": INSTITUTION, "username": "greatday_nomfa", "password": PASSWORD, field: blank}
    client = api.client(fresh_sandbox)
    with raises(bf.ConfigError, field=field):
        api.run(client.authorize(credentials["institution"], credentials["username"], credentials["password"]))
    assert fresh_sandbox.request_count == 0
