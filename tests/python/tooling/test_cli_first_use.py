"""The ``bankfeed`` command as a newcomer meets it: ``--version``, the users table read in a
terminal of 100 columns (and as JSON), and ``bankfeed export``'s usage errors told at once, in
flags, before its embedded sandbox starts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import bankfeed as bf

ENV = {k: v for k, v in os.environ.items() if not k.startswith("BANKFEED_")}
#: The ``bankfeed`` script pip installed beside this interpreter.
SCRIPT = Path(sysconfig.get_path("scripts")) / "bankfeed"


def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bankfeed", *args], capture_output=True, text=True, timeout=timeout, env=ENV
    )


def test_version_is_printed_by_the_module_and_the_script() -> None:
    module = run("--version")
    assert (module.returncode, module.stdout, module.stderr) == (0, f"bankfeed {bf.__version__}\n", "")
    if not SCRIPT.exists():
        pytest.skip(f"no bankfeed script at {SCRIPT}")
    script = subprocess.run([str(SCRIPT), "--version"], capture_output=True, text=True, timeout=60, env=ENV)
    assert (script.returncode, script.stdout) == (0, f"bankfeed {bf.__version__}\n")


def test_the_users_table_fits_100_columns_and_numbers_images_from_1() -> None:
    result = run("users")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    widest = max(lines, key=len)
    assert len(widest) <= 100, widest
    text = " ".join(line.split("  ")[-1].strip() for line in lines)
    assert "image 8" in text and "index 7" not in text
    assert "Montreal" in text and "'Everyday'" in result.stdout


def test_users_as_json_are_the_sandboxs_users() -> None:
    result = run("users", "--json")
    assert result.returncode == 0, result.stderr
    listed = json.loads(result.stdout)
    with bf.Sandbox() as sb:
        assert listed == sb.users
    greatday = next(user for user in listed if user["username"] == "Greatday")
    assert set(greatday) == {"username", "password", "description", "challenge_types", "answers"}


def export(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run("export", "--out", str(tmp_path / "out"), "--sandbox-logins", "3", *args)


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (("--what", "bogus"), "--what"),
        (("--concurrency", "0"), "--concurrency"),
        (("--batch-logins", "0"), "--batch-logins"),
        (("--wait-lock", "-1"), "--wait-lock"),
        (("--what", "investments", "--days", "90"), "--days"),
    ],
    ids=["what", "concurrency", "batch-logins", "wait-lock", "days-without-accounts"],
)
def test_export_reports_a_usage_error_before_its_sandbox_starts(
    tmp_path: Path, args: tuple[str, ...], flag: str
) -> None:
    result = export(tmp_path, *args)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"error: {flag}: "), result.stderr
    # The line the embedded sandbox prints as it starts: never before a usage error.
    assert "embedded sandbox" not in result.stderr
    assert not (tmp_path / "out").exists()


def test_a_refusal_on_the_command_line_names_the_flag_only(tmp_path: Path) -> None:
    first = export(tmp_path, "--quiet")
    assert first.returncode == 0, first.stderr
    # The run went to its end: a resume has nothing to do, and says how the next run starts.
    again = export(tmp_path, "--resume")
    assert again.returncode == 2
    assert "Without --resume the export's next run starts" in again.stderr, again.stderr
    assert "resume=True" not in again.stderr


def test_a_refusal_in_python_names_the_argument(tmp_path: Path) -> None:
    with bf.Sandbox(logins=2) as sb, sb.client(poll_interval=0.01) as client:
        bf.export(client, sb.login_ids, tmp_path, progress=False)
        with pytest.raises(bf.ConfigError, match=r"Without resume=True \(--resume\)") as refused:
            bf.export(client, sb.login_ids, tmp_path, progress=False, resume=True)
    assert refused.value.field == "resume"
