"""What a notebook user sees of an object without calling it: reprs that say what the object is
and where it stands (never a secret), the warning of an async call never awaited, and the
notebook view of an AsyncChallenge."""

from __future__ import annotations

import asyncio
import gc
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Iterator
from typing import Any, cast

import pytest

import bankfeed as bf
from bankfeed import _progress
from bfhelpers import GREATDAY, INSTITUTION, PASSWORD, assert_secret_free, fast_async_client

NEVER_AWAITED = r"AsyncClient\.investments\(\.\.\.\) was never awaited"


@pytest.fixture(scope="module")
def sb() -> Iterator[bf.Sandbox]:
    """A sandbox of 3 saved MFA-free logins whose data calls answer 202 once."""
    with bf.Sandbox(logins=3, pending_polls=1) as sandbox:
        yield sandbox


def never_awaited(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if "never awaited" in str(w.message)]


# --- The awaitable of an async call -------------------------------------------------------------


def test_an_async_call_names_its_operation_and_none_of_its_arguments(sb: bf.Sandbox) -> None:
    client = fast_async_client(sb)
    login_id = sb.login_ids[0]
    call = client.investments(login_id)
    assert repr(call) == "<awaitable AsyncClient.investments(...)>"
    call.close()
    assert repr(call) == "<awaitable AsyncClient.investments(...) (done)>"
    login = client.login(INSTITUTION, "Greatday", PASSWORD, on_challenge=bf.answers(GREATDAY))
    assert repr(login) == "<awaitable AsyncClient.login(...)>"
    login.close()
    keyed = bf.AsyncClient(sb.url, sb.customer_id, api_key="ak-repr-7731", secret_key="sk-repr-7731")
    saved = keyed.authorize_cached(login_id)
    assert repr(saved) == "<awaitable AsyncClient.authorize_cached(...)>" and login_id not in repr(saved)
    assert_secret_free(repr(login), repr(saved), extra=["ak-repr-7731", "sk-repr-7731", *GREATDAY.values()])
    saved.close()

    async def main() -> tuple[str, str]:
        session = await client.authorize_cached(login_id)
        data = session.investments()
        data.close()
        step = await client.authorize(INSTITUTION, "Greatday", PASSWORD)
        assert isinstance(step, bf.AsyncChallenge)
        answer = step.answer({prompt: GREATDAY[prompt] for prompt in step.prompts})
        text = repr(answer)
        answer.close()
        return repr(data), text

    assert asyncio.run(main()) == (
        "<awaitable AsyncSession.investments(...) (done)>",
        "<awaitable AsyncChallenge.answer(...)>",
    )


def test_a_call_never_awaited_warns_where_it_was_dropped_and_sent_nothing(sb: bf.Sandbox) -> None:
    client = fast_async_client(sb)
    before = sb.request_count
    with pytest.warns(RuntimeWarning, match=NEVER_AWAITED) as caught:
        # The forgotten `await` of the user test: dropped at once, by its reference count.
        client.investments(sb.login_ids[0])  # type: ignore[unused-coroutine]
    assert len(never_awaited(caught.list)) == 1
    assert caught.list[0].filename == __file__, "attributed to the line that dropped the call"
    assert sb.request_count == before


def test_a_call_dropped_while_an_exception_propagates_warns_and_keeps_the_exception(sb: bf.Sandbox) -> None:
    client = fast_async_client(sb)
    zero = 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(ZeroDivisionError):
            # The call is on the stack when the division fails: dropped as the exception unwinds.
            _ = [client.investments(sb.login_ids[0]), 1 / zero]
        gc.collect()
    assert len(never_awaited(caught)) == 1, [str(w.message) for w in caught]


def test_awaited_cancelled_or_closed_calls_do_not_warn(sb: bf.Sandbox) -> None:
    client = fast_async_client(sb)
    slow = fast_async_client(sb, poll_interval=30)
    login_id = sb.login_ids[1]

    async def main() -> None:
        await client.investments(login_id)
        # Cancelled before its first step, and while it waits for its poll.
        unstarted = asyncio.ensure_future(client.investments(login_id))
        unstarted.cancel()
        running = asyncio.ensure_future(slow.investments(login_id))
        await asyncio.sleep(0.05)
        running.cancel()
        for task in (unstarted, running):
            with pytest.raises(asyncio.CancelledError):
                await task
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(slow.investments(login_id), 0.01)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        asyncio.run(main())
        client.investments(login_id).close()
        gc.collect()
    assert not never_awaited(caught), never_awaited(caught)


