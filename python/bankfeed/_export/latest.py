"""``bf.read_latest``: the newest data of an export written night after night
(docs/export.md#reading-the-newest).

An export keeps every run's rows (docs/export.md#runs). A snapshot table (accounts, balances,
positions, securities, attributes) then holds one snapshot of each login per run, and its newest
is the rows of the newest run that wrote the login in the kind, which the journal says (a login
whose newest run wrote no row of a table has none there then). An event table (transactions)
holds each transaction once, in the run that first wrote it, and again in a later run that found
it changed (docs/export.md#transactions-once): its newest version is the row of the greatest
``run_id``, the runs' names sorting as they ran.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from bankfeed._export.kinds import EVENT_KEYS, KINDS
from bankfeed._export.ondisk.journal import read_journal, run_of
from bankfeed._export.ondisk.layout import JOURNAL, MANIFEST
from bankfeed._export.ondisk.manifest import previous_manifest
from bankfeed._export.ondisk.run_records import read_runs
from bankfeed._export.storage import Storage
from bankfeed.errors import _config_error

if TYPE_CHECKING:
    import pyarrow

__all__ = ["read_latest"]

#: Between the parts of a key made one text: a character no LoginId, run or id holds.
_SEPARATOR = "\x1f"


def read_latest(out: str | os.PathLike[str], kind: str, table: str) -> pyarrow.Table:
    """The newest data of ``table`` of ``kind`` in the export ``out``, as a ``pyarrow.Table``
    (``.to_pandas()``, ``polars.from_arrow(...)``), with the columns of ``bf.schema(kind, table)``
    then ``run_date`` (a date) and ``run_id`` (docs/export.md#reading-the-newest).

    A snapshot table (``accounts``, ``positions``, ``securities``, attributes' ``values`` and
    ``detail``) gives each login's newest snapshot: the rows of the newest run that wrote the
    login in ``kind``. A table of transactions (``transactions`` of ``investments`` and of
    ``accounts``) gives each transaction once, keyed by ``login_id``, ``account_id`` and
    ``transaction_id``, in its newest version: the row of the newest run that wrote it. ``out``
    is the export's directory (or fsspec URL); nothing in it is changed, and it may be read
    while a run writes (only committed files are read).

    Example::

        positions = bf.read_latest("nightly", "investments", "positions").to_pandas()
        transactions = bf.read_latest("nightly", "accounts", "transactions")
    """
    import pyarrow
    import pyarrow.compute
    import pyarrow.dataset

    for name, value in (("kind", kind), ("table", table)):
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    if kind not in KINDS:
        raise _config_error("kind", f"must be one of {', '.join(KINDS)}, got {kind!r}")
    if table not in KINDS[kind]:
        raise _config_error("table", f"must be one of {', '.join(KINDS[kind])} for {kind}, got {table!r}")
    storage = Storage(out)
    if not storage.exists(storage.path(JOURNAL)) and not storage.exists(storage.path(MANIFEST)):
        raise _config_error("out", f"holds no export: {storage.shown} has no {JOURNAL}/ and no {MANIFEST}")
    fmt = _format(storage)
    directory = storage.path(kind, table)
    if not storage.exists(directory):
        raise _config_error("table", f"{kind}/{table} is not in the export in {storage.shown}: no run asked for {kind}")
    runs = pyarrow.dataset.partitioning(
        pyarrow.schema([("run_date", pyarrow.date32()), ("run_id", pyarrow.string())]), flavor="hive"
    )
    data = pyarrow.dataset.dataset(
        directory,
        format=fmt,
        partitioning=runs,
        # Only the files of committed batches: a temporary one's name starts with a dot, which
        # a dataset skips (``writer.py``).
        filesystem=storage.filesystem,
    ).to_table()
    keys = EVENT_KEYS.get((kind, table))
    if keys is not None:
        newest = data.group_by(list(keys)).aggregate([("run_id", "max")])
        wanted = _joined([*(newest.column(key) for key in keys), newest.column("run_id_max")])
        found = _joined([*(data.column(key) for key in keys), data.column("run_id")])
    else:
        latest = _latest_runs(storage, kind, fmt)
        wanted = pyarrow.array([f"{login}{_SEPARATOR}{run}" for login, run in latest.items()], pyarrow.string())
        found = _joined([data.column("login_id"), data.column("run_id")])
    return data.filter(pyarrow.compute.is_in(found, value_set=wanted))


def _joined(columns: list[Any]) -> Any:
    """Each row's values of ``columns`` as one text (a null as the empty text)."""
    import pyarrow
    import pyarrow.compute

    texts = [pyarrow.compute.fill_null(pyarrow.compute.cast(column, pyarrow.string()), "") for column in columns]
    return pyarrow.compute.binary_join_element_wise(*texts, _SEPARATOR)


def _format(storage: Storage) -> str:
    """The export's format, as its processes' records (or its manifest) say."""
    formats = [record.get("format") for record in read_runs(storage)]
    formats.append((previous_manifest(storage) or {}).get("format"))
    return next((fmt for fmt in reversed(formats) if fmt), "parquet")


def _latest_runs(storage: Storage, kind: str, fmt: str) -> dict[str, str]:
    """Each login written in ``kind``, to the newest run that wrote it (the journal's word)."""
    latest: dict[str, str] = {}
    for _, entry in read_journal(storage, kind, fmt):
        run = run_of(entry)
        for login, _ in entry.get("written") or []:
            if latest.get(login, "") < run:
                latest[login] = run
    return latest
