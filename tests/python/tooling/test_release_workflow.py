"""The release workflow (.github/workflows/release.yml) cannot run here; what can be checked is
checked: the promises CONTRIBUTING.md#releasing makes about it: the wheels it builds, a smoke run
of each, and publishing only a tag, only by trusted publishing, only after every smoke run
passed."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"


def workflow() -> dict[Any, Any]:
    yaml = pytest.importorskip("yaml")
    loaded: dict[Any, Any] = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    return loaded


def steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = job["steps"]
    return found


def test_every_action_is_pinned_to_a_commit_with_its_release_beside_it() -> None:
    # A tag can be moved to other code; a commit hash cannot. The one exception is PyPA's
    # publishing action, used by its release branch as .github/zizmor.yml says why.
    uses = re.findall(r"uses:\s*(\S+)(.*)", WORKFLOW.read_text(encoding="utf-8"))
    assert uses
    for action, rest in uses:
        if action.startswith("pypa/gh-action-pypi-publish@"):
            assert action == "pypa/gh-action-pypi-publish@release/v1"
            continue
        assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", action), action
        assert re.fullmatch(r"\s*# v\d+\.\d+\.\d+", rest), f"{action}: no release named beside the hash"


def test_it_builds_abi3_wheels_for_each_platform_and_an_sdist_with_maturin_action() -> None:
    jobs = workflow()["jobs"]
    linux = {(row["target"], str(row["manylinux"])) for row in jobs["linux"]["strategy"]["matrix"]["include"]}
    assert linux == {("x86_64", "2014"), ("aarch64", "2014"), ("x86_64-unknown-linux-musl", "musllinux_1_2")}
    assert {row["target"] for row in jobs["macos"]["strategy"]["matrix"]["include"]} == {"x86_64", "aarch64"}
    for name in ("linux", "macos"):
        build = next(step for step in steps(jobs[name]) if step.get("uses", "").startswith("PyO3/maturin-action@"))
        assert "--release" in build["with"]["args"] and "--strip" in build["with"]["args"]
    assert any(step.get("with", {}).get("command") == "sdist" for step in steps(jobs["sdist"]))


def test_each_wheel_and_the_sdist_is_installed_and_run_before_publishing() -> None:
    jobs = workflow()["jobs"]
    smoke = jobs["smoke"]["strategy"]["matrix"]
    assert smoke["python"] == ["3.10", "3.13"]
    assert len(smoke["artifact"]) == 4
    for name in ("smoke", "smoke-musl", "smoke-sdist"):
        script = " ".join(step.get("run", "") for step in steps(jobs[name]))
        assert "import bankfeed; print(bankfeed.__version__)" in script, name
        assert "-m bankfeed --version" in script, name
    assert set(jobs["publish"]["needs"]) == {"smoke", "smoke-musl", "smoke-sdist"}


def test_a_v_tag_publishes_by_trusted_publishing_in_the_pypi_environment() -> None:
    loaded = workflow()
    # PyYAML reads the bare key `on` as True.
    assert loaded[True]["push"]["tags"] == ["v*"]
    assert loaded["permissions"] == {"contents": "read"}
    publish = loaded["jobs"]["publish"]
    assert publish["if"] == "startsWith(github.ref, 'refs/tags/v')"
    assert publish["environment"]["name"] == "pypi"
    assert publish["permissions"] == {"id-token": "write"}
    last = steps(publish)[-1]
    assert last["uses"].startswith("pypa/gh-action-pypi-publish@") and "with" not in last  # no password
