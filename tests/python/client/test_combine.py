"""bf.combine: the (login_id, result_or_exception) pairs of a bulk call as one table per kind,
each with a login_id column first, and the failures apart. The results combined come from
``bf.Client`` and ``bf.AsyncClient`` alike (the ``api`` fixture); ``bf.acombine`` gathers an async
bulk call itself."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

import bankfeed as bf
from bfhelpers import Api, requests_after


@pytest.fixture(scope="module")
def bulk() -> Iterator[bf.Sandbox]:
    """A sandbox with three saved bulk logins."""
    sb = bf.Sandbox(logins=3)
    yield sb
    sb.close()


@pytest.fixture
def fast(bulk: bf.Sandbox) -> bf.Client:
    return bulk.client(poll_interval=0.01, poll_timeout=10)


@pytest.fixture
def either(api: Api, bulk: bf.Sandbox) -> Any:
    """A client of the bulk logins, of the kind the case runs against."""
    return api.client(bulk)


def test_investments_combine_into_one_table_per_kind(api: Api, bulk: bf.Sandbox, either: Any) -> None:
    ids = bulk.login_ids
    results: dict[str, bf.Investments] = {login_id: api.run(either.investments(login_id)) for login_id in ids}
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


def test_accounts_and_the_errors_of_a_bulk_call(api: Api, bulk: bf.Sandbox, either: Any) -> None:
    ids = bulk.login_ids
    pairs = api.collect(either.accounts_detail_many([*ids, "00000000-0000-4000-8000-000000000000"], concurrency=2))
    combined = bf.combine(pairs)
    assert combined.kind == "Accounts"
    assert list(combined.tables) == ["accounts", "transactions"]
    assert set(combined.accounts.column("login_id")) == set(ids)
    [error] = combined.errors.values()
    assert isinstance(error, bf.InvalidLogin)


def test_unknown_names_and_wrong_input_are_refused(api: Api, bulk: bf.Sandbox, either: Any) -> None:
    login_id = bulk.login_ids[0]
    investments: bf.Investments = api.run(either.investments(login_id))
    combined = bf.combine([(login_id, investments)])
    with pytest.raises(KeyError, match="'positions'"):
        combined["nope"]
    with pytest.raises(AttributeError, match="no attribute or table 'nope'"):
        _ = combined.nope
    detail = api.run(api.run(either.authorize_cached(login_id)).accounts_detail())
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
    # A job that reads its table when every login failed is told why there is none.
    with pytest.raises(AttributeError, match=r"or table 'positions'; there are no tables: no result succeeded \(1 "):
        combined.positions  # noqa: B018
    with pytest.raises(KeyError, match=r"there are no tables: no result succeeded \(1 error\(s\) in \.errors\)"):
        combined["positions"]


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


# Run in a child so that nothing else of the test process counts. The results are distinct copies
# of one login's year of account detail (about 140 KB each as tables). The peak is reset before
# the combine (clear_refs 5), so it is the combine's own.
COMBINE_PEAK = """
import asyncio, pickle, sys
import bankfeed as bf

def kib(field):
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(field + ":"))

with bf.Sandbox(logins=1) as sb, sb.client(poll_interval=0.01) as client:
    blob = pickle.dumps(client.authorize_cached(sb.login_ids[0]).accounts_detail(days="Days365"))
pairs = ((f"L{i}", pickle.loads(blob)) for i in range(400))

async def each():
    for pair in pairs:
        yield pair

before = kib("VmRSS")
with open("/proc/self/clear_refs", "w") as clear_refs:
    clear_refs.write("5")
if sys.argv[1] == "async":
    combined = asyncio.run(bf.acombine(each()))
else:
    combined = bf.combine(list(pairs) if sys.argv[1] == "held" else pairs)
assert len(combined.transactions) > 100_000
print(kib("VmHWM") - before)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads and resets the peak in /proc/self")
def test_combining_a_bulk_iterator_holds_one_result_at_a_time() -> None:
    # An ETL job combining thousands of logins needs the memory of the combined tables, not of
    # every result besides: results held in a list cost those tables twice over.
    def peak_growth(mode: str) -> int:
        child = subprocess.run(
            [sys.executable, "-c", COMBINE_PEAK, mode], capture_output=True, text=True, timeout=120, check=True
        )
        return int(child.stdout)

    streamed, held, in_async = peak_growth("streamed"), peak_growth("held"), peak_growth("async")
    assert streamed < 0.65 * held, (streamed, held)
    assert in_async < 0.65 * held, (in_async, held)


