"""Arguments that cannot be read as they claim: text that is not UTF-8, and sequences and mappings
whose length lies (docs/bad-input.md#arguments).

A ``str`` with a lone surrogate is what Python makes of bytes that are not UTF-8 in the
environment, ``sys.argv`` or a file read with ``errors="surrogateescape"``. It has no UTF-8 form,
and Python's own ``UnicodeEncodeError`` carries the whole value in its ``object``, its ``args``,
its ``repr`` and its pickle: a password would leak into every log that keeps the exception. So it
is a ``ConfigError`` naming the argument, never the value, and in a bulk call that one login's own
error.

A length is never trusted: pyo3 reserves memory for a sequence's ``len()`` before reading it, so
``range(10**13)`` aborted the process and a ``__len__`` of ``2**62`` raised a ``PanicException``,
which ``except Exception`` does not catch. Every sequence argument is read an item at a time, up
to a documented bound. Those cases run in a child process, so that an abort fails the test
instead of killing pytest.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import bankfeed as bf
from bfhelpers import INSTITUTION, PASSWORD

#: What ``os.fsdecode(b"\xff")`` gives: a lone surrogate.
SURROGATE = "\udcff"
#: The secret part of every bad value: it must appear nowhere.
SECRET = "Hunter2secret"
BAD = f"{SECRET}{SURROGATE}"
LOGIN_ID = str(uuid.UUID(int=7))
HOST = "http://127.0.0.1:9"
CUSTOMER = "43387ca6-0391-4c82-857d-70d95f087ecb"

ARGUMENTS: dict[str, Callable[[Any, Any], object]] = {
    "institution": lambda c, s: c.authorize(BAD, "user", PASSWORD),
    "username": lambda c, s: c.authorize(INSTITUTION, BAD, PASSWORD),
    "password": lambda c, s: c.login(INSTITUTION, "user", BAD),
    "language": lambda c, s: c.authorize(INSTITUTION, "user", PASSWORD, language=BAD),
    "tag": lambda c, s: c.authorize(INSTITUTION, "user", PASSWORD, tag=BAD),
    "login_id": lambda c, s: c.investments(BAD),
    "request_id": lambda c, s: c.investments(LOGIN_ID, request_id=BAD),
    "package": lambda c, s: c.attributes(LOGIN_ID, package=BAD),
    "attributes": lambda c, s: c.attributes(LOGIN_ID, {"Card": ["balance_min", BAD]}),
    "detail": lambda c, s: c.attributes(LOGIN_ID, {"Card": ["balance_min"]}, detail=[BAD]),
    "days": lambda c, s: s.accounts_detail(days=BAD),
    "accounts_filter": lambda c, s: s.accounts_detail(accounts_filter=[BAD]),
    "base_url": lambda c, s: bf.Client(HOST + BAD, CUSTOMER),
    "customer_id": lambda c, s: bf.Client(HOST, BAD),
    "api_key": lambda c, s: bf.Client(HOST, CUSTOMER, api_key=BAD),
    "secret_key": lambda c, s: bf.Client(HOST, CUSTOMER, secret_key=BAD),
    "investments_base_url": lambda c, s: bf.Client(HOST, CUSTOMER, investments_base_url=BAD),
    "proxy": lambda c, s: bf.Client(HOST, CUSTOMER, proxy=f"http://user:{BAD}@proxy.example:3128"),
    "data": lambda c, s: bf.Investments.from_json(BAD),
    "request_ids": lambda c, s: c.investments_many([LOGIN_ID], request_ids={LOGIN_ID: BAD}),
}


def assert_secret_free(error: BaseException) -> None:
    """Nothing a log, a traceback or a pickle of the error keeps holds the value."""
    seen = [str(error), repr(error), repr(error.args), repr(error.__dict__)]
    seen.append(repr(pickle.dumps(error)))
    for linked in (error.__cause__, error.__context__):
        if linked is not None:
            seen.append(repr(linked))
    for text in seen:
        assert SECRET not in text, text


@pytest.fixture(scope="module")
def session(sandbox: bf.Sandbox) -> bf.Session:
    client = sandbox.client(poll_interval=0.01, poll_timeout=10)
    return client.login(INSTITUTION, "greatday_nomfa", PASSWORD, save=True)


@pytest.mark.parametrize("argument", list(ARGUMENTS))
def test_text_that_is_not_utf8_is_a_config_error_naming_the_argument(
    client: bf.Client, session: bf.Session, sandbox: bf.Sandbox, argument: str
) -> None:
    before = sandbox.request_count
    with pytest.raises(bf.ConfigError) as raised:
        ARGUMENTS[argument](client, session)
    assert raised.value.field == argument
    assert "lone surrogate" in str(raised.value)
    assert_secret_free(raised.value)
    assert sandbox.request_count == before, "nothing may be sent"


def test_a_sandbox_refuses_such_text_as_its_client_would() -> None:
    for option in ("customer_id", "api_key", "secret_key", "host"):
        options: dict[str, Any] = {option: BAD}
        with pytest.raises(bf.ConfigError) as raised:
            bf.Sandbox(**options)
        assert raised.value.field == option
        assert_secret_free(raised.value)


@pytest.fixture(scope="module")
def two_logins() -> Iterator[bf.Sandbox]:
    with bf.Sandbox(logins=2) as sb:
        yield sb


@pytest.mark.parametrize("call", ["investments_many", "accounts_detail_many", "attributes_many"])
def test_in_a_bulk_call_such_a_login_id_fails_alone(two_logins: bf.Sandbox, call: str) -> None:
    client = two_logins.client(poll_interval=0.01, poll_timeout=10)
    good = two_logins.login_ids
    options: dict[str, Any] = {"package": "income"} if call == "attributes_many" else {}
    pairs = list(getattr(client, call)([good[0], BAD, good[1]], **options))
    results = dict(pairs)
    assert sorted(results, key=str) == sorted([good[0], BAD, good[1]], key=str)
    bad = results[BAD]
    assert isinstance(bad, bf.ConfigError) and bad.field == "login_id"
    assert_secret_free(bad)
    assert not isinstance(results[good[0]], BaseException) and not isinstance(results[good[1]], BaseException)
    combined = bf.combine(pairs)
    assert list(combined.errors) == [BAD]
    assert sorted(
        set(
            combined.tables["accounts" if call != "attributes_many" else "values"]
            .to_arrow()
            .column("login_id")
            .to_pylist()
        )
    ) == sorted(good)


def test_an_async_bulk_call_gives_such_a_login_id_its_own_error(sandbox: bf.Sandbox) -> None:
    import asyncio

    async def main() -> dict[str, Any]:
        client = sandbox.async_client(poll_interval=0.01, poll_timeout=10)
        return {login_id: result async for login_id, result in client.investments_many([BAD, LOGIN_ID])}

    results = asyncio.run(main())
    assert isinstance(results[BAD], bf.ConfigError) and results[BAD].field == "login_id"


def run_child(code: str) -> list[str]:
    """Runs ``code`` in a fresh interpreter and returns what it printed; an abort or a crash fails."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-3000:]}"
    return done.stdout.splitlines()


