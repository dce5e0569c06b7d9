"""``bf.export(..., scheduler=...)``, ``bankfeed export --scheduler`` and ``bankfeed.dask.read`` on
a real Dask cluster (docs/scale-out.md): a ``LocalCluster`` of two worker processes against a
sandbox in a process of its own, which asks for keys. The same rows as an export in one process;
a worker killed mid-partition, whose partition is run again with each login once (its payloads
kept once too); the fields no table reads counted, and the payloads kept, as in one process;
Ctrl-C on the driver; and the keys absent from every task key, task name and log of the cluster.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest

distributed = pytest.importorskip("distributed")
dask_dataframe = pytest.importorskip("dask.dataframe")

import pyarrow.dataset  # noqa: E402

import bankfeed as bf  # noqa: E402
import bankfeed.dask  # noqa: E402
from bankfeed._export.cluster import _Partition, _run_partition  # noqa: E402
from bankfeed._export.kinds import Kind  # noqa: E402
from bankfeed._export.writer import Limits  # noqa: E402
from bfhelpers import API_KEY, SECRET_KEY  # noqa: E402
from recordedserver import CUSTOMER, MINTED, Recorded, serving  # noqa: E402

# Deselected by scripts/test --quick (CONTRIBUTING.md#the-quick-loop): Dask clusters start.
pytestmark = pytest.mark.cluster

LOGINS = 40
BAD = "not-a-guid"
WHAT = ["investments", "accounts"]
TABLES = {
    "investments": ("accounts", "positions", "transactions", "securities"),
    "accounts": ("accounts", "transactions"),
}
#: A batch name: the run, the partition, the attempt, the batch (docs/scale-out.md#a-worker-that-dies).
BATCH = re.compile(r"(?P<run>\d{8}T\d{6}-[0-9a-f]{6})-p(?P<partition>\d{6})-(?P<attempt>[0-9a-f]{6})-\d{6}\.json")


class Service(NamedTuple):
    url: str
    customer_id: str
    login_ids: list[str]


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """A sandbox in a process of its own, as the service is to a cluster: every data call pending
    twice, and the keys required (from its environment, never its command line)."""
    ids = tmp_path_factory.mktemp("service") / "ids.txt"
    environment = {key: value for key, value in os.environ.items() if not key.startswith("BANKFEED_")}
    environment.update(BANKFEED_API_KEY=API_KEY, BANKFEED_SECRET_KEY=SECRET_KEY)
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bankfeed",
            "sandbox",
            "--port",
            "0",
            "--logins",
            str(LOGINS),
            "--pending-polls",
            "2",
            "--keys-from-env",
            "--login-ids-file",
            str(ids),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        assert " on " in line, server.communicate()
        url = line.split(" on ")[1].split(" ")[0]
        customer = line.split("customer id ")[1].rstrip(")\n")
        yield Service(url, customer, ids.read_text().split())
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(30)


@pytest.fixture(scope="module")
def cluster() -> Iterator[tuple[Any, Any]]:
    """Two worker processes of one thread each, as a small real cluster."""
    with (
        distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as local,
        distributed.Client(local) as dask_client,
    ):
        yield local, dask_client


def client_of(service: Service, **options: Any) -> bf.Client:
    settings: dict[str, Any] = {"poll_interval": 0.02, "poll_timeout": 60, **options}
    return bf.Client(service.url, service.customer_id, api_key=API_KEY, secret_key=SECRET_KEY, **settings)


def rows(out: Path, kind: str, table: str) -> Counter[str]:
    """The rows of a table, each as text, without the two columns that differ between fetches."""
    data = pyarrow.dataset.dataset(out / kind / table).to_table().drop_columns(["request_id", "fetched_at"])
    return Counter(json.dumps(row, sort_keys=True, default=str) for row in data.to_pylist())


@pytest.fixture(scope="module")
def reference(service: Service, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same export in one process."""
    out = tmp_path_factory.mktemp("one-process")
    report = bf.export(client_of(service), [*service.login_ids, BAD], out, what=WHAT)
    assert (report.logins_written, report.logins_failed) == (LOGINS, 1)
    return out


