"""Hostile Python input: deep or self-referential values, lone surrogates, swapped prompt and answer.

Each is refused with a clear error that names the argument (never an answer), and none may crash
the interpreter: the crash cases run in a subprocess too, so a crash fails the test instead of
killing pytest."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import uuid
from typing import Any

import pytest

import bankfeed as bf
from bfhelpers import GREATDAY, INSTITUTION, PASSWORD, THREE_ROUNDS, raises

LOGIN_ID = str(uuid.UUID(int=7))
CITY = "What city were you born in?"
#: A lone surrogate: a Python str that has no UTF-8 form.
SURROGATE = "\ud800"


def self_containing_dict() -> dict[str, Any]:
    """A dict that contains itself."""
    value: dict[str, Any] = {"AccountCategory": ["Operations"]}
    value["self"] = value
    return value


def self_containing_list() -> dict[str, Any]:
    """A list that contains itself, under a key."""
    items: list[Any] = ["Operations"]
    items.append(items)
    return {"AccountCategory": items}


def deep_list(depth: int) -> list[Any]:
    """A list nested ``depth`` levels deep, built without recursion."""
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


def deep_dict(depth: int) -> dict[str, Any]:
    """A dict nested ``depth`` levels deep, built without recursion."""
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"a": value}
    return value


def shared_twice() -> dict[str, Any]:
    """The same list under two keys: shared, but no cycle."""
    shared = ["Operations"]
    return {"AccountCategory": shared, "Again": [shared, shared]}


HOSTILE: dict[str, tuple[Any, str]] = {
    "self-containing dict": (self_containing_dict(), "contains itself"),
    "self-containing list": (self_containing_list(), "contains itself"),
    "10,000-deep list": (deep_list(10_000), "deeper than 32"),
    "10,000-deep dict": (deep_dict(10_000), "deeper than 32"),
    "33-deep list": (deep_list(32), "deeper than 32"),
    "NaN": ({"x": float("nan")}, "NaN"),
    "a huge int": ({"x": 2**70}, "64 bits"),
    "a non-string key": ({1: "x"}, "not a string"),
    "a surrogate key": ({SURROGATE: "x"}, "lone surrogate"),
    "a surrogate value": ({"x": [SURROGATE]}, "lone surrogate"),
    "an object": ({"x": object()}, "object"),
}


@pytest.mark.parametrize(("value", "part"), list(HOSTILE.values()), ids=list(HOSTILE))
def test_hostile_filters_are_a_config_error(client: bf.Client, sandbox: bf.Sandbox, value: Any, part: str) -> None:
    before = sandbox.request_count
    with raises(bf.ConfigError, field="filters") as info:
        client.attributes(LOGIN_ID, {"Card": ["balance_min"]}, filters=value)
    assert part in str(info.value)
    assert "filters" in str(info.value)
    assert sandbox.request_count == before, "nothing may be sent"


def test_a_session_refuses_hostile_filters_too(client: bf.Client) -> None:
    session = client.authorize(INSTITUTION, "greatday_nomfa", PASSWORD, save=True)
    assert isinstance(session, bf.Session)
    with raises(bf.ConfigError, field="filters"):
        session.attributes({"Card": ["balance_min"]}, filters=self_containing_dict())


def test_depth_32_and_shared_values_are_accepted(client: bf.Client) -> None:
    """The bound is on depth and cycles only: 32 levels, or one list met twice, convert; the
    server then answers as it will (the unknown login is its business, not a ConfigError)."""
    accepted: list[dict[str, Any]] = [{"x": deep_list(30)}, shared_twice()]
    for filters in accepted:
        try:
            client.attributes(LOGIN_ID, {"Card": ["balance_min"]}, filters=filters)
        except bf.ConfigError as exc:
            pytest.fail(f"refused: {exc}")
        except bf.BankfeedError:
            pass  # the unknown login is the server's to refuse


def test_hostile_filters_do_not_crash_a_fresh_interpreter(sandbox: bf.Sandbox) -> None:
    """The same inputs in a process of their own: a crash (exit 139) is a failure here."""
    code = textwrap.dedent(
        f"""
        import sys
        import bankfeed as bf
        sys.setrecursionlimit(100_000)
        client = bf.Client({sandbox.url!r}, {sandbox.customer_id!r})
        cyclic = {{}}
        cyclic["self"] = cyclic
        looped = []
        looped.append(looped)
        deep_list, deep_dict = [], {{}}
        for _ in range(10_000):
            deep_list, deep_dict = [deep_list], {{"a": deep_dict}}
        for value in (cyclic, {{"a": looped}}, deep_list, deep_dict):
            try:
                client.attributes({LOGIN_ID!r}, {{"Card": ["balance_min"]}}, filters=value)
            except bf.ConfigError as exc:
                print("refused:", exc.field)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-2000:]}"
    assert done.stdout.splitlines() == ["refused: filters"] * 4, done.stdout


