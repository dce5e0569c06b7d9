"""The TCP connections open to a port of this machine, read from the kernel's table of sockets, and
their peak while a block runs: how the tests see what ``max_connections`` bounds. Linux only."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: Whether the tables below exist (the tests that count connections skip elsewhere).
ON_LINUX = sys.platform.startswith("linux")

ESTABLISHED = "01"


def connections_to(port: int) -> int:
    """Established TCP connections whose remote end is `port` on this machine (the client side), of
    every process: a Dask worker's count too."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        path = Path(table)
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            fields = line.split()
            remote, state = fields[2], fields[3]
            if state == ESTABLISHED and int(remote.rsplit(":", 1)[1], 16) == port:
                count += 1
    return count


@contextmanager
def peak_connections(port: int) -> Iterator[list[int]]:
    """Samples the connections to `port` every few milliseconds; the list holds the peak after.
    A sample can only miss a connection, never invent one: a peak is a floor of the real one."""
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], connections_to(port))
            done.wait(0.002)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        yield peak
    finally:
        done.set()
        sampler.join()
