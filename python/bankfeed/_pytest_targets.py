"""The pytest plugin's test tiers (docs/cassettes.md#one-suite-three-tiers): which tests a tier
skips, and the clients ``bankfeed_client`` and ``bankfeed_async_client`` are at each tier.

- ``sandbox`` (the default): the embedded sandbox, as the plugin always gave;
- ``cassettes``: the test's cassette, replayed, and never the network;
- ``live``: the service's public test instance (or the host ``BANKFEED_BASE_URL`` names), with
  the keys of ``BANKFEED_API_KEY`` and ``BANKFEED_SECRET_KEY``.

A test that needs the sandbox (a sandbox fixture, a fault, a user only the sandbox has) is skipped
at the other tiers with its reason, never run against something it was not written for.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

import bankfeed as bf
from bankfeed import _native
from bankfeed._pytest_cassettes import Settings, has_cassette, live_without_recording, record_command, settings

#: The fixtures that are the sandbox itself: a test asking for one needs the sandbox tier.
SANDBOX_FIXTURES = (
    "bankfeed_sandbox",
    "bankfeed_shared_sandbox",
    "bankfeed_remote_sandbox",
    "bankfeed_sandbox_process",
)
#: The fixtures that follow the tier.
CLIENT_FIXTURES = ("bankfeed_client", "bankfeed_async_client")

#: The public test instance (docs/protocol.md#hosts-paths-and-versions), the live tier's server
#: unless ``BANKFEED_BASE_URL`` names another: as the core names it (the hosts whose recordings
#: hold public test data, the sandbox's default customer id), so the two cannot differ.
TEST_INSTANCE_URL = f"https://{_native._TEST_INSTANCE_HOSTS[0]}"
TEST_INSTANCE_INVESTMENTS_URL = f"https://{_native._TEST_INSTANCE_HOSTS[1]}"
TEST_INSTANCE_CUSTOMER_ID = _native._TEST_INSTANCE_CUSTOMER_ID
#: The variables the live tier reads, as ``bf.Client`` does (docs/protocol.md#environment-variables).
BASE_URL_VARIABLE = "BANKFEED_BASE_URL"
CUSTOMER_ID_VARIABLE = "BANKFEED_CUSTOMER_ID"
KEY_VARIABLES = ("BANKFEED_API_KEY", "BANKFEED_SECRET_KEY")

#: The replaying client's server: nothing is sent in record mode none, and were something sent,
#: the discard port of loopback would refuse it at once rather than reach anything.
REPLAY_URL = "http://127.0.0.1:9"
#: The replaying client's keys: a cassette holds none (they are redacted and not matched), but a
#: client with a secret key starts each login with the token call that the recording has.
REPLAY_KEY = "cassette-replay"


def skip_reason(item: pytest.Item, options: Settings) -> str | None:
    """Why the test does not run at this tier, or None when it does."""
    if options.target == "sandbox":
        return None
    tier = f"--bankfeed-target={options.target}"
    only = item.get_closest_marker("bankfeed_sandbox_only")
    if only is not None:
        reason = only.args[0] if only.args else only.kwargs.get("reason", "marked bankfeed_sandbox_only")
        return f"{tier}: sandbox only: {reason}"
    names = set(getattr(item, "fixturenames", ()))
    for name in SANDBOX_FIXTURES:
        if name in names:
            return f"{tier}: uses the {name} fixture, which only --bankfeed-target=sandbox has"
    if options.target == "live" and item.get_closest_marker("bankfeed_sandbox") is not None:
        return f"{tier}: @pytest.mark.bankfeed_sandbox(...) gives it a sandbox's options, which the service has not"
    if options.target == "cassettes" and names.intersection(CLIENT_FIXTURES) and not has_cassette(item):
        return (
            f"{tier}: no cassette to replay: mark it @pytest.mark.bankfeed_cassette and record it once "
            f"with `{record_command(item)}`"
        )
    if not options.uses_cassettes and "bankfeed_cassette" in names:
        return live_without_recording(options)
    return None


def require_sandbox(request: pytest.FixtureRequest, name: str) -> None:
    """Fails a fixture of the sandbox asked for at another tier (by ``getfixturevalue``, which the
    skip before the test cannot see): such a test must not pass against a sandbox it was told
    not to use."""
    target = settings(request.config).target
    if target != "sandbox":
        pytest.fail(
            f"{name} is the sandbox, which --bankfeed-target={target} does not use: "
            "mark the test @pytest.mark.bankfeed_sandbox_only(reason) to skip it at that tier",
            pytrace=False,
        )


def client_options(request: pytest.FixtureRequest) -> tuple[bf.Sandbox | None, dict[str, Any]]:
    """What the tier's client is built from: the sandbox and the options of its ``client()`` at
    the sandbox tier; no sandbox and every option of ``bf.Client`` at the others. The test's
    cassette, when it has one, is among the options."""
    options = settings(request.config)
    extra: dict[str, Any] = {}
    if has_cassette(request.node) and options.uses_cassettes:
        extra["cassette"] = request.getfixturevalue("bankfeed_cassette")
    if options.target == "sandbox":
        sandbox: bf.Sandbox = request.getfixturevalue("bankfeed_sandbox")
        return sandbox, extra
    if options.target == "cassettes":
        return None, {**_replay_options(extra["cassette"]), **extra}
    return None, {**_live_options(), **extra}


def _replay_options(tape: bf.Cassette) -> dict[str, Any]:
    """The options of a client that replays ``tape``: a server it never reaches, and keys such
    that it sends what the recording's client sent (the token call only if the file has one).
    The file exists and reads as a cassette: ``bankfeed_cassette`` has checked it."""
    has_token_call = tape._has_token_call()
    return {
        "base_url": REPLAY_URL,
        "customer_id": TEST_INSTANCE_CUSTOMER_ID,
        "api_key": REPLAY_KEY,
        "secret_key": REPLAY_KEY if has_token_call else None,
        # As the sandbox's clients: a replay never waits, but a poll interval it is given shows.
        "poll_interval": 0.05,
    }


def _live_options() -> dict[str, Any]:
    """The options of a client of the live tier: the public test instance, or the host
    ``BANKFEED_BASE_URL`` names (``bf.Client`` then reads every ``BANKFEED_*`` variable itself);
    the keys always from ``BANKFEED_API_KEY`` and ``BANKFEED_SECRET_KEY``, which must be set."""
    missing = [name for name in KEY_VARIABLES if not os.environ.get(name)]
    if missing:
        pytest.fail(
            f"--bankfeed-target=live needs {' and '.join(missing)} set: the keys of the public test instance "
            f"(docs/sandbox.md#keys) or of the instance {BASE_URL_VARIABLE} names; keys are never options",
            pytrace=False,
        )
    if os.environ.get(BASE_URL_VARIABLE):
        return {}
    return {
        "base_url": TEST_INSTANCE_URL,
        "investments_base_url": TEST_INSTANCE_INVESTMENTS_URL,
        "customer_id": os.environ.get(CUSTOMER_ID_VARIABLE) or TEST_INSTANCE_CUSTOMER_ID,
    }
