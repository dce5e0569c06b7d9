"""The payloads kept (docs/export.md#the-payloads-kept): with ``keep_raw=True`` (``--keep-raw``)
each login's payload of each kind lands in ``_raw/<kind>`` beside its rows, once, with its run
(the run's partition, read as columns as for every table), RequestId and time; a field the
service adds is there too; and no key, token, password or answer is in any file the export
writes, for every operation it runs."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("duckdb")

import duckdb
import pyarrow
import pyarrow.dataset

import bankfeed as bf
from exporthelpers import run_export
from recordedserver import ASKED, CUSTOMER, FINE, MINTED, Recorded, serving
from recordedserver import CACHED_PROMPT as PROMPT

#: Every kind the export fetches, an operation each: Investments, GetAccountsDetail and an
#: attributes package.
WHAT = ["investments", "accounts", "attributes:income"]
KINDS = ["investments", "accounts", "attributes"]
#: Keys only this test's sandbox knows, so that finding one in a file can only be a leak.
SECRET_KEY = "5ecre7-k3y-0nly-in-th15-te5t"
API_KEY = "4p1-k3y-0nly-in-th15-te5t"


@pytest.fixture(scope="module")
def sandbox() -> Iterator[bf.Sandbox]:
    with bf.Sandbox(logins=4, secret_key=SECRET_KEY, api_key=API_KEY) as sb:
        yield sb


def raw(out: Path, kind: str) -> pyarrow.Table:
    """The table of ``kind``'s payloads, its partitions read as columns."""
    return pyarrow.dataset.dataset(out / "_raw" / kind, format="parquet", partitioning="hive").to_table()


def test_each_login_s_payload_is_kept_once_with_its_run_request_and_time(sandbox: bf.Sandbox, tmp_path: Path) -> None:
    out = tmp_path / "out"
    client = sandbox.client(poll_interval=0.01)
    # Half the logins, then the run resumed with all of them: it writes the others alone.
    half = len(sandbox.login_ids) // 2
    assert bf.export(client, sandbox.login_ids[:half], out, what=WHAT, keep_raw=True).ok
    report = bf.export(client, sandbox.login_ids, out, what=WHAT, keep_raw=True, resume=True)
    assert report.ok, report.failed
    assert report.logins_skipped == half
    run = json.loads((out / "_manifest.json").read_text())["runs"][-1]["run"]
    assert run == report.run
    for kind in KINDS:
        table = raw(out, kind)
        assert table.column_names == ["login_id", "request_id", "fetched_at", "payload", "run_date", "run_id"]
        assert sorted(table.column("login_id").to_pylist()) == sorted(sandbox.login_ids), kind
        assert set(table.column("run_id").to_pylist()) == {run}
        for row in table.to_pylist():
            payload = json.loads(row["payload"])
            assert payload["RequestId"] == row["request_id"], kind
            assert (payload.get("Login") or {}).get("Id", row["login_id"]).lower() == row["login_id"].lower(), kind


