"""How the export creates its files (docs/export.md#how-files-are-written): a symbolic link
planted under any name the export once wrote through is never followed (its target unchanged), and
an output another user could steer (owned by another user, or writable by every user without the
sticky bit) is refused with exit 2 unless ``--allow-shared-out`` says so.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import bankfeed as bf
from bankfeed._export.plan import ExportPlan
from exporthelpers import run_export

ROOT = Path(__file__).resolve().parents[3]
PRECIOUS = b"a file of the user's own\n"


@pytest.fixture(scope="module")
def sb() -> Iterator[bf.Sandbox]:
    with bf.Sandbox(logins=2) as sandbox:
        yield sandbox


def plant_when_started(monkeypatch: pytest.MonkeyPatch, names: Any, targets: Path) -> list[Path]:
    """Plants a link to a file of the user's at each of ``names(out, run)`` as the run starts
    (when its name is known, before it writes); the targets, to look at afterwards."""
    start = ExportPlan.start
    planted: list[Path] = []

    def planting(self: ExportPlan) -> None:
        out = Path(self.storage.root)
        for name in names(out, self.run_id):
            target = targets / f"target-{len(planted)}"
            target.write_bytes(PRECIOUS)
            (out / name).parent.mkdir(parents=True, exist_ok=True)
            (out / name).symlink_to(target)
            planted.append(target)
        start(self)

    monkeypatch.setattr(ExportPlan, "start", planting)
    return planted


def test_links_at_the_names_of_files_written_whole_are_never_followed(
    sb: bf.Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, targets = tmp_path / "out", tmp_path / "targets"
    targets.mkdir()

    def names(out: Path, run: str) -> list[str]:
        # The fixed names the manifest, the failures, the run's record and a journal entry were
        # written through, then renamed.
        return [
            "._manifest.json.tmp",
            "._failures.jsonl.tmp",
            f"_journal/runs/.{run}.json.tmp",
            f"_journal/investments/.{run}-000001.json.tmp",
            f"attributes/detail/.part-{run}-000000.parquet.tmp",
        ]

    planted = plant_when_started(monkeypatch, names, targets)
    report = bf.export(sb.client(poll_interval=0.01), [*sb.login_ids, "not-a-guid"], out, what="investments")
    assert report.logins_written == 2 and len(planted) == 5
    assert [target.read_bytes() for target in planted] == [PRECIOUS] * 5, "no target was written"
    manifest = out / "_manifest.json"
    assert not manifest.is_symlink() and json.loads(manifest.read_text())["kinds"]["investments"]
    assert not (out / "_failures.jsonl").is_symlink() and "not-a-guid" in (out / "_failures.jsonl").read_text()


def test_a_link_at_a_part_files_temporary_name_stops_the_run_unfollowed(
    sb: bf.Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, targets = tmp_path / "out", tmp_path / "targets"
    targets.mkdir()
    planted = plant_when_started(
        monkeypatch,
        lambda out, run: [
            f"investments/accounts/run_date={run[:4]}-{run[4:6]}-{run[6:8]}/run_id={run}/.part-{run}-000001.parquet.tmp"
        ],
        targets,
    )
    with pytest.raises(FileExistsError):
        bf.export(sb.client(poll_interval=0.01), sb.login_ids, out)
    [target] = planted
    assert target.read_bytes() == PRECIOUS


def test_a_link_at_the_lock_is_refused(sb: bf.Sandbox, tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.write_bytes(PRECIOUS)
    (tmp_path / "out" / "_journal").mkdir(parents=True)
    (tmp_path / "out" / "_journal" / "lock").symlink_to(target)
    with pytest.raises(bf.ConfigError) as raised:
        bf.export(sb.client(poll_interval=0.01), sb.login_ids, tmp_path / "out")
    assert raised.value.field == "out" and "_journal/lock is a symbolic link" in str(raised.value)
    assert target.read_bytes() == PRECIOUS


def command(sb: bf.Sandbox, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return run_export(sb, "--out", str(out), "--quiet", *extra)


def assert_refused(done: subprocess.CompletedProcess[str], says: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stderr)
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("error: --out: ") and says in line and "--allow-shared-out" in line, line


def test_an_output_every_user_can_write_in_is_refused_unless_allowed(sb: bf.Sandbox, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    assert_refused(command(sb, shared), "every user can write in, without the sticky bit")
    assert list(shared.iterdir()) == [], "refused before anything was written"
    with pytest.raises(bf.ConfigError) as raised:
        bf.export(sb.client(poll_interval=0.01), sb.login_ids, shared)
    assert raised.value.field == "out" and "allow_shared_out=True" in str(raised.value)
    # Below an output of one's own: a directory of the export that every user can write in.
    own = tmp_path / "own"
    bf.export(sb.client(poll_interval=0.01), sb.login_ids[:1], own)
    (own / "investments" / "accounts").chmod(0o777)
    assert_refused(command(sb, own, "--resume"), f"{own}/investments/accounts is a directory every user can write in")
    # Said to be fine: written.
    done = command(sb, shared, "--allow-shared-out")
    assert done.returncode == 0, done.stderr
    report = bf.export(sb.client(poll_interval=0.01), sb.login_ids, own, resume=True, allow_shared_out=True)
    assert (report.logins_written, report.logins_skipped) == (1, 1)
    # With the sticky bit (as /tmp has), every user can add names but not replace another's.
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    sticky.chmod(0o1777)
    assert command(sb, sticky).returncode == 0


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a directory to another user needs root")
def test_an_output_owned_by_another_user_is_refused_unless_allowed(sb: bf.Sandbox, tmp_path: Path) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chown(theirs, 65534, 65534)
    assert_refused(command(sb, theirs), "is a directory owned by another user (uid 65534)")
    assert list(theirs.iterdir()) == []
    assert command(sb, theirs, "--allow-shared-out").returncode == 0


def test_the_examples_export_under_the_users_own_directory() -> None:
    pages = [ROOT / "README.md", ROOT / "docs" / "export.md", *sorted((ROOT / "examples").iterdir())]
    for page in pages:
        if page.is_file():
            assert "--out /tmp" not in page.read_text(encoding="utf-8"), page
