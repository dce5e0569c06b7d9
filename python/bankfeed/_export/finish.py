"""The end of a run (docs/export.md#failures-and-the-manifest): what its partition lacks filled
with empty tables, its record written again with what it did, then ``_failures.jsonl`` and the
manifest from the journal, and the :class:`ExportReport` of the run, from what ``tally.py``
counted.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from typing import Any

from bankfeed._export.ondisk.journal import read_journal
from bankfeed._export.ondisk.manifest import previous_manifest, write_summary
from bankfeed._export.ondisk.run_records import read_runs, write_run
from bankfeed._export.plan import ExportPlan
from bankfeed._export.report import ExportReport
from bankfeed._export.runs import summaries
from bankfeed._export.state import KindState, read_state, table_directories
from bankfeed._export.tally import Tally
from bankfeed._export.writer import write_empty
from bankfeed._native import __version__

__all__ = ["finish"]


def _release_arrow_memory() -> None:
    """Hands back to the system what Arrow's memory pool keeps of the batches written.

    The pool (mimalloc in pyarrow's wheels) keeps freed pages for the next batch; after the last
    one nothing reuses them, and reading the journal back at the end would otherwise add its
    memory on top of them: at 100,000 logins that end was the peak of the whole run
    (BENCHMARKS.md, export)."""
    pyarrow = sys.modules.get("pyarrow")
    if pyarrow is not None:
        pyarrow.default_memory_pool().release_unused()


def _known(plan: ExportPlan, kind: str) -> dict[str, tuple[float, str]]:
    """The journal entries of ``kind`` that the run of ``plan`` read and checked at its start or
    committed since, by name (``journal.read_journal``'s ``known``)."""
    known = dict(plan.checked.get(kind, {}))
    writer = plan.writers.get(kind)
    if writer is not None:
        known.update(writer.committed)
    return known


def finish(plan: ExportPlan, tally: Tally, interrupted: bool, repair: bool = True) -> ExportReport:
    """Ends the run of ``plan``, counted in ``tally``: writes its record, the manifest and the
    failures; the report of this run. ``repair`` false: the journal is read as it stands, since
    workers of a cluster run may still be committing."""
    storage = plan.storage
    if tally.progress is not None:
        tally.progress.close(interrupted)
    _release_arrow_memory()
    for kind in plan.kinds:
        for table in kind.tables:
            # A table no run wrote a row in yet: an empty file in this run's partition.
            directories = table_directories(storage, kind.name, table)
            if not any(name.startswith("part-") for directory in directories for name in storage.listdir(directory)):
                write_empty(
                    storage,
                    kind,
                    table,
                    plan.fmt,
                    f"{plan.run_id}-000000",
                    plan.partition_run,
                    plan.money or "float",
                )
    # The journal is the truth of the directory (earlier runs, a cluster's partitions), for
    # this run's kinds and those of earlier runs alike.
    kinds_asked: dict[str, Mapping[str, Any]] = {**plan.kinds_before, **plan.kinds_asked()}
    # Each read an entry at a time (``journal.Journal``): the logins written are held compactly,
    # this run's only, and each earlier run's counted and let go (``runs.summaries``).
    # Without their cursors checked: the end reads none (the start checked them). The entries the
    # start checked and those this process committed are not read again to be ordered: only
    # those new to it (a cluster run's workers').
    journals = {
        name: read_journal(storage, name, plan.fmt, cursors=False, known=_known(plan, name)) for name in kinds_asked
    }
    states: dict[str, KindState] = {
        name: read_state(storage, name, plan.fmt, run=plan.partition_run, repair=repair, entries=entries)
        for name, entries in journals.items()
    }
    # Each login once, whatever its kinds, as the report counts them.
    not_tried = tally.logins_not_tried(plan)
    run = plan.record(
        finished_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        logins_fetched=tally.done,
        logins_failed=tally.failed,
        interrupted=interrupted,
        logins_not_tried=not_tried,
        unknown_fields=tally.unknown.as_record(),
    )
    write_run(storage, run)
    # This run's logins written, gathered already (with ``repair``: the same batches counted).
    known = {plan.partition_run: states} if repair else None
    counted = summaries(read_runs(storage), journals, known)
    # This run's summary kept in its record: once a later run starts, this one cannot change
    # (only the last run is resumed), and the later runs' ends do not count it from the journal
    # again (``runs.summaries``).
    this_run = next((summary for summary in counted if summary.run == plan.partition_run), None)
    if this_run is not None:
        run = {**run, "summary": this_run.kept()}
        write_run(storage, run)
    listed = [summary.shown() for summary in counted]
    write_summary(
        storage,
        states,
        journals,
        fmt=plan.fmt,
        version=__version__,
        run=run,
        kinds_asked=kinds_asked,
        previous=previous_manifest(storage),
        runs=listed,
    )
    del journals
    # Written now in every kind of this run: at the end, and not already at the start.
    ours = [states[kind.name] for kind in plan.kinds]
    everywhere = sum(1 for login in plan.asked if all(state.has(login) for state in ours))
    # Every table of this run's kinds, a kind that Ctrl-C stopped before it began too (0 rows),
    # as a cluster run reports them.
    written = {f"{kind.name}/{table}": 0 for kind in plan.kinds for table in kind.tables}
    for name, count in tally.remote_rows.items():
        written[name] = written.get(name, 0) + count
    for name, writer in plan.writers.items():
        for table, count in writer.rows.items():
            written[f"{name}/{table}"] = written.get(f"{name}/{table}", 0) + count
    return ExportReport(
        out=storage.shown,
        written=written,
        failed=tally.failures,
        logins_written=everywhere - plan.skipped_logins,
        logins_failed=len(tally.failed_logins),
        logins_skipped=plan.skipped_logins,
        elapsed=time.monotonic() - plan.clock,
        interrupted=interrupted,
        logins_not_tried=not_tried,
        outage=tally.breaker.describe() if tally.breaker.outage and not interrupted else None,
        kinds={
            kind.name: {"fetched": tally.kind_done[kind.name], "failed": tally.kind_failed[kind.name]}
            for kind in plan.kinds
        },
        run=plan.partition_run,
        unknown_fields=run["unknown_fields"],
        failed_count=tally.failure_count,
        failed_by_class=dict(tally.failure_classes),
    )
