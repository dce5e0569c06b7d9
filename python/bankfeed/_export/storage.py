"""Where an export writes: a local directory, or any fsspec URL (``s3://``, ``gs://``,
``file://``) when fsspec is installed (docs/export.md#where-it-writes).

Only the few operations the commit protocol needs (src: ``writer.py``): write a file whole, rename
it, list, read, remove. A local file is written under a temporary name and renamed, so that no
reader ever sees half of it; an object store writes an object whole by itself.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import posixpath
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any

from bankfeed._export.location import described, shown
from bankfeed.errors import _config_error

__all__ = ["Storage"]


class Storage:
    """The output root: ``out`` as given, a local path or an fsspec URL."""

    def __init__(self, out: str | os.PathLike[str]) -> None:
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

    def path(self, *parts: str) -> str:
        """A path under the root."""
        if self._fs is None:
            return os.path.join(self.root, *parts)
        return posixpath.join(self.root, *parts)

    def makedirs(self, path: str) -> None:
        if self._fs is None:
            os.makedirs(path, exist_ok=True)
        else:
            self._fs.makedirs(path, exist_ok=True)

    def exists(self, path: str) -> bool:
        return os.path.exists(path) if self._fs is None else bool(self._fs.exists(path))

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
        if self._fs is None:
            with open(path, encoding="utf-8") as file:
                return file.read()
        with self._fs.open(path, "r", encoding="utf-8") as file:
            text: str = file.read()
            return text

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
        """``path`` opened for writing in binary; on a local disk flushed to it before it closes,
        so that a file renamed into place after a crash holds all it should."""
        if self._fs is None:
            with open(path, "wb") as file:
                yield file
                file.flush()
                os.fsync(file.fileno())
        else:
            with self._fs.open(path, "wb") as file:
                yield file

    def write_streamed(self, path: str, write: Callable[[IO[str]], None]) -> None:
        """Writes the text ``write`` writes to the file it is given, as :meth:`write_whole` writes:
        a reader sees all of it or nothing. For a large file, which need not be one string first."""
        target = path
        if self._fs is None:
            target = os.path.join(os.path.dirname(path), "." + os.path.basename(path) + ".tmp")
        with self.open_write(target) as binary:
            text = io.TextIOWrapper(binary, encoding="utf-8")
            write(text)
            text.flush()
            text.detach()  # the binary file is closed (and flushed to disk) by open_write
        if self._fs is None:
            os.replace(target, path)

    def write_whole(self, path: str, data: bytes) -> None:
        """Writes ``data`` to ``path`` so that a reader sees all of it or nothing."""
        if self._fs is None:
            temporary = os.path.join(os.path.dirname(path), "." + os.path.basename(path) + ".tmp")
            with self.open_write(temporary) as file:
                file.write(data)
            os.replace(temporary, path)
        else:
            with self._fs.open(path, "wb") as file:
                file.write(data)
