"""A nightly ETL job: every saved login's investments and account detail into Parquet datasets,
read back with pandas, the next night's run (only new transactions), a rerun that resumes, and the
same with an AsyncClient.

Against the real service, drop the Sandbox, build ``bf.Client()`` from the ``BANKFEED_*``
variables, and read the LoginIds from where the team keeps them. The command line does the same:
``bankfeed export --logins ids.csv --out nightly --what investments,accounts --days 365`` every
night (docs/export.md#a-nightly-job).
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

import pandas

import bankfeed as bf


def nightly(sb: bf.Sandbox, out: Path) -> None:
    login_ids = [*sb.login_ids, "not-a-guid"]  # one bad id among the good ones: it fails alone
    with sb.client(poll_interval=0.05) as client:
        report: bf.ExportReport = bf.export(client, login_ids, out, what=["investments", "accounts"], days=365)
    print(report)
    print("positions written:", report.written["investments/positions"])
    for login_id, error in report.failed:
        print("failed:", login_id, type(error).__name__)

    # Each table is a dataset; every row starts with login_id, request_id and fetched_at, and
    # ends with the run that wrote it (run_date, run_id: the directories of its partition).
    positions = pandas.read_parquet(out / "investments" / "positions")
    print(positions.groupby("login_id")["market_value"].sum().head(3))
    transactions = pandas.read_parquet(out / "accounts" / "transactions")
    columns = bf.schema("accounts", "transactions").names  # a pyarrow.Schema
    assert list(transactions.columns) == [*columns, "run_date", "run_id"]
    print(len(transactions), "transactions of", transactions["login_id"].nunique(), "logins")

    failures = [json.loads(line) for line in (out / "_failures.jsonl").read_text().splitlines()]
    print("to rerun:", sorted({failure["login_id"] for failure in failures}))

    # Tomorrow's run: the export's next run, a snapshot of every login again, and only the
    # transactions that are new (the sandbox's data did not move: none).
    with sb.client(poll_interval=0.05) as client:
        tomorrow = bf.export(client, login_ids, out, what=["investments", "accounts"], days=365)
    print("next run:", tomorrow.run, tomorrow.written["accounts/transactions"], "new transactions")
    latest = bf.read_latest(out, "investments", "positions")  # each login's newest snapshot
    print(latest.num_rows, "positions of run", tomorrow.run)

    # After a crash, or to try the failures again: what the run wrote is skipped, nothing is sent for it.
    with sb.client(poll_interval=0.05) as client:
        again = bf.export(client, login_ids, out, what=["investments", "accounts"], days=365, resume=True)
    print("resumed:", again.logins_skipped, "skipped,", again.logins_written, "written,", again.logins_failed, "failed")


async def with_async_client(sb: bf.Sandbox, out: Path) -> None:
    async with sb.async_client(poll_interval=0.05) as client:
        report = await bf.aexport(client, sb.login_ids, out, what=["attributes:income"])
    print("attributes:", report.written["attributes/values"], "values")


with bf.Sandbox(logins=20) as sb, tempfile.TemporaryDirectory() as directory:
    nightly(sb, Path(directory) / "nightly")
    asyncio.run(with_async_client(sb, Path(directory) / "attributes"))
print("nightly export: done")
