"""Helpers of the data-layer tests (test_data_*.py): fetched sandbox data, independent
re-flattening of raw payloads into the rows every table must have, the attribute catalogue
recomputed from GetAccountsDetail, and checks that the pandas / polars / arrow exports agree
with ``to_records``.

Nothing here uses bankfeed's own tables to build an expectation: every expected row and every
expected attribute value is computed from the raw JSON with the standard library.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Final, Literal, NamedTuple, TypeAlias

import bankfeed as bf

INSTITUTION = "FlinksCapital"
PASSWORD = "Everyday"
USER = "greatday_nomfa"

#: The sandbox's as-of date.
AS_OF = dt.date(2026, 11, 20)

#: A JSON object as the service sends it: its values are arbitrary JSON.
JsonObject: TypeAlias = dict[str, Any]
#: A table cell as ``to_records`` gives it.
Cell: TypeAlias = str | float | bool | dt.date | dt.datetime | list[str] | None
#: An expected table row, column name to cell.
Row: TypeAlias = dict[str, Cell]

#: Sizes of generated data: (investment_transactions, banking_transactions); None is natural.
LARGE_INVESTMENT = 20_000
LARGE_BANKING = 50_000
SIZES: dict[str, tuple[int | None, int | None]] = {
    "empty": (0, 0),
    "one": (1, 1),
    "natural": (None, None),
    "large": (LARGE_INVESTMENT, LARGE_BANKING),
}

# ---------------------------------------------------------------------------------------------
# Fetched data, one sandbox per (size, seed), made once per test session.


def log_in(client: bf.Client) -> tuple[bf.Session, str]:
    """Authorizes ``greatday_nomfa`` with ``save=True``: a user without challenges, so the first
    step is the session. The session and its login id."""
    session = client.authorize(INSTITUTION, USER, PASSWORD, save=True)
    assert isinstance(session, bf.Session), f"{USER} has no challenges: {session!r}"
    assert session.login_id is not None, "a saved login has an id"
    return session, session.login_id


@dataclass
class Fetched:
    """Every payload of one logged-in ``greatday_nomfa``, fetched once."""

    sandbox: bf.Sandbox
    client: bf.Client
    login_id: str
    investments: bf.Investments
    detail: bf.Accounts  # Days365, with transactions
    summary: bf.Accounts
    statements: bf.Statements


#: What the ``sized`` fixture gives: (size name, the data fetched from a sandbox of that size).
Sized: TypeAlias = tuple[str, Fetched]


@functools.cache
def fetched(investment_transactions: int | None, banking_transactions: int | None, seed: int = 0) -> Fetched:
    """Logs ``greatday_nomfa`` into a fresh sandbox of the given size and seed, and fetches every
    payload once. Cached for the session (the large data is generated once)."""
    sb = bf.Sandbox(
        pending_polls=0,
        seed=seed,
        investment_transactions=investment_transactions,
        banking_transactions=banking_transactions,
    )
    client = sb.client(poll_interval=0.01, poll_timeout=60)
    _, login_id = log_in(client)
    investments = client.investments(login_id)
    banking = client.authorize_cached(login_id)
    detail = banking.accounts_detail(with_transactions=True, days="Days365")
    summary = banking.accounts_summary()
    statements = banking.statements()
    return Fetched(sb, client, login_id, investments, detail, summary, statements)


class AttributeData(NamedTuple):
    """A logged-in ``greatday_nomfa`` for attribute tests, with its Days365 detail payload."""

    sandbox: bf.Sandbox
    client: bf.Client
    login_id: str
    raw: JsonObject


@functools.cache
def attribute_sandbox(seed: int, tier2: bool = False, banking_transactions: int | None = None) -> AttributeData:
    """(sandbox, client, login_id, Days365 detail raw) of ``greatday_nomfa`` for attribute tests."""
    sb = bf.Sandbox(pending_polls=0, seed=seed, tier2=tier2, banking_transactions=banking_transactions)
    client = sb.client(poll_interval=0.01, poll_timeout=60)
    _, login_id = log_in(client)
    detail = client.authorize_cached(login_id).accounts_detail(with_transactions=True, days="Days365")
    return AttributeData(sb, client, login_id, detail.raw)


def item_count(raw: JsonObject, key: str) -> int:
    """How many ``key`` items (``"Transactions"``, ``"Positions"``) the accounts of ``raw`` hold."""
    return sum(len(a.get(key) or []) for a in raw["Accounts"])


def requests_since(sandbox: bf.Sandbox, mark: int) -> list[dict[str, Any]]:
    """The sandbox's request log from index ``mark`` on (take ``mark`` as ``len(sandbox.requests)``)."""
    return list(sandbox.requests)[mark:]


