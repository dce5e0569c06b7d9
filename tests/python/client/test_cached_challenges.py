"""A cached read asked a security question, as the real service was recorded answering one: a 203
to the cached Authorize of a saved login, and the answer's 200 naming no ``Login``
(docs/answering.md#cached-reads-that-ask-a-question). Played by the loopback server answering in
the recorded shapes (``recordedserver``), driven through the public API of both clients.

``authorize_cached`` raises ``bf.ChallengeRequired`` carrying the challenge, whose answer opens a
session of the LoginId asked for. In a bulk call that login's result is its own
``ChallengeRequired`` and the others go on; with ``on_challenge`` (the handler kinds ``login``
takes) it is answered and fetched; without one nothing is answered, nor guessed.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

import bankfeed as bf
from bfhelpers import Api
from recordedserver import ANSWER, ASKED, CUSTOMER, FINE, Recorded, RecordedServer, serving
from recordedserver import CACHED_PROMPT as PROMPT

LOGINS = [FINE[0], ASKED, FINE[1]]
#: The bulk calls, with the options each needs.
CALLS: dict[str, dict[str, Any]] = {
    "investments_many": {},
    "attributes_many": {"package": "income"},
    "accounts_detail_many": {},
}
#: The data request each bulk call sends for a login, once its session is open.
OPERATION = {
    "investments_many": "Investments",
    "attributes_many": "GetIncomeAttributes",
    "accounts_detail_many": "GetAccountsDetail",
}


@pytest.fixture
def server() -> Iterator[RecordedServer]:
    with serving(Recorded(challenged={ASKED}, answer=ANSWER)) as server:
        yield server


def client_of(api: Api, server: RecordedServer) -> Any:  # bf.Client or bf.AsyncClient
    return api.client_at(server.url, CUSTOMER, max_retries=0)


def assert_required(error: object, api: Api) -> Any:
    """``error`` is the ChallengeRequired of ASKED's question; its challenge, ready to answer."""
    assert isinstance(error, bf.ChallengeRequired), repr(error)
    assert error.prompts == [PROMPT]
    challenge = error.challenge
    assert isinstance(challenge, api.Challenge), repr(challenge)
    assert challenge.login_id == ASKED
    assert challenge.prompts == [PROMPT]
    return challenge


def request_of(server: RecordedServer, operation: str, request_id: str) -> Any:
    """The data request of ``operation`` sent on the session ``request_id``."""
    sent = [s for s in server.data_calls() if s.operation == operation and request_id in (s.path + str(s.body))]
    assert len(sent) == 1, [(s.operation, s.path) for s in server.log]
    return sent[0]


# --- One call ----------------------------------------------------------------------------------


def test_authorize_cached_raises_the_challenge_whose_answer_opens_a_session_of_the_login(
    api: Api, server: RecordedServer
) -> None:
    client = client_of(api, server)
    with pytest.raises(bf.ChallengeRequired) as raised:
        api.run(client.authorize_cached(ASKED))
    challenge = assert_required(raised.value, api)
    assert challenge.institution == "FlinksCapital"
    # Raising it answered nothing.
    assert server.answered() == []
    # The 200 of the answer names no Login: the session is of the LoginId asked for.
    session = api.run(challenge.answer({PROMPT: ANSWER}))
    assert session.login_id == ASKED and session.request_id == challenge.request_id
    assert session.login is None
    investments = api.run(session.investments())
    sent = request_of(server, "Investments", session.request_id)
    assert sent.body["LoginId"] == ASKED
    assert investments.request_id == session.request_id
    # A data call on the login raises the same.
    with pytest.raises(bf.ChallengeRequired) as again:
        api.run(client.investments(ASKED))
    assert_required(again.value, api)
    assert len(server.answered()) == 1


def test_a_wrong_answer_keeps_the_challenge_open(api: Api, server: RecordedServer) -> None:
    client = client_of(api, server)
    with pytest.raises(bf.ChallengeRequired) as raised:
        api.run(client.authorize_cached(ASKED))
    challenge = assert_required(raised.value, api)
    with pytest.raises(bf.InvalidSecurityResponse) as wrong:
        api.run(challenge.answer({PROMPT: "Champlain"}))
    assert wrong.value.challenge is not None and wrong.value.challenge.login_id == ASKED
    session = api.run(wrong.value.challenge.answer({PROMPT: ANSWER}))
    assert session.login_id == ASKED


