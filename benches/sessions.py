"""Sessions: bankfeed against aiohttp, httpx, requests and plain reqwest (BENCHMARKS.md).

One session is a cached Authorize, then Investments polled through its 202s until its 200
(docs/protocol.md#authorize, docs/protocol.md#investments). The sandbox runs as a separate process
(``python -m bankfeed sandbox``), pinned to one core; every variant runs in a fresh child process pinned
to another, so that the CPU time (user + system, every thread) and the peak memory measured are the
client's own. A fresh sandbox serves each run, so no run inherits another's sessions.

Variants: ``bankfeed_async`` (``bf.AsyncClient``, ``asyncio.gather`` over ``investments`` under a
semaphore), ``bankfeed_many`` (``Client.investments_many``), ``bankfeed_threads`` (one sync
``bf.Client`` shared by a thread pool), ``aiohttp``, ``httpx``, ``requests`` (benches/peers/) and
``floor`` (benches/peers/floor.rs, built with ``cargo build --release --example sessions_floor``).

Two more measurements: the client CPU while 1,000 sessions wait 5 seconds each on a pending
operation (as % of one core), and the peak memory of 10,000 sessions pending at once.

    python3 benches/sessions.py                         # everything: N=2000 at concurrency 1,16,64,256
    python3 benches/sessions.py --sessions 200 --concurrency 16,64 --variants bankfeed_threads,aiohttp
    python3 benches/sessions.py --no-hold --no-memory   # the main table only

Run it against a release build of the extension (BENCHMARKS.md); it says which build it found.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import importlib.util
import itertools
import json
import math
import os
import re
import resource
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PEERS = HERE / "peers"

VARIANTS = ("bankfeed_async", "bankfeed_many", "bankfeed_threads", "aiohttp", "httpx", "requests", "floor")
#: Run only when named in --variants.
EXTRA_VARIANTS = ("bankfeed_async_many",)
PEER_MODULES = {"aiohttp": "aiohttp_flow", "httpx": "httpx_flow", "requests": "requests_flow"}
INSTITUTION = "FlinksCapital"
PASSWORD = "Everyday"
UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")


# ---------------------------------------------------------------------------------------------
# The child side: one variant, one run, in a process of its own.
# ---------------------------------------------------------------------------------------------


class Missing(Exception):
    """The installed bankfeed lacks the API a variant needs (issue 9 is under way): the variant is skipped."""


@dataclass
class Outcome:
    """What a variant's run gives back: each session's seconds, and how they were measured."""

    latencies: list[float]
    note: str = ""


def _cpu_seconds() -> float:
    """User + system CPU of this process, every thread included."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _rss_bytes() -> int:
    """The resident memory of this process now."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _peak_rss_bytes() -> int:
    """The peak resident memory of this process.

    ``VmHWM``, not ``ru_maxrss``: Linux carries the parent's high-water mark into ``ru_maxrss``
    across fork and exec, so a child would report at least the harness's peak.
    """
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _bankfeed_async(spec: dict[str, Any], login_ids: list[str]) -> Outcome:
    import bankfeed as bf

    client_class = getattr(bf, "AsyncClient", None)
    if client_class is None:
        raise Missing("bf.AsyncClient is not in the installed bankfeed")

    async def main() -> list[float]:
        async with client_class(spec["base_url"], spec["customer_id"], poll_interval=spec["poll_interval"]) as client:
            limit = asyncio.Semaphore(spec["concurrency"])

            async def timed(login_id: str) -> float:
                async with limit:
                    start = time.perf_counter()
                    await client.investments(login_id)
                    return time.perf_counter() - start

            return await asyncio.gather(*(timed(login_id) for login_id in login_ids))

    return Outcome(asyncio.run(main()))


def _bulk_latencies(login_ids: list[str], concurrency: int, start: float, finished: list[tuple[str, float]]) -> Outcome:
    """Each session's seconds, from a bulk call that yields in completion order.

    The bulk call says nothing of when each session started. With the concurrency bound, session i
    (in input order) starts at once when i < c, else when the (i - c + 1)-th session finishes: exact
    when the LoginIds are distinct and sessions start in input order. With repeated LoginIds the
    k-th finish is paired with the k-th start instead (the mean stays exact, percentiles are close).
    """
    ends = sorted(at for _, at in finished)
    starts = [start if i < concurrency else ends[i - concurrency] for i in range(len(login_ids))]
    if len(set(login_ids)) == len(login_ids):
        position = {login_id: i for i, login_id in enumerate(login_ids)}
        return Outcome([at - starts[position[login_id]] for login_id, at in finished])
    latencies = [end - begun for begun, end in zip(starts, ends, strict=True)]
    return Outcome(latencies, "latency estimated: k-th finish minus k-th slot opening (LoginIds repeat)")


def _failed(failures: list[BaseException]) -> None:
    if failures:
        raise RuntimeError(f"{len(failures)} session(s) failed; the first: {failures[0]!r}")


def _bankfeed_many(spec: dict[str, Any], login_ids: list[str]) -> Outcome:
    import bankfeed as bf

    if not hasattr(bf.Client, "investments_many"):
        raise Missing("Client.investments_many is not in the installed bankfeed")
    concurrency = spec["concurrency"]
    finished: list[tuple[str, float]] = []
    failures: list[BaseException] = []
    start = time.perf_counter()
    with bf.Client(spec["base_url"], spec["customer_id"], poll_interval=spec["poll_interval"]) as client:
        for login_id, result in client.investments_many(login_ids, concurrency=concurrency):
            finished.append((login_id, time.perf_counter()))
            if isinstance(result, BaseException):
                failures.append(result)
    _failed(failures)
    return _bulk_latencies(login_ids, concurrency, start, finished)


def _bankfeed_async_many(spec: dict[str, Any], login_ids: list[str]) -> Outcome:
    import bankfeed as bf

    client_class = getattr(bf, "AsyncClient", None)
    if client_class is None or not hasattr(client_class, "investments_many"):
        raise Missing("AsyncClient.investments_many is not in the installed bankfeed")
    concurrency = spec["concurrency"]
    finished: list[tuple[str, float]] = []
    failures: list[BaseException] = []

    async def main() -> float:
        start = time.perf_counter()
        async with client_class(spec["base_url"], spec["customer_id"], poll_interval=spec["poll_interval"]) as client:
            async for login_id, result in client.investments_many(login_ids, concurrency=concurrency):
                finished.append((login_id, time.perf_counter()))
                if isinstance(result, BaseException):
                    failures.append(result)
        return start

    start = asyncio.run(main())
    _failed(failures)
    return _bulk_latencies(login_ids, concurrency, start, finished)


def _bankfeed_threads(spec: dict[str, Any], login_ids: list[str]) -> Outcome:
    import bankfeed as bf

    client = bf.Client(spec["base_url"], spec["customer_id"], poll_interval=spec["poll_interval"])

    def timed(login_id: str) -> float:
        start = time.perf_counter()
        client.investments(login_id)
        return time.perf_counter() - start

    with ThreadPoolExecutor(max_workers=spec["concurrency"]) as pool:
        return Outcome(list(pool.map(timed, login_ids)))


def _peer(name: str) -> Callable[[dict[str, Any], list[str]], Outcome]:
    def run(spec: dict[str, Any], login_ids: list[str]) -> Outcome:
        sys.path.insert(0, str(PEERS))
        module = importlib.import_module(PEER_MODULES[name])
        args = (spec["base_url"], spec["customer_id"], login_ids, spec["concurrency"], spec["poll_interval"])
        return Outcome(module.run(*args))

    return run


RUNNERS: dict[str, Callable[[dict[str, Any], list[str]], Outcome]] = {
    "bankfeed_async": _bankfeed_async,
    "bankfeed_many": _bankfeed_many,
    "bankfeed_threads": _bankfeed_threads,
    "bankfeed_async_many": _bankfeed_async_many,
    **{name: _peer(name) for name in PEER_MODULES},
}


def _preload(variant: str) -> None:
    """Imports what the variant needs before the clock starts: an import is not a session's cost."""
    if variant.startswith("bankfeed"):
        import bankfeed  # noqa: F401
    elif variant in PEER_MODULES:
        sys.path.insert(0, str(PEERS))
        importlib.import_module(PEER_MODULES[variant])


