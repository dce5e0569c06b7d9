"""What an export did: :class:`ExportReport`, which ``bf.export`` and ``bf.aexport`` return and
the command prints (docs/export.md#from-python).

Apart from the engine that builds it, so that what shows a report (the notebook view in
``_views.py``, the command) needs nothing of the engine.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from bankfeed._export.location import shown
from bankfeed._views import export_report_html

__all__ = ["FAILURES_KEPT", "ExportReport"]

#: The failures a report keeps as exceptions (``ExportReport.failed``): the first ones of the
#: run, as they came; the rest are counted (``failed_count``, ``failed_by_class``).
#:
#: Why the first ones and counts, rather than every exception: a run whose logins all fail (an
#: outage with ``max_consecutive_failures=0``, keys refused, a service refusing every login)
#: would hold an exception per login, hundreds of MB at 1,000,000 (BENCHMARKS.md, export). What
#: a person does with the list is look at a few failures as the exceptions they are (their class,
#: ``request_id``, ``operation``) and count them by class; the whole list, a line per login, is
#: ``_failures.jsonl``, which pandas or DuckDB read. Exceptions rebuilt from that file on access
#: would not be the ones raised (a handler's own class, attributes the file has no field for),
#: and the next run rewrites the file under them. Up to this many, the list is every failure.
FAILURES_KEPT = 1000


@dataclass(frozen=True)
class ExportReport:
    """What an export did (``bf.export`` returns it; the command prints it).

    ``written`` counts the rows this run wrote per table (``"investments/positions"``), ``failed``
    lists this run's failures as ``(login_id, exception)`` (a login that failed in two kinds is
    there twice): the first 1,000 of them, as they came, ``failed_count`` and ``failed_by_class``
    (``{"TransportError": 20}``) counting them all (each one is in ``_failures.jsonl``); the
    ``logins_*`` counts are of distinct logins: written in every kind asked, failed in at least
    one, or skipped because an earlier run had written them (``resume``). ``interrupted``
    is true when Ctrl-C (or another stop) ended the run before every login was done; what was
    written until then is complete, and the manifest says so. ``run`` names the run written, the
    ``run_id`` column of its rows (docs/export.md#runs). ``out`` is the output directory as
    it is shown everywhere: a URL without its user, password and query (docs/export.md#where-it-writes).
    ``outage`` says why the run wrote nothing when every login it tried failed because the service
    could not be reached or refused the keys (the failures by class, ``"20 TransportError in
    GenerateAuthorizeToken"``), None otherwise; ``logins_not_tried`` counts the logins it then did
    not ask for, after ``max_consecutive_failures`` such failures in a row
    (docs/export.md#an-unreachable-service). ``kinds`` counts, per kind, the logins this run
    fetched (``"fetched"``: written or failed) and of those ``"failed"``.

    Example::

        report = bf.export(client, login_ids, "nightly/", what=["investments", "accounts"])
        print(report.logins_written, report.logins_failed, report.written["investments/positions"])
        for login_id, error in report.failed:
            print(login_id, type(error).__name__, error)
    """

    out: str
    written: Mapping[str, int]
    failed: list[tuple[str, BaseException]]
    logins_written: int
    logins_failed: int
    logins_skipped: int
    elapsed: float
    interrupted: bool = False
    logins_not_tried: int = 0
    outage: str | None = None
    #: Per kind, the logins this run fetched (written or failed) and of those failed.
    kinds: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    #: The run written (docs/export.md#runs): its name, the ``run_id`` of its rows.
    run: str = ""
    #: Per kind, the fields of this run's payloads that no table reads: path to the number of
    #: objects that carried it (docs/export.md#fields-the-service-adds).
    unknown_fields: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    #: Every failure of this run, kept in ``failed`` or not; -1 (left out): ``len(failed)``.
    failed_count: int = -1
    #: Every failure of this run by the exception's class name; left out: those of ``failed``.
    failed_by_class: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # A report made of a whole list of failures (by hand, in a test) counts them itself.
        if self.failed_count < 0:
            object.__setattr__(self, "failed_count", len(self.failed))
        if not self.failed_by_class and self.failed:
            object.__setattr__(self, "failed_by_class", dict(Counter(type(error).__name__ for _, error in self.failed)))

    @property
    def ok(self) -> bool:
        """Whether every login asked for was written (none failed, and the run was not stopped)."""
        return self.logins_failed == 0 and self.logins_not_tried == 0 and not self.interrupted

    def _repr_html_(self) -> str:
        """The notebook view: the output, the counts, the rows per table, the failures by class."""
        return export_report_html(self)

    def __repr__(self) -> str:
        rows = sum(self.written.values())
        state = ", interrupted" if self.interrupted else ""
        if self.logins_not_tried:
            state += f", logins_not_tried={self.logins_not_tried}"
        return (
            f"ExportReport(out={shown(self.out)!r}, logins_written={self.logins_written}, "
            f"logins_failed={self.logins_failed}, logins_skipped={self.logins_skipped}, rows={rows}, "
            f"elapsed={self.elapsed:.1f}{state})"
        )