# --- Bulk calls --------------------------------------------------------------------------------


@pytest.mark.parametrize("call", list(CALLS))
def test_without_a_handler_the_asked_login_is_its_own_challenge_required_and_nothing_is_answered(
    api: Api, server: RecordedServer, call: str
) -> None:
    client = client_of(api, server)
    pairs = dict(api.collect(getattr(client, call)(LOGINS, **CALLS[call])))
    assert set(pairs) == set(LOGINS)
    challenge = assert_required(pairs[ASKED], api)
    message = str(pairs[ASKED])
    assert "nothing was answered" in message and "on_challenge=" in message and "client.connect" in message
    assert f"client.{call}" in message
    for login_id in FINE:
        assert not isinstance(pairs[login_id], BaseException), pairs[login_id]
    # Nothing answered, nor guessed: no answer reached the server, and no data call for ASKED.
    assert server.answered() == []
    assert not [s for s in server.data_calls() if challenge.request_id in s.path + str(s.body)]
    # The challenge it carries can still be answered by hand.
    session = api.run(challenge.answer({PROMPT: ANSWER}))
    assert session.login_id == ASKED


@pytest.mark.parametrize("call", list(CALLS))
def test_a_handler_of_canned_answers_answers_the_question_and_the_login_is_fetched(
    api: Api, server: RecordedServer, call: str
) -> None:
    client = client_of(api, server)
    pairs = dict(api.collect(getattr(client, call)(LOGINS, on_challenge=bf.answers({PROMPT: ANSWER}), **CALLS[call])))
    for login_id in LOGINS:
        assert not isinstance(pairs[login_id], BaseException), pairs[login_id]
    (answer,) = server.answered()
    assert answer.body == {"RequestId": answer.body["RequestId"], "SecurityResponses": {PROMPT: [ANSWER]}}
    # The data of the session the answer opened, fetched for the LoginId asked for.
    request_id = answer.body["RequestId"]
    assert pairs[ASKED].request_id == request_id
    sent = request_of(server, OPERATION[call], request_id)
    if call == "investments_many":
        assert sent.body["LoginId"] == ASKED
    if call == "attributes_many":
        assert f"/login/{ASKED}/" in sent.path
    combined = bf.combine(pairs.items())
    assert not combined.errors


@pytest.mark.parametrize("kind", ["async def", "plain def", "canned"])
def test_an_async_client_takes_the_handler_kinds_login_takes(server: RecordedServer, kind: str) -> None:
    """AsyncClient only: an ``async def`` handler runs as a task of the loop that reads the call."""
    client = bf.AsyncClient(server.url, CUSTOMER, poll_interval=0.01, max_retries=0)
    where: list[str] = []

    async def on_loop(challenge: bf.AsyncChallenge) -> dict[str, str]:
        where.append("loop" if asyncio.get_running_loop() is loop else "elsewhere")
        await asyncio.sleep(0.01)
        return {PROMPT: ANSWER}

    def on_a_thread(challenge: bf.AsyncChallenge) -> dict[str, str]:
        where.append(threading.current_thread().name)
        return {PROMPT: ANSWER}

    handler: Any = {"async def": on_loop, "plain def": on_a_thread, "canned": bf.answers({PROMPT: ANSWER})}[kind]

    async def main() -> dict[str, Any]:
        return {login_id: result async for login_id, result in client.investments_many(LOGINS, on_challenge=handler)}

    loop = asyncio.new_event_loop()
    try:
        pairs = loop.run_until_complete(main())
    finally:
        loop.close()
    assert all(not isinstance(result, BaseException) for result in pairs.values()), pairs
    assert len(server.answered()) == 1
    expected = {"async def": ["loop"], "plain def": ["bankfeed on_challenge"], "canned": []}[kind]
    assert where == expected