def test_acombine_gathers_an_async_bulk_call_as_combine_does(bulk: bf.Sandbox, fast: bf.Client) -> None:
    ids = [*bulk.login_ids, "00000000-0000-4000-8000-000000000000"]

    async def gather() -> bf.Combined[bf.BankfeedError]:
        async with bulk.async_client(poll_interval=0.01) as client:
            return await bf.acombine(client.investments_many(ids, concurrency=2))

    gathered = asyncio.run(gather())
    # Pairs come in the order logins finish: compare with combine over the same order.
    order = gathered.positions.column("login_id")
    by_login = dict(fast.investments_many(bulk.login_ids))
    expected = bf.combine([(login_id, by_login[login_id]) for login_id in dict.fromkeys(order)])
    assert gathered.positions.to_records() == expected.positions.to_records()
    assert list(gathered.tables) == list(expected.tables)
    [error] = gathered.errors.values()
    assert isinstance(error, bf.InvalidLogin)


def test_a_gathering_sized_like_the_last_batch_gathers_the_same_rows(bulk: bf.Sandbox, fast: bf.Client) -> None:
    # An export gathers batch after batch, each made like the last one, whose sizes its columns
    # start at (docs/architecture.md#bulk-calls): a larger, a smaller and an empty batch after
    # it must come out as a fresh gathering gives them.
    from bankfeed._native import _Gathering

    results = list(fast.investments_many(bulk.login_ids))
    batches = [results[:1], results, results[1:2], []]
    last = _Gathering()
    last.add(results[0])
    last.finish()
    for batch in batches:
        sized, fresh = _Gathering(last), _Gathering()
        for pair in batch:
            sized.add(pair)
            fresh.add(pair)
        got, expected = sized.finish(), fresh.finish()
        assert {name: table.to_arrow() for name, table in got.tables.items()} == {
            name: table.to_arrow() for name, table in expected.tables.items()
        }
        last = sized
    with pytest.raises(ValueError, match="this gathering has finished"):
        last.add(results[0])


@pytest.mark.parametrize("progress", [False, True], ids=["plain", "progress"])
def test_combine_points_an_async_iterable_to_acombine_and_stops_it(progress: bool) -> None:
    with bf.Sandbox(logins=4, pending_seconds=60) as sb:

        async def refused() -> tuple[str, int]:
            # Not closed at the end: the refusal itself must stop the logins, the iterator kept.
            client = sb.async_client(poll_interval=0.01, poll_timeout=60)
            results = client.investments_many(sb.login_ids, progress=progress)
            await asyncio.sleep(0.1)  # polling
            with pytest.raises(TypeError) as caught:
                bf.combine(results)  # type: ignore[arg-type]
            return str(caught.value), await asyncio.to_thread(requests_after, sb)

        message, after = asyncio.run(refused())
    assert "not the async iterable bf.AsyncBulkResults (its logins were stopped)" in message, message
    assert "await bf.acombine(...)" in message
    assert after == 0, f"{after} requests after the refusal"


def test_acombine_refuses_pairs_that_are_not_async_and_stops_a_blocking_bulk_call() -> None:
    with bf.Sandbox(logins=4, pending_seconds=60) as sb:
        client = sb.client(poll_interval=0.01, poll_timeout=60)
        blocking = client.investments_many(sb.login_ids)
        with pytest.raises(TypeError) as caught:
            asyncio.run(bf.acombine(blocking))  # type: ignore[arg-type]
        message = str(caught.value)
        assert "not bf.BulkResults" in message and "bf.combine(...)" in message and "was closed" in message, message
        # Kept, as a notebook keeps the last exception: the logins stopped all the same.
        assert (later := requests_after(sb)) == 0, f"{later} requests after the refusal"
        with pytest.raises(TypeError, match=r"not list; bf\.combine\(\.\.\.\) gathers other pairs \(a Client's"):
            asyncio.run(bf.acombine([]))  # type: ignore[arg-type]


def test_an_error_of_the_iterable_itself_goes_through() -> None:
    class Broken:
        def __iter__(self) -> Iterator[tuple[str, bf.Investments]]:
            raise ValueError("the source broke")

    with pytest.raises(ValueError, match="the source broke"):
        bf.combine(Broken())


def test_combine_names_what_came_instead_of_pairs() -> None:
    with pytest.raises(TypeError, match=r"^combine takes an iterable of \(login_id, result\) pairs, not NoneType$"):
        bf.combine(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^combine takes \(login_id, result\) pairs, not a tuple of 3 items$"):
        bf.combine([("a", "b", "c")])  # type: ignore[list-item]
