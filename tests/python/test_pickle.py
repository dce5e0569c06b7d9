"""Exceptions survive pickle with their type and fields (they cross process pools)."""

from __future__ import annotations

import pickle
from typing import TypeVar

import pytest

import bankfeed as bf
from bfhelpers import GREATDAY, INSTITUTION, PASSWORD

_E = TypeVar("_E", bound=BaseException)


def roundtrip(exc: _E) -> _E:
    copy = pickle.loads(pickle.dumps(exc))
    assert type(copy) is type(exc)
    assert str(copy) == str(exc)
    return copy


def test_an_api_error_from_the_server(client: bf.Client) -> None:
    with pytest.raises(bf.LoginDisabled) as info:
        client.authorize(INSTITUTION, "test_disabled_account", PASSWORD)
    original = info.value
    copy = roundtrip(original)
    for field in ("code", "status", "request_id", "message", "body"):
        assert getattr(copy, field) == getattr(original, field), field
    assert copy.code == "DISABLED_LOGIN" and copy.status == 401
    assert isinstance(copy.body, dict) and copy.body
    assert copy.message
    assert isinstance(copy, bf.ApiError)


def test_an_invalid_security_response_keeps_its_request_id(client: bf.Client) -> None:
    step = client.authorize(INSTITUTION, "Greatday", PASSWORD)
    assert isinstance(step, bf.Challenge)
    with pytest.raises(bf.InvalidSecurityResponse) as info:
        step.answer({"What city were you born in?": "Wrong answer qz"})
    original = info.value
    copy = roundtrip(original)
    assert copy.request_id == step.request_id
    assert (copy.code, copy.status, copy.message, copy.body) == (
        original.code,
        original.status,
        original.message,
        original.body,
    )


def test_invalid_answer(client: bf.Client) -> None:
    step = client.authorize(INSTITUTION, "Greatday", PASSWORD)
    assert isinstance(step, bf.Challenge)
    with pytest.raises(bf.InvalidAnswer) as info:
        step.validate({})
    original = info.value
    copy = roundtrip(original)
    assert copy.prompt == original.prompt == "What city were you born in?"
    assert copy.rule == original.rule and copy.rule
    assert isinstance(copy, ValueError)


def test_pending_timeout() -> None:
    with bf.Sandbox(pending_seconds=30) as sb:
        client = sb.client(poll_interval=0.05, poll_timeout=0.2)
        session = client.authorize(INSTITUTION, "greatday_nomfa", PASSWORD)
        assert isinstance(session, bf.Session)
        with pytest.raises(bf.PendingTimeout) as info:
            session.investments()
        original = info.value
    copy = roundtrip(original)
    assert copy.request_id == original.request_id == session.request_id
    assert copy.waited == original.waited >= 0.2


def test_challenge_required_keeps_its_request_id_but_not_the_challenge(client: bf.Client) -> None:
    with pytest.raises(bf.ChallengeRequired) as info:
        client.login(INSTITUTION, "Greatday", PASSWORD)
    original = info.value
    copy = roundtrip(original)
    assert copy.request_id == original.request_id
    assert copy.challenge is None
    # The original is still answerable.
    assert original.challenge is not None
    assert original.challenge.answer({"What city were you born in?": GREATDAY["What city were you born in?"]})
