"""An export against a service that is not there ends in seconds with exit status 5 and one line
saying so (docs/export.md#an-unreachable-service): after ``--max-consecutive-failures`` logins
failed in a row at the start of the run, because nothing answered or the keys were refused, the
run stops asking and lists the rest as not tried; a run whose logins fail for reasons of their
own is never cut short."""

from __future__ import annotations

import json
import socket
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

import bankfeed as bf
from bankfeed._export.outage import StartBreaker
from exporthelpers import command, keys_of, run_export

CUSTOMER = "43387ca6-0391-4c82-857d-70d95f087ecb"


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port nothing listens on: bound, never listening, so no other test takes it."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        yield holder.getsockname()[1]


def failures(out: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (out / "_failures.jsonl").read_text().splitlines()]


def stderr_lines(text: str) -> list[str]:
    """What the command said on stderr, without its progress lines."""
    return [line for line in text.splitlines() if line and not line.startswith("export:")]


def test_an_unreachable_service_ends_in_seconds_with_its_own_status_and_one_line(
    closed_port: int, tmp_path: Path
) -> None:
    logins = tmp_path / "ids.txt"
    logins.write_text("\n".join(bf.Sandbox.login_ids_for(500)) + "\n")
    out = tmp_path / "out"
    started = time.monotonic()
    done = command(
        "--base-url",
        f"http://127.0.0.1:{closed_port}",
        "--customer-id",
        CUSTOMER,
        "--logins",
        str(logins),
        "--out",
        str(out),
        "--what",
        "investments,accounts",
        env={"BANKFEED_API_KEY": "k", "BANKFEED_SECRET_KEY": "s"},
    )
    took = time.monotonic() - started
    assert done.returncode == 5, done.stderr
    assert took < 8, f"{took:.1f} s against a closed port"
    (line,) = stderr_lines(done.stderr)
    assert line.startswith("error: the service could not be reached or refused the keys: the first 20 logins")
    assert "TransportError" in line and "480 of the 500 logins not tried" in line and "nothing was written" in line
    assert "Traceback" not in done.stderr and done.stdout == ""
    listed = failures(out)
    by_error = Counter((entry["kind"], entry["error"]) for entry in listed)
    assert by_error == {
        ("investments", "TransportError"): 20,
        ("investments", "NotTried"): 480,
        ("accounts", "NotTried"): 500,
    }
    manifest = json.loads((out / "_manifest.json").read_text())
    # Logins, each once whatever its kinds, as the line counts them (980 entries are listed).
    assert manifest["runs"][-1]["logins_not_tried"] == 480
    assert manifest["complete"] is False


def test_the_logins_not_tried_are_tried_by_a_resume(closed_port: int, tmp_path: Path) -> None:
    with bf.Sandbox(logins=30) as sb:
        down = bf.Client(f"http://127.0.0.1:{closed_port}", sb.customer_id, api_key="k", secret_key="s")
        first = bf.export(down, sb.login_ids, tmp_path, max_consecutive_failures=5, concurrency=2)
        assert first.outage is not None and "TransportError" in first.outage
        assert first.logins_written == 0 and not first.ok
        assert first.logins_failed + first.logins_not_tried == 30
        assert "logins_not_tried=" in repr(first)
        view = first._repr_html_()
        assert "not tried" in view and "the service could not be reached" in view
        again = bf.export(sb.client(poll_interval=0.01), sb.login_ids, tmp_path, resume=True)
    assert (again.logins_written, again.logins_failed, again.outage) == (30, 0, None)
    assert (tmp_path / "_failures.jsonl").read_text() == ""


def test_with_fewer_logins_than_the_limit_every_one_is_tried_and_the_status_is_still_5(
    closed_port: int, tmp_path: Path
) -> None:
    ids = bf.Sandbox.login_ids_for(3)
    done = command(
        *ids,
        "--base-url",
        f"http://127.0.0.1:{closed_port}",
        "--customer-id",
        CUSTOMER,
        "--out",
        str(tmp_path),
        env={"BANKFEED_API_KEY": "k", "BANKFEED_SECRET_KEY": "s"},
    )
    assert done.returncode == 5, done.stderr
    (line,) = stderr_lines(done.stderr)
    assert "all 3 logins tried failed" in line
    assert Counter(entry["error"] for entry in failures(tmp_path)) == {"TransportError": 3}


def test_keys_the_service_refuses_are_an_outage_too(tmp_path: Path) -> None:
    with bf.Sandbox(logins=30) as sb:
        server = ["--base-url", sb.url, "--customer-id", sb.customer_id, "--max-consecutive-failures", "4"]
        wrong = {**keys_of(sb), "BANKFEED_SECRET_KEY": "c4569c54-e167-4d34-8de6-f4113bc82415"}
        done = command(*sb.login_ids, *server, "--out", str(tmp_path), "--concurrency", "1", env=wrong)
    assert done.returncode == 5, done.stderr
    (line,) = stderr_lines(done.stderr)
    assert "the first 4 logins tried all failed (4 Unauthorized in GenerateAuthorizeToken)" in line
    assert "26 of the 30 logins not tried" in line


def test_a_run_whose_logins_fail_for_their_own_reasons_is_never_cut_short(tmp_path: Path) -> None:
    # LoginIds the service does not know are refused by the service: it is there, and each of
    # them is a login's own failure, however many come first.
    unknown = [f"00000000-0000-4000-8000-{index:012d}" for index in range(12)]
    with bf.Sandbox(logins=5) as sb:
        server = ["--base-url", sb.url, "--customer-id", sb.customer_id, "--poll-interval", "0.01"]
        done = command(
            *unknown,
            *sb.login_ids,
            *server,
            "--out",
            str(tmp_path),
            "--max-consecutive-failures",
            "2",
            "--concurrency",
            "1",
            env=keys_of(sb),
        )
    assert done.returncode == 1, done.stderr
    assert Counter(entry["error"] for entry in failures(tmp_path)) == {"InvalidLogin": 12}
    assert "not tried" not in done.stdout


