"""Type aliases of the public API, importable at run time (``bf.Step``, ``bf.ChallengeHandler``, ...).

Annotate your own challenge handlers and step loops with them::

    def ask(challenge: bf.Challenge) -> bf.Answers:
        answers: dict[str, list[str]] = {}
        for c in challenge.challenges:
            answers.update(bf.typed_answer(c, input(c.prompt + " ")))
        return answers

    step: bf.Step = client.authorize(institution, username, password)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, TypedDict, TypeVar

from bankfeed._native import AsyncChallenge, AsyncSession, Challenge, Session

if TYPE_CHECKING:
    from bankfeed.errors import BankfeedError

__all__ = [
    "Answer",
    "Answers",
    "AsyncBulkResults",
    "AsyncChallengeHandler",
    "AsyncStep",
    "BulkResults",
    "ChallengeHandler",
    "Days",
    "IneligibleLogin",
    "InstitutionLink",
    "InstitutionName",
    "RecordedRequest",
    "SandboxUser",
    "Step",
    "SupportedInstitution",
]

#: One answer: a string, or a list of strings (several choices, or ``[question, answer]``).
Answer: TypeAlias = str | Sequence[str]

#: The answers to a challenge step: prompt (or chosen choice of a TextOrCall) to its answer.
Answers: TypeAlias = Mapping[str, Answer]

#: How far back ``accounts_detail`` (and ``accounts_detail_many``) reads transactions: the two
#: values the service takes, so a type checker refuses another (``"Days30"``) before it runs.
Days: TypeAlias = Literal["Days90", "Days365"]

#: What ``authorize``, ``authorize_saved`` and ``Challenge.answer`` return.
Step: TypeAlias = Session | Challenge

#: An ``on_challenge`` handler: takes the challenge step, returns its answers (see ``bf.answers``).
#: A handler for both clients takes ``bf.Challenge | bf.AsyncChallenge``, as ``bf.CannedAnswers`` does.
ChallengeHandler: TypeAlias = Callable[[Challenge], Answers]

#: What ``AsyncClient.authorize``, ``authorize_saved`` and ``AsyncChallenge.answer`` give.
AsyncStep: TypeAlias = AsyncSession | AsyncChallenge

#: An ``on_challenge`` handler of an ``AsyncClient``: a plain function, or an ``async def`` one.
AsyncChallengeHandler: TypeAlias = Callable[[AsyncChallenge], Answers | Awaitable[Answers]]

_R_co = TypeVar("_R_co", covariant=True)


class BulkResults(Protocol[_R_co]):
    """What ``Client.investments_many`` and its siblings return: ``(login_id, result)`` pairs as
    each login finishes, the result being the data or the exception that login raised.

    Every LoginId asked for is handed out once, also when the call is stopped early: after
    :meth:`close` (from a watchdog thread, say) or the client's ``close()``, a reader that goes on
    reading gets the results already fetched, then ``(login_id, ClientClosed)`` for every login
    not finished, then the end. Readable only in the process that started the call: a forked
    child's ``next()`` raises :class:`~bankfeed.ClientClosed` at once."""

    def __iter__(self) -> BulkResults[_R_co]:
        """The iterator itself."""
        ...

    def __next__(self) -> tuple[str, _R_co | BankfeedError]:
        """The next login to finish; waits with the GIL released (Ctrl-C stops everything)."""
        ...

    def close(self) -> None:
        """Stops every login still running, also while another thread reads; that reader (or a
        later ``next()``) then gets the results already fetched and a ``ClientClosed`` pair for
        every login not finished, then the end."""
        ...

    def __enter__(self) -> BulkResults[_R_co]:
        """``with client.investments_many(ids) as results:`` closes the call when the block ends."""
        ...

    def __exit__(self, *exc_info: object) -> None:
        """Stops every login still running, as :meth:`close`."""
        ...


