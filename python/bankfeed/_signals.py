"""How the long-running commands (``bankfeed sandbox``, ``bankfeed export``) take a signal: SIGTERM,
and SIGINT always, stop them as Ctrl-C does (docs/sandbox.md, docs/export.md), so a service manager or a shell's
``kill`` ends them cleanly."""

from __future__ import annotations

import signal

__all__ = ["stop_on_signals"]


def stop_on_signals() -> None:
    """Makes SIGTERM, and SIGINT always, raise :class:`KeyboardInterrupt` in the main thread, as
    Ctrl-C does: the command then stops as it stops on Ctrl-C."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, interrupt)
    # A shell script's background job (`python -m bankfeed sandbox &`) starts with SIGINT ignored,
    # and Python then leaves it ignored: `kill -INT` would do nothing.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