def assert_same_rows(out: Path, reference: Path) -> None:
    for kind, tables in TABLES.items():
        for table in tables:
            assert rows(out, kind, table) == rows(reference, kind, table), (kind, table)


def test_a_cluster_export_writes_what_one_process_writes(
    cluster: tuple[Any, Any], service: Service, reference: Path, tmp_path: Path
) -> None:
    local, dask_client = cluster
    ids = [*service.login_ids, BAD]
    report = bf.export(
        client_of(service), ids, tmp_path, what=WHAT, scheduler=dask_client, partition_size=7, batch_logins=3
    )
    one = bf.export(client_of(service), ids, tmp_path / "again-in-one-process", what=WHAT)
    assert (report.logins_written, report.logins_failed, report.logins_skipped) == (LOGINS, 1, 0)
    assert report.written == one.written
    assert [(login, type(error)) for login, error in report.failed] == [(BAD, bf.ConfigError)] * 2
    assert_same_rows(tmp_path, reference)
    # The files of each partition are its own, named by the partition.
    names = [BATCH.fullmatch(path.name) for path in (tmp_path / "_journal" / "investments").iterdir()]
    partitions = {name["partition"] for name in names if name is not None}
    assert None not in names, "every batch is named by its partition"
    assert partitions == {f"{index:06d}" for index in range(6)}  # 41 logins by 7
    assert (tmp_path / "_failures.jsonl").read_text() == (reference / "_failures.jsonl").read_text()
    manifest = json.loads((tmp_path / "_manifest.json").read_text())
    expected = json.loads((reference / "_manifest.json").read_text())
    for kind in WHAT:
        for field in ("rows", "logins_written", "logins_failed"):
            assert manifest["kinds"][kind][field] == expected["kinds"][kind][field], (kind, field)
    assert manifest["runs"][-1]["interrupted"] is False
    assert not list(tmp_path.rglob("*.tmp")) and not list(tmp_path.rglob(".cluster-*"))
    # A resume on the cluster, named by its address, sends nothing for what is written.
    again = bf.export(client_of(service), ids, tmp_path, what=WHAT, scheduler=local.scheduler_address, resume=True)
    assert (again.logins_written, again.logins_skipped, again.logins_failed) == (0, LOGINS, 1)
    assert_same_rows(tmp_path, reference)


def payloads(out: Path, kind: str) -> pyarrow.Table:
    """The table of ``kind``'s payloads kept (``keep_raw``), its partitions read as columns."""
    return pyarrow.dataset.dataset(out / "_raw" / kind, format="parquet", partitioning="hive").to_table()


def without_request_ids(payloads: pyarrow.Table) -> list[str]:
    """The payloads kept, each without its RequestId, which each fetch has its own of."""
    found = []
    for text in payloads.column("payload").to_pylist():
        payload = json.loads(text)
        payload.pop("RequestId", None)
        found.append(json.dumps(payload, sort_keys=True))
    return sorted(found)


def new_fields(name: str, body: Any) -> None:
    """Keys no table reads, in positions and in accounts of the detail."""
    if name == "investments-200":
        for account in body["Accounts"]:
            for position in account["Positions"]:
                position["Esg"] = 7
    if name == "accounts-detail-200":
        for account in body["Accounts"]:
            account["Nickname"] = "rainy day"


