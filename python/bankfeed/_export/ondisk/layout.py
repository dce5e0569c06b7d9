"""The names of an export's files on disk (docs/export.md#the-layout): the one module that spells
them. Every other module of the export finds the journal, the run records, the lock, the manifest,
the failures, the payloads kept and a batch's files by the names here, and checks a name read
back (a run's, a batch's) against the patterns here.

What a file holds is read and written by ``state.py`` (the journal read back, the run records, the
manifest), checked field by field by ``records.py``, and committed by ``writer.py``.
"""

from __future__ import annotations

import re

__all__ = [
    "BATCH",
    "CLUSTER_MARKER",
    "FAILURES",
    "FORMATS",
    "JOURNAL",
    "LOCK",
    "MANIFEST",
    "RAW",
    "RUN",
    "RUNS",
    "RUN_DATE",
    "RUN_ID",
    "RUN_LENGTH",
    "part_name",
    "partition",
    "temporary_name",
]

#: The formats an export writes; a table's files end with the format's name.
FORMATS = ("parquet", "csv")

#: The directory of the journal entries, one directory per kind.
JOURNAL = "_journal"
#: Under the journal: one record per run, written when the run starts and again when it ends, so
#: that a run killed before its end (``kill -9``, a lost machine) is still known: to the manifest,
#: and to a resume, which must ask for what it asked (docs/export.md#resume).
RUNS = "runs"
#: The lock's name in the journal (``lock.py``).
LOCK = "lock"
#: What was asked and written, and the runs (docs/export.md#failures-and-the-manifest).
MANIFEST = "_manifest.json"
#: The logins that failed, one JSON line each.
FAILURES = "_failures.jsonl"
#: The directory of the tables of payloads, one table per kind (``raw.py``).
RAW = "_raw"

#: A run's name: when it started, to the second, then 3 random bytes. ASCII digits only: ``\d``
#: would take any script's.
_RUN = r"[0-9]{8}T[0-9]{6}-[0-9a-f]{6}"
RUN = re.compile(_RUN)
#: The length of a run's name (:data:`RUN`).
RUN_LENGTH = len("20261126T020000-3f9a1c")
#: A batch's name: its run; on a cluster, the partition and its attempt (``cluster.py``); then its
#: number in the writer (``writer.py``), 000000 for the empty file of a table with no row.
BATCH = re.compile(_RUN + r"(?:-p[0-9]{6}-[0-9a-f]{6})?-[0-9]{6}")


#: The two levels of a run's partition of a table (:func:`partition`).
RUN_DATE = re.compile(r"run_date=[0-9]{4}-[0-9]{2}-[0-9]{2}")
RUN_ID = re.compile(rf"run_id={_RUN}")
#: The start of the name of the file, in the journal, by which a cluster run's workers know its
#: driver is there (``cluster.py``): then the run's name.
CLUSTER_MARKER = ".cluster-"


def partition(run: str) -> str:
    """The directory of a table that holds the rows of the run ``run`` (a run's name, checked by
    :data:`RUN`): Hive-style, so that every reader of the dataset reads ``run_date`` and
    ``run_id`` as columns (docs/export.md#the-layout). The date is the run's, UTC, as its name
    starts with it."""
    return f"run_date={run[0:4]}-{run[4:6]}-{run[6:8]}/run_id={run}"


def part_name(batch: str, fmt: str) -> str:
    """The final name of a batch's file of one table."""
    return f"part-{batch}.{fmt}"


def temporary_name(batch: str, fmt: str) -> str:
    """The name a batch's file has until its batch is committed: hidden, and not ``*.<fmt>``."""
    return f".part-{batch}.{fmt}.tmp"
