"""``bankfeed export`` (and ``python -m bankfeed export``): ``bf.export`` from the command line
(docs/export.md#the-command).

Exit status (docs/export.md#exit-status): 0 when every login was written, 1 when some failed and
the rest were written, 2 for a usage or configuration error, 3 when the output could not be
written (a full disk), 4 when the run stopped on an error of its own (a bug, a lost cluster), 5
when nothing was written because the service could not be reached or refused the keys
(``outage.py``), 130 after Ctrl-C (or SIGTERM), once what was fetched is written and the manifest
says where the run stopped. Every status but 0 and 1 says why on one line of stderr, with no traceback but for 4, so
that a cron job's monitoring tells "some logins failed" from the rest. The keys come only
from ``BANKFEED_API_KEY`` and ``BANKFEED_SECRET_KEY``, never from the command line, which every
user of the machine can read.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import logging
import os
import sys
import traceback
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import IO, Any

from bankfeed._export import location, unknown
from bankfeed._export.formulas import CSV_FORMULAS
from bankfeed._export.logins import LoginIdList, unique
from bankfeed._export.ondisk.layout import FAILURES
from bankfeed._export.options import ExportOptions
from bankfeed._export.outage import DEFAULT_MAX_CONSECUTIVE_FAILURES
from bankfeed._export.reference import resolve
from bankfeed._export.report import ExportReport
from bankfeed._export.run import _run
from bankfeed._export.usage import in_flags
from bankfeed._signals import stop_on_signals
from bankfeed.errors import _config_error

__all__ = ["add_parser", "run"]

#: The flags of the ``bf.Client`` options: flag, option, type, help. Keys are not among them.
_CLIENT_FLAGS: list[tuple[str, str, Any, str]] = [
    ("--base-url", "base_url", str, "the service's root (default: BANKFEED_BASE_URL; none: an embedded sandbox)"),
    ("--customer-id", "customer_id", str, "the customer id (default: BANKFEED_CUSTOMER_ID)"),
    ("--investments-base-url", "investments_base_url", str, "the Investments host (default: the base URL)"),
    ("--timeout", "timeout", float, "seconds per request (default: 240)"),
    ("--poll-interval", "poll_interval", float, "seconds between two polls of a pending answer (default: 10)"),
    ("--poll-timeout", "poll_timeout", float, "seconds an operation may stay pending (default: 1800)"),
    ("--max-retries", "max_retries", int, "retries of a transient failure (default: 2)"),
    ("--max-challenge-rounds", "max_challenge_rounds", int, "challenge rounds of one login (default: 10)"),
    ("--deadline", "deadline", float, "seconds one login's whole flow may take (default: none)"),
    ("--max-body-bytes", "max_body_bytes", int, "largest answer read (default: 128 MiB)"),
    ("--max-connections", "max_connections", int, "requests in flight at once (default: 100)"),
    ("--proxy", "proxy", str, 'a proxy URL, or "environment" (the default: HTTPS_PROXY, NO_PROXY, ...)'),
]


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """Adds ``export`` to the subcommands of the ``bankfeed`` command."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "export",
        help="fetch many logins' data into Parquet datasets",
        description="Fetches every login's data and writes one dataset per table under --out "
        "(<kind>/<table>/part-*.parquet), with _failures.jsonl and _manifest.json. Keys come from "
        "BANKFEED_API_KEY and BANKFEED_SECRET_KEY only. Exit status: 0 all written, 1 some failed, "
        "2 usage or configuration error, 3 output not written (a full disk), 4 the run failed, 5 nothing written: "
        "the service could not be reached or refused the keys, 130 interrupted.",
    )
    parser.add_argument("login_ids", nargs="*", metavar="LOGIN_ID", help="LoginIds to export")
    parser.add_argument(
        "--logins",
        metavar="FILE",
        help="a file of LoginIds: one a line, or a CSV with a login_id column; - for standard input",
    )
    parser.add_argument("--out", required=True, metavar="DIR", help="the output directory (or an fsspec URL)")
    parser.add_argument(
        "--what",
        default="investments",
        metavar="LIST",
        help="comma list of investments, accounts, attributes:<package> or attributes:<query.json> "
        "(default: investments)",
    )
    parser.add_argument(
        "--days",
        choices=("90", "365"),
        help="days of transactions of accounts, with accounts in --what (default: the service's)",
    )
    parser.add_argument("--format", choices=("parquet", "csv"), default=None, help="parquet (default) or csv")
    parser.add_argument(
        "--money",
        choices=("float", "decimal"),
        default=None,
        help="how amounts, balances, values, prices and quantities are written: float (float64) or decimal (exact "
        "decimal128 of the payload's digits); fixed by the export's first run (default: the export's, float for a "
        "new one)",
    )
    parser.add_argument(
        "--csv-formulas",
        choices=CSV_FORMULAS,
        default="escape",
        help="with --format csv: escape (the default) writes a text cell starting with =, +, -, @, a tab or a "
        "carriage return with a leading ' so that no spreadsheet runs it as a formula; raw writes it as it came",
    )
    parser.add_argument(
        "--keep-raw",
        action="store_true",
        help="also keep each login's payload of each kind, as JSON text, in the table _raw/<kind>",
    )
    parser.add_argument("--concurrency", type=int, default=32, metavar="N", help="logins fetched at once (default: 32)")
    parser.add_argument(
        "--batch-logins",
        type=int,
        default=1000,
        metavar="N",
        help="logins per part file, at most (default: 1000; a batch is also written every 5 s)",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="go on with the last run of the export in --out (one that was stopped, or had failures); without it, "
        "a run into an existing export is its next run",
    )
    parser.add_argument(
        "--full-refresh",
        action="store_true",
        help="fetch every login's whole history of transactions again and start it over, rather than only what "
        "is new since the export's last run",
    )
    parser.add_argument(
        "--list-runs",
        action="store_true",
        help="print the runs of the export in --out, one a line (run, date, status, logins, rows), and exit",
    )
    parser.add_argument(
        "--max-consecutive-failures",
        type=int,
        default=DEFAULT_MAX_CONSECUTIVE_FAILURES,
        metavar="N",
        help="stop asking once the first N logins tried all failed because the service could not be reached or "
        f"refused the keys, list the rest as not tried and exit 5 (default: {DEFAULT_MAX_CONSECUTIVE_FAILURES}; "
        "0: never stop)",
    )
    parser.add_argument(
        "--wait-lock",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="while another run writes --out, wait up to this long for it to end (default: 0, exit 2 at once; "
        "inf: as long as it takes)",
    )
    parser.add_argument(
        "--allow-shared-out",
        action="store_true",
        help="write to an --out that another user owns, or that every user can write in without the sticky bit "
        "(refused by default: another user could plant links there)",
    )
    parser.add_argument(
        "--on-challenge",
        metavar="MODULE:NAME",
        help="the handler that answers a login's security questions, imported from MODULE (the current "
        "directory first): e.g. myjob.answers:on_challenge, a function of the challenge or bf.answers({...}) "
        "built from your secret store; answers never go on the command line (default: none, nothing answered)",
    )
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run on a Dask cluster: the scheduler's address, tcp://HOST:8786 (needs bankfeed[dask]; --out must be "
        "a path every worker shares, or an fsspec URL)",
    )
    parser.add_argument(
        "--partition-size",
        type=int,
        default=None,
        metavar="N",
        help="with --scheduler: logins per task on a worker (default: 1000)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress and no summary")
    parser.add_argument(
        "--log-level",
        choices=("debug", "info", "warning", "error"),
        help="bankfeed's log records at this level and above on stderr (docs/logging.md): warning shows "
        "each retry given up and each operation still pending at its time-out; default: none",
    )
    parser.add_argument(
        "--sandbox-logins",
        type=int,
        default=100,
        metavar="N",
        help="without a base URL: saved logins of the embedded sandbox exported (default: 100)",
    )
    client = parser.add_argument_group("client options (the BANKFEED_* variables fill the rest)")
    for flag, option, kind, text in _CLIENT_FLAGS:
        metavar = {int: "N", float: "SECONDS"}.get(kind) or ("URL" if "url" in option or option == "proxy" else "ID")
        client.add_argument(flag, dest=option, type=kind, default=None, metavar=metavar, help=text)
    client.add_argument(
        "--allow-insecure-http", action="store_true", default=None, help="send keys over http:// to a remote host"
    )
    return parser


