"""A dlt source of every login's data (docs/dlt.md): ``bankfeed.dlt.source``.

dlt (``pip install 'bankfeed[dlt]'``) loads it into any of its destinations. Each table of each kind
asked is a resource named ``<kind>_<table>`` (``investments_positions``) yielding Arrow tables with
the columns of ``bf.schema(kind, table)``. The snapshot tables (accounts, positions, securities,
attributes) keep each load's rows, with its ``run_date`` and ``run_id``
(docs/dlt.md#snapshots-kept-per-load), or, with ``snapshots="merge"``, each login's newest only
(docs/dlt.md#how-rows-are-merged); the transactions are incremental, each loaded once
(docs/dlt.md#transactions-once)::

    import dlt
    import bankfeed as bf
    import bankfeed.dlt

    pipeline = dlt.pipeline("bankfeed", destination="duckdb", dataset_name="nightly")
    with bf.Client() as client:
        source = bankfeed.dlt.source(client, login_ids, what=["investments", "accounts"])
        print(pipeline.run(source))
    for login_id, error in source.failures:
        print(login_id, type(error).__name__, error)
"""

from __future__ import annotations

import logging
import secrets
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import dlt
from dlt.extract.source import DltSource

from bankfeed._export.columns import Gathered
from bankfeed._export.events import Events, merge
from bankfeed._export.kinds import EVENT_KEYS, KINDS, Kind, check_what, options_key, parse_what, schema, with_money
from bankfeed._export.logins import LOGINS_PER_CALL, fold, unique_list
from bankfeed._export.writer import Limits
from bankfeed._native import AsyncClient, Client
from bankfeed._type_aliases import ChallengeHandler
from bankfeed.errors import _check_count, _config_error

if TYPE_CHECKING:
    import pyarrow

__all__ = ["PRIMARY_KEYS", "BankfeedSource", "source"]

_log = logging.getLogger(__name__)

#: The primary key of each table, by kind: ``login_id``, then the ids that tell a login's rows
#: apart (docs/dlt.md#how-rows-are-merged). Only ``login_id`` is never null: the service may omit
#: an id, and bankfeed reads such a row rather than drop it, so the other columns are declared
#: nullable and the merge does not rely on them.
PRIMARY_KEYS: dict[str, dict[str, tuple[str, ...]]] = {
    "investments": {
        "accounts": ("login_id", "account_id"),
        "positions": ("login_id", "account_id", "position_id"),
        "transactions": ("login_id", "account_id", "transaction_id"),
        "securities": ("login_id", "security_id"),
    },
    "accounts": {
        "accounts": ("login_id", "account_id"),
        "transactions": ("login_id", "account_id", "transaction_id"),
    },
    "attributes": {
        # A group is a key of the payload's object and an attribute a key of its group.
        "values": ("login_id", "group", "attribute"),
        "detail": ("login_id", "group", "attribute", "transaction_id"),
    },
}

#: How a snapshot table is merged with ``snapshots="merge"`` (docs/dlt.md#how-rows-are-merged):
#: the rows of every login the load has rows for are deleted, then the load's rows inserted, in one
#: transaction. The rows to delete are chosen by ``destination_scope`` rather than
#: ``merge_key="login_id"``: with a primary key too, dlt deletes with one condition that ORs the
#: two keys, which DuckDB cannot run as a hash join (a second load of 3,000 logins took 11.7 s and
#: 5.7 GB instead of 2.6 s). The column is unquoted so that each database folds it as it folds its
#: own identifiers. ``deduplicated``: dlt would otherwise keep one row per primary key, and drop a
#: row whose ids the service repeated.
_WRITE_DISPOSITION: Any = {
    "disposition": "merge",
    "strategy": "delete-insert",
    "deduplicated": True,
    "destination_scope": "login_id IN (SELECT login_id FROM {staging_table})",
}


