"""``client.connect(...)``: the loopback catcher of the widget's redirect (docs/connect.md). It is
driven here as the widget would drive it, with urllib from a thread: the redirect's query, the
``REDIRECT`` event forwarded by POST, requests that must not end the wait, a LoginId that is not a
GUID, the timeout, the launch page the browser is opened at, and the ways a person stops it
(Ctrl-C for ``Client``, task cancellation for ``AsyncClient``, ``close()`` for both), with the
catcher closed on every way out. The real browser plays the widget in
tests/python/browser/test_connect.py; other local users meet the catcher in
test_connect_catcher_local_users.py."""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

import bankfeed as bf
from bfhelpers import INSTITUTION, PASSWORD, Api, ctrl_c_after, loop_ticks

#: The catcher's redirect in a widget URL.
Visit = Callable[[str], None]


def redirect_of(url: bf.ConnectUrl) -> str:
    """The redirect the widget was given: the catcher's URL."""
    return parse_qs(urlsplit(url.reveal()).query)["redirectUrl"][0]


def status_of(request: urllib.request.Request | str) -> int:
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:
            status: int = answer.status
            return status
    except urllib.error.HTTPError as error:
        return error.code


def answer_of(request: urllib.request.Request | str) -> tuple[int, dict[str, str]]:
    """The status and the headers (names in lowercase) of an answer."""
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:
            return answer.status, {name.lower(): value for name, value in answer.headers.items()}
    except urllib.error.HTTPError as error:
        return error.code, {name.lower(): value for name, value in error.headers.items()}