def _read_logins(source: str) -> Iterator[str]:
    """LoginIds from a file (``-``: standard input): one a line (blank lines and ``#`` comments
    skipped), or a CSV whose header has a ``login_id`` column. A first line with commas makes the
    file a CSV, which must then have that column: its rows read as LoginIds would each fail. A
    CSV that cannot be read (a field longer than the csv module takes) is a ``ConfigError``
    naming ``logins`` and the line, never the field's text."""
    where = "standard input" if source == "-" else source
    try:
        yield from _logins_in(source, where)
    except csv.Error as exc:
        raise _config_error("logins", f"{where} cannot be read as CSV: {_csv_problem(exc)}") from None


def _csv_problem(error: csv.Error) -> str:
    """What is wrong in a CSV, as the csv module says, in the words of a LoginId file."""
    if "field larger than field limit" in str(error):
        return f"a field is longer than {csv.field_size_limit():,} characters, which no LoginId is"
    return str(error)


def _logins_in(source: str, where: str) -> Iterator[str]:
    """:func:`_read_logins`, but for what the csv module raises."""
    if source == "-":
        yield from _logins_of(_pieces(sys.stdin), where)
        return
    with open(source, encoding="utf-8", errors="surrogateescape", newline="") as file:
        yield from _logins_of(_pieces(file), where)


