"""Sessions: what a Session carries, cached sessions, saved and unknown logins."""

from __future__ import annotations

import uuid

import pytest

import bankfeed as bf
from bfhelpers import INSTITUTION, PASSWORD, assert_investments, is_guid, login_id_of, raises


@pytest.fixture
def saved_session(client: bf.Client) -> bf.Session:
    session = client.authorize(INSTITUTION, "greatday_nomfa", PASSWORD, save=True)
    assert isinstance(session, bf.Session)
    return session


def test_a_session_carries_guids_login_and_links(saved_session: bf.Session) -> None:
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


def test_authorize_cached_gives_a_new_request_id_for_the_same_login(
    client: bf.Client, saved_session: bf.Session
) -> None:
    cached = client.authorize_cached(login_id_of(saved_session))
    assert isinstance(cached, bf.Session)
    assert is_guid(cached.request_id)
    assert cached.request_id != saved_session.request_id
    assert cached.login_id == saved_session.login_id
    again = client.authorize_cached(login_id_of(saved_session))
    assert again.request_id not in (cached.request_id, saved_session.request_id)


def test_a_cached_session_reads_investments(client: bf.Client, saved_session: bf.Session) -> None:
    cached = client.authorize_cached(login_id_of(saved_session))
    payload = cached.investments()
    assert_investments(payload)
    assert payload.request_id is not None
    assert payload.request_id.lower() == cached.request_id.lower()


def test_an_unsaved_login_cannot_be_read_cached(fresh_sandbox: bf.Sandbox) -> None:
    client = fresh_sandbox.client(poll_interval=0.01, poll_timeout=10)
    session = client.authorize(INSTITUTION, "greatday_nomfa", PASSWORD, save=False)
    assert isinstance(session, bf.Session)
    with raises(bf.InvalidLogin):
        client.authorize_cached(login_id_of(session))


def test_an_unknown_login_id_is_refused(client: bf.Client) -> None:
    with raises(bf.InvalidLogin, code="INVALID_LOGIN") as info:
        client.authorize_cached(str(uuid.uuid4()))
    assert isinstance(info.value, bf.ApiError)
    assert "INVALID_LOGIN" in str(info.value)


def test_an_unknown_login_id_is_refused_by_client_investments(client: bf.Client) -> None:
    with raises(bf.InvalidLogin, code="INVALID_LOGIN"):
        client.investments(str(uuid.uuid4()))


def test_investments_of_a_session_the_server_does_not_know() -> None:
    """A RequestId the server never issued: a sandbox restarted on the same port forgot it."""
    first = bf.Sandbox(pending_polls=0)
    try:
        client = first.client(poll_interval=0.01, poll_timeout=5)
        session = client.authorize(INSTITUTION, "greatday_nomfa", PASSWORD, save=True)
        assert isinstance(session, bf.Session)
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
            session.investments()
    finally:
        reborn.close()


def test_last_refresh_is_an_aware_utc_datetime(saved_session: bf.Session) -> None:
    import datetime

    # The service writes LastRefresh with 7 fractional digits and no zone: it is UTC.
    assert saved_session.login is not None
    assert saved_session.login["LastRefresh"] == "2026-11-20T08:15:42.1234567"
    assert saved_session.last_refresh == datetime.datetime(
        2026, 11, 20, 8, 15, 42, 123456, tzinfo=datetime.timezone.utc
    )
