"""What goes wrong, and what each exception tells you.

Every exception is a ``bf.BankfeedError``. Service errors (``bf.ApiError`` and its subclasses) keep
``code``, ``status``, ``message``, ``request_id`` and the whole ``body``; the others carry what
their situation needs (``waited``, ``prompt`` and ``rule``, ``challenge``, ``snippet``, ...).
Every exception pickles with its fields, and none carries a password, an answer or a key. A
``bf.PendingTimeout`` is resumed with its RequestId rather than started over, and
``client.close()`` ends every call of a client with ``bf.ClientClosed``.

Run it with ``python examples/handling_errors.py``.
"""

from __future__ import annotations

import pickle
import socket
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import bankfeed as bf

INSTITUTION = "FlinksCapital"
PASSWORD = "Everyday"
GREATDAY = {
    "What city were you born in?": "Montreal",
    "What is the best country on earth?": "Canada",
    "What shape do people like most?": "Triangle",
}


def next_step(exc: bf.BankfeedError) -> str:
    """What an application does about an error: the kind of decision the classes exist for."""
    if isinstance(exc, (bf.RateLimited, bf.RetryLater)):
        return "retry later" if exc.retry_after is None else f"retry in {exc.retry_after} s"
    if isinstance(exc, bf.ConcurrentSession):
        return "wait for the other session on this login to end"
    if isinstance(exc, bf.AggregationError):
        return f"report RequestId {exc.request_id} to the provider"
    if isinstance(exc, bf.InstitutionUnavailable):
        return f"{exc.code}: not available for this institution or customer"
    if isinstance(exc, (bf.InvalidLogin, bf.LoginDisabled)):
        return "ask the end user to check their credentials at the institution"
    if isinstance(exc, bf.InvalidSecurityResponse):
        return "ask the end user to answer again"
    if isinstance(exc, bf.SessionError):
        return "open a new session"
    if isinstance(exc, (bf.Unauthorized, bf.InvalidRequest)):
        return f"fix the request or the keys (HTTP {exc.status} {exc.code})"
    if isinstance(exc, bf.ApiError):
        return f"HTTP {exc.status} {exc.code}: {exc.message}"
    if isinstance(exc, bf.PendingTimeout):
        if exc.request_id is None:
            return f"call again later (waited {exc.waited:.1f} s)"
        return f"resume later with request_id={exc.request_id!r} (waited {exc.waited:.1f} s)"
    if isinstance(exc, bf.ClientClosed):
        return f"{exc.operation} ended: its client was closed; make a new client to go on"
    if isinstance(exc, bf.ProtocolError):
        return f"{exc.operation} answered HTTP {exc.status} unexpectedly; body starts {exc.snippet!r}"
    if isinstance(exc, bf.DecodeError):
        return f"undecodable answer; body starts {exc.snippet!r}"
    if isinstance(exc, bf.TransportError):
        return "check the network and the base_url"
    if isinstance(exc, bf.ChallengeRequired):
        return f"answer the challenge: {exc.prompts}"
    if isinstance(exc, bf.TooManyChallenges):
        return f"gave up after {exc.rounds} round(s)"
    if isinstance(exc, bf.InvalidAnswer):
        return f"fix the answer to {exc.prompt!r}"
    if isinstance(exc, bf.ConfigError):
        return f"fix the option {exc.field}"
    return str(exc)


def report(label: str, exc: bf.BankfeedError) -> None:
    # Exceptions cross process pools: pickling keeps their class and fields.
    copy = pickle.loads(pickle.dumps(exc))
    assert type(copy) is type(exc) and str(copy) == str(exc)
    print(f"{label}: {type(exc).__name__} -> {next_step(exc)}")


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def service_errors(client: bf.Client) -> None:
    try:
        client.authorize_cached(str(uuid.uuid4()))
    except bf.InvalidLogin as exc:
        print(f"InvalidLogin: code {exc.code}, status {exc.status}, RequestId {exc.request_id}")
        print(f"  body {exc.body}")
        report("unknown LoginId", exc)

    for username in ("test_disabled_account", "test_service_unavailable"):
        try:
            client.authorize(INSTITUTION, username, PASSWORD)
        except bf.LoginDisabled as exc:
            report(f"{username} ({exc.code})", exc)
        except bf.RetryLater as exc:
            report(f"{username} ({exc.code}, {exc.message})", exc)

    step = client.authorize(INSTITUTION, "Greatday", PASSWORD)
    if isinstance(step, bf.Challenge):
        try:
            step.answer({step.prompts[0]: "Paris"})
        except bf.InvalidSecurityResponse as exc:
            report(f"a wrong answer ({exc.code}, RequestId {exc.request_id})", exc)

    session = client.authorize(INSTITUTION, "greatday_nomfa", PASSWORD, save=True)
    if not isinstance(session, bf.Session) or session.login_id is None:
        raise SystemExit("expected a saved session at once")
    login_id = session.login_id
    # The default sandbox customer has use-case packages only (as income, lending): GetAllAttributes
    # (package "all") and a custom set of attributes need a Tier 2 package (bf.Sandbox(tier2=True)).
    for package in ("all", "business_analysis"):
        try:
            client.attributes(login_id, package=package)
        except (bf.Unauthorized, bf.InstitutionUnavailable) as exc:
            report(f"package {package!r} ({exc.status} {exc.code})", exc)
    try:
        client.attributes(login_id, {"Card": ["count_nsf"]})
    except bf.Unauthorized as exc:
        report(f"a custom set without Tier 2 ({exc.status} {exc.code})", exc)

    # A login connected a moment ago cannot be deleted yet: CARD_IN_USE (bf.ConcurrentSession)
    # for a short while. Wait and try again.
    for attempt in range(50):
        try:
            client.delete_login(login_id)
            break
        except bf.ConcurrentSession as exc:
            if attempt == 0:
                report(f"DeleteCard right after the login ({exc.code})", exc)
            time.sleep(0.2)
    try:
        session.accounts_summary()
    except bf.SessionError as exc:
        report(f"a session of a deleted login ({exc.code})", exc)
    except bf.ApiError as exc:
        report("a session of a deleted login", exc)


