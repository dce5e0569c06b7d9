"""Run by test_terminal_handler.py in a pseudo-terminal: logs a sandbox user in with
on_challenge=bf.ask_in_terminal, as a script of a person's would, and says how it ended.

Usage: python login_in_terminal.py USERNAME [sync|async] IMAGE_DIR [go-on|deadline]

With ``go-on`` the program goes on once the login has ended (Ctrl-C, an error) and reads a line
of its own from the terminal, as a program that asks something else next does; ``deadline`` does
the same after a call whose client's deadline (2 s) ends it while the handler waits.
"""

from __future__ import annotations

import asyncio
import sys
import termios
import time

import bankfeed as bf

INSTITUTION, PASSWORD = "FlinksCapital", "Everyday"


def echo_is_on() -> bool:
    return bool(termios.tcgetattr(sys.stdin.fileno())[3] & termios.ECHO)


def main(username: str, flavor: str, image_dir: str, deadline: float | None) -> None:
    handler = bf.TerminalHandler(image_dir=image_dir)
    with bf.Sandbox() as sb:
        if flavor == "async":

            async def login() -> object:
                client = sb.async_client(poll_interval=0.01, deadline=deadline)
                session = await client.login(INSTITUTION, username, PASSWORD, save=True, on_challenge=handler)
                if username == "mfa_trusted_device":
                    assert session.login_id is not None
                    session = await client.login_saved(session.login_id, on_challenge=handler)
                return session

            session = asyncio.run(login())
        else:
            client = sb.client(poll_interval=0.01, deadline=deadline)
            session = client.login(INSTITUTION, username, PASSWORD, save=True, on_challenge=handler)
            if username == "mfa_trusted_device":
                assert isinstance(session, bf.Session) and session.login_id is not None
                session = client.login_saved(session.login_id, on_challenge=handler)
        print(f"\nLOGGED IN: {type(session).__name__}", flush=True)


def go_on() -> None:
    """What a program that goes on does next: some work, then a line of its own. A line typed
    during the work waits in the terminal for the program, unless something else reads it."""
    time.sleep(0.5)
    line = input("Your next line: ")
    print(f"READ: {line!r} (echo {'on' if echo_is_on() else 'off'})", flush=True)


if __name__ == "__main__":
    username, flavor, image_dir = sys.argv[1:4]
    then = sys.argv[4] if len(sys.argv) > 4 else ""
    try:
        main(username, flavor, image_dir, deadline=2.0 if then == "deadline" else None)
    except EOFError as ended:
        print(f"\nENDED: EOFError ({ended})", flush=True)
    except KeyboardInterrupt:
        # Before anything else runs: the call's end has put the terminal's echo back.
        print(f"\nINTERRUPTED: echo {'on' if echo_is_on() else 'off'}", flush=True)
    except bf.BankfeedError as ended:
        print(f"\nENDED: {type(ended).__name__} (echo {'on' if echo_is_on() else 'off'})", flush=True)
    if then:
        go_on()
