"""Prints the workspace's crates that a change touches, one name a line: the crates `scripts/test
--quick` lints and unit-tests (CONTRIBUTING.md#the-quick-loop).

A change is what differs from the commit the branch left `main` at (from `HEAD` when on `main`, or
when there is no `main`), committed or not, with the new files git does not ignore. A file belongs
to the crate whose folder holds it; the binding (the root package) holds `src/` and `build.rs`
only, since the root folder also holds the Python package and its tests. A file every crate is
built with (the workspace's manifest and lock, the lint and format settings) touches them all.

    python3 scripts/changed_crates.py             # nothing printed: no Rust changed
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parent.parent
#: Files every crate is built with, relative to the root.
SHARED = frozenset({"Cargo.toml", "Cargo.lock", "clippy.toml", "rustfmt.toml", "rust-toolchain.toml"})
#: What of the root folder is the binding's: the rest of it is Python, docs and scripts.
BINDING_FILES = ("src/", "build.rs")


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout


def changed_files() -> set[str]:
    try:
        base = git("merge-base", "HEAD", "main").strip()
    except subprocess.CalledProcessError:
        base = "HEAD"
    names = git("diff", "--name-only", base).splitlines()
    names += git("ls-files", "--others", "--exclude-standard").splitlines()
    return {name for name in names if name}


def crate_folders() -> dict[str, str]:
    """Each workspace member's folder relative to the root ("" for the root package), by name."""
    metadata = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--no-deps", "--offline", "--format-version", "1"],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    root = PurePosixPath(ROOT.as_posix())
    folders = {}
    for package in metadata["packages"]:
        folder = PurePosixPath(package["manifest_path"]).parent.relative_to(root).as_posix()
        folders[package["name"]] = "" if folder == "." else folder
    return folders


def crate_of(name: str, folders: dict[str, str]) -> str | None:
    # The deepest folder that holds the file: crates/x/ before the root.
    for crate, folder in sorted(folders.items(), key=lambda item: -len(item[1])):
        if folder and name.startswith(folder + "/"):
            return crate
        if not folder and name.startswith(BINDING_FILES):
            return crate
    return None


def changed_crates(files: set[str], folders: dict[str, str]) -> list[str]:
    if files & SHARED:
        return sorted(folders)
    return sorted({crate for name in files if (crate := crate_of(name, folders)) is not None})


def main() -> int:
    for crate in changed_crates(changed_files(), crate_folders()):
        print(crate)
    return 0


if __name__ == "__main__":
    sys.exit(main())
