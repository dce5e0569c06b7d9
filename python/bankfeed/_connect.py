"""``client.connect(...)``: the loopback catcher bound once the authorize token is minted, the
widget opened for the person connecting, and the catcher waited on (docs/connect.md#from-a-script).

The catcher is bound and waited on by the core, each step a call of the client (so Ctrl-C, task
cancellation, ``close()`` and ``deadline`` end it as any other call); what is Python's here is
what only Python can do: open the browser, or call the caller's ``on_url``. The catcher is closed
on every way out, before an exception leaves: a kept exception (a notebook keeps the last one)
must not keep its port listening.
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


def _show(catcher: _Catcher, open_browser: bool, on_url: Callable[[ConnectUrl], object] | None) -> None:
    """Gives the person connecting the widget: its URL to ``on_url``, else the catcher's launch
    page to the browser, else the launch page's address on stderr.

    The browser is opened at the launch page, never at the widget's URL: a browser command's
    arguments are readable by every local user, and the widget's URL holds the authorize token
    and the catcher's return path. The launch page sends the browser on to the widget once. Only
    the masked URL is logged."""
    url = catcher.widget
    _log.info("connect: the widget's URL is %s", url)
    if on_url is not None:
        on_url(url)
    elif open_browser and webbrowser.open(catcher.launch_url):
        print(f"bankfeed: connect your bank in the browser tab that opened ({url.base})", file=sys.stderr)
    else:
        print(
            "bankfeed: open this address in a browser on this computer to connect your bank (it works once,"
            f" while this program waits):\n{catcher.launch_url}",
            file=sys.stderr,
        )


def run(
    start: Callable[[], Any],
    timeout: float,
    open_browser: bool,
    on_url: Callable[[ConnectUrl], object] | None,
    is_async: bool,
) -> Connection | Coroutine[Any, Any, Connection]:
    """The steps of ``client.connect``, run the way the client runs its calls; ``start()`` mints
    the token and binds the catcher (a ``_Catcher``, or a coroutine of one)."""
    if is_async:
        return _arun(start, timeout, open_browser, on_url)
    catcher: _Catcher = start()
    try:
        _show(catcher, open_browser, on_url)
        connection: Connection = catcher.wait(timeout)
        return connection
    finally:
        catcher.close()


async def _arun(
    start: Callable[[], Any],
    timeout: float,
    open_browser: bool,
    on_url: Callable[[ConnectUrl], object] | None,
) -> Connection:
    catcher: _Catcher = await start()
    try:
        if on_url is None:
            # A browser command may return only when its page is done (webbrowser waits for it):
            # on a thread of its own it does not stall the event loop meanwhile.
            threading.Thread(
                target=_show, args=(catcher, open_browser, None), name="bankfeed-browser", daemon=True
            ).start()
        else:
            _show(catcher, open_browser, on_url)
        connection: Connection = await catcher.wait(timeout)
        return connection
    finally:
        catcher.close()
