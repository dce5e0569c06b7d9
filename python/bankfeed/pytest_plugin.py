"""The sandbox, cassettes and test tiers as pytest fixtures, for a suite that tests its own
integration with bankfeed (docs/sandbox.md#in-your-own-tests, docs/cassettes.md#in-pytest).

pytest loads this plugin by itself wherever bankfeed is installed (the ``pytest11`` entry point;
``-p no:bankfeed`` turns it off). It starts nothing until a test asks for one of its fixtures:

- ``bankfeed_sandbox``: a running :class:`bankfeed.Sandbox`, one for the whole test session,
  with its injected faults cleared after each test. A test marked
  ``@pytest.mark.bankfeed_sandbox(**options)`` gets one of its own instead, made with
  ``bf.Sandbox(**options)`` and closed after it (for ``logins=``, ``seed=``, ``pending_polls=``,
  or state it changes, such as a deletion). A test that closes the shared one gets an error at
  its teardown saying so, and the tests after it get a new one with the same options;
- ``bankfeed_client``: a client of the tier ``--bankfeed-target`` names, closed after the test:
  ``sandbox`` (the default), ``sb.client()`` of that sandbox, which polls every 0.05 s, or every
  tenth of the sandbox's ``pending_seconds`` when that is longer; ``cassettes``, a client that
  replays the test's cassette and never reaches the network; ``live``, a client of the service's
  public test instance with the keys of ``BANKFEED_API_KEY`` and ``BANKFEED_SECRET_KEY``. A test
  the tier cannot run (one that asks for a sandbox fixture, is marked
  ``@pytest.mark.bankfeed_sandbox_only(reason)``, or, at ``cassettes``, has no cassette) is
  skipped with its reason;
- ``bankfeed_async_client``: the same as a ``bf.AsyncClient``, for async tests (pytest-asyncio,
  anyio's asyncio backend, or ``asyncio.run`` in the test; not trio);
- ``bankfeed_cassette``: the ``bf.Cassette`` of a test marked ``@pytest.mark.bankfeed_cassette``
  (``tests/cassettes/{module}/{test}.yaml``, or the marker's path), open for the whole test, so
  that every client it builds records into it or replays from it as ``--bankfeed-record-mode``
  says (``none``, replay only, by default). ``--bankfeed-fail-unplayed`` fails a test that leaves
  some of its interactions unplayed, ``--bankfeed-cassette-max-age=DAYS`` warns of (with
  ``--bankfeed-old-cassettes=fail``, fails) a cassette recorded longer ago;
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


    @pytest.mark.bankfeed_cassette  # recorded once with --bankfeed-record-mode=once
    def test_my_positions(bankfeed_client: bf.Client) -> None:
        session = bankfeed_client.login("FlinksCapital", "greatday_nomfa", "Everyday")
        assert len(session.investments().positions) > 0

The tier, cassette and record code is in ``_pytest_targets.py`` and ``_pytest_cassettes.py``;
this module declares the options, markers and hooks and is the entry point.
"""

from __future__ import annotations

import difflib
import inspect
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pytest

import bankfeed as bf
from bankfeed import _pytest_cassettes as cassettes
from bankfeed import _pytest_targets as targets
from bankfeed._pytest_cassettes import OldCassetteWarning, bankfeed_cassette

# pytest finds a plugin's fixtures among its module's names: the block every marked test runs in.
from bankfeed._pytest_cassettes import _bankfeed_cassette_block as _bankfeed_cassette_block

