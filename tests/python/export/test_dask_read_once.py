"""``bankfeed.dask.read`` fetches each login once, however many computations follow
(docs/scale-out.md#fetched-once): counted in the sandbox's request log, with Dask's threads and
on a cluster whose workers are threads of this process (so that they reach this sandbox)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import bankfeed as bf

distributed = pytest.importorskip("distributed")
pytest.importorskip("dask.dataframe")

import bankfeed.dask  # noqa: E402

# Deselected by scripts/test --quick (CONTRIBUTING.md#the-quick-loop): Dask clusters start.
pytestmark = pytest.mark.cluster

LOGINS = 8


@pytest.fixture
def sb() -> Iterator[bf.Sandbox]:
    with bf.Sandbox(logins=LOGINS) as sandbox:
        yield sandbox


def authorizes(sb: bf.Sandbox) -> Counter[str]:
    """The Authorize requests of the sandbox's log, per LoginId: one per login's flow."""
    return Counter(request["body"]["LoginId"] for request in sb.requests if request["path"].endswith("/Authorize"))


def three_computations(frame: Any, out: Path) -> tuple[int, Any]:
    rows = len(frame)
    by_login = frame.groupby("login_id").market_value.sum().compute()
    frame.to_parquet(out, write_index=False)
    return rows, by_login


def test_read_fetches_each_login_once_with_dasks_threads(sb: bf.Sandbox, tmp_path: Path) -> None:
    positions = bankfeed.dask.read(
        sb.client(poll_interval=0.01), sb.login_ids, "investments", "positions", partition_size=3
    )
    rows, by_login = three_computations(positions, tmp_path / "written")
    assert authorizes(sb) == dict.fromkeys(sb.login_ids, 1)
    assert rows > 0 and set(by_login.index) == set(sb.login_ids)
    assert list(positions.columns) == bf.schema("investments", "positions").names


def test_read_fetches_each_login_once_on_a_cluster(sb: bf.Sandbox, tmp_path: Path) -> None:
    with (
        distributed.LocalCluster(n_workers=2, processes=False, dashboard_address=":0") as local,
        distributed.Client(local),
    ):
        positions = bankfeed.dask.read(
            sb.client(poll_interval=0.01), sb.login_ids, "investments", "positions", partition_size=3
        )
        rows, by_login = three_computations(positions, tmp_path / "written")
    assert authorizes(sb) == dict.fromkeys(sb.login_ids, 1)
    assert rows > 0 and set(by_login.index) == set(sb.login_ids)


def test_a_lazy_read_is_asked_for_by_name(sb: bf.Sandbox) -> None:
    lazy = bankfeed.dask.read(sb.client(poll_interval=0.01), sb.login_ids[:2], "investments", "accounts", once=False)
    assert not authorizes(sb), "nothing fetched to build the frame"
    len(lazy)
    len(lazy)
    assert authorizes(sb) == dict.fromkeys(sb.login_ids[:2], 2), "each computation fetched again"
    with pytest.raises(TypeError, match="once must be a bool"):
        bankfeed.dask.read(sb.client(), sb.login_ids, "investments", "accounts", once="no")  # type: ignore[arg-type]
