"""LoginIds as the real service mints them: a .NET sequential tail whose variant nibble is outside
RFC 4122 (``uuid.UUID(x).version`` is None), in any case (docs/protocol.md#hosts-paths-and-versions).
Every place of a client that takes a LoginId takes them, and sends each as it was given: the single
calls and the sessions, the bulk calls and their ``request_ids=``, ``Connection.from_redirect`` and
``from_event``, the loopback catcher of ``client.connect()``, the notebook's ``ConnectWidget``,
and the views, which shorten them whatever their case. The service is the loopback server
answering in the recorded shapes (``recordedserver``); each case runs for ``bf.Client`` and
``bf.AsyncClient`` alike (the ``api`` fixture). The export, the dlt source and the cluster readers
are in export/test_export_login_id_shapes.py.
"""

from __future__ import annotations

import threading
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import pytest

import bankfeed as bf
from bfhelpers import Api
from recordedserver import CUSTOMER, MINTED, RecordedServer, Sent, Serve, request_id_of, servers, spellings

#: One minted LoginId in every spelling, and another whose variant nibble is Microsoft's (``c``).
LOGIN_IDS = {
    "minted": MINTED[0],
    "minted-upper": spellings(MINTED[0])[1],
    "minted-mixed": spellings(MINTED[0])[2],
    "variant-c-upper": MINTED[2].upper(),
}


def test_the_login_ids_are_outside_rfc_4122() -> None:
    # What the cases below rely on: pydantic's UUID4, or a check of the version, refuses each.
    assert all(uuid.UUID(login_id).version is None for login_id in MINTED)


@pytest.fixture
def serve() -> Iterator[Serve]:
    # A server that still holds a session of every minted login, as one an earlier run opened.
    yield from servers(resumable=set(MINTED))


def client_of(api: Api, stub: RecordedServer) -> Any:  # bf.Client or bf.AsyncClient
    return api.client_at(stub.url, CUSTOMER, api_key="ak-shapes-1", max_retries=0)


def login_ids_sent(requests: list[Sent]) -> list[str]:
    """Every LoginId the requests carried: in a body's ``LoginId``, or in a path after the
    operations that name it there (DeleteCard, GetMFAQuestions, the attributes' ``login/``)."""
    found: list[str] = []
    for request in requests:
        if "LoginId" in request.body:
            found.append(request.body["LoginId"])
        parts = unquote(urlsplit(request.path).path).split("/")
        for before in ("DeleteCard", "GetMFAQuestions", "login"):
            if before in parts[:-1]:
                found.append(parts[parts.index(before) + 1])
    return found


#: Every single call that takes a LoginId, made with one.
SINGLE_CALLS: dict[str, Callable[[Any, str], Any]] = {
    "authorize_cached": lambda client, login_id: client.authorize_cached(login_id),
    "authorize_saved": lambda client, login_id: client.authorize_saved(login_id),
    "login_saved": lambda client, login_id: client.login_saved(login_id),
    "investments": lambda client, login_id: client.investments(login_id),
    "investments-resumed": lambda client, login_id: client.investments(login_id, request_id=request_id_of(login_id)),
    "attributes": lambda client, login_id: client.attributes(login_id, package="income"),
    "attributes-resumed": lambda client, login_id: client.attributes(
        login_id, package="income", request_id=request_id_of(login_id)
    ),
    "delete_login": lambda client, login_id: client.delete_login(login_id),
    "set_scheduled_refresh": lambda client, login_id: client.set_scheduled_refresh(login_id, True),
    "mfa_questions": lambda client, login_id: client.mfa_questions(login_id),
    "answer_mfa_questions": lambda client, login_id: client.answer_mfa_questions(
        login_id, {"Which river runs past the mill?": "The Little One"}
    ),
}


@pytest.mark.parametrize("call", list(SINGLE_CALLS))
@pytest.mark.parametrize("login_id", list(LOGIN_IDS.values()), ids=list(LOGIN_IDS))
def test_every_single_call_takes_the_login_id_and_sends_it_as_given(
    api: Api, serve: Serve, call: str, login_id: str
) -> None:
    stub = serve()
    api.run(SINGLE_CALLS[call](client_of(api, stub), login_id))
    sent = login_ids_sent(stub.log)
    # The first request carries it as given, never re-cased; a request made in the session the
    # service opened may carry it as the service named it (in lower case here): the same login.
    assert sent and sent[0] == login_id, sent
    assert {each.lower() for each in sent} == {login_id.lower()}, sent


@pytest.mark.parametrize("login_id", list(LOGIN_IDS.values()), ids=list(LOGIN_IDS))
def test_a_session_reads_every_kind_of_data_of_its_login_in_any_case(api: Api, serve: Serve, login_id: str) -> None:
    stub = serve()
    client = client_of(api, stub)
    # The server names the login in lower case in every answer: the same login as the one asked for.
    cached = api.run(client.authorize_cached(login_id))
    resumed = client.session(request_id_of(login_id), login_id=login_id)
    assert (cached.login_id, resumed.login_id) == (login_id.lower(), login_id)
    for session in (cached, resumed):
        assert len(api.run(session.accounts_detail()).accounts) == 2
        assert len(api.run(session.accounts_summary()).accounts) == 2
        assert len(api.run(session.statements()).statements) == 0
        assert len(api.run(session.investments()).accounts) == 1
        assert api.run(session.attributes(package="income")).groups == ["Card"]
    assert {each.lower() for each in login_ids_sent(stub.log)} == {login_id.lower()}


