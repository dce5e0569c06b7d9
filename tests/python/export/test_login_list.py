"""The LoginIds an export holds for its whole run (``bankfeed/_export/logins.py``): given back
exactly as they came, in order and each once, whatever they are, while taking a fraction of the
memory of a list of ``str`` (the export's peak memory must not grow with the number of logins:
docs/export.md#how-files-are-written)."""

from __future__ import annotations

import sys
import uuid

import pytest

from bankfeed._export.logins import LoginIdList, unique


def test_login_ids_come_back_in_order_each_once_whatever_they_are() -> None:
    ids = [str(uuid.UUID(int=n)) for n in range(2500)]
    odd = ["", "two\nlines", None, 7, ids[3]]  # given as they came: the bulk call fails each alone
    given = [*ids[:1200], *odd, *ids[1200:], ids[0]]
    expected = [*ids[:1200], "", "two\nlines", None, 7, *ids[1200:]]
    kept = LoginIdList(unique(given))
    assert list(kept) == expected
    assert len(kept) == len(expected) and kept
    assert [value for piece in kept.slices(1000) for value in piece] == expected
    assert [len(piece) for piece in kept.slices(1000)] == [1000, 1000, 504]
    assert not LoginIdList() and list(LoginIdList().slices(10)) == []


def test_login_ids_are_refused_when_they_cannot_be_told_apart() -> None:
    with pytest.raises(TypeError, match="login_ids must hold str, not list"):
        LoginIdList(unique([["a list"]]))
    with pytest.raises(TypeError, match="not a single str"):
        LoginIdList(unique("one-login-id"))


def test_login_ids_take_a_fraction_of_a_list_of_str() -> None:
    ids = [str(uuid.uuid4()) for _ in range(10_000)]
    as_list = sys.getsizeof(ids) + sum(sys.getsizeof(login) for login in ids)
    kept = LoginIdList(unique(ids))
    del ids
    held = sys.getsizeof(kept._blocks) + sum(
        sys.getsizeof(block) + (sum(map(sys.getsizeof, block)) if isinstance(block, list) else 0)
        for block in kept._blocks
    )
    assert held < as_list / 2, f"{held:,} bytes held for 10,000 LoginIds, against {as_list:,} as a list"
    assert repr(kept) == "LoginIdList(10000 LoginIds)", "the LoginIds themselves are not shown"
