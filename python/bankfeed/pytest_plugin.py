"""The sandbox as pytest fixtures, for a suite that tests its own integration with bankfeed.

pytest loads this plugin by itself wherever bankfeed is installed (the ``pytest11`` entry point;
``-p no:bankfeed`` turns it off). It starts nothing until a test asks for one of its fixtures:

- ``bankfeed_sandbox``: a running :class:`bankfeed.Sandbox`, one for the whole test session,
  with its injected faults cleared after each test. A test marked
  ``@pytest.mark.bankfeed_sandbox(**options)`` gets one of its own instead, made with
  ``bf.Sandbox(**options)`` and closed after it (for ``logins=``, ``seed=``, ``pending_polls=``,
  or state it changes, such as a deletion). A test that closes the shared one gets an error at
  its teardown saying so, and the tests after it get a new one with the same options;
- ``bankfeed_client``: ``sb.client()`` of that sandbox, closed after the test: it polls every
  0.05 s, or every tenth of the sandbox's ``pending_seconds`` when that is longer;
- ``bankfeed_async_client``: the same as a ``bf.AsyncClient``, for async tests (pytest-asyncio,
  anyio's asyncio backend, or ``asyncio.run`` in the test; not trio);
- ``bankfeed_shared_sandbox``: the session's sandbox itself, for fixtures of a wider scope than a
  test; a ``conftest.py`` that defines a fixture of this name sets the session sandbox's options;
- ``bankfeed_remote_sandbox``: a :class:`bankfeed.RemoteSandbox`, a sandbox in a process of its
  own steered through its admin API, with its faults cleared after each test: the one at
  ``BANKFEED_SANDBOX_URL`` with the token in ``BANKFEED_SANDBOX_ADMIN_TOKEN`` when both are set
  (a sandbox your harness started with ``--admin``), otherwise one ``python -m bankfeed sandbox
  --admin`` started for the whole session (``bankfeed_sandbox_process``) and stopped at its end.

Example::

    import pytest

    import bankfeed as bf


    def test_my_import(bankfeed_client: bf.Client) -> None:
        session = bankfeed_client.login("FlinksCapital", "greatday_nomfa", "Everyday", save=True)
        assert session.login_id is not None


    @pytest.mark.bankfeed_sandbox(logins=50, seed=7)
    def test_my_nightly_job(bankfeed_sandbox: bf.Sandbox, bankfeed_client: bf.Client) -> None:
        combined = bf.combine(bankfeed_client.investments_many(bankfeed_sandbox.login_ids))
        assert not combined.errors
"""

from __future__ import annotations

import difflib
import inspect
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest

import bankfeed as bf

__all__ = [
    "bankfeed_async_client",
    "bankfeed_client",
    "bankfeed_remote_sandbox",
    "bankfeed_sandbox",
    "bankfeed_sandbox_process",
    "bankfeed_shared_sandbox",
]

#: Where ``bankfeed_sandbox_process`` finds a sandbox process started by someone else.
URL_VARIABLE = "BANKFEED_SANDBOX_URL"
TOKEN_VARIABLE = "BANKFEED_SANDBOX_ADMIN_TOKEN"

#: The marker as a test writes it, which the plugin's messages name.
MARKER = "@pytest.mark.bankfeed_sandbox"


@dataclass
class _Shared:
    """A session sandbox as its tests get it (docs/sandbox.md#in-your-own-tests)."""

    #: The ``bankfeed_shared_sandbox`` fixture's value.
    fixture_value: bf.Sandbox
    #: Starts a sandbox with the fixture's options; None for a conftest's fixture, whose options
    #: the plugin does not know.
    restart: Callable[[], bf.Sandbox] | None
    #: The one tests get: the fixture's, or one started in its place after a test closed it.
    current: bf.Sandbox | None = None
    #: The test that closed it, for the tests after it.
    closed_by: str | None = None


#: Every session sandbox met so far: conftests in two directories may each define one.
_SHARED = pytest.StashKey[list[_Shared]]()


def pytest_configure(config: pytest.Config) -> None:
    """Declares the marker, so that ``--strict-markers`` accepts it."""
    config.addinivalue_line(
        "markers",
        "bankfeed_sandbox(**options): give this test a bankfeed sandbox of its own, bf.Sandbox(**options)",
    )


@pytest.fixture(scope="session")
def bankfeed_shared_sandbox(request: pytest.FixtureRequest) -> Iterator[bf.Sandbox]:
    """The session's sandbox, started on first use; ``bankfeed_sandbox`` is the one to ask for."""
    with bf.Sandbox() as sandbox:
        shared = _Shared(sandbox, restart=bf.Sandbox)
        request.config.stash.setdefault(_SHARED, []).append(shared)
        try:
            yield sandbox
        finally:
            if shared.current is not None:
                # The one started after a test closed this one, if any.
                shared.current.close()


@pytest.fixture
def bankfeed_sandbox(request: pytest.FixtureRequest) -> Iterator[bf.Sandbox]:
    """A running sandbox: the session's (its faults cleared after the test), or, for a test marked
    ``@pytest.mark.bankfeed_sandbox(**options)``, one made with those options for this test."""
    marker = request.node.get_closest_marker("bankfeed_sandbox")
    if marker is None:
        shared = _shared(request)
        sandbox = _running(shared)
        yield sandbox
        if sandbox.closed:
            shared.closed_by = request.node.nodeid
            after = (
                "the tests after it get a new one"
                if shared.restart is not None
                else "the tests after it cannot use it (the plugin cannot start your bankfeed_shared_sandbox again)"
            )
            pytest.fail(
                f"this test closed the session's shared sandbox (bankfeed_sandbox); {after}. "
                f"A test that wants a sandbox of its own, to close or to change, is marked {MARKER}(...)",
                pytrace=False,
            )
        # A fault a test injected and did not use up must not fail the next test.
        sandbox.clear_faults()
        return
    with _own_sandbox(marker) as own:
        yield own


