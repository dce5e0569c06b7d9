"""``bf.acombine``: :func:`bankfeed.combine` for the async iterator of an ``AsyncClient``'s bulk call."""

from __future__ import annotations

from collections.abc import AsyncIterable, Iterator
from typing import TYPE_CHECKING

from bankfeed._native import _Gathering

if TYPE_CHECKING:
    from typing_extensions import TypeVar

    from bankfeed._native import Accounts, Attributes, Combined, Investments, Statements

    _E = TypeVar("_E", bound=BaseException, default=BaseException)

__all__ = ["acombine"]


async def acombine(
    pairs: AsyncIterable[tuple[str, Investments | Accounts | Attributes | Statements | _E]],
) -> Combined[_E]:
    """Gathers the ``(login_id, result_or_exception)`` pairs of an ``AsyncClient``'s bulk call into
    a :class:`bankfeed.Combined`, as :func:`bankfeed.combine` does for a ``Client``'s: one table
    per kind with a ``login_id`` column first, and the failures in ``errors``.

    Each result's rows are copied as it comes and the result is not kept, so the memory needed is
    about that of the combined tables::

        async with bf.AsyncClient(...) as client:
            combined = await bf.acombine(client.investments_many(login_ids, concurrency=64))
        positions = combined.positions.to_pandas()

    A bulk call closed while this reads it (``await results.aclose()`` from a watchdog task, or
    the client's ``close()``) ends it with what was fetched, and a :class:`bankfeed.ClientClosed`
    in ``errors`` for every login cut off. Cancelling this instead (``asyncio.timeout``) stops
    every login and raises, returning nothing.
    """
    given: object = pairs  # checked at run time whatever the annotation says: untyped callers pass anything
    if not isinstance(given, AsyncIterable):
        # A blocking bulk call's iterator given by mistake: its logins would go on running as long
        # as the exception (and so the iterator) is kept, as a notebook keeps the last one.
        close = getattr(given, "close", None) if isinstance(given, Iterator) else None
        if close is not None:
            close()
        # Progress is bankfeed._progress's wrapper of a blocking bulk call: named as users know it.
        ours = type(given).__name__ in ("_BulkResults", "Progress") and type(given).__module__.startswith("bankfeed")
        what = "bf.BulkResults" if ours else type(given).__name__
        raise TypeError(
            f"acombine takes an async iterable of (login_id, result) pairs, not {what}; "
            "bf.combine(...) gathers other pairs (a Client's bulk call, a list)"
            + ("; the iterator given was closed, so a bulk call's logins stop" if close is not None else "")
        )
    gathering = _Gathering()
    try:
        async for pair in pairs:
            gathering.add(pair)
    except BaseException:
        # A bulk call's logins stop when its iterator is closed: the traceback of a failure or a
        # cancel would otherwise keep the iterator, and so its logins, alive as long as it is.
        aclose = getattr(pairs, "aclose", None)
        if aclose is not None:
            await aclose()
        raise
    return gathering.finish()
