"""Exports whose logins include one whose cached read is asked a security question, as the real
service was recorded answering (docs/export.md#logins-asked-a-question), played by the loopback
server in the recorded shapes (``recordedserver``): ``bf.export``, ``bf.aexport``, their run on a
Dask cluster, ``bankfeed export`` and its ``--on-challenge``, and the dlt source.

Without a handler the login fails alone, nothing is answered, and its line in ``_failures.jsonl``
says what the person must do; with one (``on_challenge``, or ``--on-challenge MODULE:NAME`` naming
an importable handler), the export goes on through the question and writes the login.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyarrow")

import pyarrow.dataset

import bankfeed as bf
from recordedserver import ANSWER, ASKED, CUSTOMER, FINE, Recorded, RecordedServer, serving
from recordedserver import CACHED_PROMPT as PROMPT

LOGINS = [FINE[0], ASKED, FINE[1]]
#: Account detail: its tables have a row per login, so the asked login's rows can be seen.
WHAT = ["accounts"]
CANNED = bf.answers({PROMPT: ANSWER})


@pytest.fixture
def server() -> Iterator[RecordedServer]:
    with serving(Recorded(challenged={ASKED}, answer=ANSWER)) as server:
        yield server


def client_of(server: RecordedServer) -> bf.Client:
    return bf.Client(server.url, CUSTOMER, poll_interval=0.01, max_retries=0)


def written(out: Path, table: str = "accounts") -> set[str]:
    """The LoginIds a table of the account kind has rows of."""
    return set(pyarrow.dataset.dataset(out / "accounts" / table).to_table().column("login_id").to_pylist())


def failures(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "_failures.jsonl").read_text().splitlines()]


def assert_no_answer_written(out: Path) -> None:
    """The answer is a secret: no file of the export holds it."""
    for path in out.rglob("*"):
        assert not path.is_file() or ANSWER.encode() not in path.read_bytes(), path


def assert_asked_failed(out: Path, server: RecordedServer) -> None:
    """ASKED failed alone, with a line that says what the person must do; nothing was answered."""
    (line,) = failures(out)
    assert line["login_id"] == ASKED and line["kind"] == "accounts" and line["error"] == "ChallengeRequired"
    # What to do: answer through on_challenge, or reconnect through the widget.
    assert "on_challenge=" in line["message"] and "--on-challenge" in line["message"], line["message"]
    assert "reconnect through the widget" in line["message"], line["message"]
    assert line["request_id"] in line["message"]
    assert written(out) == set(FINE)
    assert server.answered() == []


# --- bf.export and bf.aexport --------------------------------------------------------------------


def test_without_a_handler_the_asked_login_fails_alone_and_says_what_to_do(
    server: RecordedServer, tmp_path: Path
) -> None:
    report = bf.export(client_of(server), LOGINS, tmp_path, what=WHAT)
    assert (report.logins_written, report.logins_failed) == (2, 1)
    ((login_id, error),) = report.failed
    assert login_id == ASKED and isinstance(error, bf.ChallengeRequired) and error.prompts == [PROMPT]
    assert_asked_failed(tmp_path, server)


def test_with_a_handler_the_export_goes_on_through_the_question(server: RecordedServer, tmp_path: Path) -> None:
    report = bf.export(client_of(server), LOGINS, tmp_path, what=WHAT, on_challenge=CANNED)
    assert (report.logins_written, report.logins_failed) == (3, 0), report.failed
    assert written(tmp_path) == set(LOGINS) and written(tmp_path, "transactions") == set(LOGINS)
    (answer,) = server.answered()
    # The asked login's rows came from the session its answer opened.
    rows = pyarrow.dataset.dataset(tmp_path / "accounts" / "accounts").to_table().to_pylist()
    assert {row["request_id"] for row in rows if row["login_id"] == ASKED} == {answer.body["RequestId"]}
    assert (tmp_path / "_failures.jsonl").read_text() == ""
    assert_no_answer_written(tmp_path)


def test_a_resume_with_a_handler_writes_the_login_that_was_asked(server: RecordedServer, tmp_path: Path) -> None:
    bf.export(client_of(server), LOGINS, tmp_path, what=WHAT)
    again = bf.export(client_of(server), LOGINS, tmp_path, what=WHAT, resume=True, on_challenge=CANNED)
    assert (again.logins_written, again.logins_skipped, again.logins_failed) == (1, 2, 0)
    assert written(tmp_path) == set(LOGINS)


def test_aexport_without_and_with_an_async_handler(server: RecordedServer, tmp_path: Path) -> None:
    client = bf.AsyncClient(server.url, CUSTOMER, poll_interval=0.01, max_retries=0)

    async def on_challenge(challenge: bf.AsyncChallenge) -> dict[str, str]:
        await asyncio.sleep(0)
        return {PROMPT: ANSWER} if challenge.login_id == ASKED else {}

    async def both() -> tuple[bf.ExportReport, bf.ExportReport]:
        without = await bf.aexport(client, LOGINS, tmp_path / "without", what=WHAT)
        assert_asked_failed(tmp_path / "without", server)
        answered = await bf.aexport(client, LOGINS, tmp_path / "with", what=WHAT, on_challenge=on_challenge)
        return without, answered

    without, answered = asyncio.run(both())
    assert (without.logins_written, without.logins_failed) == (2, 1)
    assert (answered.logins_written, answered.logins_failed) == (3, 0), answered.failed
    assert written(tmp_path / "with") == set(LOGINS)


def test_a_handler_that_is_not_callable_is_refused_before_anything_is_written(
    server: RecordedServer, tmp_path: Path
) -> None:
    with pytest.raises(TypeError, match="on_challenge must be a callable"):
        bf.export(client_of(server), LOGINS, tmp_path / "out", what=WHAT, on_challenge={PROMPT: ANSWER})  # type: ignore[arg-type]
    assert not (tmp_path / "out").exists() and server.log == []


# --- On a Dask cluster ---------------------------------------------------------------------------


@pytest.mark.cluster
def test_the_partitions_of_a_cluster_run_answer_with_the_handler_and_fail_without(
    server: RecordedServer, tmp_path: Path
) -> None:
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(n_workers=1, processes=True, threads_per_worker=1, dashboard_address=None) as local,
        distributed.Client(local) as dask_client,
    ):
        without = bf.export(client_of(server), LOGINS, tmp_path / "without", what=WHAT, scheduler=dask_client)
        assert (without.logins_written, without.logins_failed) == (2, 1)
        assert [(login, type(error)) for login, error in without.failed] == [(ASKED, bf.ChallengeRequired)]
        assert_asked_failed(tmp_path / "without", server)
        answered = bf.export(
            client_of(server), LOGINS, tmp_path / "with", what=WHAT, scheduler=dask_client, on_challenge=CANNED
        )
        assert (answered.logins_written, answered.logins_failed) == (3, 0), answered.failed
        assert written(tmp_path / "with") == set(LOGINS)
        # A handler that cannot go to the workers is refused before anything is written.
        lock = threading.Lock()

        class Locked:
            def __call__(self, challenge: bf.Challenge) -> dict[str, str]:
                with lock:
                    return {PROMPT: ANSWER}

            def __reduce__(self) -> Any:
                return (Locked, (), {"lock": lock})

        sent = len(server.log)
        with pytest.raises(bf.ConfigError) as refused:
            bf.export(
                client_of(server), LOGINS, tmp_path / "locked", what=WHAT, scheduler=dask_client, on_challenge=Locked()
            )
        assert refused.value.field == "on_challenge" and "pickle" in refused.value.rule
        assert not (tmp_path / "locked").exists() and len(server.log) == sent


# --- bankfeed export --on-challenge ----------------------------------------------------------------

HANDLERS = f"""
import bankfeed as bf