def _shared(request: pytest.FixtureRequest) -> _Shared:
    """The state of the session sandbox this test sees (the nearest ``bankfeed_shared_sandbox``)."""
    fixture_value: bf.Sandbox = request.getfixturevalue("bankfeed_shared_sandbox")
    known = request.config.stash.setdefault(_SHARED, [])
    for shared in known:
        if shared.fixture_value is fixture_value:
            return shared
    # A conftest's own fixture: met here first.
    shared = _Shared(fixture_value, restart=None)
    known.append(shared)
    return shared


def _running(shared: _Shared) -> bf.Sandbox:
    """The session sandbox, started again with the same options when a test closed it; a clear
    error when that cannot be done, rather than every later test failing to connect."""
    sandbox = shared.fixture_value if shared.current is None else shared.current
    if not sandbox.closed:
        return sandbox
    if shared.restart is None:
        by = f"{shared.closed_by} closed it" if shared.closed_by else "a test or fixture closed it"
        pytest.fail(
            f"the session's shared sandbox is closed: {by}, and the plugin cannot start your "
            f"bankfeed_shared_sandbox fixture again",
            pytrace=False,
        )
    shared.current = shared.restart()
    return shared.current


def _own_sandbox(marker: pytest.Mark) -> bf.Sandbox:
    """``bf.Sandbox(**options)`` of a marked test. A mistake in the marker fails the test with one
    line naming the marker and the option, as bankfeed words it: the plugin's frames would only
    hide it."""
    if marker.args:
        pytest.fail(
            f"{MARKER} takes keyword options only (those of bf.Sandbox), got {len(marker.args)} positional",
            pytrace=False,
        )
    options = _sandbox_options()
    for name in marker.kwargs:
        if options and name not in options:
            near = difflib.get_close_matches(name, options, n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            pytest.fail(f"{MARKER}: no option {name!r}{hint}; its options are those of bf.Sandbox", pytrace=False)
    try:
        return bf.Sandbox(**marker.kwargs)
    except (TypeError, bf.ConfigError, OSError) as exc:
        # bankfeed's messages start with the option and never repeat a key's value.
        problem = str(exc)
    # Out of the except block: pytest would print the exception it replaces above it.
    pytest.fail(f"{MARKER}: {problem}", pytrace=False)


def _sandbox_options() -> list[str]:
    """The keyword options of ``bf.Sandbox``; none when its signature cannot be read (bf.Sandbox
    then names an unknown one itself)."""
    try:
        return list(inspect.signature(bf.Sandbox).parameters)
    except (TypeError, ValueError):
        return []


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Warns of a marker on a test that takes no sandbox fixture: it would be silently unused.

    At setup rather than at collection, so that a test deselected (``-k``, ``-m``) or skipped
    does not warn."""
    if item.get_closest_marker("bankfeed_sandbox") is None:
        return
    if "bankfeed_sandbox" not in getattr(item, "fixturenames", ()):
        item.warn(
            pytest.PytestWarning(
                f"{MARKER} on a test that uses no bankfeed fixture "
                "(bankfeed_sandbox, bankfeed_client or bankfeed_async_client) does nothing"
            )
        )


@pytest.fixture
def bankfeed_client(bankfeed_sandbox: bf.Sandbox) -> Iterator[bf.Client]:
    """``bankfeed_sandbox.client()``, closed after the test: it polls as the sandbox's own clients
    do (every 0.05 s, or a tenth of ``pending_seconds`` when that is longer)."""
    with bankfeed_sandbox.client() as client:
        yield client


@pytest.fixture
def bankfeed_async_client(bankfeed_sandbox: bf.Sandbox) -> Iterator[bf.AsyncClient]:
    """``bankfeed_sandbox.async_client()``, closed after the test.

    Made outside any event loop, it works in whichever loop the test runs."""
    client = bankfeed_sandbox.async_client()
    try:
        yield client
    finally:
        client.close()


@pytest.fixture(scope="session")
def bankfeed_sandbox_process() -> Iterator[bf.RemoteSandbox]:
    """A sandbox in a process of its own, for the whole session: the one ``BANKFEED_SANDBOX_URL``
    and ``BANKFEED_SANDBOX_ADMIN_TOKEN`` name when both are set (left running at the end),
    otherwise one started here with ``--admin`` and stopped at the end."""
    url, token = os.environ.get(URL_VARIABLE), os.environ.get(TOKEN_VARIABLE)
    if url and token:
        yield bf.RemoteSandbox(url, token)
        return
    with bf.RemoteSandbox.start() as sandbox:
        yield sandbox


@pytest.fixture
def bankfeed_remote_sandbox(bankfeed_sandbox_process: bf.RemoteSandbox) -> Iterator[bf.RemoteSandbox]:
    """``bankfeed_sandbox_process``, its faults cleared after the test, as ``bankfeed_sandbox``
    clears the in-process one's."""
    yield bankfeed_sandbox_process
    bankfeed_sandbox_process.clear_faults()
