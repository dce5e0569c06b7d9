"""An export directory written night after night (docs/export.md#runs): each run into it is its
next run, in a partition of its own, listed by the manifest and by ``--list-runs``; ``--resume``
goes on with the last run and says when there is nothing to resume."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import bankfeed as bf
from exporthelpers import command, run_export


@pytest.fixture(scope="module")
def sb() -> Iterator[bf.Sandbox]:
    with bf.Sandbox(logins=3) as sandbox:
        yield sandbox


def test_the_command_writes_the_next_run_and_lists_the_runs(sb: bf.Sandbox, tmp_path: Path) -> None:
    out = tmp_path / "nightly"
    first = run_export(sb, "--out", str(out), "--quiet")
    second = run_export(sb, "--out", str(out), "--quiet")
    assert (first.returncode, second.returncode) == (0, 0), second.stderr
    listed = command("--out", str(out), "--list-runs")
    assert listed.returncode == 0 and listed.stderr == "", listed.stderr
    lines = listed.stdout.splitlines()
    manifest = json.loads((out / "_manifest.json").read_text())
    runs = [run["run"] for run in manifest["runs"]]
    assert len(lines) == len(runs) == 2 and runs == sorted(runs)
    for line, run in zip(lines, manifest["runs"], strict=True):
        name, date, status, logins, _, rows, _ = line.split()
        assert (name, date, status, logins) == (run["run"], run["run_date"], "complete", "3")
        assert int(rows.replace(",", "")) == run["rows"] > 0
    # Each run's files in its partition, which names it and its date.
    partitions = sorted(
        path.relative_to(out / "investments" / "positions").as_posix()
        for path in (out / "investments" / "positions").glob("*/*")
    )
    assert partitions == [f"run_date={run['run_date']}/run_id={run['run']}" for run in manifest["runs"]]


def test_a_resume_with_nothing_to_resume_says_so_and_exits_2(sb: bf.Sandbox, tmp_path: Path) -> None:
    out = tmp_path / "nightly"
    assert run_export(sb, "--out", str(out), "--quiet").returncode == 0
    again = run_export(sb, "--out", str(out), "--quiet", "--resume")
    assert again.returncode == 2
    [line] = again.stderr.splitlines()
    assert line.startswith("error: --resume: has nothing to resume: the last run of ") and "Without" in line
    assert len(json.loads((out / "_manifest.json").read_text())["runs"]) == 1, "nothing written"


def test_list_runs_of_a_directory_without_an_export_exits_2(tmp_path: Path) -> None:
    listed = command("--out", str(tmp_path), "--list-runs")
    assert listed.returncode == 2 and listed.stderr.startswith("error: --out: holds no export"), listed.stderr


def test_full_refresh_on_the_command_line_writes_the_transactions_again(sb: bf.Sandbox, tmp_path: Path) -> None:
    out = tmp_path / "nightly"
    args = ["--out", str(out), "--what", "accounts", "--quiet"]
    assert run_export(sb, *args).returncode == 0
    assert run_export(sb, *args).returncode == 0
    assert run_export(sb, *args, "--full-refresh").returncode == 0
    manifest = json.loads((out / "_manifest.json").read_text())
    transactions = [
        sum(1 for _ in (out / "accounts" / "transactions").glob(f"*/run_id={run['run']}/part-*"))
        for run in manifest["runs"]
    ]
    # The first and the refreshed runs wrote transactions; the second had nothing new.
    assert transactions[0] > 0 and transactions[1] == 0 and transactions[2] > 0, transactions


def test_a_run_started_in_the_same_second_names_its_batches_after_the_earlier_run(
    sb: bf.Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two runs in one second, the second given a name that sorts first: its name, and so its
    # batches' names in the journal, must still sort after the first run's, as the journal is
    # read in the order of its names (docs/export.md#runs).
    from bankfeed._export.ondisk import layout

    randoms = itertools.chain(["ffffff", "000000"], itertools.repeat("800000"))
    monkeypatch.setattr(layout, "_run_random", lambda: next(randoms))
    monkeypatch.setattr(layout, "_run_clock", lambda: 1_796_000_000.0)
    out = tmp_path / "nightly"
    with sb.client() as client:
        for _ in range(2):
            bf.export(client, sb.login_ids, out, what="investments", batch_logins=1, progress=False)
    runs = [run["run"] for run in json.loads((out / "_manifest.json").read_text())["runs"]]
    assert len(runs) == 2 and runs[0].endswith("-ffffff") and runs[1] > runs[0], runs
    entries = sorted(path.name for path in (out / "_journal" / "investments").glob("*.json"))
    # Each batch named after its run (a process's name is its run's), in the runs' order.
    assert all(any(name.startswith(run) for run in runs) for name in entries), (entries, runs)
    by_run = [next(run for run in runs if name.startswith(run)) for name in entries]
    assert by_run == sorted(by_run) and set(by_run) == set(runs), entries
