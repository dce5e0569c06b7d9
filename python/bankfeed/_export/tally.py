"""What a run counts as its results come (docs/export.md#what-you-see): the logins done and
failed, per kind and in all, the failures, the rows a cluster's partitions wrote, the fields no
table reads, and the breaker that stops the run when the service is not there (``outage.py``),
with the logins it then did not try. The progress line shows these counts; the report is made
of them (``finish.py``).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bankfeed._export.login_set import LoginIdSet
from bankfeed._export.logins import fold
from bankfeed._export.outage import StartBreaker
from bankfeed._export.progress import ExportProgress
from bankfeed._export.report import FAILURES_KEPT
from bankfeed._export.unknown import UnknownFields

if TYPE_CHECKING:
    from bankfeed._export.kinds import Kind
    from bankfeed._export.plan import ExportPlan
    from bankfeed._export.writer import KindWriter

__all__ = ["Tally", "tried_key"]


def tried_key(login: Any) -> str:
    """How the logins tried and not tried are compared: folded (``logins.fold``), a LoginId that
    is not text by its ``repr``, as its failure names it."""
    return fold(login) if isinstance(login, str) else repr(login)


@dataclass
class Tally:
    """The counts of one run, in this process (:meth:`take`) or over a cluster's partitions
    (:meth:`absorb`)."""

    #: Stops the run when the service is not there (``outage.py``).
    breaker: StartBreaker
    #: The plan's writers (``ExportPlan.writers``): what they gathered is what the progress shows.
    writers: Mapping[str, KindWriter] = field(default_factory=dict)
    #: The first failures, as exceptions (``report.FAILURES_KEPT`` says why no more), and every
    #: one counted, by the exception's class; the logins failed, compactly (``login_set.py``).
    failures: list[tuple[str, BaseException]] = field(default_factory=list)
    failure_count: int = 0
    failure_classes: Counter[str] = field(default_factory=Counter)
    failed_logins: LoginIdSet = field(default_factory=LoginIdSet)
    done: int = 0
    failed: int = 0
    progress: ExportProgress | None = None
    #: What the partitions of a cluster run wrote, which has no writer here (docs/scale-out.md):
    #: the rows per ``"kind/table"``.
    remote_rows: dict[str, int] = field(default_factory=dict)
    #: The logins tried while the breaker counts (folded: at most ``max_consecutive_failures`` of
    #: them), and those then not tried.
    tried: set[str] = field(default_factory=set)
    #: Per kind, the logins listed as not tried; on a cluster, which ones (by :func:`tried_key`),
    #: as its partitions listed them.
    not_tried: Counter[str] = field(default_factory=Counter)
    untried: dict[str, set[str]] = field(default_factory=dict)
    #: Logins done (written or failed) by this run, per kind: what the progress shows; and failed.
    kind_done: Counter[str] = field(default_factory=Counter)
    kind_failed: Counter[str] = field(default_factory=Counter)
    #: The fields of this run's payloads that no table reads, per kind.
    unknown: UnknownFields = field(default_factory=UnknownFields)

    @classmethod
    def of(cls, plan: ExportPlan) -> Tally:
        """The counts of the run of ``plan``, none yet."""
        return cls(StartBreaker(plan.options.max_consecutive_failures), plan.writers)

    def show_progress(self, plan: ExportPlan) -> None:
        """Starts the progress line, when the run shows one (``progress``)."""
        if plan.options.progress:
            kinds = {name: len(todo) for name, todo in plan.todo.items()}
            self.progress = ExportProgress(len(plan.asked) - plan.skipped_logins, kinds)

    def take(self, writer: KindWriter, login_id: Any, result: object) -> None:
        """Gathers one pair of a bulk call into ``writer``, and counts it."""
        if isinstance(result, BaseException):
            writer.fail(login_id if isinstance(login_id, str) else repr(login_id), result)
            self._fail(login_id, result)
            self.failed += 1
            self.kind_failed[writer.kind.name] += 1
        else:
            writer.add(login_id, result, time.time_ns() // 1000)
            self.unknown.add(writer.kind.name, result)
        if self.breaker.armed:
            self.tried.add(fold(login_id) if isinstance(login_id, str) else repr(login_id))
        self.breaker.observe(result)
        self.done += 1
        self.kind_done[writer.kind.name] += 1
        if self.progress is not None:
            self.progress.update(self.kind_done, self.kind_failed, sum(w.gathered for w in self.writers.values()))

    def absorb(
        self,
        done: int,
        written: int,
        rows: Mapping[str, int],
        failures: list[tuple[Any, BaseException]],
        *,
        kind: str = "",
        breaker: StartBreaker | None = None,
        not_tried: Iterable[Any] = (),
    ) -> None:
        """Counts what a partition of a cluster run did: ``done`` logins of ``kind``, of which
        ``written`` were, ``rows`` per ``"kind/table"``, the ``failures``, and what its
        ``breaker`` saw and the logins it left ``not_tried``."""
        self.done += done
        self.kind_done[kind] += done
        self.kind_failed[kind] += len(failures)
        self.failed += len(failures)
        for login_id, error in failures:
            self._fail(login_id, error)
        untried = self.untried.setdefault(kind, set())
        for login in not_tried:
            untried.add(tried_key(login))
            self.not_tried[kind] += 1
        if breaker is not None:
            self.breaker.merge(breaker)
        for name, count in rows.items():
            self.remote_rows[name] = self.remote_rows.get(name, 0) + count
        if self.progress is not None:
            self.progress.update(self.kind_done, self.kind_failed, sum(self.remote_rows.values()))

    def _fail(self, login_id: Any, error: BaseException) -> None:
        """Counts the failure of ``login_id``: kept while fewer than ``FAILURES_KEPT`` are."""
        self.failure_count += 1
        self.failure_classes[type(error).__name__] += 1
        self.failed_logins.add(login_id if isinstance(login_id, str) else repr(login_id))
        if len(self.failures) < FAILURES_KEPT:
            self.failures.append((login_id, error))

    @property
    def stopping(self) -> bool:
        """Whether the run stops asking: the service is not there (``outage.py``)."""
        return self.breaker.tripped

    def leave_untried(self, plan: ExportPlan, kind: Kind) -> None:
        """Lists, as not tried, the logins of ``kind`` and of the kinds after it that the run
        did not ask for once it stopped asking; committed a batch at a time, as failures are."""
        error = self.breaker.not_tried()
        later = plan.kinds[plan.kinds.index(kind) :]
        for each in later:
            writer = plan.writers.get(each.name) if each is kind else None
            writer = writer or plan.writer(each)
            for login in plan.todo[each.name]:
                shown = login if isinstance(login, str) else repr(login)
                if each is kind and (fold(login) if isinstance(login, str) else shown) in self.tried:
                    continue
                writer.fail(shown, error)
                self.not_tried[each.name] += 1
                if self.not_tried[each.name] % plan.limits.logins == 0:
                    writer.commit()
            writer.commit()

    def logins_not_tried(self, plan: ExportPlan) -> int:
        """Logins the run asked nothing for, in any kind, once it stopped asking. In one process
        the logins it tried are all known (it stops within the first ``max_consecutive_failures``).
        On a cluster each partition stops by itself and lists the logins it did not ask for: a
        login counts when every kind that had it to fetch listed it so."""
        if not self.not_tried:
            return 0
        if not self.untried:
            return max(0, len(plan.asked) - plan.skipped_logins - len(self.tried))
        never = set().union(*self.untried.values())
        for kind in plan.kinds:
            listed = self.untried.get(kind.name, set())
            for login in plan.todo[kind.name]:
                key = tried_key(login)
                if key not in listed:
                    # Asked for in this kind (or its partition was stopped before it began).
                    never.discard(key)
        return len(never)