def _pieces(file: IO[str]) -> Iterator[str]:
    """The text of ``file`` in pieces of about a megabyte, each cut just after a newline (the last
    as the file ends), the byte order mark Excel's "CSV UTF-8" starts a file with left out: the
    lines of the pieces are those of the whole, which is never held at once (a file of 1,000,000
    LoginIds is 37 MB, and a list of its lines three times that: BENCHMARKS.md, export)."""
    rest, first = "", True
    while True:
        try:
            chunk = file.read(1 << 20)
        except UnicodeDecodeError as exc:
            problem = f"standard input is not UTF-8 text: {exc.reason} at byte {exc.start}"
            raise _config_error("logins", problem) from None
        if not chunk:
            break
        if first:
            chunk, first = chunk.removeprefix("\ufeff"), False
        text = rest + chunk
        cut = text.rfind("\n") + 1
        rest = text[cut:]
        if cut:
            yield text[:cut]
    if rest:
        yield rest


def _csv_lines(pieces: Iterable[str]) -> Iterator[str]:
    """The lines of ``pieces`` as ``io.StringIO`` gives them to the csv module: cut at each
    newline, which each keeps."""
    for piece in pieces:
        *whole, last = piece.split("\n")
        for line in whole:
            yield line + "\n"
        if last:
            yield last


def _logins_of(pieces: Iterator[str], where: str) -> Iterator[str]:
    """The LoginIds of a file read as ``pieces`` (:func:`_pieces`)."""
    head: list[str] = []
    first = ""
    for piece in pieces:
        head.append(piece)
        first = next((line for line in piece.splitlines() if line.strip() and not line.lstrip().startswith("#")), "")
        if first:
            break
    text = itertools.chain(head, pieces)
    header = [name.strip().lower() for name in next(csv.reader([first]), [])]
    if "login_id" not in header and "," in first:
        shown = ", ".join(repr(name) for name in header[:8]) + (", ..." if len(header) > 8 else "")
        raise _config_error(
            "logins", f"{where} is a CSV (its first line has commas) without a login_id column in its header: {shown}"
        )
    if "login_id" in header:
        reader = csv.DictReader(_csv_lines(text))
        column = next(name for name in reader.fieldnames or [] if name.strip().lower() == "login_id")
        try:
            for row in reader:
                value = (row.get(column) or "").strip()
                if value:
                    yield value
        except csv.Error as exc:
            # The line that failed is not counted yet in the reader's count of lines read.
            failed_at = reader.line_num + 1
            problem = f"{where} cannot be read as CSV at line {failed_at}: {_csv_problem(exc)}"
            raise _config_error("logins", problem) from None
        return
    for piece in text:
        for line in piece.splitlines():
            value = line.strip()
            if value and not value.startswith("#"):
                yield value


