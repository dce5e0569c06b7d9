"""Banking tables (accounts detail, summary, statements) against the raw payload, the 202 paths
of the banking operations (polled on the ...Async GET endpoints), DeleteCard and bad options, for
``bf.Client`` and ``bf.AsyncClient`` alike (the ``api`` fixture, and ``sized`` of data/conftest.py)."""

from __future__ import annotations

import base64
import datetime as dt
import json
from collections.abc import Callable
from typing import Any

import pytest

import bankfeed as bf
import datahelpers as dh
from bfhelpers import Api

BALANCE_COLUMNS = [
    "balance_available",
    "balance_current",
    "balance_limit",
    "overdraft_limit",
    "eft_eligible_ratio",
    "e_transfer_eligible_ratio",
]


def test_generated_sizes_are_exact(sized: dh.Sized) -> None:
    size, fetched = sized
    raw = fetched.detail.raw
    want = dh.SIZES[size][1]
    count = dh.item_count(raw, "Transactions")
    if want is None:
        assert count > 1
    else:
        assert count == want
    assert len(raw["Accounts"]) >= 1


def test_detail_accounts_table_is_the_raw_accounts(sized: dh.Sized) -> None:
    _, fetched = sized
    detail = fetched.detail
    expected = dh.expected_bank_accounts(detail.raw)
    dh.assert_rows_equal(detail.accounts, expected, dh.BANK_ACCOUNT_COLUMNS, "detail accounts")
    dh.assert_sums_match(detail.accounts, expected, "account_id", BALANCE_COLUMNS, "detail accounts")
    assert detail.request_id == detail.raw["RequestId"]


def test_detail_transactions_table_is_the_raw_transactions_joined(sized: dh.Sized) -> None:
    _, fetched = sized
    detail = fetched.detail
    raw = detail.raw
    expected = dh.expected_bank_transactions(raw)
    assert len(detail.transactions) == dh.item_count(raw, "Transactions")
    dh.assert_rows_equal(detail.transactions, expected, dh.BANK_TRANSACTION_COLUMNS, "detail transactions")
    dh.assert_sums_match(
        detail.transactions, expected, "account_id", ["debit", "credit", "balance"], "detail transactions"
    )
    accounts = {a["Id"]: a for a in raw["Accounts"]}
    for row in detail.transactions.to_records():
        account = accounts[row["account_id"]]
        assert (row["account_number"], row["account_title"], row["account_category"], row["currency"]) == (
            account["AccountNumber"],
            account["Title"],
            account["Category"],
            account["Currency"],
        )
        # Debit and credit are exclusive on the wire; the table keeps the missing one missing.
        assert (row["debit"] is None) != (row["credit"] is None)
    raw_dates = [t["Date"] for a in raw["Accounts"] for t in (a.get("Transactions") or [])]
    assert [d.isoformat() for d in detail.transactions.column("date")] == raw_dates


def test_days365_covers_a_year_and_days90_the_last_90_days(sized: dh.Sized) -> None:
    _, fetched = sized
    dates = fetched.detail.transactions.column("date")
    assert all(0 <= (dh.AS_OF - d).days <= 365 for d in dates)
    session = fetched.api.run(fetched.client.authorize_cached(fetched.login_id))
    recent = fetched.api.run(session.accounts_detail(with_transactions=True, days="Days90"))
    recent_dates = recent.transactions.column("date")
    assert all((dh.AS_OF - d).days <= 89 for d in recent_dates)
    # Days90 is exactly the Days365 transactions of the last 90 days.
    year_ids = {
        t["transaction_id"] for t in fetched.detail.transactions.to_records() if (dh.AS_OF - t["date"]).days <= 89
    }
    assert set(recent.transactions.column("transaction_id")) == year_ids
    dh.assert_rows_equal(
        recent.transactions, dh.expected_bank_transactions(recent.raw), dh.BANK_TRANSACTION_COLUMNS, "Days90"
    )


