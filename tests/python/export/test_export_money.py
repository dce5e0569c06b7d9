"""Exact money out of bulk (docs/export.md#money, docs/tables.md#money): ``bf.export`` and
``bankfeed export --money decimal`` write decimal128 columns whose sums are exact; the export's
first run fixes its money type, so a later run asking for another is refused (exit 2 naming
``--money``) and one that does not ask goes on with it; ``bankfeed.dask.read``,
``bankfeed.spark`` and the dlt source take the option too."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyarrow")

import pyarrow
import pyarrow.compute
import pyarrow.dataset

import bankfeed as bf
from exporthelpers import run_export

LOGINS = 4
AMOUNT = pyarrow.decimal128(18, 4)


@pytest.fixture(scope="module")
def sandbox() -> Iterator[bf.Sandbox]:
    with bf.Sandbox(logins=LOGINS) as sb:
        yield sb


def client_of(sb: bf.Sandbox, **options: Any) -> bf.Client:
    return sb.client(poll_interval=0.01, **options)


def dataset(out: Path, kind: str, table: str) -> pyarrow.Table:
    return pyarrow.dataset.dataset(out / kind / table).to_table()


def exact_market_values(sb: bf.Sandbox) -> Decimal:
    """The sum of every login's market values, from the digits the payloads wrote: the sandbox
    writes a float's shortest text, which is Python's ``repr`` of it."""
    combined = bf.combine(client_of(sb).investments_many(sb.login_ids))
    values = combined.tables["positions"].to_arrow().column("market_value").to_pylist()
    return sum((Decimal(repr(value)) for value in values if value is not None), Decimal(0))


def test_a_decimal_export_writes_decimal_columns_that_sum_exactly(sandbox: bf.Sandbox, tmp_path: Path) -> None:
    out = tmp_path / "exact"
    report = bf.export(client_of(sandbox), sandbox.login_ids, out, what=["investments", "accounts"], money="decimal")
    assert report.ok, report.failed
    positions = dataset(out, "investments", "positions")
    assert positions.schema.field("market_value").type == AMOUNT
    assert positions.schema.field("quantity").type == pyarrow.decimal128(18, 8)
    assert dataset(out, "accounts", "transactions").schema.field("balance").type == AMOUNT
    assert dataset(out, "accounts", "accounts").schema.field("balance_current").type == AMOUNT
    exact = exact_market_values(sandbox)
    assert pyarrow.compute.sum(positions.column("market_value")).as_py() == exact
    assert positions.to_pandas()["market_value"].sum() == exact
    duckdb = pytest.importorskip("duckdb")
    # A connection of its own: a failed query would leave duckdb's default one aborted for others.
    with duckdb.connect() as db:
        glob = f"{out}/investments/positions/*/*/*.parquet"
        row = db.sql(f"select sum(market_value) from read_parquet('{glob}', hive_partitioning = true)").fetchone()
    assert row == (exact,)
    assert json.loads((out / "_manifest.json").read_text())["money"] == "decimal"


def test_the_first_run_fixes_the_money_type(sandbox: bf.Sandbox, tmp_path: Path) -> None:
    out = tmp_path / "fixed"
    first = sandbox.login_ids[:2]
    bf.export(client_of(sandbox), first, out, money="decimal")
    with pytest.raises(bf.ConfigError) as caught:
        bf.export(client_of(sandbox), sandbox.login_ids, out, money="float", resume=True)
    assert caught.value.field == "money"
    assert "'decimal'" in caught.value.rule and "'float'" in caught.value.rule
    # A client of another money option does not ask: the run goes on as the export was started.
    report = bf.export(client_of(sandbox, money="float"), sandbox.login_ids, out, resume=True)
    assert report.logins_written == LOGINS - len(first)
    assert dataset(out, "investments", "positions").schema.field("market_value").type == AMOUNT
    assert len(set(dataset(out, "investments", "positions").column("login_id").to_pylist())) == LOGINS


def test_an_export_made_before_the_option_is_float_and_stays_so(sandbox: bf.Sandbox, tmp_path: Path) -> None:
    out = tmp_path / "old"
    bf.export(client_of(sandbox), sandbox.login_ids[:1], out)
    # An export written before the option recorded none.
    for record in [out / "_manifest.json", *(out / "_journal" / "runs").glob("*.json")]:
        value = json.loads(record.read_text())
        assert value.pop("money") == "float"
        record.write_text(json.dumps(value))
    with pytest.raises(bf.ConfigError, match="'float'"):
        bf.export(client_of(sandbox), sandbox.login_ids, out, money="decimal", resume=True)
    bf.export(client_of(sandbox, money="decimal"), sandbox.login_ids, out, resume=True)
    assert dataset(out, "investments", "positions").schema.field("market_value").type == pyarrow.float64()


def test_the_command_takes_money_and_refuses_another_on_resume(sandbox: bf.Sandbox, tmp_path: Path) -> None:
    out = str(tmp_path / "command")
    done = run_export(sandbox, "--out", out, "--money", "decimal", "--quiet")
    assert done.returncode == 0, done.stderr
    assert dataset(Path(out), "investments", "positions").schema.field("market_value").type == AMOUNT
    again = run_export(sandbox, "--out", out, "--money", "float", "--resume", "--quiet")
    assert again.returncode == 2, again.stderr
    assert again.stderr.startswith("error: --money: must be the money type"), again.stderr
    wrong = run_export(sandbox, "--out", str(tmp_path / "wrong"), "--money", "exact", "--quiet")
    assert wrong.returncode == 2 and "--money" in wrong.stderr, wrong.stderr


def test_dask_spark_and_dlt_take_the_option(
    sandbox: bf.Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    exact = exact_market_values(sandbox)
    pytest.importorskip("dask")
    import bankfeed.dask

    frame = bankfeed.dask.read(client_of(sandbox), sandbox.login_ids, "investments", "positions", money="decimal")
    assert frame.compute()["market_value"].sum() == exact
    floats = bankfeed.dask.read(client_of(sandbox), sandbox.login_ids, "investments", "positions")
    assert str(floats.dtypes["market_value"]) == "float64"

    pytest.importorskip("pyspark")
    import bankfeed.spark

    # The function mapInArrow runs, called as Spark calls it, and the schema it is declared with.
    fetch = bankfeed.spark.fetch(client_of(sandbox), "investments", "positions", money="decimal")
    batch = pyarrow.RecordBatch.from_pydict({"login_id": sandbox.login_ids})
    rows = pyarrow.Table.from_batches(list(fetch([batch])), schema=fetch.schema)
    assert pyarrow.compute.sum(rows.column("market_value")).as_py() == exact
    declared = bankfeed.spark.schema("investments", "positions", "decimal")["market_value"].dataType
    assert declared.simpleString() == "decimal(18,4)"

    pytest.importorskip("dlt")
    duckdb = pytest.importorskip("duckdb")
    import dlt

    import bankfeed.dlt

    monkeypatch.setenv("RUNTIME__DLTHUB_TELEMETRY", "false")
    database = str(tmp_path / "money.duckdb")
    pipeline = dlt.pipeline(
        "bankfeed_money",
        destination=dlt.destinations.duckdb(database),
        dataset_name="nightly",
        pipelines_dir=str(tmp_path / "pipelines"),
    )
    pipeline.run(bankfeed.dlt.source(client_of(sandbox), sandbox.login_ids, money="decimal"))
    with duckdb.connect(database, read_only=True) as db:
        (summed, typed) = db.sql(
            "select sum(market_value), typeof(any_value(market_value)) from nightly.investments_positions"
        ).fetchone() or (None, None)
    assert (summed, typed) == (exact, "DECIMAL(18,4)")


def test_a_copy_of_another_money_type_is_another_client_to_dask() -> None:
    pytest.importorskip("dask")
    from dask.base import tokenize

    from bankfeed._export.kinds import with_money

    client = bf.Client("http://127.0.0.1:9", "43387ca6-0391-4c82-857d-70d95f087ecb")
    assert with_money(client, None) is client and with_money(client, "float") is client
    copy = with_money(client, "decimal")
    assert (copy.money, client.money) == ("decimal", "float")
    # The same identity and pool, but other tables: a task graph must not take one for the other.
    assert tokenize(copy) != tokenize(client)
    with pytest.raises(bf.ConfigError, match="money"):
        with_money(client, "exact")
