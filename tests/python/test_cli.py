"""python -m bankfeed: demo, users, sandbox."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid

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


def test_sandbox_serves_until_ctrl_c() -> None:
    port, customer_id = free_port(), str(uuid.uuid4())
    proc = subprocess.Popen(
        [sys.executable, "-m", "bankfeed", "sandbox", "--port", str(port), "--customer-id", customer_id],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
    )
    try:
        assert proc.stdout is not None
        first_line = proc.stdout.readline()
        assert f"http://127.0.0.1:{port}" in first_line and customer_id in first_line
        client = bf.Client(f"http://127.0.0.1:{port}", customer_id, timeout=5, max_retries=0)
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
