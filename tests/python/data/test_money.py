"""Exact money (docs/tables.md#money): with ``money="decimal"`` every amount, balance, value,
price and quantity column is a decimal128 holding the digits the payload wrote, so sums are exact
in pyarrow, pandas and DuckDB; a value that does not fit its column is that login's error naming
the column, never a rounded number; ``"float"`` stays the default and what it always was."""

from __future__ import annotations

import json
import pickle
import uuid
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest

pytest.importorskip("pyarrow")

import pyarrow
import pyarrow.compute

import bankfeed as bf
from stubserver import Answer, Request, Serve, serving

CUSTOMER = "43387ca6-0391-4c82-857d-70d95f087ecb"

#: The payload's money as JSON writes it, with what each is exactly.
WRITTEN = ["0.1", "0.2", "-0.3", "12345678901234.5678", "1E2", "2.5e-3", "-7"]


def investments(market_values: list[str], quantity: str = "0.12345678") -> str:
    """An Investments payload whose positions' market values are ``market_values``, as written."""
    positions = ", ".join(
        f'{{"Id": "p{index}", "SecurityId": "s1", "Quantity": {quantity}, "MarketValue": {value}}}'
        for index, value in enumerate(market_values)
    )
    return (
        f'{{"Accounts": [{{"Id": "a1", "Cash": 0.1, "Positions": [{positions}], '
        f'"Transactions": [{{"Id": "t1", "Amount": "-1234.56", "Fee": 0.01}}]}}], '
        f'"Securities": [{{"Id": "s1", "Price": 98765.43210987}}]}}'
    )


def test_decimal_columns_hold_the_payloads_digits_and_sum_exactly() -> None:
    result = bf.Investments.from_json(investments(WRITTEN), money="decimal")
    positions = result.positions.to_arrow()
    assert positions.schema.field("market_value").type == pyarrow.decimal128(18, 4)
    assert positions.schema.field("quantity").type == pyarrow.decimal128(18, 8)
    assert positions.schema.field("price").type == pyarrow.decimal128(18, 8)
    assert positions.column("market_value").to_pylist() == [Decimal(value) for value in WRITTEN]
    assert positions.column("price").to_pylist() == [Decimal("98765.43210987")] * len(WRITTEN)
    exact = sum(Decimal(value) for value in WRITTEN)
    assert pyarrow.compute.sum(positions.column("market_value")).as_py() == exact
    assert positions.to_pandas()["market_value"].sum() == exact
    transactions = result.transactions.to_arrow()
    assert transactions.column("amount").to_pylist() == [Decimal("-1234.56")]
    assert transactions.column("fee").to_pylist() == [Decimal("0.01")]
    # A row as Python reads it holds decimal.Decimal too.
    assert result.accounts.to_records()[0]["cash"] == Decimal("0.1")
    assert result.positions.column("market_value") == [Decimal(value) for value in WRITTEN]
    # A ratio is not money: it stays a float.
    assert positions.schema.field("gain_percent").type == pyarrow.float64()


def test_duckdb_sums_a_decimal_column_exactly() -> None:
    duckdb = pytest.importorskip("duckdb")
    values = ["0.1", "0.2"] * 500
    exact = bf.Investments.from_json(investments(values), money="decimal").positions.to_arrow()
    floats = bf.Investments.from_json(investments(values)).positions.to_arrow()
    assert duckdb.from_arrow(exact).aggregate("sum(market_value)").fetchone() == (Decimal("150.0000"),)
    # What float costs: the float column's sum is not 150.
    row = duckdb.from_arrow(floats).aggregate("sum(market_value)").fetchone()
    assert row is not None
    assert row[0] != 150.0 and abs(row[0] - 150.0) < 1e-9


def test_float_stays_the_default_and_reads_what_it_always_did() -> None:
    payload = investments(WRITTEN)
    default = bf.Investments.from_json(payload).positions.to_arrow()
    assert default == bf.Investments.from_json(payload, money="float").positions.to_arrow()
    assert default.schema.field("market_value").type == pyarrow.float64()
    assert default.column("market_value").to_pylist() == [float(value) for value in WRITTEN]
    # The same columns in the same order either way; only the money columns' type differs.
    decimal = bf.Investments.from_json(payload, money="decimal").positions.to_arrow()
    assert decimal.schema.names == default.schema.names
    assert bf.schema("investments", "positions").field("market_value").type == pyarrow.float64()
    assert bf.schema("investments", "positions", "decimal").field("market_value").type == pyarrow.decimal128(18, 4)
    assert bf.schema("accounts", "transactions", "decimal").field("balance").type == pyarrow.decimal128(18, 4)