def post(url: str, event: Any) -> int:
    body = json.dumps(event).encode()
    return status_of(urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"}))


def launched(launch_url: str) -> tuple[int, str]:
    """A browser's first GET of the launch page, its redirect not followed: the status, and the
    address it sends the browser to."""
    parts = urlsplit(launch_url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=5)
    try:
        connection.request("GET", parts.path)
        answer = connection.getresponse()
        answer.read()
        return answer.status, answer.getheader("Location") or ""
    finally:
        connection.close()


def listening_sockets() -> set[int]:
    """The sockets this process listens on (their inodes, from the kernel's tables)."""
    ours: set[int] = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            ours.add(int(target.removeprefix("socket:[").removesuffix("]")))
    listening: set[int] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as lines:
            for line in list(lines)[1:]:
                fields = line.split()
                if fields[3] == "0A" and int(fields[9]) in ours:
                    listening.add(int(fields[9]))
    return listening


needs_proc = pytest.mark.skipif(not os.path.exists("/proc/net/tcp"), reason="reads the kernel's socket tables")


class Widget:
    """Plays the widget from a thread once ``client.connect`` gives the URL: ``act(catcher_url)``."""

    def __init__(self, act: Visit) -> None:
        self.act = act
        self.urls: list[bf.ConnectUrl] = []
        self.failures: list[BaseException] = []
        self.threads: list[threading.Thread] = []

    def __call__(self, url: bf.ConnectUrl) -> None:
        self.urls.append(url)

        def run() -> None:
            try:
                self.act(redirect_of(url))
            except BaseException as failure:
                self.failures.append(failure)

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        self.threads.append(thread)

    def done(self) -> None:
        """Waits for the widget's requests to end, and raises what failed in them."""
        for thread in self.threads:
            thread.join(5)
        assert not self.failures, self.failures


def assert_closed(catcher: str) -> None:
    """The catcher's port refuses connections, within a second (its task ends on the runtime)."""
    port = urlsplit(catcher).port or 0
    for _ in range(20):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except OSError:
            return
        time.sleep(0.05)
    raise AssertionError(f"the catcher still listens on port {port}")


@pytest.fixture(scope="module")
def connect_sandbox() -> Iterator[bf.Sandbox]:
    with bf.Sandbox() as sb:
        yield sb


@pytest.fixture(scope="module")
def saved_login(connect_sandbox: bf.Sandbox) -> str:
    """A LoginId saved on the sandbox: what the widget returns after a person connects."""
    session = connect_sandbox.client().authorize(INSTITUTION, "greatday_nomfa", PASSWORD, save=True)
    assert isinstance(session, bf.Session)
    assert session.login_id is not None
    return session.login_id


def test_the_redirect_query_is_caught_and_its_login_id_opens_a_session(
    api: Api, connect_sandbox: bf.Sandbox, saved_login: str
) -> None:
    pages: list[tuple[int, str]] = []

    def widget(catcher: str) -> None:
        # Other paths of the port and the catcher's path without a LoginId are not it.
        assert status_of(catcher.rsplit("/", 1)[0] + "/favicon.ico") == 404
        assert status_of(catcher[:-4] + "0000") == 404
        assert status_of(catcher) == 404
        query = f"?loginId={saved_login}&institution=FlinksCapital&accountId=a1&accountId=a2&tag=t1"
        with urllib.request.urlopen(catcher + query, timeout=5) as answer:
            pages.append((answer.status, answer.read().decode()))

    client = api.client(connect_sandbox)
    played = Widget(widget)
    connection = api.run(client.connect(on_url=played, timeout=10, demo=True, tag="t1"))
    played.done()
    assert (connection.login_id, connection.institution) == (saved_login, "FlinksCapital")
    assert (connection.account_ids, connection.tag, connection.source) == (["a1", "a2"], "t1", "redirect")
    assert saved_login not in repr(connection)
    assert pages[0][0] == 200 and "You can close this tab" in pages[0][1]
    url = played.urls[0]
    assert url.params["demo"] == "true" and url.params["authorizeToken"] == "***"
    assert redirect_of(url).startswith("http://127.0.0.1:")
    assert isinstance(api.run(client.authorize_cached(connection.login_id)), api.Session)


def test_the_forwarded_redirect_event_is_caught(api: Api, connect_sandbox: bf.Sandbox, saved_login: str) -> None:
    answers: list[tuple[int, dict[str, str]]] = []
    statuses: list[int] = []

    def widget(catcher: str) -> None:
        # No preflight is answered and no answer names an origin: a page forwards the event as a
        # simple request, and no page can read what the catcher says. Other events end nothing.
        preflight = urllib.request.Request(catcher, method="OPTIONS", headers={"Origin": "https://elsewhere.example"})
        answers.append(answer_of(preflight))
        statuses.append(post(catcher, {"step": "APP_MOUNTED"}))
        event = json.dumps({"step": "REDIRECT", "loginId": saved_login, "accountId": ["x", "y"]}).encode()
        forwarded = urllib.request.Request(catcher, data=event, headers={"Origin": "https://elsewhere.example"})
        answers.append(answer_of(forwarded))

    client = api.client(connect_sandbox)
    played = Widget(widget)
    connection = api.run(client.connect(on_url=played, timeout=10))
    played.done()
    assert [status for status, _ in answers] == [405, 204] and statuses == [204]
    for _, headers in answers:
        assert not [name for name in headers if name.startswith("access-control-")], headers
    assert (connection.login_id, connection.account_ids, connection.source) == (saved_login, ["x", "y"], "event")


def test_a_login_id_that_is_no_guid_ends_the_wait_with_a_clear_error(api: Api, connect_sandbox: bf.Sandbox) -> None:
    statuses: list[int] = []
    played = Widget(lambda catcher: statuses.append(status_of(catcher + "?loginId=../../admin&institution=x")))
    client = api.client(connect_sandbox)
    with pytest.raises(bf.ConfigError) as raised:
        api.run(client.connect(on_url=played, timeout=10))
    assert raised.value.field == "loginId" and "GUID" in str(raised.value) and "admin" not in str(raised.value)
    played.done()
    assert statuses == [400]


def test_the_timeout_is_a_typed_error_with_the_next_step(api: Api, connect_sandbox: bf.Sandbox) -> None:
    played = Widget(lambda catcher: None)
    client = api.client(connect_sandbox)
    started = time.monotonic()
    with pytest.raises(bf.ConnectTimeout) as raised:
        api.run(client.connect(on_url=played, timeout=0.3))
    assert 0.3 <= time.monotonic() - started < 3
    assert isinstance(raised.value, TimeoutError) and raised.value.waited == pytest.approx(0.3)
    assert "start again" in str(raised.value) and "longer timeout" in str(raised.value)
    # The catcher is gone with the call: its port refuses.
    assert_closed(redirect_of(played.urls[0]))


def test_redirect_url_is_the_catchers(connect_sandbox: bf.Sandbox) -> None:
    with pytest.raises(bf.ConfigError) as raised:
        connect_sandbox.client().connect(redirect_url="https://example.com/", timeout=1)  # type: ignore[call-arg]
    assert raised.value.field == "redirect_url" and "connect_url" in str(raised.value)


def test_the_browser_is_opened_at_a_launch_page_that_holds_no_secret(
    monkeypatch: pytest.MonkeyPatch, connect_sandbox: bf.Sandbox, saved_login: str
) -> None:
    # A browser command's arguments are readable by every local user: what it is given must hold
    # neither the authorize token nor the catcher's return path. The launch page sends the first
    # GET on to the widget, and only the first.
    opened: list[str] = []
    visits: list[tuple[int, str]] = []
    statuses: list[int] = []

    def open_tab(url: str) -> bool:
        opened.append(url)
        visits.extend([launched(url), launched(url)])
        statuses.append(status_of(f"{parse_qs(urlsplit(visits[0][1]).query)['redirectUrl'][0]}?loginId={saved_login}"))
        return True

    monkeypatch.setattr("webbrowser.open", open_tab)
    connection = connect_sandbox.client().connect(timeout=10)
    assert connection.login_id == saved_login and statuses == [200]
    (status, widget), (again, nowhere) = visits
    assert status == 303 and widget.startswith(connect_sandbox.widget_url)
    assert "authorizeToken=" in widget and "authorizeToken=***" not in widget
    assert (again, nowhere) == (410, "")
    return_path = urlsplit(parse_qs(urlsplit(widget).query)["redirectUrl"][0]).path
    assert len(opened) == 1 and opened[0].startswith("http://127.0.0.1:")
    assert "authorizeToken" not in opened[0] and return_path not in opened[0] and "redirectUrl" not in opened[0]


def test_without_a_browser_the_launch_page_is_printed_for_the_person(
    capsys: pytest.CaptureFixture[str], connect_sandbox: bf.Sandbox
) -> None:
    with pytest.raises(bf.ConnectTimeout):
        connect_sandbox.client().connect(open_browser=False, timeout=0.2)
    printed = capsys.readouterr().err
    assert "open this address" in printed and "http://127.0.0.1:" in printed
    assert "authorizeToken" not in printed and "redirectUrl" not in printed


@needs_proc
def test_when_on_url_raises_the_catcher_is_closed_before_the_exception_leaves(
    api: Api, connect_sandbox: bf.Sandbox
) -> None:
    urls: list[bf.ConnectUrl] = []

    def on_url(url: bf.ConnectUrl) -> None:
        urls.append(url)
        raise RuntimeError("no browser here")

    client = api.client(connect_sandbox)
    before = listening_sockets()
    with pytest.raises(RuntimeError, match="no browser here") as raised:
        api.run(client.connect(on_url=on_url, timeout=60))
    # The exception is still held, with every frame of its traceback, as a notebook keeps the
    # last one: the catcher's port is closed all the same, at once.
    assert raised.tb is not None
    assert listening_sockets() == before
    port = urlsplit(redirect_of(urls[0])).port or 0
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()


@needs_proc
def test_when_the_token_call_fails_no_catcher_was_ever_bound(api: Api, connect_sandbox: bf.Sandbox) -> None:
    urls: list[bf.ConnectUrl] = []
    # The token call takes a while (and then fails): the port must not be open meanwhile either.
    connect_sandbox.inject({"kind": "latency", "seconds": 0.6, "operation": "GenerateAuthorizeToken"})
    client = api.client(connect_sandbox, secret_key="not-the-secret-key")
    before = listening_sockets()
    seen: list[set[int]] = []
    calling = threading.Event()

    def watch() -> None:
        while not calling.wait(0.05):
            seen.append(listening_sockets())

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        with pytest.raises(bf.ApiError) as raised:
            api.run(client.connect(on_url=urls.append, timeout=60))
    finally:
        calling.set()
        watcher.join(5)
    assert raised.tb is not None and "not-the-secret-key" not in str(raised.value)
    assert len(seen) >= 5 and all(sockets == before for sockets in seen), "a port was open during the token call"
    assert listening_sockets() == before and urls == []


def test_ctrl_c_stops_the_wait_at_once(connect_sandbox: bf.Sandbox) -> None:
    client = connect_sandbox.client()
    urls: list[bf.ConnectUrl] = []
    with ctrl_c_after(0.5) as fired:
        with pytest.raises(KeyboardInterrupt):
            client.connect(on_url=urls.append, timeout=60)
        returned = time.monotonic()
    assert fired and returned - fired[0] < 1.0
    assert_closed(redirect_of(urls[0]))


def test_cancelling_the_task_stops_the_wait_at_once(connect_sandbox: bf.Sandbox) -> None:
    urls: list[bf.ConnectUrl] = []

    async def main() -> float:
        client = connect_sandbox.async_client()
        task = asyncio.ensure_future(client.connect(on_url=urls.append, timeout=60))
        await asyncio.sleep(0.5)
        cancelled = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - cancelled

    assert asyncio.run(main()) < 1.0
    assert_closed(redirect_of(urls[0]))


def test_close_stops_the_wait(api: Api, connect_sandbox: bf.Sandbox) -> None:
    client = api.client(connect_sandbox)

    def close_soon(catcher: str) -> None:
        time.sleep(0.3)
        client.close()

    played = Widget(close_soon)
    with pytest.raises(bf.ClientClosed):
        api.run(client.connect(on_url=played, timeout=60))


def test_a_browser_command_that_waits_for_the_page_is_answered(
    api: Api, connect_sandbox: bf.Sandbox, saved_login: str
) -> None:
    # A terminal browser (BROWSER=lynx) returns only once the person is done: the redirect comes
    # while on_url (or webbrowser.open) still runs, before the wait has begun.
    statuses: list[int] = []

    def browser_that_blocks(url: bf.ConnectUrl) -> None:
        statuses.append(status_of(f"{redirect_of(url)}?loginId={saved_login}&institution=FlinksCapital"))

    connection = api.run(api.client(connect_sandbox).connect(on_url=browser_that_blocks, timeout=10))
    assert statuses == [200] and connection.login_id == saved_login


def test_an_async_connect_opens_the_browser_without_stalling_the_event_loop(
    monkeypatch: pytest.MonkeyPatch, connect_sandbox: bf.Sandbox, saved_login: str
) -> None:
    # webbrowser.open may wait for a browser command to finish; the loop goes on meanwhile.
    def browser_that_blocks(url: str) -> bool:
        query = f"?loginId={saved_login}&institution=FlinksCapital"
        time.sleep(0.3)
        _, widget = launched(url)
        return status_of(parse_qs(urlsplit(widget).query)["redirectUrl"][0] + query) == 200

    monkeypatch.setattr("webbrowser.open", browser_that_blocks)

    async def main() -> tuple[bf.Connection, int]:
        async with loop_ticks(0.02) as ticks:
            connection = await connect_sandbox.async_client().connect(timeout=10)
        return connection, ticks.count

    connection, ticks = asyncio.run(main())
    assert connection.login_id == saved_login
    assert ticks >= 5, "the event loop stalled while the browser command ran"


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), float("inf"), 86401])
def test_a_bad_timeout_is_refused_before_anything_opens(connect_sandbox: bf.Sandbox, timeout: float) -> None:
    urls: list[bf.ConnectUrl] = []
    with pytest.raises(bf.ConfigError) as raised:
        connect_sandbox.client().connect(on_url=urls.append, timeout=timeout)
    assert raised.value.field == "timeout" and "at most 86400" in str(raised.value)
    assert urls == [], "the widget was opened for a wait that was refused"


def test_a_timeout_of_the_wrong_type_names_it(connect_sandbox: bf.Sandbox) -> None:
    with pytest.raises(TypeError, match=r"^timeout must be a number of seconds"):
        connect_sandbox.client().connect(timeout="5")  # type: ignore[arg-type]
