"""What a run whose logins fail keeps of them (docs/export.md#a-run-where-many-logins-fail): every
failure in ``_failures.jsonl``, a line per login and kind with its latest failure, sorted by
LoginId, written from the journal a chunk at a time (``ondisk/failures.py``); the manifest's lists;
and in the report the first failures as exceptions, with every one counted (``report.py``). The
chunk and the number kept are made small here, so that a few dozen logins take the paths that a
million take."""

from __future__ import annotations

import json
import socket
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

import bankfeed as bf
from bankfeed._export import tally
from bankfeed._export.ondisk import failures as failures_file
from exporthelpers import command, keys_of


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port nothing listens on: bound, never listening."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        yield holder.getsockname()[1]


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """``_failures.jsonl`` sorted 7 lines at a time, with 3 files open at most: most of them go
    through the spilled files, and those through the merges of the files."""
    monkeypatch.setattr(failures_file, "_CHUNK", 7)
    monkeypatch.setattr(failures_file, "_FAN_IN", 3)


def listed(out: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (out / "_failures.jsonl").read_text().splitlines()]


@pytest.mark.usefixtures("small_chunks")
def test_an_outage_lists_every_login_not_tried_once_sorted_and_a_resume_lists_each_latest(
    closed_port: int, tmp_path: Path
) -> None:
    logins = bf.Sandbox.login_ids_for(60)
    down = bf.Client(f"http://127.0.0.1:{closed_port}", bf.Sandbox.login_ids_for(1)[0], api_key="k", secret_key="s")
    first = bf.export(down, logins, tmp_path, what=["investments", "accounts"], max_consecutive_failures=4)
    assert first.outage is not None and first.logins_not_tried == 56
    lines = listed(tmp_path)
    for kind in ("investments", "accounts"):
        ours = [line for line in lines if line["kind"] == kind]
        assert [line["login_id"] for line in ours] == sorted(logins), kind
    assert Counter(line["error"] for line in lines) == {"TransportError": 4, "NotTried": 116}
    manifest = json.loads((tmp_path / "_manifest.json").read_text())
    assert manifest["kinds"]["investments"]["logins_failed"] == sorted(logins)
    assert manifest["kinds"]["accounts"]["logins_failed"] == sorted(logins)
    assert manifest["complete"] is False

    # The same run again, the service still down: each login once, with its latest failure.
    again = bf.export(down, logins, tmp_path, what=["investments", "accounts"], resume=True, max_consecutive_failures=3)
    assert again.outage is not None
    lines = listed(tmp_path)
    assert [line["login_id"] for line in lines if line["kind"] == "investments"] == sorted(logins)
    tried_again = {login for login, _ in again.failed}
    assert len(tried_again) == 3
    for line in lines:
        latest = "TransportError" if line["kind"] == "investments" and line["login_id"] in tried_again else "NotTried"
        assert line["error"] == latest, line


@pytest.mark.usefixtures("small_chunks")
def test_a_login_written_since_its_failure_is_no_longer_listed(closed_port: int, tmp_path: Path) -> None:
    with bf.Sandbox(logins=25) as sb:
        down = bf.Client(f"http://127.0.0.1:{closed_port}", sb.customer_id, api_key="k", secret_key="s")
        bf.export(down, sb.login_ids, tmp_path, max_consecutive_failures=2)
        assert len(listed(tmp_path)) == 25
        # Back, and asked for the first 10 only: the 15 others stay listed.
        up = sb.client(poll_interval=0.01)
        bf.export(up, sb.login_ids[:10], tmp_path, resume=True)
    assert sorted(str(line["login_id"]) for line in listed(tmp_path)) == sorted(sb.login_ids[10:])


def test_a_small_run_s_report_lists_every_failure_as_its_exception(tmp_path: Path) -> None:
    unknown = [f"00000000-0000-4000-8000-{index:012d}" for index in range(4)]
    with bf.Sandbox(logins=3) as sb:
        report = bf.export(
            sb.client(poll_interval=0.01), [*unknown, "not-a-guid", *sb.login_ids], tmp_path, max_consecutive_failures=0
        )
    assert sorted((login, type(error)) for login, error in report.failed) == sorted(
        [(login, bf.InvalidLogin) for login in unknown] + [("not-a-guid", bf.ConfigError)]
    )
    assert report.failed_count == len(report.failed) == 5
    assert report.failed_by_class == {"InvalidLogin": 4, "ConfigError": 1}
    assert (report.logins_failed, report.logins_written) == (5, 3)


def test_a_run_with_more_failures_than_kept_counts_them_all(
    monkeypatch: pytest.MonkeyPatch, closed_port: int, tmp_path: Path
) -> None:
    monkeypatch.setattr(tally, "FAILURES_KEPT", 5)
    logins = bf.Sandbox.login_ids_for(12)
    down = bf.Client(f"http://127.0.0.1:{closed_port}", logins[0], api_key="k", secret_key="s")
    report = bf.export(down, logins, tmp_path, what=["investments", "accounts"], max_consecutive_failures=0)
    assert len(report.failed) == 5 and all(isinstance(error, bf.TransportError) for _, error in report.failed)
    assert report.failed_count == 24 and report.failed_by_class == {"TransportError": 24}
    assert report.logins_failed == 12
    assert "the first 5 of 24 failures" in report._repr_html_()
    assert len(listed(tmp_path)) == 24


def test_the_command_counts_every_failure_by_class_beyond_those_kept(closed_port: int, tmp_path: Path) -> None:
    # In a process of its own: the number kept is the real one, so more logins than it fail.
    unknown = [f"00000000-0000-4000-8000-{index:012d}" for index in range(1009)]
    logins = tmp_path / "ids.txt"
    with bf.Sandbox(logins=1) as sb:
        logins.write_text("\n".join([*sb.login_ids, *unknown]) + "\n")
        done = command(
            "--base-url",
            sb.url,
            "--customer-id",
            sb.customer_id,
            "--logins",
            str(logins),
            "--out",
            str(tmp_path / "out"),
            "--poll-interval",
            "0.01",
            "--concurrency",
            "64",
            env=keys_of(sb),
        )
    assert done.returncode == 1, done.stderr
    # Every login but the sandbox's own is unknown to it: each refused, each counted.
    assert "failed: 1009 logins (InvalidLogin 1009)" in done.stdout, done.stdout
