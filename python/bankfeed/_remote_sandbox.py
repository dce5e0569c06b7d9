"""``bf.RemoteSandbox``: a sandbox served by another process, steered through its admin API.

``python -m bankfeed sandbox --admin`` (or ``bf.Sandbox(admin=True)``) serves the admin API under
``/_sandbox/`` and prints its token at start (docs/sandbox.md#the-admin-api). This class speaks
it with the standard library alone, and offers what ``bf.Sandbox`` offers a test: ``requests``,
``request_count``, ``faults``, ``inject``, ``clear_faults``, ``reset``, ``as_of``, ``advance``,
``login_ids`` and ``client()``.
"""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import json
import os
import queue
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

from bankfeed._native import AsyncClient, Client, Sandbox
from bankfeed._type_aliases import RecordedRequest
from bankfeed.errors import BankfeedError, ConfigError

__all__ = ["RemoteSandbox"]

#: How long :meth:`RemoteSandbox.start` waits for the process's URL and admin token lines.
_START_TIMEOUT = 30.0

#: How often its clients poll by default, as ``bf.Sandbox``'s do: the sandbox answers a poll at once.
_POLL_INTERVAL = 0.05


class RemoteSandbox:
    """A sandbox served by another process (``python -m bankfeed sandbox --port 0 --admin``),
    reached at ``url`` with the admin token it printed at start::

        sb = bf.RemoteSandbox("http://127.0.0.1:41234", token)
        sb.inject({"kind": "status", "status": 503, "operation": "Investments"})
        with sb.client() as client:
            ...
        assert [r["operation"] for r in sb.requests] == [...]
        sb.reset()

    A sandbox on a loopback host (``127.0.0.0/8``, ``::1``, ``localhost``) is reached directly,
    whatever proxy the environment sets, as a client reaches it; any other goes through the
    proxy the environment names, and an error then names that proxy (never its password).
    The token is never shown in its ``repr``. A refused token raises :class:`bf.Unauthorized
    <bankfeed.Unauthorized>`-like ``BankfeedError``; a fault that cannot be read,
    :class:`bf.ConfigError <bankfeed.ConfigError>` as ``bf.Sandbox.inject`` raises it.
    """

    def __init__(self, url: str, admin_token: str, *, timeout: float = 10.0) -> None:
        self.url = url.rstrip("/")
        self._token = admin_token
        self._timeout = timeout
        self._process: subprocess.Popen[str] | None = None
        self._opener, self._proxy = _route(self.url)
        info = self._call("GET", "info")
        #: The customer id the sandbox answers to.
        self.customer_id: str = info["customer_id"]
        # What its saved bulk logins' LoginIds derive from (docs/sandbox.md#many-logins).
        self._seed: int = info["seed"]
        self._logins: int = info["logins"]
        # The public test instance's keys, when those are the ones it asks for (its default): the
        # admin API hands out those only, never keys of one's own.
        self._public_keys = {
            option: info[field]
            for option, field in (("api_key", "public_api_key"), ("secret_key", "public_secret_key"))
            if isinstance(info.get(field), str)
        }

    @classmethod
    def start(cls, *flags: str) -> RemoteSandbox:
        """Starts ``python -m bankfeed sandbox --port 0 --admin`` with ``flags`` (e.g.
        ``"--pending-polls", "3"``) in a process of its own, and connects to it; :meth:`close` (or
        the end of a ``with`` block) stops the process."""
        command = [sys.executable, "-m", "bankfeed", "sandbox", "--port", "0", "--admin", *flags]
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        lines: queue.Queue[str] = queue.Queue()

        def read_start() -> None:
            # Ends once both lines came, or when the process's output ends (it exited, or was
            # stopped at the deadline below).
            seen = 0
            for line in process.stdout or ():
                lines.put(line)
                seen += line.startswith(("bankfeed sandbox on ", "admin API on "))
                if seen == 2:
                    return
            lines.put("")

        threading.Thread(target=read_start, name="bankfeed-remote-sandbox-start", daemon=True).start()
        url = token = None
        deadline = time.monotonic() + _START_TIMEOUT
        # The URL line comes first, the admin line after it (docs/sandbox.md#the-admin-api).
        while url is None or token is None:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                _stop(process)
                raise BankfeedError(
                    f"the sandbox process printed no URL and admin token within {_START_TIMEOUT:.0f} s: "
                    f"run `{' '.join(command[1:])}` by hand to see why"
                ) from None
            if not line:
                _, errors = process.communicate()
                raise BankfeedError(f"the sandbox process ended at start: {errors.strip()}")
            words = line.split()
            if line.startswith("bankfeed sandbox on "):
                url = words[3]
            elif line.startswith("admin API on "):
                token = words[-1]
        try:
            sandbox = cls(str(url), str(token))
        except BaseException:
            _stop(process)
            raise
        sandbox._process = process
        return sandbox

    def close(self) -> None:
        """Stops the process :meth:`start` started (a sandbox only connected to is left
        running). Closing twice is harmless."""
        process, self._process = self._process, None
        if process is not None:
            _stop(process)

    def __enter__(self) -> RemoteSandbox:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RemoteSandbox(url={self.url!r}, customer_id={self.customer_id!r})"

    def _call(self, method: str, name: str, body: object = None) -> Any:
        """One admin call; its JSON answer."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"{self.url}/_sandbox/{name}", data=data, method=method)
        request.add_header("Authorization", f"Bearer {self._token}")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        through = "" if self._proxy is None else f" through the proxy {self._proxy}"
        try:
            with self._opener.open(request, timeout=self._timeout) as answer:
                return json.loads(answer.read())
        except urllib.error.HTTPError as exc:
            try:
                message = str(json.loads(exc.read()).get("Message", ""))
            except ValueError:
                message = ""
            if exc.code == 400 and name == "faults" and message.startswith("faults "):
                rule = message.removeprefix("faults ")
                raise ConfigError(message, field="faults", rule=rule) from None
            if exc.code == 400 and name == "clock" and message.startswith("days "):
                raise ConfigError(message, field="days", rule=message.removeprefix("days ")) from None
            if exc.code == 401:
                message = "the admin token was refused: pass the token the sandbox printed at start"
            elif exc.code == 404:
                message = "no admin API there: start the sandbox with --admin (bf.Sandbox(admin=True))"
            raise BankfeedError(f"admin API {method} /_sandbox/{name}: {exc.code} {message}{through}") from None
        except (urllib.error.URLError, OSError) as exc:
            raise BankfeedError(
                f"admin API {method} /_sandbox/{name}: could not reach {self.url}{through}: {exc}"
            ) from None

    @property
    def widget_url(self) -> str:
        """The sandbox's imitation of the hosted connection widget, ``<url>/v2/``, as
        ``bf.Sandbox.widget_url`` gives it (see The hosted widget in docs/sandbox.md)."""
        return f"{self.url}/v2/"

    @property
    def login_ids(self) -> list[str]:
        """The LoginIds of the bulk logins the sandbox saved at start (``--logins N``), in order,
        as ``bf.Sandbox.login_ids`` gives them; empty without ``--logins``. They are computed here
        from the sandbox's seed and count, as it computed them: no request lists them."""
        return Sandbox.login_ids_for(self._logins, seed=self._seed)

    @property
    def requests(self) -> list[RecordedRequest]:
        """The request log, oldest first, as ``bf.Sandbox.requests`` gives it."""
        requests: list[RecordedRequest] = self._call("GET", "requests")["requests"]
        return requests

    @property
    def request_count(self) -> int:
        """How many requests the sandbox received since it started (or was reset)."""
        count: int = self._call("GET", "requests")["count"]
        return count

    @property
    def requests_dropped(self) -> int:
        """How many entries the request log dropped, the oldest first, to stay within its bounds,
        as ``bf.Sandbox.requests_dropped`` gives it."""
        dropped: int = self._call("GET", "requests")["dropped"]
        return dropped

    @property
    def faults(self) -> list[dict[str, Any]]:
        """The faults still waiting, in order, each with the ``times`` it has left."""
        faults: list[dict[str, Any]] = self._call("GET", "faults")["faults"]
        return faults

    def inject(self, *faults: Mapping[str, Any]) -> None:
        """Adds faults after those already waiting, each a dict as for ``bf.Sandbox(faults=...)``."""
        first: object = faults[0] if faults else None
        if isinstance(first, list | tuple):
            raise TypeError(f"inject takes the faults one by one, sb.inject(*faults), not a {type(first).__name__}")
        self._call("POST", "faults", [dict(fault) for fault in faults])

    def clear_faults(self) -> None:
        """Removes every fault still waiting."""
        self._call("DELETE", "faults")

    def reset(self) -> None:
        """Back to the state at start, as ``bf.Sandbox.reset``."""
        self._call("POST", "reset")

    @property
    def as_of(self) -> datetime.date:
        """The sandbox's "today", as ``bf.Sandbox.as_of`` gives it (see The clock in
        docs/sandbox.md)."""
        return datetime.date.fromisoformat(self._call("GET", "clock")["as_of"])

    def advance(self, days: int = 1) -> datetime.date:
        """Moves the sandbox's clock ``days`` days on (a whole number, 1 or more) and returns the
        new :attr:`as_of`, as ``bf.Sandbox.advance`` does; a ``days`` that breaks the rule is a
        :class:`bf.ConfigError <bankfeed.ConfigError>` naming ``days``, and the clock stays."""
        if isinstance(days, bool) or not isinstance(days, int):
            raise TypeError(f"days must be an int, 1 or more, not {type(days).__name__}")
        if days < 1:
            rule = f"must be a whole number of days, 1 or more, got {days}"
            raise ConfigError(f"days {rule}", field="days", rule=rule)
        return datetime.date.fromisoformat(self._call("POST", "clock", {"days": days})["as_of"])

    def client(self, **options: Any) -> Client:
        """A :class:`bf.Client <bankfeed.Client>` of this sandbox, polling every 0.05 s unless
        ``options`` say. It sends the public test instance's keys when the sandbox asks for those
        (its default); keys of your own (``--keys-from-env``) are passed as ``api_key=`` and
        ``secret_key=`` (the admin API never hands them out). Nothing is read from the
        ``BANKFEED_*`` variables."""
        return Client(**self._client_options(options))

    def async_client(self, **options: Any) -> AsyncClient:
        """A :class:`bf.AsyncClient <bankfeed.AsyncClient>` of this sandbox, as :meth:`client`."""
        return AsyncClient(**self._client_options(options))

    def _client_options(self, options: dict[str, Any]) -> dict[str, Any]:
        """``options`` completed for a client of this sandbox: its URL, customer id and public keys,
        a short poll interval, and nothing from the ``BANKFEED_*`` variables (as ``bf.Sandbox``'s
        clients: never the real service's keys)."""
        defaults = {
            **self._public_keys,
            "base_url": self.url,
            "customer_id": self.customer_id,
            "poll_interval": _POLL_INTERVAL,
            "_environment": False,
        }
        return {**defaults, **options}


