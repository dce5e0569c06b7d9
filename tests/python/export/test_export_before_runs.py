"""An export written before runs had partitions (docs/export.md#an-export-written-before-runs):
its rows directly in each table's directory, its journal entries naming no run, its processes'
records no ``part_of``. The next run moves it into the layout of runs, as the export's first run,
and writes its own beside it: no file is left outside a run's partition, every reader of the
partitions sees every row with its run, and a move cut short is finished by the next run with no
row lost or written twice."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("pyarrow")

import pyarrow.dataset

import bankfeed as bf
from exporthelpers import run_export

WHAT = ["investments", "accounts"]
TABLES = {
    "investments": ("accounts", "positions", "transactions", "securities"),
    "accounts": ("accounts", "transactions"),
}


@pytest.fixture(scope="module")
def sandbox() -> Iterator[bf.Sandbox]:
    with bf.Sandbox(logins=3) as sb:
        yield sb


def as_before_runs(out: Path) -> None:
    """Puts the export in ``out`` into the layout bankfeed wrote before runs: each batch's files
    directly in its table's directory (the empty files of tables with no row too), its entry
    without ``run`` (nor the transactions' cursors, which came with runs), each process's record
    without ``part_of``."""
    for kind, tables in TABLES.items():
        for table in tables:
            top = out / kind / table
            for part in list(top.glob("run_date=*/run_id=*/*")):
                part.rename(top / part.name)
            for date in list(top.glob("run_date=*")):
                shutil.rmtree(date)
        for path in (out / "_journal" / kind).glob("*.json"):
            entry = json.loads(path.read_text())
            entry.pop("run")
            entry.pop("cursors", None)
            entry["files"] = {table: file.rsplit("/", 1)[-1] for table, file in entry["files"].items()}
            path.write_text(json.dumps(entry))
    for path in (out / "_journal" / "runs").glob("*.json"):
        record = json.loads(path.read_text())
        record.pop("part_of")
        path.write_text(json.dumps(record))


def outside_runs(out: Path) -> list[str]:
    """Files directly in a table's directory, outside every run's partition."""
    return sorted(
        path.name
        for kind, tables in TABLES.items()
        for table in tables
        for path in (out / kind / table).iterdir()
        if path.is_file()
    )


def rows_by_run(out: Path, kind: str, table: str) -> Counter[str]:
    data = pyarrow.dataset.dataset(out / kind / table, format="parquet", partitioning="hive").to_table()
    return Counter(data.column("run_id").to_pylist())


def old_export(sandbox: bf.Sandbox, out: Path) -> str:
    """An export of ``sandbox``'s logins in the layout before runs; the name of its run."""
    report = bf.export(sandbox.client(poll_interval=0.01), sandbox.login_ids, out, what=WHAT)
    assert report.ok, report.failed
    as_before_runs(out)
    assert outside_runs(out), "the rows are outside any partition, as bankfeed wrote them then"
    return report.run


def test_the_next_run_moves_it_into_runs_as_its_first_run(sandbox: bf.Sandbox, tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = old_export(sandbox, out)
    done = run_export(sandbox, "--out", str(out), "--what", ",".join(WHAT), "--quiet")
    assert done.returncode == 0, done.stderr
    assert outside_runs(out) == [], "no file left outside a run's partition"
    manifest = json.loads((out / "_manifest.json").read_text())
    runs = [run["run"] for run in manifest["runs"]]
    assert len(runs) == 2 and runs[0] == first
    # Each night's snapshot in its own run, every row with its run as every reader of the partitions sees it.
    for kind, table in [("accounts", "accounts"), ("investments", "positions")]:
        counts = rows_by_run(out, kind, table)
        assert set(counts) == set(runs) and counts[first] == counts[runs[1]] > 0, (kind, table)
    latest = bf.read_latest(out, "investments", "positions")
    assert set(latest.column("run_id").to_pylist()) == {runs[1]}
    listed = run_export(sandbox, "--out", str(out), "--list-runs")
    assert listed.returncode == 0 and first in listed.stdout and runs[1] in listed.stdout


def test_a_move_cut_short_is_finished_by_the_next_run(sandbox: bf.Sandbox, tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = old_export(sandbox, out)
    before = {
        table: pyarrow.dataset.dataset(out / "investments" / table, format="parquet").count_rows()
        for table in TABLES["investments"]
    }
    # Killed in the middle of the move: one entry already names its files in the partition, which
    # are still in the table's directory; the records still lack their run.
    path = sorted((out / "_journal" / "investments").glob("*.json"))[0]
    entry = json.loads(path.read_text())
    where = f"run_date={first[0:4]}-{first[4:6]}-{first[6:8]}/run_id={first}"
    entry["run"] = first
    entry["files"] = {table: f"{where}/{file}" for table, file in entry["files"].items()}
    path.write_text(json.dumps(entry))
    report = bf.export(sandbox.client(poll_interval=0.01), sandbox.login_ids, out, what=WHAT)
    assert report.ok and report.run != first
    assert outside_runs(out) == []
    # The first run's rows each once, in its partition: none dropped by the cut, none doubled.
    for table, count in before.items():
        assert rows_by_run(out, "investments", table)[first] == count, table
