"""A loopback server whose cached Authorize asks a security question, answering in the shapes
recorded from a staging instance of the real service (docs/answering.md#cached-reads-that-ask-a-question):
the cached Authorize (``LoginId``, ``MostRecentCached: true``) of a login it was told to challenge
answers a 203 with one ``QuestionAndAnswer``; the answer (``RequestId``, ``SecurityResponses``)
answers a 200 that names no ``Login``; every other login's cached Authorize answers a 200 with its
``Login``. The data calls answer at once, with the data of the session's login.

The keys, their order and the value types are the recorded ones; every value is made up. Each
request is logged with its body, so that a test can say what was sent, and what was not.
"""

from __future__ import annotations

import http.server
import json
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from stubserver import operation_of

CUSTOMER = "2f6d0a4c-81b3-4e07-9c52-d4a7e1b09f36"
#: The logins, in the recorded LoginId shape (a .NET sequential tail, a variant outside RFC 4122).
ASKED = "6a1f03c2-5d84-4e9b-5c21-08dc4be17a90"
FINE = ("1c7e9b40-2a65-4f38-6b03-08dc4be17a91", "93d4e0a7-b1c2-4d5e-7f60-08dc4be17a92")
PROMPT = "Which lake did you first swim across?"
ANSWER = "Memphremagog"
INSTITUTION = "HarbourSavings"


def login(login_id: str) -> dict[str, Any]:
    """``Login`` as the recorded 200 carries it."""
    return {
        "Username": "tidewater",
        "IsScheduledRefresh": False,
        "LastRefresh": "2026-03-14T09:26:53.5897932",
        "Type": "Personal",
        "Id": login_id,
    }


def _links(*rels: str) -> list[dict[str, Any]]:
    return [{"rel": rel, "href": f"/{href}", "example": None} for rel, href in (r.split("=") for r in rels)]


_SESSION_LINKS = ("AccountsDetail=GetAccountsDetail", "AccountsSummary=GetAccountsSummary", "Statements=GetStatements")


def asked_203(request_id: str) -> dict[str, Any]:
    """The recorded 203 of a cached Authorize, keys in their order."""
    return {
        "HttpStatusCode": 203,
        "Links": _links("Authorization=Authorize"),
        "SecurityChallenges": [{"Type": "QuestionAndAnswer", "Prompt": PROMPT}],
        "InstitutionName": "Harbour Savings",
        "InstitutionId": 27,
        "Institution": INSTITUTION,
        "RequestId": request_id,
    }


def answered_200(request_id: str) -> dict[str, Any]:
    """The recorded 200 of the answer: no ``Login``."""
    return {
        "HttpStatusCode": 200,
        "Links": _links(*_SESSION_LINKS),
        "InstitutionName": "Harbour Savings",
        "InstitutionId": 27,
        "Institution": INSTITUTION,
        "RequestId": request_id,
    }


def cached_200(login_id: str, request_id: str) -> dict[str, Any]:
    """The recorded 200 of a cached Authorize that asks nothing, with its ``Login``."""
    return {
        "HttpStatusCode": 200,
        "Links": _links(*_SESSION_LINKS),
        "InstitutionName": "Harbour Savings",
        "Login": login(login_id),
        "InstitutionId": 27,
        "Institution": INSTITUTION,
        "RequestId": request_id,
    }


def _account(login_id: str) -> dict[str, Any]:
    return {
        "Transactions": [
            {
                "Date": "2026/03/02",
                "Code": None,
                "Description": "Ferry pass",
                "Debit": 42.5,
                "Credit": None,
                "Balance": 957.5,
                "Id": "0c1d2e3f-4a5b-4c6d-8e7f-" + login_id[-12:],
            }
        ],
        "TransitNumber": "00123",
        "InstitutionNumber": "977",
        "OverdraftLimit": 0,
        "Title": "Everyday chequing",
        "AccountNumber": "4410077",
        "LastFourDigits": None,
        "Balance": {"Available": None, "Current": 957.5, "Limit": None},
        "Category": "Operations",
        "Type": "Chequing",
        "Currency": "CAD",
        "Holder": None,
        "AccountType": None,
        "Id": "7e8f9a0b-1c2d-4e3f-9a4b-" + login_id[-12:],
    }


