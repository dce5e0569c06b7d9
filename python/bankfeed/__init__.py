"""bankfeed: a client for the v3 bank-data aggregation API, with an embedded sandbox.

The Rust core does the HTTP, the challenge sequencing and the polling; this package is a thin
layer over it. Start with a :class:`Sandbox` to try everything without the real service::

    import bankfeed as bf

    # Greatday asks three questions, one per round; bf.answers picks those a round asks.
    greatday = bf.answers({
        "What city were you born in?": "Montreal",
        "What is the best country on earth?": "Canada",
        "What shape do people like most?": "Triangle",
    })
    with bf.Sandbox() as sb:
        client = sb.client(poll_interval=0.05)
        step = client.authorize("FlinksCapital", "Greatday", "Everyday", save=True)
        while isinstance(step, bf.Challenge):
            print(step.prompts)
            step = step.answer(greatday(step))
        print(step.login_id)

``python -m bankfeed users`` lists the sandbox's users, and ``sb.users`` gives each one's answers.
"""

import logging as _logging
from typing import TYPE_CHECKING as _TYPE_CHECKING

from bankfeed._answers import CannedAnswers, answers
from bankfeed._combine import acombine
from bankfeed._export.kinds import schema
from bankfeed._export.latest import read_latest
from bankfeed._export.report import ExportReport
from bankfeed._export.run import aexport, export
from bankfeed._form import ChallengeForm
from bankfeed._native import (
    Accounts,
    AsyncChallenge,
    AsyncClient,
    AsyncSession,
    Attributes,
    Cassette,
    Challenge,
    Client,
    Combined,
    Connection,
    ConnectUrl,
    Investments,
    Sandbox,
    SecurityChallenge,
    Session,
    Statements,
    Table,
    __version__,
    cassette,
    check_cassette,
    combine,
    connect_url,
)
from bankfeed._remote_sandbox import RemoteSandbox
from bankfeed._terminal import TerminalHandler, ask_in_terminal
from bankfeed._type_aliases import (
    Answer,
    Answers,
    AsyncBulkResults,
    AsyncChallengeHandler,
    AsyncStep,
    BulkResults,
    ChallengeHandler,
    Days,
    IneligibleLogin,
    InstitutionLink,
    InstitutionName,
    RecordedRequest,
    SandboxUser,
    Step,
    SupportedInstitution,
)
from bankfeed._typed_answer import typed_answer
from bankfeed.errors import (
    AggregationError,
    ApiError,
    BankfeedError,
    CassetteError,
    ChallengeRequired,
    ClientClosed,
    ConcurrentSession,
    ConfigError,
    ConnectTimeout,
    DecodeError,
    InstitutionUnavailable,
    InvalidAnswer,
    InvalidLogin,
    InvalidRequest,
    InvalidSecurityResponse,
    LoginDisabled,
    PendingTimeout,
    ProtocolError,
    RateLimited,
    RetryLater,
    SessionError,
    TooManyChallenges,
    TransportError,
    Unauthorized,
)

# A library's records go where the application sends them, and nowhere when it configures no
# logging: without a handler of its own, Python's last-resort handler would print every warning
# to stderr, one line per failed login of a bulk call that hands its errors out
# (docs/logging.md).
_logging.getLogger(__name__).addHandler(_logging.NullHandler())

# A literal list: type checkers read it as the export list (an `__all__ +=` they do not follow).
__all__ = [
    "Accounts",
    "AggregationError",
    "Answer",
    "Answers",
    "ApiError",
    "AsyncBulkResults",
    "AsyncChallenge",
    "AsyncChallengeHandler",
    "AsyncClient",
    "AsyncSession",
    "AsyncStep",
    "Attributes",
    "BankfeedError",
    "BulkResults",
    "CannedAnswers",
    "Cassette",
    "CassetteError",
    "Challenge",
    "ChallengeForm",
    "ChallengeHandler",
    "ChallengeRequired",
    "Client",
    "ClientClosed",
    "Combined",
    "ConcurrentSession",
    "ConfigError",
    "ConnectTimeout",
    "ConnectUrl",
    "ConnectWidget",
    "Connection",
    "Days",
    "DecodeError",
    "ExportReport",
    "IneligibleLogin",
    "InstitutionLink",
    "InstitutionName",
    "InstitutionUnavailable",
    "InvalidAnswer",
    "InvalidLogin",
    "InvalidRequest",
    "InvalidSecurityResponse",
    "Investments",
    "LoginDisabled",
    "PendingTimeout",
    "ProtocolError",
    "RateLimited",
    "RecordedRequest",
    "RemoteSandbox",
    "RetryLater",
    "Sandbox",
    "SandboxUser",
    "SecurityChallenge",
    "Session",
    "SessionError",
    "Statements",
    "Step",
    "SupportedInstitution",
    "Table",
    "TerminalHandler",
    "TooManyChallenges",
    "TransportError",
    "Unauthorized",
    "__version__",
    "acombine",
    "aexport",
    "answers",
    "ask_in_terminal",
    "cassette",
    "check_cassette",
    "combine",
    "connect_url",
    "export",
    "read_latest",
    "schema",
    "typed_answer",
]

if _TYPE_CHECKING:
    from bankfeed._widget import ConnectWidget


def __getattr__(name: str) -> object:
    """``bf.ConnectWidget`` is imported on first use: it needs the ``notebook`` extra
    (anywidget), which bankfeed works without."""
    if name == "ConnectWidget":
        from bankfeed._widget import ConnectWidget

        return ConnectWidget
    raise AttributeError(f"module 'bankfeed' has no attribute {name!r}")
