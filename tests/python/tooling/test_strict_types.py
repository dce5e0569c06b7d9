"""What a user's type checker says about their code (``mypy --strict``, no project settings,
bankfeed from site-packages, as a user checks a script): a value the service refuses is refused
before the script runs, and the sandbox's users are typed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mypy")

SCRIPT = """
import bankfeed as bf

with bf.Sandbox() as sb:
    session = sb.client().login("FlinksCapital", "greatday_nomfa", "Everyday")
    detail = session.accounts_detail(days={days!r})
    user: bf.SandboxUser = sb.users[0]
    answers: dict[str, list[str]] = user["answers"]
    {extra}
"""


def mypy_strict(tmp_path: Path, days: str, extra: str = "pass") -> subprocess.CompletedProcess[str]:
    script = tmp_path / "user_script.py"
    script.write_text(SCRIPT.format(days=days, extra=extra), encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--config-file=", "--no-incremental", str(script)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )


def test_days_the_service_refuses_fails_mypy_strict(tmp_path: Path) -> None:
    result = mypy_strict(tmp_path, "Days30")
    assert result.returncode == 1, result.stdout
    assert 'Argument "days" to "accounts_detail"' in result.stdout, result.stdout
    assert "Literal['Days90', 'Days365']" in result.stdout


def test_the_documented_days_and_user_fields_pass_mypy_strict(tmp_path: Path) -> None:
    result = mypy_strict(tmp_path, "Days365")
    assert result.returncode == 0, result.stdout


def test_a_user_field_that_does_not_exist_fails_mypy_strict(tmp_path: Path) -> None:
    result = mypy_strict(tmp_path, "Days90", extra='print(user["pasword"])')
    assert result.returncode == 1 and '"pasword"' in result.stdout, result.stdout
