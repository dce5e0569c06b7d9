"""``client.connect(...)`` on a machine shared with other users (docs/connect.md#security): a
browser command's arguments are readable by every local user in ``/proc``, so the browser is given
the catcher's launch page, which holds no secret; a process of another user is refused whatever
it has learned of the catcher's addresses, and never ends the wait; and no process can take more
than a few of the program's file descriptors through the catcher's port.

Another user is played by ``nobody`` (the system's Python run with its uid), so those cases need
root on Linux; the rest need only Linux's ``/proc``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

import bankfeed as bf
from bfhelpers import INSTITUTION, PASSWORD

#: The interpreter another user can run: the test's own may live under root's home.
OTHER_PYTHON = "/usr/bin/python3"

#: The uid and gid that play another local user.
NOBODY = 65534

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/cmdline"), reason="reads Linux's /proc")


def can_play_another_user() -> bool:
    """Whether a process can be run as ``nobody``: as root, with the system's Python."""
    return hasattr(os, "geteuid") and os.geteuid() == 0 and os.access(OTHER_PYTHON, os.X_OK)


needs_another_user = pytest.mark.skipif(
    not can_play_another_user(), reason="plays another local user with nobody's uid: needs root and python3"
)

#: A browser: opened with the address as its argument, it waits for a LoginId on stdin (the person
#: signing in), then follows the address to the widget and redirects to the catcher with it.
BROWSER = """
import sys, urllib.request
from urllib.parse import parse_qs, urlsplit
login_id = sys.stdin.readline().strip()
with urllib.request.urlopen(sys.argv[1], timeout=10) as page:
    widget = page.geturl()
catcher = parse_qs(urlsplit(widget).query)["redirectUrl"][0]
with urllib.request.urlopen(catcher + "?loginId=" + login_id, timeout=10) as page:
    print(page.status)
"""

#: Another user's process: every loopback address it finds in the arguments of process ``pid``
#: (or is given) is fetched, a redirect to the widget followed to the catcher's return path, and
#: each address is sent its own LoginId, as a redirect and as an event. Prints what came back.
ATTACKER = """
import http.client, json, re, sys
from urllib.parse import parse_qs, quote, urlsplit
source, login_id = sys.argv[1], sys.argv[2]
if source.isdigit():
    source = open(f"/proc/{source}/cmdline", "rb").read().decode(errors="replace")
found = re.findall(r"http://127\\.0\\.0\\.1:[0-9]+/[^\\x00\\s?&]*", source)
def ask(method, url, body=None):
    parts = urlsplit(url)
    try:
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=5)
        path = parts.path + ("?" + parts.query if parts.query else "")
        connection.request(method, path, body=body, headers={"Content-Type": "text/plain"})
        answer = connection.getresponse()
        answer.read()
        return answer.status, answer.getheader("Location") or ""
    except OSError as error:
        return type(error).__name__, ""
statuses, targets = [], list(found)
for url in found:
    status, location = ask("GET", url)
    statuses.append(status)
    if location:
        targets += parse_qs(urlsplit(location).query).get("redirectUrl", [])
for url in targets:
    statuses.append(ask("GET", url + "?loginId=" + quote(login_id))[0])
    event = json.dumps({"step": "REDIRECT", "loginId": login_id})
    statuses.append(ask("POST", url, event)[0])
print(json.dumps({"found": len(found), "statuses": statuses}))
"""

#: A process that opens ``count`` connections to ``port``, says so, and holds them until stdin ends.
HOLDER = """
import socket, sys
port, count = int(sys.argv[1]), int(sys.argv[2])
held = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(count)]
print("holding", flush=True)
sys.stdin.read()
"""


