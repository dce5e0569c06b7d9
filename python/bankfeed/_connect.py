"""``client.connect(...)``: the widget's URL built with the loopback catcher as its redirect,
opened for the person connecting, and the catcher waited on (docs/connect.md#from-a-script).

The catcher is bound and waited on by the core, each wait a call of the client (so Ctrl-C, task
cancellation, ``close()`` and ``deadline`` end it as any other call); what is Python's here is
what only Python can do: open the browser, or call the caller's ``on_url``.
"""

from __future__ import annotations

import logging
import sys
import threading
import webbrowser
from collections.abc import Callable, Coroutine
from typing import Any

from bankfeed._native import Connection, ConnectUrl, _Catcher

_log = logging.getLogger("bankfeed.connect")


def _show(url: ConnectUrl, open_browser: bool, on_url: Callable[[ConnectUrl], object] | None) -> None:
    """Gives the person connecting the URL: to ``on_url``, else to the browser, else on stderr.

    Only the masked URL is logged; the whole one (its token single use, for 30 minutes) goes
    where it is opened, or to stderr when asked not to open it (``open_browser=False``), since
    the person must be able to open it by hand."""
    _log.info("connect: the widget's URL is %s", url)
    if on_url is not None:
        on_url(url)
    elif open_browser and webbrowser.open(url.reveal()):
        print(f"bankfeed: connect your bank in the browser tab that opened ({url.base})", file=sys.stderr)
    else:
        print(
            "bankfeed: open this address in a browser to connect your bank (it holds a single-use token;"
            f" do not share it):\n{url.reveal()}",
            file=sys.stderr,
        )


def run(
    client: Any,
    catcher: _Catcher,
    options: dict[str, Any],
    timeout: float,
    open_browser: bool,
    on_url: Callable[[ConnectUrl], object] | None,
    is_async: bool,
) -> Connection | Coroutine[Any, Any, Connection]:
    """The steps of ``client.connect``, run the way the client runs its calls."""
    if is_async:
        return _arun(client, catcher, options, timeout, open_browser, on_url)
    url = client.connect_url(redirect_url=catcher.url, **options)
    _show(url, open_browser, on_url)
    connection: Connection = catcher.wait(timeout)
    return connection


async def _arun(
    client: Any,
    catcher: _Catcher,
    options: dict[str, Any],
    timeout: float,
    open_browser: bool,
    on_url: Callable[[ConnectUrl], object] | None,
) -> Connection:
    url = await client.connect_url(redirect_url=catcher.url, **options)
    if on_url is None:
        # A browser command may return only when its page is done (webbrowser waits for it): on
        # a thread of its own it does not stall the event loop meanwhile.
        threading.Thread(target=_show, args=(url, open_browser, None), name="bankfeed-browser", daemon=True).start()
    else:
        _show(url, open_browser, on_url)
    connection: Connection = await catcher.wait(timeout)
    return connection
