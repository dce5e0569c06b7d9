"""LoginIds as the real service mints them (a .NET sequential tail, a variant outside RFC 4122) in
any case, through every data job that reads a list of them (docs/protocol.md#hosts-paths-and-versions):
``bf.export(login_ids=...)``, the ``bankfeed export`` command's ``--logins`` file (one a line, or a
CSV with a ``login_id`` column), the dlt source, ``bankfeed.dask.read`` and the function
``bankfeed.spark.fetch`` gives ``mapInArrow``. Each fetches every login once, whatever its case,
and writes it as it was given first. The service is the loopback server answering in the recorded
shapes (``recordedserver``); the client's own calls are in client/test_login_id_shapes.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyarrow")

import pyarrow
import pyarrow.dataset

import bankfeed as bf
from recordedserver import CUSTOMER, MINTED, RecordedServer, serving, spellings

#: Every minted LoginId spelled one way or another, and the first one once more in another case:
#: one login, fetched and written once, as first given.
GIVEN = [spellings(login_id)[index % 3] for index, login_id in enumerate(MINTED)]
AGAIN = GIVEN[0].swapcase()


@pytest.fixture(scope="module")
def stub() -> Iterator[RecordedServer]:
    with serving() as server:
        yield server


def client_of(stub: RecordedServer) -> bf.Client:
    return bf.Client(stub.url, CUSTOMER, poll_interval=0.01, max_retries=0)


def written_logins(out: Path) -> list[str]:
    """The LoginIds of the accounts table an export wrote, each once."""
    table = pyarrow.dataset.dataset(out / "accounts" / "accounts").to_table()
    return sorted(set(table.column("login_id").to_pylist()))


def test_bf_export_writes_every_minted_login_once(stub: RecordedServer, tmp_path: Path) -> None:
    report = bf.export(client_of(stub), [*GIVEN, AGAIN], tmp_path, what=["accounts"])
    assert (report.logins_written, report.logins_failed, report.failed) == (len(MINTED), 0, [])
    assert written_logins(tmp_path) == sorted(GIVEN)
    # The recorded detail's null Holder and AccountType leave the columns and their types as declared.
    for table in ("accounts", "transactions"):
        written = pyarrow.dataset.dataset(tmp_path / "accounts" / table).schema
        assert written.remove_metadata() == bf.schema("accounts", table), table


@pytest.mark.parametrize("form", ["lines", "csv"])
def test_the_command_reads_minted_login_ids_from_a_file(stub: RecordedServer, tmp_path: Path, form: str) -> None:
    ids = tmp_path / f"ids.{form}"
    if form == "csv":
        ids.write_text("name,login_id\n" + "".join(f"x,{login_id}\n" for login_id in [*GIVEN, AGAIN]), "utf-8")
    else:
        ids.write_text("# minted by the service\n" + "".join(f"{login_id}\n" for login_id in [*GIVEN, AGAIN]), "utf-8")
    out = tmp_path / "out"
    environment = {key: value for key, value in os.environ.items() if not key.startswith("BANKFEED_")}
    service_flags = ["--base-url", stub.url, "--customer-id", CUSTOMER, "--poll-interval", "0.01", "--quiet"]
    export = ["export", "--logins", str(ids), "--out", str(out), "--what", "accounts", *service_flags]
    done = subprocess.run(
        [sys.executable, "-m", "bankfeed", *export],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=environment,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    assert written_logins(out) == sorted(GIVEN)


def test_the_dlt_source_loads_every_minted_login(
    stub: RecordedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dlt = pytest.importorskip("dlt")
    duckdb = pytest.importorskip("duckdb")
    import bankfeed.dlt

    # dlt reports each run to its makers by default; a test run sends nothing anywhere.
    monkeypatch.setenv("RUNTIME__DLTHUB_TELEMETRY", "false")
    source = bankfeed.dlt.source(client_of(stub), [*GIVEN, AGAIN], what=["accounts"])
    pipeline = dlt.pipeline(
        "bankfeed_login_ids",
        destination=dlt.destinations.duckdb(str(tmp_path / "bankfeed.duckdb")),
        dataset_name="nightly",
        pipelines_dir=str(tmp_path / "pipelines"),
    )
    pipeline.run(source)
    assert source.failures == []
    with duckdb.connect(str(tmp_path / "bankfeed.duckdb"), read_only=True) as db:
        rows = db.sql("select distinct login_id from nightly.accounts_accounts order by login_id").fetchall()
    assert [login_id for (login_id,) in rows] == sorted(GIVEN)


def test_bankfeed_dask_reads_every_minted_login(stub: RecordedServer) -> None:
    pytest.importorskip("dask.dataframe")
    import bankfeed.dask

    frame: Any = bankfeed.dask.read(client_of(stub), [*GIVEN, AGAIN], "accounts", "accounts", partition_size=2)
    assert sorted(set(frame.compute(scheduler="sync")["login_id"])) == sorted(GIVEN)


def test_the_spark_function_fetches_a_batch_of_minted_login_ids(stub: RecordedServer) -> None:
    pytest.importorskip("pyspark")
    import bankfeed.spark

    # What an executor runs for DataFrame.mapInArrow: Arrow batches of LoginIds in, rows out.
    fetch = bankfeed.spark.fetch(client_of(stub), "accounts", "accounts")
    batches = [pyarrow.RecordBatch.from_pydict({"login_id": GIVEN[:2]}), pyarrow.record_batch({"login_id": GIVEN[2:]})]
    rows = pyarrow.Table.from_batches(list(fetch(iter(batches))), schema=fetch.schema)
    assert sorted(set(rows.column("login_id").to_pylist())) == sorted(GIVEN)
