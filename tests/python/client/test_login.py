"""client.login: handlers, ChallengeRequired, the bound of challenge rounds."""

from __future__ import annotations

from typing import NoReturn

import pytest

import bankfeed as bf
from bfhelpers import GREATDAY, INSTITUTION, PASSWORD, complete, is_guid, raises


def test_login_without_a_handler_raises_an_answerable_challenge_required(client: bf.Client) -> None:
    with raises(bf.ChallengeRequired) as info:
        client.login(INSTITUTION, "Greatday", PASSWORD)
    challenge = info.value.challenge
    assert isinstance(challenge, bf.Challenge)
    assert challenge.prompts == ["What city were you born in?"]
    assert info.value.request_id == challenge.request_id
    assert is_guid(challenge.request_id)
    session = complete(challenge, GREATDAY)
    assert isinstance(session, bf.Session)


def test_login_without_a_handler_works_when_nothing_is_asked(client: bf.Client) -> None:
    session = client.login(INSTITUTION, "greatday_nomfa", PASSWORD)
    assert isinstance(session, bf.Session)


class HandlerFailed(Exception):
    pass


@pytest.mark.parametrize("exc", [HandlerFailed("the user gave up"), KeyError("missing")], ids=["custom", "keyerror"])
def test_the_handlers_own_exception_propagates_as_it_was(client: bf.Client, exc: Exception) -> None:
    def handler(challenge: bf.Challenge) -> NoReturn:
        raise exc

    with pytest.raises(type(exc)) as info:
        client.login(INSTITUTION, "Greatday", PASSWORD, on_challenge=handler)
    assert info.value is exc


def test_a_handler_failing_in_a_later_round_propagates_too(client: bf.Client) -> None:
    rounds: list[list[str]] = []

    def handler(challenge: bf.Challenge) -> dict[str, str]:
        rounds.append(challenge.prompts)
        if len(rounds) == 2:
            raise HandlerFailed("round two")
        return {p: GREATDAY[p] for p in challenge.prompts}

    with pytest.raises(HandlerFailed, match="round two"):
        client.login(INSTITUTION, "Greatday", PASSWORD, on_challenge=handler)
    assert rounds == [["What city were you born in?"], ["What is the best country on earth?"]]


def test_the_handler_runs_off_the_calling_thread_in_the_callers_context(client: bf.Client) -> None:
    """So that the call's deadline and close() end it whatever the handler does
    (docs/architecture.md#challenge-handlers); its context variables are the caller's."""
    import contextvars
    import threading

    request: contextvars.ContextVar[str] = contextvars.ContextVar("request")
    request.set("the caller's")
    seen: list[tuple[int, str]] = []

    def handler(challenge: bf.Challenge) -> dict[str, str]:
        seen.append((threading.get_ident(), request.get()))
        return {p: GREATDAY[p] for p in challenge.prompts}

    client.login(INSTITUTION, "Greatday", PASSWORD, on_challenge=handler)
    assert len(seen) == 3
    assert all(ident != threading.get_ident() and value == "the caller's" for ident, value in seen)


def test_the_bound_of_challenge_rounds_raises_too_many_challenges(sandbox: bf.Sandbox) -> None:
    client = bf.Client(sandbox.url, sandbox.customer_id, poll_interval=0.01, max_challenge_rounds=1)
    with raises(bf.TooManyChallenges):
        client.login(INSTITUTION, "Greatday", PASSWORD, on_challenge=bf.answers(GREATDAY))
    # Three rounds fit in three.
    roomy = bf.Client(sandbox.url, sandbox.customer_id, poll_interval=0.01, max_challenge_rounds=3)
    assert isinstance(roomy.login(INSTITUTION, "Greatday", PASSWORD, on_challenge=bf.answers(GREATDAY)), bf.Session)


@pytest.mark.parametrize("blank", ["", "   ", "\t", " \n "], ids=["empty", "spaces", "tab", "newline"])
@pytest.mark.parametrize("field", ["institution", "username", "password"])
def test_blank_credentials_are_refused_before_anything_is_sent(
    fresh_sandbox: bf.Sandbox, field: str, blank: str
) -> None:
    credentials = {"institution": INSTITUTION, "username": "greatday_nomfa", "password": PASSWORD, field: blank}
    client = fresh_sandbox.client()
    with raises(bf.ConfigError, field=field):
        client.authorize(credentials["institution"], credentials["username"], credentials["password"])
    assert fresh_sandbox.request_count == 0
