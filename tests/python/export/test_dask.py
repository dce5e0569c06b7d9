"""A client sent to Dask: its task keys hold nothing of its keys, and a cluster's workers each keep
to ``max_connections`` whatever number of tasks unpickle a copy (docs/architecture.md#pickling,
docs/architecture.md#one-pool-per-configuration).

Dask names a task by a token of its arguments. Without a token of its own, a client would be
tokenized by hashing its pickle, which holds the keys: a task key derived from a secret key, shown
on the dashboard and in every worker's log.
"""

from __future__ import annotations

import copy
import os
import pickle
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

import bankfeed as bf
from bfhelpers import API_KEY, SECRET_KEY
from nethelpers import ON_LINUX, peak_connections

dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")

from dask.base import tokenize  # noqa: E402

# Deselected by scripts/test --quick (CONTRIBUTING.md#the-quick-loop): Dask clusters start.
pytestmark = pytest.mark.cluster

CUSTOMER = "43387ca6-0391-4c82-857d-70d95f087ecb"


def keyed(**options: Any) -> bf.Client:
    return bf.Client("https://bank.example.com", CUSTOMER, api_key=API_KEY, secret_key=SECRET_KEY, **options)


def restored(client: bf.Client, **changes: Any) -> bf.Client:
    """The copy a pickle of `client` makes, with `changes` to its pickled state."""
    restore, (state,) = client.__reduce__()
    copied: bf.Client = restore({**state, **changes})
    return copied


def test_copies_of_a_client_have_its_token() -> None:
    client = keyed()
    token = tokenize(client)
    copies = [pickle.loads(pickle.dumps(client)), copy.deepcopy(client), restored(client)]
    assert [tokenize(c) for c in copies] == [token] * len(copies)


def test_clients_of_other_options_or_made_anew_have_tokens_of_their_own() -> None:
    client = keyed()
    others = [keyed(), keyed(timeout=5), bf.Client("https://other.example.com", CUSTOMER, api_key=API_KEY)]
    assert len({tokenize(client), *(tokenize(other) for other in others)}) == 1 + len(others)


def test_the_token_is_not_derived_from_the_keys() -> None:
    client = keyed()
    # The same client, its keys replaced in its pickle: were the token a hash of the pickle (or
    # of anything holding a key), it would change with them.
    other_keys = restored(client, api_key="ak-another-one", secret_key="sk-another-one")
    assert tokenize(other_keys) == tokenize(client)
    shown = repr(client.__dask_tokenize__())
    assert API_KEY not in shown and SECRET_KEY not in shown
    assert "'***'" not in shown, "the token says nothing of the keys, not even that they are set"


def fetch(client: bf.Client, login_ids: list[str]) -> int:
    """A task: one bulk call with the client it received; the count of logins fetched."""
    return sum(isinstance(result, bf.Investments) for _, result in client.investments_many(login_ids))


def test_a_task_graph_holds_no_key_text() -> None:
    client = keyed()
    login_ids = ["5e0e5f83-6e9b-4a2c-a6a3-0d8f4b1c9e21"]
    task = dask.delayed(fetch, pure=True)(client, login_ids)
    graph = dict(task.__dask_graph__())
    for text in (repr(task.key), repr(list(graph)), repr(graph), repr(task.dask)):
        assert API_KEY not in text and SECRET_KEY not in text, text
    again = dask.delayed(fetch, pure=True)(pickle.loads(pickle.dumps(client)), login_ids)
    assert again.key == task.key, "a copy of the client names the same task"


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    # Two worker processes, each running eight tasks at once: sixteen copies of the client alive
    # together, where pools of their own held sixteen times the bound.
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=8, processes=True, dashboard_address=None) as running,
        distributed.Client(running) as client,
    ):
        yield client


BOUND = 2
LOGINS = 80
CHUNK = 5


def in_task(login_ids: list[str], client: bf.Client) -> tuple[int, int]:
    """A task as a new user writes one: the client comes as an argument, unpickled in the task."""
    return os.getpid(), fetch(client, login_ids)


@pytest.mark.skipif(not ON_LINUX, reason="reads /proc/net/tcp")
def test_a_cluster_of_two_workers_keeps_to_the_bound_per_worker(cluster: Any) -> None:
    # A sandbox that asks for the keys whose text must not reach a task's key or the logs.
    with bf.Sandbox(logins=LOGINS, pending_polls=3, api_key=API_KEY, secret_key=SECRET_KEY) as sb:
        port = urlsplit(sb.url).port
        assert port is not None
        client = sb.client(poll_interval=0.01, max_connections=BOUND)
        chunks = [sb.login_ids[i : i + CHUNK] for i in range(0, LOGINS, CHUNK)]
        with peak_connections(port) as peak:
            futures = cluster.map(in_task, chunks, client=client)
            done = cluster.gather(futures)
        assert sum(fetched for _, fetched in done) == LOGINS
        workers = {pid for pid, _ in done}
        assert os.getpid() not in workers and len(workers) <= 2
        # Each worker at most the bound, with the margin test_max_connections allows.
        assert 1 <= peak[0] <= 2 * 2 * BOUND, f"the workers opened {peak[0]} connections"
        for future in futures:
            assert API_KEY not in str(future.key)
        logs = repr(cluster.get_worker_logs())
        assert API_KEY not in logs and SECRET_KEY not in logs
