"""What a resume reads back from the export directory is checked before anything is touched
(docs/export.md#what-a-resume-touches): a journal entry naming a file outside the export (an
absolute path, a ``../`` path) or a name the export never makes, an entry cut short, and a
journal, run record or manifest whose fields have other types each stop the resume with exit 2,
one line naming the file (and the field), nothing renamed or deleted, inside the export or out.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import bankfeed as bf
from exporthelpers import run_export

LOGINS = 3
BATCH = "20261126T000000-abcdef-000001"


@pytest.fixture(scope="module")
def sb() -> Iterator[bf.Sandbox]:
    with bf.Sandbox(logins=LOGINS) as sandbox:
        yield sandbox


def exported(sb: bf.Sandbox, out: Path, logins: int = 2) -> Path:
    bf.export(sb.client(poll_interval=0.01), sb.login_ids[:logins], out, what="investments,accounts")
    return out


def resume(sb: bf.Sandbox, out: Path) -> subprocess.CompletedProcess[str]:
    return run_export(sb, "--out", str(out), "--resume", "--what", "investments,accounts", "--quiet")


def snapshot(root: Path) -> dict[str, bytes | str]:
    """Every name under ``root`` with its content (a link: where it points); the lock aside, which
    each run writes."""
    found: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        name = path.relative_to(root).as_posix()
        if path.is_symlink():
            found[name] = "-> " + os.readlink(path)
        elif path.is_file() and name != "_journal/lock":
            found[name] = path.read_bytes()
    return found


def an_entry(out: Path, kind: str = "investments") -> Path:
    return sorted((out / "_journal" / kind).glob("*.json"))[0]


def planted_entry(files: dict[str, str], batch: str = BATCH, **fields: Any) -> str:
    entry = {
        "batch": batch,
        "kind": "investments",
        "committed_at": 1.0,
        "written": [],
        "failed": [],
        "files": files,
        "rows": dict.fromkeys(files, 0),
        **fields,
    }
    return json.dumps(entry)


def plant_absolute(out: Path, outside: Path) -> str:
    # A temporary part file, and an entry whose file is an absolute path: the resume would move
    # the temporary file there (a Python startup file, say).
    target = outside / "sitecustomize.py"
    (out / "investments" / "accounts" / f".part-{BATCH}.parquet.tmp").write_text("import os  # planted\n")
    (out / "_journal" / "investments" / f"{BATCH}.json").write_text(planted_entry({"accounts": str(target)}))
    return f"_journal/investments/{BATCH}.json"


def plant_parent(out: Path, outside: Path) -> str:
    # An entry naming a file above the export, and one of its files missing: the resume would
    # drop the batch whole, deleting the file above.
    (outside / "precious.txt").write_text("keep me\n")
    files = {"accounts": "../../../outside/precious.txt", "positions": f"part-{BATCH}.parquet"}
    (out / "_journal" / "investments" / f"{BATCH}.json").write_text(planted_entry(files))
    return f"_journal/investments/{BATCH}.json"


def plant_raw_parent(out: Path, outside: Path) -> str:
    # An entry whose payloads' file (keep_raw) is above the export, and a file of its batch
    # missing: the resume would drop the batch whole, deleting the file above.
    (outside / "precious.txt").write_text("keep me\n")
    raw = "../../../../../outside/precious.txt"
    entry = planted_entry({"positions": f"part-{BATCH}.parquet"}, raw=raw)
    (out / "_journal" / "investments" / f"{BATCH}.json").write_text(entry)
    return f"_journal/investments/{BATCH}.json has a field raw, text {raw!r}, that is not its batch's part file"


def plant_foreign_name(out: Path, outside: Path) -> str:
    # A name the export never makes, for the entry and its file: the resume would rename the
    # planted temporary file into the dataset.
    (out / "investments" / "accounts" / ".part-evil.parquet.tmp").write_bytes(
        next((out / "investments" / "accounts").rglob("part-*")).read_bytes()
    )
    (out / "_journal" / "investments" / "evil.json").write_text(
        planted_entry({"accounts": "part-evil.parquet"}, batch="evil")
    )
    return "_journal/investments/evil.json"


def plant_cut_short(out: Path, outside: Path) -> str:
    entry = an_entry(out)
    text = entry.read_text()
    entry.write_text(text[: len(text) // 2])
    return f"_journal/investments/{entry.name} is not whole JSON"


def plant_committed_at_text(out: Path, outside: Path) -> str:
    entry = an_entry(out, "accounts")
    value = json.loads(entry.read_text())
    entry.write_text(json.dumps({**value, "committed_at": "x"}))
    return f"_journal/accounts/{entry.name} has a field committed_at that must be a number, not text 'x'"


def plant_kinds_list(out: Path, outside: Path) -> str:
    [record] = (out / "_journal" / "runs").glob("*.json")
    value = json.loads(record.read_text())
    record.write_text(json.dumps({**value, "kinds": ["investments"]}))
    return f"_journal/runs/{record.name} has a field kinds that must be an object, not a list"


def plant_unknown_fields_text(out: Path, outside: Path) -> str:
    [record] = (out / "_journal" / "runs").glob("*.json")
    value = json.loads(record.read_text())
    record.write_text(json.dumps({**value, "unknown_fields": {"investments": {"Esg": "many"}}}))
    return (
        f"_journal/runs/{record.name} has a field unknown_fields.investments.Esg that must be a whole number "
        "of at least 0, not text 'many'"
    )


def plant_runs_text(out: Path, outside: Path) -> str:
    manifest = out / "_manifest.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "runs": "x"}))
    return "_manifest.json has a field runs that must be a list, not text 'x'"


def plant_written_pair(out: Path, outside: Path) -> str:
    entry = an_entry(out)
    value = json.loads(entry.read_text())
    entry.write_text(json.dumps({**value, "written": [[1, None]]}))
    return f"_journal/investments/{entry.name} has a field written[0][0] that must be text, not the number 1"


def plant_link(out: Path, outside: Path) -> str:
    # A journal entry that is a link to a file elsewhere: not followed.
    (outside / "elsewhere.json").write_text(planted_entry({}))
    (out / "_journal" / "investments" / f"{BATCH}.json").symlink_to(outside / "elsewhere.json")
    return f"_journal/investments/{BATCH}.json cannot be read (it is a symbolic link"


PLANTS: dict[str, Callable[[Path, Path], str]] = {
    "absolute-path": plant_absolute,
    "parent-path": plant_parent,
    "raw-parent-path": plant_raw_parent,
    "name-outside-the-pattern": plant_foreign_name,
    "entry-cut-short": plant_cut_short,
    "committed_at-text": plant_committed_at_text,
    "run-kinds-a-list": plant_kinds_list,
    "run-unknown-fields-text": plant_unknown_fields_text,
    "manifest-runs-text": plant_runs_text,
    "written-not-text": plant_written_pair,
    "entry-a-link": plant_link,
}


@pytest.mark.parametrize("plant", list(PLANTS.values()), ids=list(PLANTS))
def test_a_resume_stops_at_what_is_not_the_exports_own_and_touches_nothing(
    sb: bf.Sandbox, tmp_path: Path, plant: Callable[[Path, Path], str]
) -> None:
    out, outside = tmp_path / "a" / "b" / "out", tmp_path / "outside"
    outside.mkdir()
    exported(sb, out)
    says = plant(out, outside)
    before, before_outside = snapshot(out), snapshot(outside)
    done = resume(sb, out)
    assert done.returncode == 2, (done.returncode, done.stderr)
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("error: --out: ") and says in line, line
    assert "nothing was changed" in line and "Traceback" not in done.stderr
    assert snapshot(out) == before, "nothing in the export renamed, deleted or written"
    assert snapshot(outside) == before_outside, "nothing outside it either"
    assert not (outside / "sitecustomize.py").exists()


def test_the_python_api_raises_config_error_and_the_resume_goes_on_once_repaired(
    sb: bf.Sandbox, tmp_path: Path
) -> None:
    out = exported(sb, tmp_path / "out")
    entry = an_entry(out)
    whole = entry.read_text()
    entry.write_text(whole[:-10])
    client = sb.client(poll_interval=0.01)
    with pytest.raises(bf.ConfigError) as raised:
        bf.export(client, sb.login_ids, out, what="investments,accounts", resume=True)
    assert raised.value.field == "out" and f"_journal/investments/{entry.name}" in str(raised.value)
    # Its batch's part files are still there: skipped, its logins would be written twice.
    batch = entry.name.removesuffix(".json")
    assert list((out / "investments" / "accounts").rglob(f"part-{batch}.parquet"))
    entry.write_text(whole)
    report = bf.export(client, sb.login_ids, out, what="investments,accounts", resume=True)
    assert (report.logins_written, report.logins_skipped) == (LOGINS - 2, 2), "the lock was released by the refusal"


def test_a_resume_deletes_only_the_temporary_files_of_its_own_naming(sb: bf.Sandbox, tmp_path: Path) -> None:
    out = exported(sb, tmp_path / "out")
    [record] = (out / "_journal" / "runs").glob("*.json")
    # What a kill while the manifest and a run's record were written leaves, and files of the
    # user's beside them.
    left = [out / "._manifest.json.0123456789ab.tmp", out / "_journal" / "runs" / f".{record.name}.0123456789ab.tmp"]
    mine = [out / ".notes.0123456789ab.tmp", out / "._manifest.json.tmp", out / "_journal" / "runs" / "notes.txt"]
    for path in [*left, *mine]:
        path.write_text("x")
    bf.export(sb.client(poll_interval=0.01), sb.login_ids, out, what="investments,accounts", resume=True)
    assert not [path for path in left if path.exists()]
    assert all(path.read_text() == "x" for path in mine)