#: How a table of transactions is merged (docs/dlt.md#transactions-once): by its primary key alone,
#: since a load holds only the transactions that are new or changed since the last one: a changed
#: one replaces its row, the others stay.
_EVENTS_DISPOSITION: Any = {"disposition": "merge", "strategy": "delete-insert", "deduplicated": True}


class BankfeedSource(DltSource):
    """The dlt source that :func:`source` returns: a ``dlt.sources.DltSource`` with
    :attr:`failures`."""

    #: The fetches of the source's kinds (set by :func:`source`; a clone of the source has none).
    _bankfeed_fetches: tuple[_Fetch, ...] = ()

    @property
    def failures(self) -> list[tuple[str, BaseException]]:
        """The logins whose data was not loaded in the last run of this source, as
        ``(login_id, exception)``: one pair per login and kind that failed, in the order they
        came. Empty before the source is run."""
        return [pair for fetch in self._bankfeed_fetches for pair in fetch.failures]


def _arrow(gathered: Gathered, events: Events | None, cursors: dict[str, Any]) -> dict[str, pyarrow.Table]:
    """A batch's tables that have rows, each with the export's provenance columns; of the table
    of transactions, only those no earlier load had (``events``), each login's new cursor merged
    into ``cursors``, the resource's state."""
    import pyarrow

    found: dict[str, pyarrow.Table] = {}
    for table, combined in gathered.finish().items():
        arrow = combined.to_arrow()
        if events is not None and table == events.table:
            keep, batch = events.sift(combined._rows(0, len(combined)), combined.columns, gathered.logins)
            arrow = arrow.filter(pyarrow.array(keep, pyarrow.bool_()))
            for login, cursor in batch.items():
                cursors[fold(login)] = merge(cursors.get(fold(login)), cursor, windowed=events.windowed)
        found[table] = arrow
    return found


