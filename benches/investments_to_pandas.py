"""Benchmark: an Investments payload (bytes) to a pandas DataFrame of transactions with their
account fields and security symbol, bankfeed against two pure-Python ways of doing the same.

Run it against a release build of bankfeed (a debug build, as ``maturin develop`` or
``maturin build --profile dev`` makes, is several times slower and the figures mean nothing)::

    pip install .            # or: maturin build --release --out dist && pip install dist/*.whl
    python3 benches/investments_to_pandas.py [--transactions 20000] [--repeats 7]

What is timed, from the same bytes, best of N repeats with ``time.perf_counter``:

1. bankfeed: ``bf.Investments.from_json(data).transactions.to_pandas()``
2. ``json.loads`` + ``pandas.json_normalize(payload["Accounts"], record_path="Transactions",
   meta=[account fields])`` + a merge with the securities for the symbol
3. ``orjson.loads`` + a Python loop into per-column lists (account fields and symbol joined via
   dicts) + ``pandas.DataFrame``

The three frames are checked to have the same rows (transaction ids in order) and equal numeric
sums before any figure is printed: a fast wrong answer is worthless. Targets: json_normalize /
bankfeed >= 10x, orjson / bankfeed >= 3x.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import subprocess
import sys
import time
from collections.abc import Callable

try:
    import orjson
except ImportError:  # the benchmark's only extra dependency: install it rather than stop
    print("installing orjson for the orjson contender", file=sys.stderr)
    subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", "orjson"])
    import orjson

import pandas as pd

import bankfeed as bf

ACCOUNT_FIELDS = {  # output column -> account field
    "account_id": "Id",
    "account_number": "AccountId",
    "account_name": "Name",
    "account_type": "Type",
    "account_currency": "Currency",
}
TRANSACTION_FIELDS = {  # output column -> transaction field
    "transaction_id": "Id",
    "date": "Date",
    "type": "Type",
    "description": "Description",
    "security_id": "SecurityId",
    "quantity": "Quantity",
    "fee": "Fee",
    "amount": "Amount",
}
NUMERIC = ["quantity", "fee", "amount"]


def with_bankfeed(data: bytes) -> pd.DataFrame:
    frame: pd.DataFrame = bf.Investments.from_json(data).transactions.to_pandas()
    return frame


def with_json_normalize(data: bytes) -> pd.DataFrame:
    payload = json.loads(data)
    meta: list[str | list[str]] = list(ACCOUNT_FIELDS.values())
    frame: pd.DataFrame = pd.json_normalize(
        payload["Accounts"], record_path="Transactions", meta=meta, meta_prefix="account."
    )
    frame = frame.rename(columns={f"account.{v}": k for k, v in ACCOUNT_FIELDS.items()})
    frame = frame.rename(columns={v: k for k, v in TRANSACTION_FIELDS.items()})
    securities = pd.DataFrame(
        {
            "security_id": [s["Id"] for s in payload["Securities"]],
            "symbol": [s["Symbol"] for s in payload["Securities"]],
        }
    )
    frame = frame.merge(securities, on="security_id", how="left")
    frame["date"] = pd.to_datetime(frame["date"], format="%Y-%m-%d")
    for name in NUMERIC:
        frame[name] = frame[name].astype("float64")
    return frame


def with_orjson_loop(data: bytes) -> pd.DataFrame:
    payload = orjson.loads(data)
    symbols = {s["Id"]: s.get("Symbol") for s in payload["Securities"]}
    columns: dict[str, list[object]] = {name: [] for name in [*ACCOUNT_FIELDS, *TRANSACTION_FIELDS, "symbol"]}
    account_columns = [(columns[k], v) for k, v in ACCOUNT_FIELDS.items()]
    transaction_columns = [(columns[k], v) for k, v in TRANSACTION_FIELDS.items()]
    symbol_column = columns["symbol"]
    for account in payload["Accounts"]:
        transactions = account.get("Transactions") or []
        n = len(transactions)
        for column, key in account_columns:
            column.extend([account.get(key)] * n)
        for t in transactions:
            for column, key in transaction_columns:
                column.append(t.get(key))
            symbol_column.append(symbols.get(t.get("SecurityId")))
    frame: pd.DataFrame = pd.DataFrame(columns)
    frame["date"] = pd.to_datetime(frame["date"], format="%Y-%m-%d")
    for name in NUMERIC:
        frame[name] = frame[name].astype("float64")
    return frame


def best_of(function: Callable[[bytes], pd.DataFrame], data: bytes, repeats: int) -> tuple[float, pd.DataFrame]:
    best, result = math.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function(data)
        best = min(best, time.perf_counter() - start)
    assert result is not None, "--repeats must be at least 1"
    return best, result


def check_same(frames: dict[str, pd.DataFrame], expected_rows: int) -> None:
    reference = frames["bankfeed"]
    assert len(reference) == expected_rows, f"bankfeed: {len(reference)} rows, payload has {expected_rows}"
    wanted = [*ACCOUNT_FIELDS, "transaction_id", "date", "type", "description", "security_id", "symbol", *NUMERIC]
    for name, frame in frames.items():
        missing = set(wanted) - set(frame.columns)
        assert not missing, f"{name}: columns {sorted(missing)} missing"
        assert len(frame) == expected_rows, f"{name}: {len(frame)} rows != {expected_rows}"
        assert frame["transaction_id"].tolist() == reference["transaction_id"].tolist(), f"{name}: rows differ"
        for column in ("account_number", "symbol"):
            assert frame[column].tolist() == reference[column].tolist(), f"{name}: {column} differs"
        same_dates = frame["date"].dt.strftime("%Y-%m-%d") == reference["date"].dt.strftime("%Y-%m-%d")
        assert same_dates.all(), f"{name}: dates"
        for column in NUMERIC:
            a, b = float(frame[column].sum()), float(reference[column].sum())
            assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-6), f"{name}: sum of {column} {a} != {b}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--transactions", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()

    with bf.Sandbox(investment_transactions=args.transactions, pending_polls=0) as sandbox:
        client = sandbox.client(poll_interval=0.01)
        session = client.authorize("FlinksCapital", "greatday_nomfa", "Everyday", save=True)
        # greatday_nomfa is asked nothing: authorize opens its saved session at once.
        assert isinstance(session, bf.Session) and session.login_id is not None
        data = json.dumps(client.investments(session.login_id).raw).encode()
    payload = json.loads(data)
    rows = sum(len(a.get("Transactions") or []) for a in payload["Accounts"])

    contenders = {
        "bankfeed": with_bankfeed,
        "json_normalize": with_json_normalize,
        "orjson_loop": with_orjson_loop,
    }
    for function in contenders.values():  # warm up (imports, caches)
        function(data)
    times, frames = {}, {}
    for name, function in contenders.items():
        times[name], frames[name] = best_of(function, data, args.repeats)
    check_same(frames, rows)

    versions = (
        f"Python {platform.python_version()}, bankfeed {bf.__version__}, pandas {pd.__version__}, "
        f"orjson {orjson.__version__}"
    )
    print(f"payload: {len(data):,} bytes, {rows:,} transactions; best of {args.repeats}; {versions}")
    for name, seconds in times.items():
        print(f"  {name:<15} {seconds * 1000:9.2f} ms")
    normalize_ratio = times["json_normalize"] / times["bankfeed"]
    orjson_ratio = times["orjson_loop"] / times["bankfeed"]
    normalize_verdict = "met" if normalize_ratio >= 10 else "NOT met"
    orjson_verdict = "met" if orjson_ratio >= 3 else "NOT met"
    print(f"  json_normalize / bankfeed = {normalize_ratio:5.1f}x  (target >= 10x: {normalize_verdict})")
    print(f"  orjson_loop / bankfeed    = {orjson_ratio:5.1f}x  (target >= 3x: {orjson_verdict})")


if __name__ == "__main__":
    main()
