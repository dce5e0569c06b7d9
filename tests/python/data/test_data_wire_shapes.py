"""Payloads shaped like the real service's published examples (docs/protocol.md#investments,
docs/protocol.md#attributes, docs/protocol.md#account-detail-summary-and-statements), read with
from_json and served by a tiny stdlib HTTP server: Institution as an object, Login.Type null, CUSIP
absent, ISIN null, LastRefresh without Z, the AttributeDetails spelling, NONE_DETECTED, numbers as
strings, null lists, unknown fields. The stub is read by ``bf.Client`` and ``bf.AsyncClient`` alike
(the ``api`` fixture)."""

from __future__ import annotations

import datetime as dt
import http.server
import json
import math
import threading
from collections.abc import Iterator
from string import Template
from typing import Any

import pytest

import bankfeed as bf
import datahelpers as dh
from bfhelpers import Api, Blocking

CUSTOMER = "43387ca6-0391-4c82-857d-70d95f087ecb"
LOGIN = "5e0c4f28-8a5c-4e5a-9d40-7c0b8f3f6a11"
REQUEST = "b2a4d1c0-3f5e-4a6b-9c7d-1e2f3a4b5c6d"
ACCOUNT_1 = "1f6b3c2a-9d8e-4f7a-b6c5-d4e3f2a1b0c9"
ACCOUNT_2 = "2a7c4d3b-0e9f-4a8b-c7d6-e5f4a3b2c1d0"
SEC_1 = "3b8d5e4c-1f0a-4b9c-d8e7-f6a5b4c3d2e1"
SEC_2 = "4c9e6f5d-2a1b-4cad-e9f8-a7b6c5d4e3f2"

INVESTMENTS = Template("""{
  "Accounts": [
    {
      "Id": "$a1",
      "FullAccountId": "NonRegistered:53XWK1-cash-CAD",
      "AccountId": "53XWK1",
      "Name": "Cash (CAD)",
      "Type": "cash",
      "Registered": false,
      "Currency": "CAD",
      "Cash": 1000.5,
      "AccountValue": "5735.45",
      "CurrencyValue": 5735.45,
      "SomethingNew": {"Ignored": true},
      "Positions": [
        {
          "Id": "9a0b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d",
          "Category": "Stocks",
          "Class": "equity",
          "BookValue": 5144.5,
          "Quantity": "35",
          "MarketValue": 4734.95,
          "GainAmount": -409.55,
          "GainCurrencyAmount": -409.55,
          "GainPercent": -0.08,
          "Currency": "CAD",
          "SecurityId": "$s1"
        }
      ],
      "Transactions": [
        {
          "Id": "aa0b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d",
          "Date": "2021-12-07",
          "Type": "buy",
          "Description": "BUY 35 BNS",
          "Quantity": 35,
          "Fee": "9.95",
          "Amount": -5144.5,
          "SecurityId": "$s1"
        },
        {
          "Id": "bb0b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d",
          "Date": "2022-01-05",
          "Type": "sell",
          "Description": "SELL 10 SHOP",
          "Quantity": -10,
          "Fee": 9.95,
          "Amount": "15210.05",
          "SecurityId": "$s2"
        }
      ]
    },
    {
      "Id": "$a2",
      "FullAccountId": "Registered:53XWK2-tfsa-USD",
      "AccountId": "53XWK2",
      "Name": "TFSA (USD)",
      "Type": "tfsa",
      "Registered": true,
      "Currency": "USD",
      "Cash": 0,
      "AccountValue": 0,
      "CurrencyValue": 0,
      "Positions": null,
      "Transactions": null
    }
  ],
  "Securities": [
    {
      "Id": "$s1",
      "Name": "Bank of Nova Scotia",
      "Symbol": "BNS",
      "Type": "equity",
      "Price": 135.284,
      "Date": "2022-01-05T21:00:00.0000000Z",
      "Aliases": ["BNS.TO", "BNS"],
      "Currency": "CAD",
      "ISIN": null
    },
    {
      "Id": "$s2",
      "Name": "Shopify Inc",
      "Symbol": "SHOP",
      "Type": "equity",
      "Price": "1521.0",
      "Date": "2022-01-05T21:00:00.1234567Z",
      "Aliases": [],
      "Currency": "CAD",
      "CUSIP": "82509L107"
    }
  ],
  "Value": 5735.45,
  "Cash": 1000.5,
  "HttpStatusCode": 200,
  "Login": {
    "Username": "Greatday",
    "IsScheduledRefresh": false,
    "LastRefresh": "2022-01-06T13:51:42.1234567",
    "Type": null,
    "Id": "$login"
  },
  "Institution": {"Id": 14, "Name": "FlinksCapital"},
  "RequestId": "$request"
}""").substitute(a1=ACCOUNT_1, a2=ACCOUNT_2, s1=SEC_1, s2=SEC_2, login=LOGIN, request=REQUEST)

