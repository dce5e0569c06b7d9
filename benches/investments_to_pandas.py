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

And, each including the HTTP of a cached Authorize and the Investments call to the sandbox:

4. live path (fetch + tables): ``client.investments(login_id).transactions.to_pandas()``
5. from_json + HTTP: the same two requests with ``http.client`` (one kept-alive connection), then
   ``bf.Investments.from_json(body).transactions.to_pandas()``

The frames are checked to have the same rows (transaction ids in order) and equal numeric
sums before any figure is printed: a fast wrong answer is worthless. Targets: json_normalize /
bankfeed >= 10x, orjson / bankfeed >= 3x, live path / (from_json + HTTP) <= 1.
"""

from __future__ import annotations

import argparse
import http.client
import inspect
import json
import math
import platform
import subprocess
import sys
import time
import urllib.parse
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


class Fetcher:
    """The cached Authorize and the Investments call of ``login_id`` as a plain HTTP client makes
    them, on one kept-alive connection: the HTTP that ``from_json`` needs before it can start."""

    def __init__(self, client: bf.Client, login_id: str) -> None:
        base = urllib.parse.urlsplit(client.base_url)
        self.connection = http.client.HTTPConnection(base.netloc)
        self.authorize = f"/v3/{client.customer_id}/BankingServices/Authorize"
        investments = urllib.parse.urlsplit(client.investments_base_url)
        assert investments.netloc == base.netloc, "the sandbox serves Investments on its own host"
        self.investments = f"{investments.path}/v3/{client.customer_id}/Investments"
        self.login_id = login_id

    def post(self, path: str, body: dict[str, object]) -> bytes:
        self.connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        response = self.connection.getresponse()
        data = response.read()
        assert response.status == 200, f"{path}: HTTP {response.status} {data[:200]!r}"
        return data

    def fetch(self) -> bytes:
        session = json.loads(self.post(self.authorize, {"LoginId": self.login_id, "MostRecentCached": True}))
        body = {"LoginId": self.login_id, "RequestId": session["RequestId"], "MostRecentCached": True}
        return self.post(self.investments, body)


def best_of(function: Callable[[bytes], pd.DataFrame], data: bytes, repeats: int) -> tuple[float, pd.DataFrame]:
    best, result = math.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function(data)
        best = min(best, time.perf_counter() - start)
    assert result is not None, "--repeats must be at least 1"
    return best, result


def interleaved(
    contenders: dict[str, Callable[[bytes], pd.DataFrame]], data: bytes, repeats: int
) -> tuple[dict[str, float], dict[str, pd.DataFrame]]:
    """Best of ``repeats`` of each, taking turns, so that a shared machine's load, which moves
    between seconds, weighs on each alike (the HTTP contenders share the sandbox too)."""
    best = dict.fromkeys(contenders, math.inf)
    results: dict[str, pd.DataFrame] = {}
    for _ in range(repeats):
        for name, function in contenders.items():
            start = time.perf_counter()
            results[name] = function(data)
            best[name] = min(best[name], time.perf_counter() - start)
    return best, results


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

    # Keys off where the sandbox asks for them by default: the hand-written contender sends none.
    no_keys = {"auth": False} if "auth" in inspect.signature(bf.Sandbox).parameters else {}
    with bf.Sandbox(investment_transactions=args.transactions, pending_polls=0, **no_keys) as sandbox:
        client = sandbox.client(poll_interval=0.01)
        session = client.authorize("FlinksCapital", "greatday_nomfa", "Everyday", save=True)
        # greatday_nomfa is asked nothing: authorize opens its saved session at once.
        assert isinstance(session, bf.Session) and session.login_id is not None
        login_id = session.login_id
        data = json.dumps(client.investments(login_id).raw).encode()
        payload = json.loads(data)
        rows = sum(len(a.get("Transactions") or []) for a in payload["Accounts"])
        fetcher = Fetcher(client, login_id)

        def live(_: bytes) -> pd.DataFrame:
            frame: pd.DataFrame = client.investments(login_id).transactions.to_pandas()
            return frame

        def from_json_and_http(_: bytes) -> pd.DataFrame:
            return with_bankfeed(fetcher.fetch())

        def http_alone(_: bytes) -> pd.DataFrame:
            frame: pd.DataFrame = pd.DataFrame({"bytes": [len(fetcher.fetch())]})
            return frame

        contenders: dict[str, Callable[[bytes], pd.DataFrame]] = {
            "bankfeed": with_bankfeed,
            "json_normalize": with_json_normalize,
            "orjson_loop": with_orjson_loop,
        }
        fetching: dict[str, Callable[[bytes], pd.DataFrame]] = {
            "live path (fetch + tables)": live,
            "from_json + HTTP": from_json_and_http,
            "(HTTP alone, http.client)": http_alone,
        }
        for function in [*contenders.values(), *fetching.values()]:  # warm up (imports, caches, connections)
            function(data)
        times, frames = {}, {}
        for name, function in contenders.items():
            times[name], frames[name] = best_of(function, data, args.repeats)
        fetch_times, fetch_frames = interleaved(fetching, data, args.repeats)
        times.update(fetch_times)
        frames.update({name: frame for name, frame in fetch_frames.items() if not name.startswith("(")})
    check_same(frames, rows)

    versions = (
        f"Python {platform.python_version()}, bankfeed {bf.__version__}, pandas {pd.__version__}, "
        f"orjson {orjson.__version__}"
    )
    print(f"payload: {len(data):,} bytes, {rows:,} transactions; best of {args.repeats}; {versions}")
    for name, seconds in times.items():
        print(f"  {name:<27} {seconds * 1000:9.2f} ms")
    normalize_ratio = times["json_normalize"] / times["bankfeed"]
    orjson_ratio = times["orjson_loop"] / times["bankfeed"]
    normalize_verdict = "met" if normalize_ratio >= 10 else "NOT met"
    orjson_verdict = "met" if orjson_ratio >= 3 else "NOT met"
    print(f"  json_normalize / bankfeed = {normalize_ratio:5.1f}x  (target >= 10x: {normalize_verdict})")
    print(f"  orjson_loop / bankfeed    = {orjson_ratio:5.1f}x  (target >= 3x: {orjson_verdict})")
    live_ratio = times["live path (fetch + tables)"] / times["from_json + HTTP"]
    live_verdict = "met" if live_ratio <= 1.0 else "NOT met"
    print(f"  live path / (from_json + HTTP) = {live_ratio:4.2f}  (target <= 1: {live_verdict})")


if __name__ == "__main__":
    main()
