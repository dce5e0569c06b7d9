"""Helpers shared by the pytest suite: flows through the public API, and the secret check."""

from __future__ import annotations

import _thread
import asyncio
import collections.abc
import contextlib
import functools
import inspect
import re
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from typing import IO, Any, NamedTuple, TypeAlias, TypedDict, TypeVar

import pytest

import bankfeed as bf

INSTITUTION = "FlinksCapital"
PASSWORD = "Everyday"
#: The stub's default of Sandbox(slow_pending_polls=...), used by test_pending / test_dispatched.
SLOW_PENDING_POLLS = 5

API_KEY = "ak-test-5d1f0c9e7b"
SECRET_KEY = "sk-test-93a6e2b48f"


class SandboxUser(TypedDict):
    """One entry of ``Sandbox.users``, as the tests read it."""

    username: str
    password: str
    description: str
    #: The challenge types of the user's flow, in the order they come.
    challenge_types: list[str]
    #: Prompt (or chosen TextOrCall choice) to the answers that pass.
    answers: dict[str, list[str]]


#: Answers as ``Challenge.answer`` and ``validate`` take them.
Answers: TypeAlias = Mapping[str, str | Sequence[str]]
#: What ``step_with`` looks for: a challenge type, or a predicate on a security challenge.
Want: TypeAlias = str | Callable[[bf.SecurityChallenge], bool]

#: A challenge step of either client.
AnyChallenge: TypeAlias = bf.Challenge | bf.AsyncChallenge

_A = TypeVar("_A", bound=str | Sequence[str])
_E = TypeVar("_E", bound=BaseException)

GREATDAY = {
    "What city were you born in?": "Montreal",
    "What is the best country on earth?": "Canada",
    "What shape do people like most?": "Triangle",
}
#: The user that asks Greatday's three questions one per 203, for a test of a flow of several
#: rounds: ``Greatday`` asks one of them per login (docs/sandbox.md#users).
THREE_ROUNDS = "greatday_three_rounds"

#: Users that are refused outright, with the exception class and code they get.
REFUSED: dict[str, tuple[type[bf.ApiError], str]] = {
    "test_disabled_account": (bf.LoginDisabled, "DISABLED_LOGIN"),
    "test_service_unavailable": (bf.RetryLater, "RETRY_LATER"),
}

GUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_ANY_GUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")

#: Answer values that are protocol words, printed in rule messages on purpose.
_PROTOCOL_WORDS = {"Text", "Call", "VERIFIED"}

#: Wrong answers the tests send: they must not be echoed either.
WRONG_TEXT = "Wrong answer qz"
WRONG_CODE = "000000"


def is_guid(value: object) -> bool:
    """Whether ``value`` is a string holding a GUID."""
    return isinstance(value, str) and GUID.match(value) is not None


def as_user(raw: Mapping[str, Any]) -> SandboxUser:
    """One entry of ``Sandbox.users`` (a plain dict of JSON-like values) as a :class:`SandboxUser`."""
    return {
        "username": raw["username"],
        "password": raw["password"],
        "description": raw["description"],
        "challenge_types": list(raw["challenge_types"]),
        "answers": {key: list(values) for key, values in raw["answers"].items()},
    }


def answer_pairs(user: SandboxUser) -> list[tuple[str, list[str]]]:
    """``user["answers"]`` as (key, values) pairs."""
    return [(key, list(values)) for key, values in user["answers"].items()]


def answer_map(user: SandboxUser) -> dict[str, list[str]]:
    """``user["answers"]`` as a fresh dict of fresh lists."""
    return dict(answer_pairs(user))


def login_id_of(session: bf.Session | bf.AsyncSession) -> str:
    """The LoginId of ``session``, which every session of a saved or cached login has."""
    login_id = session.login_id
    assert login_id is not None, f"no LoginId in {session!r}"
    return login_id


def choices_of(item: bf.SecurityChallenge) -> list[str]:
    """The choices of a challenge that has some (a multiple-choice, image or TextOrCall one)."""
    choices = item.choices
    assert choices is not None, f"a {item.type} challenge without choices"
    return choices


