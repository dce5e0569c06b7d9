"""An output location is shown the same way everywhere (docs/export.md#where-it-writes): a URL's
user, password, query and fragment are in no ``repr(ExportReport)``, notebook view, ``ConfigError``,
summary or message of the command, while the export itself (and a cluster's workers) still use
them. The URLs are fsspec's ``memory://`` ones, a filesystem in the process that takes any text,
with a password and a token in each."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("fsspec")

import fsspec

import bankfeed as bf

PASSWORD = "hunter2-pw-81f3"
TOKEN = "t0k3n-q-55c0a9"
SECRETS = (PASSWORD, TOKEN)


def url(name: str) -> str:
    """A memory URL with a user, a password, a token in its query and a fragment."""
    return f"memory://robot:{PASSWORD}@bucket/{name}?token={TOKEN}&region=x#sig={TOKEN}"


def shown(name: str) -> str:
    """What every place shows of :func:`url`."""
    return f"memory://bucket/{name}"


@pytest.fixture(scope="module")
def sb() -> Iterator[bf.Sandbox]:
    with bf.Sandbox(logins=3) as sandbox:
        yield sandbox


def client_of(sb: bf.Sandbox) -> bf.Client:
    return sb.client(poll_interval=0.01, poll_timeout=30)


def texts_of(error: BaseException) -> str:
    """Everything an exception shows: its text, repr, args and fields."""
    return " ".join([str(error), repr(error), repr(error.args), repr(vars(error))])


def assert_hidden(text: str, name: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"{secret!r} shown in {text!r}"
    assert "robot" not in text and "region" not in text, text
    assert shown(name) in text, text


def test_the_report_shows_the_location_without_its_secrets_and_the_export_used_them(sb: bf.Sandbox) -> None:
    report = bf.export(client_of(sb), [*sb.login_ids, "not-a-guid"], url("report"))
    assert report.logins_written == 3
    for text in (repr(report), str(report), report.out, report._repr_html_()):
        assert_hidden(text, "report")
    # The export went where the whole URL says: the memory filesystem keeps its path as given.
    assert fsspec.filesystem("memory").exists(f"/robot:{PASSWORD}@bucket/report?token={TOKEN}&region=x#sig={TOKEN}")
    # A report made by hand shows its location the same way.
    made = bf.ExportReport(
        out=url("made"), written={}, failed=[], logins_written=0, logins_failed=0, logins_skipped=0, elapsed=0.0
    )
    assert_hidden(repr(made), "made")
    assert_hidden(made._repr_html_(), "made")


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("s3://AKIAEXAMPLE:hunter2-pw-81f3@bucket/nightly?token=t0k3n-q-55c0a9", "s3://bucket/nightly"),
        ("simplecache::s3://robot:hunter2-pw-81f3@bucket/x?X-Sig=t0k3n-q-55c0a9", "simplecache::s3://bucket/x"),
        ("https://robot:hunter2-pw-81f3@[::1]:8443/dav/x?sig=t0k3n-q-55c0a9", "https://[::1]:8443/dav/x"),
        ("gs://bucket/a@b/x?access_token=t0k3n-q-55c0a9", "gs://bucket/a@b/x"),
        ("nightly/2026-11-26", "nightly/2026-11-26"),
    ],
)
def test_every_shape_of_url_is_shown_without_user_password_and_query(given: str, expected: str) -> None:
    report = bf.ExportReport(
        out=given, written={}, failed=[], logins_written=0, logins_failed=0, logins_skipped=0, elapsed=0.0
    )
    for text in (repr(report), report._repr_html_()):
        assert f"{expected}'" in text or f"{expected}<" in text, text
        assert not [secret for secret in SECRETS if secret in text], text


def test_a_config_error_shows_the_location_without_its_secrets(sb: bf.Sandbox) -> None:
    client = client_of(sb)
    bf.export(client, sb.login_ids[:1], url("held"))
    with pytest.raises(bf.ConfigError) as held:
        bf.export(client, sb.login_ids[:1], url("held"), resume=True)
    assert held.value.field == "resume" and "nothing to resume" in str(held.value)
    assert_hidden(texts_of(held.value), "held")
    with pytest.raises(bf.ConfigError) as other_format:
        bf.export(client, sb.login_ids[:1], url("held"), format="csv")
    assert other_format.value.field == "format"
    assert_hidden(texts_of(other_format.value), "held")


def test_a_url_that_cannot_be_opened_is_a_config_error_without_its_secrets(sb: bf.Sandbox) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # An FTP filesystem connects when it is made: nothing listens there.
    out = f"ftp://robot:{PASSWORD}@127.0.0.1:{port}/x?token={TOKEN}"
    with pytest.raises(bf.ConfigError) as raised:
        bf.export(client_of(sb), sb.login_ids[:1], out)
    assert raised.value.field == "out" and "cannot be opened" in str(raised.value)
    assert f"ftp://127.0.0.1:{port}/x" in str(raised.value)
    assert not [secret for secret in SECRETS if secret in texts_of(raised.value)], texts_of(raised.value)


#: Runs the command in a child whose writer ``FAILURE`` makes fail (``None``: none), so that what
#: the command shows of a failure of the run is seen: an ``OSError`` of the output, or another.
RUN_COMMAND = textwrap.dedent(
    """
    import errno, os, sys
    from bankfeed._export import writer
    from bankfeed.__main__ import main

    failure = os.environ["FAILURE"]
    if failure != "none":
        def fail(self, *args, **kwargs):
            if failure == "full":
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), sys.argv[-1])
            raise RuntimeError(f"could not write to {sys.argv[-1]}")
        writer.KindWriter._write = fail
    sys.exit(main(["export", *sys.argv[1:]]))
    """
)


def command(sb: bf.Sandbox, *args: str, failure: str = "none") -> subprocess.CompletedProcess[str]:
    environment = {key: value for key, value in os.environ.items() if not key.startswith("BANKFEED_")}
    environment.update(BANKFEED_API_KEY=sb.api_key or "", BANKFEED_SECRET_KEY=sb.secret_key or "", FAILURE=failure)
    service = ["--base-url", sb.url, "--customer-id", sb.customer_id, "--poll-interval", "0.01"]
    return subprocess.run(
        [sys.executable, "-c", RUN_COMMAND, *service, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=environment,
        stdin=subprocess.DEVNULL,
    )


def test_the_command_shows_the_location_without_its_secrets(sb: bf.Sandbox) -> None:
    # The summary: the failures' file, where a login failed.
    done = command(sb, *sb.login_ids, "not-a-guid", "--out", url("cli"))
    assert done.returncode == 1, done.stderr
    assert f"{shown('cli')}/_failures.jsonl" in done.stdout, done.stdout
    assert_hidden(done.stdout, "cli")
    assert not [secret for secret in SECRETS if secret in done.stderr], done.stderr
    # A full disk (exit 3), and a failure of the run whose message quotes the whole URL (exit 4,
    # with its traceback).
    for name, failure, status in [("full", "full", 3), ("failed", "other", 4)]:
        done = command(sb, *sb.login_ids, "--quiet", "--out", url(name), failure=failure)
        assert done.returncode == status, done.stderr
        assert_hidden(done.stderr, name)
    # A usage error (exit 2): an output that cannot be opened.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    done = command(sb, *sb.login_ids, "--out", f"ftp://robot:{PASSWORD}@127.0.0.1:{port}/x?token={TOKEN}")
    assert done.returncode == 2, done.stderr
    assert f"ftp://127.0.0.1:{port}/x" in done.stderr
    assert not [secret for secret in SECRETS if secret in done.stderr], done.stderr


@pytest.mark.cluster
def test_a_cluster_run_hands_the_workers_the_whole_url_and_shows_none_of_it(sb: bf.Sandbox) -> None:
    distributed: Any = pytest.importorskip("distributed")
    from bankfeed._export.cluster import _Partition, _run_partition
    from bankfeed._export.kinds import Kind
    from bankfeed._export.writer import Limits

    # Workers as threads of this process: they see its memory filesystem, as workers see a bucket.
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None) as dask:
        report = bf.export(client_of(sb), sb.login_ids, url("cluster"), scheduler=dask, partition_size=2)
        assert (report.logins_written, report.logins_failed) == (3, 0), report.failed
        assert_hidden(repr(report), "cluster")
        # A worker that cannot see the output says so, showing it as everywhere.
        task = _Partition(
            url("unseen"),
            Kind("investments", label="investments"),
            "parquet",
            "20261126T000000-abcdef",
            0,
            tuple(sb.login_ids[:1]),
            {},
            2,
            Limits(),
            "bankfeed-export-stop-test",
            "/absent-marker",
        )
        with pytest.raises(bf.ConfigError) as raised:
            dask.submit(_run_partition, task, client_of(sb), key="bankfeed-export-test-unseen").result()
    assert raised.value.field == "out" and "not reachable" in str(raised.value)
    assert_hidden(texts_of(raised.value), "unseen")
