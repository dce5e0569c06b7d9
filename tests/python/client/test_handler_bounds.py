"""A login's ``on_challenge`` handler cannot hold its call past the call's bounds
(docs/architecture.md#challenge-handlers), and what a handler returns fails as itself.

- The call's ``deadline`` and the client's ``close()`` end the call while its handler still runs,
  for ``Client`` and ``AsyncClient`` alike, with a plain handler or an ``async def`` one. A plain
  handler's thread is left to finish on its own, and what it returns is dropped; an ``async
  def`` handler's task is cancelled. Before, the call waited for the handler (4 s with
  ``deadline=1``).
- An exception raised by the mapping a handler returns (its ``__iter__``, ``__len__`` or
  ``__getitem__``) is raised by the call as it was, with its traceback; it used to become an
  ``InvalidAnswer``.

The handlers here block on an event the test sets at its end, so "still running" is a fact the
test checks, not a guess about timing.
"""

from __future__ import annotations

import asyncio
import threading
import time
import traceback
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

import bankfeed as bf
from bfhelpers import AUTHORIZE, GREATDAY, INSTITUTION, PASSWORD, Api, loop_ticks, operations_since

#: Far more than any bound under test: a call that waits for the handler fails the test.
HELD = 30.0
#: What the calls below must end well within; generous for a loaded machine.
PROMPT_END = 10.0


class Blocker:
    """A plain handler that blocks until released (at most :data:`HELD` seconds)."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.returned = threading.Event()

    def __call__(self, challenge: Any) -> dict[str, str]:
        self.entered.set()
        self.release.wait(HELD)
        self.returned.set()
        return {prompt: GREATDAY[prompt] for prompt in challenge.prompts}


@pytest.fixture
def blocker() -> Iterator[Blocker]:
    handler = Blocker()
    yield handler
    handler.release.set()


def test_the_deadline_ends_a_call_whose_plain_handler_still_runs(
    api: Api, sandbox: bf.Sandbox, blocker: Blocker
) -> None:
    client = api.client(sandbox, deadline=1)
    started = time.monotonic()
    with pytest.raises(bf.TransportError, match="deadline"):
        api.run(client.login(INSTITUTION, "Greatday", PASSWORD, on_challenge=blocker))
    assert time.monotonic() - started < PROMPT_END
    assert blocker.entered.is_set() and not blocker.returned.is_set(), "the handler was still running"
    blocker.release.set()
    assert blocker.returned.wait(5), "the handler's thread finishes on its own"


def test_close_from_another_thread_ends_a_call_whose_plain_handler_still_runs(
    api: Api, sandbox: bf.Sandbox, blocker: Blocker
) -> None:
    client = api.client(sandbox)

    def close_once_asked() -> None:
        blocker.entered.wait(HELD)
        client.close()

    threading.Thread(target=close_once_asked, daemon=True).start()
    started = time.monotonic()
    with pytest.raises(bf.ClientClosed):
        api.run(client.login(INSTITUTION, "Greatday", PASSWORD, on_challenge=blocker))
    assert time.monotonic() - started < PROMPT_END
    assert not blocker.returned.is_set()


# --- AsyncClient only: the event loop while a handler blocks, a handler that is a task ------


def test_the_loop_goes_on_while_a_plain_handler_blocks_until_the_deadline(
    sandbox: bf.Sandbox, blocker: Blocker
) -> None:
    """A plain handler of an AsyncClient runs off the loop: the loop and the deadline go on."""

    async def main() -> float:
        client = sandbox.async_client(poll_interval=0.01, deadline=1)
        async with loop_ticks(0.05) as ticks:
            started = time.monotonic()
            with pytest.raises(bf.TransportError, match="deadline"):
                await client.login(INSTITUTION, "Greatday", PASSWORD, on_challenge=blocker)
        assert ticks.count > 0, "the loop went on while the handler blocked"
        return time.monotonic() - started

    assert asyncio.run(main()) < PROMPT_END
    assert blocker.entered.is_set() and not blocker.returned.is_set()


def test_the_deadline_cancels_an_async_handler(sandbox: bf.Sandbox) -> None:
    cancelled = threading.Event()

    async def handler(challenge: bf.AsyncChallenge) -> dict[str, str]:
        try:
            await asyncio.sleep(HELD)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return {}

    async def main() -> None:
        client = sandbox.async_client(poll_interval=0.01, deadline=1)
        with pytest.raises(bf.TransportError, match="deadline"):
            await client.login(INSTITUTION, "Greatday", PASSWORD, on_challenge=handler)
        await asyncio.sleep(0.1)

    started = time.monotonic()
    asyncio.run(main())
    assert time.monotonic() - started < PROMPT_END
    assert cancelled.is_set()


def test_close_from_a_task_of_the_loop_ends_an_async_call_whose_plain_handler_blocks(
    sandbox: bf.Sandbox, blocker: Blocker
) -> None:
    """Closed by a task of the call's own loop, not by another thread."""

    async def main() -> None:
        client = sandbox.async_client(poll_interval=0.01)

        async def close_once_asked() -> None:
            await asyncio.to_thread(blocker.entered.wait, HELD)
            client.close()

        closer = asyncio.create_task(close_once_asked())
        with pytest.raises(bf.ClientClosed):
            await client.login(INSTITUTION, "Greatday", PASSWORD, on_challenge=blocker)
        await closer

    started = time.monotonic()
    asyncio.run(main())
    assert time.monotonic() - started < PROMPT_END


class Broken(Exception):
    """What the answers' mapping raises."""


class AnswersThatFail(Mapping[str, str]):
    """The answers to a step, as a mapping whose ``part`` raises."""

    def __init__(self, prompts: list[str], part: str) -> None:
        self.answers = {prompt: GREATDAY[prompt] for prompt in prompts}
        self.part = part

    def fail(self, part: str) -> None:
        if self.part == part:
            raise Broken(f"the answers' {part} failed")

    def __getitem__(self, key: str) -> str:
        self.fail("__getitem__")
        return self.answers[key]

    def __iter__(self) -> Iterator[str]:
        self.fail("__iter__")
        return iter(self.answers)

    def __len__(self) -> int:
        self.fail("__len__")
        return len(self.answers)


@pytest.mark.parametrize("part", ["__iter__", "__len__", "__getitem__"])
def test_the_answers_mappings_own_exception_is_raised_with_its_traceback(
    api: Api, sandbox: bf.Sandbox, part: str
) -> None:
    client = api.client(sandbox)
    handler = api.handler(lambda challenge: AnswersThatFail(challenge.prompts, part))
    before = sandbox.request_count
    with pytest.raises(Broken) as raised:
        api.run(client.login(INSTITUTION, "Greatday", PASSWORD, on_challenge=handler))
    frames = [frame.name for frame in traceback.extract_tb(raised.value.__traceback__)]
    assert "fail" in frames, frames
    # The credentials went out (with their token); no answer did.
    assert operations_since(sandbox, before) == AUTHORIZE


@pytest.mark.parametrize("part", ["__iter__", "__len__", "__getitem__"])
def test_answering_with_such_a_mapping_raises_it_too(api: Api, sandbox: bf.Sandbox, part: str) -> None:
    step = api.run(api.client(sandbox).authorize(INSTITUTION, "Greatday", PASSWORD))
    assert isinstance(step, api.Challenge)
    with pytest.raises(Broken):
        api.run(step.answer(AnswersThatFail(step.prompts, part)))
