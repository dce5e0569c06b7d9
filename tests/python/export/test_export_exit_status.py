"""The command's exit status tells a cron job's monitoring what happened (docs/export.md#exit-status):
1 is only "some logins failed"; a full disk (or any output that fails under the run) is 3, a
read-only ``--out`` and a ``--logins`` CSV that cannot be read are usage errors (2), a failure of
the run itself is 4; each with one line on stderr saying why, and no traceback but for 4.

A full disk and a read-only directory are real ones where the test may mount a small ``tmpfs``
(as root, which also ignores a directory's permissions), and are made by failing the part files'
writing with the system's own error everywhere else."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import subprocess
import sys
import textwrap
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("pyarrow")

import pyarrow.dataset

import bankfeed as bf

LOGINS = 20


@pytest.fixture(scope="module")
def sb() -> Iterator[bf.Sandbox]:
    with bf.Sandbox(logins=LOGINS) as sandbox:
        yield sandbox


#: Runs the command in a child whose part files fail to be written as ``FAILURE`` says: an
#: ``OSError`` of that error number's name (``ENOSPC``), ``RuntimeError``, or ``none``.
RUN_COMMAND = textwrap.dedent(
    """
    import errno, os, sys
    from bankfeed._export import writer
    from bankfeed.__main__ import main

    failure = os.environ["FAILURE"]
    if failure != "none":
        def fail(self, table, combined, path, keep=None):
            if failure == "RuntimeError":
                raise RuntimeError("the part file's encoder broke")
            number = getattr(errno, failure)
            raise OSError(number, os.strerror(number), path)
        writer.KindWriter._write = fail
    sys.exit(main(["export", *sys.argv[1:]]))
    """
)


def command(sb: bf.Sandbox, *args: str, failure: str = "none") -> subprocess.CompletedProcess[str]:
    """``bankfeed export`` against ``sb``, quiet: what it prints on stderr is its messages only."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith("BANKFEED_")}
    environment.update(BANKFEED_API_KEY=sb.api_key or "", BANKFEED_SECRET_KEY=sb.secret_key or "", FAILURE=failure)
    service = ["--base-url", sb.url, "--customer-id", sb.customer_id, "--poll-interval", "0.01", "--quiet"]
    return subprocess.run(
        [sys.executable, "-c", RUN_COMMAND, *service, *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=environment,
        stdin=subprocess.DEVNULL,
    )


def one_line(done: subprocess.CompletedProcess[str], *says: str) -> str:
    """The one line of stderr, which says each of ``says``."""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert "Traceback" not in done.stderr
    for text in says:
        assert text in lines[0], (text, lines[0])
    return lines[0]


@contextlib.contextmanager
def mounted(directory: Path, *options: str) -> Iterator[Path]:
    """A ``tmpfs`` mounted on ``directory`` with ``options``; the test is skipped where this
    process may not mount one (not root, or no mount in its namespace)."""
    directory.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", ",".join(options), "tmpfs", str(directory)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"no tmpfs here: {done.stderr.strip()}")
    try:
        yield directory
    finally:
        subprocess.run(["umount", "-l", str(directory)], check=False)


def remount(directory: Path, *options: str) -> None:
    subprocess.run(["mount", "-o", ",".join(["remount", *options]), str(directory)], check=True)


def assert_each_login_once(out: Path, login_ids: list[str]) -> None:
    accounts = pyarrow.dataset.dataset(out / "investments" / "accounts").to_table()
    columns = [accounts.column(name).to_pylist() for name in ("login_id", "account_id")]
    keys = Counter(zip(*columns, strict=True))
    assert max(keys.values()) == 1, "no login is in the dataset twice"
    assert {login for login, _ in keys} == set(login_ids)


def test_a_full_disk_exits_3_with_one_line_and_a_resume_finishes(sb: bf.Sandbox, tmp_path: Path) -> None:
    with mounted(tmp_path / "disk", "size=64k") as disk:
        out = disk / "out"
        done = command(sb, *sb.login_ids, "--out", str(out), "--batch-logins", "2")
        assert done.returncode == 3, done.stderr
        one_line(done, "--out", os.strerror(errno.ENOSPC), str(out), "--resume")
        # Room made: the resume writes what is left, each login once.
        remount(disk, "size=16m")
        again = command(sb, *sb.login_ids, "--out", str(out), "--batch-logins", "2", "--resume")
        assert again.returncode == 0, again.stderr
        assert_each_login_once(out, sb.login_ids)


@pytest.mark.parametrize("name", ["ENOSPC", "EDQUOT", "EROFS", "EIO"])
def test_an_output_that_fails_under_the_run_exits_3(sb: bf.Sandbox, tmp_path: Path, name: str) -> None:
    out = tmp_path / "out"
    done = command(sb, *sb.login_ids[:3], "--out", str(out), failure=name)
    assert done.returncode == 3, done.stderr
    one_line(done, "--out", os.strerror(getattr(errno, name)), str(out))
    # The run stopped where the manifest says, and a resume goes on from there.
    manifest = json.loads((out / "_manifest.json").read_text())
    assert manifest["complete"] is False and manifest["runs"][-1]["interrupted"] is True
    again = command(sb, *sb.login_ids[:3], "--out", str(out), "--resume")
    assert again.returncode == 0, again.stderr


def test_a_failure_of_the_run_itself_exits_4_with_its_traceback(sb: bf.Sandbox, tmp_path: Path) -> None:
    done = command(sb, *sb.login_ids[:3], "--out", str(tmp_path / "out"), failure="RuntimeError")
    assert done.returncode == 4, done.stderr
    assert "Traceback" in done.stderr
    assert done.stderr.strip().splitlines()[-1] == "error: the run stopped: RuntimeError: the part file's encoder broke"


@contextlib.contextmanager
def read_only(directory: Path) -> Iterator[Path]:
    """``directory`` (made, with what it holds) made read-only: a read-only remount as root, whom
    permissions do not stop; its permissions otherwise."""
    if os.geteuid() == 0:
        with mounted(directory, "size=16m"):
            yield directory
        return
    directory.mkdir(parents=True, exist_ok=True)
    try:
        yield directory
    finally:
        for path in [directory, *directory.rglob("*")]:
            if path.is_dir():
                path.chmod(0o755)  # for pytest to delete it


def make_read_only(directory: Path) -> None:
    if os.geteuid() == 0:
        remount(directory, "ro")
    else:
        for path in [directory, *directory.rglob("*")]:
            if path.is_dir():
                path.chmod(0o555)


def test_a_read_only_out_exits_2_before_anything_is_fetched(sb: bf.Sandbox, tmp_path: Path) -> None:
    with read_only(tmp_path / "ro") as directory:
        # A new export into it, and a resume of an export it holds.
        holds = directory / "held"
        first = command(sb, *sb.login_ids[:2], "--out", str(holds))
        assert first.returncode == 0, first.stderr
        # A part file a kill left uncommitted, which a resume would delete before anything else.
        (holds / "investments" / "accounts" / ".part-20261126T000000-abcdef-000001.parquet.tmp").write_bytes(b"")
        make_read_only(directory)
        reason = os.strerror(errno.EROFS if os.geteuid() == 0 else errno.EACCES)
        before = len(sb.requests)
        for args in (["--out", str(directory)], ["--out", str(holds), "--resume"]):
            done = command(sb, *sb.login_ids, *args)
            assert done.returncode == 2, (args, done.stderr)
            one_line(done, "--out", reason, args[1])
        assert len(sb.requests) == before, "refused before anything was sent"
        # bf.export says the same, as a ConfigError naming out.
        with pytest.raises(bf.ConfigError) as raised:
            bf.export(sb.client(poll_interval=0.01), sb.login_ids, directory)
        assert raised.value.field == "out" and reason in str(raised.value)


def test_a_logins_csv_that_cannot_be_read_exits_2_naming_its_line(sb: bf.Sandbox, tmp_path: Path) -> None:
    huge = "7" * 200_000
    body = tmp_path / "body.csv"
    body.write_text(f"login_id,name\n{sb.login_ids[0]},a\n{huge},b\n", "utf-8")
    header = tmp_path / "header.csv"
    header.write_text(f"login_id,{huge}\n{sb.login_ids[0]},a\n", "utf-8")
    for path, line in [(body, "at line 3"), (header, "")]:
        done = command(sb, "--logins", str(path), "--out", str(tmp_path / "out"))
        assert done.returncode == 2, done.stderr
        shown = one_line(done, "--logins", str(path), "longer than 131,072 characters", line)
        assert len(shown) < 300, "the field itself is not shown"
    assert not (tmp_path / "out").exists(), "refused before anything was written"


@pytest.mark.parametrize("name", ["EACCES", "EROFS"])
def test_an_output_refusing_the_first_write_is_a_config_error_before_anything_is_fetched(
    sb: bf.Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    from bankfeed._export import plan

    # As an object store's bucket refuses a write, which nothing but writing tells.
    number = getattr(errno, name)

    def refused(storage: object, record: object) -> None:
        raise OSError(number, os.strerror(number), "memory://bucket/out/_journal/runs/x.json")

    monkeypatch.setattr(plan, "write_run", refused)
    before = len(sb.requests)
    with pytest.raises(bf.ConfigError) as raised:
        bf.export(sb.client(poll_interval=0.01), sb.login_ids, tmp_path / "out")
    assert raised.value.field == "out" and os.strerror(number) in str(raised.value)
    assert len(sb.requests) == before, "refused before anything was sent"
