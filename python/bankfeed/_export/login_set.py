r"""A set of LoginIds kept compactly: what an export reads back from its journal (the logins a run
wrote, per kind) and holds while it decides what is left, writes its manifest and sums up its runs.

A Python ``set`` of ``str`` costs about 100 bytes a LoginId (the object, its text, the table's
slot): at 1,000,000 logins, 100 MB per kind and per run summed up, which made the peak memory of an
export grow with its logins (BENCHMARKS.md, export). Here the LoginIds are kept sorted, in blocks
as ``logins.LoginIdList`` keeps them (the service's UUIDs as 16 bytes each, other text joined by
newlines), in a few sorted runs merged as they grow (a log-structured merge): a lookup is a binary
search over the blocks' first values, then a search in one block; iterating gives them in sorted
order, as the manifest lists them. (A block of UUIDs in lower case sorts as its bytes do.)
"""

from __future__ import annotations

import heapq
import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["LoginIdSet", "count_in_all", "pack", "unpack"]

_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
#: UUIDs in lower case, joined by newlines: the text :func:`pack` takes.
_UUIDS = re.compile(rf"{_UUID}(?:\n{_UUID})*")
_ONE_UUID = re.compile(_UUID)


def _packed(value: str) -> bytes | None:
    """``pack([value])``, for a lookup: the bytes of one UUID in lower case."""
    if _ONE_UUID.fullmatch(value) is None:
        return None
    return bytes.fromhex(value.replace("-", ""))


def pack(values: list[Any]) -> bytes | None:
    """``values`` as 16 bytes each when every one is a UUID in lower case (a ``str``, as the
    service writes LoginIds): :func:`unpack` gives them back exactly. None for any other list."""
    if not values or not all(type(value) is str for value in values):
        return None
    text = "\n".join(values)
    if _UUIDS.fullmatch(text) is None:
        return None
    return bytes.fromhex(text.replace("-", "").replace("\n", ""))


def unpack(data: bytes) -> list[str]:
    """The LoginIds :func:`pack` made ``data`` of."""
    hexadecimal = data.hex()
    return [
        f"{hexadecimal[at : at + 8]}-{hexadecimal[at + 8 : at + 12]}-{hexadecimal[at + 12 : at + 16]}-"
        f"{hexadecimal[at + 16 : at + 20]}-{hexadecimal[at + 20 : at + 32]}"
        for at in range(0, len(hexadecimal), 32)
    ]


#: Values per block of a sorted run: a lookup searches one block (1 kB packed, 2.4 kB of text).
_BLOCK = 64
#: Values added before they are sorted into a run of their own: the only ``str`` objects the set
#: keeps one by one.
_PENDING = 8192


def _values(block: bytes | str) -> list[str]:
    return unpack(block) if isinstance(block, bytes) else block.split("\n")


class _Run:
    """Sorted, distinct values in blocks of ``_BLOCK`` (packed, or joined by newlines), and each
    block's first value."""

    __slots__ = ("blocks", "firsts", "length")

    def __init__(self, values: Iterable[str]) -> None:
        self.blocks: list[bytes | str] = []
        self.firsts: list[str] = []
        self.length = 0
        block: list[str] = []
        last: str | None = None
        for value in values:
            if value == last:
                continue
            last = value
            block.append(value)
            if len(block) >= _BLOCK:
                self._close(block)
                block = []
        if block:
            self._close(block)

    def _close(self, block: list[str]) -> None:
        packed = pack(block)
        self.blocks.append("\n".join(block) if packed is None else packed)
        self.firsts.append(block[0])
        self.length += len(block)

    def __contains__(self, value: str) -> bool:
        index = bisect_right(self.firsts, value) - 1
        if index < 0:
            return False
        # Searched in the block's text rather than split: a match is the value when newlines (or
        # the block's ends) bound it, values holding none.
        block, size = self.blocks[index], len(value)
        if isinstance(block, bytes):
            key = _packed(value)
            if key is None:
                return False
            at = block.find(key)
            while at >= 0:
                if at % 16 == 0:
                    return True
                at = block.find(key, at + 1)
            return False
        at = block.find(value)
        while at >= 0:
            if (at == 0 or block[at - 1] == "\n") and (at + size == len(block) or block[at + size] == "\n"):
                return True
            at = block.find(value, at + 1)
        return False

    def __iter__(self) -> Iterator[str]:
        for block in self.blocks:
            yield from _values(block)

    def drain(self) -> Iterator[str]:
        """Its values in order, each block let go once read: merging two runs holds little more
        than the two."""
        for index in range(len(self.blocks)):
            block, self.blocks[index] = self.blocks[index], ""
            yield from _values(block)
        self.blocks, self.firsts, self.length = [], [], 0


