"""The session flow written directly with httpx's AsyncClient, as its users write it (benches/sessions.py).

One session: a cached Authorize, then Investments repeated while it answers 202, with a sleep between
polls (docs/protocol.md#authorize, docs/protocol.md#investments). Answers are parsed into dicts.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

import httpx


async def session(http: httpx.AsyncClient, root: str, login_id: str, poll_interval: float) -> dict[str, Any]:
    """One session: returns the Investments payload as a dict."""
    resp = await http.post(f"{root}/BankingServices/Authorize", json={"LoginId": login_id, "MostRecentCached": True})
    authorized = resp.json()
    if resp.status_code != 200:
        raise RuntimeError(f"Authorize answered {resp.status_code}: {authorized}")
    body = {"LoginId": login_id, "RequestId": authorized["RequestId"], "MostRecentCached": True}
    while True:
        resp = await http.post(f"{root}/Investments", json=body)
        data: dict[str, Any] = resp.json()
        if resp.status_code == 200:
            return data
        if resp.status_code != 202:
            raise RuntimeError(f"Investments answered {resp.status_code}: {data}")
        await asyncio.sleep(poll_interval)


async def run_async(
    base_url: str, customer_id: str, login_ids: Sequence[str], concurrency: int, poll_interval: float
) -> list[float]:
    """Runs one session per LoginId, ``concurrency`` at a time; returns each session's seconds."""
    root = f"{base_url}/v3/{customer_id}"
    limit = asyncio.Semaphore(concurrency)
    # httpx pools 100 connections and keeps 20 alive by default; a user raising the concurrency
    # raises both (or connections are opened and closed all the time), up to what the server
    # takes (the sandbox serves 1,024 connections at once).
    connections = min(concurrency, 1000)
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    async with httpx.AsyncClient(limits=limits, timeout=240.0) as http:

        async def timed(login_id: str) -> float:
            async with limit:
                start = time.perf_counter()
                await session(http, root, login_id, poll_interval)
                return time.perf_counter() - start

        return await asyncio.gather(*(timed(login_id) for login_id in login_ids))


def run(
    base_url: str, customer_id: str, login_ids: Sequence[str], concurrency: int, poll_interval: float = 0.01
) -> list[float]:
    """The harness's entry point: the sessions on a fresh event loop."""
    return asyncio.run(run_async(base_url, customer_id, login_ids, concurrency, poll_interval))
