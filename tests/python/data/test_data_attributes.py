"""Attributes: the tables show what the service sent (``.raw``), for every attribute of the
sandbox's catalogue and every package, for custom requests with filters / account filters /
detail, the NONE_DETECTED handling, the 202 path and every new error.

What each value should be is not recomputed here:
crates/bankfeed-sandbox/tests/it/sandbox_data/attributes.rs checks the sandbox's answers against the
definitions of docs/sandbox.md#attributes, filters and detail included. These tests check what the
Python side adds: the names asked for and no others, each value of ``.raw`` in the values table,
``to_dict()`` and ``attrs[name]``, NONE_DETECTED as a null, and the detail table as the raw
AttributesDetail flattened, each row a transaction of an included account. Every case runs for
``bf.Client`` and ``bf.AsyncClient`` alike (the ``api`` fixture)."""

from __future__ import annotations

import json
from typing import Any

import pytest

import bankfeed as bf
import datahelpers as dh
from bfhelpers import Api, Blocking

#: (seed, banking_transactions): seed 0 has no government income and no loans; seed 2 has both,
#: and a Products (loan) account; 0 and 1 transactions make the NONE_DETECTED cases.
DATASETS: list[tuple[int, int | None]] = [(0, None), (2, None), (3, None), (0, 0), (0, 1)]

#: The attributes that have nothing to be computed from without transactions (docs/sandbox.md#attributes).
NONE_WITHOUT_TRANSACTIONS = [
    "account_age_days",
    "balance_max",
    "balance_min",
    "avg_employer_income",
    "days_since_last_employer_income",
    "sum_government_income",
]
#: The attributes whose value counts the transactions their AttributesDetail lists.
COUNTS_OF_THEIR_DETAIL = [
    "count_transactions",
    "count_negative_balance",
    "count_nsf",
    "count_nsf_90_days",
    "count_employer_income",
    "count_loan_payments",
]


def on(api: Api, seed: int, **options: Any) -> tuple[bf.Sandbox, Any, str, dh.JsonObject]:
    """(sandbox, client, login_id, Days365 detail raw) of ``dh.attribute_sandbox``, the client of
    the case's kind, its calls giving their values (bfhelpers.Blocking)."""
    sb, _, login_id, raw = dh.attribute_sandbox(seed, **options)
    return sb, Blocking(api, api.client(sb, poll_timeout=60)), login_id, raw


def ids(value: tuple[int, int | None]) -> str:
    """The test id of a dataset."""
    return f"seed{value[0]}-n{value[1]}"


def values_by_name(attrs: bf.Attributes, group: str) -> dict[str, dict[str, Any]]:
    """The rows of ``attrs.values`` of one group, by attribute name."""
    rows = [r for r in attrs.values.to_records() if r["group"] == group]
    names = [r["attribute"] for r in rows]
    assert len(names) == len(set(names)), f"duplicate attributes in {group}: {names}"
    return {r["attribute"]: r for r in rows}


def check_values(attrs: bf.Attributes, group: str, names: list[str], login_id: str, where: str) -> None:
    """The attributes ``names`` of ``group``, and no others, as the service sent them in ``.raw``:
    in the values table (a float, or a null for NONE_DETECTED, with the text sent kept in
    ``raw_value``), in ``to_dict()`` and through ``attrs[name]``."""
    sent = attrs.raw[group]
    assert isinstance(sent, dict), f"{where}: {group} is {sent!r}"
    assert set(sent) - {"Id", *dh.DETAIL_KEYS} == set(names), f"{where}: {sorted(sent)} != {sorted(names)}"
    rows = values_by_name(attrs, group)
    assert sorted(rows) == sorted(names), f"{where}: {sorted(rows)} != {sorted(names)}"
    assert sent["Id"] == login_id, f"{where}: the group's Id is the LoginId, got {sent['Id']!r}"
    as_dict = attrs.to_dict()[group]
    for name in names:
        row, value = rows[name], sent[name]
        assert row["login_id"] == login_id and row["group_id"] == sent["Id"], row
        assert as_dict[name] == value, f"{where}: to_dict {name} {as_dict[name]!r} != {value!r}"
        if value == dh.NONE:
            assert row["value"] is None and row["raw_value"] == dh.NONE, f"{where}: {name} {row}"
            continue
        assert isinstance(value, (int, float)) and not isinstance(value, bool), f"{where}: {name} sent {value!r}"
        assert isinstance(row["value"], float) and row["value"] == value, f"{where}: {name} {row} != {value!r}"
        assert isinstance(row["raw_value"], str) and float(row["raw_value"]) == value, f"{where}: {name} {row}"


