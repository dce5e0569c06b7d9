"""``bankfeed cassette check PATH...`` (docs/cassettes.md#checking-committed-cassettes): a cassette
recorded by bankfeed passes; one hand-edited to hold a password or an answer again fails, naming
the file, the interaction and the field, never the value; a broken file fails; a usage error
exits 2; a sidecar file changed after it was recorded fails (docs/cassettes.md#sidecar-files).
``bf.check_cassette`` gives the same findings."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

import bankfeed as bf
from bfhelpers import GREATDAY, INSTITUTION, PASSWORD


def check(*paths: str | Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "bankfeed", "cassette", "check", *map(str, paths)]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cassette of a login asked a question, recorded against the sandbox."""
    path = tmp_path_factory.mktemp("check") / "login.yaml"
    with bf.Sandbox() as sb, sb.client(cassette=path, record_mode="once", poll_interval=0.01) as client:
        client.login(INSTITUTION, "Greatday", PASSWORD, on_challenge=bf.answers(GREATDAY)).accounts_summary()
    return path


def test_a_recorded_cassette_is_clean(clean: Path) -> None:
    done = check(clean, clean.parent)
    assert (done.returncode, done.stdout, done.stderr) == (0, "2 cassette(s) clean\n", "")
    assert bf.check_cassette(clean) == []


@pytest.mark.parametrize(
    ("placeholder", "value", "field"),
    [
        ("Password: REDACTED", PASSWORD, "the request body's field Password"),
        ("- REDACTED", "Montreal", "the request body's field SecurityResponses["),
        ("flinks-auth-key: REDACTED", "c4569c54-e167-4d34-8de6-f4113bc82414", "the request header flinks-auth-key"),
    ],
)
def test_a_secret_put_back_by_hand_is_named_by_file_interaction_and_field(
    clean: Path, tmp_path: Path, placeholder: str, value: str, field: str
) -> None:
    text = clean.read_text(encoding="utf-8")
    assert placeholder in text, "the recording has the placeholder to put the secret back in"
    edited = tmp_path / "edited.yaml"
    edited.write_text(text.replace(placeholder, placeholder.replace("REDACTED", value), 1), encoding="utf-8")
    done = check(clean, edited)
    assert done.returncode == 1, done
    [finding] = done.stdout.splitlines()
    assert finding.startswith(f"{edited}: interaction ") and field in finding, finding
    assert value not in done.stdout + done.stderr, "the value is never shown"
    assert done.stderr == "1 finding(s) in 2 cassette(s)\n"
    assert bf.check_cassette(edited) == [finding]


def test_a_broken_file_is_a_finding_and_a_wrong_call_a_usage_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("version: 1\ninteractions: [", encoding="utf-8")
    done = check(broken)
    assert done.returncode == 1 and done.stdout.startswith(f"{broken}: is not a cassette: "), done
    assert check().returncode == 2
    missing = check(tmp_path / "missing.yaml")
    assert missing.returncode == 2 and "no such file or directory" in missing.stderr, missing
    empty = tmp_path / "empty"
    empty.mkdir()
    assert check(empty).returncode == 2


def test_statement_pdfs_replay_from_a_sidecar_file_in_process_and_served_and_a_changed_one_is_caught(
    tmp_path: Path,
) -> None:
    path = tmp_path / "statements.yaml"
    with bf.Sandbox() as sb:
        with sb.client(cassette=path, record_mode="once", poll_interval=0.01) as client:
            session = client.login(INSTITUTION, "greatday_nomfa", PASSWORD)
            recorded = session.statements(number_of_statements="Months3").files
        sent = sb.request_count
        # A live recording: every statement is the same blank PDF, one file named by its hash.
        [sidecar] = (tmp_path / "statements.files").iterdir()
        content = sidecar.read_bytes()
        assert sidecar.name == f"{hashlib.sha256(content).hexdigest()}.pdf" and content.startswith(b"%PDF-")
        text = path.read_text(encoding="utf-8")
        assert f"$sidecar: {sidecar.name}" in text and "JVBERi0" not in text, "no base64 PDF in the YAML"
        assert check(path).returncode == 0

        with sb.client(cassette=path, poll_interval=0.01) as client:
            replayed = client.login(INSTITUTION, "greatday_nomfa", PASSWORD).statements(number_of_statements="Months3")
        assert sb.request_count == sent, "replayed, nothing sent"
        # The same statements, each file the placeholder the recording kept for it.
        assert len(recorded) >= 3
        assert [f["unique_id"] for f in replayed.files] == [f["unique_id"] for f in recorded]
        assert all(f["content"] == content for f in replayed.files)
        api_key, secret_key = sb.api_key, sb.secret_key
        # The sandbox's replay server reads the same sidecar file.
        with (
            bf.Sandbox(replay=path, api_key=api_key, secret_key=secret_key) as replay,
            replay.client(poll_interval=0.01) as client,
        ):
            served = client.login(INSTITUTION, "greatday_nomfa", PASSWORD).statements(number_of_statements="Months3")
        assert [f["content"] for f in served.files] == [f["content"] for f in replayed.files]

        sidecar.write_bytes(content + b"% changed")
        done = check(path)
        assert done.returncode == 1, done
        assert all(sidecar.name in finding and "SHA-256" in finding for finding in done.stdout.splitlines()), done
        with pytest.raises(bf.CassetteError, match=sidecar.name):
            sb.client(cassette=path)
        with pytest.raises(bf.CassetteError, match=sidecar.name):
            bf.Sandbox(replay=path, api_key=api_key, secret_key=secret_key)
