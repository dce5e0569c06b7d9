"""What an export shows while it runs (docs/export.md#what-you-see): logins done of the logins
asked, each kind's count beside them, failures, rows written, the rate and the time left. A tqdm
bar when tqdm is installed and stderr is a terminal (``tqdm.auto`` in a notebook); otherwise one
line of stderr, rewritten in place on a terminal at most ten times a second, or a line of its own
every ten seconds in a log.

The unit is the login, as the person counts them: 10,000 logins of two kinds are "of 10,000
logins", with each kind's count named after them, never "of 20,000". A login is done once every
kind has done it; the rate and the time left count fetches (a login of one kind), which is what
the run spends its time on.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import time
from collections.abc import Mapping
from typing import Any

from bankfeed._progress import _in_notebook, _stderr_is_terminal

__all__ = ["ExportProgress"]

_TERMINAL_INTERVAL = 0.1
_LOG_INTERVAL = 10.0


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class ExportProgress:
    """The display of one export: ``logins`` to do (each once, whatever the kinds), and per kind
    how many of them it fetches (``kinds``; fewer than ``logins`` when an earlier run wrote some in
    that kind). Every method is a courtesy that never fails the export (a closed or full stderr
    turns the display off)."""

    def __init__(self, logins: int, kinds: Mapping[str, int], description: str = "export") -> None:
        self.logins = logins
        self.kinds = dict(kinds)
        self.description = description
        self.done: dict[str, int] = dict.fromkeys(self.kinds, 0)
        self.failed: dict[str, int] = dict.fromkeys(self.kinds, 0)
        self.rows = 0
        self._start = time.monotonic()
        self._last = float("-inf")
        self._bar: Any = None
        self._line = False
        self._terminal = _stderr_is_terminal()
        with contextlib.suppress(Exception):
            if self._terminal or _in_notebook():
                tqdm = importlib.import_module("tqdm.auto" if _in_notebook() else "tqdm")
                self._bar = tqdm.tqdm(total=self.fetches, desc=description, unit="fetch")
        self._line = self._bar is None

    @property
    def fetches(self) -> int:
        """Fetches to do: a login once per kind that fetches it."""
        return sum(self.kinds.values())

    @property
    def logins_done(self) -> int:
        """Logins done in every kind: of a kind, those it did not have to fetch and those it has."""
        if not self.kinds:
            return 0
        return min(self.logins - todo + self.done[kind] for kind, todo in self.kinds.items())

    def update(self, done: Mapping[str, int], failed: Mapping[str, int], rows: int) -> None:
        """Logins done so far per kind (written or failed), of those failed per kind, and rows written."""
        added = sum(done.values()) - sum(self.done.values())
        self.done.update((kind, count) for kind, count in done.items() if kind in self.done)
        self.failed.update((kind, count) for kind, count in failed.items() if kind in self.failed)
        self.rows = rows
        try:
            if self._bar is not None:
                self._bar.set_postfix_str(self._counts(), refresh=False)
                self._bar.update(added)
            elif self._line:
                now = time.monotonic()
                if now - self._last >= (_TERMINAL_INTERVAL if self._terminal else _LOG_INTERVAL):
                    self._last = now
                    self._write(now)
        except Exception:
            self._bar, self._line = None, False

    def _counts(self) -> str:
        """``1,200 of 10,000 logins; investments 10,000 (3 failed), accounts 1,200; 9,876 rows``, or
        with one kind ``1,200 of 10,000 logins (3 failed); 9,876 rows``: failures are counted in
        their kind, where a login fails once."""
        logins = f"{self.logins_done:,} of {self.logins:,} logins"
        if len(self.kinds) == 1:
            (failed,) = self.failed.values()
            return f"{logins} ({failed:,} failed); {self.rows:,} rows"
        kinds = ", ".join(
            f"{kind} {count:,}" + (f" ({self.failed[kind]:,} failed)" if self.failed[kind] else "")
            for kind, count in self.done.items()
        )
        return f"{logins}; {kinds}; {self.rows:,} rows"

    def _text(self, now: float) -> str:
        elapsed = now - self._start
        fetched = sum(self.done.values())
        rate = fetched / elapsed if elapsed > 0 else 0.0
        left = (self.fetches - fetched) / rate if rate > 0 else 0.0
        # The rate of fetches, named so: with several kinds a login is fetched once per kind.
        unit = "fetches/s" if len(self.kinds) > 1 else "logins/s"
        return (
            f"{self.description}: {self._counts()}, {rate:.1f} {unit}, {_duration(elapsed)} elapsed, "
            f"{_duration(left)} left"
        )

    def _write(self, now: float, note: str = "", last: bool = False) -> None:
        text = self._text(now) + note
        if self._terminal:
            sys.stderr.write("\r" + text + ("\n" if last else ""))
        else:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()

    def close(self, stopped: bool) -> None:
        """Ends the display; ``stopped`` says the export ended before every login was done."""
        try:
            if self._bar is not None:
                self._bar.set_postfix_str(self._counts() + (", stopped" if stopped else ""), refresh=False)
                self._bar.close()
            elif self._line:
                self._write(time.monotonic(), ", stopped" if stopped else "", last=True)
        except Exception:
            pass
        self._bar, self._line = None, False
