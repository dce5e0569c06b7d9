"""Where a login's ``on_challenge`` handler runs (docs/architecture.md#challenge-handlers).

A handler may block for as long as the end user takes to answer (``input()``, a web form, a
trusted device). So that the call's ``deadline`` and the client's ``close()`` still end the call
on time, the handler never runs on the thread that waits for the call: a plain function runs on
a daemon thread of its own, in a copy of the caller's ``contextvars`` context, and an ``async
def`` handler of an ``AsyncClient`` runs as a task of the call's event loop. When the call ends
first, the thread is left to finish on its own and what it returns is dropped; the task is
cancelled. ``bf.answers(...)`` handlers, which only look their answers up, run where they are
called.

The native runners call these functions; ``deliver(ok, value)`` hands back what the handler
returned (``ok`` true) or raised (``ok`` false).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import inspect
import threading
from collections.abc import Callable
from typing import Any

from bankfeed._answers import CannedAnswers

Deliver = Callable[[bool, Any], None]


def _call(handler: Callable[[Any], Any], challenge: object, deliver: Deliver, context: contextvars.Context) -> None:
    try:
        answered = context.run(handler, challenge)
    except BaseException as error:  # the handler's own exception, raised by the call
        deliver(False, error)
    else:
        deliver(True, answered)


def _on_a_thread(handler: Callable[[Any], Any], challenge: object, deliver: Deliver) -> None:
    """Runs ``handler(challenge)`` on a daemon thread: a handler still blocked when the program
    ends does not keep the process alive."""
    context = contextvars.copy_context()
    threading.Thread(
        target=_call, args=(handler, challenge, deliver, context), name="bankfeed on_challenge", daemon=True
    ).start()


def run_blocking(handler: Callable[[Any], Any], challenge: object, deliver: Deliver) -> None:
    """For a ``Client``: runs the handler off the calling thread, which goes on waiting for the
    call (and for Ctrl-C, the deadline and ``close()``)."""
    if isinstance(handler, CannedAnswers):
        _call(handler, challenge, deliver, contextvars.copy_context())
        return
    _on_a_thread(handler, challenge, deliver)


def _is_async(handler: Callable[[Any], Any]) -> bool:
    """Whether calling ``handler`` gives a coroutine without running its body: an ``async def``
    function, method or ``functools.partial`` of one, or an object whose ``__call__`` is one."""
    if inspect.iscoroutinefunction(handler):
        return True
    if inspect.isroutine(handler) or isinstance(handler, functools.partial):
        return False
    # An object whose class has `async def __call__` (looked up as Python looks it up for a call).
    return inspect.iscoroutinefunction(inspect.getattr_static(type(handler), "__call__", None))


def _deliver_task(deliver: Deliver, task: asyncio.Future[Any]) -> None:
    if task.cancelled():
        deliver(False, asyncio.CancelledError())
        return
    error = task.exception()
    if error is not None:
        deliver(False, error)
    else:
        deliver(True, task.result())


def _await_on(loop: asyncio.AbstractEventLoop, awaitable: Any, deliver: Deliver) -> asyncio.Future[Any]:
    task: asyncio.Future[Any] = asyncio.ensure_future(awaitable, loop=loop)
    task.add_done_callback(functools.partial(_deliver_task, deliver))
    return task


def run_on_loop(
    loop: asyncio.AbstractEventLoop, handler: Callable[[Any], Any], challenge: object, deliver: Deliver
) -> asyncio.Future[Any] | None:
    """For an ``AsyncClient``, on the loop's thread: an ``async def`` handler as a task of the loop
    (returned, to be cancelled with its call); a plain one on a thread of its own, whose outcome
    comes back on the loop's thread (an awaitable it returns is then awaited there)."""
    if isinstance(handler, CannedAnswers):
        _call(handler, challenge, deliver, contextvars.copy_context())
        return None
    if _is_async(handler):
        try:
            awaitable = handler(challenge)
        except BaseException as error:  # raised by the call, as above
            deliver(False, error)
            return None
        return _await_on(loop, awaitable, deliver)

    def settle(ok: bool, value: Any) -> None:
        if ok and inspect.isawaitable(value):
            _await_on(loop, value, deliver)
        else:
            deliver(ok, value)

    def back(ok: bool, value: Any) -> None:
        # A closed loop raises RuntimeError: the call it served is over, and nobody waits.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle, ok, value)

    _on_a_thread(handler, challenge, back)
    return None
