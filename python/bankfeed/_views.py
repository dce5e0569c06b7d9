"""Notebook views (``_repr_html_``) of tables, results, sessions, combined results and export
reports (docs/notebooks.md). The native classes' ``_repr_html_`` call the functions here.

Three rules hold for every view:

- **Short for a large result.** A table shows its first and last rows (5 and 5, an ellipsis row
  between, as pandas and polars do) and at most 20 columns; a result shows each of its tables
  shorter still; a chart draws a bounded number of bars and of points per line.
- **What a person reads first.** Names, symbols, quantities, amounts and dates come before the
  ids (``*_id`` columns), which come last.
- **Every value escaped.** Values are the service's data (an account's name, a description) and
  are escaped where they land, in text, attributes and SVG alike.
- **No secret.** No password, answer, key or token reaches a view, and neither does a login's
  username. LoginIds are shortened to their last four characters (``…1a2b``) wherever a view
  shows one, a ``login_id`` column included: a notebook's outputs are saved in the ``.ipynb`` and
  shared with it, and a LoginId opens the login's data to anyone holding the API keys
  (docs/notebooks.md#what-a-view-never-shows).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import TYPE_CHECKING, Any, Protocol

from bankfeed import _svg
from bankfeed._export.location import shown as shown_location

if TYPE_CHECKING:
    # Annotations only: the core imports this module lazily, when a notebook asks for a view.
    from bankfeed._native import (
        Accounts,
        AsyncSession,
        Attributes,
        Combined,
        Investments,
        Session,
        Statements,
        Table,
    )

__all__ = [
    "accounts_html",
    "attributes_html",
    "combined_html",
    "export_report_html",
    "investments_html",
    "session_html",
    "statements_html",
    "table_html",
]

#: Rows a table view shows at each end; a table of at most twice as many shows them all.
HEAD_ROWS = 5
#: Columns a table view shows at most (half from each end, an ellipsis column between).
MAX_COLUMNS = 20
#: Rows each table of a result shows at each end.
RESULT_ROWS = 3
#: Characters of a cell shown before it is cut.
CELL_CHARS = 40
#: Bars of the largest-positions chart; accounts in the value-by-account chart.
TOP_POSITIONS = 10
MAX_BARS = 12
#: Accounts drawn in the balance chart, and points per line.
MAX_LINES = 6
MAX_POINTS = 120
#: Messages shown per error class.
MESSAGES_PER_CLASS = 3
MESSAGE_CHARS = 200

_STYLE = "font-size:12px;line-height:1.4;max-width:100%;overflow-x:auto"
_DIM = "opacity:0.65"
#: The cells' look, once per view rather than on every cell (a view stays small); colours are
#: the theme's own, so that a dark notebook shows the table as a light one does.
_SHEET = (
    "<style>"
    ".bankfeed-view table{border-collapse:collapse;font-size:12px;margin:4px 0}"
    ".bankfeed-view th,.bankfeed-view td{padding:2px 8px;border-bottom:1px solid rgba(128,128,128,.35);"
    "white-space:nowrap;text-align:left;background:transparent;color:inherit}"
    ".bankfeed-view td.n,.bankfeed-view th.n{text-align:right}"
    ".bankfeed-view .d{opacity:.65;font-weight:normal}"
    "</style>"
)
_NUMERIC = ("double",)


def short_login_id(login_id: object) -> str:
    """A LoginId as a view shows it: its last four characters after an ellipsis."""
    text = str(login_id)
    return "\u2026" + text[-4:] if len(text) > 4 else "\u2026"


def _cut(text: str, limit: int = CELL_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _value(value: Any) -> str:
    """A cell's text, as polars shows it: ``null``, ``true``, ISO dates, lists as JSON."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return format(value, ".10g")
    if isinstance(value, dt.datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, list):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _td(value: Any, *, numeric: bool = False, login_id: bool = False) -> str:
    if value is None:
        return '<td class="d">null</td>'
    text = short_login_id(value) if login_id else _cut(_value(value))
    return f"{'<td class=n>' if numeric else '<td>'}{escape(text)}</td>"


def _money(value: float | None) -> str:
    return "\u2014" if value is None else f"{value:,.2f}"


def _ratio(value: float | None) -> str:
    return "\u2014" if value is None else f"{value:.0%}"


def _facts(pairs: Iterable[tuple[str, str]]) -> str:
    """``name: value`` pairs on one line (values already escaped)."""
    items = [f"<span><span style='{_DIM}'>{escape(name)}</span> {value}</span>" for name, value in pairs]
    return f'<div style="display:flex;flex-wrap:wrap;gap:4px 16px;margin:2px 0">{"".join(items)}</div>'


