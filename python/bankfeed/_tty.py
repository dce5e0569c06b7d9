"""Lines read from the terminal for :class:`bankfeed.TerminalHandler`, so that nothing reads the
terminal once the call they answer has ended, and its echo is put back on every way out
(docs/answering.md#in-a-terminal).

A handler runs on a thread of its own, which Python cannot interrupt: an ``input()`` or
``getpass`` still waiting there when its call has ended (Ctrl-C, the deadline, ``close()``)
takes the next line the program asks for itself, with echo off after a hidden answer. So a line
is read here from a descriptor of the terminal's own, non-blocking, waiting in ``select`` on it
and on a pipe that :meth:`LineRead.stop` writes to. The end of the call stops the read (through
``bankfeed._handlers.when_call_ends``) and puts the settings back before the call's exception
reaches the program; a stopped read never reads again. What kills the process instead (SIGTERM,
SIGHUP, SIGQUIT, a SIGINT that is not Python's KeyboardInterrupt) runs no ``finally``: for those
:func:`guard_signals` puts handlers in place for the call's duration that put the echo back
first, then let the signal do what it did. The exit of the program stops a read through
``atexit``.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import locale
import os
import select
import signal
import sys
import termios
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any, TextIO

from bankfeed._handlers import when_call_ends

__all__ = ["LineRead", "NoTerminal", "ReadStopped", "guard_signals", "read_line", "terminal_of_stdin"]

#: The controlling terminal, which ``getpass`` reads hidden answers from.
CONTROLLING = "/dev/tty"

#: Signals whose default ends the process: each is guarded while a call may read the terminal.
_GUARDED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT")


class NoTerminal(OSError):
    """The terminal could not be opened (the process has none)."""


class ReadStopped(Exception):
    """The read was stopped before a line came: its call has ended."""


class LineRead:
    """One line read from the terminal at ``path``, echo off when ``hidden``; :meth:`stop` may be
    called from any thread (or a signal handler) at any time."""

    def __init__(self, path: str, *, hidden: bool) -> None:
        try:
            self._fd = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        except OSError as error:
            raise NoTerminal(error.errno, f"cannot open the terminal {path}: {error.strerror}") from None
        try:
            self._wake_read, self._wake_write = os.pipe()
        except OSError:
            os.close(self._fd)
            raise
        os.set_blocking(self._wake_write, False)
        self._hidden = hidden
        # Reentrant: a signal handler may stop the read on the very thread that holds the lock.
        self._lock = threading.RLock()
        self._stopped = False
        self._closed = False
        #: The settings to put back while echo is off; None otherwise.
        self._saved: list[Any] | None = None

    def stop(self) -> None:
        """Puts the terminal's settings back and stops the read: it reads nothing from now on."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            self._put_back()
            with contextlib.suppress(OSError):
                os.write(self._wake_write, b"x")

    def _put_back(self) -> None:
        if self._saved is not None:
            with contextlib.suppress(OSError, termios.error):
                termios.tcsetattr(self._fd, termios.TCSANOW, self._saved)
            self._saved = None

    def close(self) -> None:
        with self._lock:
            self._stopped = True
            self._put_back()
            if not self._closed:
                self._closed = True
                for fd in (self._fd, self._wake_read, self._wake_write):
                    os.close(fd)

    def read(self, prompt: str, stream: TextIO | None) -> str:
        """Writes ``prompt`` (to ``stream``, or the terminal when None), then reads a line; raises
        ``EOFError`` at the end of input (Ctrl-D), :class:`ReadStopped` once stopped."""
        with self._lock:
            if self._stopped:
                raise ReadStopped("the call this answer was for has ended: the terminal is no longer read")
            if self._hidden:
                settings = termios.tcgetattr(self._fd)
                quiet = list(settings)
                quiet[3] &= ~termios.ECHO
                # As getpass: what was typed before the prompt is not taken as the answer.
                termios.tcsetattr(self._fd, termios.TCSAFLUSH | getattr(termios, "TCSASOFT", 0), quiet)
                self._saved = settings
        try:
            self._write(prompt, stream)
            line = self._line()
        finally:
            with self._lock:
                self._stopped = True
                self._put_back()
        if self._hidden:
            self._write("\n", stream)  # the Enter that ended the answer was not echoed
        return line

    def _write(self, text: str, stream: TextIO | None) -> None:
        if stream is not None:
            stream.write(text)
            stream.flush()
            return
        data = text.encode(_encoding(), "replace")
        while data:
            try:
                data = data[os.write(self._fd, data) :]
            except BlockingIOError:
                select.select([], [self._fd], [])

    def _line(self) -> str:
        data = bytearray()
        while True:
            select.select([self._fd, self._wake_read], [], [])
            with self._lock:
                if self._stopped:
                    raise ReadStopped("the call this answer was for has ended: the terminal is no longer read")
                try:
                    chunk = os.read(self._fd, 4096)
                except BlockingIOError:  # taken by another reader of the terminal meanwhile
                    continue
                except OSError:  # the terminal hung up: no more input
                    chunk = b""
            if not chunk:
                if not data:
                    raise EOFError
                break
            data += chunk
            # The terminal hands over a line at a time: one that ends with a newline is whole.
            if data.endswith(b"\n"):
                del data[-1:]
                break
        return data.decode(_encoding(), "replace")