def _route(url: str) -> tuple[urllib.request.OpenerDirector, str | None]:
    """The opener of the admin calls to ``url`` and the proxy it goes through, as shown in an
    error (``http://proxy.corp:3128 (from HTTP_PROXY)``, no password), or ``None``.

    Loopback is never proxied, as in the client (docs/protocol.md#proxies): a proxy would see the
    admin token, and one on another machine cannot reach this one's loopback anyway. Any other
    host goes through the proxy variables as the client reads them, ``NO_PROXY`` included."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    if _is_loopback(host):
        return direct, None
    found = _environment_proxy(parts.scheme)
    if found is None:
        return direct, None
    variable, proxy = found
    no_proxy = next((v for n in ("NO_PROXY", "no_proxy") if (v := os.environ.get(n))), "")
    if _bypasses(host, no_proxy):
        return direct, None
    if "://" not in proxy:
        proxy = f"http://{proxy}"  # as curl and the client take a value without a scheme
    scheme, _, rest = proxy.partition("://")
    shown = f"{scheme}://{rest.split('/', 1)[0].rpartition('@')[2]} (from {variable})"
    return urllib.request.build_opener(urllib.request.ProxyHandler({parts.scheme: proxy})), shown


def _environment_proxy(scheme: str) -> tuple[str, str] | None:
    """The variable naming the proxy for ``scheme`` and its value, in the client's order: the
    scheme's own variable, upper case first, then ``ALL_PROXY``; the first set and not empty.
    ``HTTP_PROXY`` is not read in a CGI script, where a request's ``Proxy:`` header sets it."""
    names = [f"{scheme.upper()}_PROXY", f"{scheme.lower()}_proxy", "ALL_PROXY", "all_proxy"]
    if scheme.lower() == "http" and "REQUEST_METHOD" in os.environ:
        names.remove("HTTP_PROXY")
    return next(((name, value) for name in names if (value := os.environ.get(name, "").strip())), None)