def test_summary_tables_are_the_raw_summary(sized: dh.Sized) -> None:
    _, fetched = sized
    summary = fetched.summary
    raw = summary.raw
    expected = dh.expected_bank_accounts(raw)
    dh.assert_rows_equal(summary.accounts, expected, dh.BANK_ACCOUNT_COLUMNS, "summary accounts")
    dh.assert_sums_match(summary.accounts, expected, "account_id", BALANCE_COLUMNS, "summary accounts")
    assert len(summary.transactions) == dh.item_count(raw, "Transactions") == 0
    assert summary.transactions.columns == dh.BANK_TRANSACTION_COLUMNS
    # Summary carries the eligibility ratios; the ids are the detail's.
    detail_ids = [a["Id"] for a in fetched.detail.raw["Accounts"]]
    assert [r["account_id"] for r in summary.accounts.to_records()] == detail_ids
    for row in summary.accounts.to_records():
        assert 0.0 <= row["eft_eligible_ratio"] <= 1.0
        assert 0.0 <= row["e_transfer_eligible_ratio"] <= 1.0


def test_statements_table_and_files_are_the_raw_statements(sized: dh.Sized) -> None:
    _, fetched = sized
    statements = fetched.statements
    raw = statements.raw
    expected = dh.expected_statements(raw)
    assert len(expected) >= 1
    dh.assert_rows_equal(statements.statements, expected, dh.STATEMENT_COLUMNS, "statements")
    files = statements.files
    raw_statements = [s for a in raw["StatementsByAccount"] for s in a["Statements"]]
    assert len(files) == len(raw_statements)
    for file, want, row in zip(files, raw_statements, expected, strict=True):
        assert file["unique_id"] == want["UniqueId"] and file["account_number"] == row["account_number"]
        assert isinstance(file["content"], bytes)
        assert file["content"] == base64.b64decode(want["Base64Bytes"])
        if want["FileType"].lower() == "pdf":
            assert file["content"].startswith(b"%PDF")


def test_banking_exports_agree_with_records(sized: dh.Sized) -> None:
    _, fetched = sized
    dh.assert_exports_agree(fetched.detail.accounts, float_columns=["balance_current"])
    dh.assert_exports_agree(
        fetched.detail.transactions, float_columns=["debit", "credit", "balance"], date_columns=["date"]
    )
    dh.assert_exports_agree(fetched.summary.accounts, float_columns=["eft_eligible_ratio", "balance_current"])
    dh.assert_exports_agree(fetched.statements.statements)


def test_accounts_from_json_gives_identical_tables(sized: dh.Sized) -> None:
    _, fetched = sized
    for result in (fetched.detail, fetched.summary):
        again = bf.Accounts.from_json(json.dumps(result.raw).encode())
        assert again.raw == result.raw
        assert again.accounts.to_records() == result.accounts.to_records()
        assert again.transactions.to_records() == result.transactions.to_records()


def test_accounts_filter_restricts_the_accounts(api: Api) -> None:
    fetched = dh.fetched(None, None, flavour=api.name)
    ids = [a["Id"] for a in fetched.detail.raw["Accounts"]]
    wanted = ids[:1]
    session = fetched.api.run(fetched.client.authorize_cached(fetched.login_id))
    detail = fetched.api.run(
        session.accounts_detail(
            with_transactions=True, days="Days365", accounts_filter=wanted, with_account_identity=True
        )
    )
    assert detail.accounts.column("account_id") == wanted
    assert set(detail.transactions.column("account_id")) <= set(wanted)
    statements = fetched.api.run(session.statements(accounts_filter=wanted))
    numbers = {a["AccountNumber"] for a in detail.raw["Accounts"]}
    assert set(statements.statements.column("account_number")) == numbers


