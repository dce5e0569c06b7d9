"""`max_connections` bounds the connections a client opens to a host, however many calls wait.

Thousands of flows polling at once must share a bounded pool: without the bound, a burst opened
one connection per flow and ran past the sandbox's limit of 1,024 (BENCHMARKS.md, sessions).
The connections are counted from the kernel's table of TCP sockets, so the test runs on Linux.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

import bankfeed as bf
from nethelpers import ON_LINUX, peak_connections

pytestmark = pytest.mark.skipif(not ON_LINUX, reason="reads /proc/net/tcp")


def burst(max_connections: int) -> int:
    """The peak connections while 40 logins are read at once, each polled through 202s."""
    with bf.Sandbox(logins=40, pending_polls=3) as sb:
        port = urlsplit(sb.url).port
        assert port is not None
        client = sb.client(poll_interval=0.01, max_connections=max_connections)
        with peak_connections(port) as peak:
            results = list(client.investments_many(sb.login_ids, concurrency=40))
        assert all(isinstance(result, bf.Investments) for _, result in results)
        return peak[0]


@pytest.mark.parametrize("bound", [1, 3, 10])
def test_a_burst_of_calls_shares_about_max_connections(bound: int) -> None:
    # The requests in flight are bounded exactly; the pool may open a connection or two more in a
    # race for an idle one (and drops them past the bound when they go idle).
    assert 1 <= burst(max_connections=bound) <= 2 * bound


def test_without_a_tight_bound_the_same_burst_opens_one_per_flow() -> None:
    # The control: the sampler does see the connections a burst opens (40 flows at once).
    assert burst(max_connections=100) >= 30


def test_max_connections_is_checked_and_shown() -> None:
    with bf.Sandbox() as sb:
        assert sb.client().max_connections == 100
        client = sb.client(max_connections=7)
        assert client.max_connections == 7
        assert "max_connections=7" in repr(client)
        for bad in (0, 10_001):
            with pytest.raises(bf.ConfigError) as info:
                sb.client(max_connections=bad)
            assert info.value.field == "max_connections"
        with pytest.raises(TypeError, match="max_connections"):
            sb.client(max_connections="8")
