"""What an export did: :class:`ExportReport`, which ``bf.export`` and ``bf.aexport`` return and
the command prints (docs/export.md#from-python).

Apart from the engine that builds it, so that what shows a report (the notebook view in
``_views.py``, the command) needs nothing of the engine.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bankfeed._export.location import shown
from bankfeed._views import export_report_html

__all__ = ["ExportReport"]


@dataclass(frozen=True)
class ExportReport:
    """What an export did (``bf.export`` returns it; the command prints it).

    ``written`` counts the rows this run wrote per table (``"investments/positions"``), ``failed``
    lists this run's failures as ``(login_id, exception)`` (a login that failed in two kinds is
    there twice), and the counts are of distinct logins: written in every kind asked, failed in at
    least one, or skipped because an earlier run had written them (``resume``). ``interrupted``
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
