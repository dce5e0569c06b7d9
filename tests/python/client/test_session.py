"""Sessions, for ``bf.Client`` and ``bf.AsyncClient`` alike (the ``api`` fixture): what a session
carries, cached sessions and every data call they serve, the session of a known RequestId,
saved, unsaved, unknown and deleted logins, a session resumed with another login's LoginId, and
clients and sessions that pickle as their own class and keep working."""

from __future__ import annotations

import datetime
import pickle
import re
import uuid
from typing import Any

import pytest

import bankfeed as bf
from bfhelpers import (
    API_KEY,
    INSTITUTION,
    PASSWORD,
    SECRET_KEY,
    Api,
    assert_investments,
    assert_secret_free,
    is_guid,
    login_id_of,
    raises,
)


@pytest.fixture
def client(api: Api, sandbox: bf.Sandbox) -> Any:
    """A client of the shared sandbox, of the kind the case runs against."""
    return api.client(sandbox)


@pytest.fixture
def saved_session(api: Api, client: Any) -> Any:
    """A live session of greatday_nomfa (no challenges), its login saved."""
    session = api.run(client.authorize(INSTITUTION, "greatday_nomfa", PASSWORD, save=True))
    assert isinstance(session, api.Session)
    return session


@pytest.fixture(scope="module")
def saved_login_id(sandbox: bf.Sandbox) -> str:
    """The LoginId of greatday_nomfa, saved on the shared sandbox."""
    session = sandbox.client(poll_interval=0.01).authorize(INSTITUTION, "greatday_nomfa", PASSWORD, save=True)
    assert isinstance(session, bf.Session)
    return login_id_of(session)


@pytest.fixture(scope="module")
def reference(sandbox: bf.Sandbox, saved_login_id: str) -> bf.Session:
    """A cached session of the saved login read by the sync client: what both clients must give."""
    return sandbox.client(poll_interval=0.01).authorize_cached(saved_login_id)


# --- What a session carries -----------------------------------------------------------------


def test_a_session_carries_guids_login_and_links(saved_session: Any) -> None:
    assert is_guid(saved_session.request_id)
    assert is_guid(saved_session.login_id)
    login = saved_session.login
    assert isinstance(login, dict)
    assert login["Id"] == saved_session.login_id
    assert login["Username"].casefold() == "greatday_nomfa"
    links = saved_session.links
    assert isinstance(links, list) and links
    assert all("rel" in link and "href" in link for link in links)
    assert saved_session.raw["RequestId"] == saved_session.request_id


def test_last_refresh_is_an_aware_utc_datetime(saved_session: Any) -> None:
    # The service writes LastRefresh with 7 fractional digits and no zone: it is UTC.
    # Its value moves with each live refresh of the login (docs/sandbox.md#lastrefresh-loginids-and-languages),
    # so it is read back from the answer; the seventh digit is below a datetime's microsecond.
    assert saved_session.login is not None
    written = saved_session.login["LastRefresh"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}", written), written
    assert saved_session.last_refresh == datetime.datetime.fromisoformat(written[:-1]).replace(
        tzinfo=datetime.timezone.utc
    )


# --- Cached sessions and data ---------------------------------------------------------------


def test_authorize_cached_gives_a_new_request_id_for_the_same_login(api: Api, client: Any, saved_session: Any) -> None:
    cached = api.run(client.authorize_cached(login_id_of(saved_session)))
    assert isinstance(cached, api.Session)
    assert is_guid(cached.request_id)
    assert cached.request_id != saved_session.request_id
    assert cached.login_id == saved_session.login_id
    again = api.run(client.authorize_cached(login_id_of(saved_session)))
    assert again.request_id not in (cached.request_id, saved_session.request_id)


