"""The dlt source's payloads (docs/dlt.md#the-payloads-kept): with ``keep_raw=True`` each kind has
a resource ``<kind>_raw`` whose payloads dlt unnests, so a field the service adds becomes a column
of the destination; without it there is none."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("duckdb")
pytest.importorskip("dlt")

import dlt
import duckdb

import bankfeed as bf
import bankfeed.dlt
from recordedserver import CUSTOMER, MINTED, Recorded, serving

LOGINS = list(MINTED[:2])


@pytest.fixture(autouse=True)
def no_telemetry(monkeypatch: pytest.MonkeyPatch) -> None:
    # dlt reports each run to its makers by default; a test run sends nothing anywhere.
    monkeypatch.setenv("RUNTIME__DLTHUB_TELEMETRY", "false")


def pipeline(tmp_path: Path) -> Any:
    return dlt.pipeline(
        "bankfeed_raw_test",
        destination=dlt.destinations.duckdb(str(tmp_path / "bankfeed.duckdb")),
        dataset_name="nightly",
        pipelines_dir=str(tmp_path / "pipelines"),
    )


def columns(tmp_path: Path) -> dict[str, set[str]]:
    with duckdb.connect(str(tmp_path / "bankfeed.duckdb"), read_only=True) as db:
        query = "select table_name, column_name from information_schema.columns where table_schema = 'nightly'"
        found: dict[str, set[str]] = {}
        for table, column in db.sql(query).fetchall():
            found.setdefault(table, set()).add(column)
    return found


def new_field(name: str, body: Any) -> None:
    if name == "investments-200":
        body["Snapshot"] = True
        for account in body["Accounts"]:
            for position in account["Positions"]:
                position["Esg"] = 7


@pytest.fixture(scope="module")
def stub_url() -> Iterator[str]:
    with serving(Recorded(add_fields=new_field)) as server:
        yield server.url


def client_of(url: str) -> bf.Client:
    return bf.Client(url, CUSTOMER, poll_interval=0.01, max_retries=0)


def test_a_new_field_of_the_payload_becomes_a_column(stub_url: str, tmp_path: Path) -> None:
    source = bankfeed.dlt.source(client_of(stub_url), LOGINS, what=["investments"], keep_raw=True)
    pipeline(tmp_path).run(source)
    assert not source.failures
    found = columns(tmp_path)
    assert {"login_id", "request_id", "fetched_at", "payload__snapshot"} <= found["investments_raw"]
    assert "esg" in found["investments_raw__payload__accounts__positions"]
    with duckdb.connect(str(tmp_path / "bankfeed.duckdb"), read_only=True) as db:
        loaded = db.sql("select login_id from nightly.investments_raw").fetchall()
    assert sorted(login for (login,) in loaded) == sorted(LOGINS)
    # The tables are loaded as without it.
    assert "investments_positions" in found


def test_without_keep_raw_there_is_no_payload_resource(stub_url: str) -> None:
    source = bankfeed.dlt.source(client_of(stub_url), LOGINS, what=["investments"])
    assert not [name for name in source.resources if name.endswith("_raw")]
    with pytest.raises(bf.ConfigError) as caught:
        bankfeed.dlt.source(client_of(stub_url), LOGINS, keep_raw="yes")  # type: ignore[arg-type]
    assert caught.value.field == "keep_raw"
