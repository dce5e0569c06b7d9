"""The progress display of the bulk calls (bankfeed._progress): the plain stderr line, the tqdm
bar (a fake tqdm module stands in for the real one), failures counted, and close() reaching the
wrapped iterator."""

from __future__ import annotations

import asyncio
import sys
import types
from collections.abc import AsyncIterator, Collection, Iterator
from typing import Any

import pytest

import bankfeed as bf
from bankfeed import BankfeedError, _progress
from bankfeed._type_aliases import AsyncBulkResults, BulkResults
from bfhelpers import Api

Item = tuple[str, object]


def items(n: int, failing: Collection[int] = ()) -> list[Item]:
    return [(f"L{i}", ValueError("no") if i in failing else i) for i in range(n)]


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def no_tqdm(monkeypatch: pytest.MonkeyPatch) -> None:
    """tqdm not installed (a None entry makes its import fail)."""
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """stderr as a terminal, where the plain line is rewritten in place (capsys's is not one)."""
    monkeypatch.setattr(_progress, "_stderr_is_terminal", lambda: True)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(_progress, "_clock", fake)
    return fake


class Closable:
    """An iterator over `values` that records whether it was closed; raises `error` at the end."""

    def __init__(self, values: list[Item], error: BaseException | None = None) -> None:
        self._values = iter(values)
        self._error = error
        self.closed = False

    def __iter__(self) -> Closable:
        return self

    def __next__(self) -> Item:
        try:
            return next(self._values)
        except StopIteration:
            if self._error is not None:
                raise self._error from None
            raise

    def close(self) -> None:
        self.closed = True


@pytest.mark.usefixtures("no_tqdm", "terminal")
def test_the_plain_line_counts_done_and_failed_and_ends_with_a_newline(
    capsys: pytest.CaptureFixture[str], clock: Clock
) -> None:
    wrapped = _progress.wrap(iter(items(3, failing={1})), 3, description="investments")
    got = []
    for item in wrapped:
        got.append(item)
        clock.now += 1.0
    assert [(login_id, type(result)) for login_id, result in got] == [("L0", int), ("L1", ValueError), ("L2", int)]
    err = capsys.readouterr().err
    assert err.endswith("\n")
    last = err.rstrip("\n").split("\r")[-1].rstrip()
    assert last == "investments: 3/3 (1 failed) 1.0/s"
    assert "investments: 1/3 (0 failed)" in err


@pytest.mark.usefixtures("no_tqdm", "terminal")
def test_the_plain_line_is_rewritten_at_most_ten_times_a_second(
    capsys: pytest.CaptureFixture[str], clock: Clock
) -> None:
    for _ in _progress.wrap(iter(items(1000)), 1000, description="x"):
        clock.now += 0.001  # a whole second over the 1000 items
    err = capsys.readouterr().err
    # About ten updates in the second, plus the final line.
    assert 9 <= err.count("\r") <= 12, err.count("\r")
    assert err.rstrip("\n").split("\r")[-1].startswith("x: 1000/1000 (0 failed)")


@pytest.mark.usefixtures("no_tqdm")
def test_without_a_terminal_the_plain_line_is_a_line_of_its_own_every_ten_seconds(
    capsys: pytest.CaptureFixture[str], clock: Clock
) -> None:
    # A cron job's log: lines, not one line of \r-separated updates.
    for _ in _progress.wrap(iter(items(1000)), 1000, description="x"):
        clock.now += 0.03  # 30 seconds over the 1000 items
    err = capsys.readouterr().err
    assert "\r" not in err
    lines = err.splitlines()
    assert 3 <= len(lines) <= 5, lines  # at 0, 10, 20 and 30 s, and the end if it differs
    assert lines[0].startswith("x: 1/1000 (0 failed)") and lines[-1].startswith("x: 1000/1000 (0 failed)"), lines
    assert err.endswith("\n")


@pytest.mark.usefixtures("no_tqdm")
def test_an_unknown_total_shows_a_question_mark(capsys: pytest.CaptureFixture[str]) -> None:
    list(_progress.wrap(iter(items(2)), None, description="x"))
    assert "x: 2/? (0 failed)" in capsys.readouterr().err


@pytest.mark.usefixtures("no_tqdm")
def test_close_reaches_the_wrapped_iterator(capsys: pytest.CaptureFixture[str]) -> None:
    finished: list[str] = []

    def bulk() -> Iterator[Item]:
        try:
            yield from items(10)
        finally:
            finished.append("closed")

    with _progress.wrap(bulk(), 10, description="x") as wrapped:
        for login_id, _ in wrapped:
            if login_id == "L2":
                break
    assert finished == ["closed"]
    assert capsys.readouterr().err.endswith("\n")

    inner = Closable(items(3))
    wrapped = _progress.wrap(inner, 3, description="x")
    next(wrapped)
    wrapped.close()
    assert inner.closed
    wrapped.close()  # a second close is harmless


