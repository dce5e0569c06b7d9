"""Exporting many logins to Parquet: ``bankfeed export``, ``bf.export``, and the same job written by hand
with aiohttp and pyarrow (BENCHMARKS.md).

Every login's Investments go to one Parquet dataset per table (``out/investments/<table>/``), from a
sandbox run as a separate process (``python -m bankfeed sandbox --logins N --pending-polls 1``: each
data call answers 202 once, then 200). The variants, each a fresh process of its own against a fresh
sandbox, in one run:

- ``command``: ``python -m bankfeed export --logins FILE --out DIR --quiet ...``;
- ``bf_export``: a script calling ``bf.export(client, login_ids, out)``;
- ``peer``: ``benches/peers/export_aiohttp.py``, the job written by hand (aiohttp, a flatten in Python,
  pyarrow's Parquet writer).

Each is measured from outside as a cron job pays for it: wall time, CPU (user + system of the whole
process, every thread, its start-up included, from ``wait4``) and peak RSS (``ru_maxrss``, which
starts at this harness's own resident size when the child is forked: the harness imports nothing
heavy, and prints its size). The figures are printed with their ratios to the peer's in the same run.
The outputs are checked afterwards: the same rows per table in every variant, the columns of
``bf.schema``.

Then the peak memory of ``bankfeed export`` alone at several sizes (``--memory-logins``), against the
smallest. And Dask with 2 workers against one process, once ``bf.export`` takes ``scheduler=``.

    python benches/export.py                                   # 10,000 logins, then memory at 1,000 / 10,000 / 100,000
    python benches/export.py --logins 2000 --memory-logins 1000,5000
    python benches/export.py --variants command,peer --no-memory --repeats 3
    # memory alone, two nights into the same export, with the transactions of accounts too:
    python benches/export.py --variants "" --memory-logins 1000,100000 --memory-what investments,accounts \
        --memory-nights 2
    # memory alone against an unreachable service (a loopback port nothing listens on): every
    # login but the first 20 listed as not tried, exit 5
    python benches/export.py --variants "" --memory-logins 1000,200000 --memory-outage

The peer needs aiohttp (``pip install aiohttp``). Run it against a release build (BENCHMARKS.md).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

# The sandbox process, the core plan and the pinned spawn are those of the sessions benchmark.
from sessions import Sandbox, core_plan, raise_fd_limit, sandbox_flags, spawn  # noqa: E402

VARIANTS = ("command", "bf_export", "peer")
#: Run only when named in --variants: ``fetch_only``, the bulk call alone with its results dropped
#: (what the export adds is the difference); ``dask``, ``bf.export(..., scheduler=...)`` on a
#: LocalCluster of 2 workers (needs ``dask[distributed]``).
EXTRA_VARIANTS = ("fetch_only", "dask")
PEER = HERE / "peers" / "export_aiohttp.py"
TABLES = ("accounts", "positions", "transactions", "securities")

#: ``bf.export`` in a script, as a user calls it.
BF_EXPORT = """
import sys
import bankfeed as bf
url, customer_id, ids_file, out, concurrency, poll_interval = sys.argv[1:7]
with open(ids_file) as file:
    login_ids = file.read().split()
with bf.Client(url, customer_id, poll_interval=float(poll_interval)) as client:
    report = bf.export(client, login_ids, out, concurrency=int(concurrency))
if not report.ok:
    raise SystemExit(f"not every login was written: {report!r}; the first failure: {report.failed[:1]}")
"""

#: The fetch alone: every login's Investments read into tables by the bulk call, and dropped.
FETCH_ONLY = """
import sys
import bankfeed as bf
import pyarrow.parquet
url, customer_id, ids_file, out, concurrency, poll_interval = sys.argv[1:7]
with open(ids_file) as file:
    login_ids = file.read().split()
with bf.Client(url, customer_id, poll_interval=float(poll_interval)) as client:
    with client.investments_many(login_ids, concurrency=int(concurrency)) as results:
        failed = [login_id for login_id, result in results if isinstance(result, BaseException)]
if failed:
    raise SystemExit(f"{len(failed)} logins failed")