def test_a_value_that_does_not_fit_is_an_error_naming_the_column_never_rounded() -> None:
    for value, rule in [("0.12345", "more than 4 decimal places"), ("1e15", "more than 14 digits before the point")]:
        with pytest.raises(bf.DecodeError) as caught:
            bf.Investments.from_json(investments(["1.5", value]), money="decimal")
        message = str(caught.value)
        assert f"positions.market_value: {value} has {rule}" in message, message
        assert "decimal128(18, 4)" in message
        # As floats the payload reads, as it always did.
        assert len(bf.Investments.from_json(investments(["1.5", value])).positions) == 2
    detail = '{"Accounts": [{"Id": "a", "Transactions": [{"Id": "t", "Debit": 0.00100001}]}]}'
    with pytest.raises(bf.DecodeError, match=r"transactions\.debit: 0\.00100001 has more than 4 decimal places"):
        bf.Accounts.from_json(detail, money="decimal")


def attributes(debits: list[str]) -> str:
    """An attributes payload whose detail transactions' debits are ``debits``, as written."""
    transactions = ", ".join(
        f'{{"TransactionId": "t{index}", "Date": "2026/11/01", "Debit": {value}, "Credit": null}}'
        for index, value in enumerate(debits)
    )
    return (
        '{"Card": {"Id": "g", "sum_nsf": 0.3, "AttributesDetail": '
        f'[{{"Attribute": "sum_nsf", "Transactions": [{transactions}]}}]}}, "Login": {{"Id": "l"}}}}'
    )


def test_the_attributes_detail_amounts_are_decimals_too() -> None:
    debits = ["0.1", "0.2", "12345678901234.5678", "2.5e-3"]
    result = bf.Attributes.from_json(attributes(debits), money="decimal")
    detail = result.detail.to_arrow()
    assert detail.schema.field("debit").type == pyarrow.decimal128(18, 4)
    assert detail.schema.field("credit").type == pyarrow.decimal128(18, 4)
    assert detail.column("debit").to_pylist() == [Decimal(value) for value in debits]
    assert pyarrow.compute.sum(detail.column("debit")).as_py() == sum(Decimal(value) for value in debits)
    assert detail.column("credit").null_count == len(debits)
    # An attribute's value is no money column: counts and amounts alike, its digits in raw_value.
    values = result.values.to_arrow()
    assert values.schema.field("value").type == pyarrow.float64()
    assert values.column("raw_value").to_pylist() == ["0.3"]
    assert pickle.loads(pickle.dumps(result)).detail.to_arrow() == detail
    assert bf.Attributes.from_json(attributes(debits)).detail.to_arrow().schema.field("debit").type == pyarrow.float64()
    assert bf.schema("attributes", "detail", "decimal").field("debit").type == pyarrow.decimal128(18, 4)
    assert bf.schema("attributes", "detail").field("credit").type == pyarrow.float64()
    with pytest.raises(bf.DecodeError, match=r"detail\.debit: 0\.00001 has more than 4 decimal places"):
        bf.Attributes.from_json(attributes(["0.00001"]), money="decimal")
    with bf.Sandbox(logins=1) as sb:
        login = sb.login_ids[0]
        live = sb.client(money="decimal", poll_interval=0.01).attributes(login, package="income")
    assert live.detail.to_arrow().schema.field("debit").type == pyarrow.decimal128(18, 4)


