"""Fork: calls in a forked child, and in process pools of every start method, after the parent
used bankfeed (docs/architecture.md#fork-and-child-processes).

Every wait on a child has a deadline, so a hang fails the test instead of hanging the suite."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
import warnings
from collections.abc import Callable
from typing import Any

import pytest

import bankfeed as bf
from bfhelpers import INSTITUTION, PASSWORD, is_guid, login_id_of

#: How long a child may take: generous on a loaded machine, far below "forever".
DEADLINE = 60.0

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")

#: The client a fork worker inherits from the parent (spawn and forkserver workers build theirs).
_INHERITED: bf.Client | None = None


@pytest.fixture
def warm(client: bf.Client) -> tuple[bf.Client, str]:
    """A client the parent has used (its runtime and connection pool are live), and a LoginId."""
    session = client.authorize(INSTITUTION, "greatday_nomfa", PASSWORD, save=True)
    assert isinstance(session, bf.Session)
    login_id = login_id_of(session)
    assert isinstance(client.authorize_cached(login_id), bf.Session)
    return client, login_id


def calls(client: bf.Client, login_id: str) -> str:
    """A few calls through the whole stack; returns the RequestId of the last one."""
    session = client.authorize(INSTITUTION, "greatday_nomfa", PASSWORD)
    assert isinstance(session, bf.Session)
    cached = client.authorize_cached(login_id)
    assert is_guid(cached.request_id)
    return cached.request_id


def in_child(body: Callable[[], object], deadline: float = DEADLINE) -> tuple[int, str]:
    """Runs ``body`` in a forked child; returns its exit code and what it wrote. The parent waits at
    most ``deadline`` seconds, then kills the child and fails."""
    read, write = os.pipe()
    with warnings.catch_warnings():
        # Python 3.12+ warns that forking a threaded process is risky: that risk is what is tested.
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe and its exit code
        os.close(read)
        code = 0
        try:
            body()
            os.write(write, b"ok")
        except BaseException as exc:
            os.write(write, f"{type(exc).__name__}: {exc}".encode())
            code = 1
        finally:
            os._exit(code)
    os.close(write)
    started = time.monotonic()
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() - started > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(read)
            pytest.fail(f"the forked child hung for {deadline} s")
        time.sleep(0.02)
    with os.fdopen(read, "rb") as pipe:
        said = pipe.read().decode(errors="replace")
    return os.waitstatus_to_exitcode(status), said


def test_calls_in_a_forked_child(warm: tuple[bf.Client, str]) -> None:
    client, login_id = warm
    code, said = in_child(lambda: calls(client, login_id))
    assert (code, said) == (0, "ok")
    # The parent's runtime and pool were left alone: it carries on.
    assert is_guid(calls(client, login_id))


def test_calls_in_a_grandchild(warm: tuple[bf.Client, str]) -> None:
    client, login_id = warm

    def child() -> None:
        calls(client, login_id)
        code, said = in_child(lambda: calls(client, login_id))
        assert (code, said) == (0, "ok"), (code, said)
        calls(client, login_id)

    assert in_child(child) == (0, "ok")


def test_a_client_built_in_the_child(sandbox: bf.Sandbox, warm: tuple[bf.Client, str]) -> None:
    _, login_id = warm
    code, said = in_child(lambda: calls(sandbox.client(poll_interval=0.01), login_id))
    assert (code, said) == (0, "ok")


def test_timeout_is_honoured_in_a_forked_child(warm: tuple[bf.Client, str]) -> None:
    """Before the fix, a child's call ignored ``timeout=`` and hung forever."""
    with socket.create_server(("127.0.0.1", 0)) as silent:
        port = silent.getsockname()[1]
        client = bf.Client(f"http://127.0.0.1:{port}", warm[0].customer_id, timeout=0.5, max_retries=0)

        def child() -> None:
            started = time.monotonic()
            with pytest.raises(bf.BankfeedError):
                client.authorize_cached(warm[1])
            assert time.monotonic() - started < 15

        assert in_child(child) == (0, "ok")