"""

#: ``bf.export`` on a local Dask cluster of 2 worker processes. The workers' CPU counts in the
#: child's (``wait4`` adds the descendants it reaped); their peak RSS does not add up (the largest).
DASK_EXPORT = """
import sys
from dask.distributed import Client as Dask, LocalCluster
import bankfeed as bf
url, customer_id, ids_file, out, concurrency, poll_interval = sys.argv[1:7]
with open(ids_file) as file:
    login_ids = file.read().split()
with LocalCluster(n_workers=2, threads_per_worker=1) as cluster, Dask(cluster) as dask:
    with bf.Client(url, customer_id, poll_interval=float(poll_interval)) as client:
        report = bf.export(client, login_ids, out, concurrency=int(concurrency), scheduler=dask)
if not report.ok:
    raise SystemExit(f"not every login was written: {report!r}")
"""

#: Whether the installed bf.export runs on a cluster (``scheduler=``): told by a child.
HAS_SCHEDULER = (
    "import importlib.util, inspect, bankfeed as bf; "
    "print('scheduler' in inspect.signature(bf.export).parameters and bool(importlib.util.find_spec('distributed')))"
)

#: Run in a child after the variants: each output's rows per table, and whether its columns are
#: those of bf.schema. Printed as one JSON line.
CHECK = """
import json, sys
import pyarrow.dataset
import bankfeed as bf
found = {}
for out in sys.argv[1:]:
    tables = {}
    for table in ("accounts", "positions", "transactions", "securities"):
        data = pyarrow.dataset.dataset(f"{out}/investments/{table}").to_table()
        tables[table] = [data.num_rows, data.schema.equals(bf.schema("investments", table))]
    found[out] = tables
print(json.dumps(found))
"""

#: bankfeed's build, told in a child so that this harness never loads the extension (its resident
#: size is where every child's ru_maxrss starts).
BUILD = "import sys; sys.path.insert(0, sys.argv[1]); from sessions import bankfeed_build; print(bankfeed_build())"


@dataclass
class Run:
    """One variant's run: what it cost, or why there is no figure."""

    variant: str
    logins: int
    wall: float = float("nan")
    cpu: float = float("nan")
    peak_rss_mb: float = float("nan")
    server_cpu: float = float("nan")
    failed: str = ""

    @property
    def rate(self) -> float:
        """Logins per second of wall time."""
        return self.logins / self.wall

    @property
    def per_cpu_second(self) -> float:
        """Logins per CPU-second of the client."""
        return self.logins / self.cpu

    @property
    def cpu_ms(self) -> float:
        """Client CPU per login, in milliseconds."""
        return self.cpu / self.logins * 1e3


def command_of(
    variant: str, sandbox: Sandbox, ids_file: Path, out: Path, args: argparse.Namespace, what: str = "investments"
) -> list[str]:
    """The command line of ``variant`` for one run (``what``: the kinds of the ``command``)."""
    common = [sandbox.url, sandbox.customer_id, str(ids_file), str(out)]
    if variant == "command":
        return [
            sys.executable,
            "-m",
            "bankfeed",
            "export",
            "--logins",
            str(ids_file),
            "--out",
            str(out),
            "--base-url",
            sandbox.url,
            "--customer-id",
            sandbox.customer_id,
            "--poll-interval",
            str(args.poll_interval),
            "--concurrency",
            str(args.concurrency),
            "--what",
            what,
            "--quiet",
        ]
    if variant == "bf_export":
        return [sys.executable, "-c", BF_EXPORT, *common, str(args.concurrency), str(args.poll_interval)]
    if variant == "peer":
        return [sys.executable, str(PEER), *common, str(args.concurrency), str(args.poll_interval)]
    if variant == "fetch_only":
        return [sys.executable, "-c", FETCH_ONLY, *common, str(args.concurrency), str(args.poll_interval)]
    if variant == "dask":
        return [sys.executable, "-c", DASK_EXPORT, *common, str(args.concurrency), str(args.poll_interval)]
    raise ValueError(f"unknown variant {variant!r}")


