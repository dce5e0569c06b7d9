"""Progress display for the bulk calls (``progress=True``).

:func:`wrap` and :func:`awrap` pass the items of a bulk iterator through unchanged and show how
many logins are done and how many failed (an item ``(login_id, result)`` whose result is an
exception): with tqdm when it is installed (``tqdm.auto`` in a Jupyter notebook), otherwise on
one line of stderr that is rewritten at most ten times a second (without a terminal, a line of
its own at most every ten seconds).

Closing the wrapper closes the iterator it wraps, so a bulk call stopped early (``break``,
Ctrl-C) stops its work in Rust too.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, Protocol, TypeVar

__all__ = ["AsyncProgress", "Progress", "awrap", "wrap"]

T = TypeVar("T")

# The plain line is rewritten at most this often (seconds).
_MIN_INTERVAL = 0.1

# Without a terminal (a log file, a cron job's mail), a line of its own at most this often.
_LOG_INTERVAL = 10.0

# The clock of the rate and of the throttle (a name of its own, for the tests to replace).
_clock: Callable[[], float] = time.monotonic


class _Display(Protocol):
    def update(self, done: int, failed: int) -> None: ...

    def close(self, stopped: bool) -> None: ...


#: What the last line adds when the call was closed before its end: the logins not read yet are
#: handed out later, as ClientClosed, to whoever reads on, and no display counts them then.
_STOPPED = "stopped: the logins not done end as ClientClosed"


def _failed(item: object) -> bool:
    """Whether a bulk item ``(login_id, result)`` is a failure."""
    return isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], BaseException)


def _in_notebook() -> bool:
    """Whether this runs in a Jupyter kernel (where ``tqdm.auto`` draws a widget)."""
    # Looked up, not imported: IPython is slow to load, and a notebook has loaded it already.
    get_ipython = getattr(sys.modules.get("IPython"), "get_ipython", None)
    if get_ipython is None:
        return False
    shell = get_ipython()
    return shell is not None and shell.__class__.__name__ == "ZMQInteractiveShell"


class _Tqdm:
    """A tqdm bar; the failures are its postfix."""

    def __init__(self, tqdm: Any, total: int | None, description: str) -> None:
        self._bar = tqdm(total=total, desc=description, unit="login")
        self._done = 0
        self._failed = 0

    def update(self, done: int, failed: int) -> None:
        if failed != self._failed:
            self._failed = failed
            self._bar.set_postfix(failed=failed, refresh=False)
        self._bar.update(done - self._done)
        self._done = done

    def close(self, stopped: bool) -> None:
        if stopped:
            self._bar.set_postfix_str(f"failed={self._failed}, {_STOPPED}", refresh=False)
        self._bar.close()


def _stderr_is_terminal() -> bool:
    """Whether stderr is a terminal, where a line can be rewritten in place."""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced by an object without it, or closed
        return False


class _Line:
    r"""``{description}: {done}/{total} ({failed} failed) {rate}/s`` on stderr: rewritten in place
    (``\r``) at most ten times a second on a terminal; elsewhere a line of its own at most every
    ten seconds, so that a log holds lines rather than one line of thousands of updates."""

    def __init__(self, total: int | None, description: str) -> None:
        self._total = "?" if total is None else str(total)
        self._description = description
        self._terminal = _stderr_is_terminal()
        self._interval = _MIN_INTERVAL if self._terminal else _LOG_INTERVAL
        self._start = _clock()
        self._last = float("-inf")
        self._width = 0
        self._done = 0
        self._failed = 0
        self._written: tuple[int, int] | None = None

    def update(self, done: int, failed: int) -> None:
        self._done, self._failed = done, failed
        now = _clock()
        if now - self._last >= self._interval:
            self._last = now
            self._write(now)

    def _write(self, now: float, note: str = "") -> None:
        elapsed = now - self._start
        rate = self._done / elapsed if elapsed > 0 else 0.0
        text = f"{self._description}: {self._done}/{self._total} ({self._failed} failed) {rate:.1f}/s{note}"
        if self._terminal:
            # Spaces clear what a longer previous line left behind.
            sys.stderr.write("\r" + text.ljust(self._width))
        else:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()
        self._width = len(text)
        self._written = (self._done, self._failed)

    def close(self, stopped: bool) -> None:
        note = f", {_STOPPED}" if stopped else ""
        if self._terminal:
            self._write(_clock(), note)
            sys.stderr.write("\n")
            sys.stderr.flush()
        elif stopped or self._written != (self._done, self._failed):
            self._write(_clock(), note)


def _display(total: int | None, description: str) -> _Display:
    try:
        module = importlib.import_module("tqdm.auto" if _in_notebook() else "tqdm")
    except ImportError:
        return _Line(total, description)
    return _Tqdm(module.tqdm, total, description)


class _Counter:
    """What both wrappers count and show."""

    def __init__(self, total: int | None, description: str) -> None:
        self._display: _Display | None = None
        # tqdm draws its bar as it is made: a stderr that cannot be written fails right here, and
        # is treated as in `_count`, with no display.
        with contextlib.suppress(Exception):
            self._display = _display(total, description)
        self._total = total
        self._description = description
        self._done = 0
        self._failed = 0
        self._closed = False

    def __repr__(self) -> str:
        """What is wrapped and how far it got, e.g. ``<bankfeed Progress of investments: 3/32 done,
        1 failed>``; ``closed`` once closed or at the end."""
        total = "?" if self._total is None else self._total
        closed = ", closed" if self._closed else ""
        return (
            f"<bankfeed {type(self).__name__} of {self._description}: {self._done}/{total} done, "
            f"{self._failed} failed{closed}>"
        )

    def _count(self, item: object) -> None:
        self._done += 1
        self._failed += _failed(item)
        if self._display is not None:
            try:
                self._display.update(self._done, self._failed)
            except Exception:
                # A closed or full stderr (a cron job's `2>&-`, a full disk) must not end a bulk
                # call and lose every result fetched: the progress is a courtesy, the data is not.
                self._display = None

    def _call_and_end(self, iterator: object, method: str) -> None:
        """Calls ``method`` of the wrapped ``iterator`` when it has one, then ends the display,
        also when the call fails."""
        try:
            call = getattr(iterator, method, None)
            if call is not None:
                call()
        finally:
            self._end_display()

    def _end_display(self) -> None:
        self._closed = True
        display, self._display = self._display, None
        # Closed (or interrupted) before every login was counted: the last line must not read as
        # a run that ended with nothing failed.
        stopped = self._total is not None and self._done < self._total
        if display is not None:
            with contextlib.suppress(Exception):  # as in _count
                display.close(stopped)


class Progress(_Counter, Iterator[T]):
    """The items of a bulk iterator, unchanged, with a progress display.

    ``close()`` ends the display and closes the wrapped iterator; so do the end of the items and
    an exception (Ctrl-C) raised while waiting for the next one.
    """

    def __init__(self, iterator: Iterator[T], total: int | None, description: str) -> None:
        super().__init__(total, description)
        self._iterator = iterator

    def __iter__(self) -> Progress[T]:
        return self

    def __next__(self) -> T:
        try:
            item = next(self._iterator)
        except BaseException:
            self.close()
            raise
        self._count(item)
        return item

    def close(self) -> None:
        """Ends the display and closes the wrapped iterator (which cancels its work)."""
        self._call_and_end(self._iterator, "close")

    def __enter__(self) -> Progress[T]:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class AsyncProgress(_Counter, AsyncIterator[T]):
    """:class:`Progress` for an async bulk iterator: ``aclose()`` closes the wrapped one."""

    def __init__(self, iterator: AsyncIterator[T], total: int | None, description: str) -> None:
        super().__init__(total, description)
        self._iterator = iterator

    def __aiter__(self) -> AsyncProgress[T]:
        return self

    async def __anext__(self) -> T:
        try:
            item = await self._iterator.__anext__()
        except BaseException:
            # StopAsyncIteration, or a cancelled task (asyncio.CancelledError): the end either way.
            await self.aclose()
            raise
        self._count(item)
        return item

    def _stop_now(self) -> None:
        """Stops the wrapped bulk call at once, without a loop (for ``bf.combine``'s refusal)."""
        self._call_and_end(self._iterator, "_stop_now")

    async def aclose(self) -> None:
        """Ends the display and closes the wrapped iterator (which cancels its work)."""
        try:
            aclose = getattr(self._iterator, "aclose", None)
            if aclose is not None:
                await aclose()
        finally:
            self._end_display()

    async def __aenter__(self) -> AsyncProgress[T]:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def wrap(iterator: Iterator[T], total: int | None, *, description: str = "bankfeed") -> Progress[T]:
    """``iterator``'s items with a progress display of ``total`` items (None: unknown).

    Example::

        for login_id, result in wrap(client_iterator, len(ids), description="investments"):
            ...
    """
    return Progress(iterator, total, description)


def awrap(iterator: AsyncIterator[T], total: int | None, *, description: str = "bankfeed") -> AsyncProgress[T]:
    """As :func:`wrap`, for an async iterator (``async for``)."""
    return AsyncProgress(iterator, total, description)
