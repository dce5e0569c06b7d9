"""Investments tables against the raw payload, on generated data of several sizes.

Every expected row is re-flattened from ``.raw`` by datahelpers (stdlib only), so a table that
drops, duplicates, mis-joins or mis-parses anything fails here. The data of each size is fetched
by ``bf.Client`` and by ``bf.AsyncClient`` (``sized`` of data/conftest.py), so every check holds
for both.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from typing import Any

import pytest

import bankfeed as bf
import datahelpers as dh
from bfhelpers import Api


def test_generated_sizes_are_exact(sized: dh.Sized) -> None:
    size, fetched = sized
    raw = fetched.investments.raw
    want = dh.SIZES[size][0]
    count = dh.item_count(raw, "Transactions")
    if want is None:
        assert count > 1
    else:
        assert count == want
    if want == 0:
        assert dh.item_count(raw, "Positions") == 0, "0 transactions means accounts with no positions"
        for account in raw["Accounts"]:
            assert not account.get("Positions") and not account.get("Transactions")


def test_accounts_table_is_the_raw_accounts(sized: dh.Sized) -> None:
    _, fetched = sized
    inv = fetched.investments
    expected = dh.expected_investment_accounts(inv.raw)
    dh.assert_rows_equal(inv.accounts, expected, dh.INVESTMENT_ACCOUNT_COLUMNS, "accounts")
    dh.assert_sums_match(inv.accounts, expected, "account_id", ["cash", "account_value", "currency_value"], "accounts")
    assert inv.value == inv.raw["Value"] and inv.cash == inv.raw["Cash"]
    assert inv.request_id == inv.raw["RequestId"]


def test_positions_table_is_the_raw_positions_joined(sized: dh.Sized) -> None:
    _, fetched = sized
    inv = fetched.investments
    raw = inv.raw
    expected = dh.expected_positions(raw)
    assert len(inv.positions) == dh.item_count(raw, "Positions")
    dh.assert_rows_equal(inv.positions, expected, dh.POSITION_COLUMNS, "positions")
    numeric = ["quantity", "price", "book_value", "market_value", "gain_amount", "gain_currency_amount", "gain_percent"]
    dh.assert_sums_match(inv.positions, expected, "account_id", numeric, "positions")
    # The join, stated directly: each position's symbol, name and price are its security's.
    securities = dh.securities_by_id(raw)
    accounts = {a["Id"]: a for a in raw["Accounts"]}
    for row in inv.positions.to_records():
        security = securities[row["security_id"]]
        assert (row["symbol"], row["security_name"], row["price"]) == (
            security["Symbol"],
            security["Name"],
            security["Price"],
        )
        account = accounts[row["account_id"]]
        assert (row["account_number"], row["account_name"], row["account_type"]) == (
            account["AccountId"],
            account["Name"],
            account["Type"],
        )


def test_transactions_table_is_the_raw_transactions_joined(sized: dh.Sized) -> None:
    _, fetched = sized
    inv = fetched.investments
    raw = inv.raw
    expected = dh.expected_investment_transactions(raw)
    assert len(inv.transactions) == dh.item_count(raw, "Transactions")
    dh.assert_rows_equal(inv.transactions, expected, dh.INVESTMENT_TRANSACTION_COLUMNS, "transactions")
    dh.assert_sums_match(inv.transactions, expected, "account_id", ["quantity", "fee", "amount"], "transactions")
    securities = dh.securities_by_id(raw)
    accounts = {a["Id"]: a for a in raw["Accounts"]}
    dates = inv.transactions.column("date")
    raw_dates = [t["Date"] for a in raw["Accounts"] for t in (a.get("Transactions") or [])]
    assert [d.isoformat() if d else None for d in dates] == raw_dates
    for row in inv.transactions.to_records():
        security = securities[row["security_id"]]
        assert (row["symbol"], row["security_name"]) == (security["Symbol"], security["Name"])
        account = accounts[row["account_id"]]
        assert (row["account_number"], row["account_name"], row["account_type"], row["account_currency"]) == (
            account["AccountId"],
            account["Name"],
            account["Type"],
            account["Currency"],
        )


def test_securities_table_is_the_raw_securities(sized: dh.Sized) -> None:
    _, fetched = sized
    inv = fetched.investments
    expected = dh.expected_securities(inv.raw)
    assert len(expected) > 0
    dh.assert_rows_equal(inv.securities, expected, dh.SECURITY_COLUMNS, "securities")
    for row in inv.securities.to_records():
        assert row["date"].tzinfo is not None and row["date"].utcoffset() == dt.timedelta(0)
        assert isinstance(row["aliases"], list)


def test_exports_agree_with_records(sized: dh.Sized) -> None:
    _, fetched = sized
    inv = fetched.investments
    dh.assert_exports_agree(inv.accounts, float_columns=["cash", "account_value", "currency_value"])
    dh.assert_exports_agree(
        inv.positions,
        float_columns=[
            "quantity",
            "price",
            "book_value",
            "market_value",
            "gain_amount",
            "gain_currency_amount",
            "gain_percent",
        ],
    )
    dh.assert_exports_agree(inv.transactions, float_columns=["quantity", "fee", "amount"], date_columns=["date"])
    dh.assert_exports_agree(inv.securities, float_columns=["price"], date_columns=["date"])


def test_from_json_of_the_raw_gives_identical_tables(sized: dh.Sized) -> None:
    _, fetched = sized
    inv = fetched.investments
    again = bf.Investments.from_json(json.dumps(inv.raw))
    also = bf.Investments.from_json(json.dumps(inv.raw).encode())
    for other in (again, also):
        assert other.raw == inv.raw
        assert (other.value, other.cash, other.request_id) == (inv.value, inv.cash, inv.request_id)
        for name in ("accounts", "positions", "transactions", "securities"):
            a, b = getattr(inv, name), getattr(other, name)
            assert a.columns == b.columns
            assert a.to_records() == b.to_records(), name


def test_same_seed_same_data_other_seed_other_data() -> None:
    a = dh.fetched(None, None).investments.raw
    b = bf.Sandbox(pending_polls=0)
    try:
        client = b.client(poll_interval=0.01)
        _, login_id = dh.log_in(client)
        again = client.investments(login_id).raw
    finally:
        b.close()

    def strip(raw: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in raw.items() if k != "RequestId"}

    assert strip(again) == strip(a)
    other = dh.fetched(None, None, seed=1).investments.raw
    assert strip(other) != strip(a)


def test_every_table_stream_is_reusable() -> None:
    """A table can be exported several times (each __arrow_c_stream__ is a fresh stream)."""
    import pyarrow as pa

    table = dh.fetched(None, None).investments.transactions
    first = pa.table(table)
    second = pa.RecordBatchReader.from_stream(table).read_all()
    assert first.equals(second)
    assert table.to_arrow().equals(first)


@pytest.mark.parametrize(
    ("module", "method", "extra"),
    [
        ("pandas", "to_pandas", "bankfeed[pandas]"),
        ("pyarrow", "to_pandas", "bankfeed[pandas]"),
        ("pyarrow", "to_arrow", "bankfeed[arrow]"),
        ("polars", "to_polars", "bankfeed[polars]"),
    ],
)
def test_missing_library_is_an_import_error_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch, module: str, method: str, extra: str
) -> None:
    table = dh.fetched(1, 1).investments.transactions
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(ImportError) as info:
        getattr(table, method)()
    assert extra in str(info.value), str(info.value)


def test_a_library_that_fails_its_own_import_is_not_reported_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    # Installed, but a module it imports is missing (or shadowed by a file of the user's own):
    # "pip install bankfeed[pandas]" would fix nothing, so the library's own error comes through.
    import importlib

    def broken(name: str) -> None:
        raise ModuleNotFoundError("No module named 'numpy.random'", name="numpy.random")

    monkeypatch.setattr(importlib, "import_module", broken)
    table = dh.fetched(1, 1).investments.transactions
    with pytest.raises(ModuleNotFoundError, match=r"numpy\.random") as info:
        table.to_pandas()
    assert "bankfeed[pandas]" not in str(info.value)


def test_records_still_work_without_any_dataframe_library(monkeypatch: pytest.MonkeyPatch) -> None:
    table = dh.fetched(1, 1).investments.transactions
    for module in ("pandas", "pyarrow", "polars"):
        monkeypatch.setitem(sys.modules, module, None)
    records = table.to_records()
    assert len(records) == 1 and type(records[0]["date"]) is dt.date
    assert table.column("amount") == [records[0]["amount"]]


def test_investments_202_path_is_polled_until_200(api: Api, fresh_sandbox: bf.Sandbox) -> None:
    client = api.client(fresh_sandbox)
    _, login_id = dh.log_in(client, api)
    mark = len(fresh_sandbox.requests)
    inv = api.run(client.investments(login_id))
    seen = [(r["method"], r["path"].rsplit("/", 1)[-1], r["status"]) for r in dh.requests_since(fresh_sandbox, mark)]
    assert seen == [
        ("POST", "GenerateAuthorizeToken", 200),
        ("POST", "Authorize", 200),
        ("POST", "Investments", 202),
        ("POST", "Investments", 202),
        ("POST", "Investments", 200),
    ], seen
    assert len(inv.transactions) == dh.item_count(inv.raw, "Transactions") > 0
    # And through an open session.
    mark = len(fresh_sandbox.requests)
    again = api.run(api.run(client.authorize_cached(login_id)).investments())
    statuses = [r["status"] for r in dh.requests_since(fresh_sandbox, mark) if r["path"].endswith("/Investments")]
    assert statuses == [202, 202, 200]
    assert again.transactions.to_records() == inv.transactions.to_records()
