"""What the command shows while it runs and at its end counts logins as the person does, each
once whatever the kinds, with each kind's count named apart (docs/export.md#what-you-see)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import bankfeed as bf
from bankfeed._export.progress import ExportProgress
from exporthelpers import run_export

LOGINS = 6


def test_the_progress_and_the_summary_count_logins_and_name_each_kind(tmp_path: Path) -> None:
    with bf.Sandbox(logins=LOGINS) as sb:
        done = run_export(sb, "--out", str(tmp_path), "--what", "investments,accounts", "--concurrency", "2")
    assert done.returncode == 0, done.stderr
    last = [line for line in done.stderr.splitlines() if line.startswith("export:")][-1]
    assert re.match(
        rf"export: {LOGINS} of {LOGINS} logins; investments {LOGINS}, accounts {LOGINS}; [\d,]+ rows, "
        r"[\d.]+ fetches/s",
        last,
    ), last
    assert f"fetched by kind: investments {LOGINS}, accounts {LOGINS}\n" in done.stdout
    assert f"written in every kind: {LOGINS} logins" in done.stdout


def test_a_login_is_done_once_every_kind_has_done_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("bankfeed._export.progress._stderr_is_terminal", lambda: False)
    # 10,000 logins; an earlier run wrote 20 of them in accounts, which fetches the rest.
    progress = ExportProgress(10_000, {"investments": 10_000, "accounts": 9_980})
    progress.update({"investments": 10_000, "accounts": 1_180}, failed={"investments": 3}, rows=5)
    assert progress.logins_done == 1_200
    assert progress._counts() == "1,200 of 10,000 logins; investments 10,000 (3 failed), accounts 1,180; 5 rows"
    one = ExportProgress(500, {"investments": 500})
    one.update({"investments": 20}, failed={}, rows=0)
    assert one._counts() == "20 of 500 logins (0 failed); 0 rows"
    progress.close(stopped=False)
    one.close(stopped=False)