def run_variant(
    variant: str, logins: int, args: argparse.Namespace, cpus: tuple[set[int] | None, set[int] | None], help_text: str
) -> tuple[Run, Path]:
    """A fresh sandbox with ``logins`` saved logins, ``variant`` run against it in a process of its
    own; its measurements and its output directory."""
    runs, out = run_nights(variant, logins, args, cpus, help_text)
    return runs[0], out


def run_nights(
    variant: str,
    logins: int,
    args: argparse.Namespace,
    cpus: tuple[set[int] | None, set[int] | None],
    help_text: str,
    *,
    nights: int = 1,
    what: str = "investments",
) -> tuple[list[Run], Path]:
    """A fresh sandbox with ``logins`` saved logins, ``variant`` run against it ``nights`` times
    into the same output (each night a process of its own: the next run of the same export, which
    reads what the earlier ones wrote); each night's measurements and the output directory."""
    server_cpus, client_cpus = cpus
    work = Path(args.workdir)
    ids_file = work / f"ids-{variant}-{logins}.txt"
    out = work / f"out-{variant}-{logins}"
    shutil.rmtree(out, ignore_errors=True)
    ids_file.unlink(missing_ok=True)
    runs = []
    sandbox = Sandbox(
        server_cpus, help_text, logins=logins, login_ids_file=str(ids_file), pending_polls=args.pending_polls
    )
    try:
        for _ in range(nights):
            run = Run(variant, logins)
            runs.append(run)
            server_before = sandbox.cpu_seconds()
            environment = {key: value for key, value in os.environ.items() if not key.startswith("BANKFEED_")}
            with tempfile.TemporaryFile("w+") as errors:
                start = time.perf_counter()
                process = spawn(
                    client_cpus,
                    command_of(variant, sandbox, ids_file, out, args, what),
                    stdout=subprocess.DEVNULL,
                    stderr=errors,
                    env=environment,
                )
                _, status, usage = os.wait4(process.pid, 0)
                run.wall = time.perf_counter() - start
                process.returncode = os.waitstatus_to_exitcode(status)
                if process.returncode != 0:
                    errors.seek(0)
                    lines = [line for line in errors.read().splitlines() if line.strip()]
                    run.failed = f"exit {process.returncode}: {lines[-1] if lines else 'no message'}"[:200]
            run.server_cpu = sandbox.cpu_seconds() - server_before
            run.cpu = usage.ru_utime + usage.ru_stime
            run.peak_rss_mb = usage.ru_maxrss / 1024
            if run.failed:
                break
    finally:
        sandbox.close()
    return runs, out