def test_no_warning_or_error_at_exit_with_a_call_never_awaited() -> None:
    code = textwrap.dedent(
        """
        import bankfeed as bf
        client = bf.AsyncClient("http://127.0.0.1:9", "43387ca6-0391-4c82-857d-70d95f087ecb")
        pending = client.investments("7a1c1bb5-4ba2-4d54-9f3e-3d2c25e0a7a1")
        """
    )
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_an_attribute_of_a_call_asks_whether_await_was_forgotten(sb: bf.Sandbox) -> None:
    call = fast_async_client(sb).authorize_cached(sb.login_ids[0])
    with pytest.raises(AttributeError, match="did you forget `await`") as info:
        cast(Any, call).investments()
    assert "AsyncClient.authorize_cached(...) is an awaitable" in str(info.value)
    assert str(info.value).startswith("'bankfeed._Call' object has no attribute 'investments': ")
    assert not hasattr(call, "_not_there") and not hasattr(call, "cr_frame")
    call.close()


# --- Clients, bulk calls, progress --------------------------------------------------------------


@pytest.mark.parametrize("cls", [bf.Client, bf.AsyncClient])
def test_a_closed_client_says_so(sb: bf.Sandbox, cls: type[bf.Client] | type[bf.AsyncClient]) -> None:
    client = cls(sb.url, sb.customer_id, api_key="ak-repr-7731")
    assert "closed" not in repr(client)
    client.close()
    assert repr(client).startswith(f"{cls.__name__}(") and repr(client).endswith(", closed=True)")
    assert_secret_free(repr(client), extra=["ak-repr-7731"])


def test_a_bulk_call_names_its_operation_and_where_it_stands(sb: bf.Sandbox) -> None:
    client = sb.client(poll_interval=0.01, poll_timeout=10)
    results = client.investments_many(sb.login_ids)
    assert repr(results) == "<bankfeed bulk results of Client.investments_many(...): running>"
    assert len(list(results)) == len(sb.login_ids)
    assert repr(results) == "<bankfeed bulk results of Client.investments_many(...): ended>"
    closed = client.accounts_detail_many(sb.login_ids)
    closed.close()
    assert repr(closed) == "<bankfeed bulk results of Client.accounts_detail_many(...): closed>"

    async def main() -> list[str]:
        aclient = fast_async_client(sb)
        aresults = aclient.investments_many(sb.login_ids)
        seen = [repr(aresults)]
        async for _ in aresults:
            pass
        seen.append(repr(aresults))
        aclosed = aclient.attributes_many(sb.login_ids, package="income")
        await aclosed.aclose()
        return [*seen, repr(aclosed)]

    assert asyncio.run(main()) == [
        "<bankfeed bulk results of AsyncClient.investments_many(...): running>",
        "<bankfeed bulk results of AsyncClient.investments_many(...): ended>",
        "<bankfeed bulk results of AsyncClient.attributes_many(...): closed>",
    ]


def test_the_progress_wrappers_say_what_they_count() -> None:
    pairs: list[tuple[str, object]] = [("L0", 1), ("L1", ValueError("no")), ("L2", 2)]
    progress = _progress.wrap(iter(pairs), 3, description="investments")
    next(progress)
    next(progress)
    assert repr(progress) == "<bankfeed Progress of investments: 2/3 done, 1 failed>"
    progress.close()
    assert repr(progress) == "<bankfeed Progress of investments: 2/3 done, 1 failed, closed>"

    async def apairs() -> Any:
        for pair in pairs:
            yield pair

    async def main() -> list[str]:
        aprogress = _progress.awrap(apairs(), None, description="accounts detail")
        seen = [repr(aprogress)]
        await aprogress.__anext__()
        await aprogress.aclose()
        return [*seen, repr(aprogress)]

    assert asyncio.run(main()) == [
        "<bankfeed AsyncProgress of accounts detail: 0/? done, 0 failed>",
        "<bankfeed AsyncProgress of accounts detail: 1/? done, 0 failed, closed>",
    ]


# --- Notebook view ------------------------------------------------------------------------------


def test_the_notebook_view_of_an_async_challenge_says_await(sb: bf.Sandbox) -> None:
    sync_step = sb.client().authorize(INSTITUTION, "Greatday", PASSWORD)
    assert isinstance(sync_step, bf.Challenge)
    html = sync_step._repr_html_()
    assert "<b>Challenge</b>" in html and "<code>step.answer(answers)</code>" in html
    assert "await" not in html

    async def main() -> str:
        step = await fast_async_client(sb).authorize(INSTITUTION, "Greatday", PASSWORD)
        assert isinstance(step, bf.AsyncChallenge)
        return step._repr_html_()

    html = asyncio.run(main())
    assert "<b>AsyncChallenge</b>" in html and "<code>await step.answer(answers)</code>" in html
    assert_secret_free(html, extra=GREATDAY.values())


def test_a_session_shows_its_login_id_as_python_would(sb: bf.Sandbox) -> None:
    # A session of a RequestId alone has no LoginId: None, not the string "None".
    assert repr(sb.client().session("r-1")) == 'Session(request_id="r-1", login_id=None)'
    login_id = "0b9a4c1e-2f3d-4a5b-8c6d-7e8f9a0b1c2d"
    saved = sb.client().session("r-2", login_id=login_id)
    assert repr(saved) == f'Session(request_id="r-2", login_id="{login_id}")' and saved.login_id == login_id
