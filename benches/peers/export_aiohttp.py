"""The export job written by hand with aiohttp and pyarrow, as its users write it (benches/export.py).

Every login's Investments into one Parquet dataset per table, ``out/investments/<table>/``, with the
columns of ``bf.schema("investments", table)``: each login's flow is a cached Authorize, then
Investments polled through its 202s (docs/protocol.md#polling: a GET of the ``...Async`` link when
the 202 names one, else the same POST again), ``concurrency`` logins at a time. Each payload is
parsed into dicts and flattened into per-table column lists in Python (each position and
transaction joined to its account and its security, as docs/protocol.md#investments describes
the tables); every 1,000 logins the columns become pyarrow tables, written with zstd in a worker
thread so that the requests go on meanwhile.

    python benches/peers/export_aiohttp.py BASE_URL CUSTOMER_ID LOGIN_IDS_FILE OUT [CONCURRENCY]
"""

from __future__ import annotations

import asyncio
import datetime
import os
import sys
import time
from typing import Any

import aiohttp
import pyarrow
import pyarrow.compute
import pyarrow.parquet

#: Logins per part file (bf.export's default batch).
BATCH_LOGINS = 1000

_S, _F = pyarrow.string(), pyarrow.float64()
_PROVENANCE = [("login_id", _S), ("request_id", _S), ("fetched_at", pyarrow.timestamp("us", "UTC"))]
_ACCOUNT = [("account_id", _S), ("account_number", _S), ("account_name", _S), ("account_type", _S)]
SCHEMAS = {
    "accounts": pyarrow.schema(
        [
            *_PROVENANCE,
            ("account_id", _S),
            ("full_account_id", _S),
            ("account_number", _S),
            ("account_name", _S),
            ("type", _S),
            ("registered", pyarrow.bool_()),
            ("currency", _S),
            ("cash", _F),
            ("account_value", _F),
            ("currency_value", _F),
        ]
    ),
    "positions": pyarrow.schema(
        [
            *_PROVENANCE,
            *_ACCOUNT,
            ("position_id", _S),
            ("security_id", _S),
            ("symbol", _S),
            ("security_name", _S),
            ("category", _S),
            ("class", _S),
            ("quantity", _F),
            ("price", _F),
            ("book_value", _F),
            ("market_value", _F),
            ("gain_amount", _F),
            ("gain_currency_amount", _F),
            ("gain_percent", _F),
            ("currency", _S),
        ]
    ),
    "transactions": pyarrow.schema(
        [
            *_PROVENANCE,
            *_ACCOUNT,
            ("account_currency", _S),
            ("transaction_id", _S),
            ("date", pyarrow.date32()),
            ("type", _S),
            ("description", _S),
            ("security_id", _S),
            ("symbol", _S),
            ("security_name", _S),
            ("quantity", _F),
            ("fee", _F),
            ("amount", _F),
        ]
    ),
    "securities": pyarrow.schema(
        [
            *_PROVENANCE,
            ("security_id", _S),
            ("symbol", _S),
            ("name", _S),
            ("type", _S),
            ("price", _F),
            ("date", pyarrow.timestamp("us", "UTC")),
            ("currency", _S),
            ("cusip", _S),
            ("isin", _S),
            ("aliases", pyarrow.list_(_S)),
        ]
    ),
}
#: Columns read as text and converted by pyarrow, a column at a time. (A security's date has seven
#: digits of fraction, which pyarrow's cast refuses: it is parsed in Python, see ``_timestamp``.)
_CONVERTED = {("transactions", "date")}


def _timestamp(text: str | None) -> datetime.datetime | None:
    return None if text is None else datetime.datetime.fromisoformat(text)