def _code(value: object) -> str:
    return f"<code>{escape(str(value))}</code>"


def _shape(table: Table) -> str:
    rows, columns = len(table), len(table.columns)
    return f"{rows:,} row{'s' if rows != 1 else ''} \u00d7 {columns} column{'s' if columns != 1 else ''}"


def _is_id(name: str) -> bool:
    return name == "id" or name.endswith(("_id", "_ids"))


def _reading_order(names: Sequence[str]) -> list[int]:
    """The positions of ``names`` as a view shows them: the columns a person reads (names,
    symbols, quantities, amounts, dates) first, the ids after, each group in the table's order,
    so that a wide table shows ``symbol`` and ``market_value`` before its ids push them off the
    page (docs/notebooks.md)."""
    return [i for i, name in enumerate(names) if not _is_id(name)] + [i for i, name in enumerate(names) if _is_id(name)]


def _grid(table: Table, head: int) -> str:
    """The ``<table>`` of ``table``: names and types, the first and last ``head`` rows."""
    names, types, rows = table.columns, table._types(), len(table)
    shown = _reading_order(names)
    if len(shown) > MAX_COLUMNS:
        half = MAX_COLUMNS // 2
        shown = [*shown[:half], -1, *shown[-half:]]
    ends = [(0, rows)] if rows <= 2 * head else [(0, head), (rows - head, rows)]
    blocks = [table._rows(start, stop) for start, stop in ends]

    def header(cells: Sequence[str], dim: bool = False) -> str:
        classes = [
            " ".join([*(["n"] if i >= 0 and types[i] in _NUMERIC else []), *(["d"] if dim else [])]) for i in shown
        ]
        tags = [f'<th class="{c}">' if c else "<th>" for c in classes]
        return "<tr>" + "".join(f"{tag}{cell}</th>" for tag, cell in zip(tags, cells, strict=True)) + "</tr>"

    head_names = [escape(names[i]) if i >= 0 else "\u2026" for i in shown]
    head_types = [escape(types[i]) if i >= 0 else "" for i in shown]
    body: list[str] = []
    # A row's LoginId, wherever it shows in the row (an attributes group's Id is the LoginId).
    at = names.index("login_id") if "login_id" in names else None
    for number, block in enumerate(blocks):
        if number:
            body.append("<tr>" + "".join('<td class="d">\u2026</td>' for _ in shown) + "</tr>")
        for row in block:
            login_id = row[at] if at is not None and row[at] else None
            cells = [
                _td(row[i], numeric=types[i] in _NUMERIC, login_id=login_id is not None and row[i] == login_id)
                if i >= 0
                else '<td class="d">\u2026</td>'
                for i in shown
            ]
            body.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f"<table><thead>{header(head_names)}{header(head_types, dim=True)}"
        f"</thead><tbody>{''.join(body)}</tbody></table>"
    )


def _view(title: str, *parts: str) -> str:
    return f'<div class="bankfeed-view" style="{_STYLE}">{_SHEET}<b>{escape(title)}</b>{"".join(parts)}</div>'


def table_html(table: Table) -> str:
    """A table: its shape, its columns with their Arrow types, its first and last rows."""
    return _view("Table", f" <span style='{_DIM}'>{_shape(table)}</span>", _grid(table, HEAD_ROWS))


def _tables(named: Iterable[tuple[str, Table]], head: int = RESULT_ROWS) -> str:
    """Each table of a result, titled by its attribute, short (``head`` rows at each end); an empty
    one is named only."""
    parts: list[str] = []
    for name, table in named:
        title = f"<code>.{escape(name)}</code> <span style='{_DIM}'>{_shape(table)}</span>"
        if len(table) == 0:
            parts.append(f'<div style="margin-top:6px">{title}</div>')
        else:
            parts.append(
                f'<details open style="margin-top:6px"><summary>{title}</summary>{_grid(table, head)}</details>'
            )
    return "".join(parts)


def _floats(table: Table, name: str) -> list[float | None]:
    if name not in table.columns:
        return []
    return [v if isinstance(v, float) else None for v in table.column(name)]


def _texts(table: Table, name: str) -> list[str | None]:
    return [v if isinstance(v, str) else None for v in table.column(name)] if name in table.columns else []