ATTRIBUTES = Template("""{
  "Card": {
    "Id": "c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f",
    "account_age_days": 365,
    "balance_current": "1234.56",
    "balance_min": -56.25,
    "count_nsf": 2,
    "sum_employer_income": "NONE_DETECTED",
    "AttributeDetails": [
      {
        "Attribute": "count_nsf",
        "Transactions": [
          {"TransactionId": "d1e2f3a4-b5c6-4d7e-8f9a-0b1c2d3e4f5a", "AccountId": "$a1",
           "Date": "2021/12/24", "Description": "NSF FEE", "Debit": 48.0, "Credit": null},
          {"TransactionId": "e2f3a4b5-c6d7-4e8f-9a0b-1c2d3e4f5a6b", "AccountId": "$a1",
           "Date": "2022/01/03", "Description": "NSF RETURNED ITEM", "Debit": "12.5", "Credit": null}
        ]
      }
    ]
  },
  "Other": {
    "Id": "f3a4b5c6-d7e8-4f9a-0b1c-2d3e4f5a6b7c",
    "avg_monthly_deposit": 4512.33,
    "AttributesDetails": [
      {"Attribute": "avg_monthly_deposit", "Transactions": [
        {"TransactionId": "a4b5c6d7-e8f9-4a0b-1c2d-3e4f5a6b7c8d", "AccountId": "$a2",
         "Date": "2022/01/01", "Description": "PAYROLL DEPOSIT ACME", "Debit": null, "Credit": 2500}]}
    ]
  },
  "Login": {
    "Username": "Greatday",
    "IsScheduledRefresh": false,
    "LastRefresh": "2022-01-06T13:51:42.123456",
    "Type": "Personal",
    "Id": "$login"
  },
  "RequestId": "$request",
  "HttpStatusCode": 200
}""").substitute(a1=ACCOUNT_1, a2=ACCOUNT_2, login=LOGIN, request=REQUEST)

ACCOUNTS = Template("""{
  "HttpStatusCode": 200,
  "Accounts": [
    {
      "Transactions": [
        {"Date": "2022-01-05", "Code": null, "Description": "PAYROLL DEPOSIT ACME", "Debit": null,
         "Credit": 2500.0, "Balance": "3120.45", "Id": "11111111-2222-4333-8444-555555555555"},
        {"Date": "2022/01/03", "Code": "NSF", "Description": "NSF FEE", "Debit": "48", "Credit": null,
         "Balance": -12.5, "Id": "21111111-2222-4333-8444-555555555555"}
      ],
      "TransitNumber": "77777",
      "InstitutionNumber": "777",
      "OverdraftLimit": 0,
      "Title": "Chequing CAD",
      "AccountNumber": "1111000",
      "LastFourDigits": "1000",
      "Balance": {"Available": null, "Current": 3120.45, "Limit": null},
      "Category": "Operations",
      "Type": "Chequing",
      "Currency": "CAD",
      "Holder": {"Name": "John Doe", "Address": {"CivicAddress": "1275 avenue des Canadiens-de-Montr\\u00e9al",
                 "City": "Montr\\u00e9al", "Province": "QC", "PostalCode": "H3B 0G4", "POBox": null,
                 "Country": "CA"}, "Email": "john@example.com", "PhoneNumber": "(514) 555-0000"},
      "AccountType": "Personal",
      "Id": "$a1"
    },
    {"Id": "$a2", "Title": "Card", "Category": "Credits", "Type": "CreditCard", "Currency": "CAD",
     "Balance": {"Available": 4500, "Current": -500, "Limit": "5000"}, "Transactions": null, "Holder": null}
  ],
  "InstitutionName": "FlinksCapital",
  "InstitutionId": 14,
  "Institution": "FlinksCapital",
  "Login": {"Username": "Greatday", "IsScheduledRefresh": false, "LastRefresh": "2022-01-06T13:51:42.1234567Z",
            "Type": "Personal", "Id": "$login"},
  "RequestId": "$request"
}""").substitute(a1=ACCOUNT_1, a2=ACCOUNT_2, login=LOGIN, request=REQUEST)