def test_a_limit_of_0_never_stops(closed_port: int, tmp_path: Path) -> None:
    down = bf.Client(f"http://127.0.0.1:{closed_port}", CUSTOMER, api_key="k", secret_key="s")
    report = bf.export(down, bf.Sandbox.login_ids_for(25), tmp_path, max_consecutive_failures=0)
    assert (report.logins_failed, report.logins_not_tried) == (25, 0)
    assert report.outage == "25 TransportError in GenerateAuthorizeToken"


def test_a_bad_limit_is_refused_naming_the_flag(tmp_path: Path) -> None:
    with bf.Sandbox(logins=1) as sb:
        done = run_export(sb, "--out", str(tmp_path), "--max-consecutive-failures", "-1")
        assert done.returncode == 2
        assert done.stderr.strip() == "error: --max-consecutive-failures: must be at least 0 (0: never stop), got -1"
        with pytest.raises(TypeError, match="max_consecutive_failures must be an int"):
            bf.export(sb.client(), sb.login_ids, tmp_path / "other", max_consecutive_failures=2.5)  # type: ignore[arg-type]


def test_the_breaker_counts_only_failures_at_the_start() -> None:
    down = bf.TransportError("Authorize failed: no answer")
    breaker = StartBreaker(3)
    assert not breaker.observe(down) and not breaker.observe(down)
    assert breaker.observe(down) and breaker.tripped and breaker.outage
    late = StartBreaker(2)
    late.observe(down)
    late.observe(object())  # a login came through: the service is there
    assert not late.observe(down) and not late.observe(down) and not late.outage
    own = StartBreaker(2)
    own.observe(ValueError("a login's own failure"))
    assert not own.observe(down) and not own.observe(down)


@pytest.mark.cluster
def test_each_partition_of_a_cluster_run_stops_by_itself(closed_port: int, tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    down = bf.Client(f"http://127.0.0.1:{closed_port}", CUSTOMER, api_key="k", secret_key="s")
    with (
        distributed.LocalCluster(n_workers=1, processes=False, dashboard_address=":0") as local,
        distributed.Client(local) as dask_client,
    ):
        started = time.monotonic()
        report = bf.export(
            down,
            bf.Sandbox.login_ids_for(200),
            tmp_path,
            scheduler=dask_client,
            partition_size=100,
            max_consecutive_failures=5,
            concurrency=4,
        )
        took = time.monotonic() - started
    assert took < 20, f"{took:.1f} s"
    assert report.outage is not None and report.logins_written == 0
    listed = Counter(entry["error"] for entry in failures(tmp_path))
    # Each partition asked until 5 failed in a row; the logins in flight then failed too.
    assert listed["NotTried"] == report.logins_not_tried and listed["NotTried"] >= 150
    assert listed["NotTried"] + listed["TransportError"] == 200


def test_a_cluster_run_counts_each_login_not_tried_once_over_its_kinds(closed_port: int, tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    with bf.Sandbox(logins=200) as sb:
        ids = sb.login_ids
        # The run's first process writes the first 100 logins' investments; its resume, on the
        # cluster against a closed port, has 100 logins left in investments and 200 in accounts,
        # so the two kinds' partitions hold different logins and stop at different ones.
        assert bf.export(sb.client(poll_interval=0.01), ids[:100], tmp_path).ok
        down = bf.Client(f"http://127.0.0.1:{closed_port}", sb.customer_id, api_key="k", secret_key="s", max_retries=0)
        with (
            distributed.LocalCluster(n_workers=1, processes=False, dashboard_address=":0") as local,
            distributed.Client(local) as dask_client,
        ):
            report = bf.export(
                down,
                ids,
                tmp_path,
                what=["investments", "accounts"],
                resume=True,
                scheduler=dask_client,
                partition_size=30,
                max_consecutive_failures=5,
                concurrency=1,
            )
    assert report.outage is not None
    errors: dict[object, set[object]] = {}
    for entry in failures(tmp_path):
        errors.setdefault(entry["login_id"], set()).add(entry["error"])
    # Not tried: listed so in every kind it had to be fetched in; tried in none.
    never = sum(1 for found in errors.values() if found == {"NotTried"})
    by_kind = Counter(entry["kind"] for entry in failures(tmp_path) if entry["error"] == "NotTried")
    assert never < max(by_kind.values()), "a login not tried in one kind was tried in the other"
    assert report.logins_not_tried == never
    manifest = json.loads((tmp_path / "_manifest.json").read_text())
    assert manifest["runs"][-1]["logins_not_tried"] == never


def test_aexport_stops_as_export_does(closed_port: int, tmp_path: Path) -> None:
    import asyncio

    async def run() -> bf.ExportReport:
        async with bf.AsyncClient(f"http://127.0.0.1:{closed_port}", CUSTOMER, api_key="k", secret_key="s") as down:
            return await bf.aexport(
                down,
                bf.Sandbox.login_ids_for(60),
                tmp_path,
                what=["investments", "accounts"],
                max_consecutive_failures=5,
            )

    report = asyncio.run(run())
    assert report.outage is not None and report.logins_written == 0
    listed = Counter((entry["kind"], entry["error"]) for entry in failures(tmp_path))
    assert listed[("accounts", "NotTried")] == 60
    assert listed[("investments", "NotTried")] + listed[("investments", "TransportError")] == 60
    assert report.logins_not_tried == 60 - listed[("investments", "TransportError")]
