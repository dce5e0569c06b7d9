"""A wrong argument is refused before anything is sent, with a message that names the argument,
says what it got (its type: never the value of a secret) and what it takes.

The calls go through ``Any`` on purpose: a type checker would refuse them, and that is the point.
"""

from __future__ import annotations

import sys
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
HALVES: Any = 1.5


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
    Case(
        "account_filter-int",
        lambda c, s: s.attributes({"Card": ["x"]}, account_filter=3),
        TypeError,
        ("account_filter", "list of str", "int"),
    ),
    Case(
        "statements-filter",
        lambda c, s: s.statements(accounts_filter="acc"),
        TypeError,
        ("accounts_filter", "single str"),
    ),
    # Flags and callables.
    Case("save", lambda c, s: c.login(INSTITUTION, "u", "p", save="yes"), TypeError, ("save", "bool", "str")),
    Case("with_kyc", lambda c, s: s.accounts_detail(with_kyc=1), TypeError, ("with_kyc", "bool", "int")),
    Case(
        "on_challenge",
        lambda c, s: c.login(INSTITUTION, "u", "p", on_challenge={}),
        TypeError,
        ("on_challenge", "callable", "dict"),
    ),
    # Numbers: the wrong type is a TypeError, a value out of range a ConfigError (a ValueError).
    Case(
        "timeout-str",
        lambda c, s: bf.Client("http://127.0.0.1:9", "c", timeout=FIVE),
        TypeError,
        ("timeout", "seconds", "str"),
    ),
    Case(
        "max_retries-negative",
        lambda c, s: bf.Client("http://127.0.0.1:9", "c", max_retries=-1),
        bf.ConfigError,
        ("max_retries", "-1"),
    ),
    Case("port-negative", lambda c, s: sandbox_with(port=-1), bf.ConfigError, ("port", "-1", "65535")),
    Case("port-huge", lambda c, s: sandbox_with(port=2**70), bf.ConfigError, ("port", "65535")),
    Case("port-float", lambda c, s: sandbox_with(port=80.0), TypeError, ("port", "int", "float")),
    Case("seed-negative", lambda c, s: sandbox_with(seed=-5), bf.ConfigError, ("seed", "-5")),
    Case("pending_polls-str", lambda c, s: sandbox_with(pending_polls="2"), TypeError, ("pending_polls", "int", "str")),
    Case(
        "banking_transactions",
        lambda c, s: sandbox_with(banking_transactions=-1),
        bf.ConfigError,
        ("banking_transactions", "-1"),
    ),
    # Values of the right type: the message says what came (a non-secret value, quoted and cut
    # short) and the rule.
    Case(
        "login_id-not-a-guid",
        lambda c, s: c.investments("not-a-guid"),
        bf.ConfigError,
        ("login_id", "must be a GUID", 'got "not-a-guid"'),
    ),
    Case(
        "login_id-long",
        lambda c, s: c.authorize_cached("x" * 100 + "\n"),
        bf.ConfigError,
        ("login_id", 'got "' + "x" * 40 + '"…'),
    ),
    Case("request_id-slash", lambda c, s: c.session("a/b"), bf.ConfigError, ("request_id", "GUID", 'got "a/b"')),
    Case(
        "account_filter-not-a-guid",
        lambda c, s: s.attributes({"Card": ["x"]}, account_filter=["acc"]),
        bf.ConfigError,
        ("account_filter", "GUID", 'got "acc"'),
    ),
    Case(
        "timeout-zero",
        lambda c, s: bf.Client("http://127.0.0.1:9", "c", timeout=0),
        bf.ConfigError,
        ("timeout", "seconds > 0", "got 0"),
    ),
    Case(
        "deadline-nan",
        lambda c, s: bf.Client("http://127.0.0.1:9", "c", deadline=float("nan")),
        bf.ConfigError,
        ("deadline", "seconds > 0", "got nan"),
    ),
    Case(
        "poll_interval-negative",
        lambda c, s: bf.Client("http://127.0.0.1:9", "c", poll_interval=-0.5),
        bf.ConfigError,
        ("poll_interval", "seconds >= 0", "got -0.5"),
    ),
    Case(
        "max_retries-eleven",
        lambda c, s: bf.Client("http://127.0.0.1:9", "c", max_retries=11),
        bf.ConfigError,
        ("max_retries must be an int from 0 to 10, got 11",),
    ),
    Case(
        "max_challenge_rounds-zero",
        lambda c, s: bf.Client("http://127.0.0.1:9", "c", max_challenge_rounds=0),
        bf.ConfigError,
        ("max_challenge_rounds must be an int of at least 1, got 0",),
    ),
    # A wrong type is told the option's own rule, not the range of the type that holds it.
    Case(
        "max_retries-float",
        lambda c, s: bf.Client("http://127.0.0.1:9", "c", max_retries=HALVES),
        TypeError,
        ("max_retries must be an int from 0 to 10, not float",),
    ),
    Case(
        "max_challenge_rounds-float",
        lambda c, s: bf.Client("http://127.0.0.1:9", "c", max_challenge_rounds=HALVES),
        TypeError,
        ("max_challenge_rounds must be an int of at least 1, not float",),
    ),
    Case(
        "max_body_bytes-str",
        lambda c, s: bf.Client("http://127.0.0.1:9", "c", max_body_bytes=FIVE),
        TypeError,
        ("max_body_bytes must be an int of at least 1, not str",),
    ),
    Case(
        "max_connections-float",
        lambda c, s: bf.Client("http://127.0.0.1:9", "c", max_connections=HALVES),
        TypeError,
        ("max_connections must be an int from 1 to 10000, not float",),
    ),
    Case(
        "max_retries-huge",
        lambda c, s: bf.Client("http://127.0.0.1:9", "c", max_retries=-(2**200)),
        bf.ConfigError,
        ("max_retries must be an int from 0 to 10, got a smaller int",),
    ),
    Case(
        "customer_id-slash",
        lambda c, s: bf.Client("http://127.0.0.1:9", "a/b"),
        bf.ConfigError,
        ("customer_id", "GUID", 'got "a/b"'),
    ),
    Case(
        "package-unknown",
        lambda c, s: s.attributes(package="gold"),
        bf.ConfigError,
        ("package", '"business_analysis"', '"all_business"', 'got "gold"'),
    ),
    # Neither or both of attributes= and package=: one sentence naming both and every package.
    Case(
        "attributes-neither",
        lambda c, s: s.attributes(),
        bf.ConfigError,
        (
            "attributes (",
            ") or package (one of",
            "is required, exactly one of the two; got neither",
            *(
                f'"{name}"'
                for name in (
                    "income",
                    "credit_risk",
                    "user_analysis",
                    "lending",
                    "all",
                    "business_analysis",
                    "all_business",
                )
            ),
        ),
    ),
    Case(
        "attributes-both",
        lambda c, s: s.attributes({"Card": ["x"]}, package="income"),
        bf.ConfigError,
        ("attributes (", "or package", '"all_business"', "got both"),
    ),
    # Results.
    Case(
        "column",
        lambda c, s: bf.Accounts.from_json(b'{"Accounts": []}').accounts.column(ZERO),
        TypeError,
        ("name", "str", "int"),
    ),
]


