"""The pytest plugin's cassettes and test tiers (docs/cassettes.md#in-pytest,
docs/cassettes.md#one-suite-three-tiers), as a user's suite meets them: a suite of its own run by
pytest in a child. A session recorded against the sandbox replays with no sandbox and gives the
same tables; a stale cassette (unplayed interactions, too old) is reported; each tier picks its
client and skips, with its reason, what it cannot run."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import bankfeed as bf
from bfhelpers import GREATDAY, INSTITUTION, PASSWORD
from datahelpers import CASSETTE_DISGUISED_COLUMNS

#: The user's suite: a login answered, account detail polled through its 202s, the investments,
#: every table written to the file ``$OUT`` names, with what the run saw of its cassette and of
#: the sandbox. ``$SHORT`` stops after the login, leaving recorded interactions unplayed.
PORTFOLIO = textwrap.dedent(
    """
    import asyncio
    import json
    import os

    import pytest

    import bankfeed as bf

    GREATDAY = GREATDAY_ANSWERS


    @pytest.mark.bankfeed_cassette
    def test_positions(bankfeed_client, bankfeed_cassette, request):
        session = bankfeed_client.login("FlinksCapital", "Greatday", "Everyday", on_challenge=bf.answers(GREATDAY))
        tables = {}
        if not os.environ.get("SHORT"):
            accounts = session.accounts_detail(with_transactions=True, days="Days90")
            investments = session.investments()
            tables = {
                "accounts": accounts.accounts.to_records(),
                "transactions": accounts.transactions.to_records(),
                "positions": investments.positions.to_records(),
            }
        seen = {"tables": tables, "played": bankfeed_cassette.play_count(), "base_url": bankfeed_client.base_url}
        if request.config.getoption("bankfeed_target") == "sandbox":
            seen["sandbox_requests"] = request.getfixturevalue("bankfeed_sandbox").request_count
        with open(os.environ["OUT"], "w") as out:
            json.dump(seen, out, default=str)


    @pytest.mark.bankfeed_cassette
    def test_institutions_async(bankfeed_async_client):
        async def main():
            return await bankfeed_async_client.institutions()

        assert asyncio.run(main())
    """
).replace("GREATDAY_ANSWERS", repr(GREATDAY))

#: Where the suite's cassettes are, from its rootdir.
CASSETTE = Path("tests/cassettes/test_portfolio/test_positions.yaml")
ASYNC_CASSETTE = Path("tests/cassettes/test_portfolio/test_institutions_async.yaml")

#: A conftest that makes any sandbox the plugin would start an error: a run that passes with it
#: used none.
NO_SANDBOX = textwrap.dedent(
    """
    import os

    import bankfeed as bf

    if os.environ.get("NO_SANDBOX"):
        def refused(*args, **kwargs):
            raise AssertionError("a sandbox was started")

        bf.Sandbox = refused
    """
)

#: A suite of every kind of test a tier sorts: one on a sandbox fixture, one on a sandbox-only
#: user, one with sandbox options, one on the session sandbox through a fixture of the user's,
#: one on the client alone, and one that is not bankfeed's at all.
TIERS = textwrap.dedent(
    """
    import os

    import pytest

    import bankfeed as bf


    @pytest.fixture(scope="module")
    def usernames(bankfeed_shared_sandbox):
        return [user["username"] for user in bankfeed_shared_sandbox.users]


    def test_a_fault(bankfeed_sandbox, bankfeed_client):
        bankfeed_sandbox.inject({"kind": "status", "status": 503, "operation": "Authorize", "times": 1})
        with pytest.raises(bf.RetryLater):
            bankfeed_client.login("FlinksCapital", "greatday_nomfa", "Everyday")


    @pytest.mark.bankfeed_sandbox_only("mfa_image is a user of the sandbox only")
    def test_a_sandbox_user(bankfeed_client):
        assert bankfeed_client.base_url.startswith("http://127.0.0.1:")


    @pytest.mark.bankfeed_sandbox(pending_polls=3)
    def test_sandbox_options(bankfeed_client):
        assert bankfeed_client.base_url.startswith("http://127.0.0.1:")


    def test_the_users(usernames):
        assert "mfa_image" in usernames


    def test_the_client(bankfeed_client):
        assert bankfeed_client.base_url.startswith(os.environ["EXPECTED_URL"])
        assert bankfeed_client.customer_id == "43387ca6-0391-4c82-857d-70d95f087ecb"
        assert "api_key='***'" in repr(bankfeed_client) and "secret_key='***'" in repr(bankfeed_client)
        if os.environ.get("EXPECTED_INVESTMENTS_URL"):
            assert bankfeed_client.investments_base_url == os.environ["EXPECTED_INVESTMENTS_URL"]


    def test_not_bankfeeds():
        pass
    """
)

#: The variables of a live run, removed from the child's environment unless a test sets them.
LIVE_VARIABLES = (
    "BANKFEED_BASE_URL",
    "BANKFEED_INVESTMENTS_BASE_URL",
    "BANKFEED_CUSTOMER_ID",
    "BANKFEED_API_KEY",
    "BANKFEED_SECRET_KEY",
)


def run_suite(directory: Path, *args: str, **variables: str) -> str:
    """Runs pytest on ``directory`` as a user would, with ``variables`` in its environment and
    none of the live tier's unless given; its output. The child imports this bankfeed."""
    env = {name: value for name, value in os.environ.items() if name not in LIVE_VARIABLES}
    package_root = str(Path(bf.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join([package_root, *filter(None, [env.get("PYTHONPATH")])])
    env.update(variables)
    child = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", *args],
        cwd=directory,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    return child.stdout + child.stderr


def portfolio_suite(directory: Path, ini: str = "") -> Path:
    """The portfolio suite in ``directory``, with a pytest.ini (its rootdir) holding ``ini``."""
    (directory / "tests").mkdir()
    (directory / "tests" / "test_portfolio.py").write_text(PORTFOLIO)
    (directory / "tests" / "conftest.py").write_text(NO_SANDBOX)
    (directory / "pytest.ini").write_text(f"[pytest]\n{ini}\n")
    return directory


def seen(path: Path) -> dict[str, Any]:
    """What the portfolio test wrote of its run."""
    result: dict[str, Any] = json.loads(path.read_text())
    return result


def recorded(directory: Path, ini: str = "") -> dict[str, Any]:
    """The portfolio suite, recorded against the sandbox (``--bankfeed-record-mode=once``)."""
    portfolio_suite(directory, ini)
    out = run_suite(directory, "--bankfeed-record-mode=once", OUT=str(directory / "recorded.json"))
    assert "2 passed" in out, out
    assert (directory / CASSETTE).exists() and (directory / ASYNC_CASSETTE).exists(), out
    return seen(directory / "recorded.json")


def kept(tables: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """The tables without the columns a cassette disguises."""
    return {
        name: [{key: value for key, value in row.items() if key not in CASSETTE_DISGUISED_COLUMNS} for row in rows]
        for name, rows in tables.items()
    }


def test_a_suite_recorded_against_the_sandbox_replays_with_no_sandbox_and_gives_the_same_tables(
    tmp_path: Path,
) -> None:
    live = recorded(tmp_path)
    assert live["played"] == [0, 0], "a recording replays nothing"
    assert live["sandbox_requests"] > 0 and all(live["tables"].values())
    written = (tmp_path / CASSETTE).read_text()
    assert "Everyday" not in written and "REDACTED" in written, "the password never reaches the file"

    # The sandbox tier, record mode none (the default): the cassette answers, the sandbox sees nothing.
    out = run_suite(tmp_path, OUT=str(tmp_path / "replayed.json"))
    assert "2 passed" in out, out
    replayed = seen(tmp_path / "replayed.json")
    assert replayed["sandbox_requests"] == 0, "the sandbox got no request"
    assert replayed["played"][0] == replayed["played"][1] == live["sandbox_requests"]
    assert kept(replayed["tables"]) == kept(live["tables"])

    # The cassettes tier: no sandbox may start (the conftest makes it an error), and the same tables.
    out = run_suite(tmp_path, "--bankfeed-target=cassettes", OUT=str(tmp_path / "cassettes.json"), NO_SANDBOX="1")
    assert "2 passed" in out, out
    again = seen(tmp_path / "cassettes.json")
    assert again["tables"] == replayed["tables"] and again["played"] == replayed["played"]
    assert again["base_url"] == "http://127.0.0.1:9"
    assert (tmp_path / CASSETTE).read_text() == written, "a replay writes nothing"


def test_a_cassette_missing_under_record_mode_none_fails_naming_the_file_and_how_to_record_it(tmp_path: Path) -> None:
    portfolio_suite(tmp_path)
    for tier in ("sandbox", "cassettes"):
        out = run_suite(tmp_path, f"--bankfeed-target={tier}", "-k", "positions", OUT=str(tmp_path / "x.json"))
        assert "1 error" in out, out
        assert (
            f"\ncassette {CASSETTE.as_posix()} does not exist, and record mode none only replays: record it against "
            "the sandbox with `pytest --bankfeed-record-mode=once tests/test_portfolio.py::test_positions`\n"
        ) in out, out
        assert "Traceback" not in out and "pytest_plugin.py" not in out, out


def test_a_cassette_with_unplayed_interactions_fails_the_test_under_fail_unplayed(tmp_path: Path) -> None:
    live = recorded(tmp_path)
    total = live["sandbox_requests"]
    # The test no longer asks for the accounts and investments it recorded.
    out = run_suite(tmp_path, "--bankfeed-fail-unplayed", "-k", "positions", OUT=str(tmp_path / "x.json"), SHORT="1")
    assert "1 failed" in out, out
    played = seen(tmp_path / "x.json")["played"][0]
    assert 0 < played < total
    assert (
        f"\ncassette {CASSETTE.as_posix()}: {total - played} of its {total} recorded interactions were not played "
        "(--bankfeed-fail-unplayed): the test no longer sends them; "
        "record it anew with --bankfeed-record-mode=rewrite\n"
    ) in out, out
    # Without the option it passes; every interaction played passes with it; the ini says the same.
    out = run_suite(tmp_path, "-k", "positions", OUT=str(tmp_path / "x.json"), SHORT="1")
    assert "1 passed" in out, out
    out = run_suite(tmp_path, "--bankfeed-fail-unplayed", OUT=str(tmp_path / "x.json"))
    assert "2 passed" in out, out
    (tmp_path / "pytest.ini").write_text("[pytest]\nbankfeed_fail_unplayed = true\n")
    out = run_suite(tmp_path, "-k", "positions", OUT=str(tmp_path / "x.json"), SHORT="1")
    assert "1 failed" in out and "were not played" in out, out


def test_a_committed_cassette_holding_a_secret_fails_its_test_before_it_replays(tmp_path: Path) -> None:
    recorded(tmp_path)
    cassette = tmp_path / CASSETTE
    text = cassette.read_text()
    # Edited by hand: the password put back where the recording wrote its placeholder.
    edited = re.sub(r"(Password: )\S+", r"\1Everyday", text, count=1)
    assert edited != text, text
    cassette.write_text(edited)
    out = run_suite(tmp_path, "-k", "positions", OUT=str(tmp_path / "x.json"))
    assert "1 error" in out and f"cassette {CASSETTE.as_posix()} is not as a recording writes it: " in out, out
    assert "Password" in out and "Everyday" not in out, "the finding names the field, never the value"
    assert not (tmp_path / "x.json").exists(), "the test did not run"


def test_a_cassette_older_than_the_age_allowed_warns_or_fails(tmp_path: Path) -> None:
    recorded(tmp_path)
    path = tmp_path / CASSETTE
    text = path.read_text()
    stamps = re.findall(r"recorded_at: (\S+)", text)
    assert stamps, "the cassette says when each interaction was recorded"
    # The first interaction is made old, as a hand would leave a cassette recorded long ago.
    path.write_text(text.replace(f"recorded_at: {stamps[0]}", "recorded_at: 2020-01-02T03:04:05Z", 1))
    args = ("-k", "positions", "-W", "default")
    out = run_suite(tmp_path, "--bankfeed-cassette-max-age=30", *args, OUT=str(tmp_path / "x.json"))
    assert "1 passed, 1 deselected, 1 warning" in out, out
    assert re.search(
        rf"OldCassetteWarning: cassette {CASSETTE.as_posix()} holds an interaction recorded \d+ days ago "
        r"\(2020-01-02T03:04:05Z\), more than --bankfeed-cassette-max-age=30: record it anew with "
        r"--bankfeed-record-mode=rewrite",
        out,
    ), out
    out = run_suite(tmp_path, "--bankfeed-cassette-max-age=30", "--bankfeed-old-cassettes=fail", *args, OUT="x")
    assert "1 error" in out and "more than --bankfeed-cassette-max-age=30" in out, out
    # Young enough, or no age asked: nothing said.
    out = run_suite(tmp_path, "--bankfeed-cassette-max-age=100000", *args, OUT=str(tmp_path / "x.json"))
    assert "1 passed" in out and "warning" not in out, out
    (tmp_path / "pytest.ini").write_text("[pytest]\nbankfeed_cassette_max_age = 30\nbankfeed_old_cassettes = fail\n")
    out = run_suite(tmp_path, *args, OUT=str(tmp_path / "x.json"))
    assert "1 error" in out and "more than --bankfeed-cassette-max-age=30" in out, out


def test_a_mistaken_option_stops_the_run_naming_it(tmp_path: Path) -> None:
    portfolio_suite(tmp_path)
    out = run_suite(tmp_path, "--bankfeed-cassette-max-age=soon")
    assert "ERROR: --bankfeed-cassette-max-age must be a number of days greater than 0, got 'soon'" in out, out
    out = run_suite(tmp_path, "--bankfeed-target=cassettes", "--bankfeed-record-mode=once")
    assert "--bankfeed-record-mode=once cannot be used with --bankfeed-target=cassettes, which only replays" in out
    out = run_suite(tmp_path, "--bankfeed-record-mode=sometimes")
    assert "invalid choice: 'sometimes'" in out, out
    assert "passed" not in out and "failed" not in out, out


def tier_suite(directory: Path) -> Path:
    """The suite of every kind of test a tier sorts."""
    (directory / "test_tiers.py").write_text(TIERS)
    (directory / "pytest.ini").write_text("[pytest]\n")
    return directory


#: The reason each sandbox-only test is skipped for at a tier other than the sandbox.
SANDBOX_ONLY = {
    "test_a_fault": "uses the bankfeed_sandbox fixture, which only --bankfeed-target=sandbox has",
    "test_a_sandbox_user": "sandbox only: mfa_image is a user of the sandbox only",
    "test_the_users": "uses the bankfeed_shared_sandbox fixture, which only --bankfeed-target=sandbox has",
}


def skipped(out: str) -> dict[str, str]:
    """The tests a verbose run (``-vv``) reports skipped, and the reason it gives for each."""
    return dict(re.findall(r"^test_tiers\.py::(\w+) SKIPPED \((.*)\) +\[", out, re.MULTILINE))


#: A verbose run, each test on a line of its own with its whole skip reason.
VERBOSE = ("-vv",)
WIDE = {"COLUMNS": "1000"}


def test_the_sandbox_tier_runs_every_test_against_the_sandbox(tmp_path: Path) -> None:
    # The markers are declared: --strict-markers takes them.
    out = run_suite(tier_suite(tmp_path), "--strict-markers", EXPECTED_URL="http://127.0.0.1:")
    assert "6 passed" in out and "skipped" not in out, out


def test_the_cassettes_tier_skips_with_its_reason_every_test_that_needs_the_sandbox(tmp_path: Path) -> None:
    out = run_suite(tier_suite(tmp_path), "--bankfeed-target=cassettes", *VERBOSE, NO_SANDBOX="1", **WIDE)
    assert "1 passed, 5 skipped" in out, out
    tier = "--bankfeed-target=cassettes: "
    reasons = skipped(out)
    for name, reason in SANDBOX_ONLY.items():
        assert reasons[name] == tier + reason, out
    assert reasons["test_the_client"] == (
        f"{tier}no cassette to replay: mark it @pytest.mark.bankfeed_cassette and record it once with "
        "`pytest --bankfeed-record-mode=once test_tiers.py::test_the_client`"
    ), out
    # Its sandbox options are no matter to a replay: only its missing cassette skips it.
    assert reasons["test_sandbox_options"].startswith(f"{tier}no cassette to replay"), out


#: A login of a user without a challenge, on the tier's client.
LOGIN = textwrap.dedent(
    """
    import pytest


    @pytest.mark.bankfeed_cassette
    def test_login(bankfeed_client):
        assert bankfeed_client.login("FlinksCapital", "greatday_nomfa", "Everyday").login_id
    """
)


def test_the_cassettes_tier_sends_a_token_call_only_when_the_recording_has_one(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_login.py").write_text(LOGIN)
    path = tmp_path / "tests" / "cassettes" / "test_login" / "test_login.yaml"
    path.parent.mkdir(parents=True)
    # Recorded by a client without a secret key, which asks for no token; a note of the team's
    # names the call all the same, and a replay must not send it.
    with bf.Sandbox(auth=False) as sb, sb.client(cassette=path, record_mode="once") as client:
        client.login(INSTITUTION, "greatday_nomfa", PASSWORD)
    path.write_text("# Recorded with no secret key: no GenerateAuthorizeToken call.\n" + path.read_text())
    out = run_suite(tmp_path, "--bankfeed-target=cassettes")
    assert "1 passed" in out, out

    # Recorded by a client with one, the replay sends the token call too.
    with bf.Sandbox() as sb, sb.client(cassette=path, record_mode="rewrite") as client:
        client.login(INSTITUTION, "greatday_nomfa", PASSWORD)
    assert "/GenerateAuthorizeToken" in path.read_text()
    out = run_suite(tmp_path, "--bankfeed-target=cassettes", "--bankfeed-fail-unplayed")
    assert "1 passed" in out, out


def test_the_live_tier_skips_what_needs_the_sandbox_and_builds_a_client_of_the_test_instance(tmp_path: Path) -> None:
    keys = {"BANKFEED_API_KEY": "live-api-key-0001", "BANKFEED_SECRET_KEY": "live-secret-key-0002"}
    out = run_suite(
        tier_suite(tmp_path),
        "--bankfeed-target=live",
        *VERBOSE,
        EXPECTED_URL="https://toolbox-api.private.fin.ag",
        EXPECTED_INVESTMENTS_URL="https://toolbox-wealth-api.private.fin.ag",
        **keys,
        **WIDE,
    )
    # test_the_client builds its client and sends nothing: this machine cannot reach the service.
    assert "2 passed, 4 skipped" in out, out
    tier = "--bankfeed-target=live: "
    reasons = skipped(out)
    for name, reason in SANDBOX_ONLY.items():
        assert reasons[name] == tier + reason, out
    assert reasons["test_sandbox_options"] == (
        f"{tier}@pytest.mark.bankfeed_sandbox(...) gives it a sandbox's options, which the service has not"
    ), out
    assert not any(key in out for key in keys.values()), "a key never shows"


def test_the_live_tier_without_keys_fails_naming_the_variables(tmp_path: Path) -> None:
    tier_suite(tmp_path)
    out = run_suite(tmp_path, "--bankfeed-target=live", "-k", "test_the_client", EXPECTED_URL="https://")
    assert "1 error" in out, out
    assert (
        "\n--bankfeed-target=live needs BANKFEED_API_KEY and BANKFEED_SECRET_KEY set: the keys of the public test "
        "instance (docs/sandbox.md#keys) or of the instance BANKFEED_BASE_URL names; keys are never options\n"
    ) in out, out
    out = run_suite(
        tmp_path, "--bankfeed-target=live", "-k", "test_the_client", EXPECTED_URL="https://", BANKFEED_API_KEY="k-1234"
    )
    assert "needs BANKFEED_SECRET_KEY set" in out and "k-1234" not in out, out


def test_the_live_tier_sends_the_keys_of_the_environment_to_the_host_it_names(tmp_path: Path) -> None:
    # A sandbox stands in for the service: it asks for keys of its own, which only the environment gives.
    portfolio_suite(tmp_path)
    api_key, secret_key = "live-api-key-0001", "live-secret-key-0002"
    with bf.Sandbox(pending_polls=1, api_key=api_key, secret_key=secret_key) as sb:
        variables = {
            "BANKFEED_BASE_URL": sb.url,
            "BANKFEED_CUSTOMER_ID": sb.customer_id,
            "BANKFEED_API_KEY": api_key,
            "BANKFEED_SECRET_KEY": secret_key,
        }
        live = ("--bankfeed-target=live", "-k", "positions", "--bankfeed-record-mode=once")
        out = run_suite(tmp_path, *live, OUT=str(tmp_path / "live.json"), **variables)
        assert "1 passed" in out, out
        assert seen(tmp_path / "live.json")["base_url"] == sb.url and sb.request_count > 0
        written = (tmp_path / CASSETTE).read_text()
        assert api_key not in written and secret_key not in written, "the keys never reach the cassette"

        # A wrong key from the environment is the service's refusal: the keys come from there.
        wrong = {**variables, "BANKFEED_SECRET_KEY": "not-the-secret-key"}
        out = run_suite(tmp_path, *live[:3], "--bankfeed-record-mode=rewrite", OUT="x", **wrong)
        assert "1 failed" in out and "You must provide a valid auth key" in out, out
        assert "not-the-secret-key" not in out, out


def test_recording_another_instance_at_the_live_tier_needs_the_run_to_opt_in(tmp_path: Path) -> None:
    (tmp_path / "test_live.py").write_text(
        "import pytest\n\n\n"
        "@pytest.mark.bankfeed_cassette\n"
        "def test_it(bankfeed_client):\n"
        "    assert 'record_mode=\"once\"' in repr(bankfeed_client)\n"
    )
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    variables = {
        "BANKFEED_BASE_URL": "https://bank.example",
        "BANKFEED_CUSTOMER_ID": "43387ca6-0391-4c82-857d-70d95f087ecb",
        "BANKFEED_API_KEY": "live-api-key-0001",
        "BANKFEED_SECRET_KEY": "live-secret-key-0002",
    }
    out = run_suite(tmp_path, "--bankfeed-target=live", "--bankfeed-record-mode=once", **variables)
    assert "1 error" in out, out
    assert "allow_live_record must be set to record the cassette" in out, out
    assert "a run opts in with --bankfeed-allow-live-record" in out, out
    # Opted in, the client is built on its cassette (the test sends nothing).
    out = run_suite(
        tmp_path, "--bankfeed-target=live", "--bankfeed-record-mode=once", "--bankfeed-allow-live-record", **variables
    )
    assert "1 passed" in out, out
    # Without a record mode, a live run uses no cassette: the marked test goes to the service.
    (tmp_path / "test_live.py").write_text(
        "import pytest\n\n\n"
        "@pytest.mark.bankfeed_cassette\n"
        "def test_it(bankfeed_client):\n"
        "    assert 'cassette=' not in repr(bankfeed_client)\n"
        "    assert bankfeed_client.base_url == 'https://bank.example'\n"
    )
    out = run_suite(tmp_path, "--bankfeed-target=live", **variables)
    assert "1 passed" in out, out


#: Tests that print the path of their cassette: the default one of a test, of a class's test
#: with parameters, and the marker's own, by position and by keyword; and a marker with two paths.
PATHS = textwrap.dedent(
    """
    import pytest


    @pytest.mark.bankfeed_cassette
    def test_plain(bankfeed_cassette):
        print("PATH", bankfeed_cassette.path)


    class TestGroup:
        @pytest.mark.bankfeed_cassette
        @pytest.mark.parametrize("kind", ["a/b", "c"])
        def test_param(self, bankfeed_cassette, kind):
            print("PATH", bankfeed_cassette.path)


    @pytest.mark.bankfeed_cassette("fixtures/shared.yaml")
    def test_given(bankfeed_cassette):
        print("PATH", bankfeed_cassette.path)


    @pytest.mark.bankfeed_cassette(path="fixtures/other.yaml")
    def test_given_by_keyword(bankfeed_cassette):
        print("PATH", bankfeed_cassette.path)


    @pytest.mark.bankfeed_cassette("a.yaml", "b.yaml")
    def test_two_paths(bankfeed_cassette):
        pass
    """
)


def test_each_test_has_a_cassette_of_its_own_under_tests_cassettes_unless_the_marker_names_one(
    tmp_path: Path,
) -> None:
    (tmp_path / "tests" / "api").mkdir(parents=True)
    (tmp_path / "tests" / "api" / "test_paths.py").write_text(PATHS)
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "test_elsewhere.py").write_text(PATHS.split("\n\n\nclass")[0])
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    out = run_suite(tmp_path, "-s", "--strict-markers", "--bankfeed-record-mode=once")
    assert "6 passed, 1 error" in out, out
    printed = {
        Path(line.split(" ", 1)[1]).relative_to(tmp_path).as_posix() for line in out.splitlines() if "PATH " in line
    }
    assert printed == {
        "tests/cassettes/api/test_paths/test_plain.yaml",
        "tests/cassettes/api/test_paths/TestGroup.test_param[a_b].yaml",
        "tests/cassettes/api/test_paths/TestGroup.test_param[c].yaml",
        "fixtures/shared.yaml",
        "fixtures/other.yaml",
        # Outside tests/: its path from the rootdir.
        "tests/cassettes/checks/test_elsewhere/test_plain.yaml",
    }, out
    assert "\n@pytest.mark.bankfeed_cassette takes one path at most (positional or path=), got 2 positional\n" in out

    (tmp_path / "pytest.ini").write_text("[pytest]\nbankfeed_cassette_dir = recorded\n")
    out = run_suite(tmp_path, "-s", "--bankfeed-record-mode=once", "-k", "test_plain")
    printed = {
        Path(line.split(" ", 1)[1]).relative_to(tmp_path).as_posix() for line in out.splitlines() if "PATH " in line
    }
    assert printed == {
        "recorded/tests/api/test_paths/test_plain.yaml",
        "recorded/checks/test_elsewhere/test_plain.yaml",
    }, out
