"""``scripts/build-wheels``, the one release command (CONTRIBUTING.md#releasing), is checked without
running it (a release build takes minutes; the test command checks a wheel built the same way in
the dev profile): it and the scripts it shares with the test command parse as bash and shellcheck
finds nothing in them, it makes stripped manylinux2014 wheels linked by zig (against the system's
unwinder) and the sdist, its
tools are pinned by the lock, and the auditwheel check refuses a wheel of no policy."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: pytest itself depends on tomli there, the same parser
    import tomli as tomllib  # type: ignore[import-not-found, no-redef, unused-ignore]

ROOT = Path(__file__).resolve().parents[3]
SCRIPTS = ["build-wheels", "zig-wheel", "audit-wheels", "find-python", "uv", "test"]
BUILD_WHEELS = ROOT / "scripts" / "build-wheels"


@pytest.mark.parametrize("name", SCRIPTS)
def test_the_script_parses_as_bash(name: str) -> None:
    done = subprocess.run(["bash", "-n", str(ROOT / "scripts" / name)], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("name", SCRIPTS)
def test_shellcheck_finds_nothing(name: str) -> None:
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck is not installed")
    done = subprocess.run([shellcheck, str(ROOT / "scripts" / name)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout


def test_the_script_builds_stripped_manylinux2014_wheels_with_zig_the_sdist_and_audits_them() -> None:
    text = BUILD_WHEELS.read_text(encoding="utf-8")
    assert "set -euo pipefail" in text
    assert "bash scripts/zig-wheel dist --release --strip" in text
    zig = (ROOT / "scripts" / "zig-wheel").read_text(encoding="utf-8")
    assert 'maturin build --locked --zig --compatibility manylinux2014 --out "$out" "$@"' in zig
    # zig's own unwinder must not be linked in (scripts/zig-wheel says why).
    assert '-- -l dylib=gcc_s_system -L "native=$link_dir"' in zig
    assert "--compatibility musllinux_1_2" in text
    assert "maturin sdist --out dist" in text
    assert 'bash scripts/audit-wheels "$PY" "${wheels[@]}"' in text
    assert "auditwheel show" in (ROOT / "scripts" / "audit-wheels").read_text(encoding="utf-8")
    # The tools come from the lock, as the test command's do.
    assert "uv sync --frozen" in text and "--group build" in text


def test_the_release_tools_are_pinned_in_the_build_group() -> None:
    groups = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["dependency-groups"]
    pinned = {spec.split("==")[0] for spec in groups["build"] if "==" in spec}
    assert pinned == {"maturin", "ziglang", "auditwheel"}, groups["build"]


def test_a_wheel_of_no_policy_is_refused_by_name(tmp_path: Path) -> None:
    # What `pip wheel .` makes: a linux_x86_64 wheel, which a package index refuses.
    wheel = tmp_path / "bankfeed-0.1.0-cp310-abi3-linux_x86_64.whl"
    wheel.write_bytes(b"")
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "audit-wheels"), sys.executable, str(wheel)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert f"error: {wheel} is tagged neither manylinux2014 nor musllinux_1_2 x86_64" in done.stderr, done.stderr
