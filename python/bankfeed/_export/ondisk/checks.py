"""What an export reads back from its directory, checked before anything is done with it
(docs/export.md#what-a-resume-touches): the journal's entries, the runs' records and the
manifest, field by field, and every name they hold against the names the export itself makes.

A resume renames and deletes the files a journal entry names, and builds on what the records and
the manifest say. What is there was written by bankfeed, or by anything else that could write the
directory: a copy cut short, a hand edit, names planted to make a resume touch files outside the
export. So nothing read back is trusted: each field must have its type, a name must be one the
export makes (``part-<batch>.<fmt>`` in its run's partition, with a batch and a run named as the
writers name them: no other separator, no ``..``), and anything else is a
:class:`~bankfeed.ConfigError` naming ``out``, the file and the field, raised before the first
file is touched: never a traceback, never a guess.
"""

from __future__ import annotations

import errno
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

from bankfeed._export.events import check_cursor
from bankfeed._export.formulas import CSV_FORMULAS
from bankfeed._export.kinds import KINDS
from bankfeed._export.ondisk.layout import BATCH, FORMATS, JOURNAL, RUN, part_name, partition, record_of_file
from bankfeed.errors import ConfigError, _config_error

if TYPE_CHECKING:
    from bankfeed._export.storage import Storage

__all__ = ["journal_entry", "manifest", "read_text", "run_record", "unreadable"]


def _is_text(value: object) -> bool:
    return isinstance(value, str)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _or_null(check: Callable[[object], bool]) -> Callable[[object], bool]:
    return lambda value: value is None or check(value)


#: A field's type: how it is checked, and how a message says it.
_Type = tuple[Callable[[object], bool], str]
TEXT: _Type = (_is_text, "text")
TEXT_OR_NULL: _Type = (_or_null(_is_text), "text or null")
NUMBER: _Type = (_is_number, "a number")
NUMBER_OR_NULL: _Type = (_or_null(_is_number), "a number or null")
COUNT: _Type = (_is_count, "a whole number of at least 0")
COUNT_OR_NULL: _Type = (_or_null(_is_count), "a whole number of at least 0, or null")
FLAG_OR_NULL: _Type = (_or_null(lambda value: isinstance(value, bool)), "true, false or null")
OBJECT: _Type = (lambda value: isinstance(value, dict), "an object")
LIST: _Type = (lambda value: isinstance(value, list), "a list")
FORMAT_OR_NULL: _Type = (lambda value: value is None or value in FORMATS, '"parquet", "csv" or null')
MONEY_OR_NULL: _Type = (lambda value: value is None or value in ("float", "decimal"), '"float", "decimal" or null')
CSV_FORMULAS_OR_NULL: _Type = (lambda value: value is None or value in CSV_FORMULAS, '"escape", "raw" or null')


