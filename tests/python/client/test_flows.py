"""Every sandbox user end to end, round by round and through login(on_challenge=...)."""

from __future__ import annotations

import base64
from types import SimpleNamespace
from typing import cast

import pytest

import bankfeed as bf
from bfhelpers import (
    INSTITUTION,
    PASSWORD,
    REFUSED,
    SandboxUser,
    answer_map,
    answers_for,
    choices_of,
    is_guid,
    login_id_of,
    login_step_by_step,
    raises,
    usernames,
)

USERS = usernames()


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
    for documented in ("Greatday", "greatday_nomfa", "test_disabled_account", "test_service_unavailable",
                       "test_pending", "test_dispatched"):
        assert documented in users
    for user in users.values():
        assert user["description"]
        assert len(answer_map(user)) == len(user["challenge_types"])


@pytest.mark.parametrize("username", USERS)
def test_step_by_step(client: bf.Client, users: dict[str, SandboxUser], username: str) -> None:
    user = users[username]
    if username in REFUSED:
        exc_type, code = REFUSED[username]
        with raises(exc_type, code=code):
            client.authorize(INSTITUTION, username, PASSWORD, save=True)
        return
    seen: list[str] = []
    session = login_step_by_step(client, user, seen=seen)
    assert seen == list(user["challenge_types"])
    assert is_guid(session.request_id) and is_guid(session.login_id)


@pytest.mark.parametrize("username", USERS)
def test_login_with_canned_answers(client: bf.Client, users: dict[str, SandboxUser], username: str) -> None:
    user = users[username]
    seen: list[str] = []
    canned = bf.answers(user["answers"])

    def on_challenge(challenge: bf.Challenge) -> dict[str, list[str]]:
        assert isinstance(challenge, bf.Challenge)
        seen.extend(item.type for item in challenge.challenges)
        return canned(challenge)

    if username in REFUSED:
        exc_type, code = REFUSED[username]
        with raises(exc_type, code=code):
            client.login(INSTITUTION, username, PASSWORD, on_challenge=on_challenge)
        assert seen == []
        return
    session = client.login(INSTITUTION, username, PASSWORD, on_challenge=on_challenge, save=True)
    if not seen and user["challenge_types"]:
        # The trusted-device flow: the challenge comes on a live login by saved connection.
        login_id = login_id_of(session)
        session = client.login_saved(login_id, on_challenge=on_challenge)
        assert session.login_id == login_id
    assert isinstance(session, bf.Session)
    assert seen == list(user["challenge_types"])
    assert is_guid(session.request_id) and is_guid(session.login_id)


def test_the_trusted_device_challenge_comes_on_authorize_saved(
    client: bf.Client, users: dict[str, SandboxUser]
) -> None:
    user = users["mfa_trusted_device"]
    session = client.authorize(INSTITUTION, "mfa_trusted_device", PASSWORD, save=True)
    assert isinstance(session, bf.Session)
    step = client.authorize_saved(login_id_of(session))
    assert isinstance(step, bf.Challenge)
    assert [c.type for c in step.challenges] == ["WaitUntilEUAccept"]
    final = step.answer(answers_for(step, answer_map(user)))
    assert isinstance(final, bf.Session)
    assert final.login_id == session.login_id
    assert final.request_id != session.request_id


def test_three_questions_come_at_once_and_are_answered_in_one_call(
    client: bf.Client, users: dict[str, SandboxUser], sandbox: bf.Sandbox
) -> None:
    user = users["mfa_three_questions"]
    step = client.authorize(INSTITUTION, "mfa_three_questions", PASSWORD)
    assert isinstance(step, bf.Challenge)
    assert len(step.challenges) == 3
    before = sandbox.request_count
    session = step.answer(answers_for(step, answer_map(user)))
    assert isinstance(session, bf.Session)
    assert sandbox.request_count - before == 1


def test_image_selection_gives_16_png_images(client: bf.Client, users: dict[str, SandboxUser]) -> None:
    step = client.authorize(INSTITUTION, "mfa_image", PASSWORD)
    assert isinstance(step, bf.Challenge)
    answers = answer_map(users["mfa_image"])
    while not any(c.type == "ImageSelection" for c in step.challenges):
        step = step.answer(answers_for(step, answers))
        assert isinstance(step, bf.Challenge)
    item = next(c for c in step.challenges if c.type == "ImageSelection")
    images = item.images
    assert images is not None
    assert len(images) == 16
    for image in images:
        assert isinstance(image, bytes)
        assert image.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(choices_of(item)) == 16
    for choice in choices_of(item):
        assert 3000 <= len(choice) <= 5500
    # The images are counted, not dumped, in the repr.
    assert len(repr(item)) < 1000 and len(repr(step)) < 1000
    # Questions have no images.
    assert all(c.images is None for c in step.challenges if c.type != "ImageSelection")
    session = step.answer(answers_for(step, answers))
    assert isinstance(session, bf.Session)


def test_notebook_view_shows_the_images_as_a_numbered_grid(client: bf.Client, users: dict[str, SandboxUser]) -> None:
    step = client.authorize(INSTITUTION, "mfa_image", PASSWORD)
    assert isinstance(step, bf.Challenge)
    first = step._repr_html_()
    assert "What city were you born in?" in first and "<img" not in first
    step = step.answer(answers_for(step, answer_map(users["mfa_image"])))
    assert isinstance(step, bf.Challenge)
    item = next(c for c in step.challenges if c.type == "ImageSelection")
    html = item._repr_html_()
    assert html.count('<img src="data:image/png;base64,') == 16
    assert "choices[0]" in html and "choices[15]" in html
    # Each image is shown as the bytes it decodes to, in the order of choices.
    assert item.images is not None
    assert base64.b64encode(item.images[7]).decode() in html.split("choices[7]")[0].rsplit("<img", 1)[1]
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
