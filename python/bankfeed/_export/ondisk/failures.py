"""``_failures.jsonl`` (docs/export.md#failures-and-the-manifest): one line per login the last run
did not write, per kind, with its latest failure, sorted by LoginId.

Written from the journal entries that hold the run's failures (``KindState.failure_entries``),
not from records held in memory: a run against an unreachable service lists every login it did
not try as failed, and a record each held until the end was hundreds of MB at 1,000,000 logins
(BENCHMARKS.md, export). The lines are sorted a chunk at a time, each chunk spilled to a
temporary file and the chunks merged, so that the run holds one chunk of them, never every one.
"""

from __future__ import annotations

import contextlib
import heapq
import json
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from typing import IO, TYPE_CHECKING, Any

from bankfeed._export.logins import fold
from bankfeed._export.ondisk.journal import Journal
from bankfeed._export.ondisk.layout import FAILURES
from bankfeed._export.storage import Storage

if TYPE_CHECKING:
    from bankfeed._export.state import KindState

__all__ = ["write_failures"]

#: Lines sorted in memory before they are spilled to a temporary file: a few MB of them.
_CHUNK = 20_000
#: Temporary files open at most: past it, those written so far are merged into one.
_FAN_IN = 64

#: A line to write: its login folded (``logins.fold``: a login is the same in any case), the
#: order its failure came in (the latest of a login wins), and the line.
_Line = tuple[str, int, str]


def write_failures(storage: Storage, states: Mapping[str, KindState], journals: Mapping[str, Journal]) -> None:
    """Writes ``_failures.jsonl`` whole or not at all: for each kind of ``states`` in turn, the
    latest failure of each login its run did not write, read back from the kind's journal in
    ``journals``."""
    storage.write_streamed(storage.path(FAILURES), lambda file: _write(file, states, journals))


def _write(file: IO[str], states: Mapping[str, KindState], journals: Mapping[str, Journal]) -> None:
    for kind, state in states.items():
        journal = journals.get(kind)
        if journal is None or not state.failure_entries:
            continue
        with contextlib.ExitStack() as spilled:
            last: _Line | None = None
            for line in _sorted(_lines(state, journal), spilled):
                if last is not None and line[0] != last[0]:
                    file.write(last[2] + "\n")
                last = line
            if last is not None:
                file.write(last[2] + "\n")


def _lines(state: KindState, journal: Journal) -> Iterator[_Line]:
    """The failures of the logins not written, in the order they were committed."""
    order = 0
    for name in state.failure_entries:
        for record in journal.read(name).get("failed") or []:
            login = record.get("login_id") if isinstance(record, dict) else None
            if not isinstance(login, str) or state.has(login):
                continue
            yield fold(login), order, json.dumps(record, sort_keys=True)
            order += 1


def _sorted(lines: Iterable[_Line], spilled: contextlib.ExitStack) -> Iterator[_Line]:
    """``lines`` sorted, holding at most ``_CHUNK`` of them (the rest in files ``spilled`` closes)
    and at most ``_FAN_IN`` files open."""
    runs: list[IO[str]] = []
    chunk: list[_Line] = []
    for line in lines:
        chunk.append(line)
        if len(chunk) >= _CHUNK:
            runs.append(_spill(sorted(chunk), spilled))
            chunk = []
            if len(runs) >= _FAN_IN:
                # One open file per chunk would reach the usual limit of 1,024 open files near
                # 20,000,000 failures: the sorted files so far become one.
                merged = _spill(heapq.merge(*map(_read, runs)), spilled)
                for run in runs:
                    run.close()
                runs = [merged]
    chunk.sort()
    return heapq.merge(*map(_read, runs), iter(chunk))


def _spill(lines: Iterable[_Line], spilled: contextlib.ExitStack) -> IO[str]:
    """Sorted ``lines`` written to a temporary file (a JSON text a line: none holds a raw newline)
    that ``spilled`` closes, ready to be read from its start."""
    file = spilled.enter_context(tempfile.TemporaryFile("w+", encoding="utf-8"))  # noqa: SIM115 (closed by ``spilled``)
    for line in lines:
        file.write(json.dumps(line) + "\n")
    file.seek(0)
    return file


def _read(file: IO[str]) -> Iterator[_Line]:
    """The lines of a file :func:`_spill` wrote, one at a time."""
    return (_line(json.loads(text)) for text in file)


def _line(value: Any) -> _Line:
    key, order, text = value
    return str(key), int(order), str(text)