def expect_catalogue(attrs: bf.Attributes, group: str, login_id: str, where: str) -> None:
    """Every attribute of the catalogue in ``group``, as sent."""
    check_values(attrs, group, dh.CATALOGUE, login_id, where)


def test_the_catalogue_and_the_packages_name_the_same_attributes() -> None:
    catalogue = bf.Sandbox.attribute_catalogue()
    assert dh.CATALOGUE and len(dh.CATALOGUE) == len(set(dh.CATALOGUE))
    assert all(item["description"] for item in catalogue)
    for package, names in dh.PACKAGES.items():
        assert names and set(names) <= set(dh.CATALOGUE), package
    assert set().union(*dh.PACKAGES.values()) == set(dh.CATALOGUE)


@pytest.mark.parametrize("dataset", DATASETS, ids=ids)
def test_every_catalogue_value_as_sent(api: Api, dataset: tuple[int, int | None]) -> None:
    seed, n = dataset
    _, client, login_id, raw = on(api, seed, banking_transactions=n)
    attrs = client.attributes(login_id, {"Card": dh.CATALOGUE})
    expect_catalogue(attrs, "Card", login_id, f"seed {seed} n {n}")
    assert attrs.groups == ["Card"]
    for name in dh.CATALOGUE:
        assert attrs[name] == attrs.raw["Card"][name], name
    with pytest.raises(KeyError):
        attrs["no_such_attribute"]
    assert attrs["count_accounts"] == len(raw["Accounts"])
    assert attrs["count_transactions"] == dh.item_count(raw, "Transactions")
    if n == 0:
        assert {name: attrs[name] for name in NONE_WITHOUT_TRANSACTIONS} == dict.fromkeys(
            NONE_WITHOUT_TRANSACTIONS, dh.NONE
        )
    else:
        assert all(attrs[name] != dh.NONE for name in ("account_age_days", "balance_max", "balance_min"))


def test_none_detected_is_null_with_raw_value_kept(api: Api) -> None:
    _, client, login_id, _ = on(api, 0)
    attrs = client.attributes(login_id, {"Card": ["sum_government_income", "count_nsf"]})
    rows = values_by_name(attrs, "Card")
    assert rows["sum_government_income"]["value"] is None
    assert rows["sum_government_income"]["raw_value"] == "NONE_DETECTED"
    assert attrs.raw["Card"]["sum_government_income"] == "NONE_DETECTED"
    assert rows["count_nsf"]["raw_value"] == str(attrs.raw["Card"]["count_nsf"])
    frame = attrs.values.to_pandas()
    assert frame["value"].dtype == "float64"
    assert frame["value"].isna().tolist() == [True, False]


def test_none_detected_is_a_null_of_arrow_and_polars_not_a_nan(api: Api) -> None:
    _, client, login_id, _ = on(api, 0)
    attrs = client.attributes(login_id, {"Card": ["sum_government_income", "count_nsf"]})
    count_nsf = float(attrs["count_nsf"])
    arrow = attrs.values.to_arrow().column("value")
    assert arrow.null_count == 1
    assert arrow.to_pylist() == [None, count_nsf]
    polars = attrs.values.to_polars()["value"]
    # A NaN would count as a value and make the mean NaN; a null is left out of both.
    assert polars.null_count() == 1 and polars.is_nan().sum() == 0
    assert polars.mean() == count_nsf


def test_large_data_values_as_sent(api: Api) -> None:
    _, client, login_id, raw = on(api, 0, banking_transactions=dh.LARGE_BANKING)
    assert dh.item_count(raw, "Transactions") == dh.LARGE_BANKING
    attrs = client.attributes(login_id, {"Card": dh.CATALOGUE})
    expect_catalogue(attrs, "Card", login_id, "large")
    assert attrs["count_transactions"] == dh.LARGE_BANKING