def child(spec: dict[str, Any]) -> dict[str, Any]:
    """Runs one variant once and returns its measurements (the child process's entry point)."""
    raise_fd_limit()
    ids = Path(spec["ids_file"]).read_text().split()
    login_ids = list(itertools.islice(itertools.cycle(ids), spec["sessions"]))
    variant = spec["variant"]
    _preload(variant)
    samples: list[tuple[float, float]] = []
    stop = threading.Event()
    rss_before = _rss_bytes()
    cpu_before = _cpu_seconds()
    start = time.perf_counter()
    if spec.get("sample_every"):
        # The run stays on the main thread (where bankfeed's blocking calls watch for signals);
        # a sampler thread reads the process's CPU time meanwhile.
        def sample() -> None:
            while not stop.wait(spec["sample_every"]):
                samples.append((time.perf_counter() - start, _cpu_seconds()))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
    try:
        outcome = RUNNERS[variant](spec, login_ids)
    except Missing as missing:
        return {"skipped": str(missing)}
    finally:
        stop.set()
    wall = time.perf_counter() - start
    cpu = _cpu_seconds() - cpu_before
    return {
        "wall": wall,
        "cpu": cpu,
        "latencies": outcome.latencies,
        "note": outcome.note,
        "rss_before": rss_before,
        "peak_rss": _peak_rss_bytes(),
        "samples": samples,
    }