def test_the_handler_knows_whose_question_it_is(api: Api, server: RecordedServer) -> None:
    client = client_of(api, server)
    held = {ASKED: bf.answers({PROMPT: ANSWER})}
    asked: list[str | None] = []

    def on_challenge(challenge: Any) -> Any:
        asked.append(challenge.login_id)
        return held[challenge.login_id](challenge) if challenge.login_id in held else {}

    pairs = dict(api.collect(client.investments_many(LOGINS, on_challenge=api.handler(on_challenge))))
    assert asked == [ASKED]
    assert all(not isinstance(result, BaseException) for result in pairs.values()), pairs


def test_a_handler_without_the_answer_sends_nothing(api: Api, server: RecordedServer) -> None:
    client = client_of(api, server)
    handler = bf.answers({"What is your favourite colour?": "teal"})
    pairs = dict(api.collect(client.investments_many(LOGINS, on_challenge=handler)))
    error = pairs[ASKED]
    assert isinstance(error, bf.InvalidAnswer) and error.prompt == PROMPT, repr(error)
    assert server.answered() == []
    assert not isinstance(pairs[FINE[0]], BaseException)


def test_a_handler_that_raises_fails_its_login_only(api: Api, server: RecordedServer) -> None:
    client = client_of(api, server)

    def refuse(challenge: Any) -> Any:
        raise LookupError("no answers held for this login")

    pairs = dict(api.collect(client.investments_many(LOGINS, on_challenge=api.handler(refuse))))
    assert isinstance(pairs[ASKED], LookupError)
    assert [not isinstance(pairs[login_id], BaseException) for login_id in FINE] == [True, True]
    assert server.answered() == []


def test_the_handler_is_asked_one_question_at_a_time(api: Api) -> None:
    """Every login asked: the handler, written for one login, is never in two calls at once."""
    asked = {f"{index:08x}-5d84-4e9b-5c21-08dc4be17a90" for index in range(6)}
    with serving(Recorded(challenged=asked, answer=ANSWER)) as server:
        client = client_of(api, server)
        inside = []
        lock = threading.Lock()
        running = [0]

        def slow(challenge: Any) -> Any:
            with lock:
                running[0] += 1
                inside.append(running[0])
            time.sleep(0.02)
            with lock:
                running[0] -= 1
            return {PROMPT: ANSWER}

        pairs = dict(api.collect(client.investments_many(sorted(asked), concurrency=6, on_challenge=slow)))
        assert all(not isinstance(result, BaseException) for result in pairs.values()), pairs
        assert len(inside) == 6 and max(inside) == 1, inside


def test_a_bad_handler_is_refused_before_anything_is_sent(api: Api, server: RecordedServer) -> None:
    client = client_of(api, server)
    with pytest.raises(TypeError, match="on_challenge must be a callable"):
        client.investments_many(LOGINS, on_challenge={PROMPT: ANSWER})
    assert server.log == []


def test_aclose_cancels_an_async_handler_still_answering(server: RecordedServer) -> None:
    """AsyncClient only: an ``async def`` handler is a task of the loop, which ``aclose()`` cancels
    as a single call's end cancels its handler's."""
    client = bf.AsyncClient(server.url, CUSTOMER, poll_interval=0.01, max_retries=0)
    cancelled: list[bool] = []

    async def main() -> Any:
        started = asyncio.Event()

        async def waits(challenge: bf.AsyncChallenge) -> dict[str, str]:
            started.set()
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                cancelled.append(True)
                raise
            return {PROMPT: ANSWER}

        results = client.investments_many([ASKED], on_challenge=waits)
        waiting = asyncio.ensure_future(anext(results))
        await asyncio.wait_for(started.wait(), 10)
        await results.aclose()
        login_id, result = await asyncio.wait_for(waiting, 10)
        for _ in range(100):
            if cancelled:
                break
            await asyncio.sleep(0.01)
        # Seen while the loop runs: asyncio.run cancels whatever task is left when it ends.
        assert cancelled == [True]
        return login_id, result

    login_id, result = asyncio.run(main())
    assert login_id == ASKED and isinstance(result, bf.ClientClosed), repr(result)
    assert server.answered() == []
