"""Night after night into one export directory (docs/export.md#runs,
docs/export.md#transactions-once, docs/export.md#reading-the-newest): each snapshot table keeps one
snapshot per run, the transactions are asked from where the last run ended (with the overlap) and
each is written once across the runs, ``bf.read_latest`` reads the newest, ``full_refresh`` starts
over, and a run asks for the export's kinds and options as its first did. In most of these the
sandbox's data does not move between the nights, so what a later night writes of the transactions
is what changed, nothing; the three nights of a moving sandbox (docs/sandbox.md#the-clock) post new
transactions, late ones among them, and move the balances between the runs."""

from __future__ import annotations

import datetime
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyarrow")

import pyarrow
import pyarrow.compute
import pyarrow.dataset

import bankfeed as bf
from bankfeed._export.events import OVERLAP_DAYS

LOGINS = 4
WHAT = ["investments", "accounts"]
KEY = ("login_id", "account_id", "transaction_id")


@pytest.fixture
def sb() -> Iterator[bf.Sandbox]:
    with bf.Sandbox(logins=LOGINS) as sandbox:
        yield sandbox


def client_of(sb: bf.Sandbox) -> bf.Client:
    return sb.client(poll_interval=0.01, poll_timeout=30)


def table(out: Path, kind: str, name: str) -> pyarrow.Table:
    return pyarrow.dataset.dataset(out / kind / name, partitioning="hive").to_table()


def keys(data: pyarrow.Table) -> list[tuple[Any, ...]]:
    return list(zip(*(data.column(name).to_pylist() for name in KEY), strict=True))


def detail_bodies(sb: bf.Sandbox, since: int) -> dict[str, dict[str, Any]]:
    """The body of each login's GetAccountsDetail sent after request ``since``, by LoginId."""
    return {
        str(request["login_id"]): request["body"]
        for request in sb.requests[since:]
        if request["operation"] == "GetAccountsDetail" and request["method"] == "POST"
    }


def test_each_night_writes_a_snapshot_and_only_new_transactions(sb: bf.Sandbox, tmp_path: Path) -> None:
    client = client_of(sb)
    first = bf.export(client, sb.login_ids, tmp_path, what=WHAT)
    assert all(body.get("DateFrom") is None for body in detail_bodies(sb, 0).values()), "the first asks everything"
    newest = Counter[str]()
    transactions = table(tmp_path, "accounts", "transactions")
    for login, day in zip(
        transactions.column("login_id").to_pylist(), transactions.column("date").to_pylist(), strict=True
    ):
        newest[login] = max(newest.get(login, 0), day.toordinal())
    nights = [first]
    for _ in range(2):
        since = len(sb.requests)
        nights.append(bf.export(client, sb.login_ids, tmp_path, what=WHAT))
        # Each login asked from the overlap before its newest transaction, no earlier.
        bodies = detail_bodies(sb, since)
        assert set(bodies) == set(sb.login_ids)
        for login, body in bodies.items():
            expected = datetime.date.fromordinal(newest[login] - OVERLAP_DAYS).isoformat()
            assert body["DateFrom"] == expected, (login, body)
    assert [night.logins_written for night in nights] == [LOGINS] * 3, "every login once per run"
    runs = [night.run for night in nights]
    assert runs == sorted(runs) and len(set(runs)) == 3
    # Each transaction once across the runs, all of them in the first: the data did not move.
    for kind in WHAT:
        data = table(tmp_path, kind, "transactions")
        assert data.num_rows > 0 and len(keys(data)) == len(set(keys(data))), kind
        assert set(data.column("run_id").to_pylist()) == {first.run}, kind
        assert [night.written[f"{kind}/transactions"] for night in nights[1:]] == [0, 0]
    # A snapshot per run: each login's accounts and positions in every run.
    for kind, name in [("investments", "accounts"), ("investments", "positions"), ("accounts", "accounts")]:
        data = table(tmp_path, kind, name)
        per_run = Counter(data.column("run_id").to_pylist())
        assert list(per_run.values()) == [first.written[f"{kind}/{name}"]] * 3, (kind, name)
    # The newest: the last run's snapshot, and every transaction once.
    latest = bf.read_latest(tmp_path, "investments", "positions")
    assert set(latest.column("run_id").to_pylist()) == {runs[-1]}
    assert latest.num_rows == first.written["investments/positions"]
    assert latest.drop_columns(["run_date", "run_id"]).schema.equals(bf.schema("investments", "positions"))
    assert str(latest.schema.field("run_date").type) == "date32[day]"
    assert bf.read_latest(tmp_path, "accounts", "transactions").num_rows == first.written["accounts/transactions"]