def check_investments(inv: bf.Investments) -> None:
    """``inv`` is the INVESTMENTS payload, read field by field and through the generic re-flattening."""
    raw = json.loads(INVESTMENTS)
    assert inv.raw == raw
    assert (inv.value, inv.cash, inv.request_id) == (5735.45, 1000.5, REQUEST)
    accounts = inv.accounts.to_records()
    assert [a["account_id"] for a in accounts] == [ACCOUNT_1, ACCOUNT_2]
    assert accounts[0]["account_value"] == 5735.45 and accounts[0]["registered"] is False
    assert accounts[1]["registered"] is True and accounts[1]["cash"] == 0.0
    positions = inv.positions.to_records()
    assert len(positions) == 1
    assert positions[0]["quantity"] == 35.0 and positions[0]["gain_percent"] == -0.08
    assert (positions[0]["symbol"], positions[0]["security_name"], positions[0]["price"]) == (
        "BNS",
        "Bank of Nova Scotia",
        135.284,
    )
    transactions = inv.transactions.to_records()
    assert [t["date"] for t in transactions] == [dt.date(2021, 12, 7), dt.date(2022, 1, 5)]
    assert [t["fee"] for t in transactions] == [9.95, 9.95]
    assert [t["amount"] for t in transactions] == [-5144.5, 15210.05]
    assert [t["symbol"] for t in transactions] == ["BNS", "SHOP"]
    assert {t["account_currency"] for t in transactions} == {"CAD"}
    securities = inv.securities.to_records()
    assert securities[0]["cusip"] is None and securities[0]["isin"] is None
    assert securities[1]["cusip"] == "82509L107" and securities[1]["isin"] is None
    assert securities[1]["price"] == 1521.0
    assert securities[0]["date"] == dt.datetime(2022, 1, 5, 21, 0, tzinfo=dt.timezone.utc)
    assert securities[1]["date"] == dt.datetime(2022, 1, 5, 21, 0, 0, 123456, tzinfo=dt.timezone.utc)
    assert securities[0]["aliases"] == ["BNS.TO", "BNS"] and securities[1]["aliases"] == []
    # And the generic re-flattening agrees with it.
    dh.assert_rows_equal(inv.positions, dh.expected_positions(raw), dh.POSITION_COLUMNS, "positions")
    dh.assert_rows_equal(
        inv.transactions, dh.expected_investment_transactions(raw), dh.INVESTMENT_TRANSACTION_COLUMNS, "transactions"
    )
    dh.assert_rows_equal(inv.securities, dh.expected_securities(raw), dh.SECURITY_COLUMNS, "securities")
    dh.assert_rows_equal(inv.accounts, dh.expected_investment_accounts(raw), dh.INVESTMENT_ACCOUNT_COLUMNS, "accounts")
    dh.assert_exports_agree(inv.securities, float_columns=["price"], date_columns=["date"])
    dh.assert_exports_agree(inv.transactions, float_columns=["fee", "amount"], date_columns=["date"])


@pytest.mark.parametrize("kind", [str, bytes, bytearray])
def test_investments_from_json_published_shape(kind: type[str | bytes | bytearray]) -> None:
    data = INVESTMENTS if kind is str else kind(INVESTMENTS.encode())
    check_investments(bf.Investments.from_json(data))


