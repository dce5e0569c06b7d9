"""``bf.export`` and ``bankfeed export`` on one machine (docs/export.md): the layout other tools
read, the failures and the manifest, a run stopped at any point (``kill -9`` included) and
resumed with each login exactly once in every table and no request for what is written, the exit
statuses, CSV, and the ``AsyncClient`` form.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyarrow")

import pyarrow
import pyarrow.dataset

import bankfeed as bf
from exporthelpers import command, keys_of

LOGINS = 8
BAD = "not-a-guid"
TABLES = {
    "investments": ("accounts", "positions", "transactions", "securities"),
    "accounts": ("accounts", "transactions"),
    "attributes": ("values", "detail"),
}


@pytest.fixture(scope="module")
def many() -> Iterator[bf.Sandbox]:
    with bf.Sandbox(logins=LOGINS) as sb:
        yield sb


def client_of(sb: bf.Sandbox, **options: Any) -> bf.Client:
    return sb.client(**{"poll_interval": 0.01, "poll_timeout": 30, **options})


def table(out: Path, kind: str, name: str) -> pyarrow.Table:
    """The whole table, every run's rows, with the run's two columns of its directories."""
    return pyarrow.dataset.dataset(out / kind / name, partitioning="hive").to_table()


def logins_of(data: pyarrow.Table) -> Counter[str]:
    return Counter(data.column("login_id").to_pylist())


def test_every_table_is_a_dataset_read_whole_by_pyarrow_pandas_and_duckdb(many: bf.Sandbox, tmp_path: Path) -> None:
    import duckdb
    import pandas

    client = client_of(many)
    report = bf.export(client, [*many.login_ids, BAD], tmp_path, what=["investments", "accounts", "attributes:income"])
    assert (report.logins_written, report.logins_failed, report.interrupted) == (LOGINS, 1, False)
    # The same rows as the in-memory tables of the bulk calls, each login's once.
    expected = {
        "investments": bf.combine(client.investments_many(many.login_ids)),
        "accounts": bf.combine(client.accounts_detail_many(many.login_ids, with_transactions=True)),
        "attributes": bf.combine(client.attributes_many(many.login_ids, package="income")),
    }
    for kind, tables in TABLES.items():
        for name in tables:
            data = table(tmp_path, kind, name)
            assert data.schema.names[:3] == ["login_id", "request_id", "fetched_at"]
            # The file's columns, then the run's, read from its partition's directories.
            assert data.schema.names[-2:] == ["run_date", "run_id"]
            assert set(data.column("run_id").to_pylist()) <= {report.run}
            data = data.drop_columns(["run_date", "run_id"])
            assert data.schema.equals(bf.schema(kind, name)), (kind, name)
            in_memory = expected[kind].tables[name].to_arrow()
            assert data.num_rows == in_memory.num_rows == report.written[f"{kind}/{name}"], (kind, name)
            assert logins_of(data) == logins_of(in_memory)
            assert data.drop_columns(["request_id", "fetched_at"]).sort_by("login_id").column_names == (
                in_memory.column_names
            )
            frame = pandas.read_parquet(tmp_path / kind / name)
            assert len(frame) == data.num_rows and set(frame["run_id"]) <= {report.run}
            glob = str(tmp_path / kind / name / "*" / "*" / "*.parquet")
            query = f"select count(*), max(run_id) from read_parquet('{glob}', hive_partitioning=true)"
            assert duckdb.sql(query).fetchone() == (data.num_rows, report.run if data.num_rows else None)
    # Each login's rows carry the RequestId its data came from, and when.
    positions = table(tmp_path, "investments", "positions")
    assert all(isinstance(rid, str) and len(rid) == 36 for rid in positions.column("request_id").to_pylist())
    assert str(positions.schema.field("fetched_at").type) == "timestamp[us, tz=UTC]"


def test_part_files_have_dictionaries_for_repeated_text_and_statistics_for_filters(
    many: bf.Sandbox, tmp_path: Path
) -> None:
    import pyarrow.parquet

    bf.export(client_of(many), many.login_ids, tmp_path, what="investments,accounts")
    # Per table: text written plain (each row's own id, free text), text with a dictionary (what
    # repeats over a login's rows), as docs/export.md#the-layout says.
    for kind, name, plain, with_dictionary in [
        ("investments", "transactions", {"transaction_id", "description"}, {"login_id", "account_id", "type"}),
        ("investments", "positions", {"position_id"}, {"login_id", "request_id", "security_id", "currency"}),
        ("investments", "accounts", {"account_id", "full_account_id", "account_number"}, {"login_id", "currency"}),
        ("accounts", "transactions", {"transaction_id", "description"}, {"login_id", "account_id"}),
    ]:
        part = max((tmp_path / kind / name).rglob("part-*.parquet"), key=lambda file: file.stat().st_size)
        group = pyarrow.parquet.ParquetFile(part).metadata.row_group(0)
        assert group.num_rows > 0, (kind, name)
        columns = {group.column(i).path_in_schema: group.column(i) for i in range(group.num_columns)}
        assert {c for c in plain | with_dictionary if columns[c].has_dictionary_page} == with_dictionary, (kind, name)
        # Statistics where a reader filters, so that it can skip files; none for each row's own id.
        assert all(columns[c].is_stats_set for c in ("login_id", "request_id", "fetched_at")), (kind, name)
        assert not any(columns[c].is_stats_set for c in plain), (kind, name)


def test_the_failures_and_the_manifest_say_what_happened(many: bf.Sandbox, tmp_path: Path) -> None:
    unknown = "00000000-0000-4000-8000-000000000000"  # a LoginId the service has never saved
    bf.export(client_of(many), [many.login_ids[0], BAD, unknown], tmp_path, what="investments,accounts")
    failures = [json.loads(line) for line in (tmp_path / "_failures.jsonl").read_text().splitlines()]
    assert sorted((f["login_id"], f["kind"], f["error"], f["operation"]) for f in failures) == [
        (unknown, "accounts", "InvalidLogin", "Authorize"),
        (unknown, "investments", "InvalidLogin", "Authorize"),
        (BAD, "accounts", "ConfigError", None),
        (BAD, "investments", "ConfigError", None),
    ]
    assert all(set(f) >= {"login_id", "error", "code", "message", "request_id", "operation"} for f in failures)
    manifest = json.loads((tmp_path / "_manifest.json").read_text())
    assert manifest["bankfeed_version"] == bf.__version__
    assert manifest["what"] == ["investments", "accounts"] and manifest["format"] == "parquet"
    assert manifest["kinds"]["investments"]["logins_written"] == [many.login_ids[0]]
    assert sorted(manifest["kinds"]["investments"]["logins_failed"]) == sorted([BAD, unknown])
    assert manifest["kinds"]["investments"]["rows"]["positions"] == table(tmp_path, "investments", "positions").num_rows
    assert manifest["complete"] is False


def test_a_run_into_an_export_is_its_next_run_in_a_partition_of_its_own(many: bf.Sandbox, tmp_path: Path) -> None:
    client = client_of(many)
    first = bf.export(client, many.login_ids[:2], tmp_path)
    second = bf.export(client, many.login_ids[:2], tmp_path)
    assert (second.logins_written, second.logins_skipped) == (2, 0), "every login once per run"
    assert first.run < second.run, "runs' names sort as they ran"
    accounts = table(tmp_path, "investments", "accounts")
    per_run = Counter(zip(accounts.column("run_id").to_pylist(), accounts.column("login_id").to_pylist(), strict=True))
    assert {run for run, _ in per_run} == {first.run, second.run}
    assert len(per_run) == 4
    manifest = json.loads((tmp_path / "_manifest.json").read_text())
    assert [(run["run"], run["status"], run["logins_written"]) for run in manifest["runs"]] == [
        (first.run, "complete", 2),
        (second.run, "complete", 2),
    ]
    with pytest.raises(bf.ConfigError) as wrong:
        bf.export(client, many.login_ids[:1], tmp_path, format="csv")
    assert wrong.value.field == "format" and "another directory" in str(wrong.value)


def authorizes(sb: bf.Sandbox) -> int:
    return sum(1 for request in sb.requests if request["path"].endswith("/Authorize"))


def test_resume_skips_what_is_written_and_sends_nothing_for_it(tmp_path: Path) -> None:
    with bf.Sandbox(logins=LOGINS) as sb:
        client = client_of(sb)
        first = bf.export(client, sb.login_ids[:5], tmp_path, what=["investments", "accounts"])
        assert first.logins_written == 5
        before = authorizes(sb)
        again = bf.export(client, sb.login_ids, tmp_path, what=["investments", "accounts"], resume=True)
        # Only the three new logins were fetched: an Authorize each, per kind.
        assert authorizes(sb) - before == 3 * 2
        assert (again.logins_written, again.logins_skipped) == (3, 5)
        # Then the run has every login: a resume says so, rather than writing nothing and ending well.
        with pytest.raises(bf.ConfigError) as nothing:
            bf.export(client, sb.login_ids, tmp_path, what=["investments", "accounts"], resume=True)
        assert nothing.value.field == "resume" and "nothing to resume" in str(nothing.value)
        assert authorizes(sb) - before == 3 * 2, "nothing sent for logins written"
    for kind, tables in TABLES.items():
        if kind == "attributes":
            continue
        for name in tables:
            counts = logins_of(table(tmp_path, kind, name))
            assert set(counts) <= set(sb.login_ids) and all(count > 0 for count in counts.values())
    assert set(logins_of(table(tmp_path, "investments", "accounts"))) == set(sb.login_ids)


def investments_calls(sb: bf.Sandbox) -> int:
    return sum(1 for request in sb.requests if "Investments" in request["path"])


def test_a_login_id_given_in_two_cases_is_one_login(tmp_path: Path) -> None:
    # The service compares LoginIds in any case: one login, fetched and written once.
    with bf.Sandbox(logins=2) as sb:
        client = client_of(sb)
        first, second = sb.login_ids
        report = bf.export(client, [first, first.upper(), second], tmp_path)
        assert report.logins_written == 2
        assert set(logins_of(table(tmp_path, "investments", "accounts"))) == {first, second}
        before = investments_calls(sb)
        with pytest.raises(bf.ConfigError) as again:
            bf.export(client, [first.upper(), second.upper()], tmp_path, resume=True)
        assert again.value.field == "resume", "both are written in the run: nothing to resume"
        assert investments_calls(sb) == before, "nothing sent for a login written under another case"
        # A kind added then writes each login as the others have it: a join on login_id matches.
        upper = [first.upper(), second.upper()]
        bf.export(client, upper, tmp_path, what="investments,accounts", resume=True)
        assert set(logins_of(table(tmp_path, "accounts", "accounts"))) == {first, second}


def test_a_resume_must_ask_for_each_kind_as_the_export_did(many: bf.Sandbox, tmp_path: Path) -> None:
    client = client_of(many)
    ids = many.login_ids[:2]
    bf.export(client, ids[:1], tmp_path, what="accounts,attributes:income", days=90)
    # A run killed before its end leaves no manifest: its record in the journal still says.
    (tmp_path / "_manifest.json").unlink()
    cases: list[tuple[dict[str, Any], str, str]] = [
        ({"what": "accounts", "days": 365}, "days", "days=Days90"),
        ({"what": "accounts"}, "days", "days=Days90"),
        ({"what": "attributes:lending"}, "what", "what=attributes:income"),
    ]
    for options, field, says in cases:
        with pytest.raises(bf.ConfigError) as raised:
            bf.export(client, ids, tmp_path, resume=True, **options)
        assert raised.value.field == field and says in str(raised.value), raised.value
    assert len(logins_of(table(tmp_path, "accounts", "accounts"))) == 1, "nothing written by a refused resume"
    # Asked as before, or a kind added: the resume goes on.
    report = bf.export(client, ids, tmp_path, resume=True, what="accounts,investments", days="Days90")
    # Both are now in both kinds: the first login's accounts came from the first run.
    assert (report.logins_written, report.logins_skipped) == (2, 0)
    manifest = json.loads((tmp_path / "_manifest.json").read_text())
    # The export's kinds, the ones this run did not ask for too; not complete over those.
    assert manifest["what"] == ["accounts", "attributes:income", "investments"]
    assert manifest["kinds"]["accounts"]["options"]["days"] == "Days90"
    assert manifest["complete"] is False
    # One run, written by two processes: the first, and the resume that went on with it.
    [run] = manifest["runs"]
    assert run["what"] == ["accounts", "attributes", "investments"] and len(run["processes"]) == 2
    done = bf.export(client, ids, tmp_path, resume=True, what="accounts,investments,attributes:income", days=90)
    assert done.logins_skipped == 1
    assert json.loads((tmp_path / "_manifest.json").read_text())["complete"] is True


@pytest.mark.parametrize("form", ["export", "aexport"])
def test_a_resumed_login_whose_session_expired_meanwhile_starts_over(tmp_path: Path, form: str) -> None:
    # A resume the next night: the RequestIds still pending at the end of the first run have
    # expired at the service since; each login starts over instead of failing once more.
    with bf.Sandbox(logins=2, pending_seconds=1.0, session_idle_seconds=0.5, session_processing_seconds=0.5) as sb:
        first = bf.export(client_of(sb, poll_timeout=0.05), sb.login_ids, tmp_path)
        assert first.logins_failed == 2 and all(isinstance(e, bf.PendingTimeout) for _, e in first.failed)
        time.sleep(1.0)
        before = authorizes(sb)
        if form == "export":
            again = bf.export(client_of(sb), sb.login_ids, tmp_path, resume=True)
        else:
            client = sb.async_client(poll_interval=0.01, poll_timeout=30)
            again = asyncio.run(bf.aexport(client, sb.login_ids, tmp_path, resume=True))
        assert (again.logins_written, again.logins_failed) == (2, 0), again.failed
        assert authorizes(sb) - before == 2, "each login opened a new session"
    assert (tmp_path / "_failures.jsonl").read_text() == ""
    assert set(logins_of(table(tmp_path, "investments", "accounts"))) == set(sb.login_ids)


def test_a_run_stopped_before_a_kind_began_reports_its_tables_with_no_rows(
    many: bf.Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bankfeed._export import run as export_run
    from bankfeed._export.options import ExportOptions
    from bankfeed._export.tally import Tally

    take = Tally.take

    def ctrl_c_after_one(self: Any, *args: Any) -> None:
        take(self, *args)
        raise KeyboardInterrupt

    monkeypatch.setattr(Tally, "take", ctrl_c_after_one)
    # As the command asks: Ctrl-C ends the run with a report rather than raising.
    options = ExportOptions.of(
        what="investments,accounts",
        format="parquet",
        concurrency=4,
        resume=False,
        wait_lock=0.0,
        allow_shared_out=False,
        progress=False,
        days=None,
        batch_logins=1000,
        on_challenge=None,
        csv_formulas="escape",
        money=None,
        max_consecutive_failures=20,
        full_refresh=False,
        keep_raw=False,
    )
    report = export_run._run(client_of(many), many.login_ids, tmp_path, options, raise_interrupt=False)
    assert report.interrupted and report.written["investments/accounts"] > 0
    # The command's summary lists every table of the kinds asked, as a cluster run's does.
    assert set(report.written) == {f"{kind}/{name}" for kind in ("investments", "accounts") for name in TABLES[kind]}
    assert report.written["accounts/transactions"] == 0


def test_a_commit_cut_while_its_journal_entry_was_written_is_fetched_again(tmp_path: Path) -> None:
    # Ctrl-C between writing a batch's journal entry and renaming it into place (the commit)
    # leaves the entry's temporary file and the parts' (what the ctrl-c case of
    # test_a_run_stopped_in_its_middle_resumes_with_each_login_once met, by chance, under load).
    with bf.Sandbox(logins=LOGINS) as sb:
        client = client_of(sb)
        bf.export(client, sb.login_ids[:3], tmp_path)
        journal = tmp_path / "_journal" / "investments"
        [entry] = list(journal.glob("*.json"))
        entry.rename(journal / f".{entry.name}.tmp")
        for part in tmp_path.glob("investments/*/run_date=*/run_id=*/part-*"):
            part.rename(part.with_name(f".{part.name}.tmp"))
        again = bf.export(client, sb.login_ids, tmp_path, resume=True)
        assert (again.logins_written, again.logins_skipped) == (LOGINS, 0), "the cut batch was not committed"
    assert not list(tmp_path.rglob("*.tmp")), "what the cut commit left is deleted"
    assert logins_of(table(tmp_path, "investments", "accounts")).keys() == set(sb.login_ids)


def test_a_login_still_pending_resumes_its_request_id_without_a_new_session(tmp_path: Path) -> None:
    with bf.Sandbox(logins=2, pending_seconds=1.0) as sb:
        impatient = client_of(sb, poll_timeout=0.05)
        first = bf.export(impatient, sb.login_ids, tmp_path)
        assert first.logins_failed == 2
        assert all(isinstance(error, bf.PendingTimeout) for _, error in first.failed)
        failures = [json.loads(line) for line in (tmp_path / "_failures.jsonl").read_text().splitlines()]
        pending = [error for _, error in first.failed if isinstance(error, bf.PendingTimeout)]
        assert {f["request_id"] for f in failures} == {error.request_id for error in pending}
        before = authorizes(sb)
        time.sleep(1.0)
        again = bf.export(client_of(sb), sb.login_ids, tmp_path, resume=True)
        assert again.logins_written == 2 and again.logins_failed == 0
        assert authorizes(sb) == before, "the pending RequestIds were polled, with no new Authorize"
    assert (tmp_path / "_failures.jsonl").read_text() == ""
    assert set(logins_of(table(tmp_path, "investments", "accounts"))) == set(sb.login_ids)


def test_csv_and_small_batches_make_many_complete_files(many: bf.Sandbox, tmp_path: Path) -> None:
    import pyarrow.csv

    report = bf.export(client_of(many), many.login_ids, tmp_path, format="csv", batch_logins=3)
    files = sorted((tmp_path / "investments" / "accounts").rglob("part-*.csv"))
    assert len(files) == 3  # 8 logins in batches of 3
    rows = sum(pyarrow.csv.read_csv(file).num_rows for file in files)
    assert rows == report.written["investments/accounts"]
    assert not list(tmp_path.rglob("*.tmp"))


def test_csv_without_pyarrow_has_the_same_rows_and_columns(
    many: bf.Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import csv
    import datetime

    ids = many.login_ids[:3]
    bf.export(client_of(many), ids, tmp_path / "with", format="csv")
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # `import pyarrow` fails, as on a bare machine
    bf.export(client_of(many), ids, tmp_path / "without", format="csv")
    monkeypatch.undo()

    def rows(out: Path, name: str = "transactions") -> list[dict[str, str]]:
        files = sorted((out / "investments" / name).rglob("part-*.csv"))
        return [row for file in files for row in csv.DictReader(file.read_text().splitlines())]

    with_pyarrow, without = rows(tmp_path / "with"), rows(tmp_path / "without")
    assert list(without[0]) == list(with_pyarrow[0]) == bf.schema("investments", "transactions").names
    assert len(without) == len(with_pyarrow) > 0
    key = ("login_id", "transaction_id")
    assert sorted(tuple(r[k] for k in key) for r in without) == sorted(tuple(r[k] for k in key) for r in with_pyarrow)
    for row in without:
        assert row["request_id"] and row["login_id"] in ids
        assert datetime.datetime.fromisoformat(row["fetched_at"]).tzinfo == datetime.timezone.utc
    # A list column is JSON text in both.
    aliases = [
        {row["security_id"]: json.loads(row["aliases"]) for row in rows(tmp_path / side, "securities")}
        for side in ("with", "without")
    ]
    assert aliases[0] == aliases[1] and any(aliases[0].values())


def test_the_async_form_writes_the_same(many: bf.Sandbox, tmp_path: Path) -> None:
    async def main() -> bf.ExportReport:
        client = many.async_client(poll_interval=0.01)
        return await bf.aexport(client, many.login_ids, tmp_path)

    report = asyncio.run(main())
    assert report.logins_written == LOGINS
    assert set(logins_of(table(tmp_path, "investments", "positions"))) <= set(many.login_ids)
    assert table(tmp_path, "investments", "accounts").num_rows == report.written["investments/accounts"]


def test_login_ids_come_from_any_iterable_of_text(many: bf.Sandbox, tmp_path: Path) -> None:
    import pandas

    ids = many.login_ids[:3]
    for n, source in enumerate([pandas.Series(ids), pyarrow.array(ids), pyarrow.chunked_array([ids[:1], ids[1:]])]):
        report = bf.export(client_of(many), source, tmp_path / str(n))
        assert report.logins_written == 3, type(source)


def test_wrong_arguments_are_refused_before_anything_is_written(many: bf.Sandbox, tmp_path: Path) -> None:
    client = client_of(many)
    cases: list[tuple[dict[str, Any], str]] = [
        ({"what": "gold"}, "what"),
        ({"what": ["investments", "investments"]}, "what"),
        ({"format": "xlsx"}, "format"),
        ({"what": "accounts", "days": 30}, "days"),
        ({"batch_logins": 0}, "batch_logins"),
    ]
    for options, field in cases:
        with pytest.raises(bf.ConfigError) as raised:
            bf.export(client, many.login_ids, tmp_path / "x", **options)
        assert raised.value.field == field
    assert not (tmp_path / "x").exists()
    with pytest.raises(TypeError, match="aexport"):
        bf.export(many.async_client(), many.login_ids, tmp_path / "y")  # type: ignore[arg-type]


def test_a_whole_table_of_login_ids_is_refused_as_the_bulk_calls_refuse_it(many: bf.Sandbox, tmp_path: Path) -> None:
    import pandas
    import polars

    import bankfeed.dask
    import bankfeed.dlt

    ids = many.login_ids[:2]
    client = client_of(many)
    readers: dict[str, Callable[[Any], object]] = {
        "export": lambda value: bf.export(client, value, tmp_path / "x"),
        "dask.read": lambda value: bankfeed.dask.read(client, value, "investments", "positions"),
        "dlt.source": lambda value: bankfeed.dlt.source(client, value),
    }
    # A pandas DataFrame iterates its column names: "login_id" was taken for a LoginId.
    frames = [
        pandas.DataFrame({"login_id": ids}),
        pyarrow.table({"login_id": ids}),
        pyarrow.record_batch({"login_id": ids}),
        polars.DataFrame({"login_id": ids}),
        polars.LazyFrame({"login_id": ids}),
    ]
    for frame in frames:
        with pytest.raises(TypeError) as bulk:
            client.investments_many(frame)
        for name, read in readers.items():
            with pytest.raises(TypeError) as raised:
                read(frame)
            assert str(raised.value) == str(bulk.value), (name, type(frame))
            assert 'frame["login_id"]' in str(raised.value)
    assert not (tmp_path / "x").exists()


def test_schema_and_counts_name_what_is_wrong(many: bf.Sandbox) -> None:
    import bankfeed.dask

    assert bf.schema("attributes:income", "values") == bf.schema("attributes", "values")
    with pytest.raises(bf.ConfigError) as kind:
        bf.schema("investment", "positions")
    assert kind.value.field == "kind" and "'investment'" in str(kind.value)
    # Counts as the core checks its own: a wrong type is a TypeError, a wrong value a ConfigError.
    with pytest.raises(TypeError, match="partition_size must be an int of at least 1, not str"):
        bankfeed.dask.read(client_of(many), many.login_ids, "investments", "positions", partition_size="10")  # type: ignore[arg-type]
    with pytest.raises(bf.ConfigError) as table:
        bf.schema("accounts", "positions")
    assert table.value.field == "table" and "accounts, transactions" in str(table.value)
    with pytest.raises(TypeError, match="kind must be a str, not int"):
        bf.schema(1, "positions")  # type: ignore[arg-type]


def test_the_options_of_a_kind_are_refused_before_anything_is_fetched(many: bf.Sandbox) -> None:
    import bankfeed.dask
    import bankfeed.dlt

    client = client_of(many)
    before = len(many.requests)
    with pytest.raises(bf.ConfigError) as read:
        bankfeed.dask.read(client, many.login_ids, "attributes", "values", package="nosuch")
    assert read.value.field == "package"
    with pytest.raises(TypeError, match=r"client.investments_many\(\), which takes no 'bogus'"):
        bankfeed.dask.read(client, many.login_ids, "investments", "positions", bogus=1)
    with pytest.raises(bf.ConfigError) as source:
        bankfeed.dlt.source(client, many.login_ids, what=["attributes:nosuch"])
    assert source.value.field == "what" and "package" in str(source.value)
    assert len(many.requests) == before


# --- The command ------------------------------------------------------------------------------


def test_the_command_exports_a_file_of_login_ids_some_bad(many: bf.Sandbox, tmp_path: Path) -> None:
    ids = tmp_path / "ids.csv"
    # Saved by Excel as "CSV UTF-8": a byte order mark before the header.
    ids.write_text("\ufefflogin_id,name\n" + "".join(f"{i},x\n" for i in [*many.login_ids[:3], BAD]), "utf-8")
    out = tmp_path / "out"
    args = ["--base-url", many.url, "--customer-id", many.customer_id, "--poll-interval", "0.01"]
    done = command("--logins", str(ids), "--out", str(out), *args, env=keys_of(many))
    assert done.returncode == 1, done.stderr
    assert "written: 3 logins" in done.stdout and "ConfigError 1" in done.stdout, done.stdout
    assert "--resume tries them again" in done.stdout, done.stdout
    assert str(out / "_failures.jsonl") in done.stdout
    assert set(logins_of(table(out, "investments", "accounts"))) == set(many.login_ids[:3])
    again = command("--logins", str(ids), "--out", str(out), "--resume", *args, env=keys_of(many))
    assert again.returncode == 1 and "already written" in again.stdout, again.stdout
    good = command(*many.login_ids[:2], "--out", str(tmp_path / "good"), *args, env=keys_of(many))
    assert good.returncode == 0, good.stderr


def test_usage_errors_exit_2_with_one_line(many: bf.Sandbox, tmp_path: Path) -> None:
    args = ["--base-url", many.url, "--customer-id", many.customer_id]
    (tmp_path / "a-file").write_text("")
    (tmp_path / "no-login-id.csv").write_text(f"name,id\nx,{many.login_ids[0]}\n")
    for extra, says in [
        (["--what", "gold"], "--what"),
        (["--timeout", "-1"], "--timeout"),
        (["--customer-id", "a/b"], "--customer-id"),
        (["--logins", str(tmp_path / "missing.txt")], "--logins"),
        # argparse's own errors: one line too, naming the subcommand's usage, not a dozen lines of it.
        (["--frobnicate"], "--frobnicate"),
        (["--what", "accounts", "--days", "30"], "--days"),
        (["--concurrency", "lots"], "--concurrency"),
        # Checked before anything is written: the options of a kind, the output, the scheduler.
        (["--what", "attributes:nosuchpackage"], "--what"),
        (["--days", "90"], "--days"),
        (["--out", str(tmp_path / "a-file")], "--out"),
        (["--out", str(tmp_path / "a-file" / "below")], "--out"),
        (["--partition-size", "10"], "--partition-size"),
        (["--scheduler", "nonsense"], "--scheduler"),
        (["--logins", str(tmp_path / "no-login-id.csv")], "login_id column"),
    ]:
        done = command(many.login_ids[0], "--out", str(tmp_path / "o"), *args, *extra)
        assert done.returncode == 2, (extra, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and says in lines[0], done.stderr
        assert "Traceback" not in done.stderr
        assert not (tmp_path / "o").exists(), f"{extra}: refused before anything was written"
    done = command(many.login_ids[0], *args)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "--out" in done.stderr, done.stderr
    # A key is refused by the name of its variable, never shown.
    done = command(many.login_ids[0], "--out", str(tmp_path / "k"), *args, env={"BANKFEED_API_KEY": "a b"})
    assert done.returncode == 2 and done.stderr.startswith("error: BANKFEED_API_KEY: "), done.stderr
    assert "a b" not in done.stderr


def test_a_key_typed_on_the_command_line_is_refused_and_never_shown(many: bf.Sandbox, tmp_path: Path) -> None:
    args = ["--base-url", many.url, "--customer-id", many.customer_id]
    for typed in (["--api-key", "sk-typed-2f9c41"], ["--secret-key=sk-typed-2f9c41"], ["--token", "sk-typed-2f9c41"]):
        done = command(many.login_ids[0], "--out", str(tmp_path / "o"), *args, *typed)
        assert done.returncode == 2, done.stderr
        assert "sk-typed-2f9c41" not in done.stderr + done.stdout, typed
        assert done.stderr.count("\n") == 1 and "BANKFEED_API_KEY" in done.stderr, done.stderr
    assert not (tmp_path / "o").exists()


def test_the_command_logs_on_stderr_at_the_level_asked(tmp_path: Path) -> None:
    api_key, secret_key = "ak-logged-7c1d2e", "sk-logged-4f8a90"
    with bf.Sandbox(logins=1, api_key=api_key, secret_key=secret_key) as sb:
        args = [*sb.login_ids, "--base-url", sb.url, "--customer-id", sb.customer_id, "--poll-interval", "0.01"]
        keys = {"BANKFEED_API_KEY": api_key, "BANKFEED_SECRET_KEY": secret_key}
        quiet = command(*args, "--out", str(tmp_path / "a"), "--quiet", env=keys)
        logged = command(*args, "--out", str(tmp_path / "b"), "--quiet", "--log-level", "debug", env=keys)
    assert quiet.returncode == logged.returncode == 0, logged.stderr
    assert quiet.stderr == ""
    assert " DEBUG bankfeed.http: Investments POST " in logged.stderr, logged.stderr
    assert api_key not in logged.stderr and secret_key not in logged.stderr


#: What the command's process runs with once it is set up, told by a child (it is process-wide).
SETTLED = (
    "import os, pyarrow; from bankfeed._export.cli import _settle_process; _settle_process(); "
    "print(os.environ['OPENBLAS_NUM_THREADS'], pyarrow.default_memory_pool().backend_name)"
)


def test_the_command_sets_up_its_process_and_keeps_what_the_user_chose() -> None:
    def settled(**env: str) -> str:
        base = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "ARROW_DEFAULT_MEMORY_POOL")}
        done = subprocess.run(
            [sys.executable, "-c", SETTLED], capture_output=True, text=True, check=True, env={**base, **env}
        )
        return done.stdout.strip()

    # No OpenBLAS threads spinning beside the export, and Arrow's memory through malloc
    # (BENCHMARKS.md, export) ...
    assert settled() == "1 system"
    # ... unless the user said otherwise.
    assert settled(OPENBLAS_NUM_THREADS="4", ARROW_DEFAULT_MEMORY_POOL="mimalloc") == "4 mimalloc"


def test_without_a_base_url_the_command_exports_an_embedded_sandbox(tmp_path: Path) -> None:
    done = command("--out", str(tmp_path), "--sandbox-logins", "3", "--poll-interval", "0.01")
    assert done.returncode == 0, done.stderr
    assert "embedded sandbox" in done.stderr
    assert len(set(logins_of(table(tmp_path, "investments", "accounts")))) == 3


def test_an_unreachable_service_fails_every_login_and_exits_5(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    done = command(
        str(__import__("uuid").UUID(int=1)),
        "--out",
        str(tmp_path),
        "--base-url",
        f"http://127.0.0.1:{port}",
        "--customer-id",
        "cust",
        "--max-retries",
        "0",
    )
    # Nothing written because the service was not there: a status of its own
    # (test_export_outage.py), not 1, "some failed".
    assert done.returncode == 5, done.stderr
    assert "the one login tried failed (1 TransportError in " in done.stderr


#: A sandbox in a process of its own, slow enough (each data call pending for a while) that an
#: export is stopped in its middle. It asks for no keys: the case is about resuming.
SLOW_SANDBOX = [
    *[sys.executable, "-m", "bankfeed", "sandbox", "--port", "0", "--no-auth"],
    *["--logins", "40", "--pending-polls", "3"],
]


@pytest.fixture
def slow_sandbox(tmp_path: Path) -> Iterator[tuple[str, str, list[str]]]:
    ids = tmp_path / "ids.txt"
    server = subprocess.Popen(
        [*SLOW_SANDBOX, "--login-ids-file", str(ids)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        url = line.split(" on ")[1].split(" ")[0]
        customer = line.split("customer id ")[1].rstrip(")\n")
        yield url, customer, ids.read_text().split()
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(30)


def stop_when_committed(process: subprocess.Popen[str], journal: Path, how: int) -> None:
    """Sends ``how`` to ``process`` once its first batch is committed."""
    until = time.monotonic() + 120
    while time.monotonic() < until and not (journal.exists() and any(journal.glob("*.json"))):
        assert process.poll() is None, process.communicate()
        time.sleep(0.02)
    process.send_signal(how)
    process.wait(60)


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT], ids=["kill-9", "ctrl-c"])
def test_a_run_stopped_in_its_middle_resumes_with_each_login_once(
    slow_sandbox: tuple[str, str, list[str]], tmp_path: Path, how: int
) -> None:
    url, customer, ids = slow_sandbox
    out = tmp_path / "out"
    args = [
        *ids,
        "--out",
        str(out),
        "--base-url",
        url,
        "--customer-id",
        customer,
        "--poll-interval",
        "0.05",
        "--concurrency",
        "4",
        "--batch-logins",
        "2",
        "--quiet",
    ]
    environment = {key: value for key, value in os.environ.items() if not key.startswith("BANKFEED_")}
    process = subprocess.Popen(
        [sys.executable, "-m", "bankfeed", "export", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
    )
    stop_when_committed(process, out / "_journal" / "investments", how)
    if how == signal.SIGINT:
        assert process.returncode == 130
        manifest = json.loads((out / "_manifest.json").read_text())
        assert manifest["runs"][-1]["status"] == "interrupted"
    written = set(logins_of(table(out, "investments", "accounts")))
    assert 0 < len(written) < len(ids), "stopped in the middle"
    done = command(*args, "--resume")
    assert done.returncode == 0, done.stderr
    for name in TABLES["investments"]:
        counts = logins_of(table(out, "investments", name))
        assert set(counts) <= set(ids)
        if name == "accounts":
            assert set(counts) == set(ids)
    # The manifest tells one run, written by two processes: the stopped one (even killed before it
    # could say so) and the resume, which went on with it to its end.
    [run] = json.loads((out / "_manifest.json").read_text())["runs"]
    assert run["status"] == "complete" and len(run["processes"]) == 2, run
    # Each login once: its accounts are the same rows as a fresh fetch would give, no more.
    accounts = table(out, "investments", "accounts")
    keys = list(zip(accounts.column("login_id").to_pylist(), accounts.column("account_id").to_pylist(), strict=True))
    assert len(keys) == len(set(keys)), "no login is in the dataset twice"
    assert not list(out.rglob("*.tmp"))


def test_no_key_reaches_a_file_the_output_or_the_report(tmp_path: Path) -> None:
    api_key, secret_key = "ak-export-5d1e9c", "sk-export-8b2f47"
    with bf.Sandbox(logins=2, api_key=api_key, secret_key=secret_key) as sb:
        client = sb.client(poll_interval=0.01, api_key=api_key, secret_key=secret_key)
        report = bf.export(client, [*sb.login_ids, BAD], tmp_path / "py", what="investments,accounts")
        keys = {"BANKFEED_API_KEY": api_key, "BANKFEED_SECRET_KEY": secret_key}
        args = ["--base-url", sb.url, "--customer-id", sb.customer_id, "--poll-interval", "0.01"]
        done = command(*sb.login_ids, BAD, "--out", str(tmp_path / "cli"), *args, env=keys)
    assert report.logins_written == 2 and done.returncode == 1, done.stderr
    texts = [repr(report), *(f"{error!r} {error}" for _, error in report.failed), done.stdout, done.stderr]
    texts += [path.read_bytes().decode("latin-1") for path in tmp_path.rglob("*") if path.is_file()]
    assert len(texts) > 10
    assert not [text for text in texts if api_key in text or secret_key in text]
