"""One table of some logins as one Arrow table, with the exported columns: what a partition of
``bankfeed.dask.read`` and a batch of ``bankfeed.spark.fetch`` compute
(docs/scale-out.md#one-table-as-a-dask-dataframe).

The rows are those ``bf.export`` writes: ``login_id``, ``request_id`` and ``fetched_at`` first
(a gathering with provenance), then the in-memory table's columns, cast to ``bf.schema(kind,
table)``, so that a partition always has the schema its frame was declared with.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bankfeed import _native
from bankfeed._export.kinds import KINDS, Kind, did_you_mean, parse_what, schema, with_money
from bankfeed.errors import _check_count, _config_error

if TYPE_CHECKING:
    import pyarrow

    from bankfeed._native import Client

__all__ = ["TableFetch", "kind_of"]

#: What a failed login does to its partition: raise its exception, or leave it out.
ON_ERROR = ("raise", "skip")


def kind_of(kind: str, table: str, options: Mapping[str, Any]) -> Kind:
    """The kind of ``kind`` (``"investments"``, ``"accounts"``, ``"attributes"``, or export's
    ``"attributes:<package>"``) with the bulk call's ``options`` over its defaults; ``table`` is
    checked against the kind's tables."""
    if not isinstance(kind, str):
        raise _config_error("kind", f"must be investments, accounts or attributes, got {type(kind).__name__}")
    if kind == "attributes":
        if not options:
            raise _config_error(
                "kind", 'attributes needs the bulk call\'s options: package="income", or attributes={...}'
            )
        found = Kind("attributes", label="attributes")
    else:
        (found,) = parse_what([kind])
    if not isinstance(table, str) or table not in KINDS[found.name]:
        raise _config_error(
            "table",
            f"must be one of {', '.join(KINDS[found.name])} for {found.name}, got {table!r}"
            + did_you_mean(table, KINDS[found.name]),
        )
    return Kind(found.name, {**found.options, **options}, label=found.label)


@dataclass(frozen=True)
class TableFetch:
    """``table`` of ``kind`` for a list of logins, by the kind's bulk call with ``client``.

    Pickles as the client (its configuration) and the arguments; its ``repr`` names only the kind
    and the table, so that a worker's log of a failed task shows nothing more
    (docs/scale-out.md#keys)."""

    client: Client
    kind: Kind
    table: str
    concurrency: int = 32
    on_error: str = "raise"
    #: What distinguishes this fetch from every other in a task graph (``bankfeed.dask.read``).
    token: str = field(default="", compare=False)
    #: How the rows hold money (docs/tables.md#money); None: as the client's ``money`` option.
    money: str | None = None

    def __post_init__(self) -> None:
        _check_count("concurrency", self.concurrency)
        # The client whose tables hold money as asked: it is what travels to the workers.
        object.__setattr__(self, "client", with_money(self.client, self.money))
        if self.on_error not in ON_ERROR:
            raise _config_error("on_error", f'must be "raise" or "skip", got {self.on_error!r}')
        # The options refused now, as the bulk call would refuse them in every partition later.
        self.kind.check(self.client)

    @property
    def schema(self) -> pyarrow.Schema:
        """The Arrow schema of the rows: ``bf.schema(kind, table, money)``."""
        return schema(self.kind.name, self.table, self.client.money)

    def arrow(self, login_ids: Iterable[Any]) -> pyarrow.Table:
        """The rows of ``login_ids``, each login's together, in the order the logins finished."""
        ids = list(login_ids)
        target = self.schema
        if not ids:
            return target.empty_table()
        gathering = _native._Gathering(provenance=True)
        call = self.kind.bulk_call(self.client)(ids, concurrency=self.concurrency, **self.kind.options)
        with call as results:
            for login_id, result in results:
                if isinstance(result, BaseException):
                    if self.on_error == "raise":
                        # Leaving the block stops the logins still running: the partition failed.
                        raise result
                    continue
                gathering.add((login_id, result), time.time_ns() // 1000)
        gathered = gathering.finish().tables.get(self.table)
        if gathered is None or len(gathered) == 0:
            return target.empty_table()
        return gathered.to_arrow().cast(target)

    def __repr__(self) -> str:
        return f"<bankfeed fetch of {self.kind.name}/{self.table}>"