on_challenge = bf.answers({{{PROMPT!r}: {ANSWER!r}}})


def by_hand(challenge):
    return {{challenge.prompts[0]: [{ANSWER!r}]}}


async def awaited(challenge):
    return {{}}


not_a_handler = {{"answers": "none here"}}
"""


def command(server: RecordedServer, cwd: Path, *args: str, quiet: bool = True) -> subprocess.CompletedProcess[str]:
    """``bankfeed export`` run as a console script runs: the current directory not on the path
    unless the command puts it there (``PYTHONSAFEPATH``, where Python has it)."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith("BANKFEED_")}
    environment["PYTHONSAFEPATH"] = "1"
    flags = ["--base-url", server.url, "--customer-id", CUSTOMER, "--poll-interval", "0.01", "--max-retries", "0"]
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "bankfeed",
            "export",
            *flags,
            "--what",
            "accounts",
            *(["--quiet"] if quiet else []),
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=environment,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture
def job(tmp_path: Path) -> Path:
    """A job's directory, with its own module of handlers beside it."""
    (tmp_path / "job_answers.py").write_text(HANDLERS)
    return tmp_path


@pytest.mark.parametrize("name", ["on_challenge", "by_hand"])
def test_the_command_answers_with_the_handler_it_names(server: RecordedServer, job: Path, name: str) -> None:
    done = command(server, job, *LOGINS, "--out", "out", "--on-challenge", f"job_answers:{name}", quiet=False)
    assert done.returncode == 0, done.stderr
    assert written(job / "out") == set(LOGINS)
    assert len(server.answered()) == 1
    assert ANSWER not in done.stdout + done.stderr
    assert_no_answer_written(job / "out")


