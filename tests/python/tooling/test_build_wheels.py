"""``scripts/build-wheels``, the one release command (CONTRIBUTING.md#releasing), is checked without
running it (a release build takes minutes): it parses as bash, shellcheck finds nothing when it is
installed, and it makes what the release needs: stripped manylinux2014 wheels linked by zig, the
sdist, and auditwheel's verdict on every wheel."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "build-wheels"


def test_the_script_parses_as_bash() -> None:
    done = subprocess.run(["bash", "-n", str(SCRIPT)], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr


def test_shellcheck_finds_nothing() -> None:
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck is not installed")
    done = subprocess.run([shellcheck, str(SCRIPT)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout


def test_the_script_builds_stripped_manylinux2014_wheels_with_zig_the_sdist_and_audits_them() -> None:
    text = SCRIPT.read_text(encoding="utf-8")
    assert "set -euo pipefail" in text
    build = "maturin build --locked --release --strip --zig --compatibility manylinux2014 --out dist"
    assert build in text
    assert "--compatibility musllinux_1_2" in text
    assert "maturin sdist --out dist" in text
    assert "auditwheel show" in text
    # The tools a release is made with are pinned.
    for tool in ("maturin", "ziglang", "auditwheel"):
        assert f'"{tool}==' in text, tool