def _bypasses(host: str, no_proxy: str) -> bool:
    """Whether a ``NO_PROXY`` value lets ``host`` bypass the proxy, as the client reads it: a host
    name matches itself and its subdomains (a leading ``.`` or ``*.`` changes nothing), an
    address itself, a CIDR range its addresses, ``*`` every host; a port is ignored."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    for entry in no_proxy.split(","):
        entry = entry.strip().lower()
        if entry.startswith("["):
            entry = entry[1:].partition("]")[0]
        elif entry.count(":") == 1:
            entry = entry.partition(":")[0]
        if entry == "*":
            return True
        entry = entry.removeprefix("*").lstrip(".")
        if not entry:
            continue
        if address is not None:
            with contextlib.suppress(ValueError):
                if address in ipaddress.ip_network(entry, strict=False):
                    return True
        elif host == entry or host.endswith(f".{entry}"):
            return True
    return False


def _is_loopback(host: str) -> bool:
    """Whether ``host`` (as ``urlsplit`` gives it: lower case, no brackets) is ``localhost`` or
    a loopback address, also in the short IPv4 forms a resolver takes (``127.1``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    if host and all(c in "0123456789abcdefx." for c in host):
        try:
            return socket.inet_aton(host)[0] == 127
        except OSError:
            return False
    return False


def _stop(process: subprocess.Popen[str]) -> None:
    """SIGTERM, which the sandbox command stops on cleanly; a kill if it does not within 10 s."""
    process.terminate()
    try:
        process.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
