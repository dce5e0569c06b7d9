"""The kinds of test ``scripts/test --quick`` leaves out carry their marker
(CONTRIBUTING.md#the-quick-loop): every file of the browser axis is marked ``browser``, every one
that runs a kernel ``notebook``, the Dask and Spark files ``cluster``, and the four marks are
registered, so ``--strict-markers`` refuses a misspelt one. Read from the source rather than
collected: collecting these files imports Playwright, Dask and Spark, a minute on a busy machine."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: pytest itself depends on tomli there, the same parser
    import tomli as tomllib  # type: ignore[import-not-found, no-redef, unused-ignore]

ROOT = Path(__file__).resolve().parents[3]
PYTHON_TESTS = ROOT / "tests" / "python"
MARKED = {
    **{str(path.relative_to(PYTHON_TESTS)): "browser" for path in sorted((PYTHON_TESTS / "browser").glob("test_*.py"))},
    "notebook/test_challenge_form.py": "notebook",
    "notebook/test_connect_widget_kernel.py": "notebook",
    "notebook/test_kernel_harness.py": "notebook",
    "export/test_dask.py": "cluster",
    "export/test_dask_read_once.py": "cluster",
    "export/test_export_dask.py": "cluster",
    "export/test_export_spark.py": "cluster",
}


def module_marks(path: Path) -> set[str]:
    """The names of the marks a module's ``pytestmark`` gives all its tests."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "pytestmark" for target in node.targets
        ):
            values = node.value.elts if isinstance(node.value, ast.List) else [node.value]
            return {ast.unparse(value).split("(")[0].removeprefix("pytest.mark.") for value in values}
    return set()


@pytest.mark.parametrize(("path", "mark"), sorted(MARKED.items()))
def test_the_file_is_marked_for_all_its_tests(path: str, mark: str) -> None:
    assert mark in module_marks(PYTHON_TESTS / path), f"{path} has no `pytestmark = pytest.mark.{mark}`"


def test_the_browser_axis_has_files_to_mark() -> None:
    assert sum(mark == "browser" for mark in MARKED.values()) >= 5


def test_the_four_marks_are_registered_and_strict() -> None:
    options = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]
    registered = {line.split(":")[0] for line in options["markers"]}
    assert {"browser", "notebook", "cluster", "timing"} <= registered
    assert "--strict-markers" in options["addopts"].split()