def keys_of(step: AnyChallenge) -> set[str]:
    """The keys an answer to ``step`` may have: its prompts and its TextOrCall choices."""
    keys = set(step.prompts)
    for item in step.challenges:
        if item.type == "TextOrCall":
            keys.update(item.choices or ())
    return keys


def answers_for(step: AnyChallenge, answers: Mapping[str, _A]) -> dict[str, _A]:
    """``answers`` filtered to what ``step`` asks."""
    keys = keys_of(step)
    return {key: value for key, value in answers.items() if key in keys}


_PUBLIC: set[str] = set()


def remember(step: AnyChallenge) -> None:
    """Notes the public text of a step (prompts, choices), which the secret check ignores."""
    for item in step.challenges:
        _PUBLIC.add(item.prompt)
        _PUBLIC.update(item.choices or ())


def complete(step: bf.Session | bf.Challenge, answers: Answers, seen: list[str] | None = None) -> bf.Session:
    """Answers every Challenge of ``step`` from ``answers``; returns the Session."""
    session = SYNC.complete(step, answers, seen)
    assert isinstance(session, bf.Session)
    return session


def login_step_by_step(
    client: bf.Client, user: SandboxUser, *, save: bool = True, seen: list[str] | None = None
) -> bf.Session:
    """A live login of ``user`` answered round by round; a user whose challenge only comes on a
    login by saved connection (trusted device) gets that login too. Returns the last Session."""
    session = SYNC.login_step_by_step(client, user, save=save, seen=seen)
    assert isinstance(session, bf.Session)
    return session


def step_with(client: bf.Client, user: SandboxUser, want: Want) -> bf.Challenge:
    """Walks ``user``'s flow, answering correctly, up to the first step with a challenge of type
    ``want`` (or matching the predicate ``want``), and returns that step unanswered."""
    step = SYNC.step_with(client, user, want)
    assert isinstance(step, bf.Challenge)
    return step


@functools.cache
def sandbox_users() -> tuple[SandboxUser, ...]:
    """The sandbox's users, read once at collection time (for parametrize)."""
    with bf.Sandbox() as sb:
        return tuple(as_user(user) for user in sb.users)


def usernames() -> list[str]:
    """The username of every sandbox user, in the sandbox's order."""
    return [user["username"] for user in sandbox_users()]


@functools.cache
def _secrets() -> frozenset[str]:
    """Every secret a test sends: the password, the keys, each free-text answer of every user.

    Choice answers are public (the server lists them), so each user's flow is walked once on
    its own sandbox to learn the public text of every challenge.
    """
    values: set[str] = {PASSWORD, API_KEY, SECRET_KEY, WRONG_TEXT, WRONG_CODE}
    with bf.Sandbox() as sb:
        client = sb.client(poll_interval=0.01, poll_timeout=10)
        for user in map(as_user, sb.users):
            for _, answer in answer_pairs(user):
                values.update(answer)
            if user["username"] not in REFUSED:
                with contextlib.suppress(bf.BankfeedError):
                    login_step_by_step(client, user)
    return frozenset(v for v in values if v.strip() and v not in _PROTOCOL_WORDS and v not in _PUBLIC)


def secrets_in(text: str, extra: Iterable[str] = ()) -> list[str]:
    """The secrets found in ``text`` once public text (prompts, choices) and GUIDs are removed."""
    for public in sorted(_PUBLIC, key=len, reverse=True):
        text = text.replace(public, " ")
    text = _ANY_GUID.sub(" ", text)
    return sorted(s for s in set(_secrets()) | set(extra) if s and s in text)


def assert_secret_free(*texts: str, extra: Iterable[str] = ()) -> None:
    """Fails naming the secrets found in any of ``texts`` (``extra``: more values to look for)."""
    extra = tuple(extra)
    for text in texts:
        found = secrets_in(text, extra)
        assert not found, f"secret(s) {found} leaked in {text[:300]!r}"


