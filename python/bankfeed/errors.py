"""The exceptions bankfeed raises.

Every exception is a :class:`BankfeedError`, keeps everything the server said (``code``, ``status``,
``message``, ``request_id``, ``body``) and survives ``pickle`` (so it crosses process pools intact).
None of them ever carries a password, a challenge answer or a key.

Example::

    try:
        session = client.authorize_cached(login_id)
    except bf.InvalidLogin as exc:
        print(exc.code, exc.request_id)   # "INVALID_LOGIN", None
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bankfeed._native import AsyncChallenge, Challenge

__all__ = [
    "AggregationError",
    "ApiError",
    "BankfeedError",
    "CassetteError",
    "ChallengeRequired",
    "ClientClosed",
    "ConcurrentSession",
    "ConfigError",
    "ConnectTimeout",
    "DecodeError",
    "InstitutionUnavailable",
    "InvalidAnswer",
    "InvalidLogin",
    "InvalidRequest",
    "InvalidSecurityResponse",
    "LoginDisabled",
    "PendingTimeout",
    "ProtocolError",
    "RateLimited",
    "RetryLater",
    "SessionError",
    "TooManyChallenges",
    "TransportError",
    "Unauthorized",
]


class BankfeedError(Exception):
    """Base class of every error bankfeed raises.

    Raised as itself only when something fails inside bankfeed rather than at the service (a
    background task that panicked, a runtime that could not start, or a rich exception that could
    not be built: then the text is the original error's and ``__cause__`` the bridge's failure).

    Every exception is built as ``cls(text, **fields)``; the fields become attributes and survive
    ``pickle``.
    """

    #: The text of the error; for an :class:`ApiError`, the service's ``Message`` (``None`` when it
    #: sent none). Every class but ``ApiError`` narrows it to ``str``.
    message: str | None
    _text: str
    _fields: dict[str, Any]

    def __init__(self, text: str, **fields: Any) -> None:
        super().__init__(text)
        self._text = text
        self._fields = fields
        self.message = text
        for name, value in fields.items():
            setattr(self, name, value)

    #: Fields that belong to the client that raised the error (a challenge to answer): pickled
    #: as ``None``, since a copy in another process has no client to answer through.
    _client_bound: tuple[str, ...] = ()

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt from the text and the keyword fields, so that the attributes survive pickling.
        fields = {name: None if name in self._client_bound else value for name, value in self._fields.items()}
        return (_rebuild, (type(self), self._text, fields))

    def __str__(self) -> str:
        return self._text


def _rebuild(cls: type[BankfeedError], text: str, fields: dict[str, Any]) -> BankfeedError:
    return cls(text, **fields)


class ConfigError(BankfeedError, ValueError):
    """A client option or an argument is missing or invalid; nothing was sent.

    Example: ``bf.Client(timeout=-1)`` raises ``ConfigError`` with ``field == "timeout"``.
    """

    message: str
    #: The option or argument, e.g. ``"base_url"``.
    field: str
    #: What it must be.
    rule: str


class InvalidAnswer(BankfeedError, ValueError):
    """A challenge answer breaks an answer rule; nothing was sent. Never carries the answer."""

    message: str
    #: The challenge's prompt; ``"answers"`` for a key that is not a prompt (the key itself is
    #: not shown: in a swapped dict it would be an answer).
    prompt: str
    #: The rule the answer breaks.
    rule: str


class ChallengeRequired(BankfeedError):
    """The server asked a security challenge where a session was expected (no ``on_challenge``).

    Answer it where it was raised::

        try:
            session = client.login(institution, username, password)
        except bf.ChallengeRequired as exc:
            assert exc.challenge is not None
            step = exc.challenge.answer({prompt: ask(prompt) for prompt in exc.prompts})
    """

    message: str
    #: The challenge to answer (an AsyncChallenge when an AsyncClient raised it); ``None`` after
    #: unpickling, since a challenge belongs to its client.
    challenge: Challenge | AsyncChallenge | None
    #: The RequestId the answers go to.
    request_id: str
    #: The prompts of the challenge, verbatim.
    prompts: list[str]

    _client_bound = ("challenge",)


class TooManyChallenges(BankfeedError):
    """The challenge loop reached its bound (``max_challenge_rounds``) without opening a session."""

    message: str
    #: The rounds answered.
    rounds: int
    #: The RequestId of the sequence.
    request_id: str


class PendingTimeout(BankfeedError):
    """The server still answered 202 when the poll timeout (or the deadline) ran out.

    The service goes on processing: resume polling the same RequestId later instead of starting
    over, as the message says. ``investments`` and ``attributes`` take ``request_id=``; for the
    banking operations, ``client.session(request_id, login_id=...)`` gives the session of that
    RequestId without sending anything::

        try:
            inv = client.investments(login_id)
        except bf.PendingTimeout as exc:
            inv = client.investments(login_id, request_id=exc.request_id)   # later
            # or: client.session(exc.request_id, login_id=login_id).accounts_detail()

    A call without ``request_id`` opens a new RequestId and starts over.
    """

    message: str
    #: The operation that stayed pending, e.g. ``"GetAccountsDetail"``.
    operation: str
    #: The RequestId to resume with (``request_id=``, ``client.session(...)``), when one is known.
    request_id: str | None
    #: Seconds waited.
    waited: float
    #: The results processed so far that the last 202 carried (the fields of its body past the
    #: envelope, e.g. ``{"Accounts": [...]}``), as the service sends them with
    #: ``OPERATION_PENDING`` and ``OPERATION_DISPATCHED``; None when no 202 carried any.
    partial: dict[str, Any] | None


class ClientClosed(BankfeedError):
    """The client was closed (``client.close()``, or the end of its ``with`` block) while this
    call was in flight, or before it began; the call was cancelled where it stood.

    Every call of the client, in every thread and every task, ends this way at once::

        with bf.Client() as client:
            pool.submit(client.investments, login_id)
        # leaving the block cancels what is still running: those calls raise ClientClosed
    """

    message: str
    #: The operation that was cancelled or refused, e.g. ``"Investments"``.
    operation: str


class ConnectTimeout(BankfeedError, TimeoutError):
    """No bank was connected through the widget before ``client.connect(timeout=...)`` ran out.

    The loopback catcher has stopped; the widget's tab, if it is still open, can no longer report
    to it. Start again (a new URL, a new token) and finish in the tab that opens, or give a longer
    ``timeout``::

        try:
            connection = client.connect(timeout=120)
        except bf.ConnectTimeout:
            connection = client.connect(timeout=600)
    """

    message: str
    #: Seconds waited.
    waited: float


class CassetteError(BankfeedError):
    """A cassette could not be used (docs/cassettes.md): a request it has no recorded answer for
    (or whose recorded answers were all played), a file missing in ``record_mode="none"``, one
    that is not a cassette, or one that was not written because its text still held a secret.

    The message names the cassette and the request (after redaction: never a password, an answer,
    a key or a real LoginId), and for a request that matched nothing, the closest recorded one and
    how the two differ::

        try:
            client.investments(login_id)
        except bf.CassetteError as exc:
            print(exc.path, exc.request)   # the file, "POST /v3/{customer_id}/... (Investments)"
            print(exc.closest, exc.differences)
    """

    message: str
    #: The cassette's path, as given.
    path: str
    #: The request that found no answer: its method, path (the customer id as
    #: ``{customer_id}``) and operation; ``None`` when the file itself failed.
    request: str | None
    #: The recorded request nearest to ``request`` (``"interaction 4: POST ..."``), when the
    #: request matched nothing; ``None`` otherwise, or when the cassette records none.
    closest: str | None
    #: How ``request`` differs from ``closest``, one line each (``"body.Days: recorded Days90,
    #: sent Days365"``); empty when there is no ``closest``.
    differences: list[str]


class TransportError(BankfeedError):
    """The request got no HTTP answer (connection refused or reset, or timed out).

    When the connection failed in a data operation (after its session was opened), ``request_id``
    names that operation: the service may still finish it, so resume polling it rather than start
    over (a new call sends a new Authorize and opens a new RequestId)::

        try:
            inv = client.investments(login_id)
        except bf.TransportError as exc:
            if exc.request_id is None:
                raise
            inv = client.investments(login_id, request_id=exc.request_id)   # once the network is back
    """

    message: str
    #: The operation whose request failed.
    operation: str
    #: Whether the request timed out (rather than failed).
    timed_out: bool
    #: How many times the request was sent (1 when it was not retried).
    attempts: int
    #: The RequestId of the data operation the failure interrupted, to resume polling it with;
    #: ``None`` for the Authorize and the token call.
    request_id: str | None


class DecodeError(BankfeedError):
    """The server's answer could not be decoded.

    When it was the answer of a data operation, ``request_id`` names that operation, which the
    service may still finish: resume polling it rather than start over, as the message says (see
    :class:`TransportError`).
    """

    message: str
    #: The operation whose answer it was.
    operation: str
    #: The HTTP status of the answer.
    status: int
    #: The start of the body.
    snippet: str
    #: The RequestId of the data operation whose answer it was, to resume polling it with;
    #: ``None`` otherwise.
    request_id: str | None


class ProtocolError(BankfeedError):
    """The server answered with a status or shape the operation does not expect (a data call
    answering 203, a token call without a token, DeleteCard answering 202)."""

    message: str
    #: The operation whose answer it was.
    operation: str
    #: The status that really came.
    status: int
    #: The RequestId of the answer, when one is known.
    request_id: str | None
    #: The start of the body.
    snippet: str


class ApiError(BankfeedError):
    """The service answered with an error. Its subclass is chosen by ``code`` first, ``status`` second.

    Example::

        try:
            session = client.authorize_cached(login_id)
        except bf.SessionError as exc:
            print(exc.code, exc.status, exc.request_id)
    """

    #: The service's code (``FlinksCode`` or ``ServiceCode``), e.g. ``"SESSION_NONEXISTENT"``.
    code: str | None
    #: The HTTP status.
    status: int
    #: The service's ``Message``, when it sent one.
    message: str | None
    #: The ``RequestId`` of the body, when it sent one.
    request_id: str | None
    #: Seconds, from a ``Retry-After`` header.
    retry_after: float | None
    #: The body: the parsed JSON, or the text when it was not JSON (a snippet past 64 KiB).
    body: Any
    #: How many times the request was sent (1 when it was not retried).
    attempts: int
    #: The operation whose answer it was, e.g. ``"Authorize"`` (the login was refused) or
    #: ``"Investments"`` (its data was).
    operation: str | None


class Unauthorized(ApiError):
    """``UNAUTHORIZED`` or ``ACCESS_DENIED``: a key, token or package does not allow the call."""


class InvalidLogin(ApiError):
    """``INVALID_LOGIN``, ``INVALID_USERNAME`` or ``INVALID_PASSWORD``: credentials or LoginId refused."""


class LoginDisabled(ApiError):
    """``DISABLED_LOGIN``, ``NEW_ACCOUNT``: the institution refuses this login until the user acts."""


class InvalidSecurityResponse(ApiError):
    """The server refused a challenge answer (``INVALID_SECURITY_RESPONSE``, ``UNKNOWN_CHALLENGE_KEY``,
    ``SECURITYRESPONSES_INCOMPLETE``, ``QUESTION_NOT_FOUND``, ...).

    For ``INVALID_SECURITY_RESPONSE`` the challenge stays open and the error keeps it, also when
    ``on_challenge`` gave the wrong answer inside ``login()``: answer it again without a new live
    login (the institution may count failed answers, so ask the user rather than resend)::

        try:
            session = client.login(institution, username, password, on_challenge=ask)
        except bf.InvalidSecurityResponse as exc:
            if exc.challenge is None:
                raise
            step = exc.challenge.answer(ask(exc.challenge))
    """

    #: The challenge that stays open (an AsyncChallenge when an AsyncClient raised it); ``None``
    #: for the other codes, whose challenge is gone or was never open, and after unpickling.
    challenge: Challenge | AsyncChallenge | None = None
    _client_bound = ("challenge",)


class SessionError(ApiError):
    """``SESSION_NONEXISTENT`` or ``SESSION_EXPIRED``: open a new session (authorize again)."""


class ConcurrentSession(ApiError):
    """``CARD_IN_USE``, ``CONCURRENT_SESSION`` or ``ALREADY_AUTHORIZED``: another session uses this login."""


class RetryLater(ApiError):
    """``RETRY_LATER``: the institution is unavailable now; try again later."""


class RateLimited(ApiError):
    """``TOO_MANY_REQUESTS``: slow down (see ``retry_after``)."""


class InvalidRequest(ApiError):
    """``INVALID_REQUEST``: the service refused the request's shape or values."""


class InstitutionUnavailable(ApiError):
    """``DISABLED_INSTITUTION`` or ``METHOD_NOT_AVAILABLE``: not available to this customer."""


class AggregationError(ApiError):
    """``AGGREGATION_ERROR``: the service failed while collecting data from the institution."""


def _config_error(field: str, rule: str) -> ConfigError:
    """A :class:`ConfigError` of the Python layer, worded as the core words its own: ``"{field}
    {rule}"``, the rule saying what came and what is wanted."""
    return ConfigError(f"{field} {rule}", field=field, rule=rule)


def _check_count(field: str, value: object) -> None:
    """Checks a count of the Python layer (``concurrency``, ``batch_logins``, ``partition_size``)
    as the core checks its own (docs/bad-input.md): another type than ``int`` is a ``TypeError``
    naming the type, an ``int`` below 1 a :class:`ConfigError` naming the value."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{field} must be an int of at least 1, not {type(value).__name__}")
    if value < 1:
        raise _config_error(field, f"must be an int of at least 1, got {value}")