def test_a_cluster_run_counts_new_fields_and_keeps_payloads_as_one_process_does(
    cluster: tuple[Any, Any], tmp_path: Path
) -> None:
    _, dask_client = cluster
    logins = list(MINTED[:3])
    with serving(Recorded(add_fields=new_fields)) as stub:
        client = bf.Client(stub.url, CUSTOMER, poll_interval=0.01, max_retries=0)
        one = bf.export(client, logins, tmp_path / "one", what=WHAT, keep_raw=True)
        report = bf.export(
            client, logins, tmp_path / "cluster", what=WHAT, keep_raw=True, scheduler=dask_client, partition_size=2
        )
    assert one.ok and report.ok, report.failed
    assert set(report.unknown_fields) == set(WHAT), "both kinds' new fields are counted"
    assert report.unknown_fields == one.unknown_fields
    manifest = json.loads((tmp_path / "cluster" / "_manifest.json").read_text())
    assert manifest["runs"][-1]["unknown_fields"] == one.unknown_fields
    assert {kind: manifest["kinds"][kind]["unknown_fields"] for kind in WHAT} == one.unknown_fields
    for kind in WHAT:
        kept, alone = payloads(tmp_path / "cluster", kind), payloads(tmp_path / "one", kind)
        assert kept.column_names == alone.column_names
        assert sorted(kept.column("login_id").to_pylist()) == sorted(logins), kind
        assert set(kept.column("run_id").to_pylist()) == {report.run}
        assert without_request_ids(kept) == without_request_ids(alone), kind


def wait_for(condition: Callable[[], Any], what: str, seconds: float = 120) -> Any:
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        found = condition()
        if found:
            return found
        time.sleep(0.02)
    raise AssertionError(f"waited {seconds} s for {what}")


def test_a_worker_killed_mid_partition_is_run_again_with_each_login_once(
    cluster: tuple[Any, Any], service: Service, reference: Path, tmp_path: Path
) -> None:
    _, dask_client = cluster
    pids: dict[str, int] = dask_client.run(os.getpid)
    outcome: dict[str, Any] = {}

    def export() -> None:
        try:
            # One login at a time and a batch every two: a partition of 20 takes a few seconds.
            outcome["report"] = bf.export(
                client_of(service),
                service.login_ids,
                tmp_path,
                what=WHAT,
                scheduler=dask_client,
                partition_size=20,
                batch_logins=2,
                concurrency=1,
                keep_raw=True,
            )
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=export)
    thread.start()
    journal = tmp_path / "_journal" / "investments"
    first = wait_for(lambda: sorted(journal.glob("*.json")) if journal.exists() else [], "a committed batch")[0]
    match = BATCH.fullmatch(first.name)
    assert match is not None
    key = f"bankfeed-export-investments-p{match['partition']}-{match['run']}"
    worker = next(address for address, keys in dask_client.processing().items() if key in keys)
    os.kill(pids[worker], signal.SIGKILL)
    thread.join(300)
    assert not thread.is_alive()
    if "error" in outcome:
        raise outcome["error"]
    report: bf.ExportReport = outcome["report"]
    assert report.ok and report.logins_written == LOGINS
    attempts = {
        found["attempt"]
        for path in journal.iterdir()
        if (found := BATCH.fullmatch(path.name)) and found["partition"] == match["partition"]
    }
    assert len(attempts) == 2, "the killed partition was run again, after a batch of the first attempt"
    assert_same_rows(tmp_path, reference)
    for kind in WHAT:
        kept = payloads(tmp_path, kind).column("login_id").to_pylist()
        assert sorted(kept) == sorted(service.login_ids), f"each login's {kind} payload once"
    assert not list(tmp_path.rglob("*.tmp"))
    dask_client.wait_for_workers(2, timeout=120)


