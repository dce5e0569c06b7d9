"""python -m bankfeed: demo, users, sandbox."""

from __future__ import annotations

import inspect
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

import bankfeed as bf
from bfhelpers import INSTITUTION, PASSWORD, SandboxUser, answer_pairs

ENV = {k: v for k, v in os.environ.items() if not k.startswith("BANKFEED_")}


def run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bankfeed", *args], capture_output=True, text=True, timeout=timeout, env=ENV
    )


@pytest.mark.parametrize(
    ("args", "username"), [((), "mfa_securid"), (("--user", "mfa_image"), "mfa_image")], ids=["default", "image"]
)
def test_demo_prints_every_prompt_but_no_answer(
    users: dict[str, SandboxUser], args: tuple[str, ...], username: str
) -> None:
    result = run("demo", *args)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for key, values in answer_pairs(users[username]):
        assert key in out  # these users' answers are all keyed by prompt
        for value in values:
            assert value not in out, "an answer was printed"
    for kind in users[username]["challenge_types"]:
        assert kind in out
    assert "answered 1 prompt(s)" in out
    assert PASSWORD not in out
    if username == "mfa_image":
        assert "16 images" in out
    assert "login_id" in out and "request_id" in out
    assert "Value" in out and "Cash" in out


def test_demo_of_an_unknown_user_fails() -> None:
    result = run("demo", "--user", "nobody_at_all")
    assert result.returncode != 0


def test_demo_of_a_bulk_user_the_users_command_lists() -> None:
    result = run("demo", "--user", "bulk_42")
    assert result.returncode == 0, result.stderr
    assert "session open" in result.stdout and "investments:" in result.stdout
    # Bulk users are asked nothing. The marker is a line's start: a RequestId can hold "203".
    assert not any(line.startswith("203:") for line in result.stdout.splitlines())


@pytest.mark.parametrize("args", [("users",), ("demo", "--user", "Greatday")], ids=["users", "demo"])
def test_a_reader_that_stops_early_gets_no_traceback(args: tuple[str, ...]) -> None:
    # As `python -m bankfeed users | head -1`, made certain: the pipe's reader is gone before the first write.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        result = subprocess.run(
            [sys.executable, "-m", "bankfeed", *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            env=ENV,
        )
    finally:
        os.close(write_end)
    assert result.returncode == 1
    assert result.stderr == ""


def test_users_lists_every_sandbox_user(users: dict[str, SandboxUser]) -> None:
    result = run("users")
    assert result.returncode == 0, result.stderr
    for name, user in users.items():
        assert name in result.stdout
        for kind in user["challenge_types"]:
            assert kind in result.stdout


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


#: The keys a sandbox asks for by default: the public test instance's.
PUBLIC_KEYS = {name: inspect.signature(bf.Sandbox).parameters[name].default for name in ("secret_key", "api_key")}