BULK_CALLS: dict[str, dict[str, Any]] = {
    "investments_many": {},
    "accounts_detail_many": {},
    "attributes_many": {"package": "income"},
}


@pytest.mark.parametrize("call", list(BULK_CALLS))
def test_a_bulk_call_fetches_every_minted_login_id_in_any_case(api: Api, serve: Serve, call: str) -> None:
    stub = serve()
    # Each login spelled another way (lower, upper, mixed); the last one, given in upper case,
    # resumed by a key of request_ids in lower case.
    given = [spellings(login_id)[index % 3] for index, login_id in enumerate(MINTED)]
    resumed = MINTED[-1].lower()
    assert given[-1] == resumed.upper()
    options = {**BULK_CALLS[call], "request_ids": {resumed: request_id_of(resumed)}}
    pairs = api.collect(getattr(client_of(api, stub), call)(given, **options))
    assert [(login_id, result) for login_id, result in pairs if isinstance(result, BaseException)] == []
    assert sorted(login_id for login_id, _ in pairs) == sorted(given)
    combined = bf.combine(pairs)
    first = next(iter(combined.tables.values()))
    if len(first):
        assert set(first.to_arrow().column("login_id").to_pylist()) <= set(given)
    # The resumed login sent no Authorize: it polled the RequestId given for it.
    authorized_ids = [r.body["LoginId"] for r in stub.log if r.operation == "Authorize"]
    assert sorted(authorized_ids) == sorted(given[:-1])


@pytest.mark.parametrize("login_id", list(LOGIN_IDS.values()), ids=list(LOGIN_IDS))
def test_the_widget_s_redirect_and_event_give_the_login_id_as_sent(login_id: str) -> None:
    redirect = bf.Connection.from_redirect(f"https://example.test/done?demo=true&loginId={login_id}&institution=X")
    event = bf.Connection.from_event({"step": "REDIRECT", "loginId": login_id, "institution": "X"})
    from_url = bf.Connection.from_event({"step": "REDIRECT", "url": f"https://example.test/done?loginId={login_id}"})
    assert redirect.login_id == event.login_id == from_url.login_id == login_id


@pytest.fixture(scope="module")
def connect_sandbox() -> Iterator[bf.Sandbox]:
    with bf.Sandbox() as sb:
        yield sb


@pytest.mark.parametrize("login_id", list(LOGIN_IDS.values()), ids=list(LOGIN_IDS))
def test_the_loopback_catcher_takes_the_login_id_the_widget_redirects_with(
    api: Api, connect_sandbox: bf.Sandbox, login_id: str
) -> None:
    statuses: list[int] = []
    threads: list[threading.Thread] = []

    def on_url(url: bf.ConnectUrl) -> None:
        catcher = parse_qs(urlsplit(url.reveal()).query)["redirectUrl"][0]

        def widget() -> None:
            with urllib.request.urlopen(f"{catcher}?demo=true&loginId={login_id}&institution=X", timeout=5) as page:
                statuses.append(page.status)

        threads.append(threading.Thread(target=widget, daemon=True))
        threads[-1].start()

    connection = api.run(api.client(connect_sandbox).connect(on_url=on_url, timeout=10, open_browser=False))
    for thread in threads:
        thread.join(5)
    assert statuses == [200] and connection.login_id == login_id


@pytest.mark.parametrize("login_id", list(LOGIN_IDS.values()), ids=list(LOGIN_IDS))
def test_the_notebook_widget_reads_the_redirect_event_s_login_id(connect_sandbox: bf.Sandbox, login_id: str) -> None:
    pytest.importorskip("anywidget")
    widget = bf.ConnectWidget(connect_sandbox.widget_url, demo=True)
    widget.redirect = {"step": "REDIRECT", "loginId": login_id, "institution": "X"}
    assert widget.error is None and widget.result is not None and widget.result.login_id == login_id
    assert widget.redirect == {}


def test_the_views_shorten_minted_login_ids_in_any_case(api: Api, serve: Serve) -> None:
    # One login's session names another LoginId: its error quotes both, in upper case.
    asked, named = MINTED[3].upper(), MINTED[4].upper()
    stub = serve(mixed_up={asked: named})
    client = client_of(api, stub)
    given = [MINTED[0].upper(), MINTED[1], asked]
    pairs = api.collect(client.accounts_detail_many(given))
    assert isinstance(dict(pairs)[asked], bf.ProtocolError)
    html = bf.combine(pairs)._repr_html_()
    session_html = api.run(client.authorize_cached(MINTED[0].upper()))._repr_html_()
    for view in (html, session_html):
        for login_id in MINTED:
            assert login_id not in view.lower(), view
    assert "\u2026" + MINTED[0][-4:].upper() in html and "\u2026" + named[-4:] in html
    assert "\u2026" + MINTED[0][-4:] in session_html
