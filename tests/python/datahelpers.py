"""Helpers of the data-layer tests (data/test_data_*.py): fetched sandbox data, independent
re-flattening of raw payloads into the rows every table must have, the sandbox's attribute
catalogue, and checks that the pandas / polars / arrow exports agree with ``to_records``; and the
table columns a cassette disguises, for the cassette tests.

Nothing here uses bankfeed's own tables to build an expectation: every expected row is computed from
the raw JSON with the standard library. Attribute values are not recomputed here: the sandbox's
answer is checked against the definitions by the Rust suite
(crates/bankfeed-sandbox/tests/it/sandbox_data/attributes.rs), and the Python tests check that the
tables show that answer.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, NamedTuple, TypeAlias

import bankfeed as bf
from bfhelpers import SYNC, Api

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


def log_in(client: Any, api: Api = SYNC) -> tuple[Any, str]:
    """Authorizes ``greatday_nomfa`` with ``save=True`` on ``client`` (of ``api``'s kind): a user
    without challenges, so the first step is the session. The session and its login id."""
    session = api.run(client.authorize(INSTITUTION, USER, PASSWORD, save=True))
    assert isinstance(session, api.Session), f"{USER} has no challenges: {session!r}"
    assert session.login_id is not None, "a saved login has an id"
    return session, session.login_id


@dataclass
class Fetched:
    """Every payload of one logged-in ``greatday_nomfa``, fetched once by a client of ``api``'s kind."""

    sandbox: bf.Sandbox
    api: Api
    client: Any  # bf.Client or bf.AsyncClient, as api says
    login_id: str
    investments: bf.Investments
    detail: bf.Accounts  # Days365, with transactions
    summary: bf.Accounts
    statements: bf.Statements


#: What the ``sized`` fixture gives: (size name, the data fetched from a sandbox of that size).
Sized: TypeAlias = tuple[str, Fetched]


@functools.cache
def fetched(
    investment_transactions: int | None, banking_transactions: int | None, seed: int = 0, flavour: str = "sync"
) -> Fetched:
    """Logs ``greatday_nomfa`` into a fresh sandbox of the given size and seed, and fetches every
    payload once with a client of ``flavour`` (``"sync"`` or ``"async"``, see bfhelpers.Api); the
    async fetch reads the sandbox of the sync one. Cached for the session (the large data is
    generated once)."""
    if flavour == "sync":
        sb = bf.Sandbox(
            pending_polls=0,
            seed=seed,
            investment_transactions=investment_transactions,
            banking_transactions=banking_transactions,
        )
    else:
        sb = fetched(investment_transactions, banking_transactions, seed).sandbox
    api = SYNC if flavour == "sync" else Api(flavour)
    client = api.client(sb, poll_timeout=60)
    _, login_id = log_in(client, api)
    investments = api.run(client.investments(login_id))
    banking = api.run(client.authorize_cached(login_id))
    detail = api.run(banking.accounts_detail(with_transactions=True, days="Days365"))
    summary = api.run(banking.accounts_summary())
    statements = api.run(banking.statements())
    return Fetched(sb, api, client, login_id, investments, detail, summary, statements)


class AttributeData(NamedTuple):
    """A logged-in ``greatday_nomfa`` for attribute tests, with its Days365 detail payload."""

    sandbox: bf.Sandbox
    client: bf.Client
    login_id: str
    raw: JsonObject


@functools.cache
def attribute_sandbox(seed: int, tier2: bool = True, banking_transactions: int | None = None) -> AttributeData:
    """(sandbox, client, login_id, Days365 detail raw) of ``greatday_nomfa`` for attribute tests; a
    Tier 2 customer unless ``tier2=False`` (the custom set of attributes needs that package)."""
    sb = bf.Sandbox(pending_polls=0, seed=seed, tier2=tier2, banking_transactions=banking_transactions)
    client = sb.client(poll_interval=0.01, poll_timeout=60)
    _, login_id = log_in(client)
    detail = client.authorize_cached(login_id).accounts_detail(with_transactions=True, days="Days365")
    return AttributeData(sb, client, login_id, detail.raw)


def item_count(raw: JsonObject, key: str) -> int:
    """How many ``key`` items (``"Transactions"``, ``"Positions"``) the accounts of ``raw`` hold."""
    return sum(len(a.get(key) or []) for a in raw["Accounts"])


def requests_since(sandbox: bf.Sandbox, mark: int) -> list[bf.RecordedRequest]:
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


#: The spellings of the attributes detail list (docs/protocol.md#attributes).
DETAIL_KEYS = ("AttributeDetails", "AttributesDetail", "AttributesDetails")


def detail_of(group: Mapping[str, Any]) -> Any:
    """The detail list of an attributes group, in whichever spelling it came."""
    return next((group[key] for key in DETAIL_KEYS if key in group), None)


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
    "account_id",
    "full_account_id",
    "account_number",
    "account_name",
    "type",
    "registered",
    "currency",
    "cash",
    "account_value",
    "currency_value",
]
POSITION_COLUMNS = [
    "account_id",
    "account_number",
    "account_name",
    "account_type",
    "position_id",
    "security_id",
    "symbol",
    "security_name",
    "category",
    "class",
    "quantity",
    "price",
    "book_value",
    "market_value",
    "gain_amount",
    "gain_currency_amount",
    "gain_percent",
    "currency",
]
INVESTMENT_TRANSACTION_COLUMNS = [
    "account_id",
    "account_number",
    "account_name",
    "account_type",
    "account_currency",
    "transaction_id",
    "date",
    "type",
    "description",
    "security_id",
    "symbol",
    "security_name",
    "quantity",
    "fee",
    "amount",
]
SECURITY_COLUMNS = [
    "security_id",
    "symbol",
    "name",
    "type",
    "price",
    "date",
    "currency",
    "cusip",
    "isin",
    "aliases",
]
#: The bank account table's columns of the account's holder, the person: a cassette disguises them.
HOLDER_COLUMNS = (
    "holder_name",
    "holder_email",
    "holder_phone_number",
    "holder_city",
    "holder_province",
    "holder_postal_code",
)
BANK_ACCOUNT_COLUMNS = [
    "account_id",
    "title",
    "account_number",
    "last_four_digits",
    "transit_number",
    "institution_number",
    "category",
    "type",
    "account_type",
    "currency",
    "balance_available",
    "balance_current",
    "balance_limit",
    "overdraft_limit",
    "eft_eligible_ratio",
    "e_transfer_eligible_ratio",
    *HOLDER_COLUMNS,
]
BANK_TRANSACTION_COLUMNS = [
    "account_id",
    "account_number",
    "account_title",
    "account_category",
    "account_type",
    "currency",
    "transaction_id",
    "date",
    "code",
    "description",
    "debit",
    "credit",
    "balance",
]
STATEMENT_COLUMNS = ["account_number", "unique_id", "file_type"]
ATTRIBUTE_VALUE_COLUMNS = ["group", "group_id", "login_id", "attribute", "value", "raw_value"]
ATTRIBUTE_DETAIL_COLUMNS = [
    "group",
    "attribute",
    "transaction_id",
    "account_id",
    "date",
    "description",
    "debit",
    "credit",
]

