"""The error bridge: what reaches Python when building the rich exception fails, when a background
task panics, and that the parsed bodies (``.raw`` and the fields read from it) are built once."""

from __future__ import annotations

import pickle
import uuid
from typing import Any

import pytest

import bankfeed as bf
from bankfeed import _native, errors
from bfhelpers import INSTITUTION, PASSWORD


def test_a_broken_exception_class_still_gives_a_bankfeed_error_with_the_text(
    client: bf.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    login_id = str(uuid.uuid4())
    with pytest.raises(bf.InvalidLogin) as rich:
        client.authorize_cached(login_id)

    def broken(self: errors.InvalidLogin, text: str, **fields: Any) -> None:
        raise RuntimeError("the class could not be built")

    monkeypatch.setattr(errors.InvalidLogin, "__init__", broken)
    with pytest.raises(bf.BankfeedError) as info:
        client.authorize_cached(login_id)
    exc = info.value
    assert type(exc) is bf.BankfeedError, "the bridge's own failure is never what the user gets"
    assert str(exc) == str(rich.value)
    assert isinstance(exc.__cause__, RuntimeError) and "could not be built" in str(exc.__cause__)
    copy = pickle.loads(pickle.dumps(exc))
    assert type(copy) is bf.BankfeedError and str(copy) == str(exc)


def test_the_exception_classes_are_bound_once(client: bf.Client, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(bf.InvalidLogin):  # the first error binds the classes
        client.authorize_cached(str(uuid.uuid4()))
    # Replacing the module's name afterwards does not change what the bridge raises: it kept the class.
    monkeypatch.setattr(errors, "InvalidLogin", errors.SessionError)
    with pytest.raises(bf.ApiError) as info:
        client.authorize_cached(str(uuid.uuid4()))
    assert type(info.value).__name__ == "InvalidLogin"


def test_a_panic_in_a_background_task_carries_its_message() -> None:
    with pytest.raises(bf.BankfeedError) as info:
        _native._panic_in_background("the IO thread fell over")
    assert type(info.value) is bf.BankfeedError
    assert "panicked" in str(info.value) and "the IO thread fell over" in str(info.value)
    _native._panic_in_background("")  # the hook itself works when it does not panic


def test_a_protocol_error_built_by_hand_keeps_its_fields_through_pickle() -> None:
    exc = errors.ProtocolError(
        "DeleteCard: unexpected HTTP 202", operation="DeleteCard", status=202, request_id=None, snippet="{}"
    )
    copy = pickle.loads(pickle.dumps(exc))
    assert (copy.operation, copy.status, copy.request_id, copy.snippet) == ("DeleteCard", 202, None, "{}")
    assert isinstance(copy, bf.BankfeedError) and copy.message == str(exc)


def test_raw_and_its_fields_are_parsed_once(sandbox: bf.Sandbox) -> None:
    client = sandbox.client(poll_interval=0.01, poll_timeout=10)
    session = client.login(INSTITUTION, "greatday_nomfa", PASSWORD, save=True)
    assert session.raw is session.raw
    assert session.login is session.raw["Login"]
    assert session.links is session.raw["Links"]
    assert session.institution == session.raw["Institution"]

    step = client.authorize(INSTITUTION, "Greatday", PASSWORD)
    assert isinstance(step, bf.Challenge)
    assert step.raw is step.raw
    first = step.challenges[0]
    assert first is step.challenges[0] and first.raw is first.raw

    accounts = session.accounts_summary()
    assert accounts.raw is accounts.raw
