"""Fixtures of the pytest suite: one sandbox for the session, a fast client on it, its users."""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest

import bankfeed as bf
import datahelpers as dh
from bfhelpers import API_NAMES, Api, SandboxUser, as_user

# A suite started in the background by a non-interactive shell (`cmd &` in a script) inherits
# SIGINT ignored, and Python then raises no KeyboardInterrupt at all: the Ctrl-C tests would fail
# for the way they were started, not for bankfeed. Restored as an interactive start has it (a
# child started by a test then gets the default at exec, and its Python its own handler).
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def sandbox() -> Iterator[bf.Sandbox]:
    """The shared sandbox: every data call answers 202 twice before 200. Its customer has a Tier 2
    package, so every attributes call (a custom set too) answers; the default customer's refusals
    are tested where they are made (tests/python/data/test_data_attributes.py)."""
    sb = bf.Sandbox(pending_polls=2, tier2=True)
    yield sb
    sb.close()


@pytest.fixture
def client(sandbox: bf.Sandbox) -> bf.Client:
    """A client of the shared sandbox that polls fast."""
    return sandbox.client(poll_interval=0.01, poll_timeout=10)


@pytest.fixture(scope="session")
def users(sandbox: bf.Sandbox) -> dict[str, SandboxUser]:
    """The sandbox's users by username."""
    return {user["username"]: user for user in map(as_user, sandbox.users)}


@pytest.fixture
def fresh_sandbox() -> Iterator[bf.Sandbox]:
    """A sandbox of the test's own, for tests that count requests or need a clean state (a Tier 2
    customer, as the shared one)."""
    sb = bf.Sandbox(pending_polls=2, tier2=True)
    yield sb
    sb.close()


@pytest.fixture(scope="module", params=list(dh.SIZES))
def sized(request: pytest.FixtureRequest) -> tuple[str, dh.Fetched]:
    """(size name, data fetched once from a sandbox of that size): empty, one, natural, large."""
    size: str = request.param
    return size, dh.fetched(*dh.SIZES[size])


@pytest.fixture(params=API_NAMES)
def api(request: pytest.FixtureRequest) -> Iterator[Api]:
    """The client a shared case runs against: ``sync`` (bf.Client) or ``async`` (bf.AsyncClient on
    an event loop of the test's own); see bfhelpers.Api."""
    driver = Api(request.param)
    yield driver
    driver.close()