@pytest.mark.usefixtures("no_tqdm")
def test_an_interrupt_while_waiting_closes_the_wrapped_iterator(capsys: pytest.CaptureFixture[str]) -> None:
    inner = Closable(items(2), error=KeyboardInterrupt())
    wrapped = _progress.wrap(inner, 5, description="x")
    with pytest.raises(KeyboardInterrupt):
        for _ in wrapped:
            pass
    assert inner.closed
    assert capsys.readouterr().err.endswith("\n")


@pytest.mark.usefixtures("no_tqdm")
def test_a_call_closed_before_its_end_says_so_on_its_last_line(capsys: pytest.CaptureFixture[str]) -> None:
    # The logins not read yet end as ClientClosed for whoever reads on, uncounted here: a last
    # line of "3/10 (0 failed)" alone would read, in a cron log, as a run where nothing failed.
    wrapped = _progress.wrap(Closable(items(10)), 10, description="x")
    for _ in range(3):
        next(wrapped)
    wrapped.close()
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "x: 3/10 (0 failed)" in last and "stopped: the logins not done end as ClientClosed" in last, last
    assert list(_progress.wrap(iter(items(3)), 3, description="x")) == items(3)
    assert "stopped" not in capsys.readouterr().err


@pytest.mark.usefixtures("no_tqdm")
def test_items_that_are_not_pairs_pass_through_uncounted_as_failures(capsys: pytest.CaptureFixture[str]) -> None:
    values: list[object] = [ValueError("alone"), ("a", "b", ValueError()), ("L", KeyboardInterrupt())]
    assert list(_progress.wrap(iter(values), 3, description="x")) == values
    assert "x: 3/3 (1 failed)" in capsys.readouterr().err


class FakeBar:
    """What the tests need of tqdm.tqdm."""

    made: list[FakeBar] = []  # noqa: RUF012 - the bars made by the test that runs

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs
        self.n = 0
        self.postfix: dict[str, Any] = {}
        self.closed = False
        FakeBar.made.append(self)

    def update(self, n: int) -> None:
        self.n += n

    def set_postfix(self, refresh: bool = True, **values: Any) -> None:
        self.postfix.update(values)

    def set_postfix_str(self, text: str, refresh: bool = True) -> None:
        self.postfix = {"text": text}

    def close(self) -> None:
        self.closed = True


def fake_tqdm(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    FakeBar.made = []
    module = types.ModuleType(name)
    module.tqdm = FakeBar  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, name, module)


