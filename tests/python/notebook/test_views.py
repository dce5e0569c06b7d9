"""The notebook views (``_repr_html_``) of tables, results, sessions, combined results and export
reports (docs/notebooks.md): what each shows, that each stays short for a large result, that
every value is escaped, and that no secret (a password, a username, a whole LoginId) is shown."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from kernelhelpers import outputs_of, run_cells

import bankfeed as bf
import datahelpers as dh

#: A value a payload may carry that a notebook must show as text, never run.
SCRIPT = "<script>alert('x')</script>"


@pytest.fixture(scope="module")
def data() -> dh.Fetched:
    """``greatday_nomfa``'s natural data, fetched once."""
    return dh.fetched(None, None)


@pytest.fixture(scope="module")
def big() -> dh.Fetched:
    """A login with 100,000 banking transactions."""
    return dh.fetched(0, 100_000)


def text_of(html: str) -> str:
    """The HTML without its tags: roughly what a person reads."""
    return re.sub(r"<[^>]+>", " ", html)


# --- Table ---------------------------------------------------------------------------------


def test_a_table_shows_its_shape_its_column_types_and_its_first_and_last_rows(data: dh.Fetched) -> None:
    table = data.detail.transactions
    html = table._repr_html_()
    rows = table.to_records()
    assert len(rows) > 10, "the natural data has more rows than the view shows"
    assert f"{len(rows):,} rows \u00d7 {len(table.columns)} columns" in html
    for name in table.columns:
        assert f">{name}<" in html
    # Arrow's names of the types, as pyarrow and polars show a frame's dtypes.
    for dtype in ("string", "date32[day]", "double"):
        assert f">{dtype}<" in html
    ids = [row["transaction_id"] for row in rows]
    for shown in [*ids[:5], *ids[-5:]]:
        assert f">{shown}<" in html
    for hidden in ids[5:-5]:
        assert f">{hidden}<" not in html
    assert "\u2026" in html  # the ellipsis row between


def test_a_small_table_shows_every_row_and_nulls_as_null(data: dh.Fetched) -> None:
    table = data.investments.accounts
    html = table._repr_html_()
    assert len(table) <= 10
    for account in table.column("account_id"):
        assert f">{account}<" in html
    assert "\u2026</td>" not in html
    assert ">null<" in html or None not in [v for row in table.to_records() for v in row.values()]


def test_a_table_of_100000_rows_has_a_short_view(big: dh.Fetched) -> None:
    table = big.detail.transactions
    assert len(table) >= 100_000
    html = table._repr_html_()
    assert f"{len(table):,} rows" in html
    assert html.count("<tr>") == 2 + 5 + 1 + 5  # two header rows, 5 first, the ellipsis, 5 last
    assert len(html) < 20_000


def test_wide_tables_show_both_ends_and_long_cells_are_cut(data: dh.Fetched) -> None:
    raw: Any = json.loads(json.dumps(data.detail.raw))
    raw["Accounts"][0]["Transactions"][0]["Description"] = "x" * 300
    table = bf.combine([("a" * 36, bf.Accounts.from_json(json.dumps(raw)))]).transactions
    assert len(bf.combine([("a" * 36, data.detail)]).accounts.columns) > 20
    wide = bf.combine([("a" * 36, data.detail)]).accounts._repr_html_()
    columns = bf.combine([("a" * 36, data.detail)]).accounts.columns
    assert f">{columns[0]}<" in wide
    assert f">{columns[-1]}<" in wide
    assert f">{columns[12]}<" not in wide  # the middle columns are left out
    html = table._repr_html_()
    assert "x" * 300 not in html
    assert "x" * 39 + "\u2026" in html


# --- results ----------------------------------------------------------------------------


def test_investments_show_their_totals_charts_and_short_tables(data: dh.Fetched) -> None:
    inv = data.investments
    html = inv._repr_html_()
    assert f"{inv.value:,.2f}" in html
    assert f"{inv.cash:,.2f}" in html
    assert str(inv.request_id) in html
    assert html.count("<svg") == 2
    assert "Value by account" in html
    assert "Largest positions" in html
    # The largest position is drawn first, named by its symbol.
    positions = sorted(
        (p for p in inv.positions.to_records() if p["market_value"] is not None), key=lambda p: -p["market_value"]
    )
    assert positions[0]["symbol"] in html
    bars = re.search(r"Largest positions.*?</svg>", html, re.S)
    assert bars is not None
    assert bars.group(0).count("<rect") == min(10, len(positions))
    for name in ("accounts", "positions", "transactions", "securities"):
        assert f"<code>.{name}</code>" in html


