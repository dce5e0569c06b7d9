"""Results written as they come, a batch at a time, so that a kill loses little and leaves nothing
half written (docs/export.md#how-files-are-written).

A batch is the logins of one kind gathered since the last commit: their rows, one combined table
per table (``bf.combine``'s gathering, ``login_id`` first), and their failures. A commit:

1. writes each table's rows (and, with ``keep_raw``, the batch's payloads: ``_raw/<kind>``,
   ``raw.py``) to a hidden temporary file in the table's partition of the run
   (``<kind>/<table>/run_date=<date>/run_id=<run>/``, :func:`partition`;
   ``.part-<batch>.parquet.tmp``: readers of the dataset skip names starting with ``.``, and a
   ``*.parquet`` glob does not match it);
2. writes the batch's journal entry, ``_journal/<kind>/<batch>.json``: the logins written (with
   their RequestIds), the failures, the files and their row counts; this is the moment the batch
   is committed;
3. renames the temporary files to ``part-<batch>.parquet``.

A kill before 2, or during it (the entry is written under a temporary name and renamed into place:
that rename is the commit), leaves temporary files only, which a resume deletes, its logins
fetched again; a kill between 2 and 3 leaves a committed batch whose renames a resume completes
(``state.py``). So a login is in a table's dataset once, or not at all, whatever is killed when.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bankfeed._export.columns import Gathered
from bankfeed._export.events import Events
from bankfeed._export.formulas import escaped_cell, escaped_columns
from bankfeed._export.kinds import PROVENANCE, Kind
from bankfeed._export.ondisk.journal import failure_record, write_entry
from bankfeed._export.ondisk.layout import JOURNAL, part_name, partition, record_file, temporary_name
from bankfeed._export.raw import RawRows, raw_directory
from bankfeed._export.storage import Storage

if TYPE_CHECKING:
    from bankfeed._native import _Gathering

__all__ = ["KindWriter", "Limits"]


@dataclass(frozen=True)
class Limits:
    """When a batch is committed: at this many logins, at this many rows, or this many seconds
    after its first login, whichever comes first."""

    logins: int = 1000
    rows: int = 250_000
    seconds: float = 5.0


@dataclass
class _Batch:
    started: float
    gathered: Gathered
    failures: list[dict[str, Any]] = field(default_factory=list)
    #: The batch's payloads, with ``keep_raw`` (``raw.py``).
    raw: RawRows | None = None

    @property
    def empty(self) -> bool:
        return not self.gathered.logins and not self.failures


class KindWriter:
    """Writes one kind's results under ``storage``, a batch at a time, into the partition of the
    run ``run`` of each table (:func:`partition`); batch names start with ``prefix`` (unique to
    the process, or to the partition of a cluster run). ``csv_formulas`` says how CSV files write
    a text cell that a spreadsheet would run (``formulas.py``). ``events`` sifts the kind's
    table of transactions: what earlier runs wrote is not written again (``events.py``).
    ``keep_raw`` keeps each login's payload too (``raw.py``)."""

    def __init__(
        self,
        storage: Storage,
        kind: Kind,
        fmt: str,
        prefix: str,
        limits: Limits,
        *,
        run: str,
        csv_formulas: str = "escape",
        events: Events | None = None,
        keep_raw: bool = False,
    ) -> None:
        self.storage = storage
        #: The kind's table of transactions, written once across runs (``events.py``); None: the
        #: kind has none.
        self.events = events
        #: Whether each login's payload is kept in ``_raw/<kind>``, in the run's partition (``raw.py``).
        self.keep_raw = keep_raw
        self.kind = kind
        self.fmt = fmt
        self.csv_formulas = csv_formulas
        self.prefix = prefix
        self.run = run
        self.limits = limits
        self._sequence = 0
        self._batch: _Batch | None = None
        #: The last batch's gathering, spent: the next batch's tables start at its sizes.
        self._last_gathering: _Gathering | None = None
        #: Rows written per table by this writer.
        self.rows: dict[str, int] = dict.fromkeys(kind.tables, 0)
        #: The journal entries this writer committed, by name: when, and the run (the end of the
        #: run does not read them again to find that: ``journal.read_journal``'s ``known``).
        self.committed: dict[str, tuple[float, str]] = {}
        #: Rows gathered so far, committed or not: what a progress display counts.
        self.gathered = 0
        #: A count, not the LoginIds: what is written is in the journal, and at 100,000 logins a
        #: set of them is the largest thing an export would keep (BENCHMARKS.md, export).
        self.logins_written = 0
        for table in kind.tables:
            storage.makedirs(storage.path(kind.name, table, partition(run)))
        storage.makedirs(storage.path(JOURNAL, kind.name))
        if keep_raw:
            storage.makedirs(storage.path(raw_directory(storage, kind.name), partition(run)))

    def _current(self) -> _Batch:
        if self._batch is None:
            gathered = Gathered(self.kind.tables, like=self._last_gathering)
            raw = RawRows() if self.keep_raw else None
            self._batch = _Batch(started=time.monotonic(), gathered=gathered, raw=raw)
        return self._batch

    def add(self, login_id: str, result: Any, fetched_at_us: int) -> None:
        """Gathers the result of ``login_id``."""
        batch = self._current()
        self.gathered += batch.gathered.add(login_id, result, fetched_at_us)
        if batch.raw is not None:
            batch.raw.add(login_id, result, fetched_at_us)

    def fail(self, login_id: str, error: BaseException) -> None:
        """Keeps the failure of ``login_id``, committed with the batch."""
        self._current().failures.append(failure_record(login_id, error, self.kind.name))

    def due(self) -> bool:
        """Whether the batch should be committed now."""
        batch = self._batch
        if batch is None or batch.empty:
            return False
        return (
            len(batch.gathered.logins) >= self.limits.logins
            or batch.gathered.rows >= self.limits.rows
            or time.monotonic() - batch.started >= self.limits.seconds
        )

    def commit(self) -> None:
        """Writes the batch (see the module's docstring); nothing when it is empty."""
        batch, self._batch = self._batch, None
        if batch is None or batch.empty:
            return
        self._sequence += 1
        name = f"{self.prefix}-{self._sequence:06d}"
        gathered = batch.gathered
        files: dict[str, str] = {}
        rows: dict[str, int] = {}
        tables = gathered.finish()
        self._last_gathering = gathered.gathering
        where = partition(self.run)
        cursors: dict[str, Any] = {}
        for table, combined in tables.items():
            keep: list[bool] | None = None
            if self.events is not None and table == self.events.table:
                keep, cursors = self.events.sift(combined._rows(0, len(combined)), combined.columns, gathered.logins)
                if not any(keep):
                    continue  # nothing new: no file
            directory = self.storage.path(self.kind.name, table, where)
            self._write(table, combined, self.storage.path(directory, temporary_name(name, self.fmt)), keep)
            files[table] = f"{where}/{part_name(name, self.fmt)}"
            rows[table] = len(combined) if keep is None else sum(keep)
        if self.events is not None and self.events.table not in tables:
            # No transaction at all in the batch: a full refresh still starts the logins over.
            _, cursors = self.events.sift([], [*PROVENANCE, "account_id", "transaction_id", "date"], gathered.logins)
        # The payloads go with the rows: the same batch, the same commit, the run's partition
        # (``raw.py``).
        raw_file = None
        if batch.raw is not None and batch.raw.logins:
            directory = self.storage.path(raw_directory(self.storage, self.kind.name), where)
            temporary = self.storage.path(directory, temporary_name(name, self.fmt))
            batch.raw.write(self.storage, temporary, self.fmt, escape=self.csv_formulas == "escape")
            raw_file = f"{where}/{part_name(name, self.fmt)}"
        committed_at = write_entry(
            self.storage,
            self.kind.name,
            name,
            run=self.run,
            written=zip(gathered.logins, gathered.request_ids, strict=True),
            failed=batch.failures,
            files=files,
            rows=rows,
            raw=raw_file,
            cursors=cursors,
        )
        self.committed[record_file(name)] = (committed_at, self.run)
        for table, file in files.items():
            directory = self.storage.path(self.kind.name, table, where)
            self.storage.rename(
                self.storage.path(directory, temporary_name(name, self.fmt)),
                self.storage.path(self.kind.name, table, file),
            )
        if raw_file is not None:
            top = raw_directory(self.storage, self.kind.name)
            self.storage.rename(
                self.storage.path(top, where, temporary_name(name, self.fmt)), self.storage.path(top, raw_file)
            )
        for table, count in rows.items():
            self.rows[table] += count
        self.logins_written += len(gathered.logins)

    def _write(self, table: str, combined: Any, path: str, keep: list[bool] | None = None) -> None:
        """Writes ``combined``, the rows of ``table`` with their provenance columns, to ``path``;
        with ``keep``, only the rows it marks."""
        try:
            import pyarrow
        except ImportError:
            pyarrow = None
        escape = self.csv_formulas == "escape"
        if pyarrow is None:
            # CSV without pyarrow: what a machine without it can still produce.
            _write_csv_records(self.storage, path, combined, escape=escape, keep=keep)
            return
        arrow = combined.to_arrow()
        if keep is not None:
            arrow = arrow.filter(pyarrow.array(keep, pyarrow.bool_()))
        with self.storage.open_write(path) as file:
            if self.fmt == "parquet":
                import pyarrow.parquet

                pyarrow.parquet.write_table(arrow, file, compression="zstd", **_parquet_options(table, arrow.schema))
            else:
                import pyarrow.csv

                flat = _flat(arrow)
                pyarrow.csv.write_csv(escaped_columns(flat) if escape else flat, file)


