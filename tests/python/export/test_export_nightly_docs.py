"""The nightly recipe works as written (docs/export.md#a-nightly-job, the README's export lines):
the crontab line run on two nights, the resume line, and the lines that read the newest with
bankfeed, DuckDB and pandas, all taken from the pages themselves, against a sandbox given to the
command through ``BANKFEED_*`` as a job's environment gives the service."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import bankfeed as bf

ROOT = Path(__file__).resolve().parents[3]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def section(page: Path, heading: str) -> str:
    text = page.read_text(encoding="utf-8")
    start = text.index(f"\n{heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def blocks(text: str) -> list[tuple[str, str]]:
    return [(match.group(1), match.group(2)) for match in FENCE.finditer(text)]


@pytest.fixture(scope="module")
def sb() -> Iterator[bf.Sandbox]:
    with bf.Sandbox(logins=3, pending_polls=0) as sandbox:
        yield sandbox


@pytest.fixture
def home(sb: bf.Sandbox, tmp_path: Path) -> Path:
    """A user's home for the job: the keys' file the crontab line reads, and its LoginIds."""
    assert sb.api_key and sb.secret_key
    variables = {
        "BANKFEED_BASE_URL": sb.url,
        "BANKFEED_CUSTOMER_ID": sb.customer_id,
        "BANKFEED_API_KEY": sb.api_key,
        "BANKFEED_SECRET_KEY": sb.secret_key,
    }
    (tmp_path / ".bankfeed.env").write_text("".join(f"export {k}={shlex.quote(v)}\n" for k, v in variables.items()))
    (tmp_path / "etl").mkdir()
    (tmp_path / "etl" / "ids.txt").write_text("\n".join(sb.login_ids) + "\n")
    return tmp_path


def shell(line: str, home: Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``line`` run by a shell as cron runs it: the user's home, no ``BANKFEED_*`` but what the
    line sets, ``bankfeed`` on the path."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith("BANKFEED_")}
    environment.update(HOME=str(home), PATH=f"{Path(sys.executable).parent}{os.pathsep}{environment['PATH']}")
    return subprocess.run(
        ["sh", "-c", line], cwd=cwd or home, env=environment, capture_output=True, text=True, timeout=300, check=False
    )


def test_the_crontab_line_runs_night_after_night_and_the_reading_lines_agree(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = blocks(section(ROOT / "docs" / "export.md", "## A nightly job"))
    [cron] = [code for language, code in found if language == "crontab"]
    [resume] = [code for language, code in found if language == "bash"]
    readers = [code for language, code in found if language == "python"]
    assert len(readers) == 3
    schedule, line = cron.split(maxsplit=5)[:5], cron.split(maxsplit=5)[5].strip()
    assert schedule == ["0", "2", "*", "*", "*"]
    for night in range(2):
        done = shell(line, home)
        assert done.returncode == 0, (night, done.stderr, (home / "etl" / "nightly.log").read_text())
    nightly = home / "etl" / "nightly"
    listed = shell("bankfeed export --out nightly --list-runs", home, cwd=home / "etl")
    assert listed.returncode == 0 and len(listed.stdout.splitlines()) == 2, listed
    # The resume line, after a night that went to its end: nothing to resume, and it says so.
    again = shell(f". ~/.bankfeed.env && cd ~/etl && {resume.strip()}", home)
    assert again.returncode == 2 and "nothing to resume" in again.stderr, again.stderr
    # The three ways of reading the newest give the same rows.
    monkeypatch.chdir(home / "etl")
    results: list[dict[str, Any]] = []
    for code in readers:
        namespace: dict[str, Any] = {}
        exec(compile(code, "docs/export.md", "exec"), namespace)  # the page's own lines
        results.append(namespace)
    latest = bf.read_latest(nightly, "investments", "positions")
    newest_run = max(latest.column("run_id").to_pylist())
    for namespace in results:
        positions, transactions = namespace["positions"], namespace["transactions"]
        assert len(positions) == latest.num_rows > 0
        assert set(positions["run_id"].astype(str)) == {newest_run}
        keys = list(
            zip(transactions["login_id"], transactions["account_id"], transactions["transaction_id"], strict=True)
        )
        assert len(keys) == len(set(keys)) == bf.read_latest(nightly, "accounts", "transactions").num_rows > 0


def test_the_readmes_export_lines_work_as_written(sb: bf.Sandbox, home: Path) -> None:
    text = section(ROOT / "README.md", "## Exporting many logins")
    [(_, code)] = [(language, code) for language, code in blocks(text) if language == "bash"][:1]
    lines = [line.split("  #")[0].strip() for line in code.splitlines() if line.strip()]
    nightly = [line for line in lines if "--logins" in line and "--resume" not in line]
    resume = [line for line in lines if "--resume" in line]
    assert len(nightly) == len(resume) == 1
    (home / "etl" / "ids.csv").write_text("login_id\n" + "\n".join(sb.login_ids) + "\n")
    for _ in range(2):
        done = shell(f". ~/.bankfeed.env && cd ~/etl && {nightly[0]}", home)
        assert done.returncode == 0, done.stderr
    again = shell(f". ~/.bankfeed.env && cd ~/etl && {resume[0]}", home)
    assert again.returncode == 2 and "nothing to resume" in again.stderr, again.stderr
    runs = shell("bankfeed export --out nightly --list-runs", home, cwd=home / "etl")
    assert len(runs.stdout.splitlines()) == 2, runs
