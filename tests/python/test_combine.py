"""bf.combine: the (login_id, result_or_exception) pairs of a bulk call as one table per kind,
each with a login_id column first, and the failures apart."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import bankfeed as bf


@pytest.fixture(scope="module")
def bulk() -> Iterator[bf.Sandbox]:
    """A sandbox with three saved bulk logins."""
    sb = bf.Sandbox(logins=3)
    yield sb
    sb.close()


@pytest.fixture
def fast(bulk: bf.Sandbox) -> bf.Client:
    return bulk.client(poll_interval=0.01, poll_timeout=10)


def test_investments_combine_into_one_table_per_kind(bulk: bf.Sandbox, fast: bf.Client) -> None:
    ids = bulk.login_ids
    results = {login_id: fast.investments(login_id) for login_id in ids}
    failure = bf.InvalidLogin("no such login")
    pairs: list[tuple[str, bf.Investments | BaseException]] = [*results.items(), ("unknown", failure)]
    combined = bf.combine(pairs)

    assert combined.kind == "Investments"
    assert list(combined.tables) == ["accounts", "positions", "transactions", "securities"]
    assert combined.errors == {"unknown": failure}
    for name, table in combined.tables.items():
        parts = [getattr(result, name) for result in results.values()]
        assert table.columns == ["login_id", *parts[0].columns], name
        assert len(table) == sum(len(part) for part in parts), name
        expected_ids = [login_id for login_id, part in zip(results, parts, strict=True) for _ in range(len(part))]
        assert table.column("login_id") == expected_ids, name
        # The values of every input, in order, under the login_id column.
        assert [{k: v for k, v in row.items() if k != "login_id"} for row in table.to_records()] == [
            row for part in parts for row in part.to_records()
        ], name
    assert combined.positions is combined["positions"]
    text = repr(combined)
    assert text.startswith("Combined(kind='Investments', accounts=") and text.endswith(", errors=1)"), text


def test_accounts_and_the_errors_of_a_bulk_call(bulk: bf.Sandbox, fast: bf.Client) -> None:
    ids = bulk.login_ids
    pairs = list(fast.accounts_detail_many([*ids, "00000000-0000-4000-8000-000000000000"], concurrency=2))
    combined = bf.combine(pairs)
    assert combined.kind == "Accounts"
    assert list(combined.tables) == ["accounts", "transactions"]
    assert set(combined.accounts.column("login_id")) == set(ids)
    [error] = combined.errors.values()
    assert isinstance(error, bf.InvalidLogin)


def test_unknown_names_and_wrong_input_are_refused(bulk: bf.Sandbox, fast: bf.Client) -> None:
    login_id = bulk.login_ids[0]
    investments = fast.investments(login_id)
    combined = bf.combine([(login_id, investments)])
    with pytest.raises(KeyError, match="'positions'"):
        combined["nope"]
    with pytest.raises(AttributeError, match="no attribute or table 'nope'"):
        _ = combined.nope
    detail = fast.authorize_cached(login_id).accounts_detail()
    with pytest.raises(TypeError, match="got Investments and Accounts"):
        bf.combine([(login_id, investments), (login_id, detail)])
    with pytest.raises(TypeError, match="is str"):
        bf.combine([(login_id, "not a result")])  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"\(login_id, result\) pairs"):
        bf.combine([investments])  # type: ignore[list-item]


def test_no_success_gives_no_tables_and_keeps_the_errors() -> None:
    failure = bf.RetryLater("later")
    combined = bf.combine([("a", failure)])
    assert (combined.kind, combined.tables, combined.errors) == (None, {}, {"a": failure})
    assert repr(bf.combine([])) == "Combined(kind=None, errors=0)"


def test_attributes_values_take_the_given_login_id() -> None:
    payload = (
        '{"Login": {"Id": "inner"}, "RequestId": "r",'
        ' "Card": {"Id": "c1", "count_nsf": 2, "sum_employer_income": "NONE_DETECTED"}}'
    )
    attributes = bf.Attributes.from_json(payload)
    combined = bf.combine([("outer", attributes), ("other", attributes)])
    assert combined.kind == "Attributes"
    values = combined.values
    assert attributes.values.column("login_id") == ["inner", "inner"]
    assert values.columns.count("login_id") == 1
    assert values.columns[0] == "login_id"
    assert len(values) == 2 * len(attributes.values)
    assert values.column("login_id") == ["outer"] * len(attributes.values) + ["other"] * len(attributes.values)
