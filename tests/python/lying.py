"""Iterables whose length lies, for the tests of arguments read without trusting a length
(docs/bad-input.md#arguments). Child processes of those tests import them from here."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class Lying(Generic[T]):
    """A sequence whose ``__len__`` claims ``length`` items; it holds ``items``."""

    def __init__(self, items: Iterable[T], length: int) -> None:
        self.items, self.length = list(items), length

    def __len__(self) -> int:
        return self.length

    def __iter__(self) -> Iterator[T]:
        return iter(self.items)

    def __getitem__(self, index: int) -> T:
        return self.items[index]


class Hinting(Generic[T]):
    """An iterator whose ``__length_hint__`` claims ``2**62`` items; it yields ``items``."""

    def __init__(self, items: Iterable[T]) -> None:
        self.items = iter(items)

    def __iter__(self) -> Hinting[T]:
        return self

    def __next__(self) -> T:
        return next(self.items)

    def __length_hint__(self) -> int:
        return 2**62