class _Fetch:
    """One kind's bulk calls over every login, once per run of the source, as batches of Arrow
    tables: the parent resource that every table of the kind reads from."""

    def __init__(
        self,
        client: Client,
        kind: Kind,
        login_ids: list[Any],
        concurrency: int,
        batch_logins: int,
        on_challenge: ChallengeHandler | None = None,
        full_refresh: bool = False,
        snapshots: str = "append",
        keep_raw: bool = False,
    ) -> None:
        self.client = client
        self.full_refresh = full_refresh
        #: ``append`` (the default): each load adds its snapshot of the snapshot tables, with its
        #: run; ``merge``: it replaces each login's rows.
        self.snapshots = snapshots
        self.kind = kind
        self.keep_raw = keep_raw
        self.login_ids = login_ids
        self.concurrency = concurrency
        self.on_challenge = on_challenge
        # The export's limits: at batch_logins logins, or at its rows limit, so that one login with
        # many transactions cannot grow a batch without bound.
        self.limits = Limits(logins=batch_logins)
        self.failures: list[tuple[str, BaseException]] = []

    def batches(self) -> Iterator[dict[str, Any]]:
        """The kind's tables, a batch of logins at a time (a generator dlt runs once per run);
        with ``keep_raw``, the batch's payloads too, under :data:`_RAW`."""
        self.failures = []
        # This load's run, as an export names its runs (docs/export.md#runs): its snapshot rows
        # carry it unless ``snapshots="merge"``.
        self.run = time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + "-" + secrets.token_hex(3)
        tables = self.kind.tables
        seen: set[str] = set()
        batch = Gathered(tables)
        payloads: list[dict[str, Any]] = []
        call = self.kind.bulk_call(self.client)
        events, cursors = self._events()
        for options, logins in self._groups(events):
            for start in range(0, len(logins), LOGINS_PER_CALL):
                chunk = logins[start : start + LOGINS_PER_CALL]
                # Closing the bulk call (dlt closes this generator when a run stops) stops its logins.
                with call(
                    chunk, concurrency=self.concurrency, on_challenge=self.on_challenge, **self.kind.options, **options
                ) as results:
                    for login_id, result in results:
                        if isinstance(result, BaseException):
                            self.failures.append((login_id, result))
                            continue
                        fetched_at = time.time_ns() // 1000
                        batch.add(login_id, result, fetched_at)
                        if self.keep_raw:
                            payloads.append(_payload_row(login_id, result, fetched_at))
                        if len(batch.logins) >= self.limits.logins or batch.rows >= self.limits.rows:
                            done, batch = _arrow(batch, events, cursors), Gathered(tables, like=batch.gathering)
                            seen.update(done)
                            yield {**self._with_run(done), _RAW: payloads}
                            payloads = []
        done = _arrow(batch, events, cursors) if batch.logins else {}
        seen.update(done)
        # A table no login had a row in still gets its columns in the destination, as the
        # export writes an empty file for it (docs/export.md#the-layout).
        money = self.client.money
        done.update(
            {table: schema(self.kind.name, table, money).empty_table() for table in tables if table not in seen}
        )
        yield {**self._with_run(done), _RAW: payloads}
        self._warn()

    def _with_run(self, batch: dict[str, pyarrow.Table]) -> dict[str, pyarrow.Table]:
        """``batch``, its snapshot tables with this load's ``run_date`` and ``run_id`` last
        when snapshots are appended (docs/dlt.md#snapshots-kept-per-load)."""
        if self.snapshots != "append":
            return batch
        import datetime

        import pyarrow

        day = datetime.date(int(self.run[0:4]), int(self.run[4:6]), int(self.run[6:8]))
        for table, arrow in batch.items():
            if (self.kind.name, table) in EVENT_KEYS:
                continue
            rows = arrow.num_rows
            arrow = arrow.append_column("run_date", pyarrow.array([day] * rows, pyarrow.date32()))
            batch[table] = arrow.append_column("run_id", pyarrow.array([self.run] * rows, pyarrow.string()))
        return batch

    def _events(self) -> tuple[Events | None, dict[str, Any]]:
        """What earlier loads of this pipeline had of the kind's transactions: each login's cursor,
        kept in the resource's dlt state, which dlt commits with the load (docs/dlt.md#transactions-once).
        The kind asked otherwise than before (other ``days``), or ``full_refresh``: started over."""
        table = next((table for name, table in EVENT_KEYS if name == self.kind.name), None)
        if table is None:
            return None, {}
        state = dlt.current.resource_state()
        asked = options_key(self.kind.options)
        if self.full_refresh or state.get("options") != asked:
            state["cursors"] = {}
        state["options"] = asked
        cursors: dict[str, Any] = state.setdefault("cursors", {})
        return Events(self.kind.name, table, cursors), cursors

    def _groups(self, events: Events | None) -> Iterator[tuple[dict[str, Any], list[Any]]]:
        """The logins grouped by the day their transactions are asked from (``date_from``), as
        the export groups them; all of them with no option when there is none to ask from."""
        if events is None or not events.windowed or not events.previous:
            yield {}, self.login_ids
            return
        groups: dict[str | None, list[Any]] = {}
        for login in self.login_ids:
            groups.setdefault(events.date_from(login), []).append(login)
        for day, logins in sorted(groups.items(), key=lambda item: item[0] or ""):
            yield ({} if day is None else {"date_from": day}), logins

    def _warn(self) -> None:
        if not self.failures:
            return
        classes = Counter(type(error).__name__ for _, error in self.failures)
        by_class = ", ".join(f"{name} {count}" for name, count in classes.most_common())
        # bankfeed's exceptions carry no secret (docs/errors.md#what-every-error-keeps).
        _log.warning(
            "%s: %d of %d logins failed and were not loaded (%s); source.failures lists them",
            self.kind.label,
            len(self.failures),
            len(self.login_ids),
            by_class,
        )


#: The key of a batch that holds its payloads (``keep_raw``): no table is named so.
_RAW = "_raw"


def _payload_row(login_id: str, result: Any, fetched_at_us: int) -> dict[str, Any]:
    """A row of a kind's ``<kind>_raw`` resource: the login, the RequestId, when, and the payload
    as an object, so that dlt makes columns (and child tables) of its fields, a new one included."""
    import datetime

    return {
        "login_id": login_id,
        "request_id": getattr(result, "request_id", None),
        "fetched_at": datetime.datetime.fromtimestamp(fetched_at_us / 1_000_000, tz=datetime.timezone.utc),
        "payload": result.raw,
    }