def check(outputs: dict[str, Path]) -> list[str]:
    """Problems with the outputs: a variant whose rows per table differ from the others', or whose
    columns are not those of ``bf.schema``."""
    done = subprocess.run(
        [sys.executable, "-c", CHECK, *map(str, outputs.values())], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        return [f"the check failed: {done.stderr.strip().splitlines()[-1:]}"]
    found = json.loads(done.stdout)
    problems = []
    counts = {variant: {table: found[str(out)][table][0] for table in TABLES} for variant, out in outputs.items()}
    first = next(iter(counts.values()))
    for variant, out in outputs.items():
        if counts[variant] != first:
            problems.append(f"{variant} wrote other rows: {counts[variant]} against {first}")
        wrong = [table for table in TABLES if not found[str(out)][table][1]]
        if wrong:
            problems.append(f"{variant}: the columns of {', '.join(wrong)} are not those of bf.schema")
    return problems


def ratio(value: float, against: float) -> str:
    return f"{value / against:.2f}" if against == against and against else "-"


def print_runs(runs: list[Run], peer: Run | None) -> None:
    print(
        "| variant | logins | wall s | logins/s | client CPU s | CPU ms/login | logins per CPU-s | peak RSS MB "
        "| server core % | logins per CPU-s / peer | logins/s / peer | peak RSS / peer |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for run in runs:
        if run.failed:
            print(f"| {run.variant} | {run.logins:,} | FAILED: {run.failed} |")
            continue
        base = peer if peer is not None and not peer.failed else None
        print(
            f"| {run.variant} | {run.logins:,} | {run.wall:.1f} | {run.rate:,.0f} | {run.cpu:.1f} | {run.cpu_ms:.2f} "
            f"| {run.per_cpu_second:,.0f} | {run.peak_rss_mb:.0f} | {100 * run.server_cpu / run.wall:.0f} "
            f"| {ratio(run.per_cpu_second, base.per_cpu_second) if base else '-'} "
            f"| {ratio(run.rate, base.rate) if base else '-'} "
            f"| {ratio(run.peak_rss_mb, base.peak_rss_mb) if base else '-'} |"
        )


def median_by_cpu(runs: list[Run]) -> Run:
    good = sorted((run for run in runs if not run.failed), key=lambda run: run.cpu)
    return good[len(good) // 2] if good else runs[0]


def compare(variants: list[str], args: argparse.Namespace, cpus: Any, help_text: str, record: dict[str, Any]) -> None:
    """The main comparison: every variant at ``--logins``, in turns, ``--repeats`` times."""
    turns: dict[str, list[Run]] = {name: [] for name in variants}
    outputs: dict[str, Path] = {}
    for _ in range(args.repeats):
        for variant in variants:  # in turns, so that the machine's load weighs on each alike
            run, out = run_variant(variant, args.logins, args, cpus, help_text)
            turns[variant].append(run)
            outputs[variant] = out
            record["runs"].append(asdict(run))
            print(f"  {variant}: {run.wall:.1f} s, {run.cpu:.1f} CPU s {run.failed}", flush=True)
    shown = [median_by_cpu(turns[name]) for name in variants]
    peer = next((run for run in shown if run.variant == "peer"), None)
    print(f"\n{args.logins:,} logins to Parquet (median of {args.repeats} by CPU):\n")
    print_runs(shown, peer)
    written = {name: out for name, out in outputs.items() if not turns[name][-1].failed and out.exists()}
    problems = check(written) if written else []
    print("\noutputs: " + ("; ".join(problems) or "the same rows in every variant, the columns of bf.schema"))
    if peer is not None and not peer.failed:
        for run in shown:
            if run.variant not in ("peer", "fetch_only") and not run.failed:
                times = run.per_cpu_second / peer.per_cpu_second
                verdict = "met" if times >= 5 else "NOT met"
                print(f"target: {run.variant} logins per CPU-s >= 5 x the peer's: {times:.2f} x, {verdict}")
    if not args.keep:
        for out in outputs.values():
            shutil.rmtree(out, ignore_errors=True)


#: The exit status of a run that wrote nothing because the service could not be reached
#: (docs/export.md#exit-status): what an outage row expects.
OUTAGE_STATUS = 5


def run_outage(logins: int, args: argparse.Namespace, cpus: tuple[set[int] | None, set[int] | None]) -> Run:
    """``bankfeed export`` of ``logins`` random LoginIds against a loopback port nothing listens on
    (bound, never listening): the first ``--max-consecutive-failures`` logins fail, the rest are
    listed as not tried (docs/export.md#an-unreachable-service). No sandbox: nothing answers."""
    _, client_cpus = cpus
    work = Path(args.workdir)
    ids_file = work / f"ids-outage-{logins}.txt"
    out = work / f"out-outage-{logins}"
    shutil.rmtree(out, ignore_errors=True)
    chosen = random.Random(logins)
    # A line at a time: this harness's resident size is where the child's peak starts (see above).
    with ids_file.open("w") as file:
        file.writelines(f"{uuid.UUID(int=chosen.getrandbits(128), version=4)}\n" for _ in range(logins))
    run = Run("outage", logins)
    environment = {key: value for key, value in os.environ.items() if not key.startswith("BANKFEED_")}
    environment.update(BANKFEED_API_KEY="k", BANKFEED_SECRET_KEY="s")
    with socket.socket() as holder, tempfile.TemporaryFile("w+") as errors:
        holder.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{holder.getsockname()[1]}"
        command = [sys.executable, "-m", "bankfeed", "export", "--logins", str(ids_file), "--out", str(out)]
        command += ["--base-url", url, "--customer-id", "43387ca6-0391-4c82-857d-70d95f087ecb"]
        command += ["--what", args.memory_what, "--quiet"]
        start = time.perf_counter()
        process = spawn(client_cpus, command, stdout=subprocess.DEVNULL, stderr=errors, env=environment)
        _, status, usage = os.wait4(process.pid, 0)
        run.wall = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
        if code != OUTAGE_STATUS:
            errors.seek(0)
            lines = [line for line in errors.read().splitlines() if line.strip()]
            run.failed = f"exit {code}, not {OUTAGE_STATUS}: {lines[-1] if lines else 'no message'}"[:200]
    run.cpu = usage.ru_utime + usage.ru_stime
    run.peak_rss_mb = usage.ru_maxrss / 1024
    if not args.keep:
        shutil.rmtree(out, ignore_errors=True)
    return run


def outage_rows(args: argparse.Namespace, cpus: Any, record: dict[str, Any]) -> None:
    """The peak memory of ``bankfeed export`` against an unreachable service at each of
    ``--memory-logins``, against the smallest: what a run keeps per login it lists as failed."""
    runs = []
    for size in [int(size) for size in args.memory_logins.split(",") if size]:
        run = run_outage(size, args, cpus)
        runs.append(run)
        record["memory"].append({**asdict(run), "outage": True, "what": args.memory_what})
        print(f"  outage at {size:,}: {run.peak_rss_mb:.0f} MB, {run.wall:.1f} s {run.failed}", flush=True)
    print(f"\nPeak memory of `bankfeed export --what {args.memory_what}` against an unreachable service:\n")
    print("| logins | peak RSS MB | / smallest | wall s |")
    print("|---|---|---|---|")
    smallest = runs[0] if runs and not runs[0].failed else None
    for run in runs:
        if run.failed:
            print(f"| {run.logins:,} | FAILED: {run.failed} |")
            continue
        against = smallest.peak_rss_mb if smallest is not None else float("nan")
        print(f"| {run.logins:,} | {run.peak_rss_mb:.0f} | {ratio(run.peak_rss_mb, against)} | {run.wall:.1f} |")
    good = [run for run in runs if not run.failed]
    if len(good) > 1:
        times = good[-1].peak_rss_mb / good[0].peak_rss_mb
        verdict = "met" if times <= 1.5 else "NOT met"
        print(
            f"target: peak memory at {good[-1].logins:,} within 1.5 x that at {good[0].logins:,}: {times:.2f} x, "
            f"{verdict}"
        )


def memory_rows(args: argparse.Namespace, cpus: Any, help_text: str, record: dict[str, Any]) -> None:
    """The peak memory of ``bankfeed export`` at each of ``--memory-logins``, against the smallest:
    of each of ``--memory-nights`` runs into the same export, night against night."""
    nights: list[list[Run]] = []
    for size in [int(size) for size in args.memory_logins.split(",") if size]:
        runs, out = run_nights("command", size, args, cpus, help_text, nights=args.memory_nights, what=args.memory_what)
        nights.append(runs)
        for night, run in enumerate(runs, 1):
            record["memory"].append({**asdict(run), "night": night, "what": args.memory_what})
            print(
                f"  command at {size:,}, night {night}: {run.peak_rss_mb:.0f} MB, {run.wall:.1f} s {run.failed}",
                flush=True,
            )
        if not args.keep:
            shutil.rmtree(out, ignore_errors=True)
    print(f"\nPeak memory of `bankfeed export --what {args.memory_what}` by size:\n")
    print("| logins | night | peak RSS MB | / smallest | wall s | logins/s | CPU ms/login |")
    print("|---|---|---|---|---|---|---|")
    for night in range(args.memory_nights):
        smallest = nights[0][night] if len(nights[0]) > night else None
        for runs in nights:
            if len(runs) <= night:
                continue
            run = runs[night]
            if run.failed:
                print(f"| {run.logins:,} | {night + 1} | FAILED: {run.failed} |")
                continue
            against = smallest.peak_rss_mb if smallest is not None and not smallest.failed else float("nan")
            print(
                f"| {run.logins:,} | {night + 1} | {run.peak_rss_mb:.0f} | {ratio(run.peak_rss_mb, against)} "
                f"| {run.wall:.1f} | {run.rate:,.0f} | {run.cpu_ms:.2f} |"
            )
    for night in range(args.memory_nights):
        good = [runs[night] for runs in nights if len(runs) > night and not runs[night].failed]
        if len(good) > 1:
            times = good[-1].peak_rss_mb / good[0].peak_rss_mb
            limit = 1.2 if good[-1].logins <= 100_000 else 1.5
            verdict = "met" if times <= limit else "NOT met"
            print(
                f"target: night {night + 1}, peak memory at {good[-1].logins:,} within {limit} x that at "
                f"{good[0].logins:,}: {times:.2f} x, {verdict}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--logins", type=int, default=10_000, help="logins of the main comparison (10,000)")
    parser.add_argument(
        "--variants", default=",".join(VARIANTS), help="comma list of " + ", ".join(VARIANTS + EXTRA_VARIANTS)
    )
    parser.add_argument("--concurrency", type=int, default=32, help="logins fetched at once, every variant (32)")
    parser.add_argument("--poll-interval", type=float, default=0.01, help="seconds between polls (0.01)")
    parser.add_argument("--pending-polls", type=int, default=1, help="202s before each data call's 200 (1)")
    parser.add_argument("--repeats", type=int, default=1, help="runs of each variant, in turns; the median CPU shown")
    parser.add_argument(
        "--memory-logins", default="1000,10000,100000", help="sizes of the memory rows (1000,10000,100000)"
    )
    parser.add_argument(
        "--memory-what", default="investments", help="the kinds of the memory rows, --what of the command (investments)"
    )
    parser.add_argument(
        "--memory-nights", type=int, default=1, help="runs into the same export at each size of the memory rows (1)"
    )
    parser.add_argument(
        "--memory-outage",
        action="store_true",
        help="the memory rows against an unreachable service: every login failed or not tried (exit 5)",
    )
    parser.add_argument("--no-memory", action="store_true", help="no memory rows")
    parser.add_argument("--workdir", default=None, help="where the outputs go (a temporary directory)")
    parser.add_argument("--keep", action="store_true", help="keep the outputs")
    parser.add_argument("--json", default=None, help="every measurement to this file")
    args = parser.parse_args()
    variants = [name for name in args.variants.split(",") if name]
    unknown = set(variants) - set(VARIANTS) - set(EXTRA_VARIANTS)
    if unknown:
        parser.error(f"--variants: unknown {', '.join(sorted(unknown))}")
    raise_fd_limit()
    temporary = None
    if args.workdir is None:
        temporary = tempfile.mkdtemp(prefix="bankfeed-export-bench-")
        args.workdir = temporary
    Path(args.workdir).mkdir(parents=True, exist_ok=True)
    cpus = core_plan()
    help_text = sandbox_flags()
    build = subprocess.run([sys.executable, "-c", BUILD, str(HERE)], capture_output=True, text=True, check=False)
    print(f"bankfeed: {build.stdout.strip() or build.stderr.strip()[-200:]}")
    print(
        f"sandbox on CPU {cpus[0]}, clients on CPU {cpus[1]}; poll interval {args.poll_interval} s, "
        f"{args.pending_polls} pending poll(s) per data call, concurrency {args.concurrency}"
    )
    scheduler = subprocess.run([sys.executable, "-c", HAS_SCHEDULER], capture_output=True, text=True, check=False)
    if "dask" in variants and scheduler.stdout.strip() != "True":
        variants.remove("dask")
        print(
            "dask: skipped: the installed bankfeed's bf.export takes no scheduler= (an older build), or "
            "distributed is not installed (pip install 'dask[distributed]')"
        )
    record: dict[str, Any] = {"args": vars(args), "runs": [], "memory": []}
    try:
        if variants:
            compare(variants, args, cpus, help_text, record)
        if not args.no_memory and args.memory_outage:
            outage_rows(args, cpus, record)
        elif not args.no_memory:
            memory_rows(args, cpus, help_text, record)
    finally:
        if temporary is not None and not args.keep:
            shutil.rmtree(temporary, ignore_errors=True)
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\n(this harness's own peak RSS, where each child's starts: {own:.0f} MB)")
    if args.json:
        Path(args.json).write_text(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