@pytest.mark.parametrize("result", [bf.Investments, bf.Accounts, bf.Attributes])
def test_from_json_of_something_else_is_a_type_error_naming_what_it_takes(
    result: type[bf.Investments | bf.Accounts | bf.Attributes],
) -> None:
    with pytest.raises(TypeError) as info:
        # A dict where JSON text is due, on purpose: the TypeError it raises is what is tested.
        result.from_json({"Accounts": []})  # type: ignore[arg-type]
    assert "bytes" in str(info.value) and "str" in str(info.value) and "dict" in str(info.value)


@pytest.mark.parametrize("result", [bf.Investments, bf.Accounts, bf.Attributes])
def test_from_json_of_broken_json_is_a_decode_error_keeping_a_snippet(
    result: type[bf.Investments | bf.Accounts | bf.Attributes],
) -> None:
    with pytest.raises(bf.DecodeError) as info:
        result.from_json(b'{"Accounts": [{"Id": "a1", ')
    assert '"Id": "a1"' in info.value.snippet


def test_attributes_from_json_published_shape() -> None:
    attrs = bf.Attributes.from_json(ATTRIBUTES)
    assert attrs.raw == json.loads(ATTRIBUTES)
    assert attrs.request_id == REQUEST
    assert sorted(attrs.groups) == ["Card", "Other"]
    rows = {(r["group"], r["attribute"]): r for r in attrs.values.to_records()}
    assert sorted(rows) == sorted(
        [
            ("Card", "account_age_days"),
            ("Card", "balance_current"),
            ("Card", "balance_min"),
            ("Card", "count_nsf"),
            ("Card", "sum_employer_income"),
            ("Other", "avg_monthly_deposit"),
        ]
    ), "Id and the detail list are not attributes"
    assert rows[("Card", "balance_current")]["value"] == 1234.56
    assert rows[("Card", "balance_current")]["raw_value"] == "1234.56"
    assert rows[("Card", "count_nsf")]["value"] == 2.0 and rows[("Card", "count_nsf")]["raw_value"] == "2"
    assert rows[("Card", "balance_min")]["value"] == -56.25
    none = rows[("Card", "sum_employer_income")]
    assert none["value"] is None and none["raw_value"] == "NONE_DETECTED"
    assert attrs["sum_employer_income"] == "NONE_DETECTED"
    assert all(r["login_id"] == LOGIN for r in rows.values())
    assert rows[("Card", "count_nsf")]["group_id"] == "c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f"
    detail = attrs.detail.to_records()
    assert [(d["group"], d["attribute"]) for d in detail] == [
        ("Card", "count_nsf"),
        ("Card", "count_nsf"),
        ("Other", "avg_monthly_deposit"),
    ], "all spellings of the detail list"
    assert [d["date"] for d in detail] == [dt.date(2021, 12, 24), dt.date(2022, 1, 3), dt.date(2022, 1, 1)]
    assert [d["debit"] for d in detail] == [48.0, 12.5, None]
    assert [d["credit"] for d in detail] == [None, None, 2500.0]
    assert detail[0]["account_id"] == ACCOUNT_1 and detail[2]["account_id"] == ACCOUNT_2
    dh.assert_exports_agree(attrs.values, float_columns=["value"])
    dh.assert_exports_agree(attrs.detail, float_columns=["debit", "credit"], date_columns=["date"])


def test_accounts_from_json_published_shape() -> None:
    accounts = bf.Accounts.from_json(ACCOUNTS)
    raw = json.loads(ACCOUNTS)
    assert accounts.raw == raw and accounts.request_id == REQUEST
    dh.assert_rows_equal(accounts.accounts, dh.expected_bank_accounts(raw), dh.BANK_ACCOUNT_COLUMNS, "accounts")
    dh.assert_rows_equal(
        accounts.transactions, dh.expected_bank_transactions(raw), dh.BANK_TRANSACTION_COLUMNS, "transactions"
    )
    rows = accounts.accounts.to_records()
    assert rows[0]["holder_city"] == "Montréal" and rows[0]["balance_available"] is None
    assert rows[1]["balance_limit"] == 5000.0 and rows[1]["holder_name"] is None
    tx = accounts.transactions.to_records()
    assert [t["date"] for t in tx] == [dt.date(2022, 1, 5), dt.date(2022, 1, 3)]
    assert [t["debit"] for t in tx] == [None, 48.0] and [t["balance"] for t in tx] == [3120.45, -12.5]
    assert tx[0]["code"] is None


