"""The runs' records (docs/export.md#runs): one per process of a run, ``_journal/runs/<run>.json``,
written when it starts and again when it ends, so that a run killed before its end is still known;
read back each checked (``checks.run_record``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from bankfeed._export.ondisk import checks
from bankfeed._export.ondisk.layout import JOURNAL, RUNS, record_file, record_of_file
from bankfeed._export.storage import Storage

__all__ = ["read_runs", "run_of_record", "write_run"]


def write_run(storage: Storage, record: Mapping[str, Any]) -> None:
    """Writes the record of the run ``record["run"]``, whole or not at all."""
    directory = storage.path(JOURNAL, RUNS)
    storage.makedirs(directory)
    # `default=str`: a query given from Python may hold what JSON has no type for; the record
    # must be written all the same, and a resume compares it as text.
    data = json.dumps(record, default=str, sort_keys=True).encode("utf-8")
    storage.write_whole(storage.path(directory, record_file(record["run"])), data)


def read_runs(storage: Storage) -> list[dict[str, Any]]:
    """The records of the runs of the export in ``storage``, oldest first."""
    directory = storage.path(JOURNAL, RUNS)
    runs: list[dict[str, Any]] = []
    for name in storage.listdir(directory):
        if record_of_file(name) is None:
            continue
        text = checks.read_text(storage, storage.path(directory, name), "run record", f"{JOURNAL}/{RUNS}/{name}")
        runs.append(checks.run_record(storage.shown, name, text))
    runs.sort(key=lambda record: (str(record.get("started_at")), float(record.get("started") or 0), record["run"]))
    return runs


def run_of_record(record: Mapping[str, Any]) -> str:
    """The run the process of ``record`` wrote: the one it resumed, or its own."""
    part_of = record.get("part_of")
    return part_of if isinstance(part_of, str) else str(record["run"])
