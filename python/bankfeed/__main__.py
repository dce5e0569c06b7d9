"""Command line: ``python -m bankfeed {demo,sandbox,users,export,cassette}`` (also the ``bankfeed`` command).

- ``demo``: a live login against an embedded sandbox, challenge by challenge, then investments
  (``--user`` takes any sandbox user, a ``bulk_<n>`` one included).
- ``sandbox``: serve the sandbox on a port until Ctrl-C, for other programs to use; with
  ``--replay PATH``, a cassette instead (docs/cassettes.md#replay-for-any-client).
- ``users``: the sandbox's test users and the challenges each one is asked (``--json``: with
  their answers, as ``Sandbox.users`` gives them).
- ``export``: every login's data into Parquet datasets (docs/export.md#the-command).
- ``cassette check``: committed cassettes checked for secrets (docs/cassettes.md#checking-committed-cassettes).
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import re
import sys
import textwrap
from collections.abc import Callable, Sequence
from typing import Any

import bankfeed as bf
from bankfeed import _cassette_cli as cassette_cli
from bankfeed._answers import CannedAnswers
from bankfeed._arguments import CommandParser, unknown_arguments
from bankfeed._export import cli as export_cli
from bankfeed._signals import stop_on_signals

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


#: A bulk user's name (docs/sandbox.md#many-logins): no challenge, a login of its own per number.
_BULK_USER = re.compile(r"bulk_[0-9]+", re.IGNORECASE)


def demo(user: str) -> int:
    """Logs ``user`` in on a fresh sandbox step by step, then reads its investments."""
    with bf.Sandbox(pending_polls=2) as sb:
        known = {u["username"]: u for u in sb.users}
        bulk = _BULK_USER.fullmatch(user.strip()) is not None
        if user not in known and not bulk:
            print(f"unknown sandbox user {user!r}; see `python -m bankfeed users`", file=sys.stderr)
            return 2
        challenged = not bulk and bool(known[user]["challenge_types"])
        handler = bf.answers({} if bulk else known[user]["answers"])
        client = sb.client(poll_interval=0.2)
        print(f"sandbox on {sb.url}; live login of {user!r} at {INSTITUTION}")
        session, rounds = _walk(client.authorize(INSTITUTION, user, PASSWORD, save=True), handler)
        print(f"session open: request_id={session.request_id} login_id={session.login_id}")
        login_id = session.login_id
        if login_id is None:
            # A saved login always has one; without it there is nothing to read back.
            print("error: the sandbox opened a session without a LoginId", file=sys.stderr)
            return 1
        if rounds == 0 and challenged:
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


#: The variables ``--keys-from-env`` reads: the ones ``bf.Client`` reads its keys from.
_KEY_VARIABLES = {"api_key": "BANKFEED_API_KEY", "secret_key": "BANKFEED_SECRET_KEY"}


def _names(text: str) -> list[str]:
    """``--pending-operations``: operation names separated by commas (none: an empty list)."""
    return [name.strip() for name in text.split(",") if name.strip()]


def _faults(text: str) -> list[dict[str, Any]]:
    """``--faults``: a JSON list of fault objects (docs/sandbox.md#faults)."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not JSON: {exc}") from None
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise argparse.ArgumentTypeError("must be a JSON list of objects")
    return value


#: The help of the flag of each option of ``bf.Sandbox``; the default the signature gives is added.
_SANDBOX_HELP = {
    "port": "port to listen on; 0 picks a free one, which the first line prints",
    "host": "address to bind",
    "pending_polls": "202 answers before each 200",
    "pending_seconds": "also answer 202 until this long after the first call",
    "slow_pending_polls": "202 answers before each 200 for test_pending and test_dispatched",
    "loading_polls": "400 SESSION_LOADING answers before the 202s",
    "pending_operations": "the data operations that answer 202 first, comma-separated (default: "
    "GetAccountsDetail,Investments,Attributes; the summary and statements answer 200 at once, as recorded)",
    "async_links": "the link of a banking 202: template (the service's {Endpoint}Async) or concrete "
    "(the operation's own ...Async/<RequestId>)",
    "cached_challenges": "ask a cached Authorize a security question first: never, always, or per_user "
    "(the users the users table names)",
    "customer_id": "customer id expected in every path (default: the public test customer's)",
    "seed": "seeds the LoginIds and all data",
    "investment_transactions": "exactly this many investment trades per login",
    "banking_transactions": "exactly this many banking transactions per login",
    "tier2": "the customer has a Tier 2 package: GetAllAttributes and custom attribute sets answer",
    "investments": "Investments is not enabled for the customer: the widget's productType=investment "
    "shows the banking list",
    "auth": "ask for no keys at all: no token for Authorize, no x-api-key for the data operations "
    "(for old clients that send none)",
    "token_ttl": "seconds an Authorize token lives after GenerateAuthorizeToken mints it",
    "logins": "save this many bulk logins (bulk_00000, ...) at start",
    "faults": "faults to inject: a JSON list of objects",
    "session_idle_seconds": "a RequestId expires after this long without a request",
    "session_processing_seconds": "the same while its data is processing",
    "card_in_use_seconds": "DeleteCard answers CARD_IN_USE this long after an Authorize connected a login new "
    "(0: never)",
    "max_wrong_answers": "the wrong answer that reaches this count ends the session (NO_RETRY)",
    "admin": "serve the admin API under /_sandbox/, with a token printed at start",
    "request_log_bytes": "the request log keeps about this many bytes, dropping the oldest entries first",
    "as_of": "the sandbox's today, from 2026-11-20 (the default) on: the data ends on it; the admin API's "
    "POST /_sandbox/clock moves it on",
    "replay": "serve this cassette instead of the imitation: each request is answered with its next "
    "matching recorded answer, in recorded order, for any client (docs/cassettes.md#replay-for-any-client)",
    "record": "record into this cassette (written anew) every request, forwarded to --upstream, and its answer, "
    "secrets redacted (docs/cassettes.md#recording-any-client)",
    "upstream": "the server --record forwards to, as a client's base URL (https://toolbox-api.private.fin.ag)",
    "allow_live_record": "let --record record an --upstream that is neither loopback nor the public test "
    "instance: a live Authorize can count against a bank's lockout",
}

#: How a flag's text becomes its option's value where the default (None) does not say.
_SANDBOX_TYPES: dict[str, Callable[[str], Any]] = {
    "customer_id": str,
    "investment_transactions": int,
    "banking_transactions": int,
    "pending_operations": _names,
    "faults": _faults,
    "as_of": str,
    "replay": str,
    "record": str,
    "upstream": str,
}

#: The metavar of a flag whose value is not named well by the option's name.
_SANDBOX_METAVARS = {
    "faults": "JSON",
    "pending_operations": "NAMES",
    "as_of": "YYYY-MM-DD",
    "replay": "PATH",
    "record": "PATH",
    "upstream": "URL",
}

#: Options of ``bf.Sandbox`` that are no flag: the keys come only from the environment
#: (``--keys-from-env``), never the command line, which any user of the machine can read.
_NOT_FLAGS = frozenset(_KEY_VARIABLES)


def _sandbox_flags() -> dict[str, dict[str, Any]]:
    """The flags of ``bankfeed sandbox``: one per option of ``bf.Sandbox``, read from its signature
    (as the pytest plugin reads its marker's options), as ``add_argument``'s keyword arguments by
    option name. Each defaults to None, so that only the flags given reach ``bf.Sandbox``."""
    flags: dict[str, dict[str, Any]] = {}
    for name, parameter in inspect.signature(bf.Sandbox).parameters.items():
        if name in _NOT_FLAGS:
            continue
        default = parameter.default
        text = _SANDBOX_HELP.get(name, f"bf.Sandbox's {name}")
        flag: dict[str, Any] = {"default": None}
        if default is True:
            # An option on by default has a flag that turns it off: --no-auth.
            flag.update(action="store_const", const=False, dest=name)
        elif isinstance(default, bool):
            flag["action"] = "store_true"
        else:
            flag["type"] = _SANDBOX_TYPES.get(name, type(default))
            if name in _SANDBOX_METAVARS:
                flag["metavar"] = _SANDBOX_METAVARS[name]
            if default is not None:
                text += f" (default: {default})"
        flags[name] = {**flag, "help": text}
    return flags


def _flag_name(name: str, flag: dict[str, Any]) -> str:
    """The flag of option ``name``: ``--no-NAME`` for an option on by default (``--no-auth``)."""
    prefix = "--no-" if flag.get("const") is False else "--"
    return prefix + name.replace("_", "-")


def sandbox(args: argparse.Namespace) -> int:
    """Serves a sandbox on ``args.host:args.port`` until Ctrl-C or SIGTERM.

    The first line printed is the URL line of ``serve_sandbox``; with ``--logins`` the LoginIds
    are written to ``--login-ids-file`` before it (docs/sandbox.md#many-logins).
    """
    from bankfeed import _native

    given = {name: getattr(args, name) for name in _sandbox_flags()}
    options: dict[str, Any] = {name: value for name, value in given.items() if value is not None}
    if args.keys_from_env and options.get("auth") is False:
        print("error: --keys-from-env asks for keys and --no-auth for none: give one of them", file=sys.stderr)
        return 2
    if args.keys_from_env:
        # From the environment, never the command line, which any user of the machine can read.
        keys = {option: os.environ.get(variable) for option, variable in _KEY_VARIABLES.items()}
        if not any(keys.values()):
            states = [
                f"{variable} is {'not set' if keys[option] is None else 'empty'}"
                for option, variable in _KEY_VARIABLES.items()
            ]
            print(f"error: --keys-from-env needs a key in one of them: {', '.join(states)}", file=sys.stderr)
            return 2
        # Exactly the environment's keys: one whose variable is unset is not asked for (rather than
        # the public test instance's), so a client run in the same environment authenticates.
        options.update({option: key or None for option, key in keys.items()})
    # Without --port, bf.Sandbox's own default: a free port, which the URL line names.
    options.setdefault("port", inspect.signature(bf.Sandbox).parameters["port"].default)
    stop_on_signals()
    try:
        _native.serve_sandbox(login_ids_file=args.login_ids_file, **options)
    except bf.ConfigError as exc:
        # Named as the user wrote it: the flag, or for a key the variable it came from (never the
        # key itself), rather than the Python option behind it.
        if exc.field in _KEY_VARIABLES and args.keys_from_env:
            where = f"{_KEY_VARIABLES[exc.field]} (--keys-from-env)"
        elif exc.field in options or exc.field == "allow_live_record":
            # The consent a recording of a remote --upstream needs is named though not given.
            where = _flag_name(exc.field, _sandbox_flags()[exc.field])
        else:
            raise
        print(f"error: {where}: {exc.rule}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("stopped", flush=True)
    except OSError as exc:
        # A taken port, or a LoginIds file that cannot be written.
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


#: The width the command's tables fit: a terminal of 100 columns shows them without wrapping.
WIDTH = 100


def _counted(kinds: Sequence[str]) -> str:
    """Challenge types in order, a run of one type counted (``QuestionAndAnswer x3``, with a
    multiplication sign for the x)."""
    runs: list[tuple[str, int]] = []
    for kind in kinds:
        if runs and runs[-1][0] == kind:
            runs[-1] = (kind, runs[-1][1] + 1)
        else:
            runs.append((kind, 1))
    return ", ".join(kind if count == 1 else f"{kind} \u00d7{count}" for kind, count in runs)


def users(as_json: bool = False) -> int:
    """Prints the sandbox's test users: username, challenge types, description, each cell wrapped
    so that no line is wider than :data:`WIDTH`; with ``as_json``, ``Sandbox.users`` as JSON (a
    list of ``bf.SandboxUser``, answers and passwords included: they are the sandbox's test data)."""
    with bf.Sandbox() as sb:
        every: list[bf.SandboxUser] = sb.users
    if as_json:
        print(json.dumps(every, indent=2, ensure_ascii=False))
        return 0
    rows: list[tuple[str, str, str]] = [
        (u["username"], _counted(u["challenge_types"]) or "-", u["description"]) for u in every
    ]
    rows.append(("bulk_<n>", "-", "As greatday_nomfa, a login of its own per number n."))
    header = ("username", "challenges", "description")
    name_width = max(len(row[0]) for row in [header, *rows])
    kinds_width = max(len(part) for row in rows for part in row[1].split(", "))
    text_width = WIDTH - name_width - kinds_width - 4
    for name, kinds, description in [header, *rows]:
        kinds_lines = textwrap.wrap(kinds, kinds_width, break_long_words=True) or [""]
        text_lines = textwrap.wrap(description, text_width) or [""]
        for i in range(max(len(kinds_lines), len(text_lines))):
            first = name if i == 0 else ""
            kind = kinds_lines[i] if i < len(kinds_lines) else ""
            text = text_lines[i] if i < len(text_lines) else ""
            print(f"{first:<{name_width}}  {kind:<{kinds_width}}  {text}".rstrip())
    print(f"\ninstitution {INSTITUTION}, password {PASSWORD!r} for every user")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m bankfeed`` and of the ``bankfeed`` script."""
    # Not __doc__: it is None under python -OO.
    parser = CommandParser(
        prog="bankfeed",
        description="bankfeed: export, the embedded sandbox (demo, sandbox, users), and cassettes (cassette check).",
    )
    parser.add_argument("--version", action="version", version=f"bankfeed {bf.__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    run_demo = commands.add_parser("demo", help="a live login with challenges against a sandbox")
    run_demo.add_argument("--user", default="mfa_securid", help="sandbox user (default: mfa_securid)")

    serve = commands.add_parser(
        "sandbox",
        help="serve the sandbox until Ctrl-C or SIGTERM",
        description="Serves the sandbox until Ctrl-C or SIGTERM. The first line printed is "
        "'bankfeed sandbox on <url> (customer id <id>)'; the second says which keys it asks for "
        "(the public test instance's by default) and that --no-auth turns them off; with --replay or --record, "
        "the cassette it serves instead.",
    )
    for name, flag in _sandbox_flags().items():
        serve.add_argument(_flag_name(name, flag), **flag)
    serve.add_argument(
        "--keys-from-env",
        action="store_true",
        help="require the keys in BANKFEED_API_KEY and BANKFEED_SECRET_KEY (each one that is set), "
        "the variables bf.Client reads",
    )
    serve.add_argument(
        "--login-ids-file",
        default=None,
        metavar="PATH",
        help="write the saved bulk logins' LoginIds there, one a line, before the URL line",
    )

    listing = commands.add_parser("users", help="list the sandbox's test users")
    listing.add_argument(
        "--json",
        action="store_true",
        help="as JSON: each user's username, password, description, challenge types and answers",
    )
    export_cli.add_parser(commands)
    cassette_cli.add_parser(commands)

    args, extra = parser.parse_known_args(argv)
    if extra:
        commands.choices[args.command].error(unknown_arguments(extra))
    if args.command == "sandbox" and args.login_ids_file is not None and not args.logins:
        # Otherwise the file is written empty, and a job reading it fetches nothing.
        serve.error("--login-ids-file needs --logins N with N > 0: only the saved bulk logins have LoginIds to write")
    try:
        if args.command == "demo":
            return demo(args.user)
        if args.command == "sandbox":
            return sandbox(args)
        if args.command == "export":
            return export_cli.run(args)
        if args.command == "cassette":
            return cassette_cli.run(args)
        return users(args.json)
    except bf.BankfeedError as exc:
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # `python -m bankfeed users | head` closes our stdout early: that is the reader's choice, not
        # an error worth a traceback. Python flushes stdout again at exit, so point it at devnull first.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
