"""Logging through Python's ``logging`` (docs/logging.md): a line per request, retry and poll round
at DEBUG, a warning when retries run out or an operation stays pending, nothing below the level the
application configured, and no secret in any record, repr or exception text."""

from __future__ import annotations

import contextlib
import functools
import logging
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import bankfeed as bf
from bfhelpers import (
    INSTITUTION,
    PASSWORD,
    REFUSED,
    as_user,
    assert_secret_free,
    login_id_of,
)

API_KEY = "ak-log-7c2e91d04b"
SECRET_KEY = "sk-log-5f83a6c1e2"

#: ``{operation} {METHOD} {path} -> {status or why none} in {ms} ms (RequestId {id}, attempt {n})``
REQUEST_LINE = re.compile(
    r"^(?P<operation>\w+) (?P<method>[A-Z]+) (?P<path>/\S*) -> (?P<answer>\d{3}( \S+)?|no answer \([a-z ]+\))"
    r" in \d+\.\d ms \(RequestId (?P<request_id>\S+), attempt (?P<attempt>\d+)\)$"
)
RETRY_LINE = re.compile(r"^\w+ retry: [A-Z]+ /\S* again in \d+\.\d ms \(attempt \d+ of at most \d+\) after .+$")
ROUND_LINE = re.compile(
    r"^\w+ pending, round \d+ \(\S+, RequestId \S+\): [A-Z]+ /\S* in \d+\.\d ms, \d+\.\d ms elapsed$"
)
GUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


class Capture(logging.Handler):
    """Keeps every record that reaches it."""

    def __init__(self) -> None:
        super().__init__(logging.NOTSET)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextlib.contextmanager
def captured(level: int) -> Iterator[list[logging.LogRecord]]:
    """The records of logger ``bankfeed`` while it is set to ``level``."""
    logger = logging.getLogger("bankfeed")
    handler = Capture()
    previous = logger.level
    logger.setLevel(level)
    logger.addHandler(handler)
    try:
        yield handler.records
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous)


