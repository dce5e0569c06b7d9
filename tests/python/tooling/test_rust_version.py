"""The workspace's ``rust-version`` (Cargo.toml, which every crate inherits) is the true minimum:
the highest ``rust-version`` any crate of Cargo.lock declares, as ``cargo metadata`` reads it
offline. A lock update that raises the floor fails here until Cargo.toml, the README and CONTRIBUTING.md say the new one
(CONTRIBUTING.md#the-minimum-rust)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: pytest itself depends on tomli there, the same parser
    import tomli as tomllib  # type: ignore[import-not-found, no-redef, unused-ignore]

ROOT = Path(__file__).resolve().parents[3]


def version(text: str) -> tuple[int, ...]:
    """``"1.88"`` and ``"1.88.0"`` are the same floor."""
    parts = [int(part) for part in text.split(".")]
    return tuple(parts + [0] * (3 - len(parts)))


def locked_floor() -> tuple[tuple[int, ...], str]:
    """The highest rust-version among the locked dependencies, and the crate that declares it."""
    if shutil.which("cargo") is None:
        pytest.skip("cargo is not installed")
    out = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--offline", "--locked"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    metadata: dict[str, Any] = json.loads(out)
    own = set(metadata["workspace_members"])
    floors = [
        (version(package["rust_version"]), f"{package['name']} {package['version']}")
        for package in metadata["packages"]
        if package["id"] not in own and package.get("rust_version")
    ]
    return max(floors)


def test_cargo_tomls_rust_version_is_the_highest_a_locked_dependency_needs() -> None:
    declared = tomllib.loads((ROOT / "Cargo.toml").read_text(encoding="utf-8"))["workspace"]["package"]["rust-version"]
    floor, crate = locked_floor()
    assert version(declared) == floor, f"Cargo.toml says {declared}; {crate} needs {floor}"


def test_the_readme_and_contributing_name_the_same_minimum() -> None:
    declared = tomllib.loads((ROOT / "Cargo.toml").read_text(encoding="utf-8"))["workspace"]["package"]["rust-version"]
    for name in ("README.md", "CONTRIBUTING.md"):
        named = re.findall(r"\b(1\.\d{2,})(?:\.0)?(?:\+| or later)", (ROOT / name).read_text(encoding="utf-8"))
        assert named and set(named) == {declared}, f"{name} names Rust {sorted(set(named))}; Cargo.toml {declared}"
