"""The keys a sandbox asks for (docs/sandbox.md#keys): ``sb.secret_key`` and ``sb.api_key`` are
what a client made by hand needs, the public test instance's by default, None for a key not asked
for; without them such a client gets the documented 401."""

from __future__ import annotations

import inspect
import os

import pytest

import bankfeed as bf
from bfhelpers import INSTITUTION, PASSWORD, login_id_of, raises

#: The public test instance's published keys: the defaults of ``bf.Sandbox``.
PUBLIC = {name: inspect.signature(bf.Sandbox).parameters[name].default for name in ("secret_key", "api_key")}


@pytest.fixture
def no_key_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    """No ``BANKFEED_*`` variable: a client made by hand has only the keys it is given."""
    for name in [name for name in os.environ if name.startswith("BANKFEED_")]:
        monkeypatch.delenv(name)


def test_a_client_made_by_hand_works_with_the_sandboxs_keys_and_not_without(no_key_variables: None) -> None:
    with bf.Sandbox(pending_polls=0) as sb:
        assert (sb.secret_key, sb.api_key) == (PUBLIC["secret_key"], PUBLIC["api_key"])
        keyed = bf.Client(sb.url, sb.customer_id, secret_key=sb.secret_key, api_key=sb.api_key, poll_interval=0.01)
        session = keyed.login(INSTITUTION, "greatday_nomfa", PASSWORD, save=True)
        assert keyed.investments(login_id_of(session)).accounts.to_records()
        keyless = bf.Client(sb.url, sb.customer_id, max_retries=0)
        with raises(bf.Unauthorized, status=401) as info:
            keyless.login(INSTITUTION, "greatday_nomfa", PASSWORD)
        assert "You must provide a valid authorize token" in str(info.value)


def test_the_keys_are_those_given_and_none_when_not_asked_for() -> None:
    with bf.Sandbox(secret_key="sk-ok-1", api_key=None) as sb:
        assert (sb.secret_key, sb.api_key) == ("sk-ok-1", None)
        assert "sk-ok-1" not in repr(sb), "a key is never in a repr"
    with bf.Sandbox(auth=False) as sb:
        assert (sb.secret_key, sb.api_key) == (None, None)