def _first(*candidates: Sequence[str | None]) -> list[str]:
    """Per row, the first candidate column's value that is set (or ``?``)."""
    rows = max((len(c) for c in candidates), default=0)
    return [next((c[i] for c in candidates if i < len(c) and c[i]), None) or "?" for i in range(rows)]


def _charts(*charts: str) -> str:
    shown = [c for c in charts if c]
    if not shown:
        return ""
    return f'<div style="display:flex;flex-wrap:wrap;gap:8px 24px;margin:6px 0">{"".join(shown)}</div>'


def _value_by_account(inv: Investments) -> str:
    accounts = inv.accounts
    values = _floats(accounts, "account_value")
    labels = _first(_texts(accounts, "account_name"), _texts(accounts, "type"), _texts(accounts, "account_id"))
    pairs = sorted(((v, label) for v, label in zip(values, labels, strict=False) if v is not None), reverse=True)
    if not pairs:
        return ""
    extra = len(pairs) - MAX_BARS
    title = "Value by account" + (f" (largest {MAX_BARS} of {len(pairs)})" if extra > 0 else "")
    pairs = pairs[:MAX_BARS]
    return _svg.bar_chart([label for _, label in pairs], [v for v, _ in pairs], title=title)


def _largest_positions(inv: Investments) -> str:
    positions = inv.positions
    values = _floats(positions, "market_value")
    names = _first(_texts(positions, "symbol"), _texts(positions, "security_name"), _texts(positions, "security_id"))
    accounts = _texts(positions, "account_name")
    pairs = [
        (v, f"{name} \u00b7 {accounts[i]}" if i < len(accounts) and accounts[i] else name)
        for i, (v, name) in enumerate(zip(values, names, strict=False))
        if v is not None
    ]
    if not pairs:
        return ""
    pairs.sort(key=lambda pair: pair[0], reverse=True)
    title = f"Largest positions (top {min(TOP_POSITIONS, len(pairs))} of {len(pairs)}, market value)"
    pairs = pairs[:TOP_POSITIONS]
    return _svg.bar_chart([label for _, label in pairs], [v for v, _ in pairs], title=title)


def investments_html(inv: Investments) -> str:
    """Investments: value, cash and RequestId; value by account and the largest positions as bar
    charts; each table, short."""
    facts = _facts(
        [
            ("value", escape(_money(inv.value))),
            ("cash", escape(_money(inv.cash))),
            ("accounts", f"{len(inv.accounts):,}"),
            ("positions", f"{len(inv.positions):,}"),
            ("transactions", f"{len(inv.transactions):,}"),
            ("RequestId", _code(inv.request_id)),
        ]
    )
    charts = _charts(_value_by_account(inv), _largest_positions(inv))
    tables = _tables(
        [
            ("accounts", inv.accounts),
            ("positions", inv.positions),
            ("transactions", inv.transactions),
            ("securities", inv.securities),
        ]
    )
    return _view("Investments", facts, charts, tables)


def _balances(accounts: Accounts) -> str:
    """Each account's balance after each transaction, over time: one line per account (the first
    ``MAX_LINES`` with a balance), each at most ``MAX_POINTS`` points."""
    transactions = accounts.transactions
    if len(transactions) == 0 or "balance" not in transactions.columns or "date" not in transactions.columns:
        return ""
    ids = _texts(transactions, "account_id")
    titles = _first(_texts(transactions, "account_title"), ids)
    dates = transactions.column("date")
    balances = _floats(transactions, "balance")
    lines: dict[str, list[tuple[float, float]]] = {}
    names: dict[str, str] = {}
    for account, title, day, balance in zip(ids, titles, dates, balances, strict=False):
        if balance is None or not isinstance(day, dt.date):
            continue
        key = account or title
        if key not in lines:
            if len(lines) == MAX_LINES:
                continue
            lines[key], names[key] = [], title
        lines[key].append((float(day.toordinal()), balance))
    if not lines:
        return ""
    every = {account for account in ids if account}
    series = []
    for key, points in lines.items():
        points.sort(key=lambda point: point[0])
        series.append((names[key], _svg.downsample(points, MAX_POINTS)))
    first = min(points[0][0] for _, points in series)
    last = max(points[-1][0] for _, points in series)
    day = dt.date.fromordinal
    title = "Balance over time" + (f" (first {len(lines)} of {len(every)} accounts)" if len(every) > len(lines) else "")
    return _svg.line_chart(series, title=title, x_labels=(day(int(first)).isoformat(), day(int(last)).isoformat()))