def test_the_option_is_checked_shown_and_kept_by_a_pickle() -> None:
    client = bf.Client("http://127.0.0.1:9", CUSTOMER, money="decimal")
    assert client.money == "decimal"
    assert 'money="decimal"' in repr(client)
    assert pickle.loads(pickle.dumps(client)).money == "decimal"
    assert bf.Client("http://127.0.0.1:9", CUSTOMER).money == "float"
    assert "money" not in repr(bf.Client("http://127.0.0.1:9", CUSTOMER))
    with pytest.raises(bf.ConfigError) as caught:
        bf.Client("http://127.0.0.1:9", CUSTOMER, money="exact")  # type: ignore[arg-type]
    assert caught.value.field == "money" and "exact" in caught.value.rule
    with pytest.raises(TypeError, match="money"):
        bf.AsyncClient("http://127.0.0.1:9", CUSTOMER, money=1)  # type: ignore[arg-type]
    with pytest.raises(bf.ConfigError, match="money"):
        bf.Investments.from_json("{}", money="Decimal")  # type: ignore[arg-type]
    result = bf.Investments.from_json(investments(WRITTEN), money="decimal")
    again = pickle.loads(pickle.dumps(result))
    assert again.positions.to_arrow() == result.positions.to_arrow()
    assert pickle.loads(pickle.dumps(result.positions)).to_arrow() == result.positions.to_arrow()


def test_a_sandboxs_money_read_as_decimals_is_its_floats_digits() -> None:
    with bf.Sandbox(logins=3) as sb:
        exact = sb.client(money="decimal")
        floats = sb.client()
        for login_id in sb.login_ids:
            for table in ("accounts", "positions", "transactions", "securities"):
                decimal = getattr(exact.investments(login_id), table).to_arrow()
                plain = getattr(floats.investments(login_id), table).to_arrow()
                for name in decimal.schema.names:
                    if pyarrow.types.is_decimal(decimal.schema.field(name).type):
                        as_floats = [
                            None if value is None else float(value) for value in decimal.column(name).to_pylist()
                        ]
                        assert as_floats == plain.column(name).to_pylist(), (table, name)
            detail = exact.accounts_detail_many([login_id], with_transactions=True)
            for _, result in detail:
                assert not isinstance(result, BaseException), result
                assert result.transactions.to_arrow().schema.field("balance").type == pyarrow.decimal128(18, 4)


# --- A value that does not fit is that login's error ----------------------------------------------

#: Three logins; the second's market value has more places than its column's scale.
LOGINS = [str(uuid.UUID(int=index + 1)) for index in range(3)]
UNFIT = LOGINS[1]


def _login_of(request: Request) -> str:
    body = request.json() or {}
    login_id = body.get("LoginId")
    assert isinstance(login_id, str)
    return login_id


def _authorize(request: Request) -> Answer:
    login_id = _login_of(request)
    login = {"Id": login_id, "Username": "someone", "IsScheduledRefresh": False, "Type": "Personal"}
    return Answer(
        200, {"HttpStatusCode": 200, "Login": login, "RequestId": str(uuid.uuid5(uuid.NAMESPACE_URL, login_id))}
    )


def _investments(request: Request) -> Answer:
    login_id = _login_of(request)
    value = "10.12345" if login_id == UNFIT else "10.12"
    body: dict[str, Any] = json.loads(investments([value]))
    body.update(Login={"Id": login_id}, RequestId=request.json()["RequestId"])
    return Answer(200, body)


@pytest.fixture
def serve() -> Iterator[Serve]:
    yield from serving({"Authorize": _authorize, "Investments": _investments})


def test_a_login_whose_value_does_not_fit_fails_alone(serve: Serve) -> None:
    stub = serve({})
    client = bf.Client(stub.url, CUSTOMER, poll_interval=0.01, max_retries=0, money="decimal")
    results = dict(client.investments_many(LOGINS))
    error = results.pop(UNFIT)
    assert isinstance(error, bf.DecodeError), repr(error)
    assert "positions.market_value: 10.12345 has more than 4 decimal places" in str(error)
    assert all(not isinstance(result, BaseException) for result in results.values()), results
    combined = bf.combine(results.items())
    assert combined.tables["positions"].to_arrow().column("market_value").to_pylist() == [Decimal("10.12")] * 2
    # As floats every login reads.
    floats = bf.Client(stub.url, CUSTOMER, poll_interval=0.01, max_retries=0)
    assert all(not isinstance(result, BaseException) for _, result in floats.investments_many(LOGINS))
