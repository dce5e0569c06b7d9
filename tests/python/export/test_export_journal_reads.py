"""How often a run reads its journal (BENCHMARKS.md, export): each reading of a journal of
1,000,000 logins takes minutes, so the end of a run does not read again, to find and order them,
the entries its start checked and those it committed itself; a damaged entry is still refused
(docs/export.md#resume)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import bankfeed as bf
from bankfeed._export.ondisk import checks
from bankfeed._export.ondisk.layout import temporary_name
from bankfeed._export.storage import Storage

LOGINS = 6
PER_BATCH = 2


@pytest.fixture(scope="module")
def sb() -> Iterator[bf.Sandbox]:
    with bf.Sandbox(logins=LOGINS) as sandbox:
        yield sandbox


def _counting_reads(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Counts each journal entry's readings, by its name under the output."""
    reads: Counter[str] = Counter()
    read_text = checks.read_text

    def counted(storage: Storage, path: str, what: str, name: str) -> str:
        if what == "journal entry":
            reads[name] += 1
        return read_text(storage, path, what, name)

    monkeypatch.setattr(checks, "read_text", counted)
    return reads


def test_a_run_reads_each_entry_it_wrote_once(sb: bf.Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reads = _counting_reads(monkeypatch)
    with sb.client() as client:
        report = bf.export(client, sb.login_ids, tmp_path, what="investments,accounts", batch_logins=PER_BATCH)
    assert report.logins_written == LOGINS
    entries = sorted(
        path.relative_to(tmp_path).as_posix()
        for kind in ("investments", "accounts")
        for path in (tmp_path / "_journal" / kind).glob("*.json")
    )
    assert len(entries) >= 2 * LOGINS // PER_BATCH, entries
    # The end reads each once, for the state and the manifest; not once more to order them.
    assert reads == dict.fromkeys(entries, 1), reads


def test_the_next_night_reads_the_last_night_s_entries_twice(
    sb: bf.Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with sb.client() as client:
        bf.export(client, sb.login_ids, tmp_path, what="investments", batch_logins=PER_BATCH)
        before = {path.name for path in (tmp_path / "_journal" / "investments").glob("*.json")}
        reads = _counting_reads(monkeypatch)
        report = bf.export(client, sb.login_ids, tmp_path, what="investments", batch_logins=PER_BATCH)
    assert report.logins_written == LOGINS
    for name in before:
        # The start checks it and reads its state and cursors in the same reading; the end reads
        # it for the state. Its run's summary in the manifest is the one its record keeps.
        assert reads[f"_journal/investments/{name}"] == 2, reads
    new = [name for name in reads if name.rsplit("/", 1)[1] not in before]
    assert new and all(reads[name] == 1 for name in new), reads


def _nights(sb: bf.Sandbox, out: Path, nights: int) -> list[dict[str, Any]]:
    with sb.client() as client:
        for _ in range(nights):
            bf.export(client, sb.login_ids, out, what="investments", batch_logins=PER_BATCH)
    runs: list[dict[str, Any]] = json.loads((out / "_manifest.json").read_text())["runs"]
    return runs


def test_an_earlier_night_s_summary_is_counted_again_when_its_entries_changed(sb: bf.Sandbox, tmp_path: Path) -> None:
    [first, second] = _nights(sb, tmp_path, 2)
    assert first["logins_written"] == second["logins_written"] == LOGINS
    # A file of the first night's first batch deleted by hand: the next run drops that batch.
    [entry, *_] = sorted((tmp_path / "_journal" / "investments").glob("*.json"))
    dropped = json.loads(entry.read_text())
    (tmp_path / "investments" / "positions" / dropped["files"]["positions"]).unlink()
    [first_again, second_again, _] = _nights(sb, tmp_path, 1)
    assert first_again["run"] == first["run"] and second_again == second
    assert first_again["logins_written"] == LOGINS - len(dropped["written"]), "counted from the journal again"
    assert first_again["rows"] == first["rows"] - sum(dropped["rows"].values())


def test_a_summary_edited_in_a_record_is_refused(sb: bf.Sandbox, tmp_path: Path) -> None:
    _nights(sb, tmp_path, 1)
    [record] = (tmp_path / "_journal" / "runs").glob("*.json")
    edited = json.loads(record.read_text())
    edited["summary"]["logins"] = "all of them"
    record.write_text(json.dumps(edited))
    with sb.client() as client, pytest.raises(bf.ConfigError) as refused:
        bf.export(client, sb.login_ids, tmp_path, what="investments", batch_logins=PER_BATCH)
    assert record.name in str(refused.value) and "summary.logins" in str(refused.value)


def test_a_damaged_entry_is_still_refused_before_anything_is_touched(sb: bf.Sandbox, tmp_path: Path) -> None:
    with sb.client() as client:
        bf.export(client, sb.login_ids, tmp_path, what="investments", batch_logins=PER_BATCH)
        [entry, *_] = sorted((tmp_path / "_journal" / "investments").glob("*.json"))
        text = json.loads(entry.read_text())
        text["files"]["positions"] = "../../../elsewhere.parquet"
        entry.write_text(json.dumps(text))
        with pytest.raises(bf.ConfigError) as refused:
            bf.export(client, sb.login_ids, tmp_path, what="investments", batch_logins=PER_BATCH)
    assert entry.name in str(refused.value) and "files.positions" in str(refused.value)


def test_a_kill_s_rename_is_finished_only_once_every_entry_is_checked(sb: bf.Sandbox, tmp_path: Path) -> None:
    _nights(sb, tmp_path, 1)
    first, *_, last = sorted((tmp_path / "_journal" / "investments").glob("*.json"))
    committed = json.loads(first.read_text())
    final = tmp_path / "investments" / "positions" / committed["files"]["positions"]
    # As a kill between the commit and the rename leaves it: the batch's file under its
    # temporary name (``layout.temporary_name``).
    temporary = final.with_name(temporary_name(committed["batch"], "parquet"))
    final.rename(temporary)
    whole = last.read_text()
    last.write_text(whole[: len(whole) // 2])
    with sb.client() as client, pytest.raises(bf.ConfigError) as refused:
        bf.export(client, sb.login_ids, tmp_path, what="investments", batch_logins=PER_BATCH)
    assert last.name in str(refused.value)
    assert temporary.is_file() and not final.exists(), "nothing renamed before every entry was checked"
    last.write_text(whole)
    [night_1, night_2] = _nights(sb, tmp_path, 1)
    assert final.is_file() and not temporary.exists(), "the rename finished"
    assert night_1["logins_written"] == night_2["logins_written"] == LOGINS
