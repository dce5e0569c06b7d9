"""What an export shows while it runs (docs/export.md#what-you-see): logins done and failed, rows
written, the rate and the time left. A tqdm bar when tqdm is installed and stderr is a terminal
(``tqdm.auto`` in a notebook); otherwise one line of stderr, rewritten in place on a terminal at
most ten times a second, or a line of its own every ten seconds in a log.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import time
from typing import Any

from bankfeed._progress import _in_notebook, _stderr_is_terminal

__all__ = ["ExportProgress"]

_TERMINAL_INTERVAL = 0.1
_LOG_INTERVAL = 10.0


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class ExportProgress:
    """The display of one export; every method is a courtesy that never fails the export (a closed
    or full stderr turns the display off)."""

    def __init__(self, total: int, description: str = "export") -> None:
        self.total = total
        self.description = description
        self.done = 0
        self.failed = 0
        self.rows = 0
        self._start = time.monotonic()
        self._last = float("-inf")
        self._bar: Any = None
        self._line = False
        self._terminal = _stderr_is_terminal()
        with contextlib.suppress(Exception):
            if self._terminal or _in_notebook():
                tqdm = importlib.import_module("tqdm.auto" if _in_notebook() else "tqdm")
                self._bar = tqdm.tqdm(total=total, desc=description, unit="login")
        self._line = self._bar is None

    def update(self, done: int, failed: int, rows: int) -> None:
        """Logins done and failed so far, and rows written."""
        added = done - self.done
        self.done, self.failed, self.rows = done, failed, rows
        try:
            if self._bar is not None:
                self._bar.set_postfix(failed=failed, rows=rows, refresh=False)
                self._bar.update(added)
            elif self._line:
                now = time.monotonic()
                if now - self._last >= (_TERMINAL_INTERVAL if self._terminal else _LOG_INTERVAL):
                    self._last = now
                    self._write(now)
        except Exception:
            self._bar, self._line = None, False

    def _text(self, now: float) -> str:
        elapsed = now - self._start
        rate = self.done / elapsed if elapsed > 0 else 0.0
        left = (self.total - self.done) / rate if rate > 0 else 0.0
        return (
            f"{self.description}: {self.done}/{self.total} logins ({self.failed} failed), {self.rows:,} rows, "
            f"{rate:.1f}/s, {_duration(elapsed)} elapsed, {_duration(left)} left"
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
                if stopped:
                    self._bar.set_postfix_str(f"failed={self.failed}, rows={self.rows}, stopped", refresh=False)
                self._bar.close()
            elif self._line:
                self._write(time.monotonic(), ", stopped" if stopped else "", last=True)
        except Exception:
            pass
        self._bar, self._line = None, False