def test_a_commit_cut_before_its_renames_is_finished_once_and_an_uncommitted_payload_dropped(
    sandbox: bf.Sandbox, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    client = sandbox.client(poll_interval=0.01)
    assert bf.export(client, sandbox.login_ids, out, keep_raw=True).ok
    # As a kill between the journal entry and the renames leaves it: the part still hidden, in
    # its run's partition.
    (part,) = (out / "_raw" / "investments").glob("run_date=*/run_id=*/part-*.parquet")
    part.rename(part.with_name("." + part.name + ".tmp"))
    # And a batch never committed: its hidden part, no journal entry.
    stray = part.parent / f".part-{part.parent.name.removeprefix('run_id=')}-000099.parquet.tmp"
    stray.write_bytes(b"never committed")
    # The next run finishes the commit and deletes the stray before it writes its own.
    first = part.parent.name.removeprefix("run_id=")
    bf.export(client, sandbox.login_ids, out, keep_raw=True)
    assert part.exists() and not stray.exists()
    table = raw(out, "investments").filter(pyarrow.dataset.field("run_id") == first)
    assert sorted(table.column("login_id").to_pylist()) == sorted(sandbox.login_ids)


#: A key that would hold a secret, whatever its case.
SECRET_NAME = re.compile(r"token|password|secret|api.?key|answer", re.IGNORECASE)


def keys(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from keys(item)
    elif isinstance(value, list):
        for item in value:
            yield from keys(item)


def assert_no_secret(out: Path, secrets: set[str]) -> None:
    """No file under ``out`` holds any of ``secrets``, and no payload kept has a key that would
    hold one; every kind has its payloads."""
    files = [path for path in out.rglob("*") if path.is_file()]
    kept = {path.relative_to(out).parts[1] for path in files if path.relative_to(out).parts[0] == "_raw"}
    assert kept == set(KINDS)
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        for secret in secrets:
            assert secret not in text, f"{path.relative_to(out)} holds a secret"
    for kind in KINDS:
        dataset = pyarrow.dataset.dataset(out / "_raw" / kind, format="csv", partitioning="hive")
        for row in dataset.to_table().to_pylist():
            named = [key for key in keys(json.loads(row["payload"])) if SECRET_NAME.search(key)]
            assert not named, f"{kind}: {named}"


def test_no_key_is_in_any_file_for_any_operation(sandbox: bf.Sandbox, tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = run_export(sandbox, "--out", str(out), "--format", "csv", "--keep-raw", "--quiet", "--what", ",".join(WHAT))
    assert done.returncode == 0, done.stderr
    assert_no_secret(out, {SECRET_KEY, API_KEY})


def test_no_answer_is_in_any_file_when_a_login_is_asked(tmp_path: Path) -> None:
    """The sandbox's cached logins are asked nothing: here one is, and the export answers it."""
    answer = "4n5wer-0nly-in-th15-te5t"
    with serving(Recorded(challenged={ASKED}, answer=answer)) as stub:
        # Without keys: the stub mints no token (the sandbox's test above writes none of its keys).
        client = bf.Client(stub.url, CUSTOMER, poll_interval=0.01, max_retries=0)
        report = bf.export(
            client,
            [FINE[0], ASKED],
            tmp_path / "out",
            what=WHAT,
            format="csv",
            keep_raw=True,
            on_challenge=bf.answers({PROMPT: answer}),
        )
        assert report.ok, report.failed
        assert any(sent.answers for sent in stub.log), "the question was answered"
    assert_no_secret(tmp_path / "out", {answer})


def test_a_field_the_service_adds_lands_in_the_payload_kept(tmp_path: Path) -> None:
    def added(name: str, body: Any) -> None:
        if name == "investments-200":
            body["Accounts"][0]["Positions"][0]["Esg"] = 7

    with serving(Recorded(add_fields=added)) as stub:
        client = bf.Client(stub.url, CUSTOMER, poll_interval=0.01, max_retries=0)
        report = bf.export(client, list(MINTED[:2]), tmp_path / "out", keep_raw=True)
    assert report.ok, report.failed
    assert report.unknown_fields == {"investments": {"Accounts[].Positions[].Esg": 2}}
    for payload in raw(tmp_path / "out", "investments").column("payload").to_pylist():
        assert json.loads(payload)["Accounts"][0]["Positions"][0]["Esg"] == 7


def test_each_night_s_payloads_are_in_its_run_s_partition_as_every_reader_reads_them(
    sandbox: bf.Sandbox, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    client = sandbox.client(poll_interval=0.01)
    runs = [bf.export(client, sandbox.login_ids, out, keep_raw=True).run for _ in range(2)]
    assert len(set(runs)) == 2
    per_run = raw(out, "investments").group_by("run_id").aggregate([("login_id", "count_distinct")])
    assert dict(zip(*per_run.to_pydict().values(), strict=True)) == dict.fromkeys(runs, len(sandbox.login_ids))
    # DuckDB's reading of the partitions: the run as a column, and the payloads' own JSON.
    glob = (out / "_raw" / "investments" / "*" / "*" / "*.parquet").as_posix()
    # A connection of its own: a failed query would leave duckdb's default one aborted for others.
    with duckdb.connect() as db:
        found = db.sql(
            f"select run_id, count(*), count(json_extract(payload, '$.Accounts')) "
            f"from read_parquet('{glob}', hive_partitioning = true) group by 1 order by 1"
        ).fetchall()
    assert found == [(run, len(sandbox.login_ids), len(sandbox.login_ids)) for run in sorted(runs)]


def test_keep_raw_must_be_a_bool(sandbox: bf.Sandbox, tmp_path: Path) -> None:
    with pytest.raises(bf.ConfigError) as caught:
        bf.export(sandbox.client(), sandbox.login_ids, tmp_path / "out", keep_raw="yes")  # type: ignore[arg-type]
    assert caught.value.field == "keep_raw"


def test_aexport_keeps_them_too(sandbox: bf.Sandbox, tmp_path: Path) -> None:
    import asyncio

    async def run() -> bf.ExportReport:
        async with sandbox.async_client(poll_interval=0.01) as client:
            return await bf.aexport(client, sandbox.login_ids, tmp_path / "out", keep_raw=True)

    assert asyncio.run(run()).ok
    assert sorted(raw(tmp_path / "out", "investments").column("login_id").to_pylist()) == sorted(sandbox.login_ids)
