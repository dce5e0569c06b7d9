"""Run by test_terminal_handler.py in a pseudo-terminal: logs a sandbox user in with
on_challenge=bf.ask_in_terminal, as a script of a person's would, and says how it ended.

Usage: python login_in_terminal.py USERNAME [sync|async] IMAGE_DIR
"""

from __future__ import annotations

import asyncio
import atexit
import sys
import termios

import bankfeed as bf

INSTITUTION, PASSWORD = "FlinksCapital", "Everyday"


def echo_is_on() -> bool:
    return bool(termios.tcgetattr(sys.stdin.fileno())[3] & termios.ECHO)


def main(username: str, flavor: str, image_dir: str) -> None:
    handler = bf.TerminalHandler(image_dir=image_dir)
    with bf.Sandbox() as sb:
        if flavor == "async":

            async def login() -> object:
                client = sb.async_client(poll_interval=0.01)
                session = await client.login(INSTITUTION, username, PASSWORD, save=True, on_challenge=handler)
                if username == "mfa_trusted_device":
                    assert session.login_id is not None
                    session = await client.login_saved(session.login_id, on_challenge=handler)
                return session

            session = asyncio.run(login())
        else:
            client = sb.client(poll_interval=0.01)
            session = client.login(INSTITUTION, username, PASSWORD, save=True, on_challenge=handler)
            if username == "mfa_trusted_device":
                assert isinstance(session, bf.Session) and session.login_id is not None
                session = client.login_saved(session.login_id, on_challenge=handler)
        print(f"\nLOGGED IN: {type(session).__name__}", flush=True)


if __name__ == "__main__":
    try:
        main(*sys.argv[1:4])
    except EOFError as ended:
        print(f"\nENDED: EOFError ({ended})", flush=True)
    except KeyboardInterrupt:
        # What the program's end does: the handler's hook puts the terminal's echo back.
        atexit._run_exitfuncs()
        print(f"\nINTERRUPTED: echo {'on' if echo_is_on() else 'off'}", flush=True)
