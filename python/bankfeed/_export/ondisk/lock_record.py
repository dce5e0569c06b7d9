"""What an export's lock says (docs/export.md#one-run-at-a-time): the holder written into
``_journal/lock`` when a run takes it, read back by a run that finds it held, and named in the
message that run gets.

The lock itself (taking it, waiting for it, telling whether its holder has ended) is
``lock.py``'s; this module is the file's format, as the others beside it are their files'.
"""

from __future__ import annotations

import json
import re
import secrets
import socket
import time
from typing import Any

from bankfeed._export.ondisk.layout import RUN

__all__ = ["encode_holder", "holder_named", "new_holder", "parse_holder"]

#: A host's name as a message shows it: what host names are made of, or it is not shown.
_HOST = re.compile(r"[A-Za-z0-9][A-Za-z0-9.-]{0,252}")


def new_holder(run: str, pid: int, process_started: str | None) -> dict[str, Any]:
    """The holder a run writes when it takes the lock: this host, the process ``pid`` (started at
    ``process_started``, so that a later process given the same number is not taken for it), the
    run, since when, and a token of its own, by which it tells its lock from one taken over."""
    return {
        "host": socket.gethostname(),
        "pid": pid,
        "process_started": process_started,
        "run": run,
        "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "token": secrets.token_hex(8),
    }


def encode_holder(holder: dict[str, Any]) -> bytes:
    """The lock file's bytes for ``holder``."""
    return json.dumps(holder, sort_keys=True).encode("utf-8")


def parse_holder(data: bytes) -> dict[str, Any]:
    """What a lock says; empty when it says nothing usable (just taken, not written yet). Read from
    disk, so each field is checked where it is used (:func:`holder_named`, ``lock.py``)."""
    try:
        found = json.loads(data.decode("utf-8"))
    except ValueError:  # UnicodeDecodeError too
        return {}
    return found if isinstance(found, dict) else {}


def holder_named(found: dict[str, Any]) -> str | None:
    """Who holds the lock, as a message names them, from what it says (each field checked); None
    when it says nothing usable."""
    host, pid, run, since = (found.get(key) for key in ("host", "pid", "run", "since"))
    if not (isinstance(pid, int) and not isinstance(pid, bool) and isinstance(host, str) and _HOST.fullmatch(host)):
        return None
    named = f"process {pid} on {host}"
    if isinstance(run, str) and RUN.fullmatch(run):
        named = f"the run {run} ({named}"
        named += f", since {since})" if isinstance(since, str) and len(since) <= 40 and since.isprintable() else ")"
    return named
