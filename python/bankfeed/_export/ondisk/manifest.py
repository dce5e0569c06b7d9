"""The two files that describe an export to people and tools, written at each run's end:
``_manifest.json`` (what was asked, by which bankfeed, the logins written and the rows, every
run) and ``_failures.jsonl`` (one line per login not written, per kind)
(docs/export.md#failures-and-the-manifest). An earlier run's manifest is read back checked
(``checks.manifest``).
"""

from __future__ import annotations

import errno
import json
import re
import time
from collections.abc import Iterable, Mapping
from typing import IO, TYPE_CHECKING, Any

from bankfeed._export.kinds import KINDS
from bankfeed._export.ondisk import checks
from bankfeed._export.ondisk.failures import write_failures
from bankfeed._export.ondisk.journal import Journal
from bankfeed._export.ondisk.layout import MANIFEST
from bankfeed._export.storage import Storage

if TYPE_CHECKING:
    from bankfeed._export.state import KindState

__all__ = ["previous_manifest", "write_summary"]


#: A line of the manifest that opens one of its lists of every login (``_dump`` writes them a
#: login a line, as the manifests of earlier versions did).
_LOGINS_LIST = re.compile(r'\s*"logins_(?:written|failed)": \[\s*')


def previous_manifest(storage: Storage) -> dict[str, Any] | None:
    """The manifest an earlier run left, if any, checked (``checks.manifest``), with its lists
    of logins left empty: nothing reads them back (the journal says what was written), and at
    1,000,000 logins each is 40 MB of text and a million ``str``."""
    path = storage.path(MANIFEST)
    if not storage.exists(path):
        return None
    return checks.manifest(storage.shown, MANIFEST, _read_without_logins(storage, path))


def _read_without_logins(storage: Storage, path: str) -> str:
    """The text of the manifest ``path``, each list of logins written a login a line left out."""
    kept: list[str] = []
    try:
        with storage.open_text(path) as file:
            skipping = False
            for line in file:
                if skipping:
                    stripped = line.lstrip()
                    if stripped.startswith("]"):
                        kept.append(stripped)
                        skipping = False
                    continue
                kept.append(line)
                skipping = _LOGINS_LIST.fullmatch(line) is not None
    except OSError as exc:
        reason = "it is a symbolic link, which is never followed" if exc.errno == errno.ELOOP else exc.strerror
        raise checks.unreadable(storage.shown, "manifest", MANIFEST, reason or str(exc)) from None
    except UnicodeDecodeError:
        raise checks.unreadable(storage.shown, "manifest", MANIFEST, "it is not UTF-8 text") from None
    return "".join(kept)


def write_summary(
    storage: Storage,
    states: Mapping[str, KindState],
    journals: Mapping[str, Journal],
    *,
    fmt: str,
    version: str,
    run: Mapping[str, Any],
    kinds_asked: Mapping[str, Mapping[str, Any]],
    previous: Mapping[str, Any] | None,
    runs: list[dict[str, Any]],
) -> None:
    """Writes ``_failures.jsonl`` (one JSON object per login not written, per kind:
    ``failures.py``, from ``journals``, each kind's) and ``_manifest.json`` (what was asked, by
    which bankfeed, the logins written and the rows), each whole or not at all. ``states`` maps
    each kind of the export to its state, ``kinds_asked`` to
    how it was asked (``what``, ``options``); ``run`` is this process's record (``run_records.write_run``),
    already written, ``runs`` every run of the export as the manifest lists it
    (``runs.RunSummary.shown``)."""
    write_failures(storage, states, journals)
    # Every run the journal knows, this one included (killed ones too), after those of a manifest
    # written before runs had records.
    known = {summary["run"] for summary in runs} | {name for summary in runs for name in summary["processes"]}
    listed: list[Any] = [old for old in (previous or {}).get("runs") or [] if old.get("run") not in known]
    listed.extend(runs)
    kinds: dict[str, Any] = dict((previous or {}).get("kinds") or {})
    # This process's run, as ``runs`` sums it up over the processes that wrote it.
    name = run.get("part_of") or run.get("run")
    this_run: Mapping[str, Any] = next((summary for summary in runs if summary["run"] == name), {})
    for kind, state in states.items():
        asked = kinds_asked.get(kind) or {}
        kinds[kind] = {
            "what": str(asked.get("what") or kind),
            "options": dict(asked.get("options") or {}),
            "tables": {table: f"{kind}/{table}" for table in KINDS[kind]},
            "rows": state.rows,
            # Streamed from the compact set, in its sorted order (``_dump``).
            "logins_written": _Streamed(state.written),
            "logins_failed": _Streamed(state.failed_logins()),
            # The fields no table reads, as the newest run that fetched the kind counted them
            # (docs/export.md#fields-the-service-adds).
            "unknown_fields": dict((this_run.get("unknown_fields") or {}).get(kind) or {})
            if kind in (run.get("kinds") or {})
            else dict(((previous or {}).get("kinds") or {}).get(kind, {}).get("unknown_fields") or {}),
        }
    manifest = {
        "bankfeed_version": version,
        "format": fmt,
        # How its tables hold money, fixed by its first run (docs/export.md#money).
        "money": run.get("money"),
        # The export's kinds, this run's and earlier ones'.
        "what": [entry.get("what", kind) for kind, entry in kinds.items()],
        "layout": "<kind>/<table>/run_date=<date>/run_id=<run>/part-<batch>."
        + fmt
        + "; every row starts with login_id, request_id, fetched_at",
        "updated_at": _utc(time.time()),
        # Complete: this run went to its end, no login of it failed, and every login it wrote in
        # one kind of the export is written in all of them.
        "complete": not run.get("interrupted")
        and not any(state.has_failures() for state in states.values())
        and _same_logins(list(states.values())),
        "kinds": kinds,
        "runs": listed,
    }
    # Streamed into its file, a piece at a time: at 100,000 logins the manifest as one string
    # would be the export's largest single allocation. The login lists go unindented, a line each.
    storage.write_streamed(storage.path(MANIFEST), lambda file: _dump(manifest, file))


def _same_logins(states: list[KindState]) -> bool:
    """Whether every login written in one of ``states`` is written in all of them."""
    return all(all(other.has(login) for login in state.written) for state in states for other in states)


class _Streamed:
    """A list of the manifest written a value at a time from ``values`` (never a list first)."""

    def __init__(self, values: Iterable[Any]) -> None:
        self.values = values


def _dump(manifest: Mapping[str, Any], file: IO[str]) -> None:
    """The manifest as ``json.dump(manifest, file, indent=1)`` writes it, each :class:`_Streamed`
    list a value a line, as it is iterated."""
    _write_value(manifest, file, 0)
    file.write("\n")


def _write_value(value: Any, file: IO[str], depth: int) -> None:
    inner = "\n" + " " * (depth + 1)
    if isinstance(value, _Streamed):
        empty = True
        for item in value.values:
            file.write(("[" if empty else ",") + inner + json.dumps(item))
            empty = False
        file.write("[]" if empty else "\n" + " " * depth + "]")
    elif isinstance(value, Mapping) and any(isinstance(item, _Streamed | Mapping) for item in value.values()):
        for index, (key, item) in enumerate(value.items()):
            file.write(("{" if index == 0 else ",") + inner + json.dumps(key) + ": ")
            _write_value(item, file, depth + 1)
        file.write("\n" + " " * depth + "}")
    else:
        # A JSON text never holds a raw newline: its lines are indented as they stand here.
        text = json.dumps(value, indent=1, separators=(",", ": "))
        file.write(text.replace("\n", "\n" + " " * depth))


def _utc(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))