__all__ = [
    "OldCassetteWarning",
    "bankfeed_async_client",
    "bankfeed_cassette",
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

_Client = TypeVar("_Client", bf.Client, bf.AsyncClient)


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


def pytest_addoption(parser: pytest.Parser) -> None:
    """The tier, the record mode and the checks of cassettes (docs/cassettes.md#in-pytest)."""
    group = parser.getgroup("bankfeed", "bankfeed: the sandbox, cassettes and test tiers (docs/cassettes.md)")
    group.addoption(
        "--bankfeed-target",
        choices=cassettes.TARGETS,
        default="sandbox",
        help="where bankfeed_client sends its requests: sandbox (the embedded sandbox, the default), "
        "cassettes (each test's cassette, replayed; never the network) or live (the service's public test "
        "instance, keys from BANKFEED_API_KEY and BANKFEED_SECRET_KEY)",
    )
    group.addoption(
        "--bankfeed-record-mode",
        choices=cassettes.RECORD_MODES,
        default="none",
        help="the record mode of the cassettes of tests marked bankfeed_cassette: none (replay only, the "
        "default), once, new_episodes, all or rewrite",
    )
    group.addoption(
        "--bankfeed-allow-live-record",
        action="store_true",
        help="let a cassette record a host that is neither loopback nor the public test instance "
        "(a live Authorize can count against a bank's lockout)",
    )
    group.addoption(
        "--bankfeed-fail-unplayed",
        action="store_true",
        default=None,
        help="fail a test that replays its cassette without playing every interaction it holds "
        "(ini: bankfeed_fail_unplayed)",
    )
    group.addoption(
        "--bankfeed-cassette-max-age",
        metavar="DAYS",
        default=None,
        help="warn of a replayed cassette with an interaction recorded more than DAYS days ago "
        "(ini: bankfeed_cassette_max_age)",
    )
    group.addoption(
        "--bankfeed-old-cassettes",
        choices=cassettes.OLD_CASSETTE_ACTIONS,
        default=None,
        help="what a cassette older than --bankfeed-cassette-max-age does: warn (the default) or fail "
        "the test (ini: bankfeed_old_cassettes)",
    )
    parser.addini("bankfeed_fail_unplayed", "as --bankfeed-fail-unplayed", type="bool", default=False)
    parser.addini("bankfeed_cassette_max_age", "as --bankfeed-cassette-max-age (days)", default="")
    parser.addini("bankfeed_old_cassettes", "as --bankfeed-old-cassettes (warn or fail)", default="warn")
    parser.addini(
        "bankfeed_cassette_dir",
        "the folder of the default cassettes, from the rootdir",
        default=cassettes.DEFAULT_CASSETTE_DIR,
    )


def pytest_configure(config: pytest.Config) -> None:
    """Declares the markers, so that ``--strict-markers`` accepts them, and checks the options
    once: a mistake stops the run before any test, naming the option."""
    config.addinivalue_line(
        "markers",
        "bankfeed_sandbox(**options): give this test a bankfeed sandbox of its own, bf.Sandbox(**options)",
    )
    config.addinivalue_line(
        "markers",
        "bankfeed_cassette(path=None): record this test's bankfeed requests into a cassette, or replay them "
        "from it (default tests/cassettes/{module}/{test}.yaml)",
    )
    config.addinivalue_line(
        "markers",
        "bankfeed_sandbox_only(reason): this test needs the bankfeed sandbox (a user or a fault only it has); "
        "skipped, with the reason, at --bankfeed-target=cassettes and live",
    )
    config.stash[cassettes.SETTINGS] = _settings(config)


def _settings(config: pytest.Config) -> cassettes.Settings:
    """The cassette and tier options, the command line's over the ini file's."""
    target = config.getoption("bankfeed_target", default="sandbox")
    record_mode = config.getoption("bankfeed_record_mode", default="none")
    if target == "cassettes" and record_mode != "none":
        raise pytest.UsageError(
            f"--bankfeed-record-mode={record_mode} cannot be used with --bankfeed-target=cassettes, which only "
            "replays: record with --bankfeed-target=sandbox (the default) or live"
        )
    fail_unplayed = config.getoption("bankfeed_fail_unplayed", default=None)
    if fail_unplayed is None:
        fail_unplayed = bool(config.getini("bankfeed_fail_unplayed"))
    max_age = config.getoption("bankfeed_cassette_max_age", default=None)
    max_age_source = "--bankfeed-cassette-max-age"
    if max_age is None:
        max_age = str(config.getini("bankfeed_cassette_max_age")).strip() or None
        max_age_source = "bankfeed_cassette_max_age"
    old = config.getoption("bankfeed_old_cassettes", default=None)
    old = old or str(config.getini("bankfeed_old_cassettes")).strip()
    if old not in cassettes.OLD_CASSETTE_ACTIONS:
        raise pytest.UsageError(f"bankfeed_old_cassettes must be warn or fail, got {old!r}")
    folder = Path(str(config.getini("bankfeed_cassette_dir")).strip() or cassettes.DEFAULT_CASSETTE_DIR)
    return cassettes.Settings(
        target=target,
        record_mode=record_mode,
        allow_live_record=bool(config.getoption("bankfeed_allow_live_record", default=False)),
        fail_unplayed=bool(fail_unplayed),
        max_age_days=_days(max_age, max_age_source),
        old_cassettes=old,
        cassette_dir=folder if folder.is_absolute() else config.rootpath / folder,
    )


def _days(value: str | None, source: str) -> float | None:
    """A number of days greater than 0, or None when not given."""
    if value is None:
        return None
    try:
        days = float(value)
    except ValueError:
        days = -1.0
    if not days > 0:
        raise pytest.UsageError(f"{source} must be a number of days greater than 0, got {value!r}")
    return days


@pytest.fixture(scope="session")
def bankfeed_shared_sandbox(request: pytest.FixtureRequest) -> Iterator[bf.Sandbox]:
    """The session's sandbox, started on first use; ``bankfeed_sandbox`` is the one to ask for."""
    targets.require_sandbox(request, "bankfeed_shared_sandbox")
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
    targets.require_sandbox(request, "bankfeed_sandbox")
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


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Marks skipped, with its reason, each test that the tier cannot run (a sandbox fixture, a
    user or a fault only the sandbox has, no cassette to replay): never run against a server it
    was not written for. A skip marker, so that the report shows the test's own line."""
    options = cassettes.settings(config)
    for item in items:
        reason = targets.skip_reason(item, options)
        if reason is not None:
            item.add_marker(pytest.mark.skip(reason=reason))


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Warns of a marker on a test that takes no bankfeed fixture: it would be silently unused.

    At setup rather than at collection, so that a test deselected (``-k``, ``-m``) or skipped
    does not warn."""
    if item.get_closest_marker("bankfeed_sandbox") is None:
        return
    if not {"bankfeed_sandbox", *targets.CLIENT_FIXTURES} & set(getattr(item, "fixturenames", ())):
        item.warn(
            pytest.PytestWarning(
                f"{MARKER} on a test that uses no bankfeed fixture "
                "(bankfeed_sandbox, bankfeed_client or bankfeed_async_client) does nothing"
            )
        )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """Fails a test that passed but left interactions of its cassette unplayed, under
    ``--bankfeed-fail-unplayed``."""
    result = yield
    cassettes.check_played(item)
    return result


@pytest.fixture
def bankfeed_client(request: pytest.FixtureRequest) -> Iterator[bf.Client]:
    """A client of the tier (``--bankfeed-target``), on the test's cassette when it has one,
    closed after the test. At the sandbox tier ``bankfeed_sandbox.client()``: it polls as the
    sandbox's own clients do (every 0.05 s, or a tenth of ``pending_seconds`` when that is longer)."""
    sandbox, options = targets.client_options(request)
    client = _built(request, lambda: sandbox.client(**options) if sandbox is not None else bf.Client(**options))
    with client:
        yield client


@pytest.fixture
def bankfeed_async_client(request: pytest.FixtureRequest) -> Iterator[bf.AsyncClient]:
    """The same as ``bankfeed_client``, a :class:`bankfeed.AsyncClient`, closed after the test.

    Made outside any event loop, it works in whichever loop the test runs."""
    sandbox, options = targets.client_options(request)
    client = _built(
        request, lambda: sandbox.async_client(**options) if sandbox is not None else bf.AsyncClient(**options)
    )
    try:
        yield client
    finally:
        client.close()


def _built(request: pytest.FixtureRequest, build: Callable[[], _Client]) -> _Client:
    """The client ``build`` makes; a refusal (a variable of the live tier, a cassette that is not
    one) fails the test with bankfeed's one line, naming the tier, without the plugin's frames."""
    try:
        return build()
    except (bf.ConfigError, bf.CassetteError) as exc:
        problem = f"--bankfeed-target={cassettes.settings(request.config).target}: {exc}"
        if isinstance(exc, bf.ConfigError) and exc.field == "allow_live_record":
            problem += "; a run opts in with --bankfeed-allow-live-record"
    # Out of the except block: pytest would print the exception it replaces above it.
    pytest.fail(problem, pytrace=False)


@pytest.fixture(scope="session")
def bankfeed_sandbox_process(request: pytest.FixtureRequest) -> Iterator[bf.RemoteSandbox]:
    """A sandbox in a process of its own, for the whole session: the one ``BANKFEED_SANDBOX_URL``
    and ``BANKFEED_SANDBOX_ADMIN_TOKEN`` name when both are set (left running at the end),
    otherwise one started here with ``--admin`` and stopped at the end."""
    targets.require_sandbox(request, "bankfeed_sandbox_process")
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
