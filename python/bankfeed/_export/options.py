"""How one export is asked: :class:`ExportOptions`, the arguments of ``bf.export``,
``bf.aexport`` and ``bankfeed export`` after ``client``, ``login_ids`` and ``out``, each checked
once, before anything is read or written (docs/export.md).

The public functions keep their keyword arguments (scripts are written against them) and build
one value here, which the engine is handed: it never sees the keyword lists again. A bad
argument is a ``ConfigError`` (or a ``TypeError`` for a wrong type) that names it, says what
came and the rule, as each check here words it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from bankfeed._export.formulas import check_csv_formulas
from bankfeed._export.kinds import Kind, check_money, parse_what
from bankfeed._export.ondisk.layout import FORMATS
from bankfeed._export.outage import check_max_consecutive_failures
from bankfeed.errors import _check_count, _config_error

__all__ = ["ExportOptions", "check_handler", "check_keep_raw", "check_scheduler", "check_seconds"]


@dataclass(frozen=True)
class ExportOptions:
    """One export's options, checked (:meth:`of`): what the engine reads of how it was asked."""

    #: ``what`` (with ``days``), parsed: the kinds to fetch, in the order asked.
    kinds: tuple[Kind, ...]
    fmt: str
    concurrency: int
    resume: bool
    wait_lock: float
    allow_shared_out: bool
    progress: bool
    batch_logins: int
    on_challenge: Any
    csv_formulas: str
    #: None: the export's, or the client's for a new export (docs/export.md#money).
    money: str | None
    max_consecutive_failures: int
    full_refresh: bool
    keep_raw: bool
    #: A cluster to run on (``cluster.py``); None: this process.
    scheduler: Any = None
    partition_size: int = 1000

    @classmethod
    def of(
        cls,
        *,
        what: object,
        format: object,
        concurrency: object,
        resume: bool,
        wait_lock: object,
        allow_shared_out: bool,
        progress: bool,
        days: object,
        batch_logins: object,
        on_challenge: object,
        csv_formulas: object,
        money: object,
        max_consecutive_failures: object,
        full_refresh: object,
        keep_raw: object,
        scheduler: object = None,
        partition_size: object = 1000,
    ) -> ExportOptions:
        """The options of these arguments, each checked in the order the export always checked
        them; the first bad one raises."""
        _check_count("partition_size", partition_size)
        check_keep_raw(keep_raw)
        if scheduler is not None:
            check_scheduler(scheduler)
            check_handler(on_challenge)
        fmt = _check_format(format)
        _check_count("batch_logins", batch_logins)
        _check_count("concurrency", concurrency)
        formulas = check_csv_formulas(csv_formulas)
        limit = check_max_consecutive_failures(max_consecutive_failures)
        wait = check_seconds("wait_lock", wait_lock)
        kinds = parse_what(what, days=days)  # type: ignore[arg-type]
        checked_money = None if money is None else check_money(money)
        if not isinstance(full_refresh, bool):
            raise TypeError(f"full_refresh must be True or False, not {type(full_refresh).__name__}")
        return cls(
            kinds=tuple(kinds),
            fmt=fmt,
            concurrency=concurrency,  # type: ignore[arg-type]
            resume=resume,
            wait_lock=wait,
            allow_shared_out=allow_shared_out,
            progress=progress,
            batch_logins=batch_logins,  # type: ignore[arg-type]
            on_challenge=on_challenge,
            csv_formulas=formulas,
            money=checked_money,
            max_consecutive_failures=limit,
            full_refresh=full_refresh,
            keep_raw=keep_raw,  # type: ignore[arg-type]
            scheduler=scheduler,
            partition_size=partition_size,  # type: ignore[arg-type]
        )


def _check_format(fmt: object) -> str:
    """``format``: one of :data:`FORMATS`; Parquet only with pyarrow installed."""
    if fmt not in FORMATS:
        raise _config_error("format", f'must be "parquet" or "csv", got {fmt!r}')
    if fmt == "parquet":
        try:
            import pyarrow.parquet  # noqa: F401
        except ImportError:
            raise _config_error(
                "format", '"parquet" needs pyarrow: pip install \'bankfeed[arrow]\', or pass format="csv"'
            ) from None
    return str(fmt)


def check_keep_raw(keep_raw: object) -> None:
    """``keep_raw``: True or False; anything else is a ``ConfigError`` naming it."""
    if not isinstance(keep_raw, bool):
        raise _config_error("keep_raw", f"must be True or False, got {keep_raw!r}")


def check_seconds(field: str, value: object) -> float:
    """``wait_lock``: seconds, at least 0 (``inf``: for as long as it takes)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{field} must be a number of seconds, not {type(value).__name__}")
    if math.isnan(value) or value < 0:
        raise _config_error(field, f"must be a number of seconds of at least 0, got {value}")
    return float(value)


def check_scheduler(scheduler: object) -> None:
    """A ``ConfigError`` naming ``scheduler`` when distributed is not installed, or when
    ``scheduler`` cannot be a scheduler: checked before anything is written, since
    ``distributed.Client`` refuses an address without a port only once it has started, and its
    half-made client then takes a minute to give up at exit."""
    try:
        import distributed
        from distributed.comm.addressing import parse_address, parse_host_port
    except ImportError:
        raise _config_error("scheduler", "needs Dask's distributed package: pip install 'bankfeed[dask]'") from None
    if isinstance(scheduler, distributed.Client):
        return
    rule = "must be a Dask scheduler's address (tcp://HOST:PORT) or a distributed.Client"
    if not isinstance(scheduler, str):
        raise _config_error("scheduler", f"{rule}, not {type(scheduler).__name__}")
    try:
        scheme, location = parse_address(scheduler)
        if scheme in ("tcp", "tls", "ws", "wss"):
            parse_host_port(location)
    except ValueError as exc:
        raise _config_error("scheduler", f"{rule}; got {scheduler!r}: {exc}") from None


def check_handler(on_challenge: object) -> None:
    """A ``ConfigError`` naming ``on_challenge`` when it cannot go to the workers: each partition
    carries it, pickled as Dask pickles a task's arguments. Checked before anything is written,
    rather than failing every partition on the cluster."""
    if on_challenge is None:
        return
    import cloudpickle

    try:
        cloudpickle.dumps(on_challenge)
    except Exception as exc:  # whatever the object's own pickling raises
        raise _config_error(
            "on_challenge",
            f"must pickle to go to the Dask workers with each partition (bf.answers({{...}}), or a function of a "
            f"module the workers can import); pickling this {type(on_challenge).__name__} raised "
            f"{type(exc).__name__}",
        ) from None
