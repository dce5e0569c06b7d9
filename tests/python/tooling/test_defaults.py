"""The constructors' defaults are the core's: every default of ``bf.Client``, ``bf.AsyncClient`` and
``bf.Sandbox`` that ``inspect.signature`` shows equals the one ``ClientOptions::default()`` or
``SandboxConfig::default()`` resolves to, so that ``help()`` and the stub never promise another
value. The signatures write their defaults as literals (Python could not show them otherwise);
this test is what ties each literal to the Rust ``Default`` (docs/architecture.md#options-written-once)."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

import bankfeed as bf
from bankfeed import _native

#: Options whose signature default is None where the core has a value: None stands for that value.
#: The sandbox's customer id is the public test customer's; no faults is an empty list; no pending
#: operations named are the recorded ones (account detail, Investments, the attributes calls); no
#: as_of is the clock's first day.
NONE_STANDS_FOR_THE_DEFAULT = {
    ("Sandbox", "customer_id"),
    ("Sandbox", "faults"),
    ("Sandbox", "pending_operations"),
    ("Sandbox", "as_of"),
}

#: The clients' options that are no part of their configuration (a client's pickle, its pool):
#: where its requests go, a cassette (docs/cassettes.md#in-python), and their defaults.
NOT_CONFIGURATION = {"cassette": None, "record_mode": None, "allow_live_record": False}


def signature_defaults(cls: type) -> dict[str, Any]:
    """The public options of ``cls``'s constructor and their defaults (private ones, such as the
    clients' ``_environment``, are no option of the user's)."""
    return {
        name: parameter.default
        for name, parameter in inspect.signature(cls).parameters.items()
        if not name.startswith("_")
    }


@pytest.mark.parametrize("cls", [bf.Client, bf.AsyncClient, bf.Sandbox], ids=lambda cls: cls.__name__)
def test_every_signature_default_is_the_cores(cls: type) -> None:
    core: dict[str, Any] = _native._defaults()["Sandbox" if cls is bf.Sandbox else "Client"]
    kind = "Sandbox" if cls is bf.Sandbox else "Client"
    signature = signature_defaults(cls)
    if kind == "Client":
        transport = {name: signature.pop(name, inspect.Parameter.empty) for name in NOT_CONFIGURATION}
        assert transport == NOT_CONFIGURATION, "the cassette options, with no cassette by default"
    assert sorted(signature) == sorted(core), "the signature and the core name the same options"
    drifted = []
    for name, default in signature.items():
        assert default is not inspect.Parameter.empty, f"{cls.__name__}({name}=...) has no default"
        if default is None and (kind, name) in NONE_STANDS_FOR_THE_DEFAULT:
            continue
        # The type too: 240 for 240.0 would change what the getters and reprs show.
        if (type(default), default) != (type(core[name]), core[name]):
            drifted.append(f"{name}={default!r} in the signature, {core[name]!r} in the core")
    assert not drifted, f"{cls.__name__}: " + "; ".join(drifted)