# ---------------------------------------------------------------------------------------------
# The harness side.
# ---------------------------------------------------------------------------------------------


def core_plan() -> tuple[set[int] | None, set[int] | None]:
    """The cores of the sandbox and of the clients: one each when there are two or more."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return None, None
    return {cpus[0]}, {cpus[1]}


def raise_fd_limit() -> None:
    """Lets this process, and every process it starts, open as many files as the hard limit allows."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def spawn(cpus: set[int] | None, command: list[str], **options: Any) -> subprocess.Popen[str]:
    """Starts ``command`` pinned to ``cpus`` from its first instruction, every thread it starts included.

    A new process inherits the affinity of the thread that forks it: this thread is pinned for the
    moment of the fork (a ``preexec_fn`` is not safe with the harness's reader threads running).
    """
    before = os.sched_getaffinity(0)
    if cpus:
        os.sched_setaffinity(0, cpus)
    try:
        return subprocess.Popen(command, text=True, **options)
    finally:
        if cpus:
            os.sched_setaffinity(0, before)


def bankfeed_build() -> str:
    """Which build of the extension is installed, told by its debug sections (release builds carry
    none). The sections are read from the ELF header: the text ``.debug_info`` also appears inside
    a release build, in the code of Rust's backtrace symbolizer."""
    spec = importlib.util.find_spec("bankfeed._native")
    if spec is None or spec.origin is None:
        return "bankfeed is not installed"
    path = Path(spec.origin)
    size = f"{path.stat().st_size / 1e6:.0f} MB"
    sections = _elf_sections(path)
    if sections is None:
        return f"unknown build ({spec.origin}, {size}: not an ELF file)"
    if ".debug_info" in sections:
        return f"DEBUG build ({spec.origin}, {size}, has debug info): figures are not representative"
    return f"release build ({spec.origin}, {size}, no debug info)"


def _elf_sections(path: Path) -> set[str] | None:
    """The section names of a 64-bit little-endian ELF file, or None for another kind of file."""
    with path.open("rb") as file:
        header = file.read(64)
        if header[:6] != b"\x7fELF\x02\x01":
            return None
        (offset,) = struct.unpack_from("<Q", header, 0x28)
        entry_size, count, names_index = struct.unpack_from("<HHH", header, 0x3A)
        file.seek(offset)
        table = file.read(entry_size * count)
        entries = [table[n * entry_size : (n + 1) * entry_size] for n in range(count)]
        if names_index >= len(entries):
            return None
        names_offset, names_size = struct.unpack_from("<QQ", entries[names_index], 0x18)
        file.seek(names_offset)
        names = file.read(names_size)
    found = set()
    for entry in entries:
        (start,) = struct.unpack_from("<I", entry, 0)
        found.add(names[start : names.find(b"\0", start)].decode("ascii", "replace"))
    return found


def floor_binary(explicit: str | None) -> tuple[Path | None, str]:
    """The floor's binary, release first; a debug one is used with a warning."""
    if explicit:
        return Path(explicit), "given with --floor"
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    release = target / "release" / "examples" / "sessions_floor"
    debug = target / "debug" / "examples" / "sessions_floor"
    if release.exists():
        return release, "release build"
    if debug.exists():
        return debug, "DEBUG build: build it with `cargo build --release --example sessions_floor`"
    return None, "not built: `cargo build --release --example sessions_floor`"


def sandbox_flags() -> str:
    """The sandbox command's help, to learn which flags this version takes."""
    result = subprocess.run(
        [sys.executable, "-m", "bankfeed", "sandbox", "--help"], capture_output=True, text=True, check=False
    )
    return result.stdout