def test_accounts_show_counts_a_balance_line_per_account_and_short_tables(data: dh.Fetched) -> None:
    detail = data.detail
    html = detail._repr_html_()
    accounts = {r["account_id"]: r["account_title"] for r in detail.transactions.to_records() if r["balance"]}
    assert f"{len(detail.transactions):,}" in html
    assert str(detail.request_id) in html
    assert "Balance over time" in html
    assert html.count("<polyline") == min(len(accounts), 6)
    for title in list(accounts.values())[:6]:
        assert f">{title}<" in html  # the legend


def test_an_accounts_summary_shows_no_chart(data: dh.Fetched) -> None:
    html = data.summary._repr_html_()
    assert "<svg" not in html
    assert "<code>.accounts</code>" in html


def test_the_balance_chart_of_100000_transactions_stays_small(big: dh.Fetched) -> None:
    html = big.detail._repr_html_()
    lines = re.findall(r'<polyline points="([^"]*)"', html)
    assert lines
    assert all(len(points.split()) <= 120 for points in lines)
    assert len(html) < 60_000


def test_statements_and_attributes_show_their_counts_and_tables(data: dh.Fetched) -> None:
    html = data.statements._repr_html_()
    assert f"{len(data.statements.statements):,}" in html
    assert "file type" in html
    tier2 = dh.attribute_sandbox(0)
    attrs = tier2.client.attributes(tier2.login_id, package="all")
    html = attrs._repr_html_()
    assert attrs.groups[0] in html
    assert f"{len(attrs.values):,} rows" in html
    assert "<code>.values</code>" in html
    assert tier2.login_id not in html  # the values' login_id column is shortened


def test_results_without_rows_show_their_tables_named_and_no_chart() -> None:
    empty = dh.fetched(0, 0)
    html = empty.detail._repr_html_()
    assert "<svg" not in html
    assert re.search(r"<code>\.transactions</code> <span[^>]*>0 rows", html)
    combined = bf.combine([("x" * 36, ValueError("no data"))])
    html = combined._repr_html_()
    assert "no result succeeded" in html
    assert "<code>ValueError</code> \u00d7 1" in html


# --- escaping -------------------------------------------------------------------------------


def scripted_investments(inv: bf.Investments) -> bf.Investments:
    """``inv`` with the first account's name and every security's symbol set to a script."""
    raw: Any = json.loads(json.dumps(inv.raw))
    raw["Accounts"][0]["Name"] = SCRIPT
    for security in raw.get("Securities") or []:
        security["Symbol"] = SCRIPT
    return bf.Investments.from_json(json.dumps(raw))


def scripted_accounts(accounts: bf.Accounts) -> bf.Accounts:
    raw: Any = json.loads(json.dumps(accounts.raw))
    for account in raw["Accounts"]:
        account["Title"] = SCRIPT
        for transaction in account.get("Transactions") or []:
            transaction["Description"] = SCRIPT
    return bf.Accounts.from_json(json.dumps(raw))


def test_every_value_is_escaped_in_tables_charts_and_errors(data: dh.Fetched) -> None:
    inv = scripted_investments(data.investments)
    assert SCRIPT in inv.accounts.column("account_name")
    accounts = scripted_accounts(data.detail)
    combined = bf.combine([("a-login", ValueError(SCRIPT)), ("b-login", data.investments)])
    report = bf.ExportReport(
        out="out/", written={"investments/accounts": 3}, failed=[("a-login", ValueError(SCRIPT))],
        logins_written=1, logins_failed=1, logins_skipped=0, elapsed=1.0,
    )  # fmt: skip
    views = {
        "table": inv.accounts._repr_html_(),
        "investments": inv._repr_html_(),  # a bar's label in the SVG, and the tables
        "accounts": accounts._repr_html_(),  # the legend of the balance chart
        "combined": combined._repr_html_(),
        "report": report._repr_html_(),
    }
    for name, html in views.items():
        assert "<script" not in html, name
        assert "&lt;script&gt;" in html, name


# --- secrets --------------------------------------------------------------------------------