@contextlib.contextmanager
def raises(
    exc_type: type[_E], *, extra_secrets: Iterable[str] = (), **fields: object
) -> Iterator[pytest.ExceptionInfo[_E]]:
    """``pytest.raises`` that also checks ``fields`` of the exception and that neither its str nor
    its repr carries a secret."""
    with pytest.raises(exc_type) as info:
        yield info
    exc = info.value
    for name, expected in fields.items():
        assert getattr(exc, name) == expected, f"{name}: {getattr(exc, name)!r} != {expected!r}"
    assert_secret_free(str(exc), repr(exc), extra=extra_secrets)


def fast_async_client(sb: bf.Sandbox, **options: Any) -> bf.AsyncClient:
    """An AsyncClient of ``sb`` polling every 0.01 s, for at most a minute, unless ``options`` say."""
    return sb.async_client(**{"poll_interval": 0.01, "poll_timeout": 60, **options})


def requests_after(sb: bf.Sandbox, quiet: float = 0.2) -> int:
    """How many requests ``sb`` receives in ``quiet`` seconds once what was on the wire when a
    call stopped has landed: first 0.05 s without a request (a second at most; a fixed short
    wait was too short on a loaded machine). A call still running never settles, and at a poll
    every 0.01 s it sends dozens of requests in ``quiet``. From a coroutine, run it with
    ``await asyncio.to_thread(requests_after, sb)``, so the loop keeps running meanwhile.
    """
    settle_by, seen = time.monotonic() + 1.0, sb.request_count
    while time.monotonic() < settle_by:
        time.sleep(0.05)
        if sb.request_count == seen:
            break
        seen = sb.request_count
    before = sb.request_count
    time.sleep(quiet)
    return sb.request_count - before


def operations_since(sb: bf.Sandbox, before: int) -> list[str]:
    """The operations (a path's last part, e.g. ``GenerateAuthorizeToken``, ``Authorize``) of the
    requests ``sb`` received since its ``request_count`` was ``before``, oldest first."""
    new = sb.request_count - before
    log = sb.requests
    return [request["path"].rstrip("/").rsplit("/", 1)[-1] for request in log[len(log) - new :]] if new else []


#: What a client sends to open a session or answer a challenge: a token, then the Authorize.
AUTHORIZE = ["GenerateAuthorizeToken", "Authorize"]


def investment_posts(sandbox: bf.Sandbox) -> int:
    """How many POSTs to .../Investments the sandbox has received."""
    return sum(
        1
        for request in sandbox.requests
        if request["method"].upper() == "POST" and request["path"].rstrip("/").endswith("/Investments")
    )


def assert_investments(result: object) -> None:
    """An Investments result whose raw payload has the shape of docs/protocol.md#investments."""
    assert isinstance(result, bf.Investments)
    payload = result.raw
    assert isinstance(payload, dict)
    assert result.value == payload["Value"] and result.cash == payload["Cash"]
    assert len(result.accounts) == len(payload["Accounts"])
    for key in ("Accounts", "Securities", "Value", "Cash", "RequestId"):
        assert key in payload, f"{key} missing from {sorted(payload)}"
    assert isinstance(payload["Accounts"], list)
    assert isinstance(payload["Securities"], list)
    assert isinstance(payload["Value"], (int, float)) and not isinstance(payload["Value"], bool)
    assert isinstance(payload["Cash"], (int, float)) and not isinstance(payload["Cash"], bool)
    assert is_guid(payload["RequestId"])


#: The two clients the shared cases run against (the ``api`` fixture of conftest.py).
API_NAMES = ("sync", "async")