@pytest.fixture(scope="module")
def session(sandbox: bf.Sandbox) -> bf.Session:
    """A session of the shared sandbox, for the data calls' arguments."""
    client = sandbox.client(poll_interval=0.01, poll_timeout=10)
    return client.login(INSTITUTION, "greatday_nomfa", PASSWORD, save=True)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_a_wrong_argument_names_itself(sandbox: bf.Sandbox, client: bf.Client, session: bf.Session, case: Case) -> None:
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


@pytest.mark.skipif(sys.version_info < (3, 11), reason="exception notes are new in 3.11")
def test_the_argument_is_also_named_in_a_note(client: bf.Client) -> None:
    anything: Any = None
    with pytest.raises(TypeError) as info:
        client.investments(anything)
    assert "while processing 'login_id'" in getattr(info.value, "__notes__", [])


def test_answers_attributes_and_an_insecure_url_say_what_came(client: bf.Client, sandbox: bf.Sandbox) -> None:
    step = client.authorize(INSTITUTION, "Greatday", PASSWORD)
    assert isinstance(step, bf.Challenge)
    with pytest.raises(bf.InvalidAnswer, match=r"must be a mapping of prompt to answer, not NoneType$"):
        step.answer(None)  # type: ignore[arg-type]
    with pytest.raises(bf.InvalidAnswer, match=r"must map to a string or a list of strings, not int$"):
        step.answer({step.prompts[0]: 5})  # type: ignore[dict-item]
    with pytest.raises(bf.ConfigError, match=r'; got \{"Card": str\}$'):
        client.attributes_many([], {"Card": "balance_min"})
    with pytest.raises(bf.ConfigError, match=r"; got list$"):
        client.attributes_many([], ["balance_min"])  # type: ignore[arg-type]
    with pytest.raises(bf.ConfigError, match=r'not loopback \(127\.0\.0\.0/8, ::1, localhost\), got "example\.com":'):
        bf.Client("http://example.com", sandbox.customer_id)
