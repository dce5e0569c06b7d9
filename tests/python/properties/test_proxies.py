"""Proxies (docs/protocol.md#proxies): a sandbox's traffic never reaches one, the proxy variables
and ``proxy=`` are honoured for the other hosts, and an error of a request sent through a proxy
names it, never its password."""

from __future__ import annotations

import contextlib
import http.client
import http.server
import pickle
import threading
import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest

import bankfeed as bf
from bfhelpers import INSTITUTION, PASSWORD, Api, login_id_of, raises

#: Every variable a proxy can come from.
PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")
#: The proxy's password in the tests: it must never show.
PROXY_PASSWORD = "pr0xy-Zq81x"
#: A host that is not loopback, and that no request ever reaches but through a proxy.
REMOTE = "https://api.bank.test"


@pytest.fixture
def no_proxy_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No proxy variable set (the machine running the tests may have some)."""
    for name in (*PROXY_VARIABLES, "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


class RecordingProxy(http.server.ThreadingHTTPServer):
    """A proxy on loopback that records every request that reaches it. It answers a CONNECT with
    ``connect_status`` and forwards a plain ``http://`` request to ``127.0.0.1:forward_port``,
    whatever host it names."""

    daemon_threads = True

    def __init__(self, connect_status: int = 502, forward_port: int | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _ProxyHandler)
        self.connect_status = connect_status
        self.forward_port = forward_port
        #: One entry per request: its request line, headers and body, as text.
        self.seen: list[str] = []

    def url(self, credentials: str = "") -> str:
        return f"http://{credentials}127.0.0.1:{self.server_address[1]}"


class _ProxyHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    @property
    def proxy(self) -> RecordingProxy:
        assert isinstance(self.server, RecordingProxy)
        return self.server

    def _record(self) -> bytes:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.proxy.seen.append(f"{self.requestline}\n{self.headers}{body.decode(errors='replace')}")
        return body

    def do_CONNECT(self) -> None:
        self._record()
        self.send_response(self.proxy.connect_status)
        self.send_header("Content-Length", "0")
        self.end_headers()
        self.close_connection = True

    def _forward(self) -> None:
        body = self._record()
        if self.proxy.forward_port is None:
            self.send_response(502)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        target = urllib.parse.urlsplit(self.path)
        path = target.path + (f"?{target.query}" if target.query else "")
        hop = {"host", "connection", "proxy-connection", "proxy-authorization", "content-length"}
        headers = {name: value for name, value in self.headers.items() if name.lower() not in hop}
        upstream = http.client.HTTPConnection("127.0.0.1", self.proxy.forward_port, timeout=10)
        upstream.request(self.command, path, body=body or None, headers=headers)
        answer = upstream.getresponse()
        data = answer.read()
        upstream.close()
        self.send_response(answer.status)
        for name, value in answer.getheaders():
            if name.lower() not in {"connection", "transfer-encoding", "content-length"}:
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_DELETE = _forward


@contextlib.contextmanager
def recording_proxy(connect_status: int = 502, forward_port: int | None = None) -> Iterator[RecordingProxy]:
    proxy = RecordingProxy(connect_status, forward_port)
    thread = threading.Thread(target=proxy.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield proxy
    finally:
        proxy.shutdown()
        proxy.server_close()
        thread.join(5)


def dead_proxy() -> str:
    """The URL of a proxy nothing listens on."""
    server = http.server.HTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    port = server.server_address[1]
    server.server_close()
    return f"http://127.0.0.1:{port}"


def port_of(url: str) -> int:
    port = urllib.parse.urlsplit(url).port
    assert port is not None, url
    return port


# --- loopback never goes through a proxy ------------------------------------------------------


def test_a_sandbox_works_with_every_proxy_variable_set_and_the_proxy_sees_nothing(
    no_proxy_env: pytest.MonkeyPatch, fresh_sandbox: bf.Sandbox, api: Api
) -> None:
    with recording_proxy() as proxy:
        for name in PROXY_VARIABLES:
            no_proxy_env.setenv(name, proxy.url(f"ci:{PROXY_PASSWORD}@"))
        # A client made by hand, as a test or a notebook makes one, and the sandbox's own.
        for client in (api.client(fresh_sandbox), api.client(fresh_sandbox, proxy=proxy.url())):
            session = api.run(client.login(INSTITUTION, "greatday_nomfa", PASSWORD, save=True))
            api.run(client.investments(login_id_of(session)))
        made = fresh_sandbox.async_client() if api.is_async else fresh_sandbox.client()
        assert isinstance(api.run(made.authorize(INSTITUTION, "greatday_nomfa", PASSWORD)), api.Session)
        # Whatever reached the proxy would hold the password, in clear text.
        assert proxy.seen == []


def test_a_proxy_that_cannot_be_used_does_not_stop_a_sandbox(
    no_proxy_env: pytest.MonkeyPatch, fresh_sandbox: bf.Sandbox
) -> None:
    no_proxy_env.setenv("ALL_PROXY", "socks5://proxy.corp:1080")
    assert isinstance(fresh_sandbox.client().login(INSTITUTION, "greatday_nomfa", PASSWORD), bf.Session)
    # For a host it would carry, it is refused when the client is made, naming the variable.
    with raises(bf.ConfigError, field="proxy") as info:
        bf.Client(REMOTE, "c")
    assert "socks5://" in str(info.value) and str(info.value).endswith("(read from ALL_PROXY)")


# --- the variables and proxy= are honoured for other hosts ------------------------------------


def test_http_proxy_carries_plain_http_to_a_host_that_is_not_loopback(
    no_proxy_env: pytest.MonkeyPatch, fresh_sandbox: bf.Sandbox
) -> None:
    with recording_proxy(forward_port=port_of(fresh_sandbox.url)) as proxy:
        no_proxy_env.setenv("HTTP_PROXY", proxy.url())
        remote = f"http://bank.test:{port_of(fresh_sandbox.url)}"
        client = bf.Client(
            remote,
            fresh_sandbox.customer_id,
            secret_key=fresh_sandbox.secret_key,
            api_key=fresh_sandbox.api_key,
            allow_insecure_http=True,
            poll_interval=0.01,
        )
        session = client.login(INSTITUTION, "greatday_nomfa", PASSWORD, save=True)
        assert isinstance(client.authorize_cached(login_id_of(session)), bf.Session)
        assert proxy.seen and all(seen.startswith(f"POST {remote}/v3/") for seen in proxy.seen), proxy.seen


def test_https_proxy_is_asked_for_a_tunnel_and_its_refusal_is_named(no_proxy_env: pytest.MonkeyPatch) -> None:
    with recording_proxy(connect_status=407) as proxy:
        no_proxy_env.setenv("HTTPS_PROXY", proxy.url(f"ci:{PROXY_PASSWORD}@"))
        client = bf.Client(REMOTE, "c", max_retries=2)
        with raises(bf.TransportError, extra_secrets=[PROXY_PASSWORD]) as info:
            client.authorize_cached("5e0e5f83-6e9b-4a2c-a6a3-0d8f4b1c9e21")
        text = str(info.value)
        assert f"through the proxy {proxy.url('***@')} (from HTTPS_PROXY)" in text, text
        assert "407" in text, text
        # A refusal is not retried, and the password went to the proxy, not to a message.
        assert len(proxy.seen) == 1 and proxy.seen[0].startswith("CONNECT api.bank.test:443 "), proxy.seen
        assert "proxy-authorization: basic " in proxy.seen[0].lower()


def test_a_transport_error_through_a_proxy_names_the_proxy(no_proxy_env: pytest.MonkeyPatch) -> None:
    proxy = dead_proxy()
    with_password = proxy.replace("http://", f"http://ci:{PROXY_PASSWORD}@")
    client = bf.Client(REMOTE, "c", proxy=with_password, max_retries=0)
    with raises(bf.TransportError, operation="Authorize", extra_secrets=[PROXY_PASSWORD]) as info:
        client.authorize_cached("5e0e5f83-6e9b-4a2c-a6a3-0d8f4b1c9e21")
    shown = proxy.replace("http://", "http://***@")
    assert f"through the proxy {shown} (from the proxy option)" in str(info.value), str(info.value)
    assert "check the proxy" in str(info.value)
    # Without a proxy the same failure names none.
    direct = bf.Client("http://127.0.0.1:9", "c", proxy=with_password, max_retries=0)
    with raises(bf.TransportError) as info:
        direct.authorize_cached("5e0e5f83-6e9b-4a2c-a6a3-0d8f4b1c9e21")
    assert "through the proxy" not in str(info.value), str(info.value)


def test_proxy_none_ignores_the_variables(no_proxy_env: pytest.MonkeyPatch) -> None:
    no_proxy_env.setenv("HTTPS_PROXY", "socks5://proxy.corp:1080")
    client = bf.Client(REMOTE, "c", proxy=None)
    assert client.proxy is None and "proxy=None" in repr(client)


# --- the option itself -------------------------------------------------------------------------


@pytest.mark.parametrize("cls", [bf.Client, bf.AsyncClient])
def test_the_proxy_shows_without_its_password(
    no_proxy_env: pytest.MonkeyPatch, cls: type[bf.Client | bf.AsyncClient]
) -> None:
    default = cls(REMOTE, "c")
    assert default.proxy == "environment" and "proxy" not in repr(default)
    client = cls(REMOTE, "c", proxy=f"https://ci:{PROXY_PASSWORD}@proxy.corp:8443")
    assert client.proxy == "https://***@proxy.corp:8443"
    assert 'proxy="https://***@proxy.corp:8443"' in repr(client)
    assert PROXY_PASSWORD not in repr(client) and "ci:" not in repr(client)


@pytest.mark.parametrize(
    "bad", ["socks5://ci:pr0xy-Zq81x@proxy.corp:1080", "http://", "http://proxy corp:1", "", "Environment", "none"]
)
def test_an_explicit_proxy_that_cannot_be_used_is_refused_at_once(no_proxy_env: pytest.MonkeyPatch, bad: str) -> None:
    # Even for a sandbox, whose loopback host it would never carry: the caller asked for it.
    with raises(bf.ConfigError, field="proxy", extra_secrets=[PROXY_PASSWORD]):
        bf.Client("http://127.0.0.1:9", "c", proxy=bad)


def test_proxy_takes_a_str_or_none(no_proxy_env: pytest.MonkeyPatch) -> None:
    with pytest.raises(TypeError, match="proxy"):
        bf.Client(REMOTE, "c", proxy=3128)  # type: ignore[arg-type]


def test_a_pickled_client_keeps_an_explicit_proxy_and_reads_the_variables_where_it_lands(
    no_proxy_env: pytest.MonkeyPatch,
) -> None:
    explicit = bf.Client(REMOTE, "c", proxy=f"http://ci:{PROXY_PASSWORD}@proxy.corp:3128")
    off = bf.Client(REMOTE, "c", proxy=None)
    default = bf.Client(REMOTE, "c", max_retries=0)
    pickles = [pickle.dumps(client) for client in (explicit, off, default)]
    # Proxies belong to the machine: the copy of a client of the default reads the variables of
    # the process that unpickles it; an explicit proxy and None stay as given.
    proxy = dead_proxy()
    no_proxy_env.setenv("HTTPS_PROXY", proxy)
    explicit_copy, off_copy, default_copy = (pickle.loads(data) for data in pickles)
    assert repr(explicit_copy) == repr(explicit) and explicit_copy.proxy == "http://***@proxy.corp:3128"
    assert off_copy.proxy is None
    with raises(bf.TransportError) as info:
        default_copy.authorize_cached("5e0e5f83-6e9b-4a2c-a6a3-0d8f4b1c9e21")
    assert f"through the proxy {proxy} (from HTTPS_PROXY)" in str(info.value), str(info.value)
