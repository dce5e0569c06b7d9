"""The fields the service sent that no table of an export reads, counted per kind over a run
(docs/export.md#fields-the-service-adds): the run's record and the manifest keep them, and the
command's summary names them, so that a team learns the service added something."""

from __future__ import annotations

from collections.abc import Mapping


class UnknownFields:
    """Counts, per kind, the objects of this run's payloads that carry each unknown field."""

    def __init__(self) -> None:
        self.by_kind: dict[str, dict[str, int]] = {}

    def add(self, kind: str, result: object) -> None:
        """Adds the ``unknown_fields`` of one login's ``result`` (a result class of the client)."""
        self.merge(kind, getattr(result, "unknown_fields", None) or {})

    def merge(self, kind: str, fields: Mapping[str, int]) -> None:
        """Adds ``fields`` (path to count) to ``kind``'s: what a partition of a cluster run
        counted on its worker, as :meth:`add` counts a result here."""
        if not fields:
            return
        counts = self.by_kind.setdefault(kind, {})
        for path, count in fields.items():
            counts[path] = counts.get(path, 0) + count

    def as_record(self) -> dict[str, dict[str, int]]:
        """Kind to path to count, sorted, as the run's record and the manifest keep them."""
        return {kind: dict(sorted(self.by_kind[kind].items())) for kind in sorted(self.by_kind)}


def summary_lines(by_kind: Mapping[str, Mapping[str, int]]) -> list[str]:
    """The summary's lines: one per field no table reads (``new field: investments
    Accounts[].Positions[].Esg: 8,421 rows (in the payload, in no table)``), none when there is none."""
    return [
        f"new field: {kind} {path}: {count:,} rows (in the payload, in no table)"
        for kind, fields in sorted(by_kind.items())
        for path, count in sorted(fields.items())
    ]