@pytest.mark.parametrize("package", list(dh.PACKAGES))
@pytest.mark.parametrize("seed", [0, 2])
def test_use_case_packages(api: Api, package: str, seed: int) -> None:
    _, client, login_id, _ = on(api, seed)
    attrs = client.attributes(login_id, package=package)
    assert attrs.groups == ["Card"]
    check_values(attrs, "Card", dh.PACKAGES[package], login_id, package)
    # In the order the package answers them.
    assert [r["attribute"] for r in attrs.values.to_records()] == dh.PACKAGES[package]
    # Through an open session too, with the same answer.
    session = client.authorize_cached(login_id)
    session.accounts_detail(with_transactions=True, days="Days365")
    again = session.attributes(package=package)
    assert again.to_dict() == attrs.to_dict()
    # And the same values as a custom request for the same names.
    custom = client.attributes(login_id, {"Card": dh.PACKAGES[package]})
    assert {name: custom[name] for name in dh.PACKAGES[package]} == {name: attrs[name] for name in dh.PACKAGES[package]}


def test_all_package_on_tier2(api: Api) -> None:
    _, client, login_id, _ = on(api, 2, tier2=True)
    attrs = client.attributes(login_id, package="all")
    expect_catalogue(attrs, "Card", login_id, "all")


def test_without_tier2_all_and_custom_sets_are_access_denied_and_packages_answer(api: Api) -> None:
    _, client, login_id, _ = on(api, 0, tier2=False)
    for args, kwargs in (((), {"package": "all"}), (({"Card": ["count_nsf"]},), {})):
        with pytest.raises(bf.Unauthorized) as info:
            client.attributes(login_id, *args, **kwargs)
        assert info.value.code == "ACCESS_DENIED"
        assert "Tier 2" in str(info.value)
    assert client.attributes(login_id, package="income").groups == ["Card"]


def test_custom_with_the_operations_category_filter(api: Api) -> None:
    _, client, login_id, raw = on(api, 2)
    categories = ["Operations"]
    attrs = client.attributes(login_id, {"Card": dh.CATALOGUE}, filters={"AccountCategory": categories})
    expect_catalogue(attrs, "Card", login_id, f"filters {categories}")
    # The filter reached the service: it counted only the accounts of that category.
    accounts, transactions = dh.included_transactions(raw, categories=categories)
    assert attrs["count_accounts"] == len(accounts) < len(raw["Accounts"])
    assert attrs["count_transactions"] == len(transactions)


@pytest.mark.parametrize("categories", [["Credits"], ["Operations", "Products"], ["Nothing"]], ids="+".join)
def test_a_category_other_than_operations_is_refused(api: Api, categories: list[str]) -> None:
    _, client, login_id, _ = on(api, 2)
    with pytest.raises(bf.InvalidRequest) as info:
        client.attributes(login_id, {"Card": ["count_nsf"]}, filters={"AccountCategory": categories})
    assert "One or more filters are invalid" in str(info.value)


def test_custom_with_account_filter_and_both_filters(api: Api) -> None:
    _, client, login_id, raw = on(api, 2)
    accounts = raw["Accounts"]
    assert len(accounts) >= 3
    chosen = [accounts[0]["Id"], accounts[-1]["Id"]]
    attrs = client.attributes(login_id, {"Card": dh.CATALOGUE}, account_filter=chosen)
    expect_catalogue(attrs, "Card", login_id, "account_filter")
    assert attrs["count_accounts"] == 2
    assert attrs["count_transactions"] == len(dh.included_transactions(raw, account_ids=chosen)[1])
    categories = ["Operations"]
    both = client.attributes(
        login_id, {"Card": dh.CATALOGUE}, filters={"AccountCategory": categories}, account_filter=chosen
    )
    expect_catalogue(both, "Card", login_id, "filters+account_filter")
    included, transactions = dh.included_transactions(raw, categories=categories, account_ids=chosen)
    assert both["count_accounts"] == len(included) and both["count_transactions"] == len(transactions)


def test_a_group_other_than_card_is_refused(api: Api) -> None:
    _, client, login_id, _ = on(api, 2)
    with pytest.raises(bf.InvalidRequest) as info:
        client.attributes(login_id, {"Income": dh.PACKAGES["income"]})
    assert "Card" in str(info.value) and "Income" in str(info.value)


def test_an_unknown_account_in_the_account_filter_is_refused(api: Api) -> None:
    _, client, login_id, _ = on(api, 2)
    unknown = "00000000-0000-0000-0000-000000000000"
    with pytest.raises(bf.InvalidRequest) as info:
        client.attributes(login_id, {"Card": ["count_nsf"]}, account_filter=[unknown])
    assert unknown in str(info.value) and "AccountFilter" in str(info.value)