class Batch:
    """The columns of the logins gathered since the last write, a list per column."""

    def __init__(self) -> None:
        self.logins = 0
        self.columns = {table: {name: [] for name in schema.names} for table, schema in SCHEMAS.items()}

    def add(self, login_id: str, request_id: str, fetched_at: int, payload: dict[str, Any]) -> None:
        self.logins += 1
        securities = {s.get("Id"): s for s in payload.get("Securities") or []}
        accounts = self.columns["accounts"]
        positions = self.columns["positions"]
        transactions = self.columns["transactions"]
        for account in payload.get("Accounts") or []:
            account_fields = (account.get("Id"), account.get("AccountId"), account.get("Name"), account.get("Type"))
            for name, value in zip(
                accounts,
                (
                    login_id,
                    request_id,
                    fetched_at,
                    account.get("Id"),
                    account.get("FullAccountId"),
                    account.get("AccountId"),
                    account.get("Name"),
                    account.get("Type"),
                    account.get("Registered"),
                    account.get("Currency"),
                    account.get("Cash"),
                    account.get("AccountValue"),
                    account.get("CurrencyValue"),
                ),
                strict=True,
            ):
                accounts[name].append(value)
            for position in account.get("Positions") or []:
                security = securities.get(position.get("SecurityId")) or {}
                for name, value in zip(
                    positions,
                    (
                        login_id,
                        request_id,
                        fetched_at,
                        *account_fields,
                        position.get("Id"),
                        position.get("SecurityId"),
                        security.get("Symbol"),
                        security.get("Name"),
                        position.get("Category"),
                        position.get("Class"),
                        position.get("Quantity"),
                        security.get("Price"),
                        position.get("BookValue"),
                        position.get("MarketValue"),
                        position.get("GainAmount"),
                        position.get("GainCurrencyAmount"),
                        position.get("GainPercent"),
                        position.get("Currency"),
                    ),
                    strict=True,
                ):
                    positions[name].append(value)
            for transaction in account.get("Transactions") or []:
                security = securities.get(transaction.get("SecurityId")) or {}
                for name, value in zip(
                    transactions,
                    (
                        login_id,
                        request_id,
                        fetched_at,
                        *account_fields,
                        account.get("Currency"),
                        transaction.get("Id"),
                        transaction.get("Date"),
                        transaction.get("Type"),
                        transaction.get("Description"),
                        transaction.get("SecurityId"),
                        security.get("Symbol"),
                        security.get("Name"),
                        transaction.get("Quantity"),
                        transaction.get("Fee"),
                        transaction.get("Amount"),
                    ),
                    strict=True,
                ):
                    transactions[name].append(value)
        rows = self.columns["securities"]
        for security in payload.get("Securities") or []:
            for name, value in zip(
                rows,
                (
                    login_id,
                    request_id,
                    fetched_at,
                    security.get("Id"),
                    security.get("Symbol"),
                    security.get("Name"),
                    security.get("Type"),
                    security.get("Price"),
                    _timestamp(security.get("Date")),
                    security.get("Currency"),
                    security.get("CUSIP"),
                    security.get("ISIN"),
                    security.get("Aliases") or [],
                ),
                strict=True,
            ):
                rows[name].append(value)

    def write(self, out: str, part: int) -> None:
        """Writes each table's rows to ``out/investments/<table>/part-<n>.parquet``."""
        for table, schema in SCHEMAS.items():
            arrays = []
            for field in schema:
                values = self.columns[table][field.name]
                if (table, field.name) in _CONVERTED:
                    arrays.append(pyarrow.compute.cast(pyarrow.array(values, _S), field.type))
                else:
                    arrays.append(pyarrow.array(values, field.type))
            data = pyarrow.Table.from_arrays(arrays, schema=schema)
            directory = os.path.join(out, "investments", table)
            os.makedirs(directory, exist_ok=True)
            pyarrow.parquet.write_table(data, os.path.join(directory, f"part-{part:06d}.parquet"), compression="zstd")


async def fetch(
    http: aiohttp.ClientSession, root: str, login_id: str, poll_interval: float
) -> tuple[str, dict[str, Any]]:
    """One login's RequestId and Investments payload: a cached Authorize, then the data call polled."""
    async with http.post(
        f"{root}/BankingServices/Authorize", json={"LoginId": login_id, "MostRecentCached": True}
    ) as resp:
        authorized = await resp.json()
        if resp.status != 200:
            raise RuntimeError(f"Authorize answered {resp.status}: {authorized.get('FlinksCode')}")
    request_id = authorized["RequestId"]
    body: dict[str, Any] | None = {"LoginId": login_id, "RequestId": request_id, "MostRecentCached": True}
    method, url = "POST", f"{root}/Investments"
    while True:
        async with http.request(method, url, json=body) as resp:
            data: dict[str, Any] = await resp.json()
            if resp.status == 200:
                return request_id, data
            if resp.status != 202:
                raise RuntimeError(f"Investments answered {resp.status}: {data.get('FlinksCode')}")
        request_id = data.get("RequestId") or request_id
        link = next(
            (
                link
                for link in data.get("Links") or []
                if str(link.get("rel", "")).endswith("Async") or str(link.get("href", "")).endswith("Async")
            ),
            None,
        )
        if link is not None:
            method, url, body = "GET", f"{root}/{link['href'].strip('/')}/{request_id}", None
        await asyncio.sleep(poll_interval)


async def export(
    base_url: str, customer_id: str, login_ids: list[str], out: str, concurrency: int, poll_interval: float
) -> tuple[int, list[tuple[str, str]]]:
    """Exports every login; the number written and the failures."""
    root = f"{base_url}/v3/{customer_id}"
    queue: asyncio.Queue[str] = asyncio.Queue()
    for login_id in login_ids:
        queue.put_nowait(login_id)
    batch = Batch()
    parts = 0
    written = 0
    failures: list[tuple[str, str]] = []
    writes: list[asyncio.Future[None]] = []

    def flush() -> None:
        nonlocal batch, parts, written
        full, batch = batch, Batch()
        parts += 1
        written += full.logins
        writes.append(asyncio.ensure_future(asyncio.to_thread(full.write, out, parts)))

    connector = aiohttp.TCPConnector(limit=min(concurrency, 1000))
    async with aiohttp.ClientSession(connector=connector) as http:

        async def worker() -> None:
            while not queue.empty():
                login_id = queue.get_nowait()
                try:
                    request_id, payload = await fetch(http, root, login_id, poll_interval)
                except Exception as error:
                    failures.append((login_id, repr(error)))
                    continue
                batch.add(login_id, request_id, time.time_ns() // 1000, payload)
                if batch.logins >= BATCH_LOGINS:
                    flush()

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    if batch.logins:
        flush()
    await asyncio.gather(*writes)
    return written, failures


def main() -> None:
    base_url, customer_id, ids_file, out = sys.argv[1:5]
    concurrency = int(sys.argv[5]) if len(sys.argv) > 5 else 32
    poll_interval = float(sys.argv[6]) if len(sys.argv) > 6 else 0.01
    with open(ids_file) as file:
        login_ids = file.read().split()
    written, failures = asyncio.run(export(base_url, customer_id, login_ids, out, concurrency, poll_interval))
    print(f"written {written} logins, failed {len(failures)}", file=sys.stderr)
    if failures:
        raise SystemExit(f"{len(failures)} logins failed; the first: {failures[0]}")


if __name__ == "__main__":
    main()
