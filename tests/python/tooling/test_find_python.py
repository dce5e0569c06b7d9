"""``scripts/find-python`` finds the two Pythons the test command runs the suite on
(CONTRIBUTING.md#two-pythons), and when one is missing says where it looked and how to point it
at one, instead of the suite failing later on something else."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "find-python"
RUNNING = f"{sys.version_info[0]}.{sys.version_info[1]}"


def find(version: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SCRIPT), version], capture_output=True, text=True, timeout=120, env={**os.environ, **env}
    )


def test_it_finds_a_python_of_the_version_asked() -> None:
    done = find(RUNNING)
    assert done.returncode == 0, done.stderr
    path = done.stdout.strip()
    said = subprocess.run([path, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True)
    assert said.stdout.strip() == str(sys.version_info[:2]), path


def test_the_variable_names_the_python_to_use() -> None:
    variable = "BANKFEED_PYTHON_" + RUNNING.replace(".", "_")
    assert find(RUNNING, **{variable: sys.executable}).stdout.strip() == sys.executable


def test_a_missing_version_is_an_error_saying_where_it_looked_and_what_to_do() -> None:
    done = find("3.99")
    assert done.returncode == 1 and done.stdout == ""
    assert "error: no CPython 3.99 found; looked at: $BANKFEED_PYTHON_3_99 (unset), python3.99 on PATH" in done.stderr
    assert "set BANKFEED_PYTHON_3_99 to its path" in done.stderr, done.stderr


def test_a_variable_naming_another_version_is_refused() -> None:
    other = "3.99"
    done = find(other, BANKFEED_PYTHON_3_99=sys.executable)
    assert done.returncode == 1
    assert done.stderr.strip() == f"error: BANKFEED_PYTHON_3_99={sys.executable} is not a CPython {other} that runs"
