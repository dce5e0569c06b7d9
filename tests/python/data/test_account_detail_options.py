"""The account-detail options a user notices (docs/protocol.md#account-detail-options): the
holder comes unless ``with_kyc=False``, the account numbers only with ``with_account_identity=True``
(as on the real service, so code that reads numbers it never asked for fails here too), and the
date options narrow the transactions or are refused by name, for ``bf.Client`` and
``bf.AsyncClient`` alike, on their single and bulk calls."""

from __future__ import annotations

import datetime as dt
import inspect
from typing import Any

import pytest

import bankfeed as bf
import datahelpers as dh
from bfhelpers import Api

NUMBERS = ("account_number", "transit_number", "institution_number")


def _session(api: Api) -> tuple[dh.Fetched, Any]:
    fetched = dh.fetched(None, None, flavour=api.name)
    return fetched, fetched.api.run(fetched.client.authorize_cached(fetched.login_id))


def test_holder_by_default_and_numbers_only_when_asked(api: Api) -> None:
    fetched, session = _session(api)
    plain = fetched.api.run(session.accounts_detail())
    for account in plain.raw["Accounts"]:
        assert account["Holder"]["Name"], "WithKYC is true by default"
        assert (account["AccountNumber"], account["TransitNumber"], account["InstitutionNumber"]) == (None,) * 3
    for row in plain.accounts.to_records():
        assert [row[column] for column in NUMBERS] == [None] * 3
    asked = fetched.api.run(session.accounts_detail(with_account_identity=True, with_kyc=False))
    for account in asked.raw["Accounts"]:
        assert account["Holder"] is None
        assert account["AccountNumber"].endswith(account["LastFourDigits"])
    for row in asked.accounts.to_records():
        assert all(row[column] for column in NUMBERS)


def test_date_options_narrow_the_transactions(api: Api) -> None:
    fetched, session = _session(api)
    year = fetched.detail.transactions.to_records()
    first, last = dt.date(2026, 1, 1), dt.date(2026, 1, 31)
    january = fetched.api.run(session.accounts_detail(date_from=first, date_to="2026-01-31"))
    got = january.transactions.column("transaction_id")
    assert got, "January has transactions"
    assert got == [t["transaction_id"] for t in year if first <= t["date"] <= last]
    # A datetime counts as its day.
    again = fetched.api.run(session.accounts_detail(date_from=dt.datetime(2026, 1, 1, 23, 0), date_to=last))
    assert again.transactions.column("transaction_id") == got


def test_refresh_delta_gives_the_transactions_after_the_last_held(api: Api) -> None:
    fetched, session = _session(api)
    raw = fetched.detail.raw
    account = raw["Accounts"][0]
    listed = account["Transactions"]
    delta = {account["Id"]: listed[2]["Id"]}
    newer = fetched.api.run(session.accounts_detail(days="Days365", refresh_delta=delta))
    by_account = [a for a in newer.raw["Accounts"] if a["Id"] == account["Id"]]
    assert [t["Id"] for t in by_account[0]["Transactions"]] == [t["Id"] for t in listed[:2]]


def test_an_unknown_account_in_the_filter_is_refused_by_the_service(api: Api) -> None:
    fetched, session = _session(api)
    unknown = "00000000-0000-0000-0000-000000000000"
    with pytest.raises(bf.ApiError) as info:
        fetched.api.run(session.accounts_detail(accounts_filter=[unknown]))
    assert info.value.code == "INVALID_REQUEST"
    assert "AccountsFilter" in str(info.value) and unknown in str(info.value)


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"date_from": "01/01/2026"}, "date_from"),
        ({"date_to": "2026-02-30"}, "date_to"),
        ({"date_from": "2026-02-01", "date_to": dt.date(2026, 1, 1)}, "date_from"),
        ({"refresh_delta": {"a": ""}}, "refresh_delta"),
    ],
)
def test_bad_date_options_are_config_errors_and_nothing_is_sent(api: Api, options: dict[str, Any], field: str) -> None:
    fetched, session = _session(api)
    mark = len(fetched.sandbox.requests)
    with pytest.raises(bf.ConfigError) as info:
        fetched.api.run(session.accounts_detail(**options))
    assert info.value.field == field
    assert len(fetched.sandbox.requests) == mark, "nothing is sent for a bad option"


@pytest.mark.parametrize(
    ("options", "name"), [({"date_from": 20260101}, "date_from"), ({"refresh_delta": ["x"]}, "refresh_delta")]
)
def test_date_options_of_the_wrong_type_are_type_errors_naming_them(
    api: Api, options: dict[str, Any], name: str
) -> None:
    _, session = _session(api)
    with pytest.raises(TypeError, match=name):
        session.accounts_detail(**options)


def test_bulk_calls_take_the_flags_and_dates(api: Api) -> None:
    fetched = dh.fetched(None, None, flavour=api.name)
    results = fetched.client.accounts_detail_many(
        [fetched.login_id], with_account_identity=True, with_kyc=False, date_from="2026-01-01", date_to="2026-01-31"
    )
    combined = fetched.api.run(bf.acombine(results)) if api.name == "async" else bf.combine(results)
    accounts = combined.accounts
    assert all(row["account_number"] for row in accounts.to_records())
    assert all(dt.date(2026, 1, 1) <= d <= dt.date(2026, 1, 31) for d in combined.transactions.column("date"))


@pytest.mark.parametrize(
    "method",
    [
        bf.Session.accounts_detail,
        bf.AsyncSession.accounts_detail,
        bf.Client.accounts_detail_many,
        bf.AsyncClient.accounts_detail_many,
    ],
    ids=lambda m: m.__qualname__,
)
def test_every_account_detail_call_takes_the_flags_and_says_their_defaults(method: object) -> None:
    parameters = inspect.signature(method).parameters  # type: ignore[arg-type]
    for name in ("with_kyc", "with_account_identity", "date_from", "date_to", "refresh_delta", "days"):
        assert name in parameters, name
    doc = inspect.getdoc(bf.Session.accounts_detail) or ""
    assert "with_kyc" in doc and "default True" in doc
    assert "with_account_identity" in doc and "default False" in doc
