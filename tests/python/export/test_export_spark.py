"""``bankfeed.spark`` (docs/scale-out.md#spark): the function of ``fetch`` on Arrow batches as
``mapInArrow`` and Ray Data hand them out, without Spark; then ``mapInArrow`` and ``read`` in a
Spark session in local mode, whose Python workers fetch from a sandbox: the rows and the schema of
``bf.export``.
"""

from __future__ import annotations

import json
import os
import pickle
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyarrow")

import pyarrow
import pyarrow.dataset

import bankfeed as bf
import bankfeed.spark
from bankfeed._export.kinds import KINDS
from bfhelpers import API_KEY, SECRET_KEY

LOGINS = 6

# pyspark warns about pandas 3 on every Arrow conversion; what is tested here goes through Arrow.
# cluster: deselected by scripts/test --quick (CONTRIBUTING.md#the-quick-loop), a Spark session starts.
pytestmark = [
    pytest.mark.cluster,
    pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas:FutureWarning"),
]


@pytest.fixture(scope="module")
def keyed() -> Iterator[bf.Sandbox]:
    with bf.Sandbox(logins=LOGINS, api_key=API_KEY, secret_key=SECRET_KEY) as sb:
        yield sb


def client_of(sb: bf.Sandbox) -> bf.Client:
    return bf.Client(sb.url, sb.customer_id, api_key=API_KEY, secret_key=SECRET_KEY, poll_interval=0.01)


