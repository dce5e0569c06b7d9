"""An export written before runs had partitions (docs/export.md#an-export-written-before-runs):
its rows directly in each table's directory (``<kind>/<table>/part-<batch>.<fmt>``), its journal
entries naming no run, its processes' records no ``part_of``. Its next run moves it into the
layout of runs first, as the export's first run: every file into the partition of that run
(``layout.partition``), the oldest process's, every entry and record naming it. Without this, the
new run's partitions would sit beside files that no reader of the partitions sees (a
``*/*/*.parquet`` glob misses them) or sees without a ``run_id`` (pyarrow's null partition).

Done under the lock, before the journal is read for the run, and safe to stop at any point: an
entry is rewritten (naming its files in the partition) before its files move, and a later run
moves the files an entry names in the partition from the table's directory where they still are;
the processes' records are rewritten last, and the move is done again while one lacks its run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from bankfeed._export.kinds import KINDS
from bankfeed._export.ondisk.journal import read_journal, run_of
from bankfeed._export.ondisk.layout import JOURNAL, part_name, part_pattern, partition, temporary_name
from bankfeed._export.ondisk.run_records import run_of_record, write_run
from bankfeed._export.storage import Storage

__all__ = ["move_into_runs", "written_before_runs"]


def _root_parts(storage: Storage, fmt: str) -> list[tuple[str, str, str]]:
    """The part files directly in a table's directory, as ``(kind, table, name)``."""
    pattern = part_pattern(fmt)
    return [
        (kind, table, name)
        for kind, tables in KINDS.items()
        for table in tables
        for name in storage.listdir(storage.path(kind, table))
        if pattern.fullmatch(name)
    ]


def written_before_runs(storage: Storage, fmt: str, runs: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the export in ``storage`` (its processes' records ``runs``) is, or is partly,
    in the layout before runs."""
    return any(record.get("part_of") is None for record in runs) or bool(_root_parts(storage, fmt))


def move_into_runs(storage: Storage, fmt: str, runs: Sequence[Mapping[str, Any]]) -> str | None:
    """Moves the export in ``storage`` into the layout of runs, as one run: the oldest one the
    export knows (its first process's). Every journal entry is read and checked first
    (``ondisk/checks.py``): a damaged or foreign one stops it with nothing moved. The run, or None when
    the export holds nothing to move."""
    journals = {kind: read_journal(storage, kind, fmt) for kind in KINDS}
    known = [run_of_record(record) for record in runs]
    known += [run_of(entry) for entries in journals.values() for _, entry in entries]
    # A file no entry names is of the run its name starts with, as an entry's batch is.
    known += [run_of({"batch": name.removeprefix("part-")}) for *_, name in _root_parts(storage, fmt)]
    if not known:
        return None
    first = min(known)
    where = partition(first)
    for kind, entries in journals.items():
        for name, entry in entries:
            _move_entry(storage, fmt, kind, name, entry, first)
    # What no entry names: the empty file of a table with no row (``writer.write_empty``), or a
    # batch's file whose entry is gone; moved too, so that no file is left outside the runs.
    for kind, table, name in _root_parts(storage, fmt):
        top = storage.path(kind, table)
        storage.makedirs(storage.path(top, where))
        storage.rename(storage.path(top, name), storage.path(top, where, name))
    for record in runs:
        if record.get("part_of") is None:
            write_run(storage, {**record, "part_of": first})
    return first


def _move_entry(storage: Storage, fmt: str, kind: str, name: str, entry: Mapping[str, Any], run: str) -> None:
    """The batch of ``entry`` in the partition of ``run``: the entry rewritten first (it is the
    truth a later run goes by), then each file it names moved from the table's directory, its
    final name or, when a kill came before its rename, its temporary one."""
    batch = str(entry["batch"])
    final = part_name(batch, fmt)
    if entry.get("run") is None:
        moved = {
            **entry,
            "run": run,
            "files": {table: f"{partition(run)}/{final}" for table in entry.get("files") or {}},
        }
        storage.write_whole(storage.path(JOURNAL, kind, name), json.dumps(moved).encode("utf-8"))
        entry = moved
    if entry.get("run") != run:
        return  # a batch of a later run: already where it belongs
    for table in entry.get("files") or {}:
        top = storage.path(kind, table)
        target = storage.path(top, partition(run), final)
        if storage.is_file(target):
            continue
        for source in (storage.path(top, final), storage.path(top, temporary_name(batch, fmt))):
            if storage.is_file(source):
                storage.makedirs(storage.path(top, partition(run)))
                storage.rename(source, target)
                break