def _pick_payloads(batch: dict[str, Any]) -> Iterator[list[dict[str, Any]]]:
    """The step of a kind's ``<kind>_raw`` resource: the payloads of each batch."""
    payloads = batch.get(_RAW)
    if payloads:
        yield payloads


def _batches(fetch: _Fetch) -> Any:
    """The head of a kind's parent resource: a function of no argument, as dlt takes one."""

    def batches() -> Iterator[dict[str, Any]]:
        return fetch.batches()

    return batches


def _pick(table: str) -> Any:
    """The step of a table's resource: its part of each batch of its kind."""

    def pick(batch: dict[str, pyarrow.Table]) -> Iterator[pyarrow.Table]:
        part = batch.get(table)
        if part is not None:
            yield part

    return pick


def _disposition(fetch: _Fetch, table: str) -> tuple[Any, tuple[str, ...]]:
    """How a table of ``fetch``'s kind is loaded, and its primary key: the transactions merged by
    key, the snapshots appended with their run, or merged by login (``snapshots="merge"``)."""
    keys = PRIMARY_KEYS[fetch.kind.name][table]
    if (fetch.kind.name, table) in EVENT_KEYS:
        return _EVENTS_DISPOSITION, keys
    if fetch.snapshots == "append":
        return "append", (*keys, "run_id")
    return _WRITE_DISPOSITION, keys


def _resources(fetches: Sequence[_Fetch]) -> Iterator[Any]:
    for fetch in fetches:
        kind = fetch.kind.name
        # Not selected: dlt runs it for the tables' resources (each batch goes to every one of
        # them) and loads no table of its own, so each login is fetched once per kind.
        parent = dlt.resource(_batches(fetch), name=f"_{kind}_batches", selected=False)
        yield parent
        for table in KINDS[kind]:
            disposition, keys = _disposition(fetch, table)
            yield dlt.transformer(
                _pick(table),
                data_from=parent,
                name=f"{kind}_{table}",
                primary_key=keys,
                write_disposition=disposition,
                # The arrow fields are nullable; declaring the keys so too keeps dlt from
                # warning on every batch that its hints differ from the data's.
                columns={key: {"nullable": True} for key in keys},
            )
        if fetch.keep_raw:
            # Appended: each run's payloads are history, as the export's _raw/<kind> keeps them.
            # Nested to any depth, so each new field of the payload becomes a column.
            yield dlt.transformer(
                _pick_payloads,
                data_from=parent,
                name=f"{kind}_raw",
                write_disposition="append",
                max_table_nesting=1000,
            )


@dlt.source(name="bankfeed", section="bankfeed", max_table_nesting=0, _impl_cls=BankfeedSource)
def _bankfeed(fetches: Sequence[_Fetch]) -> Any:
    return list(_resources(fetches))