# --- a stub server answering with the literal payloads --------------------------------------


PREFIX = f"/v3/{CUSTOMER}"
AUTHORIZED = json.dumps(
    {
        "Links": [{"rel": "InvestmentsDetail", "href": "/Investments", "example": None}],
        "HttpStatusCode": 200,
        "Login": {
            "Username": "Greatday",
            "IsScheduledRefresh": False,
            "LastRefresh": "2022-01-06T13:51:42.1234567",
            "Type": None,
            "Id": LOGIN,
        },
        "Institution": {"Id": 14, "Name": "FlinksCapital"},
        "RequestId": REQUEST,
    }
)
#: (method, path) -> the payload the stub answers with, after one 202.
ROUTES = {
    ("POST", f"{PREFIX}/BankingServices/Authorize"): AUTHORIZED,
    ("POST", f"{PREFIX}/Investments"): INVESTMENTS,
    ("POST", f"{PREFIX}/BankingServices/GetAccountsDetail"): ACCOUNTS,
    ("GET", f"{PREFIX}/BankingServices/GetAccountsDetailAsync/{REQUEST}"): ACCOUNTS,
    ("POST", f"{PREFIX}/insight/login/{LOGIN}/attributes/{REQUEST}"): ATTRIBUTES,
    ("GET", f"{PREFIX}/insight/login/{LOGIN}/attributes/{REQUEST}/GetIncomeAttributes"): ATTRIBUTES,
}


class _StubServer(http.server.ThreadingHTTPServer):
    """The stub on a free local port: what it was asked, and what it has still to answer."""

    def __init__(self, pending_code: str) -> None:
        super().__init__(("127.0.0.1", 0), _Stub)
        #: Where a 202 puts its pending code: ``FlinksCode`` or ``ServiceCode``.
        self.pending_code = pending_code
        #: (method, path, JSON body or None) of every request.
        self.log: list[tuple[str, str, Any]] = []
        #: path -> 202s still to answer.
        self.pending_left: dict[str, int] = {}


class _Stub(http.server.BaseHTTPRequestHandler):
    """Answers every path of a data operation with 202 once (its pending code under ``FlinksCode``
    or ``ServiceCode``, no Async link: the client repeats Investments and the attributes, and
    polls account detail on its own ``GetAccountsDetailAsync``), then the literal payload."""

    @property
    def stub(self) -> _StubServer:
        assert isinstance(self.server, _StubServer)
        return self.server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _send(self, status: int, body: str) -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _answer(self, method: str, body: Any) -> None:
        self.stub.log.append((method, self.path, body))
        payload = ROUTES.get((method, self.path))
        if payload is None:
            self._send(404, json.dumps({"HttpStatusCode": 404, "Message": "no", "FlinksCode": "INVALID_REQUEST"}))
        elif self.path.endswith("/Authorize") or self.stub.pending_left.setdefault(self.path, 1) == 0:
            self._send(200, payload)
        else:
            self.stub.pending_left[self.path] -= 1
            self._send(
                202,
                json.dumps(
                    {
                        self.stub.pending_code: "OPERATION_PENDING",
                        "Links": [],
                        "HttpStatusCode": 202,
                        "Message": "Your operation is still processing",
                        "RequestId": REQUEST,
                    }
                ),
            )

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self._answer("POST", json.loads(self.rfile.read(length) or b"null"))

    def do_GET(self) -> None:
        self._answer("GET", None)


@pytest.fixture(params=["FlinksCode", "ServiceCode"])
def stub(request: pytest.FixtureRequest) -> Iterator[_StubServer]:
    """The stub, serving on a thread, with the pending code of the parameter."""
    server = _StubServer(pending_code=request.param)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join(5)


