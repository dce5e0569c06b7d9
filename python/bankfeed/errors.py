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

from typing import Any, Optional

__all__ = [
    "BankfeedError",
    "ConfigError",
    "InvalidAnswer",
    "ChallengeRequired",
    "TooManyChallenges",
    "PendingTimeout",
    "TransportError",
    "DecodeError",
    "ProtocolError",
    "ApiError",
    "Unauthorized",
    "InvalidLogin",
    "LoginDisabled",
    "InvalidSecurityResponse",
    "SessionError",
    "ConcurrentSession",
    "RetryLater",
    "RateLimited",
    "InvalidRequest",
    "InstitutionUnavailable",
    "AggregationError",
]


class BankfeedError(Exception):
    """Base class of every error bankfeed raises."""

    def __init__(self, text: str, **fields: Any) -> None:
        super().__init__(text)
        self._text = text
        self._fields = fields
        # ApiError's ``message`` is the server's own Message; elsewhere it is the whole text.
        self.message = text
        for name, value in fields.items():
            setattr(self, name, value)

    def __reduce__(self):
        # Rebuild from the text and the keyword fields, so attributes survive pickling.
        return (_rebuild, (type(self), self._text, self._fields))

    def __str__(self) -> str:
        return self._text


def _rebuild(cls, text, fields):
    return cls(text, **fields)


class ConfigError(BankfeedError, ValueError):
    """A client option is missing or invalid (``field`` names it, ``rule`` says what it must be)."""


class InvalidAnswer(BankfeedError, ValueError):
    """A challenge answer breaks an answer rule; nothing was sent.

    ``prompt`` is the challenge's prompt (or the offending key), ``rule`` the rule it breaks.
    """


class ChallengeRequired(BankfeedError):
    """The server asked a security challenge where a session was expected.

    ``challenge`` is the :class:`bankfeed.Challenge` to answer (``None`` after unpickling, since a
    challenge is bound to its client); ``request_id`` and ``prompts`` survive pickling.
    """

    def __reduce__(self):
        fields = dict(self._fields, challenge=None)
        return (_rebuild, (type(self), self._text, fields))


class TooManyChallenges(BankfeedError):
    """The challenge loop reached its bound of rounds (``rounds``) without opening a session."""


class PendingTimeout(BankfeedError):
    """The server still answered 202 when the poll timeout ran out (``request_id``, ``waited`` in s)."""


class TransportError(BankfeedError):
    """The request did not get an HTTP answer (connection refused, reset, timed out)."""


class DecodeError(BankfeedError):
    """The server's answer could not be decoded; ``snippet`` holds the start of the body."""


class ProtocolError(BankfeedError):
    """The server answered with a status or shape the operation does not expect (a data call
    answering 203, a token call without a token, DeleteCard answering 202). ``status`` is the
    status that really came; ``request_id`` and the start of the body (``snippet``) are kept."""


class ApiError(BankfeedError):
    """The service answered with an error: ``code`` (e.g. ``"SESSION_NONEXISTENT"``), ``status``,
    ``message``, ``request_id`` and the whole ``body`` (a dict, or the text when it was not JSON)."""


class Unauthorized(ApiError):
    """``UNAUTHORIZED`` or ``ACCESS_DENIED``: a key, token or package does not allow the call."""


class InvalidLogin(ApiError):
    """``INVALID_LOGIN``, ``INVALID_USERNAME`` or ``INVALID_PASSWORD``: credentials or LoginId refused."""


class LoginDisabled(ApiError):
    """``DISABLED_LOGIN``, ``NEW_ACCOUNT``: the institution refuses this login until the user acts."""


class InvalidSecurityResponse(ApiError):
    """The server refused a challenge answer (``INVALID_SECURITY_RESPONSE``, ``UNKNOWN_CHALLENGE_KEY``,
    ``SECURITYRESPONSES_INCOMPLETE``, ``QUESTION_NOT_FOUND``, ...)."""


class SessionError(ApiError):
    """``SESSION_NONEXISTENT`` or ``SESSION_EXPIRED``: open a new session (authorize again)."""


class ConcurrentSession(ApiError):
    """``CARD_IN_USE``, ``CONCURRENT_SESSION`` or ``ALREADY_AUTHORIZED``."""


class RetryLater(ApiError):
    """``RETRY_LATER``: the institution is unavailable now; try again later."""


class RateLimited(ApiError):
    """``TOO_MANY_REQUESTS``: slow down."""


class InvalidRequest(ApiError):
    """``INVALID_REQUEST``: the service refused the request's shape or values."""


class InstitutionUnavailable(ApiError):
    """``DISABLED_INSTITUTION`` or ``METHOD_NOT_AVAILABLE``."""


class AggregationError(ApiError):
    """``AGGREGATION_ERROR``: the service failed while collecting data from the institution."""