#: The options with no flag: the keys, which only their variables give (see the module's docstring).
_KEY_VARIABLES = {"api_key": "BANKFEED_API_KEY", "secret_key": "BANKFEED_SECRET_KEY"}


def _flag_of(field: str) -> str:
    """Where the user gave what a ``ConfigError`` names: a flag, or a key's variable."""
    return _KEY_VARIABLES.get(field) or "--" + field.replace("_", "-")


def _summary(report: ExportReport, out: str) -> str:
    """What the person at the terminal reads at the end; ``out`` as given, shown as
    ``location.shown`` shows it."""
    import bankfeed as bf

    # A login counts as written once it is in every kind asked (ExportReport says so); with more
    # than one kind, the line says it, since the rows below may come from logins not yet in all.
    kinds = {table.split("/", 1)[0] for table in report.written}
    lines = [
        f"written{' in every kind' if len(kinds) > 1 else ''}: {report.logins_written} logins"
        + (f" ({report.logins_skipped} already written before)" if report.logins_skipped else ""),
    ]
    if report.failed_count:
        # Counted over every failure, not only those the report keeps as exceptions.
        classes = Counter(report.failed_by_class)
        by_class = ", ".join(f"{name} {count}" for name, count in classes.most_common())
        # A login that failed in two kinds is two failures: the classes count failures.
        failures = "" if report.failed_count == report.logins_failed else f"{report.failed_count} failures: "
        lines.append(
            f"failed: {report.logins_failed} logins ({failures}{by_class}); listed in "
            f"{os.path.join(location.shown(out), '_failures.jsonl')}; --resume tries them again (a pending one "
            "polls its RequestId where it stood)"
        )
    if report.logins_not_tried:
        lines.append(
            f"not tried: {report.logins_not_tried} logins (a partition whose first logins all failed because the "
            "service could not be reached stopped asking); listed as NotTried with the failures; --resume tries them"
        )
    if len(report.kinds) > 1:
        # Kinds named apart: the logins above count each login once, whatever its kinds.
        by_kind = (
            f"{kind} {counts.get('fetched', 0):,}" + (f" ({counts['failed']:,} failed)" if counts.get("failed") else "")
            for kind, counts in report.kinds.items()
        )
        lines.append("fetched by kind: " + ", ".join(by_kind))
    asked = len({login for login, error in report.failed if isinstance(error, bf.ChallengeRequired)})
    if len(report.failed) < report.failed_count:
        # More failures than the report keeps: counted by class (a login asked in two kinds twice).
        asked = report.failed_by_class.get("ChallengeRequired", 0)
    if asked:
        # The one failure a rerun alone cannot fix: someone must answer (docs/export.md#logins-asked-a-question).
        lines.append(
            f"asked a security question: {asked} logins; --on-challenge MODULE:NAME answers them with their "
            "users' answers, or the users reconnect through the widget"
        )
    for table, rows in report.written.items():
        lines.append(f"  {table}: {rows:,} rows")
    lines.extend(unknown.summary_lines(report.unknown_fields))
    stopped = " (interrupted: run again with --resume to go on)" if report.interrupted else ""
    lines.append(f"time: {report.elapsed:.1f} s{stopped}")
    return "\n".join(lines)