class Sandbox:
    """``python -m bankfeed sandbox`` in a process of its own, pinned to its core."""

    def __init__(self, cpus: set[int] | None, help_text: str, **options: Any) -> None:
        flags = {name: value for name, value in options.items() if value is not None}
        cli = all(f"--{name.replace('_', '-')}" in help_text for name in flags)
        if cli:
            command = [sys.executable, "-u", "-m", "bankfeed", "sandbox", "--port", "0"]
            for name, value in flags.items():
                command += [f"--{name.replace('_', '-')}", str(value)]
            if "--no-auth" in help_text:
                # Keys off, as before the sandbox asked for them: the peers are written as their
                # users write them for a service without keys, and every contender sends the
                # same requests (no token call before each Authorize).
                command.append("--no-auth")
        else:
            # An older command line without some flag: the same server, its options as keywords.
            call = f"serve_sandbox(0, **{flags!r})"
            command = [sys.executable, "-u", "-c", f"from bankfeed._native import serve_sandbox; {call}"]
        self.process = spawn(cpus, command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.lines: list[str] = []
        self.url = ""
        self.customer_id = ""
        self._ready = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()
        if not self._ready.wait(30) or not self.url:
            self.close()
            raise RuntimeError("the sandbox did not start: " + "".join(self.lines))

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line)
            found = re.search(r"(https?://\S+?)[\s,)]", line + " ")
            if found and not self.url:
                self.url = found.group(1)
                ids = UUID.findall(line)
                self.customer_id = ids[0] if ids else "43387ca6-0391-4c82-857d-70d95f087ecb"
                self._ready.set()
        self._ready.set()

    def cpu_seconds(self) -> float:
        """The sandbox's CPU time so far, every thread included."""
        with open(f"/proc/{self.process.pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def close(self) -> None:
        """Stops the server (Ctrl-C, as a user would) and waits for it."""
        if self.process.poll() is None:
            self.process.send_signal(2)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def saved_login_ids(sandbox: Sandbox, count: int, ids_file: Path) -> list[str]:
    """Up to ``count`` distinct saved LoginIds on ``sandbox``.

    Those the sandbox wrote to ``ids_file`` (``--logins`` with ``--login-ids-file``, written before it
    printed its address); else, on a sandbox without those flags, LoginIds saved by a live login of
    the named users who meet no challenge, cycled by the caller.
    """
    if ids_file.exists():
        ids = ids_file.read_text().split()
        if ids:
            return ids[:count]
    import bankfeed as bf

    client = bf.Client(sandbox.url, sandbox.customer_id, poll_interval=0.01)
    ids = []
    with bf.Sandbox() as local:
        names = [user["username"] for user in local.users if not user["challenge_types"]]
    for name in names:
        try:
            step = client.authorize(INSTITUTION, name, PASSWORD, save=True)
        except bf.BankfeedError:
            continue
        if isinstance(step, bf.Session) and step.login_id:
            ids.append(step.login_id)
    ids_file.write_text("\n".join(ids) + "\n")
    return ids[:count]


@dataclass
class Run:
    """One variant at one concurrency: the measurements, or why there are none."""

    variant: str
    concurrency: int
    sessions: int
    wall: float = math.nan
    cpu: float = math.nan
    latencies: list[float] = field(default_factory=list)
    peak_rss: float = math.nan
    rss_before: float = math.nan
    server_cpu: float = math.nan
    samples: list[list[float]] = field(default_factory=list)
    note: str = ""
    skipped: str = ""

    @property
    def rate(self) -> float:
        """Sessions per second."""
        return self.sessions / self.wall

    @property
    def cpu_us(self) -> float:
        """Client CPU (user + system) per session, in microseconds."""
        return self.cpu / self.sessions * 1e6

    def percentile(self, q: float) -> float:
        """The latency at quantile ``q`` (nearest rank), in milliseconds."""
        if not self.latencies:
            return math.nan
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))] * 1e3


@dataclass
class Setup:
    """What every run of one harness invocation shares."""

    client_cpus: set[int] | None
    server_cpus: set[int] | None
    help_text: str
    floor: Path | None
    workdir: Path
    distinct: int


class Failed(Exception):
    """A child process failed: the run is reported as failed, and the others go on."""


