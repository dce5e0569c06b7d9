"""A Ruby client written against the real service's staging instance (``mmroz/flinks``, vendored
unchanged in tests/vendor/ruby-flinks) runs against the sandbox: its token, a cached Authorize of a
saved login, the summary, and account detail polled on ``GetAccountsDetailAsync/{RequestId}``
through the sandbox's 202s (docs/sandbox.md#clients-written-for-the-real-service).

It needs Debian's ``ruby``, ``ruby-faraday`` and ``ruby-activemodel``, which the test command
installs; without them the test is skipped, except in CI, where a missing Ruby is a failure."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import bankfeed as bf

ROOT = Path(__file__).resolve().parents[3]
LIB = ROOT / "tests" / "vendor" / "ruby-flinks" / "lib"
DRIVER = Path(__file__).with_name("drive_ruby_flinks.rb")


def ruby() -> str:
    found = shutil.which("ruby")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("ruby is missing: scripts/test installs Debian's ruby, ruby-faraday and ruby-activemodel")
        pytest.skip("ruby is not installed (scripts/test installs it)")
    return found


def test_the_ruby_client_runs_unchanged_against_the_sandbox() -> None:
    executable = ruby()
    with bf.Sandbox(pending_polls=2, logins=1) as sb:
        assert sb.secret_key is not None and sb.api_key is not None
        login_id = sb.login_ids[0]
        done = subprocess.run(
            [executable, "-I", str(LIB), str(DRIVER), sb.url, sb.customer_id, login_id, sb.secret_key, sb.api_key],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        read = json.loads(done.stdout.strip().splitlines()[-1])
        requests = [(r["method"], r["path"].split("/")[-2]) for r in sb.requests]
    assert read["pending_rounds"] >= 1, read  # the 202s were met and polled through
    assert read["detail_accounts"] >= 1 and read["summary_accounts"] == read["detail_accounts"], read
    assert read["transactions"] > 0, read
    assert read["detail_login_id"].lower() == login_id.lower(), read
    assert read["institution_name"] == "FlinksCapital", read
    assert ("GET", "GetAccountsDetailAsync") in requests, requests
    # The keys are the public test instance's; the driver's output carries none of them.
    assert sb.secret_key not in done.stdout and sb.api_key not in done.stdout
