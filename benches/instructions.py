"""Sessions counted in instructions: the flow of benches/sessions.py under callgrind (BENCHMARKS.md).

CPU time on a shared machine moves with its load, by a third from one run to the next; the number
of instructions a client executes per session does not. Each variant runs twice under
``valgrind --tool=callgrind``, against a fresh sandbox each time, with ``--small`` and then
``--large`` sessions; ``(I(large) - I(small)) / (large - small)`` is its instructions per session,
so the interpreter's start, the imports and the client's construction cancel out.

Callgrind counts the instructions of the process itself: the kernel's share of a session (its
sockets, its wake-ups: the system time that benches/sessions.py reports) is not in the count.

    python3 benches/instructions.py                     # bankfeed_many, bankfeed_async, aiohttp, floor
    python3 benches/instructions.py --variants bankfeed_many,aiohttp --small 100 --large 300

It needs valgrind (``apt-get install valgrind``) and takes a few minutes: a client runs some fifty
times slower under callgrind. Run it against a release build of the extension.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import sessions

DEFAULT_VARIANTS = ("bankfeed_many", "bankfeed_async", "aiohttp", "floor")
CALLGRIND = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


def instructions(setup: sessions.Setup, variant: str, count: int, concurrency: int, poll_interval: float) -> int:
    """The instructions of one run of ``variant`` with ``count`` sessions, against a fresh sandbox."""
    with sessions.fresh_sandbox(setup, count, {"pending_polls": 2}) as (sandbox, ids_file, _ids):
        if variant == "floor":
            command = sessions.floor_command(setup, sandbox, ids_file, count, concurrency, poll_interval)
        else:
            spec = sessions.child_spec(variant, sandbox, ids_file, count, concurrency, poll_interval)
            command = [sys.executable, sessions.__file__, "--child", json.dumps(spec)]
        with tempfile.TemporaryFile("w+") as errors:
            process = sessions.spawn(setup.client_cpus, [*CALLGRIND, *command], stdout=subprocess.PIPE, stderr=errors)
            process.communicate()
            errors.seek(0)
            report = errors.read()
    found = COLLECTED.findall(report)
    if process.returncode != 0 or not found:
        raise sessions.child_failure(variant, process.returncode, report)
    return int(found[-1])


def per_session(setup: sessions.Setup, variant: str, small: int, large: int, concurrency: int) -> float:
    """Instructions per session of ``variant``: the difference of a run of ``large`` and one of ``small``."""
    few = instructions(setup, variant, small, concurrency, 0.01)
    many = instructions(setup, variant, large, concurrency, 0.01)
    return (many - few) / (large - small)


def ratio(value: float, base: float | None) -> str:
    """``value / base``, or a dash."""
    return "-" if base is None or math.isnan(value) or base == 0 else f"{value / base:.2f}"


def main(argv: Sequence[str] | None = None) -> int:
    """Counts each variant and prints the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--variants", default=",".join(DEFAULT_VARIANTS), help="comma-separated, as in sessions.py")
    parser.add_argument("--small", type=int, default=100, help="sessions of the first run (default 100)")
    parser.add_argument("--large", type=int, default=300, help="sessions of the second run (default 300)")
    parser.add_argument("--concurrency", type=int, default=16, help="sessions at once (default 16)")
    parser.add_argument("--floor", default=None, help="the floor's binary (default: target/*/examples/)")
    args = parser.parse_args(argv)
    if args.large <= args.small:
        parser.error(f"--large ({args.large}) must be more than --small ({args.small})")
    variants = sessions.parse_list(args.variants)
    floor, floor_build = sessions.floor_binary(args.floor)
    server_cpus, client_cpus = sessions.core_plan()
    sessions.raise_fd_limit()
    print("# Sessions counted in instructions (callgrind)")
    print(f"bankfeed: {sessions.bankfeed_build()}")
    print(f"floor: {floor or '-'} ({floor_build})")
    print(f"{args.small} then {args.large} sessions at concurrency {args.concurrency}, each variant\n")
    counts: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as workdir:
        setup = sessions.Setup(client_cpus, server_cpus, sessions.sandbox_flags(), floor, Path(workdir), 100_000)
        for variant in variants:
            if variant == "floor" and floor is None:
                print(f"  floor: skipped ({floor_build})")
                continue
            try:
                counts[variant] = per_session(setup, variant, args.small, args.large, args.concurrency)
            except sessions.Failed as failed:
                print(f"  {variant}: {failed}")
                continue
            print(f"  {variant}: {counts[variant]:,.0f} instructions/session", flush=True)
    aiohttp, lowest = counts.get("aiohttp"), counts.get("floor")
    print("\n| variant | instructions / session | / aiohttp | / floor |")
    print("|---|---|---|---|")
    for variant, count in counts.items():
        print(f"| {variant} | {count:,.0f} | {ratio(count, aiohttp)} | {ratio(count, lowest)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
