"""One run at a time in an export directory (docs/export.md#one-run-at-a-time).

Two runs writing one directory each fetch and write the logins the other has not committed yet,
so both write most of them; and a run's repair of the journal deletes the other's temporary part
files. So a run takes the directory's lock before it reads anything there, and holds it until its
manifest is written; a second run is refused at once with the holder's name, or waits for it
(``wait``). The lock is ``_journal/lock``, and what it says is ``ondisk/lock_record.py``'s:

- on a local disk (a network one too), ``flock`` on that file, which says who holds it (host,
  process, run). The system releases it when its process ends, however it ends: a run killed by
  ``kill -9`` leaves no lock behind;
- on an fsspec URL, the object itself, written only where none is (fsspec's exclusive write, which
  some filesystems make atomic and others only check before writing), and removed at the end. A
  run killed there leaves it: it is taken over when it names a process of this host that is gone.

A cluster run holds it on its driver: the workers write under it.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import socket
import stat
import threading
import time
from typing import IO, Any

from bankfeed._export.ondisk.layout import JOURNAL, LOCK
from bankfeed._export.ondisk.lock_record import encode_holder, holder_named, new_holder, parse_holder
from bankfeed._export.storage import Storage
from bankfeed.errors import ConfigError, _config_error

__all__ = ["ExportLock", "LockWaitStopped", "take_lock"]

#: How often a run waiting for the lock looks again (seconds).
_POLL = 0.2


class LockWaitStopped(Exception):
    """The wait for the lock was stopped (``stop`` set: ``bf.aexport``'s task was cancelled); the
    lock was not taken."""


class ExportLock:
    """An export directory's lock, held until :meth:`release` (or until the process ends)."""

    def release(self) -> None:
        """Lets the next run in; nothing after the first call."""


def take_lock(storage: Storage, run: str, *, wait: float, stop: threading.Event | None = None) -> ExportLock:
    """Takes the lock of the export in ``storage`` for the run ``run``, waiting up to ``wait``
    seconds for the run holding it; a ``ConfigError`` naming ``out`` and the holder when it is
    still held then. ``_journal`` must exist. Setting ``stop`` ends the wait at once, with
    :class:`LockWaitStopped` and the lock not taken."""
    path = storage.path(JOURNAL, LOCK)
    holder = new_holder(run, os.getpid(), _process_started(os.getpid()))
    waiting = _Wait(time.monotonic() + wait, stop or threading.Event())
    if storage.is_local:
        return _take_file(storage, path, holder, wait, waiting)
    return _take_object(storage, path, holder, wait, waiting)


class _Wait:
    """Until when a run waits for the lock, and what stops the wait sooner."""

    def __init__(self, deadline: float, stop: threading.Event) -> None:
        self.deadline = deadline
        self.stop = stop

    def pause(self) -> bool:
        """Sleeps a little before the next look; False when the deadline has passed. The sleep
        ends as soon as ``stop`` is set, with :class:`LockWaitStopped`."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            return False
        if self.stop.wait(min(_POLL, left)):
            raise LockWaitStopped
        return True


# --- On a local disk: flock -------------------------------------------------------------------


class _FileLock(ExportLock):
    def __init__(self, file: IO[bytes]) -> None:
        self._file: IO[bytes] | None = file

    def release(self) -> None:
        file, self._file = self._file, None
        if file is None:
            return
        with contextlib.suppress(OSError):
            file.truncate(0)  # no longer anyone's
        file.close()  # which releases the flock


def _take_file(storage: Storage, path: str, holder: dict[str, Any], wait: float, waiting: _Wait) -> ExportLock:
    while True:
        file = _open_file(storage, path)
        try:
            fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            found = parse_holder(file.read())
            file.close()
            if not waiting.pause():
                raise _held(storage, found, wait) from None
            continue
        except OSError as exc:
            file.close()
            # A filesystem with no locks at all (some network mounts without their lock service):
            # two runs could not be kept apart there.
            raise _config_error(
                "out",
                f"{storage.shown} cannot be locked ({exc.strerror or exc}): the export takes a lock so that one run "
                "at a time writes it; export to a directory on a filesystem with locks",
            ) from None
        except BaseException:
            file.close()
            raise
        try:
            # Removed and made again between the open and the lock (by hand): the lock of a file
            # no other run opens any more is no lock; take the new one.
            if not _is_file_at(file, path):
                file.close()
                continue
            file.seek(0)
            file.truncate()
            file.write(encode_holder(holder))
            file.flush()
        except BaseException:
            file.close()
            raise
        return _FileLock(file)


def _open_file(storage: Storage, path: str) -> IO[bytes]:
    """The lock file, opened for reading and writing: made when missing (new, as every file of
    the export), never through a symbolic link, and a regular file."""
    flags = os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    while True:
        try:
            try:
                descriptor = os.open(path, flags)
            except FileNotFoundError:
                try:
                    descriptor = os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o666)
                except FileExistsError:
                    continue  # made by another run meanwhile: open that one
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise _not_ours(storage, "a symbolic link") from None
            if exc.errno == errno.EISDIR:
                raise _not_ours(storage, "a directory") from None
            raise
        break
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise _not_ours(storage, "not a regular file")
    return open(descriptor, "r+b")


def _is_file_at(file: IO[bytes], path: str) -> bool:
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(file.fileno())
    return (found.st_dev, found.st_ino) == (mine.st_dev, mine.st_ino)


def _not_ours(storage: Storage, what: str) -> ConfigError:
    return _config_error(
        "out",
        f"{storage.shown}: {JOURNAL}/{LOCK} is {what}, which the export never makes: remove it (nothing was changed)",
    )


# --- On an fsspec URL: an object made where none is -------------------------------------------


class _ObjectLock(ExportLock):
    def __init__(self, storage: Storage, path: str, token: str) -> None:
        self._storage: Storage | None = storage
        self._path = path
        self._token = token

    def release(self) -> None:
        storage, self._storage = self._storage, None
        if storage is None:
            return
        # Removed only while it is still this run's: another run may have taken it over.
        if _read_object(storage, self._path).get("token") == self._token:
            storage.remove(self._path)


def _take_object(storage: Storage, path: str, holder: dict[str, Any], wait: float, waiting: _Wait) -> ExportLock:
    data = encode_holder(holder)
    while True:
        try:
            storage.create_new(path, data)
        except FileExistsError:
            pass
        else:
            # Read back: where the filesystem only looks before it writes, two runs starting at
            # once may both have written; the one whose object is there holds it.
            if _read_object(storage, path).get("token") == holder["token"]:
                return _ObjectLock(storage, path, holder["token"])
        found = _read_object(storage, path)
        if found and _is_gone(found):
            # Left by a killed run of this host: removed when it still says so, then taken.
            if _read_object(storage, path) == found:
                storage.remove(path)
            continue
        if not waiting.pause():
            raise _held(storage, found, wait)


def _read_object(storage: Storage, path: str) -> dict[str, Any]:
    """What the lock object says; empty when there is none, or it cannot be read."""
    try:
        return parse_holder(storage.read_text(path).encode("utf-8"))
    except (OSError, ValueError):
        return {}


def _is_gone(found: dict[str, Any]) -> bool:
    """Whether the lock ``found`` names a process of this host that has ended: its number free,
    or taken by a process started at another time."""
    pid = found.get("pid")
    if found.get("host") != socket.gethostname() or isinstance(pid, bool) or not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # another user's process: there
    started = found.get("process_started")
    return isinstance(started, str) and _process_started(pid) not in (None, started)


def _process_started(pid: int) -> str | None:
    """When the process ``pid`` started, in clock ticks since boot (Linux's /proc); None where it
    cannot be told."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as file:
            fields = file.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[19] if len(fields) > 19 else None


# --- The message of a run that finds it held ------------------------------------------------


def _held(storage: Storage, found: dict[str, Any], waited: float) -> ConfigError:
    who = holder_named(found) or "another run (which has not written its name yet)"
    after = f", still after {waited:g} s of waiting" if waited > 0 else ""
    return _config_error(
        "out",
        f"{storage.shown} is being written by {who}{after}: one run at a time writes an export. Let it end, or "
        "pass wait_lock=SECONDS (--wait-lock SECONDS) to wait for it",
    )