def stub_client(api: Api, stub: _StubServer) -> Any:
    """A fast-polling client of the stub, of the case's kind, its calls giving their values."""
    port = stub.server_address[1]
    return Blocking(api, api.client_at(f"http://127.0.0.1:{port}", CUSTOMER, poll_interval=0.01, poll_timeout=10))


def test_client_against_a_stub_server_with_published_payloads(api: Api, stub: _StubServer) -> None:
    inv = stub_client(api, stub).investments(LOGIN)
    check_investments(inv)
    methods_paths = [(m, p) for m, p, _ in stub.log]
    assert methods_paths == [
        ("POST", f"{PREFIX}/BankingServices/Authorize"),
        ("POST", f"{PREFIX}/Investments"),
        ("POST", f"{PREFIX}/Investments"),
    ], "cached authorize, then Investments repeated after the 202"
    authorize_body = stub.log[0][2]
    assert authorize_body["LoginId"] == LOGIN and authorize_body["MostRecentCached"] is True
    first, second = stub.log[1][2], stub.log[2][2]
    assert first == second, "the same request is repeated"
    assert first["LoginId"] == LOGIN and first["RequestId"] == REQUEST and first["MostRecentCached"] is True


def test_accounts_detail_against_a_stub_server(api: Api, stub: _StubServer) -> None:
    session = stub_client(api, stub).authorize_cached(LOGIN)
    detail = session.accounts_detail(with_transactions=True, days="Days365")
    raw = json.loads(ACCOUNTS)
    assert detail.raw == raw
    dh.assert_rows_equal(
        detail.transactions, dh.expected_bank_transactions(raw), dh.BANK_TRANSACTION_COLUMNS, "transactions"
    )
    polled = [(m, p) for m, p, _ in stub.log[1:]]
    # A 202 without a link: the operation's own Async endpoint, GET with the RequestId.
    assert polled == [
        ("POST", f"{PREFIX}/BankingServices/GetAccountsDetail"),
        ("GET", f"{PREFIX}/BankingServices/GetAccountsDetailAsync/{REQUEST}"),
        ("GET", f"{PREFIX}/BankingServices/GetAccountsDetailAsync/{REQUEST}"),
    ]
    assert stub.log[1][2]["RequestId"] == REQUEST and stub.log[2][2] is None


@pytest.mark.parametrize("package", [None, "income"])
def test_attributes_against_a_stub_server_run_the_preparation_sequence(
    api: Api, stub: _StubServer, package: str | None
) -> None:
    client = stub_client(api, stub)
    if package:
        attrs = client.attributes(LOGIN, package=package)
        last = ("GET", f"{PREFIX}/insight/login/{LOGIN}/attributes/{REQUEST}/GetIncomeAttributes")
    else:
        attrs = client.attributes(LOGIN, {"Card": ["count_nsf", "sum_employer_income"]}, detail=["count_nsf"])
        last = ("POST", f"{PREFIX}/insight/login/{LOGIN}/attributes/{REQUEST}")
    assert [(m, p) for m, p, _ in stub.log] == [
        ("POST", f"{PREFIX}/BankingServices/Authorize"),
        ("POST", f"{PREFIX}/BankingServices/GetAccountsDetail"),
        ("GET", f"{PREFIX}/BankingServices/GetAccountsDetailAsync/{REQUEST}"),
        ("GET", f"{PREFIX}/BankingServices/GetAccountsDetailAsync/{REQUEST}"),
        last,
        last,
    ], "cached authorize, account detail until 200, then the attributes call until 200"
    assert attrs.raw == json.loads(ATTRIBUTES)
    by_attribute = attrs.values.to_pandas().set_index("attribute")
    assert attrs["count_nsf"] == 2 and math.isnan(by_attribute.loc["sum_employer_income", "value"])
    if not package:
        body = stub.log[-1][2]
        assert body["MostRecentCached"] is True
        assert body["Attributes"] == {"Card": ["count_nsf", "sum_employer_income"]}
        assert body["Options"]["AttributesDetail"] == ["count_nsf"]
