"""The sandbox at scale: ``Sandbox(logins=N)``, ``login_ids``, and the ``bulk_<n>`` users
(docs/sandbox.md#many-logins)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

import bankfeed as bf
from bfhelpers import INSTITUTION, PASSWORD

COUNT = 1000


@pytest.fixture(scope="module")
def bulk() -> Iterator[bf.Sandbox]:
    """A sandbox with 1,000 bulk logins saved at start."""
    with bf.Sandbox(logins=COUNT, pending_polls=2, seed=11) as sb:
        yield sb


def test_a_thousand_login_ids_are_distinct_and_in_order(bulk: bf.Sandbox) -> None:
    ids = bulk.login_ids
    assert isinstance(ids, list) and len(ids) == COUNT
    assert all(isinstance(login_id, str) and len(login_id) == 36 for login_id in ids)
    assert len(set(ids)) == COUNT
    assert ids == bf.Sandbox.login_ids_for(COUNT, seed=11), "computable without the sandbox"
    assert ids[:10] == bf.Sandbox.login_ids_for(10, 11)
    assert set(ids).isdisjoint(bf.Sandbox.login_ids_for(COUNT, seed=12)), "another seed, other LoginIds"


def test_no_logins_by_default() -> None:
    with bf.Sandbox() as sb:
        assert sb.login_ids == []
    assert bf.Sandbox.login_ids_for(0) == []


@pytest.mark.parametrize("index", [0, 1, 499, COUNT - 1])
def test_cached_authorize_and_investments_work_for_each(bulk: bf.Sandbox, index: int) -> None:
    login_id = bulk.login_ids[index]
    client = bulk.client(poll_interval=0.01, poll_timeout=10)
    session = client.authorize_cached(login_id)
    assert session.login_id == login_id
    investments = client.investments(login_id)
    assert len(investments.accounts) >= 2
    assert investments.raw["Login"]["Username"] == f"bulk_{index:05d}"


def test_each_login_has_data_of_its_own_and_the_same_in_another_sandbox(bulk: bf.Sandbox) -> None:
    client = bulk.client(poll_interval=0.01, poll_timeout=10)
    ids = bulk.login_ids
    values = {client.investments(login_id).value for login_id in ids[:20]}
    assert len(values) > 10
    with bf.Sandbox(logins=3, pending_polls=0, seed=11) as again:
        assert again.login_ids == ids[:3]
        other = again.client(poll_interval=0.01)
        assert other.investments(ids[2]).raw["Accounts"] == client.investments(ids[2]).raw["Accounts"]


def test_a_bulk_username_logs_in_without_a_sandbox_that_saved_it() -> None:
    with bf.Sandbox(pending_polls=0, seed=5) as sb:
        client = sb.client(poll_interval=0.01)
        session = client.login(INSTITUTION, "bulk_4242", PASSWORD, save=True)
        assert session.login_id == bf.Sandbox.login_ids_for(4243, seed=5)[4242]
        assert client.login(INSTITUTION, "BULK_04242", PASSWORD).login_id == session.login_id
        assert len(client.investments(session.login_id).accounts) >= 2


@pytest.mark.parametrize("value", [-1, 1_000_001, 10**9, 10**30])
def test_a_logins_count_out_of_range_is_a_config_error_naming_logins(value: int) -> None:
    with pytest.raises(bf.ConfigError) as caught:
        bf.Sandbox(logins=value)
    assert caught.value.field == "logins"
    assert "logins" in str(caught.value) and "1000000" in str(caught.value)
    with pytest.raises(bf.ConfigError, match="logins"):
        bf.Sandbox.login_ids_for(value)


@pytest.mark.parametrize("value", [True, 1.5, "10", None])
def test_a_logins_count_of_another_type_is_a_type_error_naming_logins(value: Any) -> None:
    with pytest.raises(TypeError) as caught:
        bf.Sandbox(logins=value)
    assert str(caught.value) == f"logins must be an int from 0 to 1000000, not {type(value).__name__}"


@pytest.fixture(scope="module")
def large() -> Iterator[bf.Sandbox]:
    """A sandbox with 200,000 bulk logins: enough that making the list of LoginIds takes a while."""
    with bf.Sandbox(logins=200_000, seed=4) as sb:
        yield sb


@pytest.mark.timing
def test_login_ids_is_made_once_and_read_cheaply(large: bf.Sandbox) -> None:
    """``client.investments(sb.login_ids[0])`` in a loop (as in the docs) reads the whole list each time."""
    first = large.login_ids
    assert len(first) == 200_000 and first == bf.Sandbox.login_ids_for(200_000, seed=4)
    assert large.login_ids[0] is first[0], "the LoginIds are made once, not on every read"
    started = time.monotonic()
    for _ in range(50):
        if time.monotonic() - started > 5:
            break
        assert large.login_ids[12345] == first[12345]
    assert time.monotonic() - started < 5, "50 reads of 200,000 LoginIds"


def test_each_read_of_login_ids_is_a_list_of_its_own() -> None:
    with bf.Sandbox(logins=5) as sb:
        mine = sb.login_ids
        expected = list(mine)
        assert sb.login_ids is not mine
        mine.clear()
        mine.append("not a LoginId")
        assert sb.login_ids == expected, "a caller changing its list leaves the next read intact"
    assert sb.login_ids == expected, "still readable once closed, as before"


def test_the_sandboxs_own_clients_poll_fast_unless_told_otherwise(bulk: bf.Sandbox) -> None:
    """A bulk call of 200 logins through ``sb.client()`` with no options: each login's Investments
    answers 202 twice, and at the real service's 10 s between polls this would take minutes."""
    with bulk.client() as client:
        assert client.poll_interval == 0.05
        started = time.monotonic()
        results = list(client.investments_many(bulk.login_ids[:200], concurrency=50))
        assert time.monotonic() - started < 30
    assert [error for _, error in results if isinstance(error, Exception)] == []
    assert bulk.client(poll_interval=2.5).poll_interval == 2.5
    assert bf.Client(bulk.url, bulk.customer_id).poll_interval == 10.0
    with bf.Sandbox(pending_seconds=4) as slow:
        assert slow.client().poll_interval == pytest.approx(0.4)
        assert slow.async_client().poll_interval == pytest.approx(0.4)