def data_200(operation: str, login_id: str, request_id: str) -> dict[str, Any]:
    """A data operation's 200 for ``login_id``'s session."""
    if operation == "Investments":
        login_of = {"Id": login_id}
        return {"Accounts": [], "Securities": [], "Value": 1, "Cash": 1, "Login": login_of, "RequestId": request_id}
    if operation == "GetAccountsDetail":
        return {
            "HttpStatusCode": 200,
            "Accounts": [_account(login_id)],
            "InstitutionName": "Harbour Savings",
            "Login": login(login_id),
            "InstitutionId": 27,
            "Institution": INSTITUTION,
            "RequestId": request_id,
        }
    return {"HttpStatusCode": 200, "Income": {"Id": request_id}, "Login": {"Id": login_id}, "RequestId": request_id}


def _session_nonexistent() -> dict[str, Any]:
    """The recorded answer to a RequestId the server does not know."""
    return {
        "HttpStatusCode": 400,
        "Message": "RequestId is invalid or session has ended",
        "FlinksCode": "SESSION_NONEXISTENT",
    }


@dataclass(frozen=True)
class Sent:
    """One request the server received."""

    method: str
    operation: str
    path: str
    #: The JSON body; empty for a request without one.
    body: dict[str, Any]

    @property
    def answers(self) -> bool:
        """Whether it is the answer to a challenge (an Authorize carrying ``SecurityResponses``)."""
        return self.operation == "Authorize" and "SecurityResponses" in self.body


@dataclass
class _State:
    challenged: set[str]
    sessions: dict[str, str] = field(default_factory=dict)
    asked: dict[str, str] = field(default_factory=dict)
    log: list[Sent] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class AskingServer(http.server.ThreadingHTTPServer):
    """The server; ``challenged`` are the LoginIds whose cached Authorize asks ``PROMPT``."""

    daemon_threads = True

    def __init__(self, challenged: set[str]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = _State({login_id.lower() for login_id in challenged})

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    @property
    def log(self) -> list[Sent]:
        with self.state.lock:
            return list(self.state.log)

    def answered(self) -> list[Sent]:
        """The answers to challenges that reached the server."""
        return [sent for sent in self.log if sent.answers]

    def data_calls(self) -> list[Sent]:
        """The data requests received (everything but Authorize)."""
        return [sent for sent in self.log if sent.operation != "Authorize"]


class _Handler(http.server.BaseHTTPRequestHandler):
    server: AskingServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _reply(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else {}
        operation = operation_of(self.path)
        state = self.server.state
        with state.lock:
            state.log.append(Sent(self.command, operation, self.path, body))
            reply = self._decide(operation, body, state)
        self._reply(*reply)

    def _decide(self, operation: str, body: dict[str, Any], state: _State) -> tuple[int, dict[str, Any]]:
        if operation == "Authorize":
            if "SecurityResponses" in body:
                request_id = body.get("RequestId", "")
                login_id = state.asked.get(request_id)
                if login_id is None:
                    return 400, _session_nonexistent()
                if body["SecurityResponses"] != {PROMPT: [ANSWER]}:
                    return 401, {
                        "HttpStatusCode": 401,
                        "Message": "The security response is invalid",
                        "FlinksCode": "INVALID_SECURITY_RESPONSE",
                        "RequestId": request_id,
                    }
                state.sessions[request_id] = login_id
                return 200, answered_200(request_id)
            login_id = str(body.get("LoginId", ""))
            request_id = str(uuid.uuid4())
            if body.get("MostRecentCached") is True and login_id.lower() in state.challenged:
                state.asked[request_id] = login_id
                return 203, asked_203(request_id)
            state.sessions[request_id] = login_id
            return 200, cached_200(login_id, request_id)
        # The session is named by the body's RequestId, or by the attributes path's.
        request_id = str(body.get("RequestId") or self.path.split("/attributes/")[-1].split("/")[0])
        login_id = state.sessions.get(request_id)
        if login_id is None:
            return 400, _session_nonexistent()
        return 200, data_200(operation, login_id, request_id)

    do_POST = do_GET = _answer


def serving(challenged: set[str]) -> Iterator[AskingServer]:
    """The body of a fixture: a server that asks ``challenged``; stopped after."""
    server = AskingServer(challenged)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join(5)
