"""Passwords, answers and keys never show in a repr or str; keys are sent where they belong."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import bankfeed as bf
from bfhelpers import (
    API_KEY,
    GREATDAY,
    INSTITUTION,
    PASSWORD,
    REFUSED,
    SECRET_KEY,
    SandboxUser,
    answer_map,
    answers_for,
    assert_investments,
    assert_secret_free,
    login_id_of,
    raises,
    remember,
)


def test_no_repr_or_str_shows_a_password_answer_or_key(
    client: bf.Client, users: dict[str, SandboxUser], sandbox: bf.Sandbox
) -> None:
    texts: list[str] = []
    keyed = bf.Client(sandbox.url, sandbox.customer_id, api_key=API_KEY, secret_key=SECRET_KEY)
    texts += [repr(keyed), str(keyed), repr(client), str(client)]
    for name, user in users.items():
        if name in REFUSED:
            continue
        answers = answer_map(user)
        handler = bf.answers(user["answers"])
        texts += [repr(handler), str(handler)]
        step = client.authorize(INSTITUTION, name, PASSWORD, save=True)
        if isinstance(step, bf.Session) and user["challenge_types"]:
            texts += [repr(step), str(step)]
            step = client.authorize_saved(login_id_of(step))
        while isinstance(step, bf.Challenge):
            remember(step)
            texts += [repr(step), str(step)]
            for item in step.challenges:
                texts += [repr(item), str(item)]
            step = step.answer(answers_for(step, answers))
        assert isinstance(step, bf.Session)
        texts += [repr(step), str(step)]
    assert_secret_free(*texts)


def test_the_repr_of_a_client_shows_no_key(sandbox: bf.Sandbox) -> None:
    keyed = bf.Client(sandbox.url, sandbox.customer_id, api_key=API_KEY, secret_key=SECRET_KEY)
    for text in (repr(keyed), str(keyed)):
        assert API_KEY not in text
        assert SECRET_KEY not in text


@pytest.fixture(scope="module")
def keyed_sandbox() -> Iterator[bf.Sandbox]:
    with bf.Sandbox(pending_polls=1, secret_key=SECRET_KEY, api_key=API_KEY) as sb:
        yield sb


def keyed_client(sb: bf.Sandbox, *, api_key: str | None, secret_key: str | None) -> bf.Client:
    return bf.Client(
        sb.url, sb.customer_id, poll_interval=0.01, poll_timeout=10, api_key=api_key, secret_key=secret_key
    )


def test_with_both_keys_login_and_investments_work(keyed_sandbox: bf.Sandbox) -> None:
    client = keyed_client(keyed_sandbox, api_key=API_KEY, secret_key=SECRET_KEY)
    session = client.login(INSTITUTION, "Greatday", PASSWORD, on_challenge=bf.answers(GREATDAY), save=True)
    assert_investments(session.investments())
    assert_investments(client.investments(login_id_of(session)))


@pytest.mark.parametrize("api_key", ["ak-wrong-0000", None], ids=["wrong", "missing"])
def test_a_wrong_api_key_is_unauthorized_on_data_calls(keyed_sandbox: bf.Sandbox, api_key: str | None) -> None:
    client = keyed_client(keyed_sandbox, api_key=api_key, secret_key=SECRET_KEY)
    session = client.login(INSTITUTION, "greatday_nomfa", PASSWORD, save=True)
    with raises(bf.Unauthorized, code="UNAUTHORIZED", extra_secrets=["ak-wrong-0000"]):
        session.investments()


@pytest.mark.parametrize("secret_key", ["sk-wrong-0000", None], ids=["wrong", "missing"])
def test_a_wrong_secret_key_is_unauthorized_on_authorize(keyed_sandbox: bf.Sandbox, secret_key: str | None) -> None:
    client = keyed_client(keyed_sandbox, api_key=API_KEY, secret_key=secret_key)
    with raises(bf.Unauthorized, extra_secrets=["sk-wrong-0000"]):
        client.login(INSTITUTION, "greatday_nomfa", PASSWORD)


def test_a_proxy_password_shows_in_no_repr_getter_or_message(monkeypatch: pytest.MonkeyPatch) -> None:
    password = "pr0xy-pw-5d1f"
    for name in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    client = bf.Client("https://api.bank.test", "c", proxy=f"http://ci:{password}@127.0.0.1:9", max_retries=0)
    texts = [repr(client), str(client), str(client.proxy)]
    with raises(bf.TransportError, extra_secrets=[password]):
        client.authorize_cached("5e0e5f83-6e9b-4a2c-a6a3-0d8f4b1c9e21")
    with raises(bf.ConfigError, field="proxy", extra_secrets=[password]):
        bf.Client("https://api.bank.test", "c", proxy=f"socks5://ci:{password}@proxy.corp:1080")
    monkeypatch.setenv("HTTPS_PROXY", f"socks5://ci:{password}@proxy.corp:1080")
    with raises(bf.ConfigError, field="proxy", extra_secrets=[password]):
        bf.Client("https://api.bank.test", "c")
    assert_secret_free(*texts, extra=[password])
