"""What a run keeps per login for its whole length, read back from the journal: the logins it wrote
(``state.py``, ``login_set.py``) and where each login's transactions stand (``events.py``,
``cursor_store.py``). Kept compactly, or on disk: the peak memory of an export of 1,000,000 logins
must stay within 1.5 times that of 1,000 (BENCHMARKS.md, export); the set or dict of Python
objects per login these replace was what grew with the logins."""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path
from typing import Any

from bankfeed._export.events import Events, states
from bankfeed._export.login_set import LoginIdSet, count_in_all
from bankfeed._export.ondisk.journal import read_journal
from bankfeed._export.ondisk.manifest import _dump, _Streamed, previous_manifest
from bankfeed._export.state import read_state
from bankfeed._export.storage import Storage

RUN = "20261126T020000-3f9a1c"
LOGINS = 6000
PER_BATCH = 1000


def _size(value: Any, seen: set[int] | None = None) -> int:
    """The bytes ``value`` holds in Python objects, everything it refers to included (containers,
    ``__slots__`` and ``__dict__``): what a run keeps in memory of it."""
    seen = set() if seen is None else seen
    if id(value) in seen or isinstance(value, type):
        return 0
    seen.add(id(value))
    size = sys.getsizeof(value)
    if isinstance(value, dict):
        size += sum(_size(key, seen) + _size(item, seen) for key, item in value.items())
    elif isinstance(value, list | tuple | set | frozenset):
        size += sum(_size(item, seen) for item in value)
    for name in getattr(type(value), "__slots__", ()):
        size += _size(getattr(value, name, None), seen)
    if hasattr(value, "__dict__") and not callable(value):
        size += _size(vars(value), seen)
    return size


def _journal(out: Path, kind: str, logins: list[str]) -> Storage:
    """A journal of ``kind`` in ``out`` that wrote ``logins`` in batches, each login with the cursor
    of a few transactions, as ``writer.KindWriter.commit`` writes them."""
    directory = out / "_journal" / kind
    directory.mkdir(parents=True)
    for number, start in enumerate(range(0, len(logins), PER_BATCH), 1):
        batch = f"{RUN}-{number:06d}"
        written = logins[start : start + PER_BATCH]
        cursors = {
            login: {
                "through": {"account-1": "2026-11-20"},
                "seen": {f"2026-11-{day:02d}": {f"{index:06d}{day:06d}": "0cab4832"} for day in range(14, 21)},
            }
            for index, login in enumerate(written)
        }
        if kind == "investments":
            for cursor in cursors.values():
                cursor.pop("through")
        entry = {
            "batch": batch,
            "kind": kind,
            "run": RUN,
            "committed_at": 1764122400.0 + number,
            "written": [[login, f"request-{login}"] for login in written],
            "failed": [],
            "files": {},
            "rows": {},
            "cursors": cursors,
        }
        (directory / f"{batch}.json").write_text(json.dumps(entry))
    return Storage(str(out))


def test_the_logins_a_run_wrote_are_held_compactly(tmp_path: Path) -> None:
    logins = [str(uuid.UUID(int=number * 7919)) for number in range(LOGINS)]
    storage = _journal(tmp_path, "investments", logins)
    journal = read_journal(storage, "investments", "parquet")
    state = read_state(storage, "investments", "parquet", run=RUN, entries=journal)
    assert len(state.written) == LOGINS and all(state.has(login) for login in logins[::97])
    assert state.has(logins[5].upper()), "asked in another case, it is the same login"
    assert not state.has(str(uuid.UUID(int=1)))
    assert list(state.written) == sorted(logins), "the manifest lists them sorted"
    as_set = _size(set(logins))
    assert _size(state.written) < as_set / 2, f"{_size(state.written):,} bytes against {as_set:,} for a set of str"
    # The journal read is held as its entries' names, not their logins (nor their cursors).
    entries = _size(list(journal))
    assert _size(journal) < entries / 100, f"{_size(journal):,} bytes held of a journal of {entries:,}"


def test_where_each_login_s_transactions_stand_is_not_held_in_memory(tmp_path: Path) -> None:
    logins = [str(uuid.UUID(int=number * 104729)) for number in range(LOGINS)]
    storage = _journal(tmp_path, "accounts", logins)
    store, apply = states("accounts")
    read_state(storage, "accounts", "parquet", each=apply)
    try:
        events = Events("accounts", "transactions", store)
        assert len(store) == LOGINS and logins[7] in store
        assert events.date_from(logins[7]) == "2026-11-13", "7 days before its newest transaction"
        assert events.date_from(logins[7].upper()) == "2026-11-13", "a LoginId in another case is the same login"
        assert events.date_from(str(uuid.UUID(int=3))) is None, "a login never written asks for everything"
        assert store[logins[7]]["seen"]["2026-11-20"] == {"000007000020": "0cab4832"}
        assert events.of(logins[:3]).previous == {login: store[login] for login in logins[:3]}
        as_dicts = _size(dict(store.items()))
        assert _size(store) < as_dicts / 50, f"{_size(store):,} bytes held, against {as_dicts:,} as dicts"
    finally:
        store.close()


def test_sets_of_login_ids_count_what_sets_count() -> None:
    ids = [str(uuid.UUID(int=number)) for number in range(30_000)]
    first = LoginIdSet([*ids[:20_000], *ids[:500], "two\nlines"])
    second = LoginIdSet(reversed(ids[10_000:]))
    assert (len(first), len(second)) == (20_001, 20_000), "each once"
    assert count_in_all([first, second]) == 10_000
    assert count_in_all([first]) == 20_001 and count_in_all([]) == 0
    assert "two\nlines" in first and "two" not in first and ids[25_000] not in first and 7 not in first
    assert list(LoginIdSet(["b", "a\nx", "a", "b"])) == ["a", "a\nx", "b"]
    assert not LoginIdSet() and repr(LoginIdSet(ids[:3])) == "LoginIdSet(3 LoginIds)"


def test_the_manifest_read_back_leaves_its_lists_of_logins_out(tmp_path: Path) -> None:
    logins = [str(uuid.UUID(int=number)) for number in range(3000)]
    manifest = {
        "format": "parquet",
        "kinds": {
            "investments": {
                "what": "investments",
                "options": {},
                "logins_written": _Streamed(LoginIdSet(logins)),
                "logins_failed": ["x"],
                "unknown_fields": {"Accounts[].New": 3},
            }
        },
        "runs": [{"run": RUN, "logins_written": 3000}],
    }
    with open(tmp_path / "_manifest.json", "w") as file:
        _dump(manifest, file)
    written = json.loads((tmp_path / "_manifest.json").read_text())
    assert written["kinds"]["investments"]["logins_written"] == logins, "the file lists every login, sorted"
    read = previous_manifest(Storage(str(tmp_path)))
    assert read is not None
    kind = read["kinds"]["investments"]
    assert (kind["logins_written"], kind["logins_failed"]) == ([], []), "nothing reads them back: not held"
    assert kind["unknown_fields"] == {"Accounts[].New": 3} and read["runs"] == [{"run": RUN, "logins_written": 3000}]