def test_a_transaction_changed_in_the_overlap_is_written_again_and_read_newest(sb: bf.Sandbox, tmp_path: Path) -> None:
    client = client_of(sb)
    first = bf.export(client, sb.login_ids, tmp_path, what="accounts")
    # The bank changed one transaction of the overlap since (its description, say): the cursor
    # the journal keeps holds another content for it than the service gives now.
    [entry_path] = (tmp_path / "_journal" / "accounts").glob("*.json")
    entry = json.loads(entry_path.read_text())
    login, cursor = next(iter(entry["cursors"].items()))
    day = max(cursor["seen"])
    key = next(iter(cursor["seen"][day]))
    cursor["seen"][day][key] = "0" * 8
    entry_path.write_text(json.dumps(entry))
    second = bf.export(client, sb.login_ids, tmp_path, what="accounts")
    assert second.written["accounts/transactions"] == 1, "the changed one only"
    data = table(tmp_path, "accounts", "transactions")
    [changed] = data.filter(pyarrow.compute.equal(data.column("run_id"), second.run)).to_pylist()
    assert changed["login_id"] == login and changed["date"].isoformat() == day
    both = Counter(keys(data))
    assert both[(changed["login_id"], changed["account_id"], changed["transaction_id"])] == 2
    # Read newest: each transaction once, the changed one from the second run.
    latest = bf.read_latest(tmp_path, "accounts", "transactions")
    assert latest.num_rows == first.written["accounts/transactions"] == len(set(keys(latest)))
    runs = Counter(latest.column("run_id").to_pylist())
    assert runs == {first.run: latest.num_rows - 1, second.run: 1}


def test_a_full_refresh_asks_everything_and_starts_each_history_over(sb: bf.Sandbox, tmp_path: Path) -> None:
    client = client_of(sb)
    first = bf.export(client, sb.login_ids, tmp_path, what=WHAT)
    since = len(sb.requests)
    again = bf.export(client, sb.login_ids, tmp_path, what=WHAT, full_refresh=True)
    assert all(body.get("DateFrom") is None for body in detail_bodies(sb, since).values())
    for kind in WHAT:
        assert again.written[f"{kind}/transactions"] == first.written[f"{kind}/transactions"] > 0
        assert bf.read_latest(tmp_path, kind, "transactions").num_rows == first.written[f"{kind}/transactions"]
    # The night after goes on from the refreshed history: nothing new.
    since = len(sb.requests)
    third = bf.export(client, sb.login_ids, tmp_path, what=WHAT)
    assert all(body.get("DateFrom") for body in detail_bodies(sb, since).values())
    assert third.written["accounts/transactions"] == third.written["investments/transactions"] == 0


def test_a_run_asks_as_the_first_did_and_a_kind_added_starts_its_own_history(sb: bf.Sandbox, tmp_path: Path) -> None:
    client = client_of(sb)
    bf.export(client, sb.login_ids, tmp_path, what="investments")
    since = len(sb.requests)
    added = bf.export(client, sb.login_ids, tmp_path, what=WHAT)
    assert all(body.get("DateFrom") is None for body in detail_bodies(sb, since).values()), "its own history"
    assert added.written["accounts/transactions"] > 0 and added.written["investments/transactions"] == 0
    cases: list[tuple[dict[str, Any], str, str]] = [
        ({"what": "investments"}, "what", "leaves out accounts"),
        ({"what": WHAT, "days": 365}, "days", "days=Days365"),
        ({"what": WHAT, "format": "csv"}, "format", "'parquet'"),
    ]
    for options, field, says in cases:
        with pytest.raises(bf.ConfigError) as refused:
            bf.export(client, sb.login_ids, tmp_path, **options)
        assert refused.value.field == field and says in str(refused.value), refused.value
        assert "another directory" in str(refused.value)


