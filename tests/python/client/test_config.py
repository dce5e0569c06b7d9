"""Client construction: required options, BANKFEED_* fallbacks, validation, for ``bf.Client`` and
``bf.AsyncClient`` alike (the ``api`` fixture)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import bankfeed as bf
from bfhelpers import INSTITUTION, PASSWORD, Api, investment_posts, login_id_of, raises

ENV_VARS = (
    "BANKFEED_BASE_URL",
    "BANKFEED_INVESTMENTS_BASE_URL",
    "BANKFEED_CUSTOMER_ID",
    "BANKFEED_API_KEY",
    "BANKFEED_SECRET_KEY",
)


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_base_url_is_required(api: Api, clean_env: pytest.MonkeyPatch) -> None:
    with raises(bf.ConfigError, field="base_url") as info:
        api.cls(customer_id="43387ca6-0391-4c82-857d-70d95f087ecb")
    assert "base_url" in str(info.value)
    assert isinstance(info.value, ValueError)


def test_customer_id_is_required(api: Api, clean_env: pytest.MonkeyPatch) -> None:
    with raises(bf.ConfigError, field="customer_id") as info:
        api.cls("http://127.0.0.1:9")
    assert "customer_id" in str(info.value)


def test_nothing_at_all_names_a_missing_field(api: Api, clean_env: pytest.MonkeyPatch) -> None:
    with raises(bf.ConfigError) as info:
        api.cls()
    assert info.value.field in ("base_url", "customer_id")
    assert info.value.field in str(info.value)


def test_environment_variables_fill_in_missing_options(
    api: Api, clean_env: pytest.MonkeyPatch, sandbox: bf.Sandbox
) -> None:
    clean_env.setenv("BANKFEED_BASE_URL", sandbox.url)
    clean_env.setenv("BANKFEED_CUSTOMER_ID", sandbox.customer_id)
    assert sandbox.secret_key and sandbox.api_key
    clean_env.setenv("BANKFEED_SECRET_KEY", sandbox.secret_key)
    clean_env.setenv("BANKFEED_API_KEY", sandbox.api_key)
    client = api.cls()
    assert "api_key='***', secret_key='***'" in repr(client), repr(client)
    assert client.base_url.rstrip("/") == sandbox.url.rstrip("/")
    assert client.customer_id == sandbox.customer_id
    assert client.investments_base_url.rstrip("/") == sandbox.url.rstrip("/")
    session = api.run(client.login(INSTITUTION, "greatday_nomfa", PASSWORD))
    assert isinstance(session, api.Session)


def test_arguments_win_over_environment_variables(api: Api, clean_env: pytest.MonkeyPatch, sandbox: bf.Sandbox) -> None:
    clean_env.setenv("BANKFEED_BASE_URL", "http://127.0.0.1:9")
    clean_env.setenv("BANKFEED_CUSTOMER_ID", "not-this-one")
    clean_env.setenv("BANKFEED_SECRET_KEY", "not-this-secret")
    clean_env.setenv("BANKFEED_API_KEY", "not-this-key")
    client = api.cls(sandbox.url, sandbox.customer_id, secret_key=sandbox.secret_key, api_key=sandbox.api_key)
    assert client.base_url.rstrip("/") == sandbox.url.rstrip("/")
    assert client.customer_id == sandbox.customer_id
    assert isinstance(api.run(client.login(INSTITUTION, "greatday_nomfa", PASSWORD)), api.Session)


def test_only_the_customer_id_from_the_environment(
    api: Api, clean_env: pytest.MonkeyPatch, sandbox: bf.Sandbox
) -> None:
    clean_env.setenv("BANKFEED_CUSTOMER_ID", sandbox.customer_id)
    client = api.cls(sandbox.url)
    assert client.customer_id == sandbox.customer_id


@pytest.mark.parametrize("timeout", [0, -1, -0.5], ids=["zero", "minus-one", "minus-half"])
def test_a_timeout_must_be_positive(
    api: Api, clean_env: pytest.MonkeyPatch, sandbox: bf.Sandbox, timeout: float
) -> None:
    with raises(bf.ConfigError, field="timeout") as info:
        api.cls(sandbox.url, sandbox.customer_id, timeout=timeout)
    assert "timeout" in str(info.value)


def test_defaults_are_the_documented_ones(api: Api, clean_env: pytest.MonkeyPatch, sandbox: bf.Sandbox) -> None:
    client = api.cls(sandbox.url, sandbox.customer_id)
    assert client.timeout == 240.0
    assert client.poll_interval == 10.0
    assert client.poll_timeout == 1800.0
    assert client.max_retries == 2


def test_the_sandbox_client_uses_the_given_options(api: Api, sandbox: bf.Sandbox) -> None:
    make = sandbox.async_client if api.is_async else sandbox.client
    client = make(poll_interval=0.01, poll_timeout=10)
    assert type(client) is api.cls
    assert client.poll_interval == pytest.approx(0.01)
    assert client.poll_timeout == pytest.approx(10)
    assert client.base_url.rstrip("/") == sandbox.url.rstrip("/")
    assert client.customer_id == sandbox.customer_id


def test_the_investments_host_comes_from_its_variable(api: Api, clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("BANKFEED_BASE_URL", "https://toolbox-api.private.fin.ag")
    clean_env.setenv("BANKFEED_INVESTMENTS_BASE_URL", "https://toolbox-wealth-api.private.fin.ag")
    clean_env.setenv("BANKFEED_CUSTOMER_ID", "43387ca6-0391-4c82-857d-70d95f087ecb")
    assert api.cls().investments_base_url == "https://toolbox-wealth-api.private.fin.ag"


def test_a_refused_value_from_the_environment_names_its_variable(api: Api, clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("BANKFEED_BASE_URL", "https://toolbox-api.private.fin.ag")
    clean_env.setenv("BANKFEED_CUSTOMER_ID", "43387ca6-0391-4c82-857d-70d95f087ecb\n")  # as read from a file
    with raises(bf.ConfigError, field="customer_id") as info:
        api.cls()
    assert str(info.value).endswith("(read from BANKFEED_CUSTOMER_ID)")
    clean_env.setenv("BANKFEED_CUSTOMER_ID", "43387ca6-0391-4c82-857d-70d95f087ecb")
    clean_env.setenv("BANKFEED_API_KEY", "prod key")
    with raises(bf.ConfigError, field="api_key", extra_secrets=["prod key"]) as info:
        api.cls()
    assert str(info.value).endswith("(read from BANKFEED_API_KEY)")


def test_a_sandbox_client_takes_nothing_from_the_environment(
    clean_env: pytest.MonkeyPatch, fresh_sandbox: bf.Sandbox
) -> None:
    # A machine set up for the real service: its keys and its Investments host must not reach a test's client.
    clean_env.setenv("BANKFEED_API_KEY", "prodkey")
    clean_env.setenv("BANKFEED_SECRET_KEY", "prodsecret")
    clean_env.setenv("BANKFEED_INVESTMENTS_BASE_URL", "https://toolbox-wealth-api.private.fin.ag")
    for client in (fresh_sandbox.client(), fresh_sandbox.async_client()):
        assert client.investments_base_url == client.base_url
    # The sandbox's own keys, not the environment's: those would be refused with 401.
    session = fresh_sandbox.client().login(INSTITUTION, "greatday_nomfa", PASSWORD)
    session.investments()
    # A sandbox that asks for no key gets none: none comes from the environment either.
    with bf.Sandbox(auth=False) as keyless:
        for client in (keyless.client(), keyless.async_client()):
            assert client.investments_base_url == client.base_url
            assert "'***'" not in repr(client), repr(client)  # no key
        keyless.client().login(INSTITUTION, "greatday_nomfa", PASSWORD).investments()
        assert not [request for request in keyless.requests if "GenerateAuthorizeToken" in request["path"]]


@pytest.mark.parametrize("cls", [bf.Client, bf.AsyncClient])
def test_a_base_url_given_by_hand_is_the_investments_host_too(
    clean_env: pytest.MonkeyPatch, fresh_sandbox: bf.Sandbox, cls: type[bf.Client | bf.AsyncClient]
) -> None:
    # A shell set up for the real service, and a client made by hand for a sandbox: its
    # Investments, and the key with them, must not go to the production host.
    clean_env.setenv("BANKFEED_BASE_URL", "https://toolbox-api.private.fin.ag")
    clean_env.setenv("BANKFEED_INVESTMENTS_BASE_URL", "https://toolbox-wealth-api.private.fin.ag")
    clean_env.setenv("BANKFEED_CUSTOMER_ID", fresh_sandbox.customer_id)
    # Keys for the sandbox, so that its Investments answer.
    assert fresh_sandbox.secret_key and fresh_sandbox.api_key
    clean_env.setenv("BANKFEED_SECRET_KEY", fresh_sandbox.secret_key)
    clean_env.setenv("BANKFEED_API_KEY", fresh_sandbox.api_key)
    client = cls(fresh_sandbox.url, poll_interval=0.01, timeout=5, max_retries=0)
    assert client.investments_base_url == client.base_url
    assert f'base_url="{client.base_url}", investments_base_url="{client.base_url}"' in repr(client), repr(client)
    # The keys left out still come from their variables (documented).
    assert "api_key='***'" in repr(client)
    if not isinstance(client, bf.Client):
        return
    session = client.login(INSTITUTION, "greatday_nomfa", PASSWORD, save=True)
    assert client.investments(login_id_of(session)).accounts.to_records()
    assert investment_posts(fresh_sandbox) >= 1


def test_the_investments_variable_applies_with_the_base_url_variable(api: Api, clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("BANKFEED_BASE_URL", "https://toolbox-api.private.fin.ag")
    clean_env.setenv("BANKFEED_INVESTMENTS_BASE_URL", "https://toolbox-wealth-api.private.fin.ag")
    client = api.cls(customer_id="43387ca6-0391-4c82-857d-70d95f087ecb")
    assert 'investments_base_url="https://toolbox-wealth-api.private.fin.ag"' in repr(client)


#: Makes a client with each variable set, in turn, to bytes that are not UTF-8, and prints what it raised.
_NOT_UTF8 = """
import json, os, sys
import bankfeed as bf
os.environ["BANKFEED_CUSTOMER_ID"] = "c"
for variable in sys.argv[1:]:
    name = variable.encode()
    before = os.environb.get(name)
    os.environb[name] = b"k3y-\\xff\\xfe"
    try:
        bf.Client("https://api.bank.test")
        print(json.dumps([variable, None, None]))
    except bf.ConfigError as error:
        print(json.dumps([variable, error.field, str(error)]))
    if before is None:
        del os.environb[name]
    else:
        os.environb[name] = before
"""


def test_a_variable_that_is_not_utf8_is_refused_naming_it() -> None:
    cases = {
        "BANKFEED_API_KEY": "api_key",
        "BANKFEED_SECRET_KEY": "secret_key",
        "BANKFEED_CUSTOMER_ID": "customer_id",
        "HTTPS_PROXY": "proxy",
        "https_proxy": "proxy",
        "ALL_PROXY": "proxy",
    }
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("BANKFEED_") and not name.lower().endswith("_proxy")
    }
    run = subprocess.run(
        [sys.executable, "-c", _NOT_UTF8, *cases], env=env, capture_output=True, text=True, timeout=60, check=True
    )
    got = {variable: (field, text) for variable, field, text in map(json.loads, run.stdout.splitlines())}
    assert set(got) == set(cases), run.stdout + run.stderr
    for variable, field in cases.items():
        got_field, text = got[variable]
        assert got_field == field, (variable, text)
        assert "not UTF-8" in text and text.endswith(f"(read from {variable})"), text
        assert "k3y" not in text, text