def _outage_line(report: ExportReport, out: str) -> str:
    """Exit status 5's one line: what failed, what was not tried, where they are listed, what to do."""
    listed = os.path.join(location.shown(out), FAILURES)
    tried = report.logins_failed
    if report.logins_not_tried:
        what = (
            f"the first {tried} logins tried all failed ({report.outage}), so the run stopped asking: "
            f"{report.logins_not_tried} of the {tried + report.logins_not_tried} logins not tried"
        )
    elif tried == 1:
        what = f"the one login tried failed ({report.outage})"
    else:
        what = f"all {tried} logins tried failed ({report.outage})"
    return (
        f"error: the service could not be reached or refused the keys: {what}; nothing was written; listed in "
        f"{listed}; check --base-url, the network and the keys, then --resume tries them"
    )


def _settle_process() -> None:
    """Sets up the command's own process, before anything loads numpy or allocates through Arrow
    (measured in BENCHMARKS.md, export). ``bf.export`` leaves a caller's process as it is: these
    are choices for a whole process, which only the command owns."""
    # numpy's OpenBLAS starts a thread per core when numpy is imported (pyarrow imports it), and
    # those threads spin for a while waiting for linear algebra that an export never does: about
    # 0.1 s of CPU a run. A value the user set is kept.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    try:
        import pyarrow
    except ImportError:
        return  # CSV without pyarrow: no Arrow memory to place
    # The part files' encoding allocates and frees tens of MB a batch. Through malloc, which the
    # rest of the process allocates with, rather than mimalloc, pyarrow's default pool, the
    # export's peak is 15 to 35 MB lower for the same CPU.
    if os.environ.get("ARROW_DEFAULT_MEMORY_POOL") is None:
        pyarrow.set_memory_pool(pyarrow.system_memory_pool())


def _failed(error: Exception, out: str) -> int:
    """Exit status 4: the run stopped on an error of its own rather than a login's (a failure
    inside bankfeed or a library, a cluster lost), told apart from 1, some logins failed. A
    traceback only for what is no error of bankfeed's, for a report of it; neither shows what
    ``location.shown`` hides of ``out`` (a library's message may quote the URL it was given)."""
    import bankfeed as bf

    if not isinstance(error, bf.BankfeedError):
        for text in traceback.format_exception(error):
            print(location.scrubbed(text, out), end="", file=sys.stderr)
    print(f"error: the run stopped: {type(error).__name__}: {location.scrubbed(str(error), out)}", file=sys.stderr)
    return 4


def _list_runs(out: str) -> int:
    """``--list-runs``: the export's runs, oldest first (docs/export.md#runs); 2 when ``out``
    holds no export or its journal is damaged."""
    import bankfeed as bf
    from bankfeed._export.runs import list_runs

    try:
        runs = list_runs(out)
    except bf.ConfigError as exc:
        print(f"error: {_flag_of(exc.field)}: {exc.rule}", file=sys.stderr)
        return 2
    for summary in runs:
        print(summary.line())
    return 0


