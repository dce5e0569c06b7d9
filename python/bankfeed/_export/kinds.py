"""What an export fetches: its kinds of data, their tables, and the bulk call of each
(docs/export.md#what-is-fetched).

A kind is a directory of the output (``investments``, ``accounts``, ``attributes``) holding one
dataset per table of its results. The table names and the columns are those of the in-memory
results; every exported row starts with ``login_id``, ``request_id`` and ``fetched_at``.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bankfeed._native import Accounts, Attributes, Investments, _Gathering
from bankfeed.errors import ConfigError, _config_error

if TYPE_CHECKING:
    import pyarrow

__all__ = [
    "EVENT_KEYS",
    "KINDS",
    "MONEY",
    "PROVENANCE",
    "Kind",
    "check_money",
    "check_what",
    "did_you_mean",
    "options_json",
    "options_key",
    "parse_what",
    "schema",
    "with_money",
]

#: The tables of each kind, in the order of the results' own tables.
KINDS: dict[str, tuple[str, ...]] = {
    "investments": ("accounts", "positions", "transactions", "securities"),
    "accounts": ("accounts", "transactions"),
    "attributes": ("values", "detail"),
}

#: The tables of events (docs/export.md#transactions-once), each with the columns that key one
#: event: written once across the runs of an export, and again only when changed. The other
#: tables are snapshots, written whole by each run.
EVENT_KEYS: dict[tuple[str, str], tuple[str, ...]] = {
    ("investments", "transactions"): ("login_id", "account_id", "transaction_id"),
    ("accounts", "transactions"): ("login_id", "account_id", "transaction_id"),
}

#: The columns every exported row starts with: the login, the RequestId its data came from, and
#: when it was fetched (UTC).
PROVENANCE = ("login_id", "request_id", "fetched_at")

#: The money types of a table (docs/tables.md#money): float64, or exact decimal128.
MONEY = ("float", "decimal")


def did_you_mean(given: object, names: Iterable[str]) -> str:
    """`` (did you mean 'investments'?)`` when ``given`` is text close to one of ``names`` (a
    singular, another case, a typo); empty otherwise."""
    if not isinstance(given, str):
        return ""
    # Compared by their names before any ":<...>": "attribute" is near "attributes:<package>".
    by_case = {name.split(":", 1)[0].lower(): name for name in names}
    near = difflib.get_close_matches(given.strip().lower(), list(by_case), n=1, cutoff=0.6)
    return f" (did you mean {by_case[near[0]]!r}?)" if near else ""


#: ``days=`` as the command line and ``bf.export`` take it, to the service's value.
_DAYS = {"90": "Days90", "365": "Days365", "days90": "Days90", "days365": "Days365"}


@dataclass(frozen=True)
class Kind:
    """One kind to export: its name, and the options of its bulk call."""

    name: str
    #: Keyword arguments of the bulk call (``package=``, ``attributes=``, ``days=``, ...).
    options: Mapping[str, Any] = field(default_factory=dict)
    #: How the kind was asked for, as the manifest and the messages show it.
    label: str = ""

    @property
    def tables(self) -> tuple[str, ...]:
        """The tables of this kind."""
        return KINDS[self.name]

    def bulk_call(self, client: Any) -> Any:
        """The bulk method of ``client`` that fetches this kind."""
        name = {"investments": "investments_many", "accounts": "accounts_detail_many"}.get(self.name, "attributes_many")
        return getattr(client, name)

    def check(self, client: Any, on_challenge: object = None) -> None:
        """Raises what the bulk call would raise for this kind's options (an unknown package, a
        query the service cannot take, an option it has not) and for ``on_challenge``, before
        anything is fetched: the bulk call checks its arguments when it is made, and one of no
        login sends nothing."""
        call = self.bulk_call(client)
        try:
            results = call([], on_challenge=on_challenge, **self.options)
        except TypeError as exc:
            # Python names the binding's class (`_BaseClient.investments_many()`); say the
            # method the options are given to, as a user calls it.
            unknown = re.search(r"unexpected keyword argument '(\w+)'", str(exc))
            if unknown is None:
                raise
            raise TypeError(
                f"the options of {self.name} are the keyword arguments of client.{call.__name__}(), which takes no "
                f"{unknown.group(1)!r}"
            ) from None
        close = getattr(results, "close", None)  # an AsyncClient's has only aclose: nothing runs
        if callable(close):
            close()


def _days(days: object) -> str:
    if isinstance(days, int) and not isinstance(days, bool):
        days = str(days)
    if isinstance(days, str) and days.strip().lower() in _DAYS:
        return _DAYS[days.strip().lower()]
    raise _config_error("days", f'must be 90 or 365 (or "Days90", "Days365"), got {days!r}')


def _attributes(spec: str) -> Kind:
    """``attributes:<package>`` or ``attributes:<query file>`` (a JSON object of the arguments of
    ``client.attributes``: ``attributes``, ``filters``, ``detail``, ``account_filter``)."""
    _, _, rest = spec.partition(":")
    rest = rest.strip()
    if not rest:
        raise _config_error(
            "what", "needs a package or a query file after attributes: attributes:income, attributes:query.json"
        )
    if rest.endswith(".json") or os.sep in rest or os.path.exists(rest):
        try:
            with open(rest, encoding="utf-8") as file:
                query = json.load(file)
        except (OSError, ValueError) as exc:
            raise _config_error(
                "what", f"names an attributes query file {rest!r} that could not be read: {exc}"
            ) from None
        return _custom(query, label=spec)
    return Kind("attributes", {"package": rest}, label=f"attributes:{rest}")


_QUERY_KEYS = ("attributes", "filters", "detail", "account_filter")


def _shown(value: object) -> str:
    """What came, for a message: the type of anything but a mapping, whose keys are shown."""
    if isinstance(value, Mapping):
        return "an object with " + (", ".join(repr(key) for key in list(value)[:10]) or "no key")
    return type(value).__name__


def _custom(query: object, label: str) -> Kind:
    if not isinstance(query, Mapping) or "attributes" not in query or set(query) - set(_QUERY_KEYS):
        optional = ", ".join(f'"{key}"' for key in _QUERY_KEYS[1:])
        raise _config_error(
            "what",
            f'has an attributes query that is not a JSON object of "attributes" ({{group: [names]}}) and '
            f"optionally {optional}; got {_shown(query)}",
        )
    return Kind("attributes", dict(query), label=label)


def parse_what(what: Iterable[object] | str, *, days: object = None) -> list[Kind]:
    """The kinds ``what`` asks for: ``"investments"``, ``"accounts"``, ``"attributes:<package>"``,
    ``"attributes:<query.json>"``, or ``("attributes", {query})``; a comma list as one string is
    read too. Each kind at most once."""
    items: list[object] = [part.strip() for part in what.split(",")] if isinstance(what, str) else list(what)
    kinds: list[Kind] = []
    for item in items:
        if isinstance(item, tuple) and len(item) == 2 and item[0] == "attributes":
            kinds.append(_custom(item[1], label="attributes:custom"))
        elif isinstance(item, str) and item == "investments":
            kinds.append(Kind("investments", label="investments"))
        elif isinstance(item, str) and item == "accounts":
            options: dict[str, Any] = {"with_transactions": True}
            if days is not None:
                options["days"] = _days(days)
            kinds.append(Kind("accounts", options, label="accounts"))
        elif isinstance(item, str) and item.split(":", 1)[0] == "attributes":
            kinds.append(_attributes(item))
        else:
            raise _config_error(
                "what",
                f"must name investments, accounts or attributes:<package> (or <query.json>), got {item!r}"
                + did_you_mean(item, ("investments", "accounts", "attributes:<package>")),
            )
    if not kinds:
        raise _config_error("what", "names no kind to export: investments, accounts or attributes:<package>")
    if days is not None and not any(kind.name == "accounts" for kind in kinds):
        raise _config_error("days", f"applies to accounts, which what does not ask for; got days={days!r}")
    names = [kind.name for kind in kinds]
    twice = next((name for name in names if names.count(name) > 1), None)
    if twice is not None:
        raise _config_error("what", f"asks for {twice} twice: each kind is one directory of the output")
    return kinds


def check_what(kinds: Iterable[Kind], client: Any, on_challenge: object = None) -> None:
    """:meth:`Kind.check` of each kind ``what`` asked for, a ``ConfigError`` of its options named
    ``what`` (``--what``), where they came from, but for ``days``, which has its own argument;
    ``on_challenge``, checked with them, is refused as the bulk calls refuse it."""
    for kind in kinds:
        try:
            kind.check(client, on_challenge)
        except ConfigError as exc:
            if exc.field == "days":
                raise
            raise _config_error("what", f"{kind.label}: {exc.field} {exc.rule}") from None


#: The smallest payload of each kind: its results have every table, with no row.
_EMPTY: dict[str, tuple[type[Any], dict[str, Any]]] = {
    "investments": (Investments, {"Accounts": [], "Securities": [], "Value": 0, "Cash": 0}),
    "accounts": (Accounts, {"Accounts": []}),
    "attributes": (Attributes, {"Card": {"Id": "00000000-0000-0000-0000-000000000000"}}),
}


def check_money(money: object) -> str:
    """``money``: ``"float"`` or ``"decimal"``; anything else is a ``ConfigError`` naming it."""
    if money not in MONEY:
        raise _config_error("money", f'must be "float" or "decimal", got {money!r}')
    return str(money)


def with_money(client: Any, money: object) -> Any:
    """``client`` with its tables' money as ``money`` says: ``client`` itself when it already is
    (or ``money`` is None), else a copy of it, as a pickle makes one (the same configuration and
    connection pool, the same identity), but for ``money``."""
    if money is None or client.money == check_money(money):
        return client
    restore, (state,) = client.__reduce__()
    return restore({**state, "money": money})


def schema(kind: str, table: str, money: str = "float") -> pyarrow.Schema:
    """The Arrow schema of the exported ``table`` of ``kind``: ``login_id``, ``request_id``,
    ``fetched_at``, then the columns of the in-memory table, with their types. Made from the
    same code that writes the rows, so it cannot drift from them.

    ``money="decimal"`` gives the money columns as the tables of a client with that option hold
    them: every amount, balance and value ``decimal128(18, 4)`` (the attributes detail's
    ``debit`` and ``credit`` too), every quantity and price ``decimal128(18, 8)``; ``"float"``
    (the default) gives them as ``double`` (docs/tables.md#money). Ratios and percentages
    (``gain_percent``, ``eft_eligible_ratio``) and the attributes' ``value`` (counts, ratios and
    amounts alike; ``raw_value`` has the digits as sent) are floats either way."""

    for name, value in (("kind", kind), ("table", table)):
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    # As bankfeed.dask.read and the export take it: "attributes:income" is of kind attributes.
    kind = kind.split(":", 1)[0]
    if kind not in KINDS:
        raise _config_error("kind", f"must be one of {', '.join(KINDS)}, got {kind!r}" + did_you_mean(kind, KINDS))
    if table not in KINDS[kind]:
        raise _config_error(
            "table",
            f"must be one of {', '.join(KINDS[kind])} for {kind}, got {table!r}" + did_you_mean(table, KINDS[kind]),
        )
    check_money(money)
    cls, payload = _EMPTY[kind]
    gathering = _Gathering(provenance=True)
    result = cls.from_json(json.dumps(payload), money)
    gathering.add(("", result), 0)
    return gathering.finish().tables[table].to_arrow().schema


def options_json(options: Mapping[str, Any]) -> dict[str, Any]:
    """A kind's options as its run record keeps them: JSON (what JSON has no type for, as text)."""
    value: dict[str, Any] = json.loads(json.dumps(dict(options), default=str))
    return value


def options_key(options: object) -> str:
    """A kind's options as two runs' are compared."""
    return json.dumps(options_json(options) if isinstance(options, Mapping) else options, sort_keys=True)
