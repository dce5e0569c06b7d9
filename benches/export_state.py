"""What an export keeps per login, measured without fetching: the peak memory of a run's start and
end over a journal of 1,000 to 1,000,000 logins (BENCHMARKS.md, export).

The batches of an export hold the same memory at any number of logins (a batch is 1,000 logins);
what grows with the logins is what a run reads back from its journal and keeps: the logins it
wrote, where each login's transactions stand (the cursors), the runs it sums up for the manifest.
Fetching 1,000,000 logins from a sandbox takes hours on a small machine, so this writes the
journal such an export leaves instead, entry by entry as ``writer.KindWriter.commit`` writes it
(batches of 1,000 logins, each login with a cursor shaped as the sandbox's data makes it: about 60
transactions over 50 days for ``investments``, 3 accounts and 9 transactions in the overlap for
``accounts``; the part files empty, as nothing reads them), then measures, each in a process of
its own against the same directory:

- ``import``: ``import bankfeed, pyarrow.parquet``, the floor of every process;
- ``night 1 end``: the end of the run that wrote them: a resume of that run with nothing left to
  fetch (its record says it was killed), so that the journal is read for what it wrote, then the
  manifest and the failures are written (``_Export.plan``, ``start``, ``finish``);
- ``night 2``: the next run's start, which reads every login's cursor, and its end (nothing
  fetched: its batches are those of any night), which sums up both runs.

Peak RSS is ``ru_maxrss`` of each process (from ``wait4``). ``--code`` measures other copies of
bankfeed's Python too (each a directory holding a ``bankfeed`` package, put first on the path),
each on the same journal, reset to the night 1's end before each: the build before a change
against the one after it.

    python benches/export_state.py                                     # 1,000, 100,000, 1,000,000
    python benches/export_state.py --logins 1000,100000 --what investments
    python benches/export_state.py --code /tmp/before,                 # /tmp/before/bankfeed, then the installed

``--limit-gb`` caps each process's address space (a run that needs more fails with MemoryError,
reported as such), so that a build which reads the journal whole cannot take the machine down.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

RUN = "20261126T020000-3f9a1c"
BATCH = 1000

#: Run in each child: the phase named by its argument, over the export in ``out``.
CHILD = """
import sys, time
phase, out, ids_file, what = sys.argv[1:5]
import bankfeed as bf
import pyarrow.parquet
if phase != "import":
    from bankfeed._export.finish import finish
    from bankfeed._export.logins import LoginIdList, unique
    from bankfeed._export.options import ExportOptions
    from bankfeed._export.plan import ExportPlan
    from bankfeed._export.tally import Tally
    with open(ids_file) as file:
        asked = LoginIdList(unique(line.strip() for line in file))
    options = ExportOptions.of(
        what=what.split(","), format="parquet", concurrency=8, resume=phase == "end1", wait_lock=0.0,
        allow_shared_out=False, progress=False, days=None, batch_logins=1000, on_challenge=None,
        csv_formulas="escape", money=None, max_consecutive_failures=20, full_refresh=False, keep_raw=False,
    )
    started = time.perf_counter()
    with bf.Sandbox(logins=1) as sandbox, sandbox.client() as client:
        run = ExportPlan.make(asked, out, options, client=client)
        try:
            run.start()
            report = finish(run, Tally.of(run), interrupted=False)
        finally:
            run.release()
    print(f"{time.perf_counter() - started:.1f}", report.logins_skipped, report.run)