class AsyncBulkResults(Protocol[_R_co]):
    """What ``AsyncClient.investments_many`` and its siblings return, for ``async for``.

    As :class:`BulkResults`: after :meth:`aclose` (from another task) or the client's ``close()``,
    a reader that goes on reading gets the results already fetched, then ``(login_id,
    ClientClosed)`` for every login not finished. Cancelling the reading task instead (as
    ``asyncio.timeout`` does) raises in the reader, and :func:`~bankfeed.acombine` or an ``async
    with`` block around the call then stops every login."""

    def __aiter__(self) -> AsyncBulkResults[_R_co]:
        """The iterator itself."""
        ...

    def __anext__(self) -> Awaitable[tuple[str, _R_co | BankfeedError]]:
        """The next login to finish."""
        ...

    def aclose(self) -> Awaitable[None]:
        """Stops every login still running, also while another task awaits ``__anext__``; that
        reader then gets the results already fetched and a ``ClientClosed`` pair for every login
        not finished, then the end."""
        ...

    def __aenter__(self) -> Awaitable[AsyncBulkResults[_R_co]]:
        """``async with client.investments_many(ids) as results:`` closes the call when the block
        ends."""
        ...

    def __aexit__(self, *exc_info: object) -> Awaitable[None]:
        """Stops every login still running, as :meth:`aclose`."""
        ...


class SandboxUser(TypedDict):
    """One test user of the sandbox, as ``Sandbox.users`` and ``bankfeed users --json`` give it
    (docs/sandbox.md#users)::

        greatday = next(u for u in sb.users if u["username"] == "Greatday")
        client.login("FlinksCapital", greatday["username"], greatday["password"],
                     on_challenge=bf.answers(greatday["answers"]))
    """

    #: The username at institution ``FlinksCapital``.
    username: str
    #: Its password (``Everyday`` for every user).
    password: str
    #: What the user does, in one sentence.
    description: str
    #: The ``Type`` of every challenge it is asked, in the order they come.
    challenge_types: list[str]
    #: A passing answer to every challenge: the prompt (the chosen phone number for a
    #: ``TextOrCall``) to its answer list, as ``SecurityResponses`` sends it.
    answers: dict[str, list[str]]


class RecordedRequest(TypedDict):
    """One entry of ``Sandbox.requests`` (and of the admin API's request log): what a request
    concerns, for a test to assert on (docs/sandbox.md#the-request-log)::

        live = [r for r in sb.requests if r["authorize"] == "credentials"]
        assert not live, "the nightly job must read cached data only"
    """

    #: ``"POST"``, ``"GET"``, ``"DELETE"``.
    method: str
    #: The path, without the query string.
    path: str
    #: The status of the answer; 0 when none was sent.
    status: int
    #: The wire operation, e.g. ``"Authorize"``, ``"GetAccountsDetail"``; None for a path no
    #: operation serves.
    operation: str | None
    #: Which Authorize it was; None for other operations.
    authorize: Literal["credentials", "cached", "saved", "challenge_answer"] | None
    #: The user the request concerns.
    username: str | None
    #: The LoginId it names or concerns (for an Authorize, the one its answer gave).
    login_id: str | None
    #: The RequestId it names (for an Authorize, the one its answer gave).
    request_id: str | None
    #: The JSON body, every password, answer, key and token replaced by ``"***"``; None without
    #: one, for one that is not JSON, and for one whose masked text is longer than 64 KiB.
    body: Any
    #: The body's size in bytes as received, for a request to an operation; None for others.
    body_size: int | None
    #: For a body whose masked JSON text is longer than 64 KiB: its first 64 KiB, in place of
    #: ``body``.
    body_prefix: str | None
    #: When it arrived, in seconds since the epoch (as ``time.time()``).
    time: float


class IneligibleLogin(TypedDict, total=False):
    """One entry of ``Client.nightly_refresh_status()``: a saved login whose nightly refresh is on
    but cannot run, as GetNightlyRefreshStatus describes it (docs/protocol.md)::

        stuck = [login["LoginId"] for login in client.nightly_refresh_status()]
    """

    LoginId: str
    #: When it was last refreshed, as the service writes it.
    LastRefreshDate: str
    #: Where the last refresh stopped, e.g. ``"AnsweringSecurityChallenge"``.
    LastRefreshState: str
    #: The service's code for why it stopped, if any.
    LastRefreshErrorCode: str | None


class InstitutionLink(TypedDict, total=False):
    """A link of an institution's name: its ``Type`` (e.g. ``"Main"``) and ``Url``."""

    Type: str
    Url: str


class InstitutionName(TypedDict, total=False):
    """An institution's name in one language (``"en"``, ``"fr"``), with its links."""

    Language: str
    Name: str
    Urls: list[InstitutionLink]


class SupportedInstitution(TypedDict, total=False):
    """One entry of ``Client.institutions()``, as the Institutions operation describes it::

    names = {i["Id"]: i["Localizations"][0]["Name"] for i in client.institutions()}
    """

    Id: int
    Localizations: list[InstitutionName]
    #: e.g. ``"Enabled"``.
    Status: str
    #: e.g. ``"CA"``.
    Country: str
