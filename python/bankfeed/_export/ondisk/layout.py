"""The names of an export's files on disk (docs/export.md#the-layout): the one module that spells
them. Every other module of the export finds the journal, the run records, the lock, the manifest,
the failures, the payloads kept and a batch's files by the names here, names a new run and the
temporary files it writes by the functions here, and checks a name read back (a run's, a batch's,
a temporary left by a kill) against the patterns here.

What a file holds is read and written by the modules beside this one (``journal.py``,
``run_records.py``, ``manifest.py``, ``lock_record.py``), checked field by field by ``checks.py``; a batch is
committed by ``writer.py``.
"""

from __future__ import annotations

import datetime
import re
import secrets
import time

__all__ = [
    "BATCH",
    "CLUSTER_MARKER",
    "ENTRY_TEMPORARY",
    "FAILURES",
    "FORMATS",
    "JOURNAL",
    "LEFTOVERS",
    "LOCK",
    "MANIFEST",
    "RAW",
    "RUN",
    "RUNS",
    "RUN_DATE",
    "RUN_ID",
    "RUN_LENGTH",
    "is_temporary_part",
    "new_run",
    "part_name",
    "part_pattern",
    "partition",
    "record_file",
    "record_of_file",
    "run_after",
    "temporary_name",
    "whole_temporary_name",
]

#: The formats an export writes; a table's files end with the format's name.
FORMATS = ("parquet", "csv")

#: The directory of the journal entries, one directory per kind.
JOURNAL = "_journal"
#: Under the journal: one record per run, written when the run starts and again when it ends, so
#: that a run killed before its end (``kill -9``, a lost machine) is still known: to the manifest,
#: and to a resume, which must ask for what it asked (docs/export.md#resume).
RUNS = "runs"
#: The lock's name in the journal (``lock.py`` takes it; ``lock_record.py`` is what it says).
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
#: The time of a run's name (:data:`RUN`), UTC.
_RUN_TIME = "%Y%m%dT%H%M%S"
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


def part_pattern(fmt: str) -> re.Pattern[str]:
    """What a committed batch's file of one table in the format ``fmt`` is named (:func:`part_name`)."""
    return re.compile(rf"part-{BATCH.pattern}\.{re.escape(fmt)}")


def is_temporary_part(name: str, prefix: str = "") -> bool:
    """Whether ``name`` is a batch's file not yet committed (:func:`temporary_name`), of a batch
    whose name starts with ``prefix``."""
    return name.startswith(".part-" + prefix) and name.endswith(".tmp")


# --- Runs' names ---------------------------------------------------------------------------------


def _run_clock() -> float:
    """The time of a new run's name (functions of their own, which a test replaces: two runs
    in the same second)."""
    return time.time()


def _run_random() -> str:
    """The random part of a new run's name."""
    return secrets.token_hex(3)


def new_run(now: float | None = None) -> str:
    """A new run's name (:data:`RUN`): ``now`` (the time, by default the clock's) to the second,
    UTC, then 3 random bytes, so that two processes started in the same second differ."""
    stamp = time.strftime(_RUN_TIME, time.gmtime(_run_clock() if now is None else now))
    return f"{stamp}-{_run_random()}"


def run_after(latest: str) -> str:
    """A run's name that sorts just after the run ``latest`` (a name checked by :data:`RUN`): the
    same second with a larger random part, or the next second when none is larger."""
    stamp, suffix = latest[:15], int(latest[16:], 16)
    if suffix < 0xFFFFFF:
        return f"{stamp}-{suffix + 1 + secrets.randbelow(0xFFFFFF - suffix):06x}"
    following = datetime.datetime.strptime(stamp, _RUN_TIME) + datetime.timedelta(seconds=1)
    return f"{following:{_RUN_TIME}}-{secrets.token_hex(3)}"


# --- The journal's records ----------------------------------------------------------------------


def record_file(name: str) -> str:
    """The file of the journal's record named ``name``: a batch's entry
    (``_journal/<kind>/<batch>.json``) or a run's record (``_journal/runs/<run>.json``)."""
    return f"{name}.json"


def record_of_file(file: str) -> str | None:
    """The name of the record in the journal's file ``file`` (:func:`record_file`); None for a
    file no reading of the journal looks at: a temporary (hidden) or another kind of file. The
    name is not checked here (``checks.journal_entry`` and ``checks.run_record`` do)."""
    if not file.endswith(".json") or file.startswith("."):
        return None
    return file.removesuffix(".json")


# --- Files written whole ------------------------------------------------------------------------

#: What the name of a file written whole (``Storage.write_whole``) has after a dot and its final
#: name until it is renamed into place: random, so that nothing can be waiting under it.
_RANDOM_SUFFIX = r"\.[0-9a-f]{12}\.tmp"


def whole_temporary_name(name: str) -> str:
    """The name under which the file ``name`` is written whole before it is renamed into place:
    hidden, and random (docs/export.md#how-files-are-written)."""
    return f".{name}.{secrets.token_hex(6)}.tmp"


#: A journal entry's temporary file (``.<batch>.json`` and the random part of
#: :func:`whole_temporary_name`, or ``.tmp`` alone from older versions): what a kill can leave
#: before the rename that commits its batch; ``batch`` is the batch's name.
ENTRY_TEMPORARY = re.compile(rf"\.(?P<batch>{BATCH.pattern})\.json(?:{_RANDOM_SUFFIX}|\.tmp)")
#: The temporary files of the files a run writes whole, by the directory they are in (its parts
#: under the export's root): the manifest, the failures, a cluster's marker, a run's record.
LEFTOVERS: dict[tuple[str, ...], re.Pattern[str]] = {
    (): re.compile(rf"\.(?:{re.escape(MANIFEST)}|{re.escape(FAILURES)}){_RANDOM_SUFFIX}"),
    (JOURNAL,): re.compile(rf"\.{re.escape(CLUSTER_MARKER)}{_RUN}{_RANDOM_SUFFIX}"),
    (JOURNAL, RUNS): re.compile(rf"\.{_RUN}\.json{_RANDOM_SUFFIX}"),
}