def test_the_command_without_a_handler_says_who_was_asked_and_a_resume_with_one_finishes(
    server: RecordedServer, job: Path
) -> None:
    done = command(server, job, *LOGINS, "--out", "out", quiet=False)
    assert done.returncode == 1, done.stderr
    assert "ChallengeRequired 1" in done.stdout and "asked a security question: 1 logins" in done.stdout, done.stdout
    assert "--on-challenge" in done.stdout
    assert_asked_failed(job / "out", server)
    again = command(server, job, *LOGINS, "--out", "out", "--resume", "--on-challenge", "job_answers:on_challenge")
    assert again.returncode == 0, again.stderr
    assert written(job / "out") == set(LOGINS)


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (ANSWER, "must be MODULE:NAME"),
        (f"{PROMPT}={ANSWER}", "must be MODULE:NAME"),
        ("job_answers", "must be MODULE:NAME"),
        ("no_such_job_module:on_challenge", "the module no_such_job_module, which is not found"),
        ("job_answers:nowhere", "names nowhere in job_answers, which has none"),
        ("job_answers:not_a_handler", "a dict: it must be a handler"),
        ("job_answers:awaited", "an async def"),
    ],
)
def test_a_bad_on_challenge_exits_2_with_one_line_before_anything_is_sent(
    server: RecordedServer, job: Path, value: str, says: str
) -> None:
    done = command(server, job, *LOGINS, "--out", "out", "--on-challenge", value)
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --on-challenge: "), done.stderr
    assert says in lines[0], lines[0]
    # An answer typed where a handler goes is never echoed.
    assert ANSWER not in done.stderr and PROMPT not in done.stderr
    assert server.log == [] and not (job / "out").exists()


# --- The dlt source ----------------------------------------------------------------------------------


def test_the_dlt_source_fails_the_asked_login_without_a_handler_and_loads_it_with_one(
    server: RecordedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dlt = pytest.importorskip("dlt")
    duckdb = pytest.importorskip("duckdb")
    import bankfeed.dlt

    # dlt reports each run to its makers by default; a test run sends nothing anywhere.
    monkeypatch.setenv("RUNTIME__DLTHUB_TELEMETRY", "false")
    database = str(tmp_path / "bankfeed.duckdb")

    def load(**options: Any) -> bankfeed.dlt.BankfeedSource:
        pipeline = dlt.pipeline(
            "bankfeed_challenges",
            destination=dlt.destinations.duckdb(database),
            dataset_name="nightly",
            pipelines_dir=str(tmp_path / "pipelines"),
        )
        source = bankfeed.dlt.source(client_of(server), LOGINS, what=WHAT, **options)
        pipeline.run(source)
        return source

    def loaded() -> set[str]:
        with duckdb.connect(database, read_only=True) as db:
            return {row[0] for row in db.sql("select distinct login_id from nightly.accounts_accounts").fetchall()}

    without = load()
    assert [(login, type(error)) for login, error in without.failures] == [(ASKED, bf.ChallengeRequired)]
    assert loaded() == set(FINE) and server.answered() == []
    answered = load(on_challenge=CANNED)
    assert answered.failures == []
    assert loaded() == set(LOGINS) and len(server.answered()) == 1
