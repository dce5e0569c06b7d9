"""Command line: ``python -m bankfeed {demo,sandbox,users}``.

- ``demo``: a live login against an embedded sandbox, challenge by challenge, then investments.
- ``sandbox``: serve the sandbox on a port until Ctrl-C, for other programs to use.
- ``users``: the sandbox's test users and the challenges each one is asked.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

import bankfeed as bf
from bankfeed._answers import CannedAnswers

INSTITUTION = "FlinksCapital"
PASSWORD = "Everyday"


def describe_challenge(item: bf.SecurityChallenge) -> str:
    """One line for a security challenge: its type and prompt, then its choices (images counted)."""
    line = f"  [{item.type}] {item.prompt}"
    choices = item.choices
    if choices:
        if item.type == "ImageSelection":
            line += f"  ({len(choices)} images)"
        else:
            line += "  choices: " + ", ".join(choices)
    return line


def _walk(step: bf.Session | bf.Challenge, handler: CannedAnswers) -> tuple[bf.Session, int]:
    """Answers every 203 of ``step`` from ``handler``, printing the challenges (never the answers).

    Returns the session and the number of 203 answers met.
    """
    rounds = 0
    while isinstance(step, bf.Challenge):
        rounds += 1
        print(f"203: {len(step.challenges)} challenge(s), RequestId {step.request_id}")
        for item in step.challenges:
            print(describe_challenge(item))
        reply = handler(step)
        print(f"  answered {len(reply)} prompt(s)")
        step = step.answer(reply)
    return step, rounds


def demo(user: str) -> int:
    """Logs ``user`` in on a fresh sandbox step by step, then reads its investments."""
    with bf.Sandbox(pending_polls=2) as sb:
        known = {u["username"]: u for u in sb.users}
        if user not in known:
            print(f"unknown sandbox user {user!r}; see `python -m bankfeed users`", file=sys.stderr)
            return 2
        handler = bf.answers(known[user]["answers"])
        client = sb.client(poll_interval=0.2)
        print(f"sandbox on {sb.url}; live login of {user!r} at {INSTITUTION}")
        session, rounds = _walk(client.authorize(INSTITUTION, user, PASSWORD, save=True), handler)
        print(f"session open: request_id={session.request_id} login_id={session.login_id}")
        login_id = session.login_id
        if login_id is None:
            # A saved login always has one; without it there is nothing to read back.
            print("error: the sandbox opened a session without a LoginId", file=sys.stderr)
            return 1
        if rounds == 0 and known[user]["challenge_types"]:
            # A trusted-device user meets its challenge on a live login by saved connection.
            print("live login by saved connection")
            session, _ = _walk(client.authorize_saved(login_id), handler)
            print(f"session open: request_id={session.request_id} login_id={session.login_id}")
        cached = client.authorize_cached(login_id)
        print(f"cached session: request_id={cached.request_id} login_id={cached.login_id}")
        investments = client.investments(login_id)
        print(
            f"investments: {len(investments.accounts)} account(s), {len(investments.positions)} position(s), "
            f"{len(investments.transactions)} transaction(s), Value {investments.value}, Cash {investments.cash}"
        )
    return 0


def _stop_on_sigterm() -> None:
    """Makes SIGTERM stop the server as Ctrl-C does: closed cleanly, exit status 0."""
    import signal

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, interrupt)


def _faults(text: str) -> list[dict[str, Any]]:
    """``--faults``: a JSON list of fault objects (docs/sandbox.md#faults)."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not JSON: {exc}") from None
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise argparse.ArgumentTypeError("must be a JSON list of objects")
    return value


def sandbox(args: argparse.Namespace) -> int:
    """Serves a sandbox on ``args.host:args.port`` until Ctrl-C or SIGTERM.

    The first line printed is the URL line of ``serve_sandbox``; with ``--logins`` the LoginIds
    are written to ``--login-ids-file`` before it (docs/sandbox.md#many-logins).
    """
    from bankfeed import _native

    options: dict[str, Any] = {}
    for name in (
        "pending_polls",
        "pending_seconds",
        "customer_id",
        "seed",
        "investment_transactions",
        "banking_transactions",
        "logins",
        "faults",
    ):
        value = getattr(args, name)
        if value is not None:
            options[name] = value
    _stop_on_sigterm()
    try:
        _native.serve_sandbox(args.port, host=args.host, login_ids_file=args.login_ids_file, **options)
    except KeyboardInterrupt:
        print("stopped", flush=True)
    except OSError as exc:
        # A taken port, or a LoginIds file that cannot be written.
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


def users() -> int:
    """Prints the sandbox's test users: username, challenge types, description."""
    with bf.Sandbox() as sb:
        rows: list[tuple[str, str, str]] = [
            (u["username"], ", ".join(u["challenge_types"]) or "-", u["description"]) for u in sb.users
        ]
    header = ("username", "challenges", "description")
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(2)]
    for name, kinds, description in [header, *rows]:
        print(f"{name:<{widths[0]}}  {kinds:<{widths[1]}}  {description}")
    print(f"{'bulk_<n>':<{widths[0]}}  {'-':<{widths[1]}}  As greatday_nomfa, a login of its own per number n.")
    print(f"\ninstitution {INSTITUTION}, password {PASSWORD!r} for every user")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m bankfeed`` and of the ``bankfeed`` script."""
    # Not __doc__: it is None under python -OO.
    parser = argparse.ArgumentParser(prog="bankfeed", description="bankfeed's embedded sandbox: demo, sandbox, users.")
    commands = parser.add_subparsers(dest="command", required=True)

    run_demo = commands.add_parser("demo", help="a live login with challenges against a sandbox")
    run_demo.add_argument("--user", default="mfa_securid", help="sandbox user (default: mfa_securid)")

    serve = commands.add_parser(
        "sandbox",
        help="serve the sandbox until Ctrl-C or SIGTERM",
        description="Serves the sandbox until Ctrl-C or SIGTERM. The first line printed is "
        "'bankfeed sandbox on <url> (customer id <id>)'.",
    )
    serve.add_argument("--port", type=int, required=True, help="port to listen on (0: a free one)")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    serve.add_argument("--pending-polls", type=int, default=None, help="202 answers before each 200")
    serve.add_argument(
        "--pending-seconds", type=float, default=None, help="also answer 202 until this long after the first call"
    )
    serve.add_argument("--customer-id", default=None, help="customer id expected in every path")
    serve.add_argument("--seed", type=int, default=None, help="seeds the LoginIds and all data (default: 0)")
    serve.add_argument(
        "--investment-transactions", type=int, default=None, help="exactly this many investment trades per login"
    )
    serve.add_argument(
        "--banking-transactions", type=int, default=None, help="exactly this many banking transactions per login"
    )
    serve.add_argument("--logins", type=int, default=None, help="save this many bulk logins (bulk_00000, ...) at start")
    serve.add_argument(
        "--login-ids-file",
        default=None,
        metavar="PATH",
        help="write the saved bulk logins' LoginIds there, one a line, before the URL line",
    )
    serve.add_argument(
        "--faults", type=_faults, default=None, metavar="JSON", help="faults to inject: a JSON list of objects"
    )

    commands.add_parser("users", help="list the sandbox's test users")

    args = parser.parse_args(argv)
    try:
        if args.command == "demo":
            return demo(args.user)
        if args.command == "sandbox":
            return sandbox(args)
        return users()
    except bf.BankfeedError as exc:
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