def _shown(value: object) -> str:
    """A value read back, as a message shows it: its JSON type, and a scalar's start."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    text = repr(value)
    text = text if len(text) <= 60 else text[:57] + "..."
    return f"text {text}" if isinstance(value, str) else f"the number {text}"


@dataclass(frozen=True)
class _File:
    """One file read back: ``out`` as shown, what the file is, its path under the output, and
    what the person can do about a damaged one."""

    out: str
    what: str
    name: str
    remedy: str

    def refuse(self, problem: str) -> NoReturn:
        raise _config_error(
            "out", f"{self.out}: the {self.what} {self.name} {problem}; nothing was changed: {self.remedy}"
        )

    def parse(self, text: str) -> dict[str, Any]:
        """``text`` as a JSON object."""
        try:
            value = json.loads(text)
        except (ValueError, RecursionError) as exc:
            self.refuse(f"is not whole JSON (cut short, or edited): {exc}")
        if not isinstance(value, dict):
            self.refuse(f"must hold a JSON object, not {_shown(value)}")
        return value

    def get(self, record: Mapping[str, Any], key: str, kind: _Type, *, at: str = "", optional: bool = False) -> Any:
        """``record[key]``, of type ``kind``; None when ``optional`` and absent. ``at`` is where
        ``record`` is in the file (``failed[2]``), for the message."""
        field = f"{at}.{key}" if at else key
        if key not in record:
            if optional:
                return None
            self.refuse(f"has no field {field}")
        value = record[key]
        check, rule = kind
        if not check(value):
            self.refuse(f"has a field {field} that must be {rule}, not {_shown(value)}")
        return value

    def kind_name(self, name: str, field: str) -> None:
        if name not in KINDS:
            self.refuse(f"names a kind {_shown(name)} in {field}, which is none of {', '.join(KINDS)}")


def unreadable(out: str, what: str, name: str, reason: str) -> ConfigError:
    """The error of a file of the export that cannot be read (a symbolic link, a directory, no
    permission, not text) for ``reason``."""
    return _config_error(
        "out",
        f"{out}: the {what} {name} cannot be read ({reason}); nothing was changed: put back the file the export "
        "wrote, or remove it",
    )


def journal_entry(out: str, kind: str, fmt: str, name: str, text: str, *, cursors: bool = True) -> dict[str, Any]:
    """The journal entry of ``kind`` in the file ``name`` (``<batch>.json``), whose content is
    ``text``, checked: every field of ``writer.KindWriter.commit``'s entry, and every file it
    names is its own batch's part file in a table of ``kind``. ``cursors`` false: its cursors
    are not checked again (``state.Journal`` reads an entry checked once, several times, and the
    cursors are most of the checking's time)."""
    batch = record_of_file(name) or name
    where = f"{JOURNAL}/{kind}/{name}"
    if not BATCH.fullmatch(batch):
        foreign = _File(out, "journal entry", where, f"move it out of {JOURNAL}/{kind}/, which holds the export's only")
        foreign.refuse("is not named as the export names its entries (<batch>.json, the batch named after its run)")
    file = _File(
        out,
        "journal entry",
        where,
        f"restore it, or delete it with the files part-{batch}.* of every table under {kind}/ and _raw/{kind}/: "
        "the resume then "
        "fetches its logins again",
    )
    entry = file.parse(text)
    if file.get(entry, "batch", TEXT) != batch:
        file.refuse(f"has a field batch, {_shown(entry['batch'])}, that is not the batch of its name, {batch!r}")
    if file.get(entry, "kind", TEXT) != kind:
        file.refuse(f"has a field kind, {_shown(entry['kind'])}, that is not the kind of its directory, {kind!r}")
    file.get(entry, "committed_at", NUMBER)
    # The run whose partition holds the batch's files; an entry of an export written before runs
    # had partitions has none, its files then directly in each table.
    run = file.get(entry, "run", TEXT, optional=True)
    if run is not None and not RUN.fullmatch(run):
        file.refuse(f"has a field run, {_shown(run)}, that is not a run's name")
    for index, pair in enumerate(file.get(entry, "written", LIST)):
        field = f"written[{index}]"
        if not (isinstance(pair, list) and len(pair) == 2):
            file.refuse(f"has a field {field} that must be a [login_id, request_id] pair, not {_shown(pair)}")
        if not _is_text(pair[0]):
            file.refuse(f"has a field {field}[0] that must be text, not {_shown(pair[0])}")
        if not TEXT_OR_NULL[0](pair[1]):
            file.refuse(f"has a field {field}[1] that must be text or null, not {_shown(pair[1])}")
    for index, record in enumerate(file.get(entry, "failed", LIST)):
        at = f"failed[{index}]"
        if not isinstance(record, dict):
            file.refuse(f"has a field {at} that must be an object, not {_shown(record)}")
        file.get(record, "login_id", TEXT, at=at)
        file.get(record, "error", TEXT, at=at)
        for key in ("kind", "code", "message", "request_id", "operation"):
            file.get(record, key, TEXT_OR_NULL, at=at, optional=True)
    tables = KINDS[kind]
    own = part_name(batch, fmt) if run is None else f"{partition(run)}/{part_name(batch, fmt)}"
    for table, part in file.get(entry, "files", OBJECT).items():
        if table not in tables:
            file.refuse(f"names a table {_shown(table)} in files, which {kind} has not ({', '.join(tables)})")
        if part != own:
            # The one name a batch's file can have: a resume renames and deletes nothing else.
            file.refuse(f"has a field files.{table}, {_shown(part)}, that is not its batch's part file, {own!r}")
    # The batch's payloads with keep_raw (``raw.py``): its part file in its run's partition of
    # ``_raw/<kind>``, named as ``files`` are.
    raw = file.get(entry, "raw", TEXT, optional=True)
    if raw is not None and raw != own:
        file.refuse(f"has a field raw, {_shown(raw)}, that is not its batch's part file, {own!r}")
    # Where each login's transactions stand (``events.py``): what the next run asks from.
    for login, cursor in (file.get(entry, "cursors", OBJECT, optional=True) or {}).items() if cursors else ():
        problem = check_cursor(cursor)
        if problem is not None:
            file.refuse(f"has a field cursors.{login} that is not a cursor: {problem}")
    rows = file.get(entry, "rows", OBJECT)
    for table in rows:
        if table not in tables:
            file.refuse(f"names a table {_shown(table)} in rows, which {kind} has not ({', '.join(tables)})")
        file.get(rows, table, COUNT, at="rows")
    return entry


def _unknown_fields(file: _File, fields: Mapping[str, Any], at: str) -> None:
    """Counts of fields no table reads (``unknown.py``): each a path to a whole number."""
    for path, count in fields.items():
        if not _is_count(count):
            file.refuse(f"has a field {at}.{path} that must be a whole number of at least 0, not {_shown(count)}")


def _unknown_fields_per_kind(file: _File, kinds: Mapping[str, Any], at: str) -> None:
    """A run's ``unknown_fields``: per kind, the counts of :func:`_unknown_fields`."""
    for name, fields in kinds.items():
        file.kind_name(name, at)
        if not isinstance(fields, dict):
            file.refuse(f"has a field {at}.{name} that must be an object, not {_shown(fields)}")
        _unknown_fields(file, fields, f"{at}.{name}")


def _kinds(file: _File, kinds: Mapping[str, Any], at: str) -> None:
    """The ``kinds`` of a run's record or of the manifest: how each kind was asked."""
    for name, asked in kinds.items():
        file.kind_name(name, at)
        field = f"{at}.{name}"
        if not isinstance(asked, dict):
            file.refuse(f"has a field {field} that must be an object, not {_shown(asked)}")
        file.get(asked, "what", TEXT_OR_NULL, at=field, optional=True)
        file.get(asked, "options", OBJECT, at=field, optional=True)
        # The manifest's: the fields no table reads, as the kind's newest run counted them.
        unknown = file.get(asked, "unknown_fields", OBJECT, at=field, optional=True) or {}
        _unknown_fields(file, unknown, f"{field}.unknown_fields")


#: The fields of a run as its record and the manifest's ``runs`` keep them (``state.py``).
_RUN_FIELDS: dict[str, _Type] = {
    "started_at": TEXT_OR_NULL,
    "started": NUMBER_OR_NULL,
    "finished_at": TEXT_OR_NULL,
    "logins_asked": COUNT_OR_NULL,
    "logins_fetched": COUNT_OR_NULL,
    "logins_failed": COUNT_OR_NULL,
    "interrupted": FLAG_OR_NULL,
}


def run_record(out: str, name: str, text: str) -> dict[str, Any]:
    """The run's record in the file ``name`` of the journal's runs (``<run>.json``), checked."""
    where = f"{JOURNAL}/runs/{name}"
    run = record_of_file(name) or name
    if not RUN.fullmatch(run):
        foreign = _File(out, "run record", where, f"move it out of {JOURNAL}/runs/, which holds the export's only")
        foreign.refuse("is not named as the export names its runs' records (<run>.json)")
    file = _File(
        out,
        "run record",
        where,
        "restore it, or delete it: it only says how that run asked, and a resume then compares with the other runs",
    )
    record = file.parse(text)
    if file.get(record, "run", TEXT) != run:
        file.refuse(f"has a field run, {_shown(record['run'])}, that is not the run of its name, {run!r}")
    for key, kind in _RUN_FIELDS.items():
        file.get(record, key, kind, optional=True)
    part_of = file.get(record, "part_of", TEXT_OR_NULL, optional=True)
    if part_of is not None and not RUN.fullmatch(part_of):
        file.refuse(f"has a field part_of, {_shown(part_of)}, that is not a run's name")
    file.get(record, "format", FORMAT_OR_NULL, optional=True)
    file.get(record, "money", MONEY_OR_NULL, optional=True)
    file.get(record, "csv_formulas", CSV_FORMULAS_OR_NULL, optional=True)
    _kinds(file, file.get(record, "kinds", OBJECT, optional=True) or {}, "kinds")
    _unknown_fields_per_kind(file, file.get(record, "unknown_fields", OBJECT, optional=True) or {}, "unknown_fields")
    summary = file.get(record, "summary", OBJECT, optional=True)
    if summary is not None:
        _summary(file, summary)
    return record


def _summary(file: _File, summary: Mapping[str, Any]) -> None:
    """A run's summary as its process's end counted it from the journal (``runs.summaries``):
    its counts, the kinds it has entries of, and how many entries of each it counted."""
    for key in ("logins", "logins_failed", "rows"):
        file.get(summary, key, COUNT, at="summary")
    for index, name in enumerate(file.get(summary, "kinds", LIST, at="summary")):
        if not _is_text(name):
            file.refuse(f"has a field summary.kinds[{index}] that must be text, not {_shown(name)}")
        file.kind_name(name, "summary.kinds")
    entries = file.get(summary, "entries", OBJECT, at="summary")
    for name in entries:
        file.kind_name(name, "summary.entries")
        file.get(entries, name, COUNT, at="summary.entries")


def manifest(out: str, name: str, text: str) -> dict[str, Any]:
    """The manifest (``name``, its content ``text``), checked: the fields a run reads of it."""
    file = _File(out, "manifest", name, "delete it: the next run writes it again from the journal")
    value = file.parse(text)
    file.get(value, "format", FORMAT_OR_NULL, optional=True)
    file.get(value, "money", MONEY_OR_NULL, optional=True)
    _kinds(file, file.get(value, "kinds", OBJECT, optional=True) or {}, "kinds")
    for index, run in enumerate(file.get(value, "runs", LIST, optional=True) or []):
        at = f"runs[{index}]"
        if not isinstance(run, dict):
            file.refuse(f"has a field {at} that must be an object, not {_shown(run)}")
        if not RUN.fullmatch(file.get(run, "run", TEXT, at=at)):
            file.refuse(f"has a field {at}.run, {_shown(run['run'])}, that is not a run's name")
        for key, kind in _RUN_FIELDS.items():
            file.get(run, key, kind, at=at, optional=True)
        unknown = file.get(run, "unknown_fields", OBJECT, at=at, optional=True) or {}
        _unknown_fields_per_kind(file, unknown, f"{at}.unknown_fields")
        for position, what in enumerate(file.get(run, "what", LIST, at=at, optional=True) or []):
            if not TEXT_OR_NULL[0](what):
                file.refuse(f"has a field {at}.what[{position}] that must be text or null, not {_shown(what)}")
    return value


def read_text(storage: Storage, path: str, what: str, name: str) -> str:
    """The text of ``path``, the ``what`` called ``name`` in messages; a ``ConfigError`` naming
    ``out`` and the file when it cannot be read."""
    try:
        return storage.read_text(path)
    except OSError as exc:
        reason = "it is a symbolic link, which is never followed" if exc.errno == errno.ELOOP else exc.strerror
        raise unreadable(storage.shown, what, name, reason or str(exc)) from None
    except UnicodeDecodeError:
        raise unreadable(storage.shown, what, name, "it is not UTF-8 text") from None