def _encoding() -> str:
    return getattr(sys.stdin, "encoding", None) or locale.getpreferredencoding(False)


#: The reads under way, for the signal handlers. Reentrant: a signal handler may run on the
#: thread that holds it.
_reading: set[LineRead] = set()
_reading_lock = threading.RLock()


def read_line(path: str, prompt: str, *, hidden: bool, stream: TextIO | None) -> str:
    """A line read from the terminal at ``path`` after ``prompt`` (see :meth:`LineRead.read`),
    stopped when the call it answers ends, at the program's exit, and by :func:`guard_signals`'s
    handlers. Raises :class:`NoTerminal` when the terminal cannot be opened."""
    line_read = LineRead(path, hidden=hidden)
    with _reading_lock:
        _reading.add(line_read)
    atexit.register(line_read.stop)
    forget = when_call_ends(line_read.stop)
    try:
        return line_read.read(prompt, stream)
    finally:
        forget()
        atexit.unregister(line_read.stop)
        with _reading_lock:
            _reading.discard(line_read)
        line_read.close()


def terminal_of_stdin() -> str | None:
    """The path of the terminal ``sys.stdin`` reads, or None when it reads no terminal."""
    try:
        fd = sys.stdin.fileno()
        return os.ttyname(fd) if os.isatty(fd) else None
    except (AttributeError, ValueError, OSError):  # no stdin, a closed one, one with no descriptor
        return None


def _stop_every_read() -> None:
    with _reading_lock:
        reads = list(_reading)
    for line_read in reads:
        line_read.stop()


def _on_signal(previous: Any, signum: int, frame: FrameType | None) -> None:
    """The guard of ``signum``: the program's own handler runs as before (a read is stopped when it
    raises), and a signal whose default ends the process puts the terminal back first."""
    if previous == signal.SIG_DFL:
        _stop_every_read()
        signal.signal(signum, signal.SIG_DFL)
        signal.raise_signal(signum)  # ends the process as the signal would have
        return
    try:
        previous(signum, frame)
    except BaseException:  # KeyboardInterrupt, SystemExit: the program leaves what it was doing
        _stop_every_read()
        raise


#: The guards in place, by signal, while at least one call holds them.
_guards: dict[int, functools.partial[None]] = {}
_holders = 0


def guard_signals() -> Callable[[], None] | None:
    """Puts a guard on each signal whose handler ends the process or is Python's, for the
    duration of a call that may read the terminal; returns its undo. Only the main thread may set
    signal handlers: elsewhere nothing is done and None is returned."""
    global _holders
    if threading.current_thread() is not threading.main_thread():
        return None
    if _holders == 0:
        for name in _GUARDED:
            signum = getattr(signal, name, None)
            if signum is None:
                continue
            previous = signal.getsignal(signum)
            # Ignored, or set outside Python (which cannot be called from here): left alone.
            if previous is None or previous == signal.SIG_IGN:
                continue
            guard = functools.partial(_on_signal, previous)
            signal.signal(signum, guard)
            _guards[signum] = guard
    _holders += 1
    undone = False

    def undo() -> None:
        global _holders
        nonlocal undone
        if undone:
            return
        undone = True
        _holders -= 1
        if _holders == 0:
            for signum, guard in list(_guards.items()):
                previous = guard.args[0]
                # A handler the program set since is the program's: it stays.
                if signal.getsignal(signum) is guard:
                    with contextlib.suppress(ValueError):  # not on the main thread
                        signal.signal(signum, previous)
            _guards.clear()

    return undo