def client_errors(sb: bf.Sandbox, client: bf.Client) -> None:
    try:
        sb.client(poll_interval=-1)
    except bf.ConfigError as exc:
        report(f"a bad option ({exc.field} {exc.rule})", exc)

    step = client.authorize(INSTITUTION, "mfa_multiple_choice", PASSWORD)
    if isinstance(step, bf.Challenge):
        try:
            step.answer({step.prompts[0]: "Nowhere Street"})
        except bf.InvalidAnswer as exc:
            report(f"an answer not among the choices (prompt {exc.prompt!r})", exc)

    try:
        client.login(INSTITUTION, "Greatday", PASSWORD)
    except bf.ChallengeRequired as exc:
        challenge = exc.challenge
        print(f"ChallengeRequired: {exc.prompts}, RequestId {exc.request_id}")
        if challenge is not None:
            answered = challenge.answer({prompt: GREATDAY[prompt] for prompt in challenge.prompts})
            print(f"  answered from the exception: {type(answered).__name__}")
        report("a login without a handler", exc)

    strict = sb.client(poll_interval=0.01, max_challenge_rounds=1)
    try:
        strict.login(INSTITUTION, "Greatday", PASSWORD, on_challenge=bf.answers(GREATDAY))
    except bf.TooManyChallenges as exc:
        report(f"max_challenge_rounds=1 (RequestId {exc.request_id})", exc)

    offline = bf.Client(base_url=f"http://127.0.0.1:{closed_port()}", customer_id=sb.customer_id, max_retries=0)
    try:
        offline.authorize_cached(str(uuid.uuid4()))
    except bf.TransportError as exc:
        report("nothing listening", exc)

    try:
        bf.Accounts.from_json(b'{"Accounts": [')
    except bf.DecodeError as exc:
        report("a truncated payload", exc)


def slow_service() -> None:
    # The service keeps processing a RequestId after the client stops polling it: resume it
    # (request_id=, or client.session for the banking calls) instead of starting over.
    with bf.Sandbox(pending_seconds=1.0, logins=2) as slow:
        client = slow.client(poll_interval=0.05, poll_timeout=0.3)
        login_id = slow.login_ids[0]
        request_id: str | None = None
        for attempt in range(1, 30):
            try:
                inv = client.investments(login_id, request_id=request_id)
                break
            except bf.PendingTimeout as exc:
                if attempt == 1:
                    print(f"PendingTimeout: RequestId {exc.request_id}, waited {exc.waited:.2f} s")
                    print(f"  {exc}")
                    report("a slow service", exc)
                # None when the service named no RequestId: then the next call starts over.
                request_id = exc.request_id
        else:
            raise SystemExit("still pending")
        same = inv.request_id == request_id
        print(f"  resumed the same RequestId: {same}, after {attempt} calls: {len(inv.positions)} positions")

        other = slow.login_ids[1]
        try:
            client.authorize_cached(other).accounts_detail(days="Days365")
        except bf.PendingTimeout as exc:
            if exc.request_id is None:
                raise SystemExit("expected a RequestId") from exc
            time.sleep(1.0)
            # The session of that RequestId, made without a call; the same call on it resumes.
            detail = client.session(exc.request_id, login_id=other).accounts_detail(days="Days365")
            print(f"  {exc.operation} resumed by client.session: {len(detail.accounts)} accounts")


def closing() -> None:
    # A client shared by threads: close() cancels every call in flight, wherever it waits.
    with bf.Sandbox(pending_seconds=30, logins=4) as slow:
        client = slow.client(poll_interval=0.05)
        closed: list[bf.ClientClosed] = []
        with ThreadPoolExecutor(max_workers=4) as pool:
            calls = [pool.submit(client.investments, login_id) for login_id in slow.login_ids]
            time.sleep(0.3)
            client.close()  # at shutdown, or from a signal handler; `with bf.Client(...)` does it too
            for call in calls:
                try:
                    call.result()
                except bf.ClientClosed as exc:
                    closed.append(exc)
        report(f"close() with {len(closed)} calls in flight ({closed[0].operation})", closed[0])
        try:
            client.authorize_cached(slow.login_ids[0])
        except bf.ClientClosed as exc:
            report("a call after close()", exc)


def main() -> None:
    with bf.Sandbox() as sb:
        client = sb.client(poll_interval=0.01, poll_timeout=10)
        service_errors(client)
        client_errors(sb, client)
    slow_service()
    closing()
    try:
        raise bf.BankfeedError("every exception of bankfeed is one of these")
    except bf.BankfeedError as exc:
        report("the base class", exc)
    print("errors: done")


if __name__ == "__main__":
    main()