def test_tqdm_is_used_when_installed(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delitem(sys.modules, "IPython", raising=False)
    fake_tqdm(monkeypatch, "tqdm")
    got = list(_progress.wrap(iter(items(4, failing={0, 3})), 4, description="attributes"))
    assert len(got) == 4
    [bar] = FakeBar.made
    assert bar.kwargs == {"total": 4, "desc": "attributes", "unit": "login"}
    assert (bar.n, bar.postfix, bar.closed) == (4, {"failed": 2}, True)
    assert capsys.readouterr().err == ""

    stopped = _progress.wrap(iter(items(4, failing={0})), 4, description="attributes")
    next(stopped)
    stopped.close()
    assert FakeBar.made[-1].postfix == {"text": "failed=1, stopped: the logins not done end as ClientClosed"}


@pytest.mark.parametrize(
    ("shell", "module", "other"),
    [("ZMQInteractiveShell", "tqdm.auto", "tqdm"), ("TerminalInteractiveShell", "tqdm", "tqdm.auto")],
    ids=["notebook", "terminal"],
)
def test_tqdm_auto_is_used_in_a_notebook_only(
    monkeypatch: pytest.MonkeyPatch, shell: str, module: str, other: str
) -> None:
    ipython = types.ModuleType("IPython")
    ipython.get_ipython = type(shell, (), {})  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    fake_tqdm(monkeypatch, module)
    monkeypatch.setitem(sys.modules, other, None)  # the other one must not be used
    list(_progress.wrap(iter(items(2)), 2, description="x"))
    assert [bar.n for bar in FakeBar.made] == [2]


async def abulk(values: list[Item], finished: list[str]) -> AsyncIterator[Item]:
    try:
        for value in values:
            await asyncio.sleep(0)
            yield value
    finally:
        finished.append("closed")


@pytest.mark.usefixtures("no_tqdm", "terminal")
def test_awrap_counts_and_closes(capsys: pytest.CaptureFixture[str]) -> None:
    async def main() -> tuple[list[Item], list[str], list[str]]:
        finished: list[str] = []
        got = [item async for item in _progress.awrap(abulk(items(3, failing={2}), finished), 3, description="a")]
        stopped: list[str] = []
        async with _progress.awrap(abulk(items(5), stopped), 5, description="b") as wrapped:
            async for login_id, _ in wrapped:
                if login_id == "L1":
                    break
        return got, finished, stopped

    got, finished, stopped = asyncio.run(main())
    assert [login_id for login_id, _ in got] == ["L0", "L1", "L2"]
    assert (finished, stopped) == (["closed"], ["closed"])
    err = capsys.readouterr().err
    assert "a: 3/3 (1 failed)" in err
    assert "b: 2/5 (0 failed)" in err
    assert err.count("\n") == 2


@pytest.mark.usefixtures("no_tqdm")
def test_awrap_closes_the_wrapped_iterator_when_its_task_is_cancelled() -> None:
    class Slow:
        closed = False

        def __aiter__(self) -> Slow:
            return self

        async def __anext__(self) -> Item:
            await asyncio.sleep(60)
            return ("L", 0)

        async def aclose(self) -> None:
            Slow.closed = True

    async def main() -> None:
        async def consume() -> None:
            async for _ in _progress.awrap(Slow(), 1, description="x"):
                pass

        task = asyncio.create_task(consume())
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert Slow.closed


def test_the_wrappers_are_bulk_results() -> None:
    """What a bulk call returns with progress=True still types as what it returns without."""
    pairs: list[tuple[str, int | BankfeedError]] = [("L", 1), ("M", bf.RetryLater("later"))]
    results: BulkResults[int] = _progress.wrap(iter(pairs), 2, description="x")

    async def apairs() -> AsyncIterator[tuple[str, int | BankfeedError]]:
        for pair in pairs:
            yield pair

    aresults: AsyncBulkResults[int] = _progress.awrap(apairs(), 2, description="x")
    assert next(results) == ("L", 1)
    results.close()

    async def first() -> tuple[str, int | BankfeedError]:
        try:
            return await aresults.__anext__()
        finally:
            await aresults.aclose()

    assert asyncio.run(first()) == ("L", 1)


@pytest.mark.usefixtures("no_tqdm")
def test_a_bulk_call_with_progress_shows_the_line(api: Api, capsys: pytest.CaptureFixture[str]) -> None:
    with bf.Sandbox(logins=4) as sb:
        client = api.client(sb)
        ids = [*sb.login_ids, "00000000-0000-4000-8000-000000000000"]
        results = api.collect(client.investments_many(ids, concurrency=2, progress=True))
    assert sorted(login_id for login_id, _ in results) == sorted(ids)
    last = capsys.readouterr().err.rstrip("\n").replace("\r", "\n").split("\n")[-1]
    assert last.startswith("investments: 5/5 (1 failed) "), last


class Unwritable:
    """A stderr that fails every write, as a closed one (`2>&-`) or a full disk does."""

    def write(self, text: str) -> int:
        raise OSError(28, "No space left on device")

    def flush(self) -> None:
        raise OSError(28, "No space left on device")

    def isatty(self) -> bool:
        return False


@pytest.mark.usefixtures("no_tqdm")
@pytest.mark.parametrize("stderr", [Unwritable(), None], ids=["full", "none"])
def test_a_stderr_that_cannot_be_written_loses_the_display_not_the_results(
    monkeypatch: pytest.MonkeyPatch, stderr: object
) -> None:
    monkeypatch.setattr(sys, "stderr", stderr)
    inner = Closable(items(5, failing={3}))
    assert [login_id for login_id, _ in _progress.wrap(inner, 5, description="x")] == ["L0", "L1", "L2", "L3", "L4"]


class FailingTqdm:
    """A tqdm whose writes to stderr fail, as tqdm's do on a closed stderr: at once when it draws
    its bar (``__init__``), or at an update or at the end."""

    fail_in = "__init__"

    def __init__(self, **_: object) -> None:
        self._fail("__init__")
        self.n = 0

    def _fail(self, where: str) -> None:
        if where == self.fail_in:
            raise OSError(9, "Bad file descriptor")

    def update(self, n: int = 1) -> None:
        self._fail("update")

    def set_postfix(self, refresh: bool = True, **postfix: object) -> None:
        self._fail("update")

    def close(self) -> None:
        self._fail("close")


@pytest.mark.parametrize("fail_in", ["__init__", "update", "close"])
def test_a_tqdm_that_cannot_write_loses_the_display_not_the_results(
    monkeypatch: pytest.MonkeyPatch, fail_in: str
) -> None:
    fake = types.ModuleType("tqdm")
    fake.tqdm = type("tqdm", (FailingTqdm,), {"fail_in": fail_in})  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tqdm", fake)
    monkeypatch.setitem(sys.modules, "tqdm.auto", fake)
    inner = Closable(items(5, failing={3}))
    assert [login_id for login_id, _ in _progress.wrap(inner, 5, description="x")] == ["L0", "L1", "L2", "L3", "L4"]
