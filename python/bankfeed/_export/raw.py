"""The payloads an export keeps with ``keep_raw`` (docs/export.md#the-payloads-kept): each
login's payload per kind, as JSON text, in the table ``_raw/<kind>``, in the run's partition as
every table (``_raw/<kind>/run_date=<date>/run_id=<run>/part-<batch>.<fmt>``), written by the
batch that writes the login's rows and committed by its journal entry, so a payload is there once
exactly when the login's rows are.

The files hold no ``run_id`` column: the partition gives it to every reader, as for every table,
and a column of that name beside the partition's would clash in a reader of the partitions.

The payloads hold no secret: the keys, the token and the answers go in the requests' headers and
bodies, never in an answer's payload, and the export keeps answers only."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bankfeed._export.formulas import escaped_cell, escaped_columns
from bankfeed._export.ondisk.layout import RAW
from bankfeed._export.storage import Storage

__all__ = ["COLUMNS", "RawRows", "committed_files", "payload_text", "raw_directory"]

#: The columns of a file of payloads: the login, the RequestId, when it was fetched (UTC), and the
#: payload as the service sent it. The run is the partition's (``run_date``, ``run_id``).
COLUMNS = ("login_id", "request_id", "fetched_at", "payload")


def payload_text(result: object) -> str:
    """The payload of ``result`` as the service sent it: the bytes a result pickles as
    (docs/architecture.md#pickling), so no number is written again through a float."""
    reduced: Any = result.__reduce__()
    data = reduced[1][0]
    return data.decode("utf-8") if isinstance(data, bytes) else str(data)


@dataclass
class RawRows:
    """The payloads of one batch, in the order its logins came."""

    logins: list[str] = field(default_factory=list)
    request_ids: list[str | None] = field(default_factory=list)
    fetched_at_us: list[int] = field(default_factory=list)
    payloads: list[str] = field(default_factory=list)

    def add(self, login_id: str, result: object, fetched_at_us: int) -> None:
        self.logins.append(login_id)
        self.request_ids.append(getattr(result, "request_id", None))
        self.fetched_at_us.append(fetched_at_us)
        self.payloads.append(payload_text(result))

    def write(self, storage: Storage, path: str, fmt: str, *, escape: bool) -> int:
        """Writes the rows to ``path`` as ``fmt`` (parquet or csv; with ``escape``, no CSV cell
        starts as a formula, as ``formulas.py`` says); the rows written."""
        try:
            import pyarrow
        except ImportError:
            _write_csv(storage, path, self, escape=escape)
            return len(self.logins)
        table = pyarrow.table(
            {
                "login_id": pyarrow.array(self.logins, pyarrow.string()),
                "request_id": pyarrow.array(self.request_ids, pyarrow.string()),
                "fetched_at": pyarrow.array(self.fetched_at_us, pyarrow.timestamp("us", tz="UTC")),
                "payload": pyarrow.array(self.payloads, pyarrow.string()),
            }
        )
        with storage.open_write(path) as file:
            if fmt == "parquet":
                import pyarrow.parquet

                pyarrow.parquet.write_table(table, file, compression="zstd")
            else:
                import pyarrow.csv

                pyarrow.csv.write_csv(escaped_columns(table) if escape else table, file)
        return len(self.logins)


def _write_csv(storage: Storage, path: str, rows: RawRows, *, escape: bool) -> None:
    """The rows as CSV with the standard library, on a machine without pyarrow."""
    import csv
    import datetime
    import io

    text = io.StringIO()
    out = csv.writer(text)
    out.writerow(COLUMNS)
    for login, request_id, fetched, payload in zip(
        rows.logins, rows.request_ids, rows.fetched_at_us, rows.payloads, strict=True
    ):
        when = datetime.datetime.fromtimestamp(fetched / 1_000_000, tz=datetime.timezone.utc).isoformat()
        cells = [login, request_id or "", when, payload]
        out.writerow([escaped_cell(cell) for cell in cells] if escape else cells)
    with storage.open_write(path) as file:
        file.write(text.getvalue().encode("utf-8"))


def raw_directory(storage: Storage, kind: str) -> str:
    """The directory of ``kind``'s table of payloads, above its runs' partitions."""
    return storage.path(RAW, kind)


def committed_files(storage: Storage, kind: str, entry: dict[str, Any]) -> list[tuple[str, str]]:
    """The payload file a journal entry names, as ``(table directory, file)``, ``file`` relative
    to it (``<partition>/part-<batch>.<fmt>``, as an entry's ``files`` name theirs): none
    without ``keep_raw``."""
    name = entry.get("raw")
    return [(raw_directory(storage, kind), name)] if isinstance(name, str) else []