@contextlib.contextmanager
def records_made() -> Iterator[list[logging.LogRecord]]:
    """Every record created while it runs, emitted or not, whoever made it."""
    made: list[logging.LogRecord] = []
    factory = logging.getLogRecordFactory()

    def counting(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = factory(*args, **kwargs)
        made.append(record)
        return record

    logging.setLogRecordFactory(counting)
    try:
        yield made
    finally:
        logging.setLogRecordFactory(factory)


@pytest.fixture
def keyed() -> Iterator[bf.Sandbox]:
    """A sandbox that needs both keys: every Authorize carries a token, every data call the key
    (CARD_IN_USE off: the flows end by deleting a login they connected a moment before)."""
    sb = bf.Sandbox(api_key=API_KEY, secret_key=SECRET_KEY, pending_polls=2, card_in_use_seconds=0.0)
    yield sb
    sb.close()


def keyed_client(sb: bf.Sandbox, **options: Any) -> bf.Client:
    """A client of ``sb`` with both keys, polling fast."""
    settings: dict[str, Any] = {"poll_interval": 0.01, "poll_timeout": 10, "api_key": API_KEY, "secret_key": SECRET_KEY}
    settings.update(options)
    return sb.client(**settings)


def expect_error(texts: list[str], call: Callable[[], object], exc_type: type[bf.BankfeedError]) -> bf.BankfeedError:
    """Runs ``call``, which must raise ``exc_type``; keeps the exception's str and repr in ``texts``."""
    with pytest.raises(exc_type) as info:
        call()
    texts += [str(info.value), repr(info.value)]
    return info.value


def noting(handler: bf.ChallengeHandler, ids: set[str]) -> bf.ChallengeHandler:
    """``handler``, noting the RequestId of every challenge it answers in ``ids``."""

    def answer(challenge: bf.Challenge) -> bf.Answers:
        ids.add(challenge.request_id)
        return handler(challenge)

    return answer


def every_flow(sb: bf.Sandbox) -> tuple[list[str], set[str]]:
    """Runs every flow against ``sb``: each user's login (challenges answered by ``bf.answers``), a
    cached session, Investments, account detail and summary, statements, attributes, DeleteCard, a
    failure whose retries run out, and a pending timeout. Returns the reprs and exception texts, and
    the ids (RequestIds, LoginIds) the objects carry."""
    client = keyed_client(sb)
    texts = [repr(client), str(client)]
    ids: set[str] = set()
    login_id = ""
    users = {user["username"]: user for user in map(as_user, sb.users)}
    for user in users.values():
        name = user["username"]
        if name in REFUSED:
            login = functools.partial(client.login, INSTITUTION, name, PASSWORD)
            refused = expect_error(texts, login, REFUSED[name][0])
            ids.add(str(getattr(refused, "request_id", "")))
            continue
        handler = bf.answers(user["answers"])
        texts += [repr(handler), str(handler)]
        session = client.login(INSTITUTION, name, PASSWORD, save=True, on_challenge=noting(handler, ids))
        ids.update(GUID.findall(str(session.raw)))
        texts += [repr(session), str(session)]
        if user["challenge_types"] and name.startswith("mfa_trusted"):
            session = client.login_saved(login_id_of(session), on_challenge=noting(handler, ids))
            ids.update(GUID.findall(str(session.raw)))
            texts += [repr(session), str(session)]
        if name == "Greatday":
            login_id = login_id_of(session)
    assert login_id

    session = client.authorize_cached(login_id)
    results: list[object] = [
        session,
        session.investments(),
        client.investments(login_id),
        session.accounts_detail(with_transactions=True, days="Days365"),
        session.accounts_summary(with_balance=True),
        session.statements(number_of_statements="Months3"),
        client.attributes(login_id, package="income"),
    ]
    for result in results:
        texts += [repr(result), str(result)]
        ids.update(GUID.findall(str(getattr(result, "raw", ""))))

    sb.inject({"kind": "status", "status": 503, "operation": "Investments", "times": 10})
    fast = keyed_client(sb, max_retries=2)
    error = expect_error(texts, lambda: fast.investments(login_id), bf.ApiError)
    ids.add(str(getattr(error, "request_id", "")))
    assert getattr(error, "attempts", None) == 3
    sb.clear_faults()

    pending_answers = bf.answers(users["test_pending"]["answers"])
    slow = client.login(INSTITUTION, "test_pending", PASSWORD, save=True, on_challenge=noting(pending_answers, ids))
    impatient = keyed_client(sb, poll_interval=0.02, poll_timeout=0.05)
    cached = impatient.authorize_cached(login_id_of(slow))
    ids.update(GUID.findall(f"{slow.raw} {cached.raw}"))
    timeout = expect_error(texts, cached.investments, bf.PendingTimeout)
    ids.add(str(getattr(timeout, "request_id", "")))

    deleted = client.delete_login(login_id)
    texts += [repr(deleted), str(deleted)]
    return texts, ids


def test_every_flow_at_debug_logs_each_request_retry_and_round_and_no_secret(keyed: bf.Sandbox) -> None:
    """Every flow at DEBUG: the lines the docs promise, and no secret anywhere."""
    with captured(logging.DEBUG) as records:
        texts, ids = every_flow(keyed)
    messages = [record.getMessage() for record in records]
    assert all(record.name in ("bankfeed.http", "bankfeed.poll") for record in records), {r.name for r in records}

    # One line per request, naming exactly what the server received, in the same order.
    requests = [m for r, m in zip(records, messages, strict=True) if r.name == "bankfeed.http" and "->" in m]
    lines = [REQUEST_LINE.match(m) for m in requests]
    assert all(lines), [m for m, line in zip(requests, lines, strict=True) if not line]
    logged = [(line["method"], line["path"], line["answer"][:3]) for line in lines if line]
    received = [(r["method"].upper(), r["path"].split("?")[0], str(r["status"])) for r in keyed.requests]
    assert not Counter(logged) - Counter(received), "every line names a request the server received"
    # Every request but one may have its line: the pending timeout's last poll, when the server
    # answered it just as poll_timeout cut it, was received and never answered to the client.
    unlogged = Counter(received) - Counter(logged)
    assert sum(unlogged.values()) <= 1 and all(status == "202" for _, _, status in unlogged), unlogged
    assert all(r.levelno == logging.DEBUG for r, m in zip(records, messages, strict=True) if m in requests)
    attempts = Counter(line["attempt"] for line in lines if line)
    assert attempts["1"] > 0 and attempts["2"] > 0 and attempts["3"] > 0
    assert any(line["request_id"] != "-" for line in lines if line)
    assert {line["answer"][:3] for line in lines if line} >= {"200", "202", "203", "401", "503"}

    retries = [m for m in messages if RETRY_LINE.match(m)]
    assert len(retries) == 2, retries
    rounds = [r for r in records if r.name == "bankfeed.poll" and r.levelno == logging.DEBUG]
    assert rounds and all(ROUND_LINE.match(r.getMessage()) for r in rounds), [r.getMessage() for r in rounds]

    warnings = [(r.name, r.getMessage()) for r in records if r.levelno == logging.WARNING]
    assert len(warnings) == 2, warnings
    assert warnings[0][0] == "bankfeed.http"
    assert "retries exhausted after 3 attempts" in warnings[0][1] and warnings[0][1].startswith("Investments POST")
    assert warnings[1][0] == "bankfeed.poll"
    assert warnings[1][1].startswith("Investments still pending after") and "poll_timeout" in warnings[1][1]

    # Passwords, answers and keys: in no record, repr or exception text.
    assert_secret_free(*messages, *texts, extra=(API_KEY, SECRET_KEY))
    # Tokens are GUIDs, which the check above ignores: every GUID logged must be an id a path or
    # a payload carries (customer, login, request); a token is carried only in a header.
    public = ids | {keyed.customer_id} | {g for r in keyed.requests for g in GUID.findall(r["path"])}
    public = {g.lower() for g in public}
    unknown = {g for m in messages for g in GUID.findall(m) if g.lower() not in public}
    assert not unknown, f"GUIDs that are no public id were logged: {unknown}"


def test_nothing_below_the_configured_level_is_made(keyed: bf.Sandbox) -> None:
    """At WARNING no DEBUG record is even created (the core's levels come from Python's)."""
    with records_made() as made, captured(logging.WARNING) as records:
        client = keyed_client(keyed)
        session = client.login(
            INSTITUTION,
            "Greatday",
            PASSWORD,
            save=True,
            on_challenge=bf.answers(
                {
                    "What city were you born in?": "Montreal",
                    "What is the best country on earth?": "Canada",
                    "What shape do people like most?": "Triangle",
                }
            ),
        )
        session.accounts_detail()
        keyed.inject({"kind": "status", "status": 503, "operation": "Investments", "times": 3})
        with pytest.raises(bf.ApiError):
            keyed_client(keyed, max_retries=2).investments(login_id_of(session))
    ours = [record for record in made if record.name.startswith("bankfeed")]
    assert [record.levelno for record in ours] == [logging.WARNING], [r.getMessage() for r in ours]
    assert [record.levelno for record in records] == [logging.WARNING]


def test_a_change_of_level_applies_to_the_next_call(keyed: bf.Sandbox) -> None:
    """No cache of levels to reset: a level set between two calls counts from the next one."""
    client = keyed_client(keyed)
    login_id = login_id_of(client.login(INSTITUTION, "greatday_nomfa", PASSWORD, save=True))
    with captured(logging.INFO) as quiet:
        client.authorize_cached(login_id).accounts_detail()
    assert quiet == []
    with captured(logging.DEBUG) as loud:
        client.authorize_cached(login_id).accounts_detail()
    assert {record.name for record in loud} == {"bankfeed.http", "bankfeed.poll"}
    # A child logger's own level counts too.
    logging.getLogger("bankfeed.http").setLevel(logging.WARNING)
    try:
        with captured(logging.DEBUG) as mixed:
            client.authorize_cached(login_id).accounts_detail()
    finally:
        logging.getLogger("bankfeed.http").setLevel(logging.NOTSET)
    assert mixed and {record.name for record in mixed} == {"bankfeed.poll"}


def test_a_call_deadline_that_ends_a_pending_call_is_a_warning(keyed: bf.Sandbox) -> None:
    """The ``deadline`` option ends a pending call with the same warning as ``poll_timeout``."""
    client = keyed_client(keyed, poll_interval=0.02, deadline=0.06)
    users = {user["username"]: user for user in map(as_user, keyed.users)}
    handler = bf.answers(users["test_pending"]["answers"])
    slow = client.login(INSTITUTION, "test_pending", PASSWORD, save=True, on_challenge=handler)
    session = client.authorize_cached(login_id_of(slow))
    with captured(logging.WARNING) as records, pytest.raises(bf.PendingTimeout) as info:
        session.investments()
    assert [(r.name, r.levelno) for r in records] == [("bankfeed.poll", logging.WARNING)]
    message = records[0].getMessage()
    assert message.startswith("Investments still pending after") and "deadline" in message, message
    assert str(info.value.request_id) in message


def test_a_data_call_that_times_out_is_logged_with_its_session_request_id() -> None:
    """A failure with no answer names no RequestId of its own; the warning names the session's,
    which the exception carries too, so that the record and the failure can be tied together."""
    with bf.Sandbox(logins=1) as sb:
        sb.inject({"kind": "latency", "seconds": 3600, "operation": "Investments", "times": None})
        client = sb.client(timeout=0.3, max_retries=1)
        with captured(logging.WARNING) as records, pytest.raises(bf.TransportError) as info:
            client.investments(sb.login_ids[0])
    assert info.value.request_id is not None
    [given_up] = [r.getMessage() for r in records if r.name == "bankfeed.http"]
    assert "retries exhausted after 2 attempts" in given_up
    # The login beside it, shortened as the views shorten a LoginId.
    assert f"(RequestId {info.value.request_id}, login \u2026{sb.login_ids[0][-4:]})" in given_up


def test_the_warnings_of_a_bulk_call_name_each_login_beside_the_request_id() -> None:
    """A bulk call's warnings come from many logins at once: each names its own, shortened as the
    views show a LoginId (``short_login_id``), so that a log can be read against the failures."""
    from bankfeed._views import short_login_id

    with bf.Sandbox(logins=3, pending_polls=50) as sb:
        sb.inject({"kind": "status", "status": 503, "operation": "Investments", "times": 1})
        client = sb.client(poll_interval=0.01, poll_timeout=0.2, max_retries=0)
        with captured(logging.WARNING) as records, client.investments_many(sb.login_ids) as results:
            failed = {login: error for login, error in results if isinstance(error, BaseException)}
    assert set(failed) == set(sb.login_ids), failed
    warnings = [r.getMessage() for r in records if r.name in ("bankfeed.http", "bankfeed.poll")]
    assert len(warnings) == 3, warnings
    for login, error in failed.items():
        [line] = [line for line in warnings if f", login {short_login_id(login)})" in line]
        assert f"(RequestId {getattr(error, 'request_id', None)}, login {short_login_id(login)})" in line, line


#: A pending timeout, then a refused connection (a warning each), in a process whose application
#: configures no logging, then the same with ``logging.basicConfig()``.
UNCONFIGURED = """
import logging, socket, sys
import bankfeed as bf
if sys.argv[1] == "configured":
    logging.basicConfig()
with bf.Sandbox(logins=3, pending_seconds=60) as sb:
    client = sb.client(poll_interval=0.01, poll_timeout=0.05)
    results = [result for _, result in client.investments_many(sb.login_ids)]
    assert len(results) == 3 and all(isinstance(result, bf.PendingTimeout) for result in results), results
with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
gone = bf.Client(f"http://127.0.0.1:{port}", "cust", max_retries=1)
try:
    gone.investments("5e0e5f83-6e9b-4a2c-a6a3-0d8f4b1c9e21")
except bf.TransportError:
    pass
print("done")
"""


@pytest.mark.parametrize("setup", ["unconfigured", "configured"])
def test_an_application_that_configures_no_logging_sees_no_warning(setup: str) -> None:
    """Python prints a warning of a logger with no handler to stderr; bankfeed's has one that drops it."""
    child = subprocess.run(
        [sys.executable, "-c", UNCONFIGURED, setup], capture_output=True, text=True, timeout=60, check=False
    )
    assert child.returncode == 0 and child.stdout == "done\n", child.stderr
    warnings = [line for line in child.stderr.splitlines() if line.strip()]
    if setup == "unconfigured":
        assert warnings == []
    else:
        # The same run with logging configured: the two kinds of warning are there.
        assert sum("still pending after" in line for line in warnings) == 3, warnings
        assert any("retries exhausted" in line for line in warnings), warnings