@pytest.fixture(scope="module")
def exported(keyed: bf.Sandbox, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("exported")
    bf.export(client_of(keyed), keyed.login_ids, out, what=["investments", "accounts"])
    return out


def rows(table: pyarrow.Table) -> Counter[str]:
    """The rows, each as text, without the two columns that differ between fetches."""
    data = table.drop_columns(["request_id", "fetched_at"])
    return Counter(json.dumps(row, sort_keys=True, default=str) for row in data.to_pylist())


def exported_rows(out: Path, kind: str, table: str) -> Counter[str]:
    return rows(pyarrow.dataset.dataset(out / kind / table).to_table())


def test_the_function_fetches_each_batch_of_login_ids_as_the_export_writes_it(
    keyed: bf.Sandbox, exported: Path
) -> None:
    fn = bankfeed.spark.fetch(client_of(keyed), "investments", "positions")
    ids = keyed.login_ids
    batches = [
        pyarrow.record_batch({"login_id": ids[:2], "other": [1, 2]}),
        pyarrow.record_batch({"login_id": pyarrow.array([None, *ids[2:]], pyarrow.string()), "other": [0] * 5}),
    ]
    out = list(fn(iter(batches)))
    assert all(batch.schema.equals(bf.schema("investments", "positions")) for batch in out)
    expected = exported_rows(exported, "investments", "positions")
    assert rows(pyarrow.Table.from_batches(out, schema=fn.schema)) == expected
    # Ray Data's form: a table in, a table out.
    table = fn.table(pyarrow.table({"login_id": ids}))
    assert rows(table) == expected
    with pytest.raises(bf.ConfigError) as missing:
        list(fn([pyarrow.record_batch({"id": ids[:1]})]))
    assert missing.value.field == "login_id_column"


def test_the_function_travels_with_its_client_and_shows_no_key(keyed: bf.Sandbox, exported: Path) -> None:
    cloudpickle = pytest.importorskip("cloudpickle")
    fn = bankfeed.spark.fetch(client_of(keyed), "accounts", "transactions", login_id_column="id")
    assert API_KEY not in repr(fn) and SECRET_KEY not in repr(fn)
    for copy in (pickle.loads(pickle.dumps(fn)), cloudpickle.loads(cloudpickle.dumps(fn))):
        table = copy.table(pyarrow.table({"id": keyed.login_ids}))
        assert rows(table) == exported_rows(exported, "accounts", "transactions")


def test_a_failed_login_raises_or_is_left_out(keyed: bf.Sandbox) -> None:
    ids = pyarrow.table({"login_id": ["not-a-guid", keyed.login_ids[0]]})
    with pytest.raises(bf.ConfigError):
        bankfeed.spark.fetch(client_of(keyed), "investments", "accounts").table(ids)
    kept = bankfeed.spark.fetch(client_of(keyed), "investments", "accounts", on_error="skip").table(ids)
    assert set(kept.column("login_id").to_pylist()) == {keyed.login_ids[0]}
    with pytest.raises(bf.ConfigError) as wrong:
        bankfeed.spark.fetch(client_of(keyed), "investments", "accounts", on_error="ignore")
    assert wrong.value.field == "on_error"
    with pytest.raises(bf.ConfigError) as table:
        bankfeed.spark.fetch(client_of(keyed), "accounts", "positions")
    assert table.value.field == "table"


# --- In Spark -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    pytest.importorskip("pyspark")
    from pyspark.sql import SparkSession

    # Spark's Python workers are this interpreter, and everything stays on loopback.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    session = (
        SparkSession.builder.master("local[2]")
        .appName("bankfeed-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def test_every_table_has_its_spark_schema() -> None:
    pytest.importorskip("pyspark")
    for kind, tables in KINDS.items():
        for table in tables:
            spark_schema = bankfeed.spark.schema(kind, table)
            assert spark_schema.names == bf.schema(kind, table).names, (kind, table)
    assert bankfeed.spark.schema("attributes:income", "values") == bankfeed.spark.schema("attributes", "values")


def test_map_in_arrow_and_read_give_the_exported_rows(spark: Any, keyed: bf.Sandbox, exported: Path) -> None:
    client = client_of(keyed)
    ids = spark.createDataFrame([(login,) for login in keyed.login_ids], "login_id string").repartition(2)
    positions = ids.mapInArrow(
        bankfeed.spark.fetch(client, "investments", "positions"), bankfeed.spark.schema("investments", "positions")
    )
    collected = positions.toArrow()
    assert collected.schema.names == bf.schema("investments", "positions").names
    assert rows(collected) == exported_rows(exported, "investments", "positions")
    transactions = bankfeed.spark.read(spark, client, keyed.login_ids, "accounts", "transactions", partitions=2)
    assert transactions.count() == pyarrow.dataset.dataset(exported / "accounts" / "transactions").count_rows()
    by_login = {row["login_id"] for row in transactions.select("login_id").distinct().collect()}
    assert by_login == set(keyed.login_ids)


# --- Fetched once -----------------------------------------------------------------------------------


def authorizes(sb: bf.Sandbox) -> Counter[str]:
    """The Authorize requests of the sandbox's log, per LoginId: one per login's flow."""
    return Counter(request["body"]["LoginId"] for request in sb.requests if request["path"].endswith("/Authorize"))


@pytest.mark.parametrize("land", [False, True], ids=["checkpointed", "landed"])
def test_read_fetches_each_login_once_however_many_actions_follow(spark: Any, tmp_path: Path, land: bool) -> None:
    with bf.Sandbox(logins=LOGINS, api_key=API_KEY, secret_key=SECRET_KEY) as sb:
        positions = bankfeed.spark.read(
            spark,
            client_of(sb),
            sb.login_ids,
            "investments",
            "positions",
            partitions=2,
            land=str(tmp_path / "landed") if land else None,
        )
        assert authorizes(sb) == dict.fromkeys(sb.login_ids, 1), "fetched once, when read"
        count = positions.count()
        by_login = positions.groupBy("login_id").count().collect()
        positions.write.parquet(str(tmp_path / "written"))
        assert authorizes(sb) == dict.fromkeys(sb.login_ids, 1), "no action fetched again"
    assert count == sum(row["count"] for row in by_login) > 0
    assert {row["login_id"] for row in by_login} == set(sb.login_ids)
    assert pyarrow.dataset.dataset(tmp_path / "written").count_rows() == count
    assert positions.schema == bankfeed.spark.schema("investments", "positions")


def test_a_lazy_read_is_asked_for_by_name(spark: Any) -> None:
    with bf.Sandbox(logins=2, api_key=API_KEY, secret_key=SECRET_KEY) as sb:
        lazy = bankfeed.spark.read(spark, client_of(sb), sb.login_ids, "investments", "accounts", once=False)
        assert not authorizes(sb), "nothing fetched before an action"
        lazy.count()
        lazy.count()
        assert authorizes(sb) == dict.fromkeys(sb.login_ids, 2), "each action fetched again"
        with pytest.raises(bf.ConfigError) as both:
            bankfeed.spark.read(spark, client_of(sb), sb.login_ids, "investments", "accounts", once=False, land="x")
    assert both.value.field == "land"
