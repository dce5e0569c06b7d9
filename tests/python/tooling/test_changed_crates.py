"""``scripts/changed_crates.py`` names the crates ``scripts/test --quick`` lints and unit-tests
(CONTRIBUTING.md#the-quick-loop): those a change touches since the branch left main, committed or
not. Run on a small workspace of the same shape: a root package that is the binding (``src/``)
beside a Python folder, and a crate under ``crates/``."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "changed_crates.py"
PACKAGE = '[package]\nname = "{name}"\nversion = "0.1.0"\nedition = "2021"\n'
GIT_USER = ["-c", "user.name=t", "-c", "user.email=t@t"]

if shutil.which("cargo") is None:
    pytest.skip("cargo is not installed", allow_module_level=True)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    write(
        tmp_path / "Cargo.toml",
        '[workspace]\nmembers = ["crates/core"]\n\n' + PACKAGE.format(name="binding"),
    )
    write(tmp_path / "src" / "lib.rs", "")
    write(tmp_path / "crates" / "core" / "Cargo.toml", PACKAGE.format(name="core"))
    write(tmp_path / "crates" / "core" / "src" / "lib.rs", "")
    write(tmp_path / "python" / "pkg" / "__init__.py", "")
    write(tmp_path / "scripts" / "changed_crates.py", SCRIPT.read_text(encoding="utf-8"))
    write(tmp_path / ".gitignore", "target/\n")
    for command in (
        ["git", "init", "-q", "-b", "main"],
        ["git", "add", "-A"],
        ["git", *GIT_USER, "commit", "-q", "-m", "start"],
        ["git", "checkout", "-q", "-b", "work"],
    ):
        subprocess.run(command, cwd=tmp_path, check=True)
    return tmp_path


@pytest.fixture
def changed(workspace: Path) -> Callable[[], list[str]]:
    def run() -> list[str]:
        done = subprocess.run(
            ["python3", "scripts/changed_crates.py"], cwd=workspace, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.split()

    return run


def commit(workspace: Path) -> None:
    subprocess.run(["git", "add", "-A"], cwd=workspace, check=True)
    subprocess.run(["git", *GIT_USER, "commit", "-q", "-m", "x"], cwd=workspace, check=True)


def test_nothing_when_no_rust_changed(workspace: Path, changed: Callable[[], list[str]]) -> None:
    write(workspace / "python" / "pkg" / "__init__.py", "x = 1\n")
    assert changed() == []


def test_the_crate_whose_folder_holds_the_change_committed_or_not(
    workspace: Path, changed: Callable[[], list[str]]
) -> None:
    write(workspace / "crates" / "core" / "src" / "lib.rs", "pub fn f() {}\n")
    assert changed() == ["core"]
    commit(workspace)
    assert changed() == ["core"]
    write(workspace / "crates" / "core" / "src" / "new.rs", "")
    assert changed() == ["core"]


def test_the_bindings_own_files_are_src_and_build_rs(workspace: Path, changed: Callable[[], list[str]]) -> None:
    write(workspace / "build.rs", "fn main() {}\n")
    assert changed() == ["binding"]


def test_the_workspace_manifest_touches_every_crate(workspace: Path, changed: Callable[[], list[str]]) -> None:
    write(workspace / "rustfmt.toml", "max_width = 120\n")
    assert changed() == ["binding", "core"]