def child_failure(what: str, code: int, errors: str) -> Failed:
    """The last lines of a failed child's stderr go to ours; its last line names the failure."""
    lines = [line for line in errors.splitlines() if line.strip()]
    print(
        "\n".join([f"  {what} failed; the end of its stderr:", *(f"    | {line}" for line in lines[-6:])]),
        file=sys.stderr,
    )
    return Failed(f"FAILED (exit {code}): {lines[-1] if lines else 'no message'}"[:200])


@contextmanager
def fresh_sandbox(
    setup: Setup, sessions: int, sandbox_options: dict[str, Any]
) -> Iterator[tuple[Sandbox, Path, list[str]]]:
    """A sandbox of its own for one run, its LoginIds file and the LoginIds in it; stopped after."""
    distinct = min(sessions, setup.distinct)
    ids_file = setup.workdir / "login_ids.txt"
    ids_file.unlink(missing_ok=True)
    if "--login-ids-file" in setup.help_text:
        sandbox_options = {**sandbox_options, "logins": distinct, "login_ids_file": str(ids_file)}
    sandbox = Sandbox(setup.server_cpus, setup.help_text, **sandbox_options)
    try:
        ids = saved_login_ids(sandbox, distinct, ids_file)
        if not ids:
            raise RuntimeError("no saved LoginId could be made on the sandbox")
        yield sandbox, ids_file, ids
    finally:
        sandbox.close()


def child_spec(
    variant: str, sandbox: Sandbox, ids_file: Path, sessions: int, concurrency: int, poll_interval: float
) -> dict[str, Any]:
    """What a child process running ``variant`` is told."""
    return {
        "variant": variant,
        "base_url": sandbox.url,
        "customer_id": sandbox.customer_id,
        "ids_file": str(ids_file),
        "sessions": sessions,
        "concurrency": concurrency,
        "poll_interval": poll_interval,
    }


def floor_command(
    setup: Setup, sandbox: Sandbox, ids_file: Path, sessions: int, concurrency: int, poll_interval: float
) -> list[str]:
    """The floor's command line for one run."""
    assert setup.floor is not None
    command = [str(setup.floor), sandbox.url, sandbox.customer_id, str(ids_file), str(sessions)]
    return [*command, str(concurrency), str(poll_interval)]


def _run_once(
    setup: Setup,
    variant: str,
    sessions: int,
    concurrency: int,
    poll_interval: float,
    sandbox_options: dict[str, Any],
    sample_every: float | None = None,
) -> Run:
    """Starts a fresh sandbox, runs ``variant`` in a child process against it, and stops the sandbox."""
    run = Run(variant, concurrency, sessions)
    if variant == "floor" and setup.floor is None:
        run.skipped = "the floor binary is not built (cargo build --release --example sessions_floor)"
        return run
    with fresh_sandbox(setup, sessions, sandbox_options) as (sandbox, ids_file, ids):
        server_before = sandbox.cpu_seconds()
        if variant == "floor":
            result = _run_floor(setup, sandbox, ids_file, sessions, concurrency, poll_interval)
        else:
            spec = child_spec(variant, sandbox, ids_file, sessions, concurrency, poll_interval)
            result = _run_child(setup, {**spec, "sample_every": sample_every})
        server_cpu = sandbox.cpu_seconds() - server_before
    if "skipped" in result:
        run.skipped = result["skipped"]
        return run
    run.wall, run.cpu, run.latencies = result["wall"], result["cpu"], result["latencies"]
    run.peak_rss, run.rss_before = result["peak_rss"], result.get("rss_before", math.nan)
    run.samples, run.note, run.server_cpu = result.get("samples", []), result.get("note", ""), server_cpu
    distinct = min(sessions, setup.distinct)
    if len(ids) < distinct:
        run.note = (run.note + f"; {len(ids)} distinct LoginId(s), cycled").lstrip("; ")
    return run


def run_once(setup: Setup, variant: str, sessions: int, concurrency: int, *rest: Any, **options: Any) -> Run:
    """``_run_once``, with a failed child reported in its row instead of ending the benchmark."""
    try:
        return _run_once(setup, variant, sessions, concurrency, *rest, **options)
    except Failed as failed:
        return Run(variant, concurrency, sessions, skipped=str(failed))