# ---------------------------------------------------------------------------------------------
# Parsing of raw values, independent of bankfeed.

_DATE = re.compile(r"^(\d{4})[-/](\d{2})[-/](\d{2})$")
_STAMP = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})?$")


def parse_date(text: str | None) -> dt.date | None:
    """A date as ``YYYY-MM-DD`` or ``YYYY/MM/DD`` (both spellings are sent); None stays None."""
    if text is None:
        return None
    match = _DATE.match(text)
    assert match, f"not a date: {text!r}"
    return dt.date(*map(int, match.groups()))


def parse_stamp(text: str | None) -> dt.datetime | None:
    """An ISO 8601 timestamp (any number of fraction digits, zone optional: naive is UTC)."""
    if text is None:
        return None
    match = _STAMP.match(text)
    assert match, f"not a timestamp: {text!r}"
    y, mo, d, h, mi, s, frac, zone = match.groups()
    micro = int((frac or "0")[:6].ljust(6, "0"))
    tz = dt.timezone.utc
    if zone and zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        tz = dt.timezone(sign * dt.timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6])))
    return dt.datetime(int(y), int(mo), int(d), int(h), int(mi), int(s), micro, tzinfo=tz).astimezone(dt.timezone.utc)


def num(value: Any) -> float | None:
    """A number as sent (numbers may come as strings); None stays None."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise AssertionError(f"boolean where a number was expected: {value!r}")
    if isinstance(value, str):
        return float(value)
    return float(value)


def text(value: Any) -> str | None:
    """A value as text (ids may come as numbers); None stays None."""
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


def field(obj: Mapping[str, Any] | None, name: str) -> Any:
    """``obj[name]`` matched case-insensitively (the service's casing varies); None if absent."""
    if not obj:
        return None
    if name in obj:
        return obj[name]
    lower = name.lower()
    for key, value in obj.items():
        if key.lower() == lower:
            return value
    return None


def items(value: Any) -> list[Any]:
    """A list that may be null."""
    return list(value or [])


# ---------------------------------------------------------------------------------------------
# Expected rows of every table, re-flattened from the raw payload.

INVESTMENT_ACCOUNT_COLUMNS = [
    "account_id", "full_account_id", "account_number", "account_name", "type", "registered",
    "currency", "cash", "account_value", "currency_value",
]
POSITION_COLUMNS = [
    "account_id", "account_number", "account_name", "account_type", "position_id", "security_id",
    "symbol", "security_name", "category", "class", "quantity", "price", "book_value",
    "market_value", "gain_amount", "gain_currency_amount", "gain_percent", "currency",
]
INVESTMENT_TRANSACTION_COLUMNS = [
    "account_id", "account_number", "account_name", "account_type", "account_currency",
    "transaction_id", "date", "type", "description", "security_id", "symbol", "security_name",
    "quantity", "fee", "amount",
]
SECURITY_COLUMNS = [
    "security_id", "symbol", "name", "type", "price", "date", "currency", "cusip", "isin", "aliases",
]
BANK_ACCOUNT_COLUMNS = [
    "account_id", "title", "account_number", "last_four_digits", "transit_number",
    "institution_number", "category", "type", "account_type", "currency", "balance_available",
    "balance_current", "balance_limit", "overdraft_limit", "eft_eligible_ratio",
    "e_transfer_eligible_ratio", "holder_name", "holder_email", "holder_phone_number",
    "holder_city", "holder_province", "holder_postal_code",
]
BANK_TRANSACTION_COLUMNS = [
    "account_id", "account_number", "account_title", "account_category", "account_type",
    "currency", "transaction_id", "date", "code", "description", "debit", "credit", "balance",
]
STATEMENT_COLUMNS = ["account_number", "unique_id", "file_type"]
ATTRIBUTE_VALUE_COLUMNS = ["group", "group_id", "login_id", "attribute", "value", "raw_value"]
ATTRIBUTE_DETAIL_COLUMNS = [
    "group", "attribute", "transaction_id", "account_id", "date", "description", "debit", "credit",
]


def securities_by_id(raw: JsonObject) -> dict[str, JsonObject]:
    """The securities of an Investments payload by their ``Id``."""
    return {field(s, "Id"): s for s in items(field(raw, "Securities"))}


def expected_investment_accounts(raw: JsonObject) -> list[Row]:
    """The rows of ``Investments.accounts``, from the raw payload."""
    return [
        {
            "account_id": text(field(a, "Id")),
            "full_account_id": text(field(a, "FullAccountId")),
            "account_number": text(field(a, "AccountId")),
            "account_name": text(field(a, "Name")),
            "type": text(field(a, "Type")),
            "registered": field(a, "Registered"),
            "currency": text(field(a, "Currency")),
            "cash": num(field(a, "Cash")),
            "account_value": num(field(a, "AccountValue")),
            "currency_value": num(field(a, "CurrencyValue")),
        }
        for a in items(field(raw, "Accounts"))
    ]


def expected_positions(raw: JsonObject) -> list[Row]:
    """The rows of ``Investments.positions``: each position joined with its account and security."""
    securities = securities_by_id(raw)
    rows: list[Row] = []
    for a in items(field(raw, "Accounts")):
        for p in items(field(a, "Positions")):
            s = securities.get(field(p, "SecurityId"))
            rows.append(
                {
                    "account_id": text(field(a, "Id")),
                    "account_number": text(field(a, "AccountId")),
                    "account_name": text(field(a, "Name")),
                    "account_type": text(field(a, "Type")),
                    "position_id": text(field(p, "Id")),
                    "security_id": text(field(p, "SecurityId")),
                    "symbol": text(field(s, "Symbol")),
                    "security_name": text(field(s, "Name")),
                    "category": text(field(p, "Category")),
                    "class": text(field(p, "Class")),
                    "quantity": num(field(p, "Quantity")),
                    "price": num(field(s, "Price")),
                    "book_value": num(field(p, "BookValue")),
                    "market_value": num(field(p, "MarketValue")),
                    "gain_amount": num(field(p, "GainAmount")),
                    "gain_currency_amount": num(field(p, "GainCurrencyAmount")),
                    "gain_percent": num(field(p, "GainPercent")),
                    "currency": text(field(p, "Currency")),
                }
            )
    return rows


def expected_investment_transactions(raw: JsonObject) -> list[Row]:
    """The rows of ``Investments.transactions``: each joined with its account and security."""
    securities = securities_by_id(raw)
    rows: list[Row] = []
    for a in items(field(raw, "Accounts")):
        for t in items(field(a, "Transactions")):
            s = securities.get(field(t, "SecurityId"))
            rows.append(
                {
                    "account_id": text(field(a, "Id")),
                    "account_number": text(field(a, "AccountId")),
                    "account_name": text(field(a, "Name")),
                    "account_type": text(field(a, "Type")),
                    "account_currency": text(field(a, "Currency")),
                    "transaction_id": text(field(t, "Id")),
                    "date": parse_date(field(t, "Date")),
                    "type": text(field(t, "Type")),
                    "description": text(field(t, "Description")),
                    "security_id": text(field(t, "SecurityId")),
                    "symbol": text(field(s, "Symbol")),
                    "security_name": text(field(s, "Name")),
                    "quantity": num(field(t, "Quantity")),
                    "fee": num(field(t, "Fee")),
                    "amount": num(field(t, "Amount")),
                }
            )
    return rows


def expected_securities(raw: JsonObject) -> list[Row]:
    """The rows of ``Investments.securities``, from the raw payload."""
    return [
        {
            "security_id": text(field(s, "Id")),
            "symbol": text(field(s, "Symbol")),
            "name": text(field(s, "Name")),
            "type": text(field(s, "Type")),
            "price": num(field(s, "Price")),
            "date": parse_stamp(field(s, "Date")),
            "currency": text(field(s, "Currency")),
            "cusip": text(field(s, "CUSIP")),
            "isin": text(field(s, "ISIN")),
            "aliases": list(field(s, "Aliases") or []),
        }
        for s in items(field(raw, "Securities"))
    ]


def expected_bank_accounts(raw: JsonObject) -> list[Row]:
    """The rows of ``Accounts.accounts`` (detail or summary), from the raw payload."""
    rows: list[Row] = []
    for a in items(field(raw, "Accounts")):
        balance = field(a, "Balance") or {}
        holder = field(a, "Holder") or {}
        address = field(holder, "Address") or {}
        rows.append(
            {
                "account_id": text(field(a, "Id")),
                "title": text(field(a, "Title")),
                "account_number": text(field(a, "AccountNumber")),
                "last_four_digits": text(field(a, "LastFourDigits")),
                "transit_number": text(field(a, "TransitNumber")),
                "institution_number": text(field(a, "InstitutionNumber")),
                "category": text(field(a, "Category")),
                "type": text(field(a, "Type")),
                "account_type": text(field(a, "AccountType")),
                "currency": text(field(a, "Currency")),
                "balance_available": num(field(balance, "Available")),
                "balance_current": num(field(balance, "Current")),
                "balance_limit": num(field(balance, "Limit")),
                "overdraft_limit": num(field(a, "OverdraftLimit")),
                "eft_eligible_ratio": num(field(a, "EftEligibleRatio")),
                "e_transfer_eligible_ratio": num(field(a, "ETransferEligibleRatio")),
                "holder_name": text(field(holder, "Name")),
                "holder_email": text(field(holder, "Email")),
                "holder_phone_number": text(field(holder, "PhoneNumber")),
                "holder_city": text(field(address, "City")),
                "holder_province": text(field(address, "Province")),
                "holder_postal_code": text(field(address, "PostalCode")),
            }
        )
    return rows


def expected_bank_transactions(raw: JsonObject) -> list[Row]:
    """The rows of ``Accounts.transactions``: each transaction joined with its account."""
    rows: list[Row] = []
    for a in items(field(raw, "Accounts")):
        for t in items(field(a, "Transactions")):
            rows.append(
                {
                    "account_id": text(field(a, "Id")),
                    "account_number": text(field(a, "AccountNumber")),
                    "account_title": text(field(a, "Title")),
                    "account_category": text(field(a, "Category")),
                    # The account's Type (Chequing, ...), as account_type is in the investment tables.
                    "account_type": text(field(a, "Type")),
                    "currency": text(field(a, "Currency")),
                    "transaction_id": text(field(t, "Id")),
                    "date": parse_date(field(t, "Date")),
                    "code": text(field(t, "Code")),
                    "description": text(field(t, "Description")),
                    "debit": num(field(t, "Debit")),
                    "credit": num(field(t, "Credit")),
                    "balance": num(field(t, "Balance")),
                }
            )
    return rows


def expected_statements(raw: JsonObject) -> list[Row]:
    """The rows of ``Statements.statements``, one per statement of every account."""
    return [
        {
            "account_number": text(field(a, "AccountNumber")),
            "unique_id": text(field(s, "UniqueId")),
            "file_type": text(field(s, "FileType")),
        }
        for a in items(field(raw, "StatementsByAccount"))
        for s in items(field(a, "Statements"))
    ]


# ---------------------------------------------------------------------------------------------
# Comparisons.


def assert_rows_equal(table: bf.Table, expected: list[Row], columns: list[str], what: str) -> None:
    """The table has exactly ``columns`` and, row by row and in order, the expected values."""
    assert table.columns == columns, f"{what}: columns {table.columns} != {columns}"
    assert len(table) == len(expected), f"{what}: {len(table)} rows, raw has {len(expected)}"
    records = table.to_records()
    assert len(records) == len(expected)
    for i, (got, want) in enumerate(zip(records, expected, strict=True)):
        assert list(got) == columns, f"{what} row {i}: keys {list(got)}"
        for name in columns:
            g, w = got[name], want[name]
            if isinstance(w, float) and isinstance(g, (int, float)) and not isinstance(g, bool):
                ok = math.isclose(g, w, rel_tol=1e-12, abs_tol=1e-9)
            elif isinstance(w, dt.datetime):
                ok = isinstance(g, dt.datetime) and g.tzinfo is not None and g == w
            elif isinstance(w, dt.date):
                ok = type(g) is dt.date and g == w
            else:
                ok = g == w and (w is not None or g is None)
            assert ok, f"{what} row {i} column {name}: table {g!r}, raw {w!r}"


def sums_by(rows: Iterable[Mapping[str, object]], key: str, columns: Iterable[str]) -> dict[object, dict[str, float]]:
    """Per ``key``: the row count, and per numeric column the sum and the count of missing cells."""
    out: defaultdict[object, defaultdict[str, float]] = defaultdict(lambda: defaultdict(float))
    names = list(columns)
    for row in rows:
        group = out[row[key]]
        group["__rows__"] += 1
        for name in names:
            value = row[name]
            if value is None or (isinstance(value, float) and math.isnan(value)):
                group[name + "__missing__"] += 1
            else:
                assert isinstance(value, int | float), f"{name}: not a number: {value!r}"
                group[name] += float(value)
    return {k: dict(v) for k, v in out.items()}


def assert_sums_match(table: bf.Table, expected: list[Row], key: str, columns: list[str], what: str) -> None:
    """Per ``key`` (an account), the sums of every numeric column of the table (read through
    ``column()``) equal those of the raw."""
    keys = table.column(key)
    cols = {name: table.column(name) for name in columns}
    assert all(len(c) == len(keys) for c in cols.values())
    got_rows = [{key: keys[i], **{n: cols[n][i] for n in columns}} for i in range(len(keys))]
    got, want = sums_by(got_rows, key, columns), sums_by(expected, key, columns)
    assert set(got) == set(want), f"{what}: accounts {sorted(map(str, got))} != {sorted(map(str, want))}"
    for account, sums in want.items():
        for name, value in sums.items():
            assert math.isclose(got[account].get(name, 0.0), value, rel_tol=1e-9, abs_tol=1e-6), (
                f"{what}: account {account} {name}: table {got[account].get(name)} raw {value}"
            )
        assert set(got[account]) == set(sums), f"{what}: account {account}: {set(got[account]) ^ set(sums)}"


# ---------------------------------------------------------------------------------------------
# pandas / polars / arrow agree with to_records.


def _missing(value: object) -> bool:
    import pandas as pd

    if value is None or value is pd.NaT or value is pd.NA:
        return True
    return isinstance(value, float) and math.isnan(value)


def _norm_pandas(value: Any, kind: str) -> object:
    """A pandas cell as the value to_records gives. The cell is whatever scalar its dtype holds
    (Timestamp, numpy number, list, str), hence ``Any``: it is read by duck typing."""
    if _missing(value):
        return None
    if kind == "date":
        return value.date() if hasattr(value, "date") else value
    if kind == "timestamp":
        return value.to_pydatetime()
    if kind == "list":
        return [str(v) for v in list(value)]
    if kind == "bool":
        return bool(value)
    if kind == "float":
        return float(value)
    return value


def _kind(values: Sequence[object]) -> str:
    """The kind of a column (see ``_norm_pandas``), from its first value that is not None."""
    for v in values:
        if v is None:
            continue
        if isinstance(v, bool):
            return "bool"
        if isinstance(v, dt.datetime):
            return "timestamp"
        if isinstance(v, dt.date):
            return "date"
        if isinstance(v, float):
            return "float"
        if isinstance(v, list):
            return "list"
        return "text"
    return "unknown"


def _eq(a: object, b: object) -> bool:
    """``a == b``, with NaN equal to NaN."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def assert_records_equal(
    got: Sequence[Mapping[str, object]], want: Sequence[Mapping[str, object]], what: str
) -> None:
    """Row by row, key by key, with NaN equal to NaN."""
    assert len(got) == len(want), f"{what}: {len(got)} rows != {len(want)}"
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        assert list(g) == list(w), f"{what} row {i}: keys {list(g)} != {list(w)}"
        for key in w:
            assert _eq(g[key], w[key]) and type(g[key]) is type(w[key]), (
                f"{what} row {i} {key}: {g[key]!r} != {w[key]!r}"
            )


def assert_exports_agree(table: bf.Table, float_columns: Iterable[str] = (), date_columns: Iterable[str] = ()) -> None:
    """to_arrow, pyarrow.table(t), RecordBatchReader.from_stream(t), polars (both ways) and
    pandas give the rows of to_records; pandas dates are datetime64 and numbers float64."""
    import pandas as pd
    import polars as pl
    import pyarrow as pa

    records = table.to_records()
    columns = table.columns

    arrow = table.to_arrow()
    assert isinstance(arrow, pa.Table)
    assert arrow.column_names == columns
    assert arrow.num_rows == len(table)
    assert_records_equal(arrow.to_pylist(), records, "to_arrow")

    assert_records_equal(pa.table(table).to_pylist(), records, "pyarrow.table")
    reader = pa.RecordBatchReader.from_stream(table)
    assert_records_equal(reader.read_all().to_pylist(), records, "RecordBatchReader.from_stream")

    polars_df = table.to_polars()
    assert isinstance(polars_df, pl.DataFrame)
    assert polars_df.columns == columns
    assert_records_equal(polars_df.to_dicts(), records, "to_polars")
    assert_records_equal(pl.DataFrame(table).to_dicts(), records, "polars.DataFrame")

    frame = table.to_pandas()
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.columns) == columns
    assert len(frame) == len(records)
    for name in float_columns:
        assert frame[name].dtype == "float64", f"{name}: {frame[name].dtype}"
    for name in date_columns:
        assert pd.api.types.is_datetime64_any_dtype(frame[name].dtype), f"{name}: {frame[name].dtype}"
    for name in columns:
        want = [r[name] for r in records]
        kind = _kind(want)
        for i, (cell, w) in enumerate(zip(frame[name].tolist(), want, strict=True)):
            g: object
            if kind == "float":
                # pandas has NaN both for a missing number and for a NaN value.
                g = number = float(cell)
                ok = math.isnan(number) if (w is None or math.isnan(w)) else number == w
            else:
                g = _norm_pandas(cell, kind)
                ok = _eq(g, w)
            assert ok, f"pandas {name} row {i}: {g!r} != {w!r}"


# ---------------------------------------------------------------------------------------------
# The attribute catalogue, recomputed from the GetAccountsDetail (Days365) raw payload.

CATALOGUE = [
    "account_age_days", "count_accounts", "count_transactions", "balance_current", "balance_max",
    "balance_min", "count_negative_balance", "count_nsf", "count_nsf_90_days", "sum_nsf_fees",
    "avg_monthly_deposit", "avg_monthly_withdrawal", "sum_deposits_90_days",
    "sum_withdrawals_90_days", "sum_employer_income", "count_employer_income",
    "avg_employer_income", "count_employers", "days_since_last_employer_income",
    "sum_government_income", "sum_loan_payments", "count_loan_payments",
    "sum_credit_card_payments", "sum_bill_payments",
]
PACKAGES = {
    "income": [
        "sum_employer_income", "count_employer_income", "avg_employer_income", "count_employers",
        "days_since_last_employer_income", "sum_government_income", "avg_monthly_deposit",
        "sum_deposits_90_days",
    ],
    "credit_risk": [
        "count_nsf", "count_nsf_90_days", "sum_nsf_fees", "count_negative_balance", "balance_min",
        "balance_max", "balance_current", "sum_loan_payments", "count_loan_payments",
    ],
    "user_analysis": [
        "account_age_days", "count_accounts", "count_transactions", "avg_monthly_deposit",
        "avg_monthly_withdrawal", "sum_bill_payments", "sum_credit_card_payments", "balance_current",
    ],
    "lending": [
        "balance_current", "balance_min", "count_nsf", "sum_employer_income", "avg_monthly_deposit",
        "avg_monthly_withdrawal", "sum_loan_payments", "sum_withdrawals_90_days",
        "days_since_last_employer_income",
    ],
}
NONE: Final = "NONE_DETECTED"
PAYROLL = "PAYROLL DEPOSIT "

#: A recomputed attribute: a float (money in dollars, counts and days as floats) or NONE_DETECTED.
#: Compare a local variable with ``NONE`` and the type checker narrows it to ``float`` after.
AttributeValue: TypeAlias = float | Literal["NONE_DETECTED"]


def cents(value: Any) -> int:
    """An amount of money as an exact number of cents."""
    if value is None:
        return 0
    d = Decimal(str(value)) * 100
    assert d == d.to_integral_value(), f"{value!r} has more than 2 decimals"
    return int(d)


def money(total_cents: int, divisor: int = 1) -> float:
    """``total_cents / divisor`` rounded to the cent (half away from zero), in dollars."""
    quotient = (Decimal(total_cents) / Decimal(divisor)).quantize(Decimal(1), rounding=ROUND_HALF_UP)
    return float(quotient / 100)


@dataclass(frozen=True)
class Tx:
    """One banking transaction of the detail payload, its amounts in exact cents."""

    account_id: str
    id: str
    date: dt.date
    description: str
    debit: int  # cents, 0 when absent
    credit: int
    balance: int
    raw_debit: float | None
    raw_credit: float | None

    @property
    def age(self) -> int:
        """Days from the transaction to the sandbox's as-of date."""
        return (AS_OF - self.date).days

    @property
    def recent(self) -> bool:
        """Within the last 90 days (ages 0 to 89), the window of the ``..._90_days`` attributes."""
        return self.age <= 89


def _tx(account: JsonObject, t: JsonObject) -> Tx:
    date = parse_date(field(t, "Date"))
    assert date is not None, f"a transaction without a date: {t!r}"
    return Tx(
        account_id=field(account, "Id"),
        id=field(t, "Id"),
        date=date,
        description=field(t, "Description") or "",
        debit=cents(field(t, "Debit")),
        credit=cents(field(t, "Credit")),
        balance=cents(field(t, "Balance")),
        raw_debit=num(field(t, "Debit")),
        raw_credit=num(field(t, "Credit")),
    )


def included(
    detail_raw: JsonObject, categories: Sequence[str] | None = None, account_ids: Sequence[str] | None = None
) -> tuple[list[JsonObject], list[Tx]]:
    """(accounts, T) for the given filters."""
    accounts = [
        a
        for a in items(field(detail_raw, "Accounts"))
        if (categories is None or field(a, "Category") in categories)
        and (account_ids is None or field(a, "Id") in account_ids)
    ]
    rows = [_tx(a, t) for a in accounts for t in items(field(a, "Transactions"))]
    return accounts, rows


def is_payroll(t: Tx) -> bool:
    """A payroll deposit: a credit described ``PAYROLL DEPOSIT <employer>``."""
    return t.credit > 0 and t.description.startswith(PAYROLL)


def is_government(t: Tx) -> bool:
    """Government income: a credit described ``GOVT ...``."""
    return t.credit > 0 and t.description.startswith("GOVT ")


def is_nsf(t: Tx) -> bool:
    """The word NSF in any case, words split at anything not a letter or digit."""
    return any(word.upper() == "NSF" for word in re.split(r"[\W_]+", t.description))


def is_loan(t: Tx) -> bool:
    """A loan payment: a debit described ``LOAN PAYMENT...``."""
    return t.debit > 0 and t.description.startswith("LOAN PAYMENT")


def is_card(t: Tx) -> bool:
    """A credit card payment: a debit described ``CREDIT CARD PAYMENT...``."""
    return t.debit > 0 and t.description.startswith("CREDIT CARD PAYMENT")


def is_bill(t: Tx) -> bool:
    """A bill payment: a debit described ``BILL PAYMENT...``."""
    return t.debit > 0 and t.description.startswith("BILL PAYMENT")


def recompute(
    detail_raw: JsonObject, categories: Sequence[str] | None = None, account_ids: Sequence[str] | None = None
) -> dict[str, AttributeValue]:
    """Every attribute of the catalogue: a float (money in dollars, counts and days as floats) or
    "NONE_DETECTED"."""
    accounts, T = included(detail_raw, categories, account_ids)
    payroll = [t for t in T if is_payroll(t)]
    government = [t for t in T if is_government(t)]
    nsf = [t for t in T if is_nsf(t)]
    loans = [t for t in T if is_loan(t)]
    out: dict[str, AttributeValue] = {}
    out["account_age_days"] = float((AS_OF - min(t.date for t in T)).days) if T else NONE
    out["count_accounts"] = float(len(accounts))
    out["count_transactions"] = float(len(T))
    out["balance_current"] = money(sum(cents(field(field(a, "Balance"), "Current")) for a in accounts))
    out["balance_max"] = money(max(t.balance for t in T)) if T else NONE
    out["balance_min"] = money(min(t.balance for t in T)) if T else NONE
    out["count_negative_balance"] = float(sum(1 for t in T if t.balance < 0))
    out["count_nsf"] = float(len(nsf))
    out["count_nsf_90_days"] = float(sum(1 for t in nsf if t.recent))
    out["sum_nsf_fees"] = money(sum(t.debit for t in nsf))
    out["avg_monthly_deposit"] = money(sum(t.credit for t in T), 12)
    out["avg_monthly_withdrawal"] = money(sum(t.debit for t in T), 12)
    out["sum_deposits_90_days"] = money(sum(t.credit for t in T if t.recent))
    out["sum_withdrawals_90_days"] = money(sum(t.debit for t in T if t.recent))
    out["sum_employer_income"] = money(sum(t.credit for t in payroll))
    out["count_employer_income"] = float(len(payroll))
    out["avg_employer_income"] = money(sum(t.credit for t in payroll), len(payroll)) if payroll else NONE
    out["count_employers"] = float(len({t.description[len(PAYROLL):] for t in payroll}))
    out["days_since_last_employer_income"] = float(min(t.age for t in payroll)) if payroll else NONE
    out["sum_government_income"] = money(sum(t.credit for t in government)) if government else NONE
    out["sum_loan_payments"] = money(sum(t.debit for t in loans))
    out["count_loan_payments"] = float(len(loans))
    out["sum_credit_card_payments"] = money(sum(t.debit for t in T if is_card(t)))
    out["sum_bill_payments"] = money(sum(t.debit for t in T if is_bill(t)))
    assert set(out) == set(CATALOGUE)
    return out


#: For each attribute whose underlying transactions are a well-defined set: that set.
BEHIND: dict[str, Callable[[list[Tx]], list[Tx]]] = {
    "count_transactions": lambda T: T,
    "count_negative_balance": lambda T: [t for t in T if t.balance < 0],
    "count_nsf": lambda T: [t for t in T if is_nsf(t)],
    "count_nsf_90_days": lambda T: [t for t in T if is_nsf(t) and t.recent],
    "sum_nsf_fees": lambda T: [t for t in T if is_nsf(t)],
    "sum_employer_income": lambda T: [t for t in T if is_payroll(t)],
    "count_employer_income": lambda T: [t for t in T if is_payroll(t)],
    "avg_employer_income": lambda T: [t for t in T if is_payroll(t)],
    "sum_government_income": lambda T: [t for t in T if is_government(t)],
    "sum_loan_payments": lambda T: [t for t in T if is_loan(t)],
    "count_loan_payments": lambda T: [t for t in T if is_loan(t)],
    "sum_credit_card_payments": lambda T: [t for t in T if is_card(t)],
    "sum_bill_payments": lambda T: [t for t in T if is_bill(t)],
}


def assert_value(name: str, got: object, raw_value: object, want: AttributeValue, where: str = "") -> None:
    """A row of ``Attributes.values`` (its ``value`` and ``raw_value`` cells, whose types are
    checked here) against the recomputed value."""
    if want == NONE:
        assert got is None, f"{where}{name}: {got!r}, want None (a null in the table)"
        assert raw_value == NONE, f"{where}{name}: raw_value {raw_value!r}"
    else:
        assert isinstance(got, float) and not math.isnan(got), f"{where}{name}: {got!r}, want {want}"
        assert math.isclose(got, want, rel_tol=0, abs_tol=1e-6), f"{where}{name}: {got!r}, want {want!r}"
        assert isinstance(raw_value, str) and math.isclose(float(raw_value), want, rel_tol=0, abs_tol=1e-6), (
            f"{where}{name}: raw_value {raw_value!r}, want {want!r}"
        )