def test_a_cached_session_serves_every_data_call(
    api: Api, client: Any, saved_login_id: str, reference: bf.Session
) -> None:
    session = api.run(client.authorize_cached(saved_login_id))
    assert isinstance(session, api.Session)
    assert is_guid(session.request_id) and session.request_id != reference.request_id
    assert session.login_id == saved_login_id

    investments = api.run(session.investments())
    assert_investments(investments)
    assert investments.request_id is not None and investments.request_id.lower() == session.request_id.lower()
    assert investments.positions.to_records() == reference.investments().positions.to_records()

    detail = api.run(session.accounts_detail(with_transactions=True, days="Days365"))
    assert isinstance(detail, bf.Accounts) and len(detail.transactions) > 0
    expected = reference.accounts_detail(with_transactions=True, days="Days365")
    assert detail.transactions.to_records() == expected.transactions.to_records()

    summary = api.run(session.accounts_summary(with_balance=True))
    assert isinstance(summary, bf.Accounts) and len(summary.accounts) == len(detail.accounts)

    statements = api.run(session.statements(number_of_statements="MostRecent"))
    assert isinstance(statements, bf.Statements) and statements.files
    assert all(isinstance(file["content"], bytes) and file["content"] for file in statements.files)

    income = api.run(session.attributes(package="income"))
    assert isinstance(income, bf.Attributes) and len(income.values) > 0
    assert income.to_dict() == reference.attributes(package="income").to_dict()

    custom = api.run(session.attributes({"Card": ["balance_min", "count_nsf"]}, detail=["count_nsf"]))
    assert isinstance(custom, bf.Attributes)
    assert set(custom.values.column("attribute")) == {"balance_min", "count_nsf"}


def test_client_investments_and_attributes_open_a_cached_session_themselves(
    api: Api, client: Any, saved_login_id: str, reference: bf.Session
) -> None:
    investments = api.run(client.investments(saved_login_id))
    assert_investments(investments)
    assert investments.accounts.to_records() == reference.investments().accounts.to_records()
    by_package = api.run(client.attributes(saved_login_id, package="income"))
    assert isinstance(by_package, bf.Attributes)
    assert by_package.to_dict() == reference.attributes(package="income").to_dict()
    custom = api.run(client.attributes(saved_login_id, {"Card": ["balance_min"]}))
    assert isinstance(custom, bf.Attributes) and custom.values.column("attribute") == ["balance_min"]


def test_the_session_of_a_known_request_id_sends_nothing_until_its_data_call(
    api: Api, client: Any, sandbox: bf.Sandbox, saved_login_id: str
) -> None:
    opened = api.run(client.authorize_cached(saved_login_id))
    before = sandbox.request_count
    session = client.session(opened.request_id, login_id=saved_login_id)
    assert isinstance(session, api.Session)
    assert session.request_id == opened.request_id and session.login_id == saved_login_id
    assert sandbox.request_count == before
    assert_investments(api.run(session.investments()))


# --- Saved, unsaved, unknown and deleted logins ---------------------------------------------


def test_an_unsaved_login_cannot_be_read_cached(api: Api, fresh_sandbox: bf.Sandbox) -> None:
    client = api.client(fresh_sandbox)
    session = api.run(client.authorize(INSTITUTION, "greatday_nomfa", PASSWORD, save=False))
    assert isinstance(session, api.Session)
    with raises(bf.InvalidLogin):
        api.run(client.authorize_cached(login_id_of(session)))


@pytest.mark.parametrize("call", ["authorize_cached", "investments", "attributes"])
def test_an_unknown_login_id_is_refused(api: Api, client: Any, call: str) -> None:
    unknown = str(uuid.uuid4())
    with raises(bf.InvalidLogin, code="INVALID_LOGIN") as info:
        if call == "attributes":
            api.run(client.attributes(unknown, package="income"))
        else:
            api.run(getattr(client, call)(unknown))
    assert isinstance(info.value, bf.ApiError)
    assert "INVALID_LOGIN" in str(info.value)


def test_delete_login_forgets_the_saved_connection(api: Api) -> None:
    # Deleted right after it connected: CARD_IN_USE (tests/python/sandbox) turned off.
    with bf.Sandbox(card_in_use_seconds=0.0) as sb:
        forgets_the_saved_connection(api, sb)


