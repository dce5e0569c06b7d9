"""``bankfeed export`` run as a user runs it, for the tests of the command: a process of its own,
no ``BANKFEED_*`` variable but those a test gives, no standard input (docs/export.md#the-command)."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import bankfeed as bf


def command(*args: str, env: dict[str, str] | None = None, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """``python -m bankfeed export ARGS``, its output captured, with ``env`` added to a
    ``BANKFEED_``-free environment."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith("BANKFEED_")}
    environment.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "bankfeed", "export", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=environment,
        stdin=subprocess.DEVNULL,
        **kwargs,
    )


def keys_of(sb: bf.Sandbox) -> dict[str, str]:
    """The variables that give the command ``sb``'s keys, as a shell set up for it would."""
    assert sb.secret_key and sb.api_key
    return {"BANKFEED_SECRET_KEY": sb.secret_key, "BANKFEED_API_KEY": sb.api_key}


def run_export(sb: bf.Sandbox, *args: str) -> subprocess.CompletedProcess[str]:
    """The command on every login of ``sb``, with its keys and a fast poll, and ``args``."""
    server = ["--base-url", sb.url, "--customer-id", sb.customer_id, "--poll-interval", "0.01"]
    return command(*sb.login_ids, *server, *args, env=keys_of(sb))