@pytest.fixture
def greatday(client: bf.Client) -> bf.Challenge:
    """The first challenge of Greatday's three rounds: "What city were you born in?" (Greatday
    itself asks one of its questions, picked with the seed)."""
    step = client.authorize(INSTITUTION, THREE_ROUNDS, PASSWORD)
    assert isinstance(step, bf.Challenge)
    assert step.prompts == [CITY]
    return step


@pytest.mark.parametrize("method", ["answer", "validate"])
def test_an_answer_with_a_lone_surrogate_is_refused(greatday: bf.Challenge, sandbox: bf.Sandbox, method: str) -> None:
    before = sandbox.request_count
    for bad in (f"Montr{SURROGATE}al", [f"Montr{SURROGATE}al"]):
        answers = {CITY: bad}
        with raises(bf.InvalidAnswer, prompt=CITY, extra_secrets=["Montr"]) as info:
            getattr(greatday, method)(answers)
        assert "surrogate" in str(info.value)
    assert sandbox.request_count == before, "nothing may be sent"


def test_a_prompt_key_with_a_lone_surrogate_is_refused(greatday: bf.Challenge, sandbox: bf.Sandbox) -> None:
    before = sandbox.request_count
    with raises(bf.InvalidAnswer, prompt="answers") as info:
        greatday.answer({CITY: "Montreal", f"What city{SURROGATE}?": "Montreal"})
    assert "surrogate" in str(info.value)
    assert sandbox.request_count == before


@pytest.mark.parametrize("method", ["answer", "validate"])
def test_swapped_prompt_and_answer_never_echo_the_answer(greatday: bf.Challenge, method: str) -> None:
    swapped = {GREATDAY[CITY]: CITY}
    with raises(bf.InvalidAnswer, prompt="answers", extra_secrets=[GREATDAY[CITY]]) as info:
        getattr(greatday, method)(swapped)
    text = str(info.value)
    assert "not one of the prompts" in text
    assert CITY in text, "the server's prompts are listed"


def test_a_swapped_key_of_the_wrong_type_is_not_echoed(greatday: bf.Challenge) -> None:
    """A shape error names the key only when it is a prompt."""
    with raises(bf.InvalidAnswer, prompt="answers", extra_secrets=["Montreal"]):
        greatday.validate({"Montreal": 42})  # type: ignore[dict-item]  # the run-time check is under test
    with raises(bf.InvalidAnswer, prompt=CITY):
        greatday.validate({CITY: 42})  # type: ignore[dict-item]  # likewise


def test_a_handler_that_swaps_is_not_echoed(client: bf.Client) -> None:
    def handler(challenge: bf.Challenge) -> dict[str, str]:
        return {GREATDAY[prompt]: prompt for prompt in challenge.prompts}

    with raises(bf.InvalidAnswer, prompt="answers", extra_secrets=list(GREATDAY.values())):
        client.login(INSTITUTION, "Greatday", PASSWORD, on_challenge=handler)


@pytest.mark.parametrize(
    "groups", [{"Card": self_containing_list()["AccountCategory"]}, deep_dict(10_000), {"Card": deep_list(10_000)}]
)
def test_hostile_attribute_groups_are_a_config_error(client: bf.Client, groups: Any) -> None:
    with raises(bf.ConfigError, field="attributes"):
        client.attributes(LOGIN_ID, groups)


def test_hostile_answers_are_refused(greatday: bf.Challenge, sandbox: bf.Sandbox) -> None:
    looped: list[Any] = ["Montreal"]
    looped.append(looped)
    itself: dict[str, Any] = {}
    itself[CITY] = itself
    before = sandbox.request_count
    for answers in ({CITY: looped}, {CITY: deep_list(10_000)}, itself):
        with raises(bf.InvalidAnswer, prompt=CITY, extra_secrets=["Montreal"]):
            greatday.answer(answers)
    assert sandbox.request_count == before
