"""Fetch data from a saved connection and turn every result into tables.

Investments, account detail and summary, statements (PDF files), attributes by package and by
name, each as pandas, polars, Arrow or plain records; saved payloads read back with ``from_json``;
finally the saved connection is deleted.

Run it with ``python examples/data.py`` (pandas, polars and pyarrow installed).
"""

from __future__ import annotations

import json
import math

import pandas as pd
import polars as pl

import bankfeed as bf

INSTITUTION = "FlinksCapital"


def save_login(client: bf.Client) -> str:
    """A saved connection of the sandbox user without challenges; its LoginId."""
    step = client.authorize(INSTITUTION, "greatday_nomfa", "Everyday", save=True)
    if not isinstance(step, bf.Session) or step.login_id is None:
        raise SystemExit("expected a saved session at once")
    return step.login_id


def show(name: str, table: bf.Table) -> None:
    print(f"{name}: {len(table)} rows, columns {table.columns[:5]}...")


def investments(client: bf.Client, login_id: str) -> None:
    inv: bf.Investments = client.investments(login_id)
    print(f"investments: value {inv.value}, cash {inv.cash}, RequestId {inv.request_id}")
    show("positions", inv.positions)
    show("securities", inv.securities)
    positions: pd.DataFrame = inv.positions.to_pandas()
    print(positions[["symbol", "market_value"]].head(3).to_string(index=False))

    # A Table speaks the Arrow C stream interface: polars (and pyarrow.table) take it without a copy.
    trades = pl.DataFrame(inv.transactions)
    accounts = inv.accounts.to_arrow()
    print(f"polars transactions: {trades.height} rows; arrow accounts: {accounts.num_rows} rows")

    # The payload as the service sent it, read back later (from a file, a cache, ...).
    again = bf.Investments.from_json(json.dumps(inv.raw))
    assert len(again.positions) == len(inv.positions)
    print("investments read back from JSON")


def banking(session: bf.Session) -> None:
    detail: bf.Accounts = session.accounts_detail(with_transactions=True, days="Days365")
    show("accounts", detail.accounts)
    records = detail.transactions.to_records()
    first = records[0]
    print(f"first transaction: {first['date']} {first['description']!r} debit {first['debit']}")
    frame: pl.DataFrame = detail.transactions.to_polars()
    print(f"polars: {frame.height} transactions")

    summary = session.accounts_summary(with_balance=True)
    print(f"summary: {len(summary.accounts)} accounts, EFT-eligible ratio {summary.eft_eligible_ratio}")
    arrow = summary.accounts.to_arrow()
    print(f"summary as Arrow: {arrow.num_rows} rows")
    print(f"detail read back: {len(bf.Accounts.from_json(json.dumps(detail.raw)).transactions)} transactions")

    statements: bf.Statements = session.statements(number_of_statements="MostRecent")
    show("statements", statements.statements)
    for file in statements.files[:2]:
        pdf = file["content"]
        is_pdf = isinstance(pdf, bytes) and pdf.startswith(b"%PDF")
        print(f"statement {file['unique_id']} of account {file['account_number']}: PDF {is_pdf}, {len(pdf)} bytes")


def attributes(client: bf.Client, session: bf.Session, login_id: str) -> None:
    catalogue = bf.Sandbox.attribute_catalogue()
    print(f"sandbox attributes: {len(catalogue)}; packages {sorted(bf.Sandbox.attribute_packages())}")
    income: bf.Attributes = client.attributes(login_id, package="income")
    print(f"income groups: {income.groups}")
    for row in income.values.to_records()[:3]:
        print(f"  {row['attribute']} = {row['value']}")

    custom = session.attributes(  # a custom set: Tier 2 packages only
        {"Card": ["balance_min", "count_nsf", "sum_government_income"]},
        filters={"AccountCategory": ["Operations"]},
        detail=["count_nsf"],
    )
    values = custom.values.to_pandas().set_index("attribute")["value"]
    nsf = custom["count_nsf"]
    government = values["sum_government_income"]
    print(f"custom: count_nsf {nsf}, government income {'none' if math.isnan(government) else government}")
    print(f"custom: {len(custom.detail)} transactions behind count_nsf; as dict {sorted(custom.to_dict())}")
    print(f"attributes read back: {bf.Attributes.from_json(json.dumps(custom.raw)).groups}")


def main() -> None:
    # tier2: the customer has a Tier 2 package, which the custom attributes set needs (a package
    # such as income needs only its use-case package, which every sandbox customer has).
    # card_in_use_seconds=0: the login made here is deleted at the end, a moment after it was
    # made, which the service (and the sandbox, for 3 s) refuses with CARD_IN_USE.
    with bf.Sandbox(pending_polls=1, tier2=True, card_in_use_seconds=0) as sb:
        client = sb.client(poll_interval=0.01)
        login_id = save_login(client)
        investments(client, login_id)
        session = client.authorize_cached(login_id)
        banking(session)
        attributes(client, session, login_id)
        answer = client.delete_login(login_id)
        print(f"deleted: {answer}")
        print("data: done")


if __name__ == "__main__":
    main()
