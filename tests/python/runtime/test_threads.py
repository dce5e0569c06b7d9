"""One bf.Client shared by many Python threads: every call succeeds with its own login's data."""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

import bankfeed as bf
from bfhelpers import GREATDAY, INSTITUTION, PASSWORD, assert_investments

THREADS = 16


@pytest.fixture(scope="module")
def many() -> Iterator[bf.Sandbox]:
    """64 saved logins whose data calls answer 202 twice."""
    with bf.Sandbox(logins=4 * THREADS, pending_polls=2) as sb:
        yield sb


def test_sixteen_threads_share_one_client_for_cached_investments(many: bf.Sandbox) -> None:
    client = many.client(poll_interval=0.01, poll_timeout=10)
    start = threading.Barrier(THREADS)

    def fetch(n: int) -> list[str]:
        start.wait(10)  # all at once
        names = []
        for login_id in many.login_ids[n::THREADS]:
            session = client.authorize_cached(login_id)
            assert session.login_id == login_id
            investments = session.investments()
            assert_investments(investments)
            assert investments.request_id is not None
            assert investments.request_id.lower() == session.request_id.lower()
            names.append(str(investments.raw["Login"]["Username"]))
        return names

    with ThreadPoolExecutor(THREADS) as pool:
        results = list(pool.map(fetch, range(THREADS)))
    for n, names in enumerate(results):
        assert names == [f"bulk_{i:05d}" for i in range(n, 4 * THREADS, THREADS)]


def test_threads_log_in_with_handlers_each_in_its_own_context(sandbox: bf.Sandbox) -> None:
    """Handlers run off the waiting threads (docs/architecture.md#challenge-handlers), each in a
    copy of its own caller's context: eight logins at once never see each other's."""
    client = sandbox.client(poll_interval=0.01, poll_timeout=10)
    canned = bf.answers(GREATDAY)
    caller: contextvars.ContextVar[int] = contextvars.ContextVar("caller")

    def login(n: int) -> tuple[int, set[int], set[int], str | None]:
        caller.set(n)
        seen: set[int] = set()
        contexts: set[int] = set()

        def handler(challenge: bf.Challenge) -> dict[str, list[str]]:
            seen.add(threading.get_ident())
            contexts.add(caller.get())
            return canned(challenge)

        session = client.login(INSTITUTION, "Greatday", PASSWORD, on_challenge=handler)
        return n, {threading.get_ident()} & seen, contexts, session.request_id

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(login, range(8)))
    assert all(not on_caller and contexts == {n} for n, on_caller, contexts, _ in results), results
    assert len({request_id for *_, request_id in results}) == 8


def test_bulk_calls_from_several_threads_on_one_client(many: bf.Sandbox) -> None:
    client = many.client(poll_interval=0.01, poll_timeout=10)
    halves = [many.login_ids[: 2 * THREADS], many.login_ids[2 * THREADS :]]

    def fetch(ids: list[str]) -> dict[str, object]:
        return dict(client.investments_many(ids, concurrency=8))

    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(fetch, halves))
    for ids, found in zip(halves, results, strict=True):
        assert set(found) == set(ids)
        assert all(isinstance(result, bf.Investments) for result in found.values())
