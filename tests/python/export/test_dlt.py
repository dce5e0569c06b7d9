"""``bankfeed.dlt.source`` loaded through dlt into DuckDB (docs/dlt.md): every login's rows once,
the columns of ``bf.schema``, each kind fetched once whatever tables are selected, failures
exposed, and a second load that replaces a login's rows instead of adding them again, however
they changed (docs/dlt.md#how-rows-are-merged).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("duckdb")
pytest.importorskip("dlt")

import dlt
import duckdb

import bankfeed as bf
import bankfeed.dlt
from bankfeed._export.kinds import KINDS
from bfhelpers import API_KEY, SECRET_KEY

LOGINS = 5
BAD = "not-a-guid"
WHAT = ["investments", "accounts", "attributes:income"]


@pytest.fixture(scope="module")
def sandbox() -> Iterator[bf.Sandbox]:
    with bf.Sandbox(logins=LOGINS) as sb:
        yield sb


@pytest.fixture(autouse=True)
def no_telemetry(monkeypatch: pytest.MonkeyPatch) -> None:
    # dlt reports each run to its makers by default; a test run sends nothing anywhere.
    monkeypatch.setenv("RUNTIME__DLTHUB_TELEMETRY", "false")


def client_of(sb: bf.Sandbox) -> bf.Client:
    return sb.client(poll_interval=0.01, poll_timeout=30)


def pipeline(tmp_path: Path) -> Any:
    # The pipeline's state goes under tmp_path, not the home directory.
    return dlt.pipeline(
        "bankfeed_test",
        destination=dlt.destinations.duckdb(str(tmp_path / "bankfeed.duckdb")),
        dataset_name="nightly",
        pipelines_dir=str(tmp_path / "pipelines"),
    )


def per_login(tmp_path: Path, table: str) -> Counter[str]:
    with duckdb.connect(str(tmp_path / "bankfeed.duckdb"), read_only=True) as db:
        rows = db.sql(f"select login_id, count(*) from nightly.{table} group by login_id").fetchall()
    return Counter(dict(rows))


def columns(tmp_path: Path, table: str) -> list[str]:
    with duckdb.connect(str(tmp_path / "bankfeed.duckdb"), read_only=True) as db:
        return [row[0] for row in db.sql(f"describe nightly.{table}").fetchall()]


def tables(tmp_path: Path) -> set[str]:
    with duckdb.connect(str(tmp_path / "bankfeed.duckdb"), read_only=True) as db:
        query = "select table_name from information_schema.tables where table_schema = 'nightly'"
        return {name for (name,) in db.sql(query).fetchall() if not name.startswith("_dlt")}


def in_memory(client: bf.Client, login_ids: list[str], days: bf.Days = "Days365") -> dict[str, Any]:
    return {
        "investments": bf.combine(client.investments_many(login_ids)),
        "accounts": bf.combine(client.accounts_detail_many(login_ids, with_transactions=True, days=days)),
        "attributes": bf.combine(client.attributes_many(login_ids, package="income")),
    }


def rows_per_login(combined: Any, table: str) -> Counter[str]:
    return Counter(combined.tables[table].to_arrow().column("login_id").to_pylist())


def authorizes(sb: bf.Sandbox) -> int:
    return sum(1 for request in sb.requests if request["path"].endswith("/Authorize"))


def test_snapshots_merged_replace_each_login_s_rows_instead_of_adding_them(sandbox: bf.Sandbox, tmp_path: Path) -> None:
    client = client_of(sandbox)
    ids = sandbox.login_ids
    expected = in_memory(client, ids)
    load = pipeline(tmp_path)
    before = authorizes(sandbox)
    source = bankfeed.dlt.source(client, [*ids, BAD], what=WHAT, days=365, batch_logins=2, snapshots="merge")
    load.run(source)
    # Each login fetched once per kind, however many tables each kind feeds.
    assert authorizes(sandbox) - before == LOGINS * len(WHAT)
    assert [(login, type(error)) for login, error in source.failures] == [(BAD, bf.ConfigError)] * len(WHAT)
    assert tables(tmp_path) == {f"{kind}_{table}" for kind, names in KINDS.items() for table in names}
    for kind, names in KINDS.items():
        for table in names:
            name = f"{kind}_{table}"
            assert columns(tmp_path, name) == bf.schema(kind, table).names, name
            assert per_login(tmp_path, name) == rows_per_login(expected[kind], table), name
    first = {name: per_login(tmp_path, name) for name in tables(tmp_path)}
    assert sum(first["investments_transactions"].values()) > 0 and sum(first["accounts_transactions"].values()) > 0

    # The same logins again: the same rows, none twice; the transactions asked only from the
    # overlap before each login's newest (docs/dlt.md#transactions-once).
    since = len(sandbox.requests)
    load.run(bankfeed.dlt.source(client, ids, what=WHAT, days=365, snapshots="merge"))
    assert {name: per_login(tmp_path, name) for name in tables(tmp_path)} == first
    details = [r for r in sandbox.requests[since:] if r["operation"] == "GetAccountsDetail" and r["method"] == "POST"]
    # Those of the accounts (the attributes' own account detail asks no transactions).
    details = [request for request in details if request["body"].get("WithTransactions")]
    assert len(details) == LOGINS and all(request["body"].get("DateFrom") for request in details)
    # Nothing new happened at the bank: no transaction was loaded again.
    counts = load.last_trace.last_normalize_info.row_counts
    assert counts.get("accounts_transactions", 0) == counts.get("investments_transactions", 0) == 0, counts
    assert counts["investments_positions"] == sum(first["investments_positions"].values())

    # Two logins' positions and accounts are replaced as a whole (a position sold goes); their
    # transactions are a history: asked otherwise (90 days), they start over, each loaded row
    # replacing its own by key, and those that left the window stay, each once.
    changed = ids[:2]
    fewer = rows_per_login(in_memory(client, changed, days="Days90")["accounts"], "transactions")
    since = len(sandbox.requests)
    load.run(bankfeed.dlt.source(client, changed, what="accounts", days=90, snapshots="merge"))
    details = [r for r in sandbox.requests[since:] if r["operation"] == "GetAccountsDetail" and r["method"] == "POST"]
    assert [request["body"].get("DateFrom") for request in details] == [None, None], "started over"
    assert all(fewer[login] < first["accounts_transactions"][login] for login in changed)
    assert per_login(tmp_path, "accounts_transactions") == first["accounts_transactions"]


def test_a_full_refresh_loads_every_transaction_again_once(sandbox: bf.Sandbox, tmp_path: Path) -> None:
    client = client_of(sandbox)
    load = pipeline(tmp_path)
    load.run(bankfeed.dlt.source(client, sandbox.login_ids, what="accounts"))
    first = per_login(tmp_path, "accounts_transactions")
    since = len(sandbox.requests)
    info = load.run(bankfeed.dlt.source(client, sandbox.login_ids, what="accounts", full_refresh=True))
    details = [r for r in sandbox.requests[since:] if r["operation"] == "GetAccountsDetail" and r["method"] == "POST"]
    assert info.has_failed_jobs is False and all(request["body"].get("DateFrom") is None for request in details)
    assert per_login(tmp_path, "accounts_transactions") == first, "each transaction once"


def test_the_primary_keys_tell_every_row_apart(sandbox: bf.Sandbox, tmp_path: Path) -> None:
    assert {kind: set(keys) for kind, keys in bankfeed.dlt.PRIMARY_KEYS.items()} == {
        kind: set(names) for kind, names in KINDS.items()
    }
    pipeline(tmp_path).run(bankfeed.dlt.source(client_of(sandbox), sandbox.login_ids, what=WHAT))
    with duckdb.connect(str(tmp_path / "bankfeed.duckdb"), read_only=True) as db:
        for kind, keys in bankfeed.dlt.PRIMARY_KEYS.items():
            for table, key in keys.items():
                assert key[0] == "login_id" and set(key) <= set(bf.schema(kind, table).names)
                quoted = ", ".join(f'"{column}"' for column in key)
                query = f"select count(*), count(distinct ({quoted})) from nightly.{kind}_{table}"
                total, distinct = db.sql(query).fetchone() or (0, 0)
                assert total == distinct, (kind, table)


def test_one_table_selected_fetches_its_kind_once_and_loads_only_it(sandbox: bf.Sandbox, tmp_path: Path) -> None:
    before = authorizes(sandbox)
    source = bankfeed.dlt.source(client_of(sandbox), sandbox.login_ids, what=WHAT)
    pipeline(tmp_path).run(source.with_resources("investments_positions"))
    assert authorizes(sandbox) - before == LOGINS
    assert tables(tmp_path) == {"investments_positions"}
    assert source.failures == []


def test_wrong_arguments_are_refused_when_the_source_is_made(sandbox: bf.Sandbox) -> None:
    client = client_of(sandbox)
    cases: list[tuple[dict[str, Any], str]] = [
        ({"what": "gold"}, "what"),
        ({"what": "accounts", "days": 30}, "days"),
        ({"concurrency": 0}, "concurrency"),
        ({"batch_logins": 0}, "batch_logins"),
    ]
    for options, field in cases:
        with pytest.raises(bf.ConfigError) as raised:
            bankfeed.dlt.source(client, sandbox.login_ids, **options)
        assert raised.value.field == field
    with pytest.raises(TypeError, match="blocking Client"):
        bankfeed.dlt.source(sandbox.async_client(), sandbox.login_ids)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="single str"):
        bankfeed.dlt.source(client, sandbox.login_ids[0])


def test_no_key_reaches_a_file_a_log_or_a_repr(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # dlt keeps a pipeline's state, schema and trace in files: none may hold a key of the client.
    with bf.Sandbox(logins=2, api_key=API_KEY, secret_key=SECRET_KEY) as sb:
        client = bf.Client(sb.url, sb.customer_id, api_key=API_KEY, secret_key=SECRET_KEY, poll_interval=0.01)
        source = bankfeed.dlt.source(client, [*sb.login_ids, BAD], what=["investments", "accounts"])
        with caplog.at_level("DEBUG"):
            pipeline(tmp_path).run(source)
        assert per_login(tmp_path, "investments_accounts").keys() == set(sb.login_ids)
    texts = [repr(source), str(source), *(repr(error) for _, error in source.failures), caplog.text]
    files = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert files
    for secret in (API_KEY, SECRET_KEY):
        assert not any(secret in text for text in texts), secret
        found = [str(path) for path in files if secret.encode() in path.read_bytes()]
        assert not found, (secret, found)


def test_snapshots_are_appended_by_default_one_per_load_and_the_newest_is_read_by_its_run(
    sandbox: bf.Sandbox, tmp_path: Path
) -> None:
    client = client_of(sandbox)
    load = pipeline(tmp_path)
    for _ in range(2):
        # No snapshots= given: appended with the run is the default (docs/dlt.md#snapshots-kept-per-load).
        load.run(bankfeed.dlt.source(client, sandbox.login_ids, what="investments"))
    with duckdb.connect(str(tmp_path / "bankfeed.duckdb"), read_only=True) as db:
        runs = db.sql("select run_id, count(*) from nightly.investments_positions group by 1 order by 1").fetchall()
        assert len(runs) == 2 and runs[0][1] == runs[1][1] > 0, "one snapshot per load"
        assert columns(tmp_path, "investments_positions")[-2:] == ["run_date", "run_id"]
        # The newest snapshot, as docs/dlt.md#snapshots-kept-per-load reads it: the last load's.
        newest = db.sql(
            "select run_id from nightly.investments_positions qualify run_id = max(run_id) over (partition by login_id)"
        ).fetchall()
        assert len(newest) == runs[1][1] and {run for (run,) in newest} == {runs[1][0]}
        # The transactions once, whatever the snapshots do.
        total, distinct = db.sql(
            "select count(*), count(distinct (login_id, account_id, transaction_id))"
            " from nightly.investments_transactions"
        ).fetchone() or (0, 0)
        assert total == distinct > 0
    with pytest.raises(bf.ConfigError, match="snapshots"):
        bankfeed.dlt.source(client, sandbox.login_ids, snapshots="keep")