#: Text columns written without a dictionary: each row's own identifier, and free text. Their
#: values seldom repeat within a part file, so a dictionary only costs the hashing of every value
#: before the writer gives it up (on the sandbox's investments: 11% less CPU to encode, and files
#: 2.5% smaller; BENCHMARKS.md, export).
_SELDOM_REPEATED = frozenset({"position_id", "transaction_id", "description"})
#: In a table of accounts, the rows are the accounts: their identifiers are unique too.
_SELDOM_REPEATED_IN_ACCOUNTS = frozenset({"account_id", "full_account_id", "account_number"})


def _parquet_options(table: str, schema: Any) -> dict[str, Any]:
    """How a part file of ``table`` is encoded: dictionaries for the text columns whose values
    repeat (a login's ids and names repeat over its rows; amounts, dates, each row's own id and
    free text seldom do), and statistics for the columns a reader filters on (the login, the
    request, the dates), which lets it skip files. Against pyarrow's defaults: a quarter less CPU
    to encode, and files 7% smaller (BENCHMARKS.md, export)."""
    import pyarrow

    plain = _SELDOM_REPEATED | (_SELDOM_REPEATED_IN_ACCOUNTS if table == "accounts" else frozenset())
    return {
        "use_dictionary": [
            field.name for field in schema if pyarrow.types.is_string(field.type) and field.name not in plain
        ],
        "write_statistics": [
            field.name
            for field in schema
            if field.name in ("login_id", "request_id", "fetched_at") or pyarrow.types.is_temporal(field.type)
        ],
    }