def test_a_session_shows_its_ids_and_institution_but_no_username_and_no_whole_login_id(data: dh.Fetched) -> None:
    session = data.client.authorize_cached(data.login_id)
    html = session._repr_html_()
    assert session.request_id in html
    assert "FlinksCapital" in html
    assert "\u2026" + data.login_id[-4:] in html
    assert data.login_id not in html
    assert dh.USER not in html.lower()
    assert dh.PASSWORD not in html
    assert html.startswith('<div class="bankfeed-view"') and ">Session<" in html


def test_an_async_session_is_titled_as_its_class() -> None:
    data = dh.fetched(None, None, flavour="async")
    session = data.api.run(data.client.authorize_cached(data.login_id))
    html = session._repr_html_()
    assert ">AsyncSession<" in html
    assert data.login_id not in html
    assert session.request_id in html


def test_login_ids_are_shortened_in_combined_tables_and_errors(data: dh.Fetched) -> None:
    other = "0b9a7e4c-5d1f-4e2a-9c3b-7f6e5d4c3b2a"
    combined = bf.combine(
        [
            (data.login_id, data.investments),
            (other, bf.InvalidLogin(f"the login {other} is unknown")),
            ("c", ValueError("first")),
            ("d", ValueError("second")),
        ]
    )
    html = combined._repr_html_()
    assert data.login_id not in html
    assert other not in html
    assert "\u2026" + data.login_id[-4:] in html
    assert "<code>ValueError</code> \u00d7 2" in html
    assert "<code>InvalidLogin</code> \u00d7 1" in html
    assert "<code>.positions</code>" in html


def test_an_export_report_shows_rows_per_table_and_failures_by_class() -> None:
    failures: list[tuple[str, BaseException]] = [(f"login-{i:04}", TimeoutError("slow")) for i in range(7)]
    failures.append(("login-9999", ValueError("bad")))
    report = bf.ExportReport(
        out="s3://user:hunter2@bucket/nightly?token=t0ps3cret", written={"investments/positions": 1234},
        failed=failures, logins_written=12, logins_failed=8, logins_skipped=2, elapsed=3.25,
    )  # fmt: skip
    html = report._repr_html_()
    assert "investments/positions" in html
    assert "1,234" in html
    assert "<code>TimeoutError</code> \u00d7 7" in html
    assert "\u2026 and 4 more" in html
    assert "s3://bucket/nightly" in html
    assert "hunter2" not in html
    assert "t0ps3cret" not in html
    assert "login-0001" not in html


# --- in a real kernel -----------------------------------------------------------------------


@pytest.mark.notebook
def test_the_views_are_what_a_notebook_shows(tmp_path: Any) -> None:
    setup = f"""
import bankfeed as bf
sb = bf.Sandbox(pending_polls=0)
client = sb.client(poll_interval=0.01, poll_timeout=30)
session = client.authorize("{dh.INSTITUTION}", "{dh.USER}", "{dh.PASSWORD}", save=True)
inv = client.investments(session.login_id)
table = inv.positions
report = bf.export(client, [session.login_id], {str(tmp_path)!r}, what=["investments"])
detail = session.accounts_detail(with_transactions=True, days="Days365")
combined = bf.combine(client.investments_many([session.login_id, "0b9a7e4c-5d1f-4e2a-9c3b-7f6e5d4c3b2a"]))
"""
    notebook = run_cells(setup, "table", "inv", "session", "report", "detail", "combined", timeout=120)
    table_html = outputs_of(notebook, 1, "text/html")[0]
    inv_html = outputs_of(notebook, 2, "text/html")[0]
    session_html = outputs_of(notebook, 3, "text/html")[0]
    report_html = outputs_of(notebook, 4, "text/html")[0]
    assert ">Table<" in table_html and "rows \u00d7" in table_html and ">market_value<" in table_html
    assert ">Investments<" in inv_html and "<svg" in inv_html
    assert ">Session<" in session_html and dh.USER not in session_html
    assert ">ExportReport<" in report_html and "investments/positions" in report_html
    detail_html = outputs_of(notebook, 5, "text/html")[0]
    combined_html = outputs_of(notebook, 6, "text/html")[0]
    assert ">Accounts<" in detail_html and "Balance over time" in detail_html
    assert ">Combined<" in combined_html and "\u00d7 1" in combined_html  # the unknown login's error