class LoginIdSet:
    """LoginIds (``str``), each once as given (exact text: the caller folds where case does not
    count); ``in``, ``len`` and iteration in sorted order. A value holding a newline, which the
    blocks cannot, is kept apart in a plain ``set`` (the service's LoginIds never hold one)."""

    __slots__ = ("_odd", "_pending", "_runs")

    def __init__(self, values: Iterable[str] = ()) -> None:
        self._runs: list[_Run] = []
        self._pending: set[str] = set()
        self._odd: set[str] = set()
        for value in values:
            self.add(value)

    def add(self, value: str) -> None:
        """Adds ``value``: ``str`` only."""
        if type(value) is not str:
            raise TypeError(f"a LoginIdSet holds str, not {type(value).__name__}")
        if "\n" in value:
            self._odd.add(value)
            return
        self._pending.add(value)
        if len(self._pending) >= _PENDING:
            self._flush()

    def _flush(self) -> None:
        if not self._pending:
            return
        pending, self._pending = self._pending, set()
        self._runs.append(_Run(sorted(pending)))
        del pending
        # Merged while the newest run is as large as half the one before: a few runs, each at least
        # twice the next, so a lookup searches a few and each value is merged a few times.
        while len(self._runs) >= 2 and self._runs[-2].length <= 2 * self._runs[-1].length:
            newer = self._runs.pop()
            older = self._runs.pop()
            self._runs.append(_Run(heapq.merge(older.drain(), newer.drain())))

    def compact(self) -> None:
        """Sorts every value into one run (none left pending): done when the set is built, and
        by counting and iterating."""
        self._flush()
        while len(self._runs) >= 2:
            newer = self._runs.pop()
            older = self._runs.pop()
            self._runs.append(_Run(heapq.merge(older.drain(), newer.drain())))

    def __contains__(self, value: object) -> bool:
        if type(value) is not str:
            return False
        if "\n" in value:
            return value in self._odd
        return value in self._pending or any(value in run for run in self._runs)

    def __len__(self) -> int:
        self.compact()
        return sum(run.length for run in self._runs) + len(self._odd)

    def __bool__(self) -> bool:
        return bool(self._pending or self._odd or any(run.length for run in self._runs))

    def __iter__(self) -> Iterator[str]:
        """The values in sorted order (``sorted()`` of them as ``str``)."""
        self.compact()
        runs: list[Iterable[str]] = [iter(run) for run in self._runs]
        if self._odd:
            runs.append(sorted(self._odd))
        return heapq.merge(*runs)

    def __repr__(self) -> str:
        return f"LoginIdSet({len(self)} LoginIds)"


def count_in_all(sets: list[LoginIdSet]) -> int:
    """How many values are in every one of ``sets`` (0 for none): a walk of their sorted values,
    with no set of them made."""
    if not sets:
        return 0
    if len(sets) == 1:
        return len(sets[0])
    iterators = [iter(each) for each in sets]
    current = [next(iterator, None) for iterator in iterators]
    count = 0
    while all(value is not None for value in current):
        top = max(value for value in current if value is not None)
        if all(value == top for value in current):
            count += 1
            current = [next(iterator, None) for iterator in iterators]
            continue
        for index, iterator in enumerate(iterators):
            value = current[index]
            while value is not None and value < top:
                value = next(iterator, None)
            current[index] = value
    return count
