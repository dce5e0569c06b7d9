"""``bf.RemoteSandbox`` in a proxied environment (docs/sandbox.md#the-admin-api): a sandbox on
loopback is reached directly, so its admin token never reaches a proxy; any other goes through the
environment's proxy, and an error then names that proxy, never its password."""

from __future__ import annotations

import contextlib
import http.server
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

import bankfeed as bf

#: Every variable a proxy can come from, and those that let a host bypass it.
PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")
NO_PROXY_VARIABLES = ("NO_PROXY", "no_proxy")
#: The proxy's password in the tests: it must never show.
PROXY_PASSWORD = "pr0xy-Rm42q"
#: A sandbox URL that is not loopback, reachable through a proxy only (and not even then).
REMOTE = "http://sandbox.invalid:8080"


class FakeProxy(http.server.ThreadingHTTPServer):
    """A proxy on loopback that records what reaches it and forwards a plain ``http://`` request
    directly to the host it names (a 502 when that cannot be reached)."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _FakeProxyHandler)
        #: One entry per request: its request line and headers, as text.
        self.seen: list[str] = []

    def url(self, credentials: str = "") -> str:
        return f"http://{credentials}127.0.0.1:{self.server_address[1]}"


class _FakeProxyHandler(http.server.BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _forward(self) -> None:
        assert isinstance(self.server, FakeProxy)
        self.server.seen.append(f"{self.requestline}\n{self.headers}")
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)) or None
        request = urllib.request.Request(self.path, data=body, method=self.command)
        for name, value in self.headers.items():
            if name.lower() not in {"host", "connection", "proxy-connection", "proxy-authorization"}:
                request.add_header(name, value)
        direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        try:
            with direct.open(request, timeout=10) as answer:
                status, data = answer.status, answer.read()
        except urllib.error.HTTPError as exc:
            status, data = exc.code, exc.read()
        except OSError:
            status, data = 502, b""
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_DELETE = _forward


@contextlib.contextmanager
def fake_proxy() -> Iterator[FakeProxy]:
    proxy = FakeProxy()
    thread = threading.Thread(target=proxy.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield proxy
    finally:
        proxy.shutdown()
        proxy.server_close()
        thread.join(5)


@pytest.fixture
def proxied(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[FakeProxy, pytest.MonkeyPatch]]:
    """A fake proxy set in every proxy variable, as a proxied CI sets it, and no ``NO_PROXY``."""
    for name in NO_PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    with fake_proxy() as proxy:
        for name in PROXY_VARIABLES:
            monkeypatch.setenv(name, proxy.url(f"ci:{PROXY_PASSWORD}@"))
        yield proxy, monkeypatch


def test_a_loopback_sandbox_process_is_never_reached_through_the_proxy(
    proxied: tuple[FakeProxy, pytest.MonkeyPatch],
) -> None:
    proxy, _ = proxied
    with bf.RemoteSandbox.start("--logins", "1") as sb:
        token = sb._token
        sb.inject({"kind": "status", "status": 503, "operation": "Investments"})
        assert len(sb.faults) == 1
        sb.clear_faults()
        sb.reset()
        assert sb.request_count == 0
        for host in ("localhost", "[::1]"):
            # The same sandbox under its other loopback names, where it listens on them.
            with contextlib.suppress(bf.BankfeedError):
                bf.RemoteSandbox(sb.url.replace("127.0.0.1", host), token)
    assert not any(token in entry for entry in proxy.seen), "the admin token reached the proxy"
    assert [entry.splitlines()[0] for entry in proxy.seen] == []


def test_a_sandbox_elsewhere_goes_through_the_proxy_and_its_error_names_it(
    proxied: tuple[FakeProxy, pytest.MonkeyPatch],
) -> None:
    proxy, _ = proxied
    with pytest.raises(bf.BankfeedError) as caught:
        bf.RemoteSandbox(REMOTE, "an-admin-token")
    message = str(caught.value)
    assert f"through the proxy http://127.0.0.1:{proxy.server_address[1]} (from HTTP_PROXY)" in message
    assert "502" in message
    assert PROXY_PASSWORD not in message and PROXY_PASSWORD not in repr(caught.value)
    assert [entry.splitlines()[0] for entry in proxy.seen] == [f"GET {REMOTE}/_sandbox/info HTTP/1.1"]


def test_a_proxy_that_cannot_be_reached_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*PROXY_VARIABLES, *NO_PROXY_VARIABLES):
        monkeypatch.delenv(name, raising=False)
    with fake_proxy() as gone:
        dead = gone.url()
    monkeypatch.setenv("ALL_PROXY", dead.replace("http://", f"http://ci:{PROXY_PASSWORD}@"))
    with pytest.raises(bf.BankfeedError, match="could not reach") as caught:
        bf.RemoteSandbox(REMOTE, "an-admin-token")
    message = str(caught.value)
    assert f"through the proxy {dead} (from ALL_PROXY)" in message
    assert PROXY_PASSWORD not in message


def test_no_proxy_lets_a_host_bypass_the_proxy(proxied: tuple[FakeProxy, pytest.MonkeyPatch]) -> None:
    proxy, monkeypatch = proxied
    monkeypatch.setenv("NO_PROXY", "sandbox.invalid")
    with pytest.raises(bf.BankfeedError, match="could not reach") as caught:
        bf.RemoteSandbox(REMOTE, "an-admin-token")
    assert "proxy" not in str(caught.value)
    assert proxy.seen == []
