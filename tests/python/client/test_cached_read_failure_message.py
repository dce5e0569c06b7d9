"""A cached read's Authorize never reaches the bank: when it gets no answer, its message says so
and is safe to repeat, rather than warning, as a live login's does, that it may have reached the
bank (docs/errors.md#transporterror)."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

import bankfeed as bf

CUSTOMER = "43387ca6-0391-4c82-857d-70d95f087ecb"
LOGIN = "6f422f43-0381-4234-ec1c-08de3cf14c2d"


@pytest.fixture
def nowhere() -> Iterator[str]:
    """The URL of a loopback port nothing listens on."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{holder.getsockname()[1]}"


def test_a_cached_read_that_gets_no_answer_says_nothing_of_live_logins(nowhere: str) -> None:
    # No secret key: the Authorize is the first request, and the one that fails.
    client = bf.Client(nowhere, CUSTOMER, max_retries=0)
    with pytest.raises(bf.TransportError) as single:
        client.investments(LOGIN)
    with client.accounts_detail_many([LOGIN]) as results:
        [(_, bulk)] = list(results)
    for error in (single.value, bulk):
        assert isinstance(error, bf.TransportError) and error.operation == "Authorize"
        assert "live login" not in str(error), str(error)
        assert "a cached read, which never reaches the bank: safe to repeat" in str(error)


def test_a_live_login_that_gets_no_answer_still_warns_it_may_have_reached_the_bank(nowhere: str) -> None:
    client = bf.Client(nowhere, CUSTOMER, max_retries=0)
    with pytest.raises(bf.TransportError) as live:
        client.login("FlinksCapital", "greatday_nomfa", "Everyday")
    assert "if it was a live login, it may have reached the bank" in str(live.value)