def source(
    client: Client,
    login_ids: Iterable[str],
    what: Iterable[object] | str = ("investments",),
    *,
    concurrency: int = 32,
    days: int | str | None = None,
    batch_logins: int = 250,
    on_challenge: ChallengeHandler | None = None,
    money: str | None = None,
    full_refresh: bool = False,
    snapshots: str = "append",
    keep_raw: bool = False,
) -> BankfeedSource:
    """A dlt source (``@dlt.source`` named ``bankfeed``) of every login's data of the kinds in
    ``what``, for ``pipeline.run(...)`` (docs/dlt.md).

    ``what`` takes what :func:`bankfeed.export` takes: ``"investments"``, ``"accounts"``
    (``days=90`` or ``365``), ``"attributes:<package>"``, ``("attributes", {query})``. Each table
    of each kind is a resource named ``<kind>_<table>`` (``investments_positions``,
    ``accounts_transactions``, ``attributes_values``) that yields Arrow tables with the columns
    of ``bf.schema(kind, table)``: ``login_id``, ``request_id``, ``fetched_at``, then the table's
    own. Every table but the transactions is a snapshot, appended with its run by default
    (``snapshots="append"``): each load adds its rows, ending with the load's ``run_date`` and
    ``run_id``, so the history of balances and positions is data, as in an export
    (docs/dlt.md#snapshots-kept-per-load). ``snapshots="merge"`` keeps each login's newest only
    instead (``write_disposition`` merge, ``delete-insert``, each loaded login's rows deleted
    first; the primary key of :data:`PRIMARY_KEYS`): loading logins again replaces their rows,
    however they changed, and leaves other logins' rows alone. The transactions are incremental
    (docs/dlt.md#transactions-once): the pipeline's dlt state keeps where each login's stand, a
    later load asks ``accounts`` only from 7 days before the newest (``DateFrom``) and loads only
    the transactions that are new or changed, merged by their primary key; ``full_refresh=True``
    (or other ``days``) starts over.

    Each kind is fetched once per run, ``concurrency`` logins at a time, whichever of its tables
    are selected (``source.with_resources("investments_positions")``); its tables are handed to
    dlt ``batch_logins`` logins at a time. A login that fails is not loaded: :attr:`BankfeedSource.failures`
    lists ``(login_id, exception)`` after the run, and a warning on the ``bankfeed.dlt`` logger
    counts them per kind. A login whose cached read is asked a security question is such a
    failure (:class:`bankfeed.ChallengeRequired`), unless ``on_challenge`` answers it, as the
    bulk calls take it (``bf.answers({...})``, or a function of the challenge, whose ``login_id``
    names the login); without one nothing is answered.

    ``money`` (``"float"`` or ``"decimal"``; by default the client's ``money`` option, float
    unless set) is how the money columns come: ``"decimal"`` loads every amount, balance, value,
    price and quantity as an exact ``decimal`` column of the size ``bf.schema`` documents. Choose
    it when a pipeline is made: a pipeline that loaded floats gets variant columns from dlt if it
    switches (docs/dlt.md#money).

    ``keep_raw=True`` adds a resource ``<kind>_raw`` per kind (``investments_raw``), appended to
    on every run: a row per login with ``login_id``, ``request_id``, ``fetched_at`` and the
    ``payload`` as an object, which dlt unnests into columns and child tables, so a field the
    service adds becomes a column by dlt's schema evolution (docs/dlt.md#the-payloads-kept).

    Example::

        pipeline = dlt.pipeline("bankfeed", destination="duckdb", dataset_name="nightly")
        source = bankfeed.dlt.source(client, login_ids, what=["investments", "accounts"], days=365, money="decimal")
        pipeline.run(source)
        retry = [login_id for login_id, _ in source.failures]
    """
    if not isinstance(client, Client):
        raise TypeError(
            f"client must be a bf.Client, not {type(client).__name__}"
            + ("; the dlt source runs its bulk calls with a blocking Client" if isinstance(client, AsyncClient) else "")
        )
    _check_count("concurrency", concurrency)
    _check_count("batch_logins", batch_logins)
    kinds = parse_what(what, days=days)
    check_what(kinds, client, on_challenge=on_challenge)
    client = with_money(client, money)
    ids = unique_list(login_ids)
    if not isinstance(full_refresh, bool):
        raise TypeError(f"full_refresh must be True or False, not {type(full_refresh).__name__}")
    if snapshots not in ("merge", "append"):
        raise _config_error("snapshots", f'must be "merge" or "append", got {snapshots!r}')
    if not isinstance(keep_raw, bool):
        raise _config_error("keep_raw", f"must be True or False, got {keep_raw!r}")
    fetches = tuple(
        _Fetch(client, kind, ids, concurrency, batch_logins, on_challenge, full_refresh, snapshots, keep_raw)
        for kind in kinds
    )
    made = _bankfeed(fetches)
    made._bankfeed_fetches = fetches
    return made
