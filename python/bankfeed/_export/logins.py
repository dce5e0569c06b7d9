"""The LoginIds an export was asked for, kept compactly for the whole run (docs/export.md).

An export holds its LoginIds from start to end: to know what is left to fetch, and at the end to
count what was written. As a list of ``str`` that is about 95 bytes a login (the object with its
text, and the list's pointer): 10 MB at 100,000 logins, which is what made the peak memory of an
export grow with the number of logins (BENCHMARKS.md, export). Here they are kept in blocks,
turned back into ``str`` one block at a time, as a bulk call or a count needs them: a block of
LoginIds that are all UUIDs written as the service writes them (lower case) as their 16 bytes each
(``login_set.pack``), any other as their text joined by newlines (about 37 bytes a login).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from bankfeed._export.login_set import LoginIdSet, pack, unpack
from bankfeed._native import _check_login_ids

__all__ = ["LOGINS_PER_CALL", "LoginIdList", "fold", "unique", "unique_list"]

#: Logins handed to one bulk call: enough that the few logins of a chunk's end running alone
#: cost little (32 of 10,000 at the default concurrency), few enough that the call's bookkeeping
#: (a copy of each LoginId, the ones still owed) stays a few megabytes whatever the number of
#: logins: the export's memory must not grow with them (BENCHMARKS.md).
LOGINS_PER_CALL = 10_000

#: LoginIds per block: 16 kB of bytes, or a ``str`` of about 37 kB; short-lived ``str`` objects
#: only while one block is read.
_BLOCK = 1000


def fold(login_id: Any) -> Any:
    """What tells two LoginIds apart: their text in lower case. The service compares LoginIds in
    any case (docs/errors.md), so ``ABC...`` and ``abc...`` are one login, fetched and written
    once. A value that is not text is its own."""
    return login_id.lower() if isinstance(login_id, str) else login_id


def unique(login_ids: object) -> Iterator[Any]:
    """The LoginIds in order, each once (in any case: :func:`fold`; the first spelling is kept):
    from any iterable of text (a list, a pandas or polars Series, a NumPy array, a pyarrow array).
    Values that are not text are kept as they came: the bulk call makes each its own login's error
    (or the call's ``TypeError``)."""
    # Refused in the bulk calls' words: one str (read as its characters), a whole table (a
    # DataFrame iterates its column names, a pyarrow Table its columns).
    _check_login_ids(login_ids)
    to_pylist = getattr(login_ids, "to_pylist", None)  # a pyarrow array or chunked array
    items: Iterable[Any] = to_pylist() if callable(to_pylist) else login_ids  # type: ignore[assignment]
    try:
        iterator = iter(items)
    except TypeError:
        raise TypeError(f"login_ids must be a list (or any iterable) of str, not {type(login_ids).__name__}") from None
    # Compact: at 1,000,000 LoginIds a set of them would be the largest thing a run holds at its
    # start (``login_set.py``).
    seen = LoginIdSet()
    seen_other: set[Any] = set()
    for item in iterator:
        as_py = getattr(item, "as_py", None)  # a pyarrow scalar
        value = as_py() if callable(as_py) else item
        key = fold(value)
        if type(key) is str:
            if key in seen:
                continue
            seen.add(key)
        else:
            try:
                if key in seen_other:
                    continue
                seen_other.add(key)
            except TypeError:
                raise TypeError(f"login_ids must hold str, not {type(value).__name__}") from None
        yield value


def unique_list(login_ids: object) -> list[Any]:
    """The LoginIds in order, each once, as a list (:func:`unique`)."""
    return list(unique(login_ids))


class LoginIdList:
    r"""LoginIds in the order given, each once (made from :func:`unique`), stored in blocks;
    iterating gives them back as they came.

    A block of UUIDs in lower case is stored packed (``login_set.pack``); one whose values are all plain
    ``str`` without a newline as one joined ``str`` (``"\n".join`` is undone exactly by
    ``split("\n")`` then). Any other block (a value that is not text, which the bulk call turns
    into that login's own error, or text holding a newline) is kept as the list of its values, so
    that nothing given is changed on the way."""

    __slots__ = ("_blocks", "_length", "_open")

    def __init__(self, values: Iterable[Any] = ()) -> None:
        self._blocks: list[bytes | str | list[Any]] = []
        self._open: list[Any] = []
        self._length = 0
        for value in values:
            self.append(value)

    def append(self, value: Any) -> None:
        """Adds ``value`` at the end."""
        self._open.append(value)
        self._length += 1
        if len(self._open) >= _BLOCK:
            self._close_block()

    def _close_block(self) -> None:
        block, self._open = self._open, []
        packed = pack(block)
        if packed is not None:
            self._blocks.append(packed)
        elif all(type(value) is str and "\n" not in value for value in block):
            self._blocks.append("\n".join(block))
        else:
            self._blocks.append(block)

    def __len__(self) -> int:
        return self._length

    def __bool__(self) -> bool:
        return self._length > 0

    def _values(self, block: bytes | str | list[Any]) -> list[Any]:
        if isinstance(block, bytes):
            return unpack(block)
        return block.split("\n") if isinstance(block, str) else block

    def __iter__(self) -> Iterator[Any]:
        for block in self._blocks:
            yield from self._values(block)
        yield from list(self._open)

    def slices(self, size: int) -> Iterator[list[Any]]:
        """The values in lists of ``size`` (the last one shorter), made one at a time."""
        piece: list[Any] = []
        for value in self:
            piece.append(value)
            if len(piece) >= size:
                yield piece
                piece = []
        if piece:
            yield piece

    def __repr__(self) -> str:
        return f"LoginIdList({self._length} LoginIds)"
