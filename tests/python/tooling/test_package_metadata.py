"""What a package index shows of bankfeed, read from pyproject.toml as maturin reads it: the
project's links, its license, the Python versions and platforms it claims, and a README that
renders as the long description (CONTRIBUTING.md#releasing)."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: pytest itself depends on tomli there, the same parser
    import tomli as tomllib  # type: ignore[import-not-found, no-redef, unused-ignore]

ROOT = Path(__file__).resolve().parents[3]


def project() -> dict[str, Any]:
    table: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return table


def test_the_index_links_to_the_home_page_docs_changelog_and_issues_of_one_repository() -> None:
    urls = project()["urls"]
    assert set(urls) == {"Homepage", "Documentation", "Changelog", "Issues"}
    home = urls["Homepage"]
    assert re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", home)
    assert urls["Documentation"] == f"{home}/tree/main/docs"
    assert urls["Changelog"] == f"{home}/blob/main/CHANGELOG.md"
    assert urls["Issues"] == f"{home}/issues"
    # The pages the links open are the repository's own.
    assert (ROOT / "docs").is_dir() and (ROOT / "CHANGELOG.md").is_file()
    cargo = tomllib.loads((ROOT / "Cargo.toml").read_text(encoding="utf-8"))["workspace"]["package"]
    assert cargo["repository"] == home


def test_the_license_is_cargos_as_an_spdx_expression_without_a_license_classifier() -> None:
    meta = project()
    cargo = tomllib.loads((ROOT / "Cargo.toml").read_text(encoding="utf-8"))["workspace"]["package"]
    assert meta["license"] == cargo["license"] == "MIT"
    # PEP 639: an index refuses a license expression together with a "License ::" classifier.
    assert not [c for c in meta["classifiers"] if c.startswith("License ::")]


def test_the_classifiers_name_python_3_10_to_3_13_rust_and_typed() -> None:
    meta = project()
    classifiers = set(meta["classifiers"])
    version = re.compile(r"Programming Language :: Python :: (3\.\d+)")
    versions = {match.group(1) for match in map(version.fullmatch, classifiers) if match}
    assert versions == {"3.10", "3.11", "3.12", "3.13"}
    assert meta["requires-python"] == ">=3.10"
    assert {"Programming Language :: Rust", "Typing :: Typed", "Operating System :: POSIX :: Linux"} <= classifiers
    # Typing :: Typed is a promise the wheel keeps with its marker file.
    assert (ROOT / "python" / "bankfeed" / "py.typed").is_file()


def test_the_readme_is_the_long_description_as_markdown() -> None:
    assert project()["readme"] == {"file": "README.md", "content-type": "text/markdown"}


def test_the_readme_renders_as_the_index_renders_it() -> None:
    markdown = pytest.importorskip("readme_renderer.markdown")
    html = markdown.render((ROOT / "README.md").read_text(encoding="utf-8"), stream=sys.stderr)
    assert html is not None and "<h1" in html and "<code" in html