def _flat(table: Any) -> Any:
    """``table`` with its list columns (a security's aliases) as JSON text, which CSV can hold."""
    import pyarrow

    for index, column in enumerate(table.schema):
        if pyarrow.types.is_list(column.type) or pyarrow.types.is_large_list(column.type):
            texts = [None if value is None else json.dumps(value) for value in table.column(index).to_pylist()]
            table = table.set_column(index, column.name, pyarrow.array(texts, pyarrow.string()))
    return table


def _write_csv_records(storage: Storage, path: str, table: Any, *, escape: bool, keep: list[bool] | None) -> None:
    """The rows of ``table`` (its provenance columns included) as CSV, written with the standard
    library; with ``escape``, no text cell starts as a formula (``formulas.py``)."""
    import csv
    import io

    text = io.StringIO()
    columns = list(table.columns)
    out = csv.writer(text)
    out.writerow(columns)
    fetched_at = columns.index("fetched_at")
    records = table.to_records()
    for record in records if keep is None else (record for record, kept in zip(records, keep, strict=True) if kept):
        values: list[Any] = [record[column] for column in columns]
        # ISO 8601 with its zone (2026-11-27T05:00:00.123456+00:00), which every CSV reader parses.
        values[fetched_at] = values[fetched_at].isoformat()
        # A list (a security's aliases) as JSON text, as `_flat` writes it with pyarrow.
        cells = ["" if value is None else json.dumps(value) if isinstance(value, list) else value for value in values]
        out.writerow([escaped_cell(cell) for cell in cells] if escape else cells)
    with storage.open_write(path) as file:
        file.write(text.getvalue().encode("utf-8"))


def write_empty(storage: Storage, kind: Kind, table: str, fmt: str, batch: str, run: str, money: str = "float") -> None:
    """An empty file of ``table``, with its columns, in the partition of the run ``run``, where the
    table has no file yet: so that ``pyarrow.dataset``, ``pandas.read_parquet`` and a
    ``*/*/*.parquet`` glob read a table with no row as such, rather than fail on an empty
    directory. Rows added later come in files of their own."""
    from bankfeed._export.kinds import PROVENANCE, schema

    storage.makedirs(storage.path(kind.name, table, partition(run)))
    path = storage.path(kind.name, table, partition(run), part_name(batch, fmt))
    try:
        import pyarrow
    except ImportError:
        columns = list(PROVENANCE)  # without pyarrow: CSV, and the table's columns are unknown here
        storage.write_whole(path, (",".join(columns) + "\n").encode("utf-8"))
        return
    empty = schema(kind.name, table, money).empty_table()
    sink = pyarrow.BufferOutputStream()
    if fmt == "parquet":
        import pyarrow.parquet

        pyarrow.parquet.write_table(empty, sink, compression="zstd", **_parquet_options(table, empty.schema))
    else:
        import pyarrow.csv

        pyarrow.csv.write_csv(_flat(empty), sink)
    storage.write_whole(path, sink.getvalue().to_pybytes())