PRELUDE = (
    f"""
import sys
sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r})
import bankfeed as bf
from lying import Hinting, Lying
"""
    + """
def outcome(call):
    try:
        call()
    except bf.ConfigError as exc:
        return f"ConfigError {exc.field}"
    except TypeError as exc:
        return "TypeError"
    except bf.BankfeedError as exc:
        return type(exc).__name__
    except Exception as exc:
        return f"other {type(exc).__name__}: {exc}"
    return "ok"
"""
)


def test_lengths_that_lie_never_abort_the_process(sandbox: bf.Sandbox) -> None:
    code = (
        PRELUDE
        + f"""
login = {LOGIN_ID!r}
client = bf.Client({sandbox.url!r}, {sandbox.customer_id!r}, poll_interval=0.01)
print(outcome(lambda: client.attributes(login, {{"Card": range(10**13)}})))
print(outcome(lambda: client.attributes(login, {{"Card": Lying(["balance_min"], 2**62)}})))
print(outcome(lambda: client.attributes(login, {{"Card": ["balance_min"]}}, detail=Lying(["count_nsf"], 10**13))))
print(outcome(lambda: client.attributes(login, {{"Card": Hinting(["balance_min"])}})))
print(outcome(lambda: client.attributes(login, {{"Card": ["balance_min"]}}, filters={{"x": Lying([1], 2**62)}})))
results = client.investments_many(Hinting([login]))
print(outcome(lambda: list(results)))
"""
    )
    # The bound of names refuses the huge range; the lying ones are read for what they hold, and
    # the unknown login is then the server's to refuse (its ApiError subclass, not a crash).
    lines = run_child(code)
    assert lines[0] == "ConfigError attributes", lines
    assert not any(line.startswith("other") for line in lines), lines
    assert len(lines) == 6, lines


def test_an_endless_list_of_login_ids_is_refused_past_the_bound(sandbox: bf.Sandbox) -> None:
    code = (
        PRELUDE
        + f"""
import itertools
client = bf.Client({sandbox.url!r}, {sandbox.customer_id!r})
print(outcome(lambda: client.investments_many(itertools.repeat({LOGIN_ID!r}))))
"""
    )
    assert run_child(code) == ["ConfigError login_ids"]


def test_answers_whose_length_lies_are_read_for_what_they_hold(client: bf.Client) -> None:
    class Lying(list[str]):
        def __len__(self) -> int:
            return 2**62

    step = client.authorize(INSTITUTION, "Greatday", PASSWORD)
    assert isinstance(step, bf.Challenge)
    step.validate({prompt: Lying(["Montreal"]) for prompt in step.prompts})
    endless: Any = iter(lambda: "x", None)
    with pytest.raises(bf.InvalidAnswer, match="at most 1000"):
        step.validate(dict.fromkeys(step.prompts, endless))