def test_ctrl_c_on_the_driver_stops_the_workers_and_writes_a_true_manifest(
    cluster: tuple[Any, Any], service: Service, reference: Path, tmp_path: Path
) -> None:
    local, dask_client = cluster
    out = tmp_path / "out"
    environment = {key: value for key, value in os.environ.items() if not key.startswith("BANKFEED_")}
    environment.update(BANKFEED_API_KEY=API_KEY, BANKFEED_SECRET_KEY=SECRET_KEY)
    args = [
        *service.login_ids,
        "--out",
        f"file://{out}",
        "--what",
        ",".join(WHAT),
        "--base-url",
        service.url,
        "--customer-id",
        service.customer_id,
        "--poll-interval",
        "0.05",
        "--scheduler",
        local.scheduler_address,
        "--partition-size",
        "20",
        "--batch-logins",
        "1",
        "--concurrency",
        "1",
        "--quiet",
    ]
    command = [sys.executable, "-m", "bankfeed", "export", *args]
    driver = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment)
    journal = out / "_journal" / "investments"
    wait_for(lambda: driver.poll() is not None or (journal.exists() and any(journal.glob("*.json"))), "a batch")
    driver.send_signal(signal.SIGINT)
    _, stderr = driver.communicate(timeout=120)
    assert driver.returncode == 130, stderr
    # Every partition has ended: nothing runs on the cluster, and nothing is written after the manifest.
    wait_for(lambda: not any(dask_client.processing().values()), "the cluster to be idle", 30)
    manifest = json.loads((out / "_manifest.json").read_text())
    assert manifest["runs"][-1]["interrupted"] is True and manifest["complete"] is False
    committed = [json.loads(path.read_text()) for path in journal.glob("*.json")]
    written = sorted(login for entry in committed for login, _ in entry["written"])
    assert manifest["kinds"]["investments"]["logins_written"] == written, "the manifest says what the journal says"
    assert 0 < len(written) < LOGINS
    time.sleep(1.0)
    assert len(list(journal.glob("*.json"))) == len(committed), "no worker went on after Ctrl-C"
    done = subprocess.run(
        [*command, "--resume"], capture_output=True, text=True, env=environment, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    assert_same_rows(out, reference)


def test_an_output_a_worker_cannot_see_is_refused_by_the_worker(
    cluster: tuple[Any, Any], service: Service, tmp_path: Path
) -> None:
    _, dask_client = cluster
    task = _Partition(
        str(tmp_path),
        Kind("investments", label="investments"),
        "parquet",
        "20261126T000000-abcdef",
        0,
        tuple(service.login_ids[:2]),
        {},
        2,
        Limits(),
        "bankfeed-export-stop-test",
        str(tmp_path / "absent"),
    )
    with pytest.raises(bf.ConfigError) as raised:
        dask_client.submit(_run_partition, task, client_of(service), key="bankfeed-export-test-unseen").result()
    assert raised.value.field == "out" and "every worker shares" in str(raised.value)
    assert not (tmp_path / "investments").exists(), "nothing written where the driver would not look"


def test_a_partition_that_fails_stops_the_run_and_the_manifest_says_where(
    cluster: tuple[Any, Any], service: Service, tmp_path: Path
) -> None:
    _, dask_client = cluster
    # A LoginId that is not text: the bulk call of its partition refuses it on the worker, whole
    # (a query the service cannot take no longer gets that far: refused before anything runs).
    with pytest.raises(TypeError, match="must be a str"):
        bf.export(
            client_of(service),
            [*service.login_ids, 12],  # type: ignore[list-item]
            tmp_path,
            scheduler=dask_client,
            partition_size=10,
        )
    manifest = json.loads((tmp_path / "_manifest.json").read_text())
    assert manifest["runs"][-1]["interrupted"] is True and manifest["complete"] is False
    written = manifest["kinds"]["investments"]["logins_written"]
    journal = [json.loads(path.read_text()) for path in (tmp_path / "_journal" / "investments").glob("*.json")]
    assert written == sorted(login for entry in journal for login, _ in entry["written"])
    wait_for(lambda: not any(dask_client.processing().values()), "the cluster to be idle", 30)


def test_a_cluster_run_holds_the_outputs_lock_on_its_driver(
    cluster: tuple[Any, Any], service: Service, tmp_path: Path
) -> None:
    _, dask_client = cluster
    outcome: dict[str, Any] = {}

    def export() -> None:
        try:
            # Slow polls, one login at a time: the run lasts seconds after its first batch.
            outcome["report"] = bf.export(
                client_of(service, poll_interval=0.15),
                service.login_ids,
                tmp_path,
                scheduler=dask_client,
                partition_size=20,
                batch_logins=2,
                concurrency=1,
            )
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=export)
    thread.start()
    journal = tmp_path / "_journal" / "investments"
    wait_for(lambda: journal.exists() and any(journal.glob("*.json")), "a batch committed by a worker")
    # The driver (this process) holds it while the workers write: another run is refused.
    with pytest.raises(bf.ConfigError) as raised:
        bf.export(client_of(service), service.login_ids, tmp_path, resume=True)
    assert thread.is_alive(), "refused while the cluster run was still going"
    thread.join(300)
    assert f"process {os.getpid()} on " in str(raised.value), raised.value
    if "error" in outcome:
        raise outcome["error"]
    assert outcome["report"].ok
    # Released at its end: the next one goes on at once (and finds nothing to resume).
    with pytest.raises(bf.ConfigError, match="nothing to resume"):
        bf.export(client_of(service), service.login_ids, tmp_path, resume=True)


