"""bankfeed: a client for the v3 bank-data aggregation API, with an embedded sandbox.

The Rust core does the HTTP, the challenge sequencing and the polling; this package is a thin
layer over it. Start with a :class:`Sandbox` to try everything without the real service::

    import bankfeed as bf

    with bf.Sandbox() as sb:
        client = sb.client(poll_interval=0.05)
        step = client.authorize("FlinksCapital", "Greatday", "Everyday", save=True)
        while isinstance(step, bf.Challenge):
            print([c.prompt for c in step.challenges])
            step = step.answer({"What city were you born in?": "Montreal"})  # ...
"""

from bankfeed._answers import answers
from bankfeed._native import (
    Accounts,
    Attributes,
    Challenge,
    Client,
    Investments,
    Sandbox,
    SecurityChallenge,
    Session,
    Statements,
    Table,
    __version__,
)
from bankfeed import errors
from bankfeed.errors import (
    AggregationError,
    ApiError,
    BankfeedError,
    ChallengeRequired,
    ConcurrentSession,
    ConfigError,
    DecodeError,
    InstitutionUnavailable,
    InvalidAnswer,
    InvalidLogin,
    InvalidRequest,
    InvalidSecurityResponse,
    LoginDisabled,
    PendingTimeout,
    RateLimited,
    RetryLater,
    SessionError,
    TooManyChallenges,
    TransportError,
    Unauthorized,
)

__all__ = [
    "Client",
    "Session",
    "Challenge",
    "SecurityChallenge",
    "Sandbox",
    "Table",
    "Investments",
    "Attributes",
    "Accounts",
    "Statements",
    "answers",
    "__version__",
]
# Every exception, as errors.py lists them (the form type checkers read).
__all__ += errors.__all__
