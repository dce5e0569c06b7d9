"""Where a login's ``on_challenge`` handler runs (docs/architecture.md#challenge-handlers).

A handler may block for as long as the end user takes to answer (``input()``, a web form, a
trusted device). So that the call's ``deadline`` and the client's ``close()`` still end the call
on time, the handler never runs on the thread that waits for the call: a plain function runs on
a daemon thread of its own, in a copy of the caller's ``contextvars`` context, and an ``async
def`` handler of an ``AsyncClient`` runs as a task of the call's event loop. When the call ends
first, the thread is left to finish on its own and what it returns is dropped; the task is
cancelled. ``bf.answers(...)`` handlers, which only look their answers up, run where they are
called.

A handler on a thread of its own is told when its call ends: the runner calls ``cancel()`` on the
:class:`_Answering` it got back, on the thread that waited for the call, however the call ended
(and also after the handler answered, when nothing is left to stop). A handler that waits for a
person registers what stops it with :func:`when_call_ends` (``bf.ask_in_terminal`` stops reading
the terminal), and one whose class has a ``_guard_call()`` method has it called on the waiting
thread before it starts, its undo called there when the call ends (``bf.ask_in_terminal`` puts
the terminal's echo back on signals that end the process: only the main thread may set those).

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


class _Answering:
    """A plain handler on a thread of its own, as its call's runner holds it."""

    def __init__(self, undo: Callable[[], None] | None) -> None:
        self._lock = threading.Lock()
        self._ended = False
        self._callbacks: list[Callable[[], None]] = []
        self._undo = undo

    def when_ends(self, callback: Callable[[], None]) -> Callable[[], None]:
        with self._lock:
            if not self._ended:
                self._callbacks.append(callback)
                return functools.partial(self._forget, callback)
        callback()  # the call has ended already
        return _nothing

    def _forget(self, callback: Callable[[], None]) -> None:
        with self._lock, contextlib.suppress(ValueError):
            self._callbacks.remove(callback)

    def cancel(self) -> None:
        """The call has ended: runs what the handler registered, then the undo of its guard.
        Called on the thread that waited for the call; a second call does nothing."""
        with self._lock:
            if self._ended:
                return
            self._ended = True
            callbacks, self._callbacks = self._callbacks, []
        failed: list[Exception] = []
        for callback in callbacks:
            try:
                callback()
            except Exception as error:  # the others still run; the first is raised after
                failed.append(error)
        if self._undo is not None:
            self._undo()
        if failed:
            raise failed[0]


def _nothing() -> None:
    pass


#: The handler's own call, in the context its thread runs in; None outside one.
_ANSWERING: contextvars.ContextVar[_Answering | None] = contextvars.ContextVar("bankfeed_answering", default=None)


def when_call_ends(callback: Callable[[], None]) -> Callable[[], None]:
    """For a handler running on a thread of its own: ``callback()`` is called once the call it
    answers has ended (at once if it has), on the thread that waited for the call. Returns the
    function that takes it back. Outside a call (a handler called by hand), nothing calls it."""
    answering = _ANSWERING.get()
    return _nothing if answering is None else answering.when_ends(callback)


def _guard_of(handler: Callable[[Any], Any]) -> Callable[[], None] | None:
    """Runs the handler's ``_guard_call()``, when its class has one, on this thread (the one that
    waits for the call); returns its undo."""
    if inspect.getattr_static(type(handler), "_guard_call", None) is None:
        return None
    undo: Callable[[], None] | None = handler._guard_call()  # type: ignore[attr-defined]
    return undo


def _call(handler: Callable[[Any], Any], challenge: object, deliver: Deliver, context: contextvars.Context) -> None:
    try:
        answered = context.run(handler, challenge)
    except BaseException as error:  # the handler's own exception, raised by the call
        deliver(False, error)
    else:
        deliver(True, answered)


def _on_a_thread(handler: Callable[[Any], Any], challenge: object, deliver: Deliver) -> _Answering:
    """Runs ``handler(challenge)`` on a daemon thread: a handler still blocked when the program
    ends does not keep the process alive. Returns what the runner tells when the call ends."""
    answering = _Answering(_guard_of(handler))
    context = contextvars.copy_context()
    context.run(_ANSWERING.set, answering)
    try:
        threading.Thread(
            target=_call, args=(handler, challenge, deliver, context), name="bankfeed on_challenge", daemon=True
        ).start()
    except BaseException:
        answering.cancel()
        raise
    return answering


def run_blocking(handler: Callable[[Any], Any], challenge: object, deliver: Deliver) -> _Answering | None:
    """For a ``Client``: runs the handler off the calling thread, which goes on waiting for the
    call (and for Ctrl-C, the deadline and ``close()``). Returns what is to be told when the call
    ends, for a handler on a thread of its own."""
    if isinstance(handler, CannedAnswers):
        _call(handler, challenge, deliver, contextvars.copy_context())
        return None
    return _on_a_thread(handler, challenge, deliver)


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
) -> asyncio.Future[Any] | _Answering | None:
    """For an ``AsyncClient``, on the loop's thread: an ``async def`` handler as a task of the loop
    (returned, to be cancelled with its call); a plain one on a thread of its own, whose outcome
    comes back on the loop's thread (an awaitable it returns is then awaited there), and whose
    :class:`_Answering` is returned, to be cancelled as the task is."""
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

    return _on_a_thread(handler, challenge, back)