def test_a_resumed_partition_whose_session_expired_meanwhile_starts_over(tmp_path: Path) -> None:
    # As in one process (test_export.py): a pending RequestId resumed after its session expired
    # starts over in the partition, instead of failing once more. Threads, not processes: the
    # sandbox is this process's own, with short session lifetimes.
    with (
        bf.Sandbox(logins=3, pending_seconds=1.0, session_idle_seconds=0.5, session_processing_seconds=0.5) as sb,
        distributed.LocalCluster(n_workers=1, processes=False, dashboard_address=":0") as local,
        distributed.Client(local) as dask_client,
    ):
        impatient = sb.client(poll_interval=0.01, poll_timeout=0.05)
        first = bf.export(impatient, sb.login_ids, tmp_path, scheduler=dask_client, partition_size=2)
        assert first.logins_failed == 3
        time.sleep(1.0)
        before = sum(1 for request in sb.requests if request["path"].endswith("/Authorize"))
        again = bf.export(
            client_of_sandbox(sb), sb.login_ids, tmp_path, scheduler=dask_client, partition_size=2, resume=True
        )
        authorizes = sum(1 for request in sb.requests if request["path"].endswith("/Authorize")) - before
    assert (again.logins_written, again.logins_failed) == (3, 0), again.failed
    assert authorizes == 3, "each login opened a new session"
    assert (tmp_path / "_failures.jsonl").read_text() == ""


def client_of_sandbox(sb: bf.Sandbox) -> bf.Client:
    return sb.client(poll_interval=0.01, poll_timeout=30)


def test_wrong_cluster_arguments_are_refused_before_anything_runs(service: Service, tmp_path: Path) -> None:
    import socket

    import dask

    client = client_of(service)
    with pytest.raises(bf.ConfigError) as raised:
        bf.export(client, service.login_ids, tmp_path / "a", scheduler="tcp://127.0.0.1:1", partition_size=0)
    assert raised.value.field == "partition_size"
    # A query the service cannot take: refused by the driver, not by every partition on a worker.
    wrong = ("attributes", {"attributes": {"Card": ["balance_min"]}, "filters": 12})
    with pytest.raises(bf.ConfigError) as raised:
        bf.export(client, service.login_ids, tmp_path / "a", what=["investments", wrong], scheduler="tcp://127.0.0.1:1")
    assert raised.value.field == "what" and "filters" in str(raised.value)
    assert not (tmp_path / "a").exists()
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}), pytest.raises(bf.ConfigError) as unreachable:
        bf.export(client, service.login_ids, tmp_path / "b", scheduler=f"tcp://127.0.0.1:{port}")
    assert unreachable.value.field == "scheduler" and f"127.0.0.1:{port}" in str(unreachable.value)
    with pytest.raises(bf.ConfigError) as table:
        bankfeed.dask.read(client, service.login_ids, "investments", "balances")
    assert table.value.field == "table"


# --- bankfeed.dask.read ---------------------------------------------------------------------------