def forgets_the_saved_connection(api: Api, fresh_sandbox: bf.Sandbox) -> None:
    client = api.client(fresh_sandbox)
    session = api.run(client.authorize(INSTITUTION, "greatday_nomfa", PASSWORD, save=True))
    login_id = login_id_of(session)
    assert isinstance(api.run(client.authorize_cached(login_id)), api.Session)
    answer = api.run(client.delete_login(login_id))
    assert isinstance(answer, dict) and answer
    with raises(bf.InvalidLogin):
        api.run(client.authorize_cached(login_id))


def test_investments_of_a_session_the_server_does_not_know(api: Api) -> None:
    """A RequestId the server never issued: a sandbox restarted on the same port forgot it."""
    first = bf.Sandbox(pending_polls=0)
    try:
        client = api.client(first, poll_timeout=5)
        session = api.run(client.authorize(INSTITUTION, "greatday_nomfa", PASSWORD, save=True))
        assert isinstance(session, api.Session)
        port = int(first.url.rsplit(":", 1)[1])
        customer_id = first.customer_id
    finally:
        first.close()
    try:
        reborn = bf.Sandbox(port=port, customer_id=customer_id)
    except Exception as exc:  # the port was taken in between: nothing to test
        pytest.skip(f"could not restart the sandbox on port {port}: {exc}")
    try:
        with raises(bf.SessionError, code="SESSION_NONEXISTENT"):
            api.run(session.investments())
    finally:
        reborn.close()


def test_a_session_resumed_with_the_login_id_of_another_login_refuses_its_data(api: Api) -> None:
    with bf.Sandbox(logins=2) as sb:
        client = api.client(sb)
        mine, theirs = sb.login_ids
        opened = api.run(client.authorize_cached(theirs))
        session = client.session(opened.request_id, login_id=mine)
        calls = {
            "accounts_detail": "GetAccountsDetail",
            "accounts_summary": "GetAccountsSummary",
            "statements": "GetStatements",
        }
        for call, operation in calls.items():
            with raises(bf.ProtocolError, operation=operation, status=200, request_id=opened.request_id) as info:
                api.run(getattr(session, call)())
            assert mine in str(info.value) and theirs in str(info.value), str(info.value)
            assert "resume each login with its own RequestId" in str(info.value)
        # Investments and attributes name the LoginId in their request: refused either way.
        with raises(bf.InvalidRequest):
            api.run(session.investments())
        with raises(bf.ProtocolError, operation="GetAccountsDetail"):
            api.run(session.attributes(package="income"))
        detail = api.run(client.session(opened.request_id, login_id=theirs).accounts_detail())
        assert isinstance(detail, bf.Accounts) and len(detail.accounts) > 0


def test_the_repr_of_a_client_and_its_session_hides_the_keys(api: Api) -> None:
    with bf.Sandbox(api_key=API_KEY, secret_key=SECRET_KEY) as sb:
        client = api.client(sb, api_key=API_KEY, secret_key=SECRET_KEY)
        session = api.run(client.login(INSTITUTION, "greatday_nomfa", PASSWORD, save=True))
        assert isinstance(session, api.Session)
        assert_investments(api.run(session.investments()))
        assert_secret_free(repr(client), str(client), repr(session))
        assert API_KEY not in repr(client) and SECRET_KEY not in repr(client)


# --- Pickling -------------------------------------------------------------------------------


def test_a_client_pickles_as_its_own_class_and_calls_the_service(api: Api, client: Any, saved_login_id: str) -> None:
    copy = pickle.loads(pickle.dumps(client))
    assert type(copy) is type(client)
    assert copy.base_url == client.base_url and copy.poll_interval == client.poll_interval
    assert_investments(api.run(copy.investments(saved_login_id)))


def test_a_session_pickles_as_its_own_class_and_serves_data(api: Api, client: Any, saved_login_id: str) -> None:
    session = api.run(client.authorize_cached(saved_login_id))
    copy = pickle.loads(pickle.dumps(session))
    assert type(copy) is type(session)
    assert copy.request_id == session.request_id and copy.raw == session.raw
    assert_investments(api.run(copy.investments()))
