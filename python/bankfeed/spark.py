"""Many logins' data in Spark: ``DataFrame.mapInArrow`` over a DataFrame of LoginIds
(docs/scale-out.md#spark). ``pip install 'bankfeed[spark]'``.

:func:`fetch` gives the function ``mapInArrow`` runs on each partition, :func:`schema` the Spark
schema of its rows, and :func:`read` does both in one call. The rows are those ``bf.export``
writes: ``login_id``, ``request_id``, ``fetched_at``, then the table's columns.

Example::

    import bankfeed as bf
    import bankfeed.spark

    ids = spark.read.parquet("s3://bucket/login_ids")          # a column login_id
    with bf.Client() as client:                                 # BANKFEED_* fill every option
        positions = bankfeed.spark.read(spark, client, ids, "investments", "positions")
        positions.write.mode("overwrite").parquet("s3://bucket/positions")

The function of :func:`fetch` needs only pyarrow, so it also serves Ray Data's ``map_batches``
(``fetch(...).table``) and any engine that hands out Arrow batches.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from bankfeed._export.fetch import TableFetch, kind_of
from bankfeed._export.kinds import schema as _arrow_schema
from bankfeed._export.logins import unique_list
from bankfeed._native import Client
from bankfeed.errors import _check_count, _config_error

if TYPE_CHECKING:
    import pyarrow
    import pyspark.sql
    import pyspark.sql.types

__all__ = ["ArrowFetch", "fetch", "read", "schema"]


def schema(kind: str, table: str, money: str = "float") -> pyspark.sql.types.StructType:
    """The Spark schema of ``table`` of ``kind``: ``bf.schema(kind, table, money)`` in Spark's
    types (``fetched_at`` and the dates as Spark timestamps and dates, a security's aliases as an
    array of strings, ``money="decimal"``'s columns as ``DecimalType``). What :func:`fetch`'s
    function yields, as ``mapInArrow`` wants it declared."""
    from pyspark.sql.pandas.types import from_arrow_schema

    name = kind.split(":", 1)[0] if isinstance(kind, str) else kind  # "attributes:income" has attributes' tables
    converted: pyspark.sql.types.StructType = from_arrow_schema(_arrow_schema(name, table, money))
    return converted


class ArrowFetch:
    """The function of :func:`fetch`: Arrow batches of LoginIds in, Arrow batches of the table's
    rows out. Pickles as its client (the client's configuration, keys included) and its
    arguments; its ``repr`` names only the kind and the table."""

    def __init__(self, fetch: TableFetch, login_id_column: str) -> None:
        self._fetch = fetch
        self._column = login_id_column

    @property
    def schema(self) -> pyarrow.Schema:
        """The Arrow schema of the rows yielded: ``bf.schema(kind, table, money)``."""
        return self._fetch.schema

    @property
    def money(self) -> str:
        """How the rows hold money: ``"float"`` or ``"decimal"`` (docs/tables.md#money)."""
        money: str = self._fetch.client.money
        return money

    def _ids(self, batch: Any) -> list[Any]:
        names = list(batch.schema.names)
        if self._column not in names:
            raise _config_error(
                "login_id_column", f"names a column the LoginIds do not have: {self._column!r}, not in {names}"
            )
        # Nulls are no login: left out rather than failed.
        return [value for value in batch.column(names.index(self._column)).to_pylist() if value is not None]

    def __call__(self, batches: Iterable[pyarrow.RecordBatch]) -> Iterator[pyarrow.RecordBatch]:
        """For ``DataFrame.mapInArrow``: one bulk call per batch of LoginIds, its rows yielded."""
        for batch in batches:
            yield from self._fetch.arrow(self._ids(batch)).to_batches()

    def table(self, login_ids: pyarrow.Table | pyarrow.RecordBatch) -> pyarrow.Table:
        """The rows of the LoginIds in a table (or a batch) that has the LoginId column: for Ray
        Data's ``map_batches(fetch.table, batch_format="pyarrow")``."""
        return self._fetch.arrow(self._ids(login_ids))

    def __repr__(self) -> str:
        return f"<bankfeed.spark.fetch of {self._fetch.kind.name}/{self._fetch.table}>"


def fetch(
    client: Client,
    kind: str,
    table: str,
    *,
    login_id_column: str = "login_id",
    concurrency: int = 32,
    on_error: str = "raise",
    money: str | None = None,
    **options: Any,
) -> ArrowFetch:
    """The function to give ``DataFrame.mapInArrow`` with :func:`schema`: each Arrow batch of
    LoginIds (the column ``login_id_column``; nulls skipped) is fetched by the kind's bulk call,
    ``concurrency`` logins at once, and the rows of ``table`` are yielded.

    ``kind`` is ``"investments"``, ``"accounts"`` (with its transactions) or ``"attributes"`` (or
    ``"attributes:<package>"``); ``options`` go to the bulk call (``days="Days365"``,
    ``package="income"``, ...). A login that fails makes the task raise its exception
    (``on_error="raise"``: Spark retries the task, then fails the job), or is left out
    (``on_error="skip"``). ``money`` (``"float"`` or ``"decimal"``; by default the client's
    ``money`` option) is how the money columns come; declare them with
    ``schema(kind, table, money)`` (docs/tables.md#money).

    Example::

        fn = bankfeed.spark.fetch(client, "investments", "positions")
        positions = ids.mapInArrow(fn, bankfeed.spark.schema("investments", "positions"))
    """
    if not isinstance(client, Client):
        raise TypeError(f"client must be a bf.Client, not {type(client).__name__}")
    if not isinstance(login_id_column, str):
        raise TypeError(f"login_id_column must be a str, not {type(login_id_column).__name__}")
    found = kind_of(kind, table, options)
    return ArrowFetch(
        TableFetch(client, found, table, concurrency=concurrency, on_error=on_error, money=money), login_id_column
    )


def read(
    spark: pyspark.sql.SparkSession,
    client: Client,
    login_ids: pyspark.sql.DataFrame | Iterable[str],
    kind: str,
    table: str,
    *,
    login_id_column: str = "login_id",
    partitions: int | None = None,
    concurrency: int = 32,
    on_error: str = "raise",
    money: str | None = None,
    land: str | os.PathLike[str] | None = None,
    once: bool = True,
    **options: Any,
) -> pyspark.sql.DataFrame:
    """``table`` of ``kind`` for every login, as a Spark DataFrame: ``login_ids`` (a DataFrame
    with the column ``login_id_column``, or any iterable of LoginIds, which becomes one) mapped
    with :func:`fetch` and declared with :func:`schema`. ``partitions`` repartitions the LoginIds
    first: one bulk call per partition's Arrow batch. ``money="decimal"`` gives the money columns as
    exact ``DecimalType`` (by default they are as the client's ``money`` option: doubles unless set;
    docs/tables.md#money).

    Each login is fetched once, when ``read`` is called, however many actions follow
    (docs/scale-out.md#fetched-once): the rows are kept by a local checkpoint, in the executors'
    storage (memory, then their local disk), or, with ``land`` (a path or URL Spark writes, which
    must not exist yet), written there as Parquet and read back from it, which survives the loss
    of an executor. ``once=False`` gives the lazy frame instead, fetched again by every action.

    Example::

        positions = bankfeed.spark.read(spark, client, ids, "investments", "positions")
        positions.groupBy("login_id").sum("market_value").show()
        positions.write.parquet("s3://bucket/positions")             # no login fetched again
    """
    from pyspark.sql import DataFrame

    from bankfeed._export.kept import check_keep

    check_keep(land, once)

    function = fetch(
        client,
        kind,
        table,
        login_id_column=login_id_column,
        concurrency=concurrency,
        on_error=on_error,
        money=money,
        **options,
    )
    if isinstance(login_ids, DataFrame):
        frame = login_ids.select(login_id_column)
    else:
        frame = spark.createDataFrame([(login,) for login in unique_list(login_ids)], f"`{login_id_column}` string")
    if partitions is not None:
        _check_count("partitions", partitions)
        frame = frame.repartition(partitions)
    fetched = frame.mapInArrow(function, schema(kind, table, function.money))
    if not once:
        return fetched
    if land is not None:
        # Spark's own writer and commit protocol; the schema given back, not inferred.
        fetched.write.mode("errorifexists").parquet(os.fspath(land))
        return spark.read.schema(schema(kind, table, function.money)).parquet(os.fspath(land))
    # Eager: the one job that fetches is run now; every action after it reads what it kept.
    return fetched.localCheckpoint(eager=True)