def test_read_builds_its_frame_from_the_schema_without_fetching(service: Service) -> None:
    import socket

    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    # Nothing listens there: a fetch while building the frame would raise. Lazy (once=False):
    # by default the frame is persisted, fetched as it is read (test_dask_read_once.py).
    nowhere = bf.Client(f"http://127.0.0.1:{port}", service.customer_id, max_retries=0)
    frame = bankfeed.dask.read(nowhere, service.login_ids, "investments", "positions", partition_size=15, once=False)
    assert frame.npartitions == 3
    assert list(frame.columns) == bf.schema("investments", "positions").names
    selected = frame[frame.quantity > 0][["login_id", "market_value"]]
    assert list(selected.columns) == ["login_id", "market_value"]
    with pytest.raises(bf.TransportError):
        selected.compute(scheduler="sync")


def test_read_keeps_lists_and_dates_whatever_dask_does_with_text(service: Service) -> None:
    # Dask turns every object column into text by default (dataframe.convert-string): a list
    # would come back as the text of its repr, and a date as text.
    import dask

    assert dask.config.get("dataframe.convert-string") is not False
    client = client_of(service)
    ids = service.login_ids[:3]
    with client.investments_many(ids) as results:
        bulk = {login_id: result for login_id, result in results if isinstance(result, bf.Investments)}
    assert len(bulk) == len(ids)
    securities = bankfeed.dask.read(client, ids, "investments", "securities").compute()
    aliases = {alias for value in securities.aliases for alias in value}
    assert aliases == {
        alias
        for result in bulk.values()
        for value in result.securities.to_arrow().column("aliases").to_pylist()
        for alias in value
    }
    transactions = bankfeed.dask.read(client, ids, "investments", "transactions").compute()
    assert str(transactions.date.dtype).startswith("datetime64")
    expected = pyarrow.concat_tables(result.transactions.to_arrow() for result in bulk.values()).to_pandas(
        date_as_object=False
    )
    assert sorted(transactions.date) == sorted(expected.date)
    for frame in (securities, transactions):
        assert not [name for name, kind in frame.dtypes.items() if str(kind) == "object"], frame.dtypes


def test_read_gives_the_exported_rows_computed_on_the_cluster(
    cluster: tuple[Any, Any], service: Service, reference: Path
) -> None:
    _, dask_client = cluster
    frame = bankfeed.dask.read(client_of(service), service.login_ids, "investments", "positions", partition_size=15)
    computed = dask_client.compute(frame).result()
    assert computed.dtypes.equals(frame.dtypes), "the meta is what the partitions are"
    exported = pyarrow.dataset.dataset(reference / "investments" / "positions").to_table().to_pandas()
    assert sorted(computed.columns) == sorted(exported.columns)
    assert rows_of(computed) == rows_of(exported)
    by_login = dask_client.compute(frame.groupby("login_id").market_value.sum()).result()
    assert set(by_login.index) <= set(service.login_ids) and len(by_login) > 0
    with pytest.raises(bf.ConfigError):
        dask_client.compute(bankfeed.dask.read(client_of(service), [BAD], "investments", "positions")).result()
    skipped = bankfeed.dask.read(
        client_of(service), [BAD, service.login_ids[0]], "accounts", "transactions", on_error="skip"
    )
    assert set(dask_client.compute(skipped).result().login_id) == {service.login_ids[0]}


def rows_of(frame: Any) -> Counter[str]:
    records = frame.drop(columns=["request_id", "fetched_at"]).astype(object).to_dict("records")
    return Counter(
        json.dumps({k: None if v != v else v for k, v in row.items()}, sort_keys=True, default=str) for row in records
    )


# --- Keys -----------------------------------------------------------------------------------------