@pytest.mark.parametrize(
    ("filters", "account_index"),
    [(None, None), ({"AccountCategory": ["Operations"]}, None), (None, 0)],
    ids=["all", "operations", "one-account"],
)
def test_attributes_detail_rows_are_transactions_of_the_included_accounts(
    api: Api, filters: dict[str, list[str]] | None, account_index: int | None
) -> None:
    _, client, login_id, raw = on(api, 2)
    account_filter = None if account_index is None else [raw["Accounts"][account_index]["Id"]]
    categories = filters["AccountCategory"] if filters else None
    attrs = client.attributes(
        login_id, {"Card": dh.CATALOGUE}, filters=filters, detail=dh.CATALOGUE, account_filter=account_filter
    )
    expect_catalogue(attrs, "Card", login_id, "with detail")
    _, transactions = dh.included_transactions(raw, categories, account_filter)
    assert transactions

    # The table is the raw AttributesDetail, flattened.
    raw_detail = dh.detail_of(attrs.raw["Card"])
    assert isinstance(raw_detail, list) and raw_detail
    flat = [(d["Attribute"], t) for d in raw_detail for t in (d["Transactions"] or [])]
    table = attrs.detail
    assert table.columns == dh.ATTRIBUTE_DETAIL_COLUMNS
    assert len(table) == len(flat)
    records = table.to_records()
    for row, (name, t) in zip(records, flat, strict=True):
        assert row["group"] == "Card" and row["attribute"] == name
        assert row["transaction_id"] == t["TransactionId"] and row["account_id"] == t["AccountId"]
        assert "/" in t["Date"] and row["date"] == dh.parse_date(t["Date"])
        assert (row["description"], row["debit"], row["credit"]) == (t["Description"], t["Debit"], t["Credit"])
        assert isinstance(t["Balance"], (int, float)), "a detail transaction carries the balance after it"
    dh.assert_exports_agree(table, float_columns=["debit", "credit"], date_columns=["date"])

    # Each row is a real transaction of an included account, with its own fields.
    per_attribute: dict[str, list[str]] = {}
    for row in records:
        found = transactions.get(row["transaction_id"])
        assert found is not None, (
            f"{row['attribute']}: {row['transaction_id']} is not a transaction of the included accounts"
        )
        account_id, tx = found
        assert (row["account_id"], row["date"], row["description"]) == (
            account_id,
            dh.parse_date(dh.field(tx, "Date")),
            dh.field(tx, "Description"),
        )
        assert row["debit"] == dh.num(dh.field(tx, "Debit")) and row["credit"] == dh.num(dh.field(tx, "Credit"))
        per_attribute.setdefault(row["attribute"], []).append(row["transaction_id"])
    assert set(per_attribute) <= set(dh.CATALOGUE)
    # A count's detail is the transactions it counts, each once.
    for name in COUNTS_OF_THEIR_DETAIL:
        behind = per_attribute.get(name, [])
        assert len(behind) == len(set(behind)) == attrs[name], f"{name}: {len(behind)} rows, value {attrs[name]}"
    assert sorted(per_attribute["count_transactions"]) == sorted(transactions)


def test_detail_only_for_the_requested_attributes(api: Api) -> None:
    _, client, login_id, _ = on(api, 2)
    request = {"Card": ["count_nsf", "sum_loan_payments", "balance_min"]}
    attrs = client.attributes(login_id, request, detail=["count_nsf"])
    assert set(attrs.detail.column("attribute")) == {"count_nsf"}
    raw_detail = dh.detail_of(attrs.raw["Card"])
    assert [d["Attribute"] for d in raw_detail] == ["count_nsf"]
    sent = [t["TransactionId"] for t in raw_detail[0]["Transactions"]]
    assert attrs.detail.column("transaction_id") == sent
    assert len(sent) == attrs["count_nsf"] > 0


def test_attributes_from_json_gives_identical_tables(api: Api) -> None:
    _, client, login_id, _ = on(api, 2)
    attrs = client.attributes(login_id, {"Card": dh.CATALOGUE}, detail=["count_nsf", "sum_employer_income"])
    again = bf.Attributes.from_json(json.dumps(attrs.raw))
    assert again.raw == attrs.raw and again.groups == attrs.groups
    assert again.to_dict() == attrs.to_dict()
    assert again.detail.to_records() == attrs.detail.to_records()
    a, b = attrs.values.to_records(), again.values.to_records()
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert x.keys() == y.keys()
        for key in x:
            assert dh._eq(x[key], y[key]), key
    dh.assert_exports_agree(attrs.values, float_columns=["value"])