def as_another_user(*args: str) -> dict[str, Any]:
    """Runs :data:`ATTACKER` as ``nobody``; what it printed."""
    ran = subprocess.run(
        [OTHER_PYTHON, "-I", "-c", ATTACKER, *args],
        user=NOBODY,
        group=NOBODY,
        extra_groups=[],
        cwd="/",
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 0, ran.stderr
    result: dict[str, Any] = json.loads(ran.stdout)
    return result


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.fixture(scope="module")
def sb() -> Iterator[bf.Sandbox]:
    with bf.Sandbox() as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def saved_login(sb: bf.Sandbox) -> str:
    """A LoginId saved on the sandbox: what the widget returns after a person connects."""
    session = sb.client().authorize(INSTITUTION, "greatday_nomfa", PASSWORD, save=True)
    assert isinstance(session, bf.Session) and session.login_id is not None
    return session.login_id


def connecting(run: Callable[[], bf.Connection]) -> Callable[[], bf.Connection]:
    """``run()`` (a ``client.connect``) on a thread; a function that waits for what it returned."""
    outcome: list[Any] = []

    def target() -> None:
        try:
            outcome.append(run())
        except BaseException as error:
            outcome.append(error)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()

    def result() -> bf.Connection:
        thread.join(30)
        assert outcome, "connect did not return"
        if isinstance(outcome[0], BaseException):
            raise outcome[0]
        connection: bf.Connection = outcome[0]
        return connection

    return result


def test_the_browser_command_line_gives_another_user_nothing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, sb: bf.Sandbox, saved_login: str
) -> None:
    browsers: list[subprocess.Popen[str]] = []
    opened = threading.Event()
    # A file, as a browser is: its command line is then what it was given and nothing else.
    program = tmp_path / "browser.py"
    program.write_text(BROWSER)

    def open_tab(url: str) -> bool:
        command = [sys.executable, str(program), url]
        browsers.append(subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True))
        opened.set()
        return True

    monkeypatch.setattr("webbrowser.open", open_tab)
    result = connecting(lambda: sb.client().connect(timeout=30))
    assert opened.wait(10)
    browser = browsers[0]
    attacks: list[dict[str, Any]] = []
    try:
        # What every local user reads of the browser command, before the person signs in.
        # Read once the child runs the program: between fork and exec it still shows pytest's.
        deadline = time.monotonic() + 10
        command_line = ""
        while str(program) not in command_line and time.monotonic() < deadline:
            command_line = Path(f"/proc/{browser.pid}/cmdline").read_bytes().decode()
            time.sleep(0.01)
        if can_play_another_user():
            # Another user reads it too, fetches it, and sends its own LoginId wherever it leads.
            attacks.append(as_another_user(str(browser.pid), str(uuid.uuid4())))
    finally:
        out, _ = browser.communicate(saved_login + "\n", timeout=30)
    assert "http://127.0.0.1:" in command_line
    assert "authorizeToken" not in command_line and "redirectUrl" not in command_line
    assert out.strip() == "200", "the person's browser was not sent on to the widget"
    assert result().login_id == saved_login
    for attack in attacks:
        assert attack["found"] == 1 and set(attack["statuses"]) == {403}, attack


@needs_another_user
def test_another_user_that_learned_the_return_path_is_refused_and_ends_nothing(
    sb: bf.Sandbox, saved_login: str
) -> None:
    attacks: list[dict[str, Any]] = []
    statuses: list[int] = []

    def on_url(url: bf.ConnectUrl) -> None:
        # As if on_url had put the widget's URL where another user could read it.
        catcher = parse_qs(urlsplit(url.reveal()).query)["redirectUrl"][0]
        attacks.append(as_another_user(catcher, str(uuid.uuid4())))
        with urllib.request.urlopen(f"{catcher}?loginId={saved_login}", timeout=10) as page:
            statuses.append(page.status)

    connection = sb.client().connect(on_url=on_url, timeout=30)
    assert connection.login_id == saved_login and statuses == [200]
    assert attacks[0]["found"] == 1 and attacks[0]["statuses"] == [403, 403, 403], attacks


def test_idle_connections_take_few_of_the_programs_file_descriptors(sb: bf.Sandbox, saved_login: str) -> None:
    counts: list[int] = []
    statuses: list[int] = []

    def on_url(url: bf.ConnectUrl) -> None:
        catcher = parse_qs(urlsplit(url.reveal()).query)["redirectUrl"][0]
        port = urlsplit(catcher).port or 0
        before = open_descriptors()
        holder = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(port), "100"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
            time.sleep(0.5)
            counts.extend([before, open_descriptors()])
        finally:
            holder.communicate("", timeout=10)
        # Once they are gone, the widget's redirect is answered.
        with urllib.request.urlopen(f"{catcher}?loginId={saved_login}", timeout=10) as page:
            statuses.append(page.status)

    connection = sb.client().connect(on_url=on_url, timeout=30)
    assert connection.login_id == saved_login and statuses == [200]
    before, during = counts
    # 100 connections held: the catcher serves 16 at once; the rest wait in the kernel's queue.
    assert during - before <= 16 + 4, counts
