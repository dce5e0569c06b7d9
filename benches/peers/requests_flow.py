"""The session flow written with requests in a thread pool, as its users write it (benches/sessions.py).

One session: a cached Authorize, then Investments repeated while it answers 202, with a sleep between
polls (docs/protocol.md#authorize, docs/protocol.md#investments). Answers are parsed into dicts. Each
worker thread keeps its own ``requests.Session`` (a Session is not documented as thread-safe).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import requests


def session(http: requests.Session, root: str, login_id: str, poll_interval: float) -> dict[str, Any]:
    """One session: returns the Investments payload as a dict."""
    resp = http.post(f"{root}/BankingServices/Authorize", json={"LoginId": login_id, "MostRecentCached": True})
    authorized = resp.json()
    if resp.status_code != 200:
        raise RuntimeError(f"Authorize answered {resp.status_code}: {authorized}")
    body = {"LoginId": login_id, "RequestId": authorized["RequestId"], "MostRecentCached": True}
    while True:
        resp = http.post(f"{root}/Investments", json=body)
        data: dict[str, Any] = resp.json()
        if resp.status_code == 200:
            return data
        if resp.status_code != 202:
            raise RuntimeError(f"Investments answered {resp.status_code}: {data}")
        time.sleep(poll_interval)


def run(
    base_url: str, customer_id: str, login_ids: Sequence[str], concurrency: int, poll_interval: float = 0.01
) -> list[float]:
    """Runs one session per LoginId on ``concurrency`` threads; returns each session's seconds."""
    root = f"{base_url}/v3/{customer_id}"
    local = threading.local()
    opened: list[requests.Session] = []

    def timed(login_id: str) -> float:
        http = getattr(local, "http", None)
        if http is None:
            http = local.http = requests.Session()
            opened.append(http)
        start = time.perf_counter()
        session(http, root, login_id, poll_interval)
        return time.perf_counter() - start

    try:
        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            return list(pool.map(timed, login_ids))
    finally:
        for http in opened:
            http.close()