def test_a_child_that_exits_normally_leaves_the_parents_sandbox_alone() -> None:
    """A child that returns through Python's normal exit drops its copies of the sandbox and the
    client: nothing may panic, hang, or stop the parent's server. Run in a script of its own,
    since a normal exit of a child forked from pytest would run pytest's own exit handlers."""
    code = textwrap.dedent(
        f"""
        import os, sys, time, warnings
        import bankfeed as bf
        sandbox = bf.Sandbox()
        client = sandbox.client(poll_interval=0.01)
        client.authorize({INSTITUTION!r}, "greatday_nomfa", {PASSWORD!r})
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
        if pid == 0:
            client.authorize({INSTITUTION!r}, "greatday_nomfa", {PASSWORD!r})
            sys.exit(0)
        started = time.monotonic()
        while not os.waitpid(pid, os.WNOHANG)[0]:
            if time.monotonic() - started > {DEADLINE}:
                os.kill(pid, 9)
                sys.exit("the child hung")
            time.sleep(0.02)
        client.authorize({INSTITUTION!r}, "greatday_nomfa", {PASSWORD!r})
        print("parent carried on")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=2 * DEADLINE, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "parent carried on"
    assert "panicked" not in done.stderr and "Exception" not in done.stderr, done.stderr[-3000:]


@pytest.mark.parametrize("flavor", ["sync", "async"])
def test_a_bulk_iterator_read_in_a_forked_child_is_refused_at_once(flavor: str) -> None:
    """A bulk call's results reach only the process that started it (its logins run on the
    parent's threads): before the fix, the child's next() waited forever, whatever ``deadline``."""
    with bf.Sandbox(logins=3, pending_polls=2) as sandbox:
        bulk_call_in_a_child(sandbox, flavor)


def bulk_call_in_a_child(sandbox: bf.Sandbox, flavor: str) -> None:
    """Starts a bulk call, reads it in a forked child (refused), then reads it all in the parent."""
    options: dict[str, Any] = {"poll_interval": 0.01, "deadline": 5}
    ids = list(sandbox.login_ids)
    if flavor == "async":
        aclient = sandbox.async_client(**options)
        aresults = aclient.investments_many(ids)

        def child() -> None:
            with pytest.raises(bf.ClientClosed) as info:
                asyncio.run(anext_of(aresults))
            check_refusal(info.value)

        async def gather() -> list[tuple[str, object]]:
            return [pair async for pair in aresults]

        def rest() -> list[tuple[str, object]]:
            return asyncio.run(gather())

    else:
        results = sandbox.client(**options).investments_many(ids)

        def child() -> None:
            with pytest.raises(bf.ClientClosed) as info:
                next(results)
            check_refusal(info.value)

        def rest() -> list[tuple[str, object]]:
            return list(results)

    # Generous for a loaded machine; the refusal itself is immediate.
    assert in_child(child, deadline=15) == (0, "ok")
    # The parent still reads every pair.
    pairs = rest()
    assert sorted(login_id for login_id, _ in pairs) == sorted(ids)
    assert all(isinstance(result, bf.Investments) for _, result in pairs), pairs


async def anext_of(results: Any) -> object:
    return await results.__anext__()


def check_refusal(error: bf.ClientClosed) -> None:
    """The refusal names the call, the parent's process and what to do."""
    assert error.operation == "investments_many"
    text = str(error)
    assert f"started in process {os.getppid()}" in text and "forked child" in text, text
    assert "start the call in the child" in text, text


def pool_work(config: tuple[str, str, str | None, str | None, str]) -> str:
    """A pool task: the inherited client under fork, a client of its own otherwise (made from the
    sandbox's URL, customer id and keys, as a worker of another process makes it)."""
    url, customer_id, secret_key, api_key, login_id = config
    if _INHERITED is not None:
        client = _INHERITED
    else:
        client = bf.Client(url, customer_id, secret_key=secret_key, api_key=api_key, poll_interval=0.01)
    return calls(client, login_id)


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_process_pools(
    sandbox: bf.Sandbox, warm: tuple[bf.Client, str], method: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    client, login_id = warm
    if method == "fork":
        monkeypatch.setattr(sys.modules[__name__], "_INHERITED", client)
    context = multiprocessing.get_context(method)
    config = (sandbox.url, sandbox.customer_id, sandbox.secret_key, sandbox.api_key, login_id)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        pool = context.Pool(2)
    try:
        ids = pool.map_async(pool_work, [config] * 6).get(timeout=DEADLINE)
    except multiprocessing.TimeoutError:
        pytest.fail(f"a {method} pool hung for {DEADLINE} s")
    finally:
        pool.terminate()
        pool.join()
    assert len(ids) == 6 and all(map(is_guid, ids))
    assert is_guid(calls(client, login_id))
