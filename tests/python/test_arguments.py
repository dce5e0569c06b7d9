"""A wrong argument is refused before anything is sent, with a message that names the argument,
says what it got (its type: never the value of a secret) and what it takes.

The calls go through ``Any`` on purpose: a type checker would refuse them, and that is the point.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

import bankfeed as bf
from bfhelpers import INSTITUTION, PASSWORD

SECRET = "pw-args-Hunter2"


@dataclass(frozen=True)
class Case:
    id: str
    call: Callable[[Any, Any], object]
    expected: type[Exception]
    #: Every one of these is in the message.
    says: tuple[str, ...]


#: Wrong values, typed ``Any`` so that the calls below type-check.
ONE: Any = 1
FIVE: Any = "5"
ZERO: Any = 0


def sandbox_with(**options: Any) -> object:
    """Starts a Sandbox with ``options`` (closing it if it started: the call should fail first)."""
    sandbox = bf.Sandbox(**options)
    sandbox.close()
    return sandbox


CASES = [
    # Strings.
    Case("login_id-None", lambda c, s: c.investments(None), TypeError, ("login_id", "str", "NoneType")),
    Case("login_id-int", lambda c, s: c.authorize_cached(42), TypeError, ("login_id", "str", "int")),
    Case("institution", lambda c, s: c.login(None, "u", "p"), TypeError, ("institution", "str", "NoneType")),
    Case("username", lambda c, s: c.authorize(INSTITUTION, b"u", "p"), TypeError, ("username", "str", "bytes")),
    Case("password", lambda c, s: c.authorize(INSTITUTION, "u", 1234), TypeError, ("password", "str", "int")),
    Case("language", lambda c, s: c.authorize(INSTITUTION, "u", "p", language=1), TypeError, ("language", "str")),
    Case("package", lambda c, s: c.attributes("id", package=["income"]), TypeError, ("package", "str", "list")),
    Case("days", lambda c, s: s.accounts_detail(days=365), TypeError, ("days", "str", "int")),
    Case("client-base_url", lambda c, s: bf.Client(base_url=ONE), TypeError, ("base_url", "str", "int")),
    Case("sandbox-host", lambda c, s: sandbox_with(host=127), TypeError, ("host", "str", "int")),
    # Lists of strings: a lone str is not read as its characters.
    Case(
        "detail-str",
        lambda c, s: c.attributes("id", {"Card": ["count_nsf"]}, detail="count_nsf"),
        TypeError,
        ("detail", "list of str", "single str"),
    ),
    Case(
        "accounts_filter-item",
        lambda c, s: s.accounts_detail(accounts_filter=["a", 3]),
        TypeError,
        ("accounts_filter[1]", "str", "int"),
    ),
    Case("account_filter-int", lambda c, s: s.attributes({"Card": ["x"]}, account_filter=3), TypeError,
         ("account_filter", "list of str", "int")),
    Case("statements-filter", lambda c, s: s.statements(accounts_filter="acc"), TypeError,
         ("accounts_filter", "single str")),
    # Flags and callables.
    Case("save", lambda c, s: c.login(INSTITUTION, "u", "p", save="yes"), TypeError, ("save", "bool", "str")),
    Case("with_kyc", lambda c, s: s.accounts_detail(with_kyc=1), TypeError, ("with_kyc", "bool", "int")),
    Case("on_challenge", lambda c, s: c.login(INSTITUTION, "u", "p", on_challenge={}), TypeError,
         ("on_challenge", "callable", "dict")),
    # Numbers: the wrong type is a TypeError, a value out of range a ConfigError (a ValueError).
    Case("timeout-str", lambda c, s: bf.Client("http://127.0.0.1:9", "c", timeout=FIVE), TypeError,
         ("timeout", "seconds", "str")),
    Case("max_retries-negative", lambda c, s: bf.Client("http://127.0.0.1:9", "c", max_retries=-1), bf.ConfigError,
         ("max_retries", "-1")),
    Case("port-negative", lambda c, s: sandbox_with(port=-1), bf.ConfigError, ("port", "-1", "65535")),
    Case("port-huge", lambda c, s: sandbox_with(port=2**70), bf.ConfigError, ("port", "65535")),
    Case("port-float", lambda c, s: sandbox_with(port=80.0), TypeError, ("port", "int", "float")),
    Case("seed-negative", lambda c, s: sandbox_with(seed=-5), bf.ConfigError, ("seed", "-5")),
    Case("pending_polls-str", lambda c, s: sandbox_with(pending_polls="2"), TypeError, ("pending_polls", "int", "str")),
    Case("banking_transactions", lambda c, s: sandbox_with(banking_transactions=-1), bf.ConfigError,
         ("banking_transactions", "-1")),
    # Results.
    Case("column", lambda c, s: bf.Accounts.from_json(b'{"Accounts": []}').accounts.column(ZERO), TypeError,
         ("name", "str", "int")),
]


@pytest.fixture(scope="module")
def session(sandbox: bf.Sandbox) -> bf.Session:
    """A session of the shared sandbox, for the data calls' arguments."""
    client = sandbox.client(poll_interval=0.01, poll_timeout=10)
    return client.login(INSTITUTION, "greatday_nomfa", PASSWORD, save=True)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_a_wrong_argument_names_itself(
    sandbox: bf.Sandbox, client: bf.Client, session: bf.Session, case: Case
) -> None:
    before = sandbox.request_count
    with pytest.raises(case.expected) as info:
        case.call(client, session)
    text = str(info.value)
    for part in case.says:
        assert part in text, f"{part!r} not in {text!r}"
    assert sandbox.request_count == before, "nothing is sent for a wrong argument"


WRONG_SECRET: Any = SECRET.encode()
SECRET_CALLS: dict[str, Callable[[], object]] = {
    "password": lambda: bf.Client("http://127.0.0.1:9", "c").authorize(INSTITUTION, "u", WRONG_SECRET),
    "api_key": lambda: bf.Client("http://127.0.0.1:9", "c", api_key=WRONG_SECRET),
    "secret_key": lambda: bf.Client("http://127.0.0.1:9", "c", secret_key=WRONG_SECRET),
}


@pytest.mark.parametrize("name", list(SECRET_CALLS))
def test_a_secret_of_the_wrong_type_is_not_echoed(name: str) -> None:
    with pytest.raises(TypeError) as info:
        SECRET_CALLS[name]()
    assert name in str(info.value) and "bytes" in str(info.value)
    assert SECRET not in str(info.value) and SECRET not in repr(info.value)


def test_a_tuple_or_any_iterable_is_a_list_of_strings(session: bf.Session) -> None:
    accounts = session.accounts_detail(accounts_filter=())
    ids = [str(row["account_id"]) for row in accounts.accounts.to_records()]
    assert ids
    generator: Any = (i for i in ids[:1])
    chosen = session.accounts_detail(accounts_filter=generator)
    assert [row["account_id"] for row in chosen.accounts.to_records()] == ids[:1]


def test_the_argument_is_also_named_in_a_note(client: bf.Client) -> None:
    anything: Any = None
    with pytest.raises(TypeError) as info:
        client.investments(anything)
    assert "while processing 'login_id'" in getattr(info.value, "__notes__", [])
