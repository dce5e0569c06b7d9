"""Copies of one client in one process share its connection pool and its bound on requests in
flight (docs/architecture.md#one-pool-per-configuration).

A Dask or Spark worker unpickles a copy of the client in every task. When each copy was a pool of
its own, 5,000 logins in 250-login tasks on two workers took 1,089 connections to the sandbox,
past its limit of 1,024. Now a worker holds at most ``max_connections``, whatever number of
copies it runs; and closing one copy ends only that copy's calls.
"""

from __future__ import annotations

import pickle
import threading
from typing import Any
from urllib.parse import urlsplit

import pytest

import bankfeed as bf
from nethelpers import ON_LINUX, peak_connections

pytestmark = pytest.mark.skipif(not ON_LINUX, reason="reads /proc/net/tcp")

BOUND = 3
COPIES = 8
PER_COPY = 5


def port_of(sb: bf.Sandbox) -> int:
    port = urlsplit(sb.url).port
    assert port is not None
    return port


def run_at_once(clients: list[bf.Client], login_ids: list[str]) -> list[tuple[str, Any]]:
    """Each client reads its own slice of `login_ids` in a thread of its own, all at once."""
    pairs: list[tuple[str, Any]] = []
    lock = threading.Lock()
    start = threading.Barrier(len(clients))

    def read(client: bf.Client, ids: list[str]) -> None:
        start.wait()
        got = list(client.investments_many(ids, concurrency=len(ids)))
        with lock:
            pairs.extend(got)

    threads = [
        threading.Thread(target=read, args=(client, login_ids[i * PER_COPY : (i + 1) * PER_COPY]))
        for i, client in enumerate(clients)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return pairs


@pytest.fixture(scope="module")
def sandbox() -> Any:
    # Every data call pending three times: each login holds a request in flight a while.
    with bf.Sandbox(logins=COPIES * PER_COPY, pending_polls=3) as sb:
        yield sb


def test_copies_unpickled_in_one_process_open_at_most_max_connections(sandbox: bf.Sandbox) -> None:
    data = pickle.dumps(sandbox.client(poll_interval=0.01, max_connections=BOUND))
    copies: list[bf.Client] = [pickle.loads(data) for _ in range(COPIES)]
    with peak_connections(port_of(sandbox)) as peak:
        pairs = run_at_once(copies, sandbox.login_ids)
    assert sorted(login_id for login_id, _ in pairs) == sorted(sandbox.login_ids)
    assert all(isinstance(result, bf.Investments) for _, result in pairs), pairs
    # The bound of one client, with the margin test_max_connections allows for a race for an idle
    # connection; eight pools of their own opened about eight times the bound.
    assert 1 <= peak[0] <= 2 * BOUND, f"{COPIES} copies opened {peak[0]} connections"


def test_clients_made_with_the_same_options_share_the_bound_too(sandbox: bf.Sandbox) -> None:
    clients = [sandbox.client(poll_interval=0.01, max_connections=BOUND) for _ in range(COPIES)]
    with peak_connections(port_of(sandbox)) as peak:
        pairs = run_at_once(clients, sandbox.login_ids)
    assert all(isinstance(result, bf.Investments) for _, result in pairs), pairs
    assert 1 <= peak[0] <= 2 * BOUND, f"{COPIES} clients opened {peak[0]} connections"


def test_closing_one_copy_leaves_the_others_working(sandbox: bf.Sandbox) -> None:
    original = sandbox.client(poll_interval=0.01, max_connections=BOUND)
    data = pickle.dumps(original)
    closed, running, later = pickle.loads(data), pickle.loads(data), pickle.loads(data)
    ids = sandbox.login_ids[:PER_COPY]
    assert isinstance(closed.investments(ids[0]), bf.Investments), "the copy to close has used the pool"
    results = running.investments_many(ids, concurrency=len(ids))
    first = next(results)
    closed.close()
    assert closed.closed and not running.closed and not later.closed and not original.closed
    with pytest.raises(bf.ClientClosed):
        closed.investments(ids[0])
    # The calls of the other copy in flight at the close finish, and every other copy goes on.
    rest = [first, *results]
    assert all(isinstance(result, bf.Investments) for _, result in rest), rest
    assert isinstance(later.investments(ids[1]), bf.Investments)
    assert isinstance(original.investments(ids[2]), bf.Investments)
    pairs = list(running.investments_many(ids))
    assert all(isinstance(result, bf.Investments) for _, result in pairs), pairs


def test_clients_of_other_options_keep_bounds_of_their_own(sandbox: bf.Sandbox) -> None:
    # The control: the sampler sees the connections of pools that are not shared (the timeouts
    # differ, so each client is a configuration of its own).
    clients = [sandbox.client(poll_interval=0.01, max_connections=BOUND, timeout=100 + i) for i in range(COPIES)]
    with peak_connections(port_of(sandbox)) as peak:
        pairs = run_at_once(clients, sandbox.login_ids)
    assert all(isinstance(result, bf.Investments) for _, result in pairs), pairs
    assert peak[0] > 2 * BOUND, f"{COPIES} clients of their own opened only {peak[0]} connections"