@pytest.mark.cluster
def test_a_cluster_run_goes_on_from_the_journal_too(sb: bf.Sandbox, tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(n_workers=1, processes=False, dashboard_address=":0") as local,
        distributed.Client(local) as dask_client,
    ):
        first = bf.export(client_of(sb), sb.login_ids, tmp_path, what=WHAT, scheduler=dask_client, partition_size=3)
        since = len(sb.requests)
        second = bf.export(client_of(sb), sb.login_ids, tmp_path, what=WHAT, scheduler=dask_client, partition_size=3)
    assert (first.logins_written, second.logins_written) == (LOGINS, LOGINS)
    assert all(body.get("DateFrom") for body in detail_bodies(sb, since).values())
    for kind in WHAT:
        data = table(tmp_path, kind, "transactions")
        assert len(keys(data)) == len(set(keys(data))) > 0, kind
        assert second.written[f"{kind}/transactions"] == 0
    accounts = table(tmp_path, "investments", "accounts")
    per_run = Counter(zip(accounts.column("run_id").to_pylist(), accounts.column("login_id").to_pylist(), strict=True))
    assert {run for run, _ in per_run} == {first.run, second.run} and len({login for _, login in per_run}) == LOGINS


def test_the_async_form_goes_on_from_the_journal_too(sb: bf.Sandbox, tmp_path: Path) -> None:
    import asyncio

    client = sb.async_client(poll_interval=0.01, poll_timeout=30)
    first = asyncio.run(bf.aexport(client, sb.login_ids, tmp_path, what="accounts"))
    since = len(sb.requests)
    second = asyncio.run(bf.aexport(client, sb.login_ids, tmp_path, what="accounts"))
    assert all(body.get("DateFrom") for body in detail_bodies(sb, since).values())
    assert first.written["accounts/transactions"] > 0 and second.written["accounts/transactions"] == 0
    assert second.logins_written == LOGINS and first.run < second.run


def sandbox_transactions(client: bf.Client, login_ids: list[str], kind: str) -> pyarrow.Table:
    """Every transaction of ``kind`` the sandbox shows today over the whole window of the export
    (``days=365``), asked directly, with the login's id."""
    tables = []
    for login in login_ids:
        session = client.authorize_cached(login)
        found = session.investments() if kind == "investments" else session.accounts_detail(days="Days365")
        data = found.transactions.to_arrow()
        tables.append(
            data.select(["account_id", "transaction_id", "date"]).add_column(
                0, "login_id", pyarrow.array([login] * data.num_rows, pyarrow.string())
            )
        )
    return pyarrow.concat_tables(tables)