def accounts_html(accounts: Accounts) -> str:
    """Accounts: counts, the eligibility ratios when sent, RequestId; each account's balance over
    time; each table, short."""
    pairs = [
        ("accounts", f"{len(accounts.accounts):,}"),
        ("transactions", f"{len(accounts.transactions):,}"),
    ]
    if accounts.eft_eligible_ratio is not None:
        pairs.append(("EFT eligible", escape(_ratio(accounts.eft_eligible_ratio))))
    if accounts.e_transfer_eligible_ratio is not None:
        pairs.append(("e-transfer eligible", escape(_ratio(accounts.e_transfer_eligible_ratio))))
    pairs.append(("RequestId", _code(accounts.request_id)))
    return _view(
        "Accounts",
        _facts(pairs),
        _charts(_balances(accounts)),
        _tables([("accounts", accounts.accounts), ("transactions", accounts.transactions)]),
    )


def attributes_html(attributes: Attributes) -> str:
    """Attributes: the groups and RequestId; each table, short."""
    groups = ", ".join(escape(_cut(group)) for group in attributes.groups[:10])
    if len(attributes.groups) > 10:
        groups += f", \u2026 ({len(attributes.groups)} groups)"
    facts = _facts(
        [
            ("groups", groups or "\u2014"),
            ("values", f"{len(attributes.values):,}"),
            ("RequestId", _code(attributes.request_id)),
        ]
    )
    # The values are what an attributes call is for: as many of them as a table view shows.
    tables = _tables([("values", attributes.values), ("detail", attributes.detail)], head=HEAD_ROWS)
    return _view("Attributes", facts, tables)


def statements_html(statements: Statements) -> str:
    """Statements: how many, per account and file type; the table, short. The files' contents are
    not decoded for the view."""
    table = statements.statements
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for account, kind in zip(_texts(table, "account_number"), _texts(table, "file_type"), strict=False):
        counts[(account or "?", kind or "?")] += 1
    rows = "".join(
        f'<tr><td>{escape(_cut(account))}</td><td>{escape(_cut(kind))}</td><td class="n">{count:,}</td></tr>'
        for (account, kind), count in sorted(counts.items())[:MAX_BARS]
    )
    more = len(counts) - MAX_BARS
    per_account = ""
    if rows:
        per_account = (
            '<table><thead><tr><th>account</th><th>file type</th><th class="n">statements</th>'
            f"</tr></thead><tbody>{rows}</tbody></table>"
            + (f"<div style='{_DIM}'>\u2026 and {more:,} more</div>" if more > 0 else "")
        )
    facts = _facts([("statements", f"{len(table):,}")])
    return _view("Statements", facts, per_account, _tables([("statements", table)]))


def _institution(value: object) -> str:
    if isinstance(value, Mapping):
        name, ident = value.get("Name"), value.get("Id")
        if name and ident is not None:
            return f"{escape(_cut(str(name)))} <span style='{_DIM}'>(Id {escape(_cut(str(ident)))})</span>"
        return escape(_cut(str(name or ident or "\u2014")))
    return escape(_cut(str(value))) if value is not None else "\u2014"


def session_html(session: Session | AsyncSession) -> str:
    """A session: its RequestId, institution, last refresh and the login's fields that are not
    secret. The LoginId is shortened, the username never shown."""
    login = session.login if isinstance(session.login, Mapping) else {}
    refresh = session.last_refresh
    pairs = [
        ("RequestId", _code(session.request_id)),
        ("institution", _institution(session.institution)),
        ("last refresh", escape(refresh.isoformat().replace("+00:00", "Z")) if refresh else "\u2014"),
        ("LoginId", _code(short_login_id(session.login_id)) if session.login_id else "\u2014"),
    ]
    if "Type" in login:
        pairs.append(("login type", escape(_cut(str(login["Type"])))))
    if "IsScheduledRefresh" in login:
        pairs.append(("scheduled refresh", escape(_value(login["IsScheduledRefresh"]))))
    return _view(type(session).__name__, _facts(pairs))


def _masked(message: str, login_ids: Iterable[str]) -> str:
    """``message`` with every LoginId of ``login_ids`` in it shortened."""
    for login_id in login_ids:
        if len(login_id) > 4 and login_id in message:
            message = message.replace(login_id, short_login_id(login_id))
    return message


_GUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-([0-9a-fA-F]{12})\b")


