"""The planning of ``bf.aexport`` in a thread of its own, which a cancelled task stops
(docs/export.md#one-run-at-a-time).

Planning takes the export directory's lock, waiting up to ``wait_lock`` seconds for the run that
holds it (``lock.py``). In a thread of ``asyncio.to_thread``, a cancelled task would leave that
thread waiting until the end of ``wait_lock``, then taking the lock for no one. Here the
cancellation stops the wait at once, so the thread ends; and a lock the thread took just as the
task was cancelled is released, never held by a run no one goes on with.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["THREAD", "plan_stoppable"]

#: The name of the thread that plans (and waits for the lock): what a test looks for.
THREAD = "bankfeed-aexport-plan"

_T = TypeVar("_T")


async def plan_stoppable(release: Callable[[_T], None], plan: Callable[..., _T], *args: Any, **options: Any) -> _T:
    """``plan(*args, stop=stop, **options)``, run in a thread of its own, as ``asyncio.to_thread``
    would; when the task is cancelled meanwhile, ``stop`` (a ``threading.Event``) is set, which
    ends a wait for the lock at once, and a plan made anyway is ``release``-d."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[_T] = loop.create_future()
    stop = threading.Event()
    # The caller's context variables, as asyncio.to_thread hands them over.
    context = contextvars.copy_context()
    # Between the thread handing its plan over and the task giving up on it: exactly one of them
    # releases a plan made as the task was cancelled.
    guard = threading.Lock()
    handed: list[_T] = []

    def settle(result: _T | None, error: BaseException | None) -> None:
        if done.done():  # cancelled with the task
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(result)  # type: ignore[arg-type]

    def work() -> None:
        try:
            result = context.run(plan, *args, stop=stop, **options)
        except BaseException as error:  # handed to the task, as asyncio.to_thread would
            with contextlib.suppress(RuntimeError):  # the event loop closed meanwhile
                loop.call_soon_threadsafe(settle, None, error)
            return
        with guard:
            wanted = not stop.is_set()
            if wanted:
                handed.append(result)
        if not wanted:
            release(result)
            return
        try:
            loop.call_soon_threadsafe(settle, result, None)
        except RuntimeError:  # the event loop closed meanwhile: no one goes on with it
            release(result)

    threading.Thread(target=work, name=THREAD, daemon=True).start()
    try:
        return await done
    except asyncio.CancelledError:
        with guard:
            stop.set()
            made = list(handed)
        # Handed over just as the task was cancelled: let go in a thread, for the cancellation
        # not to wait on a removal of a lock object.
        for result in made:
            threading.Thread(target=release, args=(result,), name=THREAD, daemon=True).start()
        raise