# --- the 202 paths ------------------------------------------------------------------------


def _parts(request: bf.RecordedRequest) -> tuple[str, str, int]:
    """(method, path after the customer id, status) of a logged request."""
    return request["method"], request["path"].split("/v3/", 1)[1].split("/", 1)[1], request["status"]


@pytest.mark.parametrize(
    ("package", "operation"),
    [
        ("income", "GetIncomeAttributes"),
        ("credit_risk", "GetCreditRiskAttributes"),
        ("user_analysis", "GetUserAnalysisAttributes"),
        ("lending", "GetLendingAttributes"),
        (None, None),
    ],
)
def test_attributes_202_path(api: Api, fresh_sandbox: bf.Sandbox, package: str | None, operation: str | None) -> None:
    """client.attributes runs the preparation sequence: cached authorize, account detail polled
    on GetAccountsDetailAsync, then the attributes call repeated until 200."""
    either = api.client(fresh_sandbox)
    _, login_id = dh.log_in(either, api)
    client = Blocking(api, either)
    mark = len(fresh_sandbox.requests)
    if package:
        attrs = client.attributes(login_id, package=package)
    else:
        attrs = client.attributes(login_id, {"Card": ["count_nsf"]})
    seen = [_parts(r) for r in dh.requests_since(fresh_sandbox, mark)]
    request_id = attrs.raw["RequestId"]
    prefix = f"insight/login/{login_id}/attributes/{request_id}"
    tail = [("GET", f"{prefix}/{operation}")] * 3 if package else [("POST", prefix)] * 3
    assert seen == [
        ("POST", "BankingServices/GenerateAuthorizeToken", 200),
        ("POST", "BankingServices/Authorize", 200),
        ("POST", "BankingServices/GetAccountsDetail", 202),
        ("GET", f"BankingServices/GetAccountsDetailAsync/{request_id}", 202),
        ("GET", f"BankingServices/GetAccountsDetailAsync/{request_id}", 200),
    ] + [(m, p, s) for (m, p), s in zip(tail, [202, 202, 200], strict=True)], seen


# --- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "kwargs", "field"),
    [
        ((), {}, "attributes"),
        (({"Card": ["count_nsf"]},), {"package": "income"}, "attributes"),
        ((), {"package": "income", "filters": {"AccountCategory": ["Operations"]}}, "filters"),
        ((), {"package": "income", "detail": ["count_nsf"]}, "detail"),
        ((), {"package": "income", "account_filter": ["5618b381-64a1-4729-9ed4-47698483351a"]}, "account_filter"),
        ((), {"package": "gold"}, "package"),
        (({},), {}, "attributes"),
        (({"Card": []},), {}, "attributes"),
    ],
    ids=[
        "neither",
        "both",
        "filters-with-package",
        "detail-with-package",
        "account-filter-with-package",
        "unknown-package",
        "no-group",
        "empty-group",
    ],
)
def test_config_errors_name_the_field(
    api: Api, args: tuple[dict[str, list[str]], ...], kwargs: dict[str, Any], field: str
) -> None:
    sb, client, login_id, _ = on(api, 0)
    mark = len(sb.requests)
    with pytest.raises(bf.ConfigError) as info:
        client.attributes(login_id, *args, **kwargs)
    assert info.value.field == field
    assert field in str(info.value)
    assert len(sb.requests) == mark, "nothing is sent for a bad call"
    session = client.authorize_cached(login_id)
    with pytest.raises(bf.ConfigError) as info:
        session.attributes(*args, **kwargs)
    assert info.value.field == field


@pytest.mark.parametrize(
    ("request_", "detail"),
    [
        ({"Card": ["count_nsf", "no_such_attribute"]}, None),
        ({"Card": ["Count_NSF"]}, None),
        ({"Card": ["count_nsf"]}, ["no_such_attribute"]),
    ],
    ids=["unknown", "re-cased", "unknown-in-detail"],
)
def test_unknown_attribute_is_invalid_request_naming_it(
    api: Api, request_: dict[str, list[str]], detail: list[str] | None
) -> None:
    _, client, login_id, _ = on(api, 0)
    with pytest.raises(bf.InvalidRequest) as info:
        client.attributes(login_id, request_, detail=detail)
    assert info.value.code == "INVALID_REQUEST"
    bad = "Count_NSF" if request_["Card"] == ["Count_NSF"] else "no_such_attribute"
    assert bad in str(info.value)