def _errors(failures: Sequence[tuple[str, BaseException]]) -> str:
    """Failures grouped by exception class, the largest group first: each with its count and its
    first messages, LoginIds shortened."""
    if not failures:
        return ""
    by_class: dict[str, list[tuple[str, BaseException]]] = defaultdict(list)
    for login_id, error in failures:
        by_class[type(error).__name__].append((login_id, error))
    ids = {login_id for login_id, _ in failures if isinstance(login_id, str)}
    items: list[str] = []
    for name, group in sorted(by_class.items(), key=lambda item: (-len(item[1]), item[0])):
        lines = []
        for login_id, error in group[:MESSAGES_PER_CLASS]:
            message = _GUID.sub(lambda m: "\u2026" + m.group(1)[-4:], _masked(str(error), ids))
            lines.append(
                f"<li><code>{escape(short_login_id(login_id))}</code> {escape(_cut(message, MESSAGE_CHARS))}</li>"
            )
        more = len(group) - MESSAGES_PER_CLASS
        if more > 0:
            lines.append(f"<li style='{_DIM}'>\u2026 and {more:,} more</li>")
        items.append(
            f"<div style='margin-top:4px'><code>{escape(name)}</code> \u00d7 {len(group):,}"
            f"<ul style='margin:2px 0'>{''.join(lines)}</ul></div>"
        )
    return f'<div style="margin-top:6px"><b>Errors</b> {len(failures):,}{"".join(items)}</div>'


def combined_html(combined: Combined[Any]) -> str:
    """A combined result: its kind, each table short, the errors by class."""
    errors = combined.errors
    facts = _facts(
        [
            ("kind", escape(combined.kind or "\u2014 (no result succeeded)")),
            ("tables", f"{len(combined.tables)}"),
            ("errors", f"{len(errors):,}"),
        ]
    )
    return _view("Combined", facts, _tables(combined.tables.items()), _errors(list(errors.items())))


class ExportReportFacts(Protocol):
    """What the view of an export shows of its report (``_export/report.py``'s ``ExportReport``):
    typed by what it reads, so that this module imports nothing of the export, whose report
    imports this view."""

    @property
    def out(self) -> str: ...
    @property
    def written(self) -> Mapping[str, int]: ...
    @property
    def failed(self) -> list[tuple[str, BaseException]]: ...
    @property
    def logins_written(self) -> int: ...
    @property
    def failed_count(self) -> int: ...
    @property
    def failed_by_class(self) -> Mapping[str, int]: ...
    @property
    def logins_failed(self) -> int: ...
    @property
    def logins_skipped(self) -> int: ...
    @property
    def logins_not_tried(self) -> int: ...
    @property
    def elapsed(self) -> float: ...
    @property
    def interrupted(self) -> bool: ...
    @property
    def outage(self) -> str | None: ...
    @property
    def ok(self) -> bool: ...


def export_report_html(report: ExportReportFacts) -> str:
    """An export: where, whether it finished, the logins written, failed, not tried and skipped,
    the rows written per table, the failures by class."""
    state = "interrupted" if report.interrupted else ("ok" if report.ok else "finished with failures")
    if report.outage is not None:
        # docs/export.md#an-unreachable-service: nothing written, and why.
        state = f"the service could not be reached or refused the keys: {report.outage}"
    facts = _facts(
        [
            ("out", _code(shown_location(report.out))),
            ("state", escape(state)),
            ("logins written", f"{report.logins_written:,}"),
            ("failed", f"{report.logins_failed:,}"),
            *([("not tried", f"{report.logins_not_tried:,}")] if report.logins_not_tried else []),
            ("skipped", f"{report.logins_skipped:,}"),
            ("elapsed", f"{report.elapsed:,.1f} s"),
        ]
    )
    rows = "".join(
        f'<tr><td><code>{escape(name)}</code></td><td class="n">{count:,}</td></tr>'
        for name, count in list(report.written.items())[:50]
    )
    written = (
        f'<table><thead><tr><th>table</th><th class="n">rows written</th></tr></thead><tbody>{rows}</tbody></table>'
        if rows
        else ""
    )
    errors = _errors(report.failed)
    if report.failed_count > len(report.failed):
        # The report keeps the first failures only (``_export/report.py``): the rest by class.
        counts = ", ".join(
            f"{escape(name)} {count:,}" for name, count in sorted(report.failed_by_class.items(), key=lambda i: -i[1])
        )
        errors += (
            f"<div style='{_DIM}'>the first {len(report.failed):,} of {report.failed_count:,} failures above; "
            f"all of them by class: {counts}; each one in <code>_failures.jsonl</code></div>"
        )
    return _view("ExportReport", facts, written, errors)