def run(args: argparse.Namespace) -> int:
    """Runs ``bankfeed export`` with the parsed ``args``; the exit status."""
    import bankfeed as bf

    if args.list_runs:
        return _list_runs(args.out)
    if args.partition_size is not None and args.scheduler is None:
        print(
            "error: --partition-size: splits the logins into tasks of a Dask cluster; give --scheduler too",
            file=sys.stderr,
        )
        return 2
    on_challenge: Any = None
    if args.on_challenge is not None:
        # Imported now, before anything is read or sent: a handler that cannot be is a usage error.
        try:
            on_challenge = resolve(args.on_challenge)
        except bf.ConfigError as exc:
            print(f"error: {_flag_of(exc.field)}: {in_flags(exc.rule)}", file=sys.stderr)
            return 2
    if args.log_level is not None:
        # The command's own process: its records go to stderr, beside the progress line, as a
        # cron job's log keeps them. No record holds a secret (docs/logging.md).
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        logger = logging.getLogger("bankfeed")
        logger.addHandler(handler)
        logger.setLevel(args.log_level.upper())
    _settle_process()
    options = {option: getattr(args, option) for _, option, _, _ in _CLIENT_FLAGS if getattr(args, option) is not None}
    if args.allow_insecure_http:
        options["allow_insecure_http"] = True
    # Compact and each once, since they are held for the whole run (a file of 100,000 LoginIds).
    try:
        from_file = _read_logins(args.logins) if args.logins is not None else iter(())
        given = LoginIdList(unique(itertools.chain(args.login_ids, from_file)))
    except OSError as exc:
        print(f"error: --logins: {exc.strerror or exc}: {args.logins}", file=sys.stderr)
        return 2
    except bf.ConfigError as exc:
        print(f"error: {_flag_of(exc.field)}: {in_flags(exc.rule)}", file=sys.stderr)
        return 2
    sandbox: bf.Sandbox | None = None
    writing = False
    stop_on_signals()
    try:
        # Every argument checked before the embedded sandbox starts: a usage error is told at once.
        export_options = ExportOptions.of(
            what=args.what,
            format=args.format or "parquet",
            concurrency=args.concurrency,
            resume=args.resume,
            wait_lock=args.wait_lock,
            allow_shared_out=args.allow_shared_out,
            progress=not args.quiet,
            days=args.days,
            batch_logins=args.batch_logins,
            scheduler=args.scheduler,
            partition_size=1000 if args.partition_size is None else args.partition_size,
            on_challenge=on_challenge,
            csv_formulas=args.csv_formulas,
            money=args.money,
            max_consecutive_failures=args.max_consecutive_failures,
            full_refresh=args.full_refresh,
            keep_raw=args.keep_raw,
        )
        if "base_url" not in options and not os.environ.get("BANKFEED_BASE_URL"):
            # No service named anywhere: a newcomer's first try, on an embedded sandbox.
            if args.sandbox_logins < 1:
                print("error: --sandbox-logins: must be at least 1 without a base URL", file=sys.stderr)
                return 2
            sandbox = bf.Sandbox(logins=args.sandbox_logins)
            if not args.quiet:
                print(
                    "no base URL (--base-url or BANKFEED_BASE_URL): exporting from an embedded sandbox at "
                    f"{sandbox.url} with {args.sandbox_logins} saved logins",
                    file=sys.stderr,
                )
            client = sandbox.client(**{k: v for k, v in options.items() if k != "customer_id"})
            login_ids: Iterable[str] = given or sandbox.login_ids
        else:
            client = bf.Client(**options)
            login_ids = given
        if not login_ids:
            print("error: no LoginIds: give them as arguments or with --logins FILE", file=sys.stderr)
            return 2
        # From here an OSError with an error number is the output's (the sandbox's came before).
        writing = True
        report = _run(client, login_ids, args.out, export_options, raise_interrupt=False)
    except bf.ConfigError as exc:
        print(f"error: {_flag_of(exc.field)}: {in_flags(exc.rule)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        # Stopped before the run began (while the sandbox started, say): nothing was written.
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        raise  # stderr closed under the progress line: the command's own way out (bankfeed.__main__)
    except OSError as exc:
        if exc.errno is None or not writing:
            return _failed(exc, args.out)
        # The output failed under the run (a full disk, a quota, a directory made read-only):
        # what was committed is complete, and a resume goes on from it (docs/export.md#exit-status).
        print(
            f"error: --out: cannot be written: {location.described(exc, args.out)}: {location.shown(args.out)}: the "
            "run stopped; the files written are complete, and --resume goes on once the output can be written",
            file=sys.stderr,
        )
        return 3
    except Exception as exc:
        return _failed(exc, args.out)
    finally:
        if sandbox is not None:
            sandbox.close()
    if report.outage is not None and not report.interrupted:
        # One line, as for every status but 0 and 1: the summary would only repeat it.
        print(_outage_line(report, args.out), file=sys.stderr)
        return 5
    if not args.quiet:
        print(_summary(report, args.out))
    if report.interrupted:
        return 130
    return 0 if report.logins_failed == 0 and report.logins_not_tried == 0 else 1