#: The columns a cassette of a server other than the public test instance (the sandbox is one)
#: disguises value by value, keeping each value's shape: the personal data of the answers, the
#: account titles among it (docs/cassettes.md#redaction). A replay of such a cassette gives other
#: values there than the recording, and the same values everywhere else.
CASSETTE_DISGUISED_COLUMNS = frozenset({"description", "title", "account_title", *HOLDER_COLUMNS})


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


def assert_records_equal(got: Sequence[Mapping[str, object]], want: Sequence[Mapping[str, object]], what: str) -> None:
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
# The attribute catalogue, as the sandbox lists it. What each value should be is computed once, by
# the Rust suite (crates/bankfeed-sandbox/tests/it/sandbox_data/attributes.rs, ``expected``); a Python
# test checks that a table shows what the service sent (``.raw``).

#: Every attribute the sandbox computes, in the catalogue's order.
CATALOGUE: Final = [item["name"] for item in bf.Sandbox.attribute_catalogue()]
#: The ``package=`` of the use-case calls, and the operation each is sent as.
PACKAGE_OPERATIONS: Final = {
    "income": "GetIncomeAttributes",
    "credit_risk": "GetCreditRiskAttributes",
    "user_analysis": "GetUserAnalysisAttributes",
    "lending": "GetLendingAttributes",
}
#: The attribute names each use-case package answers, from the sandbox's packages.
PACKAGES: Final = {
    package: list(bf.Sandbox.attribute_packages()[operation]) for package, operation in PACKAGE_OPERATIONS.items()
}
NONE: Final = "NONE_DETECTED"


def included_transactions(
    detail_raw: JsonObject, categories: Sequence[str] | None = None, account_ids: Sequence[str] | None = None
) -> tuple[list[JsonObject], dict[str, tuple[str, JsonObject]]]:
    """The accounts of a GetAccountsDetail payload that a request with these filters includes
    (docs/sandbox.md#attributes), and their transactions by id, each with its account's id."""
    accounts = [
        a
        for a in items(field(detail_raw, "Accounts"))
        if (categories is None or field(a, "Category") in categories)
        and (account_ids is None or field(a, "Id") in account_ids)
    ]
    transactions = {field(t, "Id"): (field(a, "Id"), t) for a in accounts for t in items(field(a, "Transactions"))}
    return accounts, transactions
