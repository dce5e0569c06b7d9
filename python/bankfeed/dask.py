"""Many logins' data as a Dask DataFrame, each login fetched once, for analysis rather than files
(docs/scale-out.md#one-table-as-a-dask-dataframe). ``pip install 'bankfeed[dask]'``.

To write files from a cluster, ``bf.export(..., scheduler=...)`` is the tool; ``read`` is for a
table to compute on: each partition runs the kind's bulk call over its logins once, persisted
where Dask persists (a ``distributed.Client``'s cluster, or this process's memory), so that every
computation after it reads what was fetched (docs/scale-out.md#fetched-once).

Example::

    import bankfeed as bf
    import bankfeed.dask
    from distributed import Client

    with Client("tcp://10.0.0.5:8786"), bf.Client() as client:
        positions = bankfeed.dask.read(client, login_ids, "investments", "positions")
        by_login = positions.groupby("login_id").market_value.sum().compute()
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from bankfeed._export.fetch import TableFetch, kind_of
from bankfeed._export.logins import unique_list
from bankfeed._native import Client
from bankfeed.errors import _check_count

if TYPE_CHECKING:
    import dask.dataframe
    import pandas
    import pyarrow

__all__ = ["read"]


def _pandas(table: pyarrow.Table) -> pandas.DataFrame:
    """``table`` as a partition (and the meta) holds it, with no column of ``object`` dtype: text
    as pandas' pyarrow strings, dates as ``datetime64`` (as ``Table.to_pandas`` gives them), a
    security's aliases as Arrow lists and decimal money as Arrow decimals (exact, and summed as
    such), booleans as pandas' nullable ones. Dask turns every
    ``object`` column into text by default (``dataframe.convert-string``): a list would become the
    text of its repr, and a date its ISO text."""
    import pandas
    import pyarrow

    def dtype(kind: pyarrow.DataType) -> Any:
        if pyarrow.types.is_string(kind) or pyarrow.types.is_large_string(kind):
            return pandas.StringDtype("pyarrow")
        if pyarrow.types.is_boolean(kind):
            return pandas.BooleanDtype()
        if pyarrow.types.is_list(kind) or pyarrow.types.is_large_list(kind) or pyarrow.types.is_decimal(kind):
            return pandas.ArrowDtype(kind)
        return None

    frame: pandas.DataFrame = table.to_pandas(date_as_object=False, types_mapper=dtype)
    return frame


class _Partition:
    """What ``dd.from_map`` calls for one partition: its LoginIds to the rows of the table, as
    pandas. ``columns`` lets Dask read only the columns a computation uses."""

    def __init__(self, fetch: TableFetch) -> None:
        self.fetch = fetch

    def __call__(self, login_ids: list[str], columns: list[str] | None = None) -> pandas.DataFrame:
        table = self.fetch.arrow(login_ids)
        if columns is not None:
            table = table.select(list(columns))
        return _pandas(table)

    def __dask_tokenize__(self) -> tuple[str, ...]:
        # The task keys come from this, never from the client (whose pickle holds its keys): each
        # read is a fetch of its own, so two reads never share results (docs/scale-out.md#keys).
        return ("bankfeed.dask.read", self.fetch.kind.name, self.fetch.table, self.fetch.token)

    def __repr__(self) -> str:
        return f"<bankfeed.dask.read partition of {self.fetch.kind.name}/{self.fetch.table}>"


def read(
    client: Client,
    login_ids: Iterable[str],
    kind: str,
    table: str,
    *,
    partition_size: int = 1000,
    concurrency: int = 32,
    on_error: str = "raise",
    money: str | None = None,
    once: bool = True,
    **options: Any,
) -> dask.dataframe.DataFrame:
    """``table`` of ``kind`` for every login, as a persisted ``dask.dataframe.DataFrame``: one
    partition per ``partition_size`` logins, each fetched by the kind's bulk call
    (``investments_many``, ``accounts_detail_many``, ``attributes_many``), with ``concurrency``
    logins at once.

    ``kind`` is ``"investments"``, ``"accounts"`` (with its transactions) or ``"attributes"``
    (or ``"attributes:<package>"``); ``options`` go to the bulk call (``days="Days365"``,
    ``package="income"``, ...). The columns are those ``bf.export`` writes: ``login_id``,
    ``request_id``, ``fetched_at``, then the table's, with the types of ``bf.schema(kind, table)``,
    which is also the frame's ``meta``: nothing is fetched to know the columns. A login that fails
    makes its partition raise its exception (``on_error="raise"``), or is left out
    (``on_error="skip"``). LoginIds given twice are fetched once. ``money`` (``"float"`` or
    ``"decimal"``; by default the client's ``money`` option, float unless set) is how the money
    columns come: ``"decimal"`` gives exact ``decimal128`` columns, as ``decimal.Decimal``
    objects in pandas (docs/tables.md#money).

    Each login is fetched once, however many computations follow: the frame is persisted when
    ``read`` returns (``DataFrame.persist``), on the cluster of the default ``distributed.Client``,
    where the partitions are fetched in the background and kept in the workers' memory, or, with
    no such client, fetched now and kept in this process's memory. A partition that failed raises
    its exception when the frame is computed on a cluster, and from ``read`` itself without one.
    ``once=False`` gives the lazy frame instead, which every ``compute`` fetches again
    (docs/scale-out.md#fetched-once).

    The client travels to the workers as its pickle, which holds its keys; the task keys and
    names never do (docs/scale-out.md#keys).

    Example::

        positions = bankfeed.dask.read(client, login_ids, "investments", "positions")
        positions[positions.quantity > 0].groupby("login_id").market_value.sum().compute()
    """
    import dask.dataframe

    from bankfeed._export.kept import check_keep

    if not isinstance(client, Client):
        raise TypeError(f"client must be a bf.Client, not {type(client).__name__}")
    _check_count("partition_size", partition_size)
    check_keep(None, once)
    fetch = TableFetch(
        client,
        kind_of(kind, table, options),
        table,
        concurrency=concurrency,
        on_error=on_error,
        token=secrets.token_hex(8),
        money=money,
    )
    ids = unique_list(login_ids)
    partitions = [ids[start : start + partition_size] for start in range(0, len(ids), partition_size)] or [[]]
    meta = _pandas(fetch.schema.empty_table())
    frame: dask.dataframe.DataFrame = dask.dataframe.from_map(
        _Partition(fetch), partitions, meta=meta, label=f"bankfeed-{fetch.kind.name}-{table}", enforce_metadata=False
    )
    # Kept where Dask keeps a persisted frame: every computation after this reads it.
    return frame.persist() if once else frame
