"""What ``bf.Sandbox(...)`` refuses, and how it says so (docs/sandbox.md#knobs): a wrong type names the
knob's real range, a taken port names the address, and a customer id or key its own client would
refuse is refused at construction, with the Client's own ``ConfigError``.

The calls go through ``Any`` on purpose: a type checker would refuse them, and that is the point.
"""

from __future__ import annotations

from typing import Any

import pytest

import bankfeed as bf
from bfhelpers import login_id_of

U32 = "0 to 4294967295"
U64 = "0 to 18446744073709551615"

#: (knob, what its wrong-type message says it takes): the rule the constructor applies, not the range
#: of whatever integer type the knob happens to be read into.
INTEGER_KNOBS = [
    ("logins", "an int from 0 to 1000000"),
    ("port", "an int from 0 to 65535"),
    ("pending_polls", f"an int from {U32}"),
    ("slow_pending_polls", f"an int from {U32}"),
    ("loading_polls", f"an int from {U32}"),
    ("seed", f"an int from {U64}"),
    ("investment_transactions", f"an int from {U64} or None"),
    ("banking_transactions", f"an int from {U64} or None"),
]


@pytest.mark.parametrize(("knob", "takes"), INTEGER_KNOBS, ids=[knob for knob, _ in INTEGER_KNOBS])
@pytest.mark.parametrize("value", [1.5, "7", True], ids=["float", "str", "bool"])
def test_a_wrong_type_states_the_knobs_real_range(knob: str, takes: str, value: Any) -> None:
    with pytest.raises(TypeError) as caught:
        bf.Sandbox(**{knob: value})
    assert str(caught.value) == f"{knob} must be {takes}, not {type(value).__name__}"


@pytest.mark.parametrize(("knob", "takes"), INTEGER_KNOBS, ids=[knob for knob, _ in INTEGER_KNOBS])
@pytest.mark.parametrize(("value", "got"), [(2**200, "a larger int"), (-(2**200), "a smaller int")], ids=["big", "neg"])
def test_an_int_beyond_any_type_states_the_knobs_real_range(knob: str, takes: str, value: Any, got: str) -> None:
    with pytest.raises(bf.ConfigError) as caught:
        bf.Sandbox(**{knob: value})
    assert caught.value.field == knob
    assert str(caught.value) == f"{knob} must be {takes}, got {got}"


def test_login_ids_for_states_the_real_range_of_logins() -> None:
    wrong: Any = 1.5
    with pytest.raises(TypeError) as wrong_type:
        bf.Sandbox.login_ids_for(wrong)
    assert str(wrong_type.value) == "logins must be an int from 0 to 1000000, not float"
    with pytest.raises(bf.ConfigError) as too_many:
        bf.Sandbox.login_ids_for(2**70)
    assert str(too_many.value) == f"logins must be an int from 0 to 1000000, got {2**70}"


def test_a_taken_port_names_the_address() -> None:
    with bf.Sandbox() as first:
        port = int(first.url.rsplit(":", 1)[1])
        with pytest.raises(OSError, match=r"Address already in use") as caught:
            bf.Sandbox(port=port)
        assert str(caught.value).startswith(f"the sandbox could not listen on 127.0.0.1:{port}: ")


#: Keys that would be echoed if a message repeated them; each contains a space or is empty.
SECRET_WITH_SPACE = "sk live Hunter2-sandbox"

#: (argument, value): what ``sb.client()`` refused after the sandbox had started.
REFUSED = [
    ("customer_id", ""),
    ("customer_id", "../x"),
    ("customer_id", "a/b"),
    ("customer_id", "x" * 129),
    ("api_key", ""),
    ("api_key", "ak\r\nX-Other: 1"),
    ("secret_key", ""),
    ("secret_key", SECRET_WITH_SPACE),
    ("secret_key", "ключ"),
]


def client_error(argument: str, value: str) -> bf.ConfigError:
    """The ConfigError ``bf.Client`` gives for ``argument=value``."""
    options: dict[str, Any] = {"customer_id": "c", argument: value}
    with pytest.raises(bf.ConfigError) as caught:
        bf.Client("http://127.0.0.1:9", **options)
    return caught.value


@pytest.mark.parametrize(("argument", "value"), REFUSED, ids=[f"{a}-{i}" for i, (a, _) in enumerate(REFUSED)])
def test_what_its_client_would_refuse_is_refused_at_construction(argument: str, value: Any) -> None:
    with pytest.raises(bf.ConfigError) as caught:
        bf.Sandbox(**{argument: value})
    assert caught.value.field == argument
    assert str(caught.value) == str(client_error(argument, value)), "the Client's own check and words"
    if argument != "customer_id" and value:
        assert value not in str(caught.value) and value not in repr(caught.value), "a key is never repeated"


def test_a_customer_id_and_keys_its_client_takes_still_start() -> None:
    with bf.Sandbox(customer_id="acme-2_test", api_key="ak-ok-1", secret_key="sk-ok-1", pending_polls=0) as sb:
        assert sb.customer_id == "acme-2_test"
        client = sb.client(poll_interval=0.01)
        session = client.login("FlinksCapital", "greatday_nomfa", "Everyday", save=True)
        assert len(client.investments(login_id_of(session)).accounts) >= 1


def test_a_sandbox_on_every_interface_is_served_to_its_own_client_on_loopback() -> None:
    with bf.Sandbox(host="0.0.0.0", pending_polls=0) as sb:
        assert sb.url.startswith("http://127.0.0.1:"), sb.url
        session = sb.client().login("FlinksCapital", "greatday_nomfa", "Everyday", save=True)
        assert isinstance(session, bf.Session)


def test_inject_given_the_list_faults_takes_says_to_pass_them_one_by_one() -> None:
    with bf.Sandbox() as sb:
        fault = {"kind": "drop_before_response"}
        with pytest.raises(TypeError, match=r"one by one, sb\.inject\(\*faults\), not a list"):
            sb.inject([fault])  # type: ignore[arg-type]
        assert sb.faults == []
        sb.inject(fault, fault)
        assert len(sb.faults) == 2
