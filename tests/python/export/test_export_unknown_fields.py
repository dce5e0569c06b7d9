"""Fields the service adds (docs/export.md#fields-the-service-adds): a key of a payload that no
table reads is counted per path and objects, on each result (``unknown_fields``), in the report,
the manifest and the command's summary of an export. The service is a stub answering in the
recorded shapes with keys added at several levels (``recordedserver``'s ``add_fields``); the
sandbox's payloads, which the tables read whole, count none."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import bankfeed as bf
from recordedserver import CUSTOMER, MINTED, Recorded, RecordedServer, serving

LOGINS = list(MINTED[:3])


def new_fields(name: str, body: Any) -> None:
    """Keys no table reads, at the top, in accounts, positions, transactions and securities."""
    if name == "investments-200":
        body["Snapshot"] = True
        for account in body["Accounts"]:
            account["Tier"] = "gold"
            for position in account["Positions"]:
                position["Esg"] = 7
            for transaction in account["Transactions"]:
                transaction["SettlementDate"] = "2025-09-14"
        for security in body["Securities"]:
            security["Sector"] = {"Name": "Rail"}
    if name == "accounts-detail-200":
        body["Region"] = "ca"
        for account in body["Accounts"]:
            account["Nickname"] = "rainy day"
            for transaction in account["Transactions"]:
                transaction["Merchant"] = None


def per_payload() -> dict[str, dict[str, int]]:
    """Each kind's unknown fields in one payload of the stub: the objects of the recorded answers
    that carry them."""
    investments = json.loads(Path(__file__).parents[2].joinpath("corpus/investments-200.json").read_text())["body"]
    detail = json.loads(Path(__file__).parents[2].joinpath("corpus/accounts-detail-200.json").read_text())["body"]
    accounts = investments["Accounts"]
    return {
        "investments": {
            "Snapshot": 1,
            "Accounts[].Tier": len(accounts),
            "Accounts[].Positions[].Esg": sum(len(a["Positions"]) for a in accounts),
            "Accounts[].Transactions[].SettlementDate": sum(len(a["Transactions"]) for a in accounts),
            "Securities[].Sector": len(investments["Securities"]),
        },
        "accounts": {
            "Region": 1,
            "Accounts[].Nickname": len(detail["Accounts"]),
            "Accounts[].Transactions[].Merchant": sum(len(a["Transactions"]) for a in detail["Accounts"]),
        },
    }


def times(counts: dict[str, int], logins: int) -> dict[str, int]:
    return {path: count * logins for path, count in counts.items()}


@pytest.fixture(scope="module")
def stub() -> Iterator[RecordedServer]:
    with serving(Recorded(add_fields=new_fields)) as server:
        yield server


def client_of(stub: RecordedServer) -> bf.Client:
    return bf.Client(stub.url, CUSTOMER, poll_interval=0.01, max_retries=0)


def test_each_result_counts_the_fields_no_table_reads(stub: RecordedServer) -> None:
    client = client_of(stub)
    expected = per_payload()
    investments = client.investments(LOGINS[0])
    assert investments.unknown_fields == expected["investments"]
    # In the payload, in no table.
    assert investments.raw["Accounts"][0]["Positions"][0]["Esg"] == 7
    assert "esg" not in investments.positions.to_arrow().column_names
    assert client.authorize_cached(LOGINS[0]).accounts_detail().unknown_fields == expected["accounts"]


def test_recorded_and_sandbox_payloads_have_none() -> None:
    corpus = Path(__file__).parents[2] / "corpus"

    def body(name: str) -> str:
        return json.dumps(json.loads((corpus / f"{name}.json").read_text())["body"])

    assert bf.Investments.from_json(body("investments-200")).unknown_fields == {}
    assert bf.Accounts.from_json(body("accounts-detail-200")).unknown_fields == {}
    assert bf.Accounts.from_json(body("accounts-summary-200-with-login")).unknown_fields == {}
    assert bf.Statements.from_json(body("statements-200")).unknown_fields == {}
    with bf.Sandbox(logins=2) as sb:
        client = sb.client(poll_interval=0.01)
        login = sb.login_ids[0]
        assert client.investments(login).unknown_fields == {}
        session = client.authorize_cached(login)
        assert session.accounts_detail().unknown_fields == {}
        assert session.accounts_summary().unknown_fields == {}
        assert session.statements().unknown_fields == {}
        assert client.attributes(login, package="income").unknown_fields == {}


def test_an_export_counts_them_in_its_report_and_manifest(stub: RecordedServer, tmp_path: Path) -> None:
    report = bf.export(client_of(stub), LOGINS, tmp_path / "out", what=["investments", "accounts"])
    assert report.ok, report.failed
    expected = {kind: times(counts, len(LOGINS)) for kind, counts in per_payload().items()}
    assert report.unknown_fields == expected
    manifest = json.loads((tmp_path / "out" / "_manifest.json").read_text())
    assert {kind: manifest["kinds"][kind]["unknown_fields"] for kind in expected} == expected
    assert manifest["runs"][-1]["unknown_fields"] == expected


def test_the_command_names_them_in_its_summary(stub: RecordedServer, tmp_path: Path) -> None:
    environment = {key: value for key, value in os.environ.items() if not key.startswith("BANKFEED_")}
    flags = ["--base-url", stub.url, "--customer-id", CUSTOMER, "--poll-interval", "0.01", "--what", "investments"]
    done = subprocess.run(
        [sys.executable, "-m", "bankfeed", "export", *LOGINS, "--out", str(tmp_path / "out"), *flags],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=environment,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    positions = per_payload()["investments"]["Accounts[].Positions[].Esg"] * len(LOGINS)
    assert (
        f"new field: investments Accounts[].Positions[].Esg: {positions:,} rows (in the payload, in no table)"
        in done.stdout.splitlines()
    ), done.stdout
    assert "Snapshot" in done.stdout and "Securities[].Sector" in done.stdout


def test_a_resumed_run_adds_up_its_processes_and_each_run_has_its_own(stub: RecordedServer, tmp_path: Path) -> None:
    out, client = tmp_path / "out", client_of(stub)
    counts = per_payload()["investments"]
    assert bf.export(client, LOGINS[:1], out).ok
    resumed = bf.export(client, LOGINS, out, resume=True)
    # The resume's report counts what it fetched; the run, what both of its processes did.
    assert resumed.unknown_fields == {"investments": times(counts, len(LOGINS) - 1)}
    manifest = json.loads((out / "_manifest.json").read_text())
    assert manifest["runs"][-1]["unknown_fields"] == {"investments": times(counts, len(LOGINS))}
    assert manifest["kinds"]["investments"]["unknown_fields"] == times(counts, len(LOGINS))
    # The next night is a run of its own: its counts start over, the first run's stay.
    night = bf.export(client, LOGINS[:2], out)
    manifest = json.loads((out / "_manifest.json").read_text())
    by_run = {run["run"]: run["unknown_fields"] for run in manifest["runs"]}
    assert by_run == {
        resumed.run: {"investments": times(counts, len(LOGINS))},
        night.run: {"investments": times(counts, 2)},
    }
    assert manifest["kinds"]["investments"]["unknown_fields"] == times(counts, 2)