def test_three_nights_of_a_moving_sandbox_land_each_transaction_once_and_a_snapshot_a_night(tmp_path: Path) -> None:
    import duckdb
    import pandas

    # Started after a few days of the clock, so that late-posted transactions are among the data.
    with bf.Sandbox(logins=LOGINS, as_of="2026-11-26") as sb:
        client = client_of(sb)
        nights: list[bf.ExportReport] = []
        newest: dict[str, str] = {}  # each login's newest transaction written before the night
        for night in range(3):
            if night:
                sb.advance(days=1)
            since = len(sb.requests)
            nights.append(bf.export(client, sb.login_ids, tmp_path, what=WHAT, days=365))
            bodies = detail_bodies(sb, since)
            assert set(bodies) == set(sb.login_ids)
            for login, body in bodies.items():
                if night == 0:
                    assert body.get("DateFrom") is None, "the first night asks everything"
                else:
                    # The nights after ask from the overlap before the login's newest, no earlier.
                    expected = datetime.date.fromisoformat(newest[login]) - datetime.timedelta(days=OVERLAP_DAYS)
                    assert body["DateFrom"] == expected.isoformat(), (night, login, body)
            written = table(tmp_path, "accounts", "transactions")
            for login, day in zip(
                written.column("login_id").to_pylist(), written.column("date").to_pylist(), strict=True
            ):
                newest[login] = max(newest.get(login, ""), day.isoformat())
        runs = [night.run for night in nights]
        assert len(set(runs)) == 3 and all(night.logins_written == LOGINS for night in nights)

        for kind in WHAT:
            glob = str(tmp_path / kind / "transactions" / "**" / "*.parquet")
            # Each transaction once across the three runs, as DuckDB and pandas read the directory.
            with duckdb.connect() as db:
                repeated = db.execute(
                    f"SELECT {', '.join(KEY)}, count(*) FROM read_parquet(?, hive_partitioning = true) "
                    "GROUP BY ALL HAVING count(*) > 1",
                    [glob],
                ).fetchall()
                nights_of = dict(
                    db.execute(
                        "SELECT run_id, count(*) FROM read_parquet(?, hive_partitioning = true) GROUP BY run_id",
                        [glob],
                    ).fetchall()
                )
            assert repeated == [], kind
            frame = pandas.read_parquet(tmp_path / kind / "transactions")
            assert not frame.duplicated(list(KEY)).any(), kind
            assert {str(run): count for run, count in nights_of.items()} == {
                night.run: night.written[f"{kind}/transactions"]
                for night in nights
                if night.written[f"{kind}/transactions"]
            }, kind
            # What the sandbox shows on the last night, all of it; besides, only what its year has
            # since left behind (dated before its first day).
            shown = sandbox_transactions(client, sb.login_ids, kind)
            exported = set(zip(*(frame[name] for name in KEY), strict=True))
            shown_keys = set(keys(shown))
            assert shown_keys <= exported, (kind, len(shown_keys - exported))
            first_day = min(shown.column("date").to_pylist())
            dropped = frame[[key not in shown_keys for key in zip(*(frame[name] for name in KEY), strict=True)]]
            assert all(day < first_day for day in dropped["date"]), (kind, dropped)

        # The late-posted: written on a later night, dated before the newest its account had.
        data = table(tmp_path, "accounts", "transactions").to_pylist()
        late = []
        for run_index in (1, 2):
            before: dict[tuple[str, str], Any] = {}
            for row in data:
                if row["run_id"] < runs[run_index]:
                    account = (row["login_id"], row["account_id"])
                    before[account] = max(before.get(account, row["date"]), row["date"])
            late += [
                row
                for row in data
                if row["run_id"] == runs[run_index]
                and row["date"] < before.get((row["login_id"], row["account_id"]), row["date"])
            ]
        assert late, "the sandbox posted some late between the nights"
        shown = sandbox_transactions(client, sb.login_ids, "accounts")
        assert {(row["login_id"], row["account_id"], row["transaction_id"]) for row in late} <= set(keys(shown))

        # A snapshot a night: every login's accounts and positions in each of the three runs.
        for kind, name in [("investments", "accounts"), ("investments", "positions"), ("accounts", "accounts")]:
            frame = pandas.read_parquet(tmp_path / kind / name)
            per_run = frame.groupby(frame["run_id"].astype(str))["login_id"].nunique().to_dict()
            assert per_run == dict.fromkeys(runs, LOGINS), (kind, name)
            counts = frame["run_id"].astype(str).value_counts().to_dict()
            assert counts == {night.run: night.written[f"{kind}/{name}"] for night in nights}, (kind, name)

        # The newest snapshot is the last night's, with the balances the sandbox has now.
        latest = bf.read_latest(tmp_path, "accounts", "accounts")
        assert set(latest.column("run_id").to_pylist()) == {runs[-1]}
        balances = ["balance_current", "balance_available", "balance_limit"]
        now: dict[tuple[str, str], tuple[Any, ...]] = {}
        for login in sb.login_ids:
            accounts = client.authorize_cached(login).accounts_detail(days="Days365").accounts.to_arrow()
            for row in accounts.to_pylist():
                now[(login, row["account_id"])] = tuple(row[name] for name in balances)
        landed = {
            (row["login_id"], row["account_id"]): tuple(row[name] for name in balances) for row in latest.to_pylist()
        }
        assert landed == now
        # ... which moved since the first night: the first night's snapshot is not the newest.
        snapshots = pandas.read_parquet(tmp_path / "accounts" / "accounts")
        first_night = snapshots[snapshots["run_id"].astype(str) == runs[0]]
        then = {(row.login_id, row.account_id): row.balance_current for row in first_night.itertuples()}
        assert then.keys() == now.keys() and then != {key: value[0] for key, value in now.items()}
        positions = bf.read_latest(tmp_path, "investments", "positions")
        assert set(positions.column("run_id").to_pylist()) == {runs[-1]}
        assert positions.num_rows == nights[-1].written["investments/positions"]
