"""Command line: ``python -m bankfeed {demo,sandbox,users}``.

- ``demo``: a live login against an embedded sandbox, challenge by challenge, then investments.
- ``sandbox``: serve the sandbox on a port until Ctrl-C, for other programs to use.
- ``users``: the sandbox's test users and the challenges each one is asked.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

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


def sandbox(port: int, host: str, pending_polls: int | None, customer_id: str | None) -> int:
    """Serves a sandbox on ``host:port`` until Ctrl-C."""
    from bankfeed import _native

    # serve_sandbox prints the address it bound (the real port, when asked for port 0).
    options: dict[str, int | str] = {}
    if pending_polls is not None:
        options["pending_polls"] = pending_polls
    if customer_id is not None:
        options["customer_id"] = customer_id
    try:
        _native.serve_sandbox(port, host=host, **options)
    except KeyboardInterrupt:
        print("stopped")
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
    print(f"\ninstitution {INSTITUTION}, password {PASSWORD!r} for every user")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m bankfeed`` and of the ``bankfeed`` script."""
    # Not __doc__: it is None under python -OO.
    parser = argparse.ArgumentParser(prog="bankfeed", description="bankfeed's embedded sandbox: demo, sandbox, users.")
    commands = parser.add_subparsers(dest="command", required=True)

    run_demo = commands.add_parser("demo", help="a live login with challenges against a sandbox")
    run_demo.add_argument("--user", default="mfa_securid", help="sandbox user (default: mfa_securid)")

    serve = commands.add_parser("sandbox", help="serve the sandbox until Ctrl-C")
    serve.add_argument("--port", type=int, required=True, help="port to listen on (0: a free one)")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    serve.add_argument("--pending-polls", type=int, default=None, help="202 answers before each 200")
    serve.add_argument("--customer-id", default=None, help="customer id expected in every path")

    commands.add_parser("users", help="list the sandbox's test users")

    args = parser.parse_args(argv)
    try:
        if args.command == "demo":
            return demo(args.user)
        if args.command == "sandbox":
            return sandbox(args.port, args.host, args.pending_polls, args.customer_id)
        return users()
    except bf.BankfeedError as exc:
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
