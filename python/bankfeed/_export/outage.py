"""When an export stops asking: after ``max_consecutive_failures`` logins in a row failed at the
start of a run because the service could not be reached or refused the keys, before any login
came through (docs/export.md#an-unreachable-service).

Against an unreachable service every login fails the same way, each after its retries: asking
the other thousands only adds minutes and a thousand identical lines to the log. Once one login
has come through the service is there, and a failure after that is a login's own: the breaker is
then off for the rest of the run, so a run that began well is never cut short.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from bankfeed.errors import (
    ApiError,
    DecodeError,
    ProtocolError,
    TransportError,
    Unauthorized,
    _config_error,
)

__all__ = ["DEFAULT_MAX_CONSECUTIVE_FAILURES", "NotTried", "StartBreaker", "check_max_consecutive_failures"]

#: ``max_consecutive_failures`` by default: more than a start's worth of logins at the default
#: concurrency (32) failing together would not be, and few enough that an unreachable service
#: ends the run within the first round of logins.
DEFAULT_MAX_CONSECUTIVE_FAILURES = 20

#: The operation that carries no login: its failure is the service's or the keys', never a login's.
_TOKEN_CALL = "GenerateAuthorizeToken"


def check_max_consecutive_failures(value: object) -> int:
    """``max_consecutive_failures``: a count of at least 0 (0: never stop)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"max_consecutive_failures must be an int, not {type(value).__name__}")
    if value < 0:
        raise _config_error("max_consecutive_failures", f"must be at least 0 (0: never stop), got {value}")
    return value


def is_outage(error: BaseException) -> bool:
    """Whether ``error`` says nothing about its login, only that the service was not there: no
    answer (``TransportError``), an answer that is not the service's (``ProtocolError``,
    ``DecodeError``: a wrong ``base_url``, a proxy's page), keys refused (``Unauthorized``), or
    any refusal of the token call, which carries no login."""
    if isinstance(error, TransportError | ProtocolError | DecodeError | Unauthorized):
        return True
    return isinstance(error, ApiError) and getattr(error, "operation", None) == _TOKEN_CALL


class NotTried(Exception):
    """The failure a login not tried is listed with in ``_failures.jsonl`` (``"error":
    "NotTried"``): the run stopped before asking for it. A resume tries it."""

    operation = None
    request_id = None
    code = None


@dataclass
class StartBreaker:
    """Counts the failures at the start of a run; :attr:`tripped` once ``limit`` came in a row
    with no login through (``limit`` 0: never)."""

    limit: int
    #: Until a login comes through (or fails in a way of its own).
    armed: bool = True
    failures: int = 0
    tripped: bool = False
    #: The failures counted, by class and operation: what the line says.
    seen: Counter[str] = field(default_factory=Counter)

    def observe(self, result: object) -> bool:
        """Takes one login's result; whether the run must stop now."""
        if not self.armed or self.tripped:
            return self.tripped
        if isinstance(result, BaseException) and is_outage(result):
            self.failures += 1
            operation = getattr(result, "operation", None)
            self.seen[f"{type(result).__name__}" + (f" in {operation}" if operation else "")] += 1
            self.tripped = self.limit > 0 and self.failures >= self.limit
        else:
            # The service answered for this login: whatever comes next is a login's own.
            self.armed = False
        return self.tripped

    @property
    def outage(self) -> bool:
        """Whether every login the run tried failed as an outage (and at least one did)."""
        return self.armed and self.failures > 0

    def describe(self) -> str:
        """The failures counted, for the one line: ``20 TransportError in GenerateAuthorizeToken``."""
        return ", ".join(f"{count} {what}" for what, count in self.seen.most_common())

    def merge(self, other: StartBreaker) -> None:
        """Adds what the breaker of a cluster run's partition saw: the run as a whole wrote
        nothing only if no partition did."""
        self.armed = self.armed and other.armed
        self.failures += other.failures
        self.tripped = self.tripped or other.tripped
        self.seen.update(other.seen)

    def not_tried(self) -> NotTried:
        """The failure each login left is listed with."""
        return NotTried(
            f"not tried: the run stopped after the first {self.failures} logins it tried all failed "
            f"({self.describe()}): the service could not be reached or refused the keys; a resume tries it"
        )
