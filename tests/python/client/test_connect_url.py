"""The hosted widget's URL (docs/connect.md): every option written with the service's name,
values escaped, the authorize token masked wherever the URL is shown, bad input refused naming
the argument; and what the widget reports read back (``bf.Connection``)."""

from __future__ import annotations

import logging
import re
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

import bankfeed as bf
from bfhelpers import INSTITUTION, PASSWORD, Api

LOGIN_ID = "8b35f6c8-e7b6-41d3-98f8-08d68b7f8d31"

#: Every typed option, a value, and what the widget reads.
OPTIONS: list[tuple[str, Any, str, str]] = [
    ("demo", True, "demo", "true"),
    ("product_type", "Investment", "productType", "investment"),
    ("redirect_url", "https://example.com/done?a=1&b=x%20y", "redirectUrl", "https://example.com/done?a=1&b=x%20y"),
    ("inner_redirect", False, "innerRedirect", "false"),
    ("language", "FR", "language", "fr"),
    ("consent", True, "consentEnable", "true"),
    ("customer_name", "Fin & Tech", "customerName", "Fin & Tech"),
    ("account_selector", True, "accountSelectorEnable", "true"),
    ("account_selector_multiple", True, "accountSelectorMultiple", "true"),
    ("account_selector_currency", "USD", "accountSelectorCurrency", "usd"),
    ("show_all_accounts", False, "showAllAccounts", "false"),
    ("tag", "client #42 é", "tag", "client #42 é"),
    ("institution", "FlinksCapital", "institution", "FlinksCapital"),
    ("maximum_retry", 5, "maximumRetry", "5"),
    ("institution_filter", True, "institutionFilterEnable", "true"),
    ("close_enable", True, "closeEnable", "true"),
    ("header_enable", False, "headerEnable", "false"),
    ("back_enable", False, "backEnable", "false"),
]


def query(url: bf.ConnectUrl) -> list[tuple[str, str]]:
    return parse_qsl(urlsplit(url.reveal()).query)


@pytest.mark.parametrize(("option", "value", "name", "written"), OPTIONS, ids=[o[0] for o in OPTIONS])
def test_every_option_is_written_with_the_services_name(option: str, value: Any, name: str, written: str) -> None:
    url = bf.connect_url(**{option: value})
    assert query(url) == [(name, written)]
    assert url.params == {name: written}
    assert url.reveal().startswith("https://toolbox-iframe.private.fin.ag/v2/?")


def test_none_leaves_a_parameter_out_and_banking_is_written_as_the_interface_spells_it() -> None:
    assert bf.connect_url().reveal() == "https://toolbox-iframe.private.fin.ag/v2/"
    assert bf.connect_url(demo=None, tag=None).params == {}
    assert bf.connect_url(product_type="banking").params == {"productType": "Banking"}


def test_values_are_escaped_so_that_none_adds_a_parameter() -> None:
    url = bf.connect_url(tag="a&demo=false#x", redirect_url="https://example.com/?x=1&y=2")
    assert dict(query(url)) == {"tag": "a&demo=false#x", "redirectUrl": "https://example.com/?x=1&y=2"}
    assert "#" not in url.reveal() and "&demo=" not in url.reveal()


def test_extra_is_passed_through_after_the_typed_ones() -> None:
    url = bf.connect_url(demo=True, extra={"termsUrl": "https://example.com/terms", "stringify": True, "n": 2})
    assert query(url) == [
        ("demo", "true"),
        ("termsUrl", "https://example.com/terms"),
        ("stringify", "true"),
        ("n", "2"),
    ]


def test_the_token_is_masked_wherever_the_url_is_shown() -> None:
    url = bf.connect_url(demo=True, authorize_token="tok-very-secret")
    for shown in (str(url), repr(url), str(url.params), f"{url}", url.base):
        assert "tok-very-secret" not in shown
    assert str(url).endswith("authorizeToken=***")
    assert url.params["authorizeToken"] == "***"
    assert dict(query(url))["authorizeToken"] == "tok-very-secret"


def test_an_instance_name_or_the_widgets_own_url() -> None:
    assert bf.connect_url("acme").base == "https://acme-iframe.private.fin.ag/v2/"
    assert bf.connect_url("http://127.0.0.1:8080/v2/").base == "http://127.0.0.1:8080/v2/"


BAD_VALUES: list[tuple[dict[str, Any], str, str]] = [
    ({"product_type": "loans"}, "product_type", '"banking" or "investment", got "loans"'),
    ({"language": "de"}, "language", '"en" or "fr", got "de"'),
    ({"maximum_retry": 0}, "maximum_retry", "from 1 to 100, got 0"),
    ({"redirect_url": "example.com/done"}, "redirect_url", "absolute URL"),
    ({"redirect_url": "https://example.com/#frag"}, "redirect_url", "without a fragment"),
    ({"tag": " "}, "tag", "must not be empty"),
    ({"account_selector_currency": "dollars"}, "account_selector_currency", "three-letter"),
    ({"customer_name": "a\nb"}, "customer_name", "control characters"),
    ({"extra": {"redirectUrl": "x"}}, "extra", "pass redirect_url instead"),
    ({"extra": {"AuthorizeToken": "x"}}, "extra", "pass authorize_token instead"),
    ({"extra": {"a b": "x"}}, "extra", "without spaces"),
]


