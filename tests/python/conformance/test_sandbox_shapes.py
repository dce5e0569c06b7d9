"""The sandbox's default answers have the recorded shapes (tests/corpus): the same keys, in the
same order, with values of the same JSON types, for every operation the recordings show. The
requests are sent as a hand-written client sends them (``rawhelpers.Raw``: urllib, no bankfeed),
so what is compared is what any client would read (docs/sandbox.md)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

import bankfeed as bf
from rawhelpers import Raw
from recordedserver import corpus_names, recorded


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def differences(expected: Any, got: Any, path: str = "$") -> list[str]:
    """Where ``got`` is not in the shape of ``expected``: keys and their order in every object,
    JSON types of the values (a null on either side is taken as a nullable field), and the first
    item of every array present in both."""
    if expected is None or got is None:
        return []
    if _kind(expected) != _kind(got):
        return [f"{path}: {_kind(got)}, recorded {_kind(expected)}"]
    if isinstance(expected, dict):
        if list(expected) != list(got):
            return [f"{path}: keys {list(got)}, recorded {list(expected)}"]
        return [line for key in expected for line in differences(expected[key], got[key], f"{path}.{key}")]
    if isinstance(expected, list) and expected and got:
        return differences(expected[0], got[0], f"{path}[0]")
    return []


@pytest.fixture(scope="module")
def sandbox() -> Iterator[bf.Sandbox]:
    """A sandbox with its defaults, except a cached Authorize that asks a question (the recorded
    challenged cached read is one of the shapes)."""
    with bf.Sandbox(cached_challenges="always") as sb:
        yield sb


@pytest.fixture(scope="module")
def answers(sandbox: bf.Sandbox) -> dict[str, tuple[int, dict[str, Any]]]:
    """The sandbox's answer for each corpus file, by the corpus file's name."""
    raw = Raw(sandbox)
    got: dict[str, tuple[int, dict[str, Any]]] = {}
    got["authorize-203"] = asked = raw.login("Greatday", Save=True)
    prompt = asked[1]["SecurityChallenges"][0]["Prompt"]
    answer = {"What city were you born in?": "Montreal", "What is the best country on earth?": "Canada"}.get(
        prompt, "Triangle"
    )
    got["authorize-200"] = opened = raw.authorize(
        {"RequestId": asked[1]["RequestId"], "SecurityResponses": {prompt: [answer]}}
    )
    login_id = opened[1]["Login"]["Id"]
    got["authorize-cached-203"] = cached = raw.authorize({"LoginId": login_id, "MostRecentCached": True})
    cached_prompt = cached[1]["SecurityChallenges"][0]["Prompt"]
    cached_answer = {"What city were you born in?": "Montreal", "What is the best country on earth?": "Canada"}.get(
        cached_prompt, "Triangle"
    )
    got["authorize-answer-200-without-login"] = session = raw.authorize(
        {
            "LoginId": login_id,
            "MostRecentCached": False,
            "RequestId": cached[1]["RequestId"],
            "SecurityResponses": {cached_prompt: [cached_answer]},
        }
    )
    request_id = session[1]["RequestId"]
    got["pending-202-template"] = raw.send("POST", "/GetAccountsDetail", {"RequestId": request_id})
    status, detail = got["pending-202-template"]
    while status == 202:
        status, detail = raw.send("GET", f"/GetAccountsDetailAsync/{request_id}")
    got["accounts-detail-200"] = (status, detail)
    # The recorded summary with Login carries the session's Tag: a session opened with one.
    status, tagged = raw.login("greatday_nomfa", Tag="nightly")
    assert status == 200, tagged
    got["accounts-summary-200-with-login"] = raw.send("POST", "/GetAccountsSummary", {"RequestId": tagged["RequestId"]})
    got["statements-200"] = raw.send("POST", "/GetStatements", {"RequestId": request_id})
    got["error-session-nonexistent-400"] = raw.send("POST", "/GetStatements", {"RequestId": str(uuid.uuid4())})
    return got


#: Recorded answers the sandbox sends in another recorded variant (docs/sandbox.md lists each as
#: a difference): the staging transcript's summary, without Login and account Type; the sandbox
#: sends the Ruby fixtures' summary, with them.
VARIANTS = {"accounts-summary-200"}

#: The corpus files the sandbox's answers are compared with: every recorded one but the variants.
COMPARED = [
    "authorize-203",
    "authorize-200",
    "authorize-cached-203",
    "authorize-answer-200-without-login",
    "pending-202-template",
    "accounts-detail-200",
    "accounts-summary-200-with-login",
    "statements-200",
    "error-session-nonexistent-400",
]


def is_a_recording(name: str) -> bool:
    """Whether a corpus file was recorded from the service (the others are documented shapes)."""
    source = str(recorded(name)["source"])
    return "recorded bodies" in source or "test fixtures" in source


def test_every_recorded_corpus_file_is_compared() -> None:
    # A recording added to the corpus must be compared here too, or named a variant.
    assert {name for name in corpus_names() if is_a_recording(name)} == set(COMPARED) | VARIANTS


@pytest.mark.parametrize("name", COMPARED)
def test_the_sandbox_answers_in_the_recorded_shape(name: str, answers: dict[str, tuple[int, dict[str, Any]]]) -> None:
    expected = recorded(name)
    status, body = answers[name]
    assert status == expected["status"], body
    assert differences(expected["body"], body) == []


def test_the_shapes_are_compared_key_for_key() -> None:
    # The comparison itself: another order, a missing key or another type is a difference.
    template = recorded("pending-202-template")["body"]
    assert differences(template, template) == []
    assert differences(template, dict(reversed(list(template.items())))) != []
    assert differences(template, {k: v for k, v in template.items() if k != "Links"}) != []
    assert differences(template, {**template, "HttpStatusCode": "202"}) != []
    assert differences(recorded("authorize-200")["body"], recorded("authorize-answer-200-without-login")["body"]) != []


def test_the_default_202_names_the_template_and_login_ids_are_sequential(
    answers: dict[str, tuple[int, dict[str, Any]]],
) -> None:
    _, pending = answers["pending-202-template"]
    assert pending["Links"] == recorded("pending-202-template")["body"]["Links"]
    login_id = answers["authorize-200"][1]["Login"]["Id"]
    assert uuid.UUID(login_id).version is None, login_id  # minted as production mints them
    assert uuid.UUID(answers["authorize-200"][1]["RequestId"]).version == 4