def test_bad_days_is_a_config_error_naming_days(api: Api) -> None:
    fetched = dh.fetched(None, None, flavour=api.name)
    session = fetched.api.run(fetched.client.authorize_cached(fetched.login_id))
    mark = len(fetched.sandbox.requests)
    with pytest.raises(bf.ConfigError) as info:
        fetched.api.run(session.accounts_detail(with_transactions=True, days="Days30"))
    assert info.value.field == "days"
    assert "days" in str(info.value)
    assert len(fetched.sandbox.requests) == mark, "nothing is sent for a bad option"


@pytest.mark.parametrize(
    ("operation", "call"),
    [
        ("GetAccountsDetail", lambda s: s.accounts_detail(with_transactions=True, days="Days365")),
        ("GetAccountsSummary", lambda s: s.accounts_summary()),
        ("GetStatements", lambda s: s.statements()),
    ],
)
def test_banking_202_path_polls_the_async_endpoint(api: Api, operation: str, call: Callable[[Any], Any]) -> None:
    # Every banking operation made to wait: the summary and statements answer at once by default,
    # as the service's do (tests/python/sandbox/test_recorded_shapes.py).
    every = ["GetAccountsDetail", "GetAccountsSummary", "GetStatements"]
    with bf.Sandbox(pending_polls=2, pending_operations=every) as fresh_sandbox:
        polls_the_async_endpoint(api, fresh_sandbox, operation, call)


def polls_the_async_endpoint(api: Api, fresh_sandbox: bf.Sandbox, operation: str, call: Callable[[Any], Any]) -> None:
    client = api.client(fresh_sandbox)
    session, _ = dh.log_in(client, api)
    mark = len(fresh_sandbox.requests)
    result = api.run(call(session))
    seen = dh.requests_since(fresh_sandbox, mark)
    statuses = [r["status"] for r in seen]
    assert statuses == [202, 202, 200], seen
    assert seen[0]["method"] == "POST" and seen[0]["path"].endswith(f"/BankingServices/{operation}")
    for later in seen[1:]:
        assert later["method"] == "GET"
        assert later["path"].endswith(f"/BankingServices/{operation}Async/{session.request_id}"), later
    assert result.raw["HttpStatusCode"] == 200


def test_delete_login_then_cached_authorize_is_invalid_login(api: Api) -> None:
    # Deleted right after it connected: CARD_IN_USE (tests/python/sandbox) turned off.
    with bf.Sandbox(card_in_use_seconds=0.0) as sb:
        cached_authorize_after_delete(api, sb)


def cached_authorize_after_delete(api: Api, fresh_sandbox: bf.Sandbox) -> None:
    client = api.client(fresh_sandbox)
    _, login_id = dh.log_in(client, api)
    api.run(client.authorize_cached(login_id))  # works before
    mark = len(fresh_sandbox.requests)
    answer = api.run(client.delete_login(login_id))
    assert isinstance(answer, dict)
    seen = dh.requests_since(fresh_sandbox, mark)
    assert [(r["method"], r["status"]) for r in seen] == [("DELETE", 200)]
    assert seen[0]["path"].endswith(f"/BankingServices/DeleteCard/{login_id}")
    with pytest.raises(bf.InvalidLogin) as info:
        api.run(client.authorize_cached(login_id))
    assert info.value.code == "INVALID_LOGIN"
    with pytest.raises(bf.InvalidLogin):
        api.run(client.investments(login_id))
    # Deleting twice: the connection is gone.
    with pytest.raises(bf.ApiError):
        api.run(client.delete_login(login_id))


def test_empty_accounts_have_typed_empty_tables() -> None:
    fetched = dh.fetched(0, 0)
    table = fetched.detail.transactions
    assert len(table) == 0 and table.to_records() == []
    frame = table.to_pandas()
    assert list(frame.columns) == dh.BANK_TRANSACTION_COLUMNS and len(frame) == 0
    import pandas as pd

    assert pd.api.types.is_datetime64_any_dtype(frame["date"].dtype)
    assert frame["debit"].dtype == "float64"
    assert type(fetched.detail.accounts.to_records()[0]["balance_current"]) is float
    assert all(isinstance(d, dt.date) for d in dh.fetched(1, 1).detail.transactions.column("date"))