@pytest.mark.parametrize(
    ("kwargs", "field", "words"), BAD_VALUES, ids=[b[1] + "-" + str(i) for i, b in enumerate(BAD_VALUES)]
)
def test_a_bad_value_is_a_config_error_naming_the_argument_what_came_and_the_rule(
    kwargs: dict[str, Any], field: str, words: str
) -> None:
    with pytest.raises(bf.ConfigError) as raised:
        bf.connect_url(**kwargs)
    assert raised.value.field == field
    assert str(raised.value).startswith(field) and words in str(raised.value)


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"demo": "yes"}, "demo must be a bool or None, not str"),
        ({"maximum_retry": True}, "maximum_retry must be an int or None, not bool"),
        ({"tag": 5}, "tag must be a str or None, not int"),
        ({"extra": ["a"]}, "extra must be a mapping or None, not list"),
        ({"extra": {"a": 1.5}}, 'extra["a"] must be a str, bool or int, not float'),
        ({"demoo": True}, 'connect_url() got an unexpected keyword argument "demoo"'),
    ],
)
def test_a_wrong_type_is_a_type_error_naming_the_argument(kwargs: dict[str, Any], words: str) -> None:
    with pytest.raises(TypeError, match="^" + re.escape(words)):
        bf.connect_url(**kwargs)


@pytest.mark.parametrize("instance", ["http://example.com/v2/", "ftp://x/", "bad name", "https://u:p@x/v2/", ""])
def test_a_bad_instance_is_refused_without_its_secrets(instance: str) -> None:
    with pytest.raises(bf.ConfigError) as raised:
        bf.connect_url(instance)
    assert raised.value.field == "instance"
    assert ":p@" not in str(raised.value)


def test_the_client_mints_a_fresh_token_for_each_url_and_derives_the_widget(api: Api) -> None:
    with bf.Sandbox() as sb:
        client = api.client(sb)
        first = api.run(client.connect_url(demo=True))
        second = api.run(client.connect_url(demo=True))
        assert first.base == f"{sb.url}/v2/"
        tokens = [dict(query(url))["authorizeToken"] for url in (first, second)]
        assert tokens[0] != tokens[1], "a token is single use: each URL gets its own"
        assert all(t not in str(url) + repr(url) for t, url in zip(tokens, (first, second), strict=True))
        operations = [request["operation"] for request in sb.requests]
        assert operations.count("GenerateAuthorizeToken") == 2
        # A bad option is refused before a token is spent on it.
        with pytest.raises(bf.ConfigError):
            api.run(client.connect_url(language="de"))
        assert [r["operation"] for r in sb.requests].count("GenerateAuthorizeToken") == 2


def test_a_client_of_the_service_opens_its_instances_widget_and_mints_nothing_without_a_secret_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("BANKFEED_SECRET_KEY", raising=False)
    client = bf.Client("https://acme-api.private.fin.ag", "43387ca6-0391-4c82-857d-70d95f087ecb")
    url = client.connect_url(demo=True)
    assert url.reveal() == "https://acme-iframe.private.fin.ag/v2/?demo=true"


def test_the_redirect_is_read_back() -> None:
    connection = bf.Connection.from_redirect(
        f"https://example.com/done?loginId={LOGIN_ID}&institution=FlinksCapital&accountId=a1&accountId=a2,a3&tag=t%201"
    )
    assert connection.login_id == LOGIN_ID
    assert (connection.institution, connection.account_ids, connection.tag) == (
        "FlinksCapital",
        ["a1", "a2", "a3"],
        "t 1",
    )
    assert connection.source == "redirect"
    assert LOGIN_ID not in repr(connection) and "login_id=" in repr(connection)
    assert bf.Connection.from_redirect(f"loginId={LOGIN_ID}") == bf.Connection.from_redirect(f"?loginId={LOGIN_ID}")


def test_the_redirect_event_is_read_back() -> None:
    event = {
        "step": "REDIRECT",
        "institution": "FlinksCapital",
        "url": f"https://example.com/done?loginId={LOGIN_ID}&tag=t",
        "accountId": ["a", "b"],
    }
    connection = bf.Connection.from_event(event)
    assert (connection.login_id, connection.account_ids, connection.tag, connection.source) == (
        LOGIN_ID,
        ["a", "b"],
        "t",
        "event",
    )
    with pytest.raises(bf.ConfigError, match="APP_MOUNTED"):
        bf.Connection.from_event({"step": "APP_MOUNTED"})
    with pytest.raises(TypeError, match="event must be a mapping"):
        bf.Connection.from_event("REDIRECT")  # type: ignore[arg-type]


@pytest.mark.parametrize("login_id", ["", "not-a-guid", "../../BankingServices/Authorize", LOGIN_ID + "0"])
def test_a_login_id_that_is_no_guid_is_refused_without_showing_it(login_id: str) -> None:
    with pytest.raises(bf.ConfigError) as raised:
        bf.Connection.from_redirect(f"https://example.com/done?loginId={login_id}&institution=x")
    assert raised.value.field == "loginId"
    assert (login_id or "\0") not in str(raised.value)


def test_the_url_is_logged_masked(caplog: pytest.LogCaptureFixture) -> None:
    with bf.Sandbox() as sb, caplog.at_level(logging.INFO, logger="bankfeed.connect"):
        client = sb.client()
        step = client.authorize(INSTITUTION, "greatday_nomfa", PASSWORD, save=True)
        assert isinstance(step, bf.Session)
        with pytest.raises(bf.ConnectTimeout):
            client.connect(on_url=lambda url: None, timeout=0.2)
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "authorizeToken=***" in logged