def _run_child(setup: Setup, spec: dict[str, Any]) -> dict[str, Any]:
    with tempfile.TemporaryFile("w+") as errors:
        process = spawn(
            setup.client_cpus,
            [sys.executable, __file__, "--child", json.dumps(spec)],
            stdout=subprocess.PIPE,
            stderr=errors,
        )
        output, _ = process.communicate()
        if process.returncode != 0:
            errors.seek(0)
            raise child_failure(spec["variant"], process.returncode, errors.read())
    parsed: dict[str, Any] = json.loads(output.strip().splitlines()[-1])
    return parsed


def _wait(process: subprocess.Popen[str]) -> tuple[str, int, resource.struct_rusage]:
    """The output, exit code and resource usage of a child (wait4: its CPU and peak memory, measured outside)."""
    assert process.stdout is not None
    output = process.stdout.read()
    _pid, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return output, process.returncode, usage


def _run_floor(
    setup: Setup, sandbox: Sandbox, ids_file: Path, sessions: int, concurrency: int, poll_interval: float
) -> dict[str, Any]:
    usages = []
    # Once with no session: the process's own start and exit, taken off the run's CPU time.
    for count in (0, sessions):
        command = floor_command(setup, sandbox, ids_file, count, concurrency, poll_interval)
        with tempfile.TemporaryFile("w+") as errors:
            process = spawn(setup.client_cpus, command, stdout=subprocess.PIPE, stderr=errors)
            output, code, usage = _wait(process)
            if code != 0:
                errors.seek(0)
                raise child_failure("floor", code, errors.read())
        usages.append((json.loads(output.strip().splitlines()[-1]), usage))
    (nothing, empty), (result, usage) = usages
    cpu = (usage.ru_utime + usage.ru_stime) - (empty.ru_utime + empty.ru_stime)
    return {
        "wall": result["wall"],
        "cpu": cpu,
        "latencies": result["latencies"],
        # The binary's own VmHWM (ru_maxrss would carry the harness's peak, see _peak_rss_bytes).
        "peak_rss": (result.get("peak_rss_kb") or math.nan) * 1024,
        "rss_before": (nothing.get("peak_rss_kb") or math.nan) * 1024,
        "note": "CPU measured outside (wait4), less an empty run's",
    }


