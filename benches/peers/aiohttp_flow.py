"""The session flow written directly with aiohttp, as its users write it (benches/sessions.py).

One session: a cached Authorize, then Investments repeated while it answers 202, with a sleep between
polls (docs/protocol.md#authorize, docs/protocol.md#investments). Answers are parsed into dicts.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

import aiohttp


async def session(http: aiohttp.ClientSession, root: str, login_id: str, poll_interval: float) -> dict[str, Any]:
    """One session: returns the Investments payload as a dict."""
    async with http.post(
        f"{root}/BankingServices/Authorize", json={"LoginId": login_id, "MostRecentCached": True}
    ) as resp:
        authorized = await resp.json()
        if resp.status != 200:
            raise RuntimeError(f"Authorize answered {resp.status}: {authorized}")
    body = {"LoginId": login_id, "RequestId": authorized["RequestId"], "MostRecentCached": True}
    while True:
        async with http.post(f"{root}/Investments", json=body) as resp:
            data: dict[str, Any] = await resp.json()
            if resp.status == 200:
                return data
            if resp.status != 202:
                raise RuntimeError(f"Investments answered {resp.status}: {data}")
        await asyncio.sleep(poll_interval)


async def run_async(
    base_url: str, customer_id: str, login_ids: Sequence[str], concurrency: int, poll_interval: float
) -> list[float]:
    """Runs one session per LoginId, ``concurrency`` at a time; returns each session's seconds."""
    root = f"{base_url}/v3/{customer_id}"
    limit = asyncio.Semaphore(concurrency)
    # aiohttp pools 100 connections by default; a user raising the concurrency raises this too, up
    # to what the server takes (the sandbox serves 1,024 connections at once).
    connector = aiohttp.TCPConnector(limit=min(concurrency, 1000))
    async with aiohttp.ClientSession(connector=connector) as http:

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
