"""The pytest plugin, as a user's suite meets it: a suite of its own run by pytest in a child, with
bankfeed installed and nothing else configured."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

#: A user's suite: the fixtures, the marker, faults left behind, the async client.
SUITE = textwrap.dedent(
    """
    import asyncio

    import pytest

    import bankfeed as bf

    seen = []


    def test_a_login_on_the_shared_sandbox(bankfeed_sandbox, bankfeed_client):
        seen.append(bankfeed_sandbox)
        assert bankfeed_client.poll_interval == 0.05  # as sb.client()
        session = bankfeed_client.login("FlinksCapital", "greatday_nomfa", "Everyday", save=True)
        assert len(bankfeed_client.investments(session.login_id).positions) > 0
        # Left behind on purpose: the next test must not meet it.
        bankfeed_sandbox.inject({"kind": "status", "status": 503, "operation": "Authorize", "times": 5})


    def test_the_same_sandbox_without_the_faults_of_the_test_before(bankfeed_sandbox, bankfeed_client):
        assert seen == [bankfeed_sandbox]
        assert bankfeed_client.login("FlinksCapital", "greatday_nomfa", "Everyday").request_id


    @pytest.mark.bankfeed_sandbox(logins=5, seed=3)
    def test_a_sandbox_of_its_own(bankfeed_sandbox, bankfeed_client):
        assert bankfeed_sandbox not in seen
        assert bankfeed_sandbox.login_ids == bf.Sandbox.login_ids_for(5, seed=3)
        combined = bf.combine(bankfeed_client.investments_many(bankfeed_sandbox.login_ids))
        assert not combined.errors and len(combined.positions) > 0


    def test_the_async_client(bankfeed_sandbox, bankfeed_async_client):
        async def main():
            return await bankfeed_async_client.login("FlinksCapital", "greatday_nomfa", "Everyday")

        assert asyncio.run(main()).request_id


    @pytest.mark.bankfeed_sandbox(5)
    def test_positional_options_are_refused(bankfeed_sandbox):
        pass


    @pytest.mark.bankfeed_sandbox(lgins=5)
    def test_a_misspelt_option_is_refused(bankfeed_sandbox):
        pass


    @pytest.mark.bankfeed_sandbox(logins=-1)
    def test_a_bad_option_value_is_refused(bankfeed_sandbox):
        pass


    @pytest.mark.bankfeed_sandbox(pending_seconds=1.0, logins=1)
    def test_a_slow_sandbox_is_polled_as_its_own_clients_poll_it(bankfeed_sandbox, bankfeed_client,
                                                               bankfeed_async_client):
        assert bankfeed_client.poll_interval == bankfeed_async_client.poll_interval == 0.1
        before = bankfeed_sandbox.request_count
        bankfeed_client.investments(bankfeed_sandbox.login_ids[0])
        # About ten polls over the second: 86 requests at 0.01 s.
        assert bankfeed_sandbox.request_count - before <= 15


    @pytest.mark.bankfeed_sandbox(logins=3)
    def test_a_marker_without_a_fixture_does_nothing():
        pass
    """
)

#: A suite with a test that closes the session's sandbox, as ``with bankfeed_sandbox:`` would.
CLOSING_SUITE = textwrap.dedent(
    """
    closed = []


    def test_closes_the_shared_sandbox(bankfeed_sandbox):
        closed.append(bankfeed_sandbox)
        bankfeed_sandbox.close()


    def test_after_it(bankfeed_sandbox, bankfeed_client):
        assert bankfeed_sandbox is not closed[0]
        assert bankfeed_client.login("FlinksCapital", "greatday_nomfa", "Everyday").request_id
    """
)

#: A conftest.py giving the session sandbox options of its own.
CONFTEST = textwrap.dedent(
    """
    import pytest

    import bankfeed as bf


    @pytest.fixture(scope="session")
    def bankfeed_shared_sandbox():
        with bf.Sandbox(logins=3, seed=9) as sandbox:
            yield sandbox
    """
)


def run_suite(directory: Path, *args: str) -> str:
    """Runs pytest on ``directory`` as a user would (in a directory of its own: none of this
    project's pytest settings or fixtures apply); its output."""
    child = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=directory,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return child.stdout + child.stderr


def test_a_users_suite_gets_the_sandbox_as_fixtures(tmp_path: Path) -> None:
    (tmp_path / "test_integration.py").write_text(SUITE)
    out = run_suite(tmp_path, "--strict-markers", "test_integration.py")
    assert "6 passed, 1 warning, 3 errors" in out, out
    assert "takes keyword options only (those of bf.Sandbox), got 1 positional" in out, out
    assert "@pytest.mark.bankfeed_sandbox: no option 'lgins' (did you mean 'logins'?)" in out, out
    assert "on a test that uses no bankfeed fixture" in out, out


def test_a_mistake_in_the_marker_is_one_line_naming_the_marker_and_the_option(tmp_path: Path) -> None:
    (tmp_path / "test_integration.py").write_text(SUITE)
    out = run_suite(tmp_path, "-k", "refused")
    assert "3 errors" in out, out
    assert "\n@pytest.mark.bankfeed_sandbox: logins must be an int from 0 to 1000000, got -1\n" in out, out
    # No traceback through the plugin, and not the ConfigError it replaces above it.
    assert "pytest_plugin.py" not in out, out
    assert "During handling" not in out and "direct cause" not in out, out


def test_a_marker_warns_only_on_a_test_that_runs(tmp_path: Path) -> None:
    (tmp_path / "test_integration.py").write_text(
        SUITE + "\n\n@pytest.mark.skip\n@pytest.mark.bankfeed_sandbox(logins=3)\ndef test_skipped():\n    pass\n"
    )
    out = run_suite(tmp_path, "-k", "without_a_fixture or skipped")
    assert "1 passed, 1 skipped" in out and "1 warning" in out, out
    out = run_suite(tmp_path, "-k", "not without_a_fixture")
    assert "does nothing" not in out and "warning" not in out, out


def test_a_test_that_closes_the_shared_sandbox_is_told_and_the_next_gets_a_new_one(tmp_path: Path) -> None:
    (tmp_path / "test_closing.py").write_text(CLOSING_SUITE)
    out = run_suite(tmp_path)
    assert "2 passed, 1 error" in out, out
    assert "ERROR at teardown of test_closes_the_shared_sandbox" in out, out
    assert (
        "\nthis test closed the session's shared sandbox (bankfeed_sandbox); the tests after it get a new one. "
        "A test that wants a sandbox of its own, to close or to change, is marked @pytest.mark.bankfeed_sandbox(...)\n"
    ) in out, out
    assert "the sandbox is closed" not in out and "TransportError" not in out, out


def test_a_conftest_sandbox_closed_by_a_test_fails_the_next_ones_saying_why(tmp_path: Path) -> None:
    # The plugin does not know the options of a conftest's fixture, so it cannot start it again.
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_closing.py").write_text(CLOSING_SUITE)
    out = run_suite(tmp_path)
    assert "1 passed, 2 errors" in out, out
    assert "the tests after it cannot use it (the plugin cannot start your bankfeed_shared_sandbox again)" in out, out
    assert (
        "\nthe session's shared sandbox is closed: test_closing.py::test_closes_the_shared_sandbox closed it, "
        "and the plugin cannot start your bankfeed_shared_sandbox fixture again\n"
    ) in out, out
    assert "the sandbox is closed" not in out and "TransportError" not in out, out


def test_a_conftest_sets_the_options_of_the_session_sandbox(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_shared.py").write_text(
        "import bankfeed as bf\n\n"
        "def test_it(bankfeed_sandbox, bankfeed_client):\n"
        "    assert bankfeed_sandbox.login_ids == bf.Sandbox.login_ids_for(3, seed=9)\n"
        "    assert bankfeed_client.investments(bankfeed_sandbox.login_ids[0]).positions is not None\n"
    )
    out = run_suite(tmp_path, "test_shared.py")
    assert "1 passed" in out, out


def test_the_plugin_can_be_turned_off(tmp_path: Path) -> None:
    (tmp_path / "test_off.py").write_text("def test_needs_it(bankfeed_client):\n    pass\n")
    out = run_suite(tmp_path, "-p", "no:bankfeed", "test_off.py")
    assert "fixture 'bankfeed_client' not found" in out, out


#: A suite that steers a sandbox in another process through the admin API.
REMOTE_SUITE = textwrap.dedent(
    """
    import bankfeed as bf

    seen = []


    def test_a_process_of_its_own(bankfeed_remote_sandbox):
        seen.append(bankfeed_remote_sandbox)
        assert isinstance(bankfeed_remote_sandbox, bf.RemoteSandbox)
        bankfeed_remote_sandbox.reset()
        with bankfeed_remote_sandbox.client() as client:
            client.login("FlinksCapital", "greatday_nomfa", "Everyday")
        logins = [r for r in bankfeed_remote_sandbox.requests if r["operation"] == "Authorize"]
        assert [r["authorize"] for r in logins] == ["credentials"]
        # Left behind on purpose: the next test must not meet it.
        bankfeed_remote_sandbox.inject({"kind": "status", "status": 503, "times": None})


    def test_the_same_process_without_the_faults_of_the_test_before(bankfeed_remote_sandbox):
        assert seen == [bankfeed_remote_sandbox] and bankfeed_remote_sandbox.faults == []
    """
)


def test_a_users_suite_steers_a_sandbox_process(tmp_path: Path) -> None:
    (tmp_path / "test_remote.py").write_text(REMOTE_SUITE)
    out = run_suite(tmp_path, "test_remote.py")
    assert "2 passed" in out, out