def test_keys_are_in_no_task_key_task_name_or_log_of_the_cluster(
    cluster: tuple[Any, Any], service: Service, tmp_path: Path
) -> None:
    _, dask_client = cluster

    # Defined here, so that they travel by value: the workers cannot import this test module.
    def capture() -> None:
        import logging

        class Keep(logging.Handler):
            records: list[str]

            def emit(self, record: logging.LogRecord) -> None:
                self.records.append(self.format(record))

        keep = Keep(logging.DEBUG)
        keep.records, keep.name = [], "bankfeed-test-keep"
        logging.getLogger("bankfeed").addHandler(keep)
        logging.getLogger("bankfeed").setLevel(logging.DEBUG)

    def kept() -> list[str]:
        import logging

        return [
            text
            for handler in logging.getLogger("bankfeed").handlers
            if handler.name == "bankfeed-test-keep"
            for text in getattr(handler, "records", [])
        ]

    from distributed.diagnostics.plugin import SchedulerPlugin

    class Specs(SchedulerPlugin):
        """Every task as the scheduler holds it, whatever becomes of it later."""

        name = "bankfeed-test-specs"

        def __init__(self) -> None:
            self.seen: list[str] = []

        async def start(self, scheduler: Any) -> None:
            self.scheduler = scheduler

        def transition(self, key: Any, start: str, finish: str, *args: Any, **kwargs: Any) -> None:
            task = self.scheduler.tasks.get(key)
            if task is not None and finish == "processing":
                # The arguments whole: a task's repr cuts them short, a dashboard page may not.
                spec = task.run_spec
                self.seen.append(f"{key!r} {spec!r} {getattr(spec, 'args', ())!r} {getattr(spec, 'kwargs', {})!r}")

    dask_client.register_plugin(Specs())
    dask_client.run(capture)
    client = client_of(service)
    # A login that fails, partitions that raise (which a worker logs with its task), and an export.
    report = bf.export(client, [*service.login_ids[:6], BAD], tmp_path, scheduler=dask_client, partition_size=3)
    assert report.logins_failed == 1
    wrong_query = ("attributes", {"attributes": {"Card": ["balance_min"]}, "filters": 12})
    with pytest.raises(bf.ConfigError, match="filters"):
        bf.export(client, service.login_ids[:2], tmp_path / "wrong", what=[wrong_query], scheduler=dask_client)
    # Lazy, so that the failed partition runs as the computation's own task, which the worker
    # logs with its repr; a persisted read (the default) runs the same tasks.
    frame = bankfeed.dask.read(client, [service.login_ids[0], BAD], "investments", "positions", once=False)
    with pytest.raises(bf.ConfigError):
        dask_client.compute(frame).result()
    persisted = bankfeed.dask.read(client, service.login_ids[:2], "investments", "positions")
    assert len(dask_client.compute(persisted).result()) > 0
    graph = [repr(key) for key in frame.__dask_graph__()] + [repr(frame), frame._name]

    def scheduler_view(dask_scheduler: Any) -> list[str]:
        return [
            repr(list(dask_scheduler.transition_log)),
            repr(list(dask_scheduler.tasks)),
            repr([repr(task.run_spec) for task in dask_scheduler.tasks.values()]),
            repr(list(dask_scheduler.task_groups)),
            repr(list(dask_scheduler.task_prefixes)),
            repr(dask_scheduler.get_events()),
            "\n".join(dask_scheduler.plugins["bankfeed-test-specs"].seen),
        ]

    on_scheduler: list[str] = dask_client.run_on_scheduler(scheduler_view)
    logs = [
        repr(dask_client.get_scheduler_logs()),
        repr(dask_client.get_worker_logs()),
        repr(dask_client.get_worker_logs(nanny=True)),
    ]
    bankfeed_logs = dask_client.run(kept)
    texts = {"graph": graph, "scheduler": on_scheduler, "logs": logs, "bankfeed logs": [repr(bankfeed_logs)]}
    for where, found in texts.items():
        leaked = [text for text in found if API_KEY in text or SECRET_KEY in text]
        assert not leaked, f"a key in the {where}: {leaked[0][:300]}"
    # Not vacuous: the partitions' keys, the tasks' arguments, the failed task, the requests are there.
    assert "bankfeed-export-investments-p000000" in on_scheduler[0]
    assert "<bankfeed export partition investments p000000: 3 logins>" in on_scheduler[-1]
    assert "'client': Client(" in on_scheduler[-1], "the client travels as itself, its repr hiding its keys"
    assert "Compute Failed" in logs[1] and "bankfeed.dask.read partition" in logs[1]
    assert "investments" in repr(bankfeed_logs).lower()
