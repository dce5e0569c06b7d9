"""Requests to a sandbox as a hand-written client sends them (urllib and JSON, no bankfeed), for
the tests that hold the sandbox's answers against the service's documentation: its examples
(sandbox/test_documented_examples.py) and the list of where it differs
(sandbox/test_differences.py)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import bankfeed as bf

#: A status and the JSON body that came with it.
Reply = tuple[int, dict[str, Any]]


class Raw:
    """Requests to ``sb`` with its keys: the API key on every call but the two that take the
    other one (``/Authorize`` and ``/GenerateAuthorizeToken``, whose ``flinks-auth-key`` the
    caller gives)."""

    def __init__(self, sb: bf.Sandbox) -> None:
        self.sb = sb
        self.base = f"{sb.url}/v3/{sb.customer_id}/BankingServices"

    def send(
        self, method: str, path: str, body: object = None, content_type: str = "application/json", **headers: str
    ) -> Reply:
        data = None if body is None else json.dumps(body).encode()
        if data is not None:
            headers["Content-Type"] = content_type
        if self.sb.api_key is not None and not path.startswith(("/Authorize", "/GenerateAuthorizeToken")):
            headers.setdefault("x-api-key", self.sb.api_key)
        request = urllib.request.Request(self.base + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    def minted(self) -> dict[str, Any]:
        """The answer of ``/GenerateAuthorizeToken``, which must be a 200."""
        assert self.sb.secret_key is not None
        status, minted = self.send("POST", "/GenerateAuthorizeToken", **{"flinks-auth-key": self.sb.secret_key})
        assert status == 200, minted
        return minted

    def token(self) -> str:
        """A fresh single-use authorize token."""
        return str(self.minted()["Token"])

    def authorize(self, body: dict[str, Any], token: str | None = None) -> Reply:
        """``/Authorize`` with ``body``, with ``token`` or a fresh one."""
        return self.send("POST", "/Authorize", body, **{"flinks-auth-key": token or self.token()})

    def login(self, username: str, **fields: Any) -> Reply:
        """A live ``/Authorize`` of ``username`` at the sandbox's institution, with ``fields`` added."""
        live = {"Institution": "FlinksCapital", "Username": username, "Password": "Everyday", "MostRecentCached": False}
        return self.authorize({**live, **fields})

    def data(self, operation: str, request_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """A banking operation, polled on its ...Async link until its 200."""
        status, answer = self.send("POST", f"/{operation}", {"RequestId": request_id, **body})
        while status == 202:
            status, answer = self.send("GET", f"/{operation}Async/{request_id}")
        assert status == 200, answer
        return answer

    def insight(self, path: str) -> dict[str, Any]:
        """An attributes GET, polled (it answers 202 while the account detail is processed)."""
        url = f"{self.sb.url}/v3/{self.sb.customer_id}/insight{path}"
        for _ in range(10):
            request = urllib.request.Request(url, headers={"x-api-key": self.sb.api_key or ""})
            try:
                with urllib.request.urlopen(request, timeout=10) as response:
                    status, answer = response.status, json.loads(response.read())
            except urllib.error.HTTPError as error:
                status, answer = error.code, json.loads(error.read())
            if status != 202:
                break
        assert status == 200 and isinstance(answer, dict), answer
        return answer
