"""Where an export writes: a local directory, or any fsspec URL (``s3://``, ``gs://``,
``file://``) when fsspec is installed (docs/export.md#where-it-writes).

Only the few operations the commit protocol needs (src: ``writer.py``): write a file whole, rename
it, list, read, remove. A local file is written under a temporary name and renamed, so that no
reader ever sees half of it; an object store writes an object whole by itself.

On a local disk nothing is written through a name someone else could have prepared
(docs/export.md#how-files-are-written): every file is created new (``O_CREAT | O_EXCL |
O_NOFOLLOW``: a file or a symbolic link already at the name fails the write rather than being
written through), those written whole under a random temporary name then renamed; a file is read
without following a link; and, asked to (``refuse_shared``), each directory of the output is
refused when another user owns it or every user can write in it without the sticky bit.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import posixpath
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any

from bankfeed._export.location import described, shown
from bankfeed._export.ondisk.layout import whole_temporary_name
from bankfeed.errors import ConfigError, _config_error

__all__ = ["Storage"]


class Storage:
    """The output root: ``out`` as given, a local path or an fsspec URL."""

    def __init__(self, out: str | os.PathLike[str], *, refuse_shared: bool = False) -> None:
        text = os.fspath(out)
        if not isinstance(text, str) or not text.strip():
            raise _config_error("out", f"must be a directory path or an fsspec URL, got {text!r}")
        #: ``out`` as given, credentials included: what a worker of a cluster run opens.
        self.given = text
        #: ``out`` as every message and report shows it (``location.shown``: no password, no query).
        self.shown = shown(text)
        self._fs: Any = None
        if "://" in text and not text.startswith("file://"):
            try:
                import fsspec
            except ImportError:
                raise _config_error(
                    "out", f"is a URL ({text.split('://', 1)[0]}://), which needs fsspec: pip install 'bankfeed[dask]'"
                ) from None
            try:
                self._fs, self.root = fsspec.core.url_to_fs(text)
            except Exception as exc:
                # Whatever the filesystem's package raises: a protocol unknown, its package
                # missing, a server that refused the connection (an FTP filesystem connects here).
                raise _config_error(
                    "out", f"cannot be opened: {self.shown}: {type(exc).__name__}: {described(exc, text)}"
                ) from None
            self.root = self.root.rstrip("/")
        else:
            path = text.removeprefix("file://")
            self.root = os.path.abspath(os.path.expanduser(path))
        #: Whether :meth:`makedirs` refuses a directory another user could steer (local only: an
        #: object store has no owner to check).
        self.refuse_shared = refuse_shared and self._fs is None

    @property
    def is_local(self) -> bool:
        """Whether the output is a local directory (atomic renames, fsync)."""
        return self._fs is None

    def unwritable(self) -> str | None:
        """Why a local root that exists cannot be written (``Read-only file system``,
        ``Permission denied``), found without writing anything; None when it can be, or when
        only writing would tell (a URL)."""
        if self._fs is not None or os.access(self.root, os.W_OK | os.X_OK):
            return None
        try:
            read_only = bool(os.statvfs(self.root).f_flag & os.ST_RDONLY)
        except (OSError, AttributeError):  # no statvfs (Windows)
            read_only = False
        return os.strerror(errno.EROFS if read_only else errno.EACCES)

    @property
    def filesystem(self) -> Any:
        """The fsspec filesystem of a URL, for a reader of the datasets; None on a local disk."""
        return self._fs

    def path(self, *parts: str) -> str:
        """A path under the root."""
        if self._fs is None:
            return os.path.join(self.root, *parts)
        return posixpath.join(self.root, *parts)

    def makedirs(self, path: str) -> None:
        """Makes the directory ``path`` under the root, and those above it. With
        ``refuse_shared``, a ``ConfigError`` naming ``out`` when one of them, the root included,
        is another user's or open to every user without the sticky bit."""
        if self._fs is None:
            os.makedirs(path, exist_ok=True)
            if self.refuse_shared:
                self._check_own(path)
        else:
            self._fs.makedirs(path, exist_ok=True)

    def _check_own(self, path: str) -> None:
        relative = os.path.relpath(path, self.root)
        parts = [] if relative == os.curdir or relative.startswith(os.pardir) else relative.split(os.sep)
        directory = self.root
        self._check_directory(directory, self.shown, top=True)
        for index, part in enumerate(parts):
            directory = os.path.join(directory, part)
            self._check_directory(directory, posixpath.join(self.shown, *parts[: index + 1]), top=False)

    def _check_directory(self, path: str, shown: str, *, top: bool) -> None:
        """Refuses ``path``, a directory of the output, when someone else could plant a file or a
        link in it (the export would read it back, or write where it points), or replace what the
        export wrote: owned by another user, or writable by every user without the sticky bit
        (which lets each user remove only their own names). Root's directories are trusted: root
        can do anything anyway. The output itself may be a link of one's own to a directory."""
        status = os.lstat(path)
        if stat.S_ISLNK(status.st_mode):
            if not top:
                raise _shared(shown, "is a symbolic link, which the export never makes")
            if status.st_uid not in (os.geteuid(), 0):
                raise _shared(shown, f"is a symbolic link made by another user (uid {status.st_uid})")
            status = os.stat(path)
        if status.st_uid not in (os.geteuid(), 0):
            raise _shared(shown, f"is a directory owned by another user (uid {status.st_uid})")
        if status.st_mode & stat.S_IWOTH and not status.st_mode & stat.S_ISVTX:
            raise _shared(shown, "is a directory every user can write in, without the sticky bit")

    def exists(self, path: str) -> bool:
        # A link counts as there, whatever it points to: it is never followed.
        return os.path.lexists(path) if self._fs is None else bool(self._fs.exists(path))

    def is_file(self, path: str) -> bool:
        """Whether a file the export could have written is at ``path``: on a local disk a regular
        file, not a link (which the export never makes) nor anything else."""
        if self._fs is not None:
            return bool(self._fs.exists(path))
        try:
            return stat.S_ISREG(os.lstat(path).st_mode)
        except FileNotFoundError:
            return False

    def listdir(self, path: str) -> list[str]:
        """The names in directory ``path``; none when it does not exist."""
        if self._fs is None:
            try:
                return sorted(os.listdir(path))
            except FileNotFoundError:
                return []
        if not self._fs.exists(path):
            return []
        return sorted(posixpath.basename(entry.rstrip("/")) for entry in self._fs.ls(path, detail=False))

    def read_text(self, path: str) -> str:
        """The text of the file ``path``; on a local disk, an ``OSError`` when it is a symbolic
        link or not a regular file (a directory, a FIFO, which would block), rather than what it
        leads to."""
        with self.open_text(path) as file:
            text: str = file.read()
            return text

    @contextmanager
    def open_text(self, path: str) -> Iterator[IO[str]]:
        """The file ``path`` opened for reading text (UTF-8), as :meth:`read_text` reads it: for a
        large file, read a line at a time."""
        if self._fs is None:
            descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
            try:
                if not stat.S_ISREG(os.fstat(descriptor).st_mode):
                    raise OSError(errno.EINVAL, "not a regular file", path)
            except BaseException:
                os.close(descriptor)
                raise
            with open(descriptor, encoding="utf-8") as file:
                yield file
            return
        with self._fs.open(path, "r", encoding="utf-8") as file:
            yield file

    def remove(self, path: str) -> None:
        if self._fs is None:
            with contextlib.suppress(FileNotFoundError):
                os.remove(path)
        elif self._fs.exists(path):
            self._fs.rm(path)

    def rename(self, source: str, target: str) -> None:
        """Moves ``source`` to ``target``, replacing it: atomic on a local disk."""
        if self._fs is None:
            os.replace(source, target)
        else:
            self._fs.mv(source, target)

    @contextmanager
    def open_write(self, path: str) -> Iterator[IO[bytes]]:
        """``path``, a new file, opened for writing in binary; on a local disk created there and
        then only (``FileExistsError`` when a file or a link is already there: nothing is written
        through a name prepared by someone else), and flushed to it before it closes, so that a
        file renamed into place after a crash holds all it should."""
        if self._fs is None:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            with open(os.open(path, flags, 0o666), "wb") as file:
                yield file
                file.flush()
                os.fsync(file.fileno())
        else:
            with self._fs.open(path, "wb") as file:
                yield file

    def create_new(self, path: str, data: bytes) -> None:
        """Writes ``data`` to ``path`` only where nothing is: ``FileExistsError`` otherwise. On a
        local disk atomic (``O_EXCL``); on an fsspec URL, fsspec's exclusive write, atomic where
        the filesystem makes it so (docs/export.md#one-run-at-a-time) and otherwise a look then a
        write."""
        if self._fs is None:
            with self.open_write(path) as file:
                file.write(data)
            return
        if self._fs.exists(path):
            raise FileExistsError(errno.EEXIST, "exists", path)
        try:
            self._fs.pipe_file(path, data, mode="create")
        except TypeError:  # an fsspec before its exclusive write: the look above is all there is
            with self._fs.open(path, "wb") as file:
                file.write(data)

    def write_streamed(self, path: str, write: Callable[[IO[str]], None]) -> None:
        """Writes the text ``write`` writes to the file it is given, as :meth:`write_whole` writes:
        a reader sees all of it or nothing. For a large file, which need not be one string first."""

        def write_text(binary: IO[bytes]) -> None:
            text = io.TextIOWrapper(binary, encoding="utf-8")
            write(text)
            text.flush()
            text.detach()  # the binary file is closed (and flushed to disk) by open_write

        self._write_whole(path, write_text)

    def write_whole(self, path: str, data: bytes) -> None:
        """Writes ``data`` to ``path`` so that a reader sees all of it or nothing."""
        self._write_whole(path, lambda file: file.write(data))

    def _write_whole(self, path: str, write: Callable[[IO[bytes]], object]) -> None:
        if self._fs is not None:
            with self._fs.open(path, "wb") as file:
                write(file)
            return
        # A random name, created new: a link planted under a name known in advance is never
        # written through (docs/export.md#how-files-are-written).
        temporary = os.path.join(os.path.dirname(path), whole_temporary_name(os.path.basename(path)))
        created = False
        try:
            with self.open_write(temporary) as file:
                created = True
                write(file)
            os.replace(temporary, path)
        except BaseException:
            if created:
                self.remove(temporary)
            raise


def _shared(shown: str, problem: str) -> ConfigError:
    return _config_error(
        "out",
        f"{shown} {problem}: another user could plant files or links there for the export to write through or read "
        "back. Use a directory of your own (under your home directory, say), or pass allow_shared_out=True "
        "(--allow-shared-out) if every user who can write there is trusted",
    )