class Api:
    """How a shared case drives a client, so that one case covers both :class:`bf.Client` and
    :class:`bf.AsyncClient`: ``run`` turns what a call returned into its value (for ``"sync"`` the
    value itself; for ``"async"`` a coroutine, run on an event loop of the test's own). Clients,
    sessions and challenges are typed ``Any`` here: the cases call the same names on both."""

    def __init__(self, name: str) -> None:
        assert name in API_NAMES, name
        self.name = name
        self.is_async = name == "async"
        #: The session and challenge classes this client gives.
        self.Session: type[bf.Session | bf.AsyncSession] = bf.AsyncSession if self.is_async else bf.Session
        self.Challenge: type[AnyChallenge] = bf.AsyncChallenge if self.is_async else bf.Challenge
        #: The client class of this kind.
        self.cls: type[bf.Client | bf.AsyncClient] = bf.AsyncClient if self.is_async else bf.Client
        self._loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        return f"Api({self.name!r})"

    def client(self, sb: bf.Sandbox, **options: Any) -> Any:
        """A client of ``sb`` of this kind, with the keys ``sb`` asks for (``sb.client()`` fills
        them in), polling fast unless ``options`` say otherwise."""
        make = sb.async_client if self.is_async else sb.client
        return make(**{"poll_interval": 0.01, "poll_timeout": 10, **options})

    def client_at(self, base_url: str, customer_id: str, **options: Any) -> Any:
        """A client of this kind of any server (a stub, a closed port), polling fast unless
        ``options`` say otherwise."""
        options = {"poll_interval": 0.01, "poll_timeout": 10, **options}
        return self.cls(base_url, customer_id, **options)

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The event loop of the async cases (made on first use, closed by :meth:`close`)."""
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        return self._loop

    def run(self, call: Any) -> Any:
        """The value of a call: for the async client the call must be a coroutine, awaited here;
        for the sync one it must not be awaitable."""
        if self.is_async:
            assert isinstance(call, collections.abc.Coroutine), f"an AsyncClient call gave {call!r}, not a coroutine"
            return self.loop.run_until_complete(call)
        assert not inspect.isawaitable(call), f"a Client call gave an awaitable {call!r}"
        return call

    def handler(self, function: Callable[[Any], Any]) -> Callable[[Any], Any]:
        """``function`` as an ``on_challenge`` handler of this client: for the async client an
        ``async def`` that yields to the loop before calling it."""
        if not self.is_async:
            return function

        async def handler(challenge: Any) -> Any:
            await asyncio.sleep(0)
            return function(challenge)

        return handler

    def collect(self, results: Iterable[tuple[str, Any]] | AsyncIterable[tuple[str, Any]]) -> list[tuple[str, Any]]:
        """Every pair of a bulk call: a sync iterator, or for the async client an async one."""
        if isinstance(results, AsyncIterable):
            assert self.is_async, f"a Client bulk call gave an async iterator {results!r}"
            source = results

            async def gather() -> list[tuple[str, Any]]:
                return [pair async for pair in source]

            pairs: list[tuple[str, Any]] = self.run(gather())
            return pairs
        assert not self.is_async, f"an AsyncClient bulk call gave a sync iterator {results!r}"
        return list(results)

    def close_results(self, results: Any) -> None:
        """Closes the iterator of a bulk call: ``close()``, or for the async client ``aclose()``, awaited."""
        if self.is_async:
            self.run(results.aclose())
        else:
            results.close()

    def close(self) -> None:
        """Closes the event loop, if one was made."""
        if self._loop is not None:
            self._loop.run_until_complete(self._loop.shutdown_asyncgens())
            self._loop.close()
            self._loop = None

    def complete(self, step: Any, answers: Answers, seen: list[str] | None = None) -> Any:
        """Answers every challenge of ``step`` from ``answers``; returns the session."""
        rounds = 0
        while isinstance(step, self.Challenge):
            rounds += 1
            assert rounds <= 10, "the flow does not end"
            remember(step)
            if seen is not None:
                seen.extend(item.type for item in step.challenges)
            step = self.run(step.answer(answers_for(step, answers)))
        assert isinstance(step, self.Session), f"expected a {self.Session.__name__}, got {step!r}"
        return step

    def login_step_by_step(
        self, client: Any, user: SandboxUser, *, save: bool = True, seen: list[str] | None = None
    ) -> Any:
        """A live login of ``user`` answered round by round; a user whose challenge only comes on
        a login by saved connection (trusted device) gets that login too. Returns the last session."""
        answers = answer_map(user)
        first: list[str] = []
        step = self.run(client.authorize(INSTITUTION, user["username"], user.get("password", PASSWORD), save=save))
        session = self.complete(step, answers, first)
        if seen is not None:
            seen.extend(first)
        if not first and user["challenge_types"]:
            session = self.complete(self.run(client.authorize_saved(login_id_of(session))), answers, seen)
        return session

    def step_with(self, client: Any, user: SandboxUser, want: Want) -> Any:
        """Walks ``user``'s flow, answering correctly, up to the first step with a challenge of
        type ``want`` (or matching the predicate ``want``), and returns that step unanswered."""
        match: Callable[[bf.SecurityChallenge], bool] = want if callable(want) else (lambda item: item.type == want)
        answers = answer_map(user)
        step = self.run(client.authorize(INSTITUTION, user["username"], PASSWORD, save=True))
        if isinstance(step, self.Session):
            step = self.run(client.authorize_saved(login_id_of(step)))
        for _ in range(10):
            assert isinstance(step, self.Challenge), f"{user['username']}: no challenge matching {want!r}"
            remember(step)
            if any(match(item) for item in step.challenges):
                return step
            step = self.run(step.answer(answers_for(step, answers)))
        raise AssertionError(f"{user['username']}: no challenge matching {want!r}")


class Blocking:
    """A client or session of either kind whose method calls give their values: a coroutine that
    a call of an ``AsyncClient`` gives is awaited by ``api.run``, and a session it opens is wrapped
    too. For cases whose every step is a call and its value, so that their text reads the same
    for both clients."""

    def __init__(self, api: Api, target: Any) -> None:
        self._api = api
        self._target = target

    def __repr__(self) -> str:
        return f"Blocking({self._target!r})"

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if not callable(value):
            return value

        def call(*args: Any, **kwargs: Any) -> Any:
            result = self._api.run(value(*args, **kwargs))
            return Blocking(self._api, result) if isinstance(result, self._api.Session) else result

        return call


#: The blocking client's driver, behind :func:`complete`, :func:`login_step_by_step` and :func:`step_with`.
SYNC = Api("sync")


@contextlib.contextmanager
def ctrl_c_after(seconds: float) -> Iterator[list[float]]:
    """Ctrl-C (a ``KeyboardInterrupt`` in the main thread) ``seconds`` into the block, as a person
    at the terminal sends it; yields the list that gets the time it was sent, empty when the block
    ended first. The timer is cancelled when the block ends."""
    fired: list[float] = []

    def interrupt() -> None:
        fired.append(time.monotonic())
        _thread.interrupt_main()

    timer = threading.Timer(seconds, interrupt)
    timer.start()
    try:
        yield fired
    finally:
        timer.cancel()


class LoopTicks:
    """What :func:`loop_ticks` counts."""

    def __init__(self) -> None:
        self.count = 0


@contextlib.asynccontextmanager
async def loop_ticks(interval: float) -> AsyncIterator[LoopTicks]:
    """Counts how often the running event loop wakes a task of its own every ``interval`` seconds
    while the block runs: a loop that a blocking call holds up counts few ticks or none."""
    ticks = LoopTicks()

    async def tick() -> None:
        while True:
            await asyncio.sleep(interval)
            ticks.count += 1

    ticker = asyncio.ensure_future(tick())
    try:
        yield ticks
    finally:
        ticker.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await ticker


class SandboxProcess(NamedTuple):
    """A ``python -m bankfeed sandbox`` process serving, as :func:`sandbox_process` started it."""

    #: The URL its first line printed.
    url: str
    #: The customer id its first line printed.
    customer_id: str
    #: The rest of its standard output, after the first line.
    stdout: IO[str]


@contextlib.contextmanager
def sandbox_process(*args: str) -> Iterator[SandboxProcess]:
    """``python -m bankfeed sandbox`` with ``args`` and no others (a free port is its default;
    ``--replay`` and ``--record`` refuse the imitation's options), read from its first line as a
    harness reads it (docs/sandbox.md#starting-it), and stopped when the block ends. A process that ends
    before printing that line fails the test with what it wrote to stderr."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "bankfeed", "sandbox", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        first = proc.stdout.readline()
        match = re.fullmatch(r"bankfeed sandbox on (http://\S+) \(customer id (\S+)\)\n", first)
        assert match, (first, proc.stderr.read() if proc.poll() is not None else "")
        yield SandboxProcess(match[1], match[2], proc.stdout)
    finally:
        proc.terminate()
        proc.wait(timeout=15)