"""


def _hex(rng: random.Random, digits: int) -> str:
    return f"{rng.getrandbits(4 * digits):0{digits}x}"


def cursor(kind: str, rng: random.Random) -> dict[str, object]:
    """A login's cursor as a batch writes it, shaped as the sandbox's data makes it."""
    if kind == "investments":
        days = [f"2026-{rng.randint(1, 11):02d}-{rng.randint(1, 28):02d}" for _ in range(60)]
        seen: dict[str, dict[str, str]] = {}
        for day in days:
            seen.setdefault(day, {})[_hex(rng, 12)] = _hex(rng, 8)
        return {"seen": seen}
    accounts = [str(uuid.UUID(int=rng.getrandbits(128))) for _ in range(3)]
    seen = {}
    for _ in range(9):
        seen.setdefault(f"2026-11-{rng.randint(13, 20):02d}", {})[_hex(rng, 12)] = _hex(rng, 8)
    return {"through": dict.fromkeys(accounts, "2026-11-20"), "seen": seen}


def write_export(out: Path, logins: int, kinds: list[str]) -> Path:
    """The directory a first run of ``logins`` logins of ``kinds`` leaves, killed after its last
    batch; the file of its LoginIds."""
    from bankfeed._export.kinds import KINDS, options_json, parse_what
    from bankfeed._export.ondisk.layout import part_name, partition

    rng = random.Random(logins)
    # A pool of cursors as JSON text, each given to many logins: writing a million made one by one
    # would take an hour here, and their sizes are what counts.
    pool = {kind: [json.dumps(cursor(kind, rng)) for _ in range(1000)] for kind in kinds}
    ids = [str(uuid.UUID(int=rng.getrandbits(128))) for _ in range(logins)]
    ids_file = out.parent / f"{out.name}-ids.txt"
    ids_file.write_text("\n".join(ids) + "\n")
    where = partition(RUN)
    for kind in kinds:
        for table in KINDS[kind]:
            (out / kind / table / where).mkdir(parents=True)
        journal = out / "_journal" / kind
        journal.mkdir(parents=True)
        for number, start in enumerate(range(0, logins, BATCH), 1):
            batch = f"{RUN}-{number:06d}"
            written = ids[start : start + BATCH]
            files = {table: f"{where}/{part_name(batch, 'parquet')}" for table in KINDS[kind]}
            for table in KINDS[kind]:
                (out / kind / table / files[table]).touch()
            entry = {
                "batch": batch,
                "kind": kind,
                "run": RUN,
                "committed_at": 1764122400.0 + number,
                "written": [[login, str(uuid.UUID(int=rng.getrandbits(128)))] for login in written],
                "failed": [],
                "files": files,
                "rows": dict.fromkeys(KINDS[kind], 90 * len(written)),
            }
            cursors = ", ".join(f'"{login}": {pool[kind][rng.randrange(len(pool[kind]))]}' for login in written)
            (journal / f"{batch}.json").write_text(json.dumps(entry)[:-1] + ', "cursors": {' + cursors + "}}")
    runs = out / "_journal" / "runs"
    runs.mkdir(parents=True)
    options = {kind.name: {"what": kind.label, "options": options_json(kind.options)} for kind in parse_what(kinds)}
    record = {
        "run": RUN,
        "part_of": RUN,
        "started_at": "2026-11-26T02:00:00Z",
        "started": 1764122400.0,
        "finished_at": None,
        "format": "parquet",
        "money": "float",
        "csv_formulas": None,
        "full_refresh": False,
        "kinds": options,
        "logins_asked": logins,
        "logins_fetched": None,
        "logins_failed": None,
        "interrupted": None,
    }
    (runs / f"{RUN}.json").write_text(json.dumps(record))
    return ids_file


def reset(out: Path) -> None:
    """``out`` as the first run left it: what the phases measured wrote is deleted."""
    for name in ("_manifest.json", "_failures.jsonl"):
        (out / name).unlink(missing_ok=True)
    for record in (out / "_journal" / "runs").iterdir():
        if record.name != f"{RUN}.json":
            record.unlink()


def measure(phase: str, out: Path, ids_file: Path, what: str, limit_gb: float, code: str = "") -> tuple[float, str]:
    """Peak RSS in MB of ``phase`` in a process of its own, and what it printed (or its error)."""

    def limit() -> None:
        if limit_gb:
            size = int(limit_gb * 2**30)
            resource.setrlimit(resource.RLIMIT_AS, (size, size))

    environment = {key: value for key, value in os.environ.items() if not key.startswith("BANKFEED_")}
    environment.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")  # as the command sets it
    if code:
        environment["PYTHONPATH"] = os.pathsep.join([code, *filter(None, [environment.get("PYTHONPATH")])])
    process = subprocess.Popen(
        [sys.executable, "-c", CHILD, phase, str(out), str(ids_file), what],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
        preexec_fn=limit,  # the harness starts no thread
    )
    _, status, usage = os.wait4(process.pid, 0)
    assert process.stdout is not None and process.stderr is not None
    said = process.stdout.read().strip()
    if os.waitstatus_to_exitcode(status) != 0:
        lines = [line for line in process.stderr.read().splitlines() if line.strip()]
        said = "FAILED: " + (lines[-1] if lines else f"exit {os.waitstatus_to_exitcode(status)}")[:160]
    return usage.ru_maxrss / 1024, said


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--logins", default="1000,100000,1000000", help="sizes (1000,100000,1000000)")
    parser.add_argument("--what", default="investments,accounts", help="kinds (investments,accounts)")
    parser.add_argument("--workdir", default=None, help="where the exports go (a temporary directory)")
    parser.add_argument("--limit-gb", type=float, default=8.0, help="address space of each process, GB (8; 0: none)")
    parser.add_argument("--code", default="", help="comma list of directories holding a bankfeed ('': the installed)")
    args = parser.parse_args()
    codes = args.code.split(",")
    kinds = [kind for kind in args.what.split(",") if kind]
    work = Path(args.workdir or tempfile.mkdtemp(prefix="bankfeed-state-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    import bankfeed

    print(f"bankfeed: {Path(bankfeed.__file__).parent}; kinds {','.join(kinds)}")
    rows: list[tuple[str, int, str, float, str]] = []
    for code in codes:
        floor, _ = measure("import", work, work, args.what, args.limit_gb, code)
        print(f"{code or 'installed'}: import bankfeed, pyarrow.parquet: {floor:.0f} MB")
    try:
        for size in [int(size) for size in args.logins.split(",") if size]:
            out = work / f"export-{size}"
            shutil.rmtree(out, ignore_errors=True)
            started = time.perf_counter()
            ids_file = write_export(out, size, kinds)
            journal = sum(file.stat().st_size for file in (out / "_journal").rglob("*.json"))
            took = time.perf_counter() - started
            print(f"{size:,} logins: journal of {journal / 1e6:,.0f} MB written in {took:.0f} s")
            for code in codes:
                reset(out)
                for phase, label in (("end1", "night 1 end"), ("night2", "night 2")):
                    peak, said = measure(phase, out, ids_file, args.what, args.limit_gb, code)
                    rows.append((code, size, label, peak, said))
                    print(f"  {code or 'installed'}, {label}: {peak:.0f} MB ({said})", flush=True)
            shutil.rmtree(out, ignore_errors=True)
            ids_file.unlink()
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    smallest = min(size for _, size, _, _, _ in rows)
    print(f"\n| bankfeed | logins | phase | peak RSS MB | / at {smallest:,} | seconds |")
    print("|---|---|---|---|---|---|")
    first = {(code, label): peak for code, size, label, peak, _ in rows if size == smallest}
    for code, size, label, peak, said in sorted(rows, key=lambda row: (codes.index(row[0]), row[1])):
        seconds = said.split()[0] if not said.startswith("FAILED") else said
        shown = code or "installed"
        print(f"| {shown} | {size:,} | {label} | {peak:.0f} | {peak / first[(code, label)]:.2f} | {seconds} |")


if __name__ == "__main__":
    main()