def median_run(runs: list[Run]) -> Run:
    """Of several repeats, the one with the median CPU per session."""
    measured = [run for run in runs if not run.skipped]
    if not measured:
        return runs[0]
    measured.sort(key=lambda run: run.cpu_us)
    return measured[(len(measured) - 1) // 2]


def ratio(value: float, base: float) -> str:
    """``value / base`` as a short figure, or a dash when either is missing."""
    if math.isnan(value) or math.isnan(base) or base == 0:
        return "-"
    return f"{value / base:.2f}"


def main_table(runs: list[Run]) -> Iterator[str]:
    """The main table in Markdown: one row per variant and concurrency, with ratios to aiohttp and the floor."""
    by = {(run.variant, run.concurrency): run for run in runs}
    yield (
        "| variant | c | sessions/s | CPU µs/session | p50 ms | p99 ms | peak RSS MB | server core % "
        "| CPU / aiohttp | rate / aiohttp | CPU / floor | rate / floor |"
    )
    yield "|---|---|---|---|---|---|---|---|---|---|---|---|"
    for run in runs:
        if run.skipped:
            yield f"| {run.variant} | {run.concurrency} | skipped: {run.skipped} |||||||||| "
            continue
        peers = {}
        for name in ("aiohttp", "floor"):
            peer = by.get((name, run.concurrency))
            peers[name] = (math.nan, math.nan) if peer is None or peer.skipped else (peer.cpu_us, peer.rate)
        yield (
            f"| {run.variant} | {run.concurrency} | {run.rate:,.0f} | {run.cpu_us:,.0f} | {run.percentile(0.5):.1f} "
            f"| {run.percentile(0.99):.1f} | {run.peak_rss / 2**20:.0f} | {run.server_cpu / run.wall * 100:.0f} "
            f"| {ratio(run.cpu_us, peers['aiohttp'][0])} | {ratio(run.rate, peers['aiohttp'][1])} "
            f"| {ratio(run.cpu_us, peers['floor'][0])} | {ratio(run.rate, peers['floor'][1])} |"
        )


def targets(runs: list[Run]) -> Iterator[str]:
    """The issue's targets, each checked against this run."""
    by = {(run.variant, run.concurrency): run for run in runs if not run.skipped}
    for concurrency in sorted({run.concurrency for run in runs}):
        aiohttp, floor = by.get(("aiohttp", concurrency)), by.get(("floor", concurrency))
        checks: list[tuple[str, str, float, float, bool]] = []
        for variant, limit in (("bankfeed_async", 0.2), ("bankfeed_many", 0.1)):
            run = by.get((variant, concurrency))
            if run and aiohttp:
                value = run.cpu_us / aiohttp.cpu_us
                checks.append((variant, "CPU / aiohttp", value, limit, value <= limit))
        many = by.get(("bankfeed_many", concurrency))
        if many and floor:
            value = many.cpu_us / floor.cpu_us
            checks.append(("bankfeed_many", "CPU / floor", value, 1.5, value <= 1.5))
        if concurrency == 64 and aiohttp:
            for variant in ("bankfeed_async", "bankfeed_many", "bankfeed_threads"):
                run = by.get((variant, concurrency))
                if run:
                    value = run.rate / aiohttp.rate
                    checks.append((variant, "rate / aiohttp", value, 2.0, value >= 2.0))
        for variant, what, value, limit, met in checks:
            sign = ">=" if what.startswith("rate") else "<="
            verdict = "met" if met else "NOT met"
            yield f"- c={concurrency} {variant}: {what} {value:.2f} (target {sign} {limit}): {verdict}"


def window_cpu(run: Run, since: float, until: float) -> tuple[float, float, float]:
    """CPU % of one core between two moments of a sampled run, and the moments actually used."""
    inside = [sample for sample in run.samples if since <= sample[0] <= until]
    if len(inside) < 2:
        return math.nan, math.nan, math.nan
    (t0, cpu0), (t1, cpu1) = inside[0], inside[-1]
    return (cpu1 - cpu0) / (t1 - t0) * 100, t0, t1


def timeline(run: Run, step: float = 0.5) -> str:
    """The sampled run's CPU, % of one core, in steps of ``step`` seconds: the ramp, the wait, the end."""
    points = [(0.0, 0.0), *((t, cpu) for t, cpu in run.samples)]
    marks: list[str] = []
    edge, last = step, points[0]
    for point in points[1:]:
        if point[0] >= edge:
            marks.append(f"{(point[1] - last[1]) / (point[0] - last[0]) * 100:.0f}")
            edge, last = edge + step, point
    return " ".join(marks)


def parse_list(text: str) -> list[str]:
    """A comma-separated flag."""
    return [item.strip() for item in text.split(",") if item.strip()]


def harness(argv: Sequence[str] | None = None) -> int:
    """Runs the benchmark and prints its tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sessions", type=int, default=2000, help="sessions per run (default 2000)")
    parser.add_argument("--concurrency", default="1,16,64,256", help="comma-separated (default 1,16,64,256)")
    parser.add_argument(
        "--variants", default=",".join(VARIANTS), help="comma-separated, of: " + ", ".join(VARIANTS + EXTRA_VARIANTS)
    )
    parser.add_argument("--repeats", type=int, default=1, help="runs per cell; the median by CPU is shown")
    parser.add_argument("--poll-interval", type=float, default=0.01, help="seconds between polls (default 0.01)")
    parser.add_argument("--pending-polls", type=int, default=2, help="202 answers before each 200 (default 2)")
    parser.add_argument(
        "--distinct-logins", type=int, default=100_000, help="at most this many distinct LoginIds, cycled"
    )
    parser.add_argument("--floor", default=None, help="the floor's binary (default: target/*/examples/)")
    parser.add_argument("--no-hold", action="store_true", help="skip the 1,000 sessions held pending")
    parser.add_argument("--hold-sessions", type=int, default=1000)
    parser.add_argument("--hold-seconds", type=float, default=5.0, help="how long each session stays pending")
    parser.add_argument(
        "--hold-poll-interval", type=float, default=5.0, help="the clients' poll interval while held (default 5)"
    )
    parser.add_argument(
        "--hold-window", type=float, nargs=2, default=(2.0, 4.5), help="seconds after the start to measure between"
    )
    parser.add_argument("--hold-variants", default="bankfeed_many,aiohttp")
    parser.add_argument("--no-memory", action="store_true", help="skip the 10,000 sessions pending at once")
    parser.add_argument("--memory-sessions", type=int, default=10_000)
    parser.add_argument("--memory-variants", default="bankfeed_many,aiohttp")
    parser.add_argument("--json", default=None, help="also write every measurement to this file")
    args = parser.parse_args(argv)

    variants = parse_list(args.variants)
    unknown = sorted(set(variants) - set(VARIANTS) - set(EXTRA_VARIANTS))
    if unknown:
        parser.error(f"unknown variant(s): {', '.join(unknown)}")
    concurrencies = [int(c) for c in parse_list(args.concurrency)]
    server_cpus, client_cpus = core_plan()
    raise_fd_limit()
    floor, floor_build = floor_binary(args.floor)

    print("# Sessions benchmark")
    print(f"bankfeed: {bankfeed_build()}")
    print(f"floor: {floor or '-'} ({floor_build})")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs; sandbox on {server_cpus}, clients on {client_cpus}")
    sys.stdout.flush()

    results: dict[str, Any] = {"runs": [], "hold": [], "memory": []}
    with tempfile.TemporaryDirectory() as workdir:
        setup = Setup(client_cpus, server_cpus, sandbox_flags(), floor, Path(workdir), args.distinct_logins)
        runs: list[Run] = []
        for concurrency in concurrencies:
            for variant in variants:
                repeats = [
                    run_once(
                        setup,
                        variant,
                        args.sessions,
                        concurrency,
                        args.poll_interval,
                        {"pending_polls": args.pending_polls},
                    )
                    for _ in range(args.repeats)
                ]
                run = median_run(repeats)
                runs.append(run)
                status = run.skipped or (
                    f"{run.rate:,.0f} sessions/s, {run.cpu_us:,.0f} µs CPU/session, p50 {run.percentile(0.5):.1f} ms"
                )
                print(f"  {variant} c={concurrency}: {status}", flush=True)
        print(f"\n## {args.sessions} sessions (cached Authorize + Investments with {args.pending_polls} x 202)\n")
        for line in main_table(runs):
            print(line)
        notes = sorted({f"{run.variant}: {run.note}" for run in runs if run.note})
        for note in notes:
            print(f"- {note}")
        print("\nTargets:")
        for line in targets(runs):
            print(line)
        results["runs"] = [run.__dict__ for run in runs]

        pending = {"pending_polls": 1, "pending_seconds": args.hold_seconds}
        if not args.no_hold:
            since, until = args.hold_window
            print(
                f"\n## {args.hold_sessions} sessions held pending {args.hold_seconds:g} s each "
                f"(poll interval {args.hold_poll_interval:g} s; CPU between {since:g} s and {until:g} s)\n"
            )
            print("| variant | client CPU, % of one core, while waiting | whole run CPU µs/session | wall s |")
            timelines: list[str] = []
            print("|---|---|---|---|")
            for variant in parse_list(args.hold_variants):
                run = run_once(
                    setup,
                    variant,
                    args.hold_sessions,
                    args.hold_sessions,
                    args.hold_poll_interval,
                    pending,
                    sample_every=0.25,
                )
                if run.skipped:
                    print(f"| {variant} | skipped: {run.skipped} | | |")
                    continue
                percent, t0, t1 = window_cpu(run, since, until)
                results["hold"].append({**run.__dict__, "window_percent": percent, "window": [t0, t1]})
                verdict = "met" if percent < 2 else "NOT met"
                print(f"| {variant} | {percent:.2f} % ({verdict}: < 2 %) | {run.cpu_us:,.0f} | {run.wall:.1f} |")
                timelines.append(f"- {variant}: {timeline(run)}")
            print("\nClient CPU, % of one core, every 0.5 s of each run:")
            for line in timelines:
                print(line)
        if not args.no_memory:
            print(f"\n## {args.memory_sessions} sessions pending at once ({args.hold_seconds:g} s each)\n")
            print("| variant | peak RSS MB | RSS before MB | peak growth KB/session | wall s |")
            print("|---|---|---|---|---|")
            for variant in parse_list(args.memory_variants):
                run = run_once(
                    setup, variant, args.memory_sessions, args.memory_sessions, args.hold_poll_interval, pending
                )
                if run.skipped:
                    print(f"| {variant} | skipped: {run.skipped} | | | |")
                    continue
                results["memory"].append(run.__dict__)
                growth = (run.peak_rss - run.rss_before) / run.sessions / 1024
                print(
                    f"| {variant} | {run.peak_rss / 2**20:.0f} | {run.rss_before / 2**20:.0f} | {growth:.1f} "
                    f"| {run.wall:.1f} |"
                )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str))
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        print(json.dumps(child(json.loads(sys.argv[2]))))
        sys.exit(0)
    sys.exit(harness())