def test_sandbox_serves_until_ctrl_c() -> None:
    port, customer_id = free_port(), str(uuid.uuid4())
    proc = subprocess.Popen(
        [sys.executable, "-m", "bankfeed", "sandbox", "--port", str(port), "--customer-id", customer_id],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )
    try:
        assert proc.stdout is not None
        first_line = proc.stdout.readline()
        assert f"http://127.0.0.1:{port}" in first_line and customer_id in first_line
        # The second line names the keys it asks for (the public ones, shown) and how to turn them off.
        keys_line = proc.stdout.readline()
        assert all(key in keys_line for key in PUBLIC_KEYS.values()), keys_line
        assert "--no-auth" in keys_line and "bf.Sandbox(auth=False)" in keys_line, keys_line
        client = bf.Client(f"http://127.0.0.1:{port}", customer_id, timeout=5, max_retries=0, **PUBLIC_KEYS)
        deadline = time.monotonic() + 15
        while True:
            try:
                session = client.login(INSTITUTION, "greatday_nomfa", PASSWORD)
                break
            except bf.TransportError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.1)
        assert isinstance(session, bf.Session)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def start_sandbox(
    *args: str, env: dict[str, str] = ENV, port: int | None = 0
) -> tuple[subprocess.Popen[str], bf.Client]:
    """Starts ``python -m bankfeed sandbox --port 0 ...`` (no ``--port`` when ``port`` is None) and
    reads its URL line (the first): returns it and a fast client of the URL and customer id that
    line names, with the public keys the sandbox asks for by default (none with ``--no-auth`` or
    ``--keys-from-env``)."""
    where = [] if port is None else ["--port", str(port)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "bankfeed", "sandbox", *where, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    match = re.fullmatch(r"bankfeed sandbox on (http://\S+) \(customer id (\S+)\)\n", first)
    assert match, (first, proc.stderr.read() if proc.poll() is not None else "")
    keys = {} if {"--no-auth", "--keys-from-env"} & set(args) else PUBLIC_KEYS
    client = bf.Client(match[1], match[2], poll_interval=0.01, max_retries=0, timeout=5, **keys)
    return proc, client


def test_no_auth_serves_clients_that_send_no_key() -> None:
    proc, client = start_sandbox("--no-auth", "--pending-polls", "0")
    try:
        assert proc.stdout is not None
        assert "none asked for" in proc.stdout.readline()
        session = client.login(INSTITUTION, "greatday_nomfa", PASSWORD)
        assert len(session.accounts_summary().accounts) > 0
    finally:
        client.close()
        stop(proc, signal.SIGTERM)
    keyed, keyless = start_sandbox("--pending-polls", "0")
    try:
        with pytest.raises(bf.Unauthorized, match="You must provide a valid authorize token"):
            bf.Client(keyless.base_url, keyless.customer_id, max_retries=0).login(
                INSTITUTION, "greatday_nomfa", PASSWORD
            )
    finally:
        keyless.close()
        stop(keyed, signal.SIGTERM)


def stop(proc: subprocess.Popen[str], how: signal.Signals) -> str:
    """Stops the sandbox process with the signal ``how``; returns the rest of its output."""
    assert proc.stdout is not None
    proc.send_signal(how)
    assert proc.wait(timeout=15) == 0
    return proc.stdout.read()


def test_sandbox_flags_for_a_benchmark(tmp_path: Path) -> None:
    ids_file = tmp_path / "ids.txt"
    faults = json.dumps([{"kind": "status", "status": 503, "operation": "Investments", "times": 1}])
    proc, client = start_sandbox(
        "--pending-polls",
        "2",
        "--pending-seconds",
        "0.05",
        "--seed",
        "3",
        "--investment-transactions",
        "2",
        "--logins",
        "50",
        "--login-ids-file",
        str(ids_file),
        "--faults",
        faults,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("keys: ")
        second = proc.stdout.readline()
        assert second.startswith("50 saved logins bulk_00000 to bulk_00049") and str(ids_file) in second
        # Written before the URL line was printed.
        ids = ids_file.read_text().splitlines()
        assert ids == bf.Sandbox.login_ids_for(50, seed=3)
        with pytest.raises(bf.ApiError):
            client.investments(ids[0])  # the one injected 503
        investments = client.investments(ids[0])
        assert len(investments.transactions) == 2
        assert investments.raw["Login"]["Username"] == "bulk_00000"
        assert client.investments(ids[49]).raw["Login"]["Username"] == "bulk_00049"
        assert "stopped" in stop(proc, signal.SIGTERM)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_sandbox_without_a_file_names_how_to_compute_the_login_ids() -> None:
    proc, client = start_sandbox("--logins", "3", "--seed", "9")
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("keys: ")
        assert "LoginIds from bankfeed.Sandbox.login_ids_for(3, seed=9)" in proc.stdout.readline()
        login_id = bf.Sandbox.login_ids_for(3, seed=9)[2]
        assert client.authorize_cached(login_id).login_id == login_id
        stop(proc, signal.SIGINT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_sandbox_started_as_a_scripts_background_job_stops_at_sigint() -> None:
    # A non-interactive shell starts `python -m bankfeed sandbox &` with SIGINT ignored; an
    # ignored disposition survives exec, as it does here.
    proc = subprocess.Popen(
        [sys.executable, "-m", "bankfeed", "sandbox", "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("bankfeed sandbox on ")
        assert "stopped" in stop(proc, signal.SIGINT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize(
    "args",
    [("--faults", "not json"), ("--faults", '{"kind": "status"}'), ("--logins", "-1"), ("--logins", "2000000")],
    ids=["faults-not-json", "faults-not-a-list", "logins-negative", "logins-too-many"],
)
def test_sandbox_refuses_bad_flags(args: tuple[str, ...]) -> None:
    result = run("sandbox", "--port", "0", *args, timeout=30)
    assert result.returncode != 0
    assert "bankfeed sandbox on" not in result.stdout
    flag = args[0].removeprefix("--")
    assert flag in result.stderr, result.stderr


def test_sandbox_reports_a_login_ids_file_it_cannot_write(tmp_path: Path) -> None:
    target = tmp_path / "missing-directory" / "ids.txt"
    result = run("sandbox", "--port", "0", "--logins", "2", "--login-ids-file", str(target), timeout=30)
    assert result.returncode == 1
    assert "bankfeed sandbox on" not in result.stdout
    assert "LoginIds could not be written" in result.stderr and "Traceback" not in result.stderr


def test_sandbox_refuses_a_login_ids_file_with_no_logins_to_write(tmp_path: Path) -> None:
    target = tmp_path / "ids.txt"
    for logins in ((), ("--logins", "0")):
        result = run("sandbox", "--port", "0", *logins, "--login-ids-file", str(target), timeout=30)
        assert result.returncode == 2
        assert "--login-ids-file needs --logins N with N > 0" in result.stderr, result.stderr
        assert not target.exists()


def test_sandbox_keys_from_the_environment_and_tier2() -> None:
    keys = {"BANKFEED_API_KEY": "cli-api-key-1f2e", "BANKFEED_SECRET_KEY": "cli-secret-key-9a8b"}
    proc, keyless = start_sandbox("--keys-from-env", "--tier2", "--logins", "1", env={**ENV, **keys})
    try:
        login_id = bf.Sandbox.login_ids_for(1)[0]
        with pytest.raises(bf.Unauthorized):
            keyless.investments(login_id)
        client = bf.Client(
            keyless.base_url,
            keyless.customer_id,
            api_key=keys["BANKFEED_API_KEY"],
            secret_key=keys["BANKFEED_SECRET_KEY"],
            poll_interval=0.01,
            max_retries=0,
            timeout=5,
        )
        assert len(client.investments(login_id).positions) > 0
        # GetAllAttributes answers only a Tier 2 customer.
        assert len(client.attributes(login_id, package="all").values) > 0
        out = stop(proc, signal.SIGINT)
        assert not any(key in out for key in keys.values())
        assert proc.stderr is not None
        assert not any(key in proc.stderr.read() for key in keys.values())
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_sandbox_keys_from_an_environment_without_them_is_refused() -> None:
    result = run("sandbox", "--port", "0", "--keys-from-env", timeout=30)
    assert result.returncode == 2
    message = "needs a key in one of them: BANKFEED_API_KEY is not set, BANKFEED_SECRET_KEY is not set"
    assert message in result.stderr, result.stderr
    assert "bankfeed sandbox on" not in result.stdout
    empty = subprocess.run(
        [sys.executable, "-m", "bankfeed", "sandbox", "--port", "0", "--keys-from-env"],
        capture_output=True,
        text=True,
        timeout=30,
        env={**ENV, "BANKFEED_API_KEY": ""},
    )
    assert empty.returncode == 2 and "BANKFEED_API_KEY is empty, BANKFEED_SECRET_KEY is not set" in empty.stderr


def test_sandbox_names_the_variable_of_a_key_it_refuses() -> None:
    bad = subprocess.run(
        [sys.executable, "-m", "bankfeed", "sandbox", "--port", "0", "--keys-from-env"],
        capture_output=True,
        text=True,
        timeout=30,
        env={**ENV, "BANKFEED_SECRET_KEY": "has a space"},
    )
    assert bad.returncode == 2
    assert bad.stderr.startswith("error: BANKFEED_SECRET_KEY (--keys-from-env): holds characters"), bad.stderr
    assert "has a space" not in bad.stderr and "Traceback" not in bad.stderr


def test_a_refused_flag_is_named_as_written() -> None:
    result = run("sandbox", "--port", "0", "--pending-seconds", "-1", timeout=30)
    assert result.returncode == 2
    assert result.stderr.startswith("error: --pending-seconds: must be a number of seconds >= 0, got -1"), result.stderr


def test_the_sandbox_command_has_a_flag_for_every_sandbox_option() -> None:
    # The flags are read from bf.Sandbox's signature: an option added there is a flag at once, and
    # needs only its help text and, when its default is None, how to read its value.
    from bankfeed import __main__ as cli

    options = set(inspect.signature(bf.Sandbox).parameters) - {"api_key", "secret_key"}
    flags = cli._sandbox_flags()
    assert set(flags) == options, "every option but the keys, which come only from the environment"
    assert not [name for name, flag in flags.items() if flag.get("type") is type(None)], "a type for each None default"
    assert set(cli._SANDBOX_HELP) == options, "a help text for each flag"
    assert "--slow-pending-polls" in run("sandbox", "--help").stdout


def test_sandbox_without_a_port_picks_a_free_one_and_prints_it() -> None:
    proc, client = start_sandbox(port=None)
    try:
        match = re.fullmatch(r"http://127\.0\.0\.1:(\d+)", client.base_url)
        assert match and int(match[1]) > 0, client.base_url
        stop(proc, signal.SIGINT)
    finally:
        client.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_no_investments_keeps_the_widget_on_the_banking_list() -> None:
    """``--no-investments`` (read from ``bf.Sandbox``'s ``investments=True``): the widget's
    ``productType=investment`` shows the banking institutions, as without Investments enabled."""
    lists: dict[tuple[str, ...], str] = {}
    for args in ((), ("--no-investments",)):
        proc, client = start_sandbox("--no-auth", *args)
        try:
            url = f"{client.base_url}/v2/?demo=true&consentEnable=false&productType=investment"
            with urllib.request.urlopen(url, timeout=5) as page:
                html = page.read().decode()
            shown = re.search(r'data-product="(\w+)"', html)
            assert shown, html
            lists[args] = shown[1]
        finally:
            client.close()
            stop(proc, signal.SIGTERM)
    assert lists == {(): "investment", ("--no-investments",): "banking"}
