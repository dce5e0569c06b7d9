"""``bf.RemoteSandbox``: a sandbox served by another process, steered through its admin API.

``python -m bankfeed sandbox --admin`` (or ``bf.Sandbox(admin=True)``) serves the admin API under
``/_sandbox/`` and prints its token at start (docs/sandbox.md#the-admin-api). This class speaks
it with the standard library alone, and offers what ``bf.Sandbox`` offers a test: ``requests``,
``request_count``, ``faults``, ``inject``, ``clear_faults``, ``reset`` and ``client()``.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any

from bankfeed._native import AsyncClient, Client
from bankfeed._types import RecordedRequest
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

    The token is never shown in its ``repr``. A refused token raises :class:`bf.Unauthorized
    <bankfeed.Unauthorized>`-like ``BankfeedError``; a fault that cannot be read,
    :class:`bf.ConfigError <bankfeed.ConfigError>` as ``bf.Sandbox.inject`` raises it.
    """

    def __init__(self, url: str, admin_token: str, *, timeout: float = 10.0) -> None:
        self.url = url.rstrip("/")
        self._token = admin_token
        self._timeout = timeout
        self._process: subprocess.Popen[str] | None = None
        info = self._call("GET", "info")
        #: The customer id the sandbox answers to.
        self.customer_id: str = info["customer_id"]
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
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as answer:
                return json.loads(answer.read())
        except urllib.error.HTTPError as exc:
            try:
                message = str(json.loads(exc.read()).get("Message", ""))
            except ValueError:
                message = ""
            if exc.code == 400 and name == "faults" and message.startswith("faults "):
                rule = message.removeprefix("faults ")
                raise ConfigError(message, field="faults", rule=rule) from None
            if exc.code == 401:
                message = "the admin token was refused: pass the token the sandbox printed at start"
            elif exc.code == 404:
                message = "no admin API there: start the sandbox with --admin (bf.Sandbox(admin=True))"
            raise BankfeedError(f"admin API {method} /_sandbox/{name}: {exc.code} {message}") from None
        except (urllib.error.URLError, OSError) as exc:
            raise BankfeedError(f"admin API {method} /_sandbox/{name}: could not reach {self.url}: {exc}") from None

    @property
    def widget_url(self) -> str:
        """The sandbox's imitation of the hosted connection widget, ``<url>/v2/``, as
        ``bf.Sandbox.widget_url`` gives it (see The hosted widget in docs/sandbox.md)."""
        return f"{self.url}/v2/"

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


def _stop(process: subprocess.Popen[str]) -> None:
    """SIGTERM, which the sandbox command stops on cleanly; a kill if it does not within 10 s."""
    process.terminate()
    try:
        process.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
