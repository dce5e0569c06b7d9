"""Cassettes from Python (docs/cassettes.md#in-python): a session recorded against the sandbox
through ``cassette=``/``record_mode=`` or a ``bf.cassette(...)`` block, then replayed with the
sandbox closed, giving the same tables (every data operation, polled through 202s with either
style of link, a retried 503 and a bulk call, from both clients); what the written file never
holds; the error of a request the cassette has no answer for; and the errors of bad arguments."""

from __future__ import annotations

import asyncio
import contextvars
import pickle
import threading
import time
from pathlib import Path
from typing import Any

import pytest

# The tables are compared as pandas compares them; without pandas (the bare collection of
# scripts/test) the file is skipped, not an error that stops the collection.
pytest.importorskip("pandas")

import pandas as pd

import bankfeed as bf
from bfhelpers import GREATDAY, INSTITUTION, PASSWORD, Api, raises
from datahelpers import CASSETTE_DISGUISED_COLUMNS

USERNAME = "Greatday"


class Outcome:
    """What one session gave: its ids, the challenges asked, and every table as a DataFrame."""

    def __init__(self, session: Any, asked: list[list[str]], tables: dict[str, pd.DataFrame]) -> None:
        self.login_id: str = session.login_id
        self.request_id: str = session.request_id
        self.asked = asked
        self.tables = tables


def run_session(api: Api, client: Any) -> Outcome:
    """A credentials login whose challenge is answered, the account detail (polled through 202s)
    and the investments."""
    asked: list[list[str]] = []
    canned = bf.answers(GREATDAY)

    def answer(challenge: Any) -> Any:
        asked.append(list(challenge.prompts))
        return canned(challenge)

    session = api.run(client.login(INSTITUTION, USERNAME, PASSWORD, on_challenge=api.handler(answer), save=True))
    accounts = api.run(session.accounts_detail(with_transactions=True, days="Days90"))
    investments = api.run(session.investments())
    tables = {f"accounts.{name}": getattr(accounts, name).to_pandas() for name in ("accounts", "transactions")}
    for name in ("accounts", "positions", "transactions", "securities"):
        tables[f"investments.{name}"] = getattr(investments, name).to_pandas()
    return Outcome(session, asked, tables)


def record(api: Api, path: Path) -> tuple[Outcome, str, str, int, bf.Sandbox]:
    """Records a session into ``path`` against a sandbox of its own, closed on return: the
    outcome, the sandbox's URL and customer id, the requests it saw, and the sandbox (whose
    keys a replaying client is given too: with a secret key, a login starts with a token call)."""
    with bf.Sandbox(pending_polls=2) as sb:
        client = api.client(sb, cassette=str(path), record_mode="once")
        live = run_session(api, client)
        assert not path.exists(), "nothing is written before the client closes"
        client.close()
        return live, sb.url, sb.customer_id, sb.request_count, sb


def test_a_session_recorded_against_the_sandbox_replays_with_it_closed_and_gives_the_same_tables(
    api: Api, tmp_path: Path
) -> None:
    path = tmp_path / "cassettes" / "session.yaml"
    live, url, customer_id, sent, sb = record(api, path)
    assert path.exists() and live.asked, "written on close, after a login that was asked a question"
    assert sb.closed

    # The same test again, no server at all, and a poll interval that a replay never sleeps.
    keys = {"api_key": sb.api_key, "secret_key": sb.secret_key}
    client = api.client_at(url, customer_id, cassette=path, record_mode="none", poll_interval=5.0, **keys)
    started = time.monotonic()
    replayed = run_session(api, client)
    assert time.monotonic() - started < 4, "no poll interval slept"
    client.close()
    assert replayed.asked == live.asked

    for name, table in live.tables.items():
        again = replayed.tables[name]
        assert len(table) > 0 or name == "investments.transactions", name
        kept = [column for column in table.columns if column not in CASSETTE_DISGUISED_COLUMNS]
        pd.testing.assert_frame_equal(again[kept], table[kept], check_exact=True, obj=name)
        for column in CASSETTE_DISGUISED_COLUMNS & set(table.columns):
            # Disguised, value by value, in the same shape (docs/cassettes.md#redaction).
            assert again[column].str.len().tolist() == table[column].str.len().tolist(), f"{name}.{column}"
            assert not (again[column] == table[column]).any(), f"{name}.{column}: a value came through as it was"
    assert len(live.tables["accounts.transactions"]) > 0
    # The ids are the cassette's pseudonyms, the same each replay.
    assert replayed.login_id != live.login_id and replayed.login_id.startswith("ca55e77e-")
    text = path.read_text(encoding="utf-8")
    assert text.count("\n- request:") == sent, "every request the sandbox saw, recorded once"


def test_the_written_cassette_holds_no_password_answer_username_key_or_real_id(tmp_path: Path) -> None:
    path = tmp_path / "secrets.yaml"
    api = Api("sync")
    live, _, _, _, sb = record(api, path)
    text = path.read_text(encoding="utf-8")
    answered = [GREATDAY[prompt] for prompts in live.asked for prompt in prompts]
    assert answered, "a question was answered"
    crossed = [PASSWORD, USERNAME, *answered, live.login_id, live.request_id, sb.api_key, sb.secret_key]
    found = [value for value in crossed if value and value.lower() in text.lower()]
    assert not found, f"the cassette holds {found}"
    assert "REDACTED" in text and live.login_id not in text


def test_a_cassette_block_records_every_client_built_inside_and_replays_them(tmp_path: Path) -> None:
    path = tmp_path / "block.yaml"
    with bf.Sandbox(pending_polls=2) as sb:
        url, customer_id, api_key, secret_key = sb.url, sb.customer_id, sb.api_key, sb.secret_key
        with bf.cassette(path, mode="once") as tape:
            client = sb.client(poll_interval=0.01)
            assert 'record_mode="once"' in repr(client)
            session = client.login(INSTITUTION, USERNAME, PASSWORD, on_challenge=bf.answers(GREATDAY))
            live = session.investments().positions.to_pandas()
            # A second client of the block shares its cassette.
            assert sb.client().institutions()
            assert not path.exists(), "written when the block ends"
        assert path.exists()
        sent = sb.request_count
        assert tape.play_count() == (0, 0), "a recording replays nothing"
        assert "cassette=" not in repr(sb.client()), "a client built after the block is live"

    with bf.cassette(str(path)) as tape:
        assert tape.mode == "none" and tape.path == str(path)
        client = bf.Client(url, customer_id, api_key=api_key, secret_key=secret_key, poll_interval=5.0)
        session = client.login(INSTITUTION, USERNAME, PASSWORD, on_challenge=bf.answers(GREATDAY))
        pd.testing.assert_frame_equal(session.investments().positions.to_pandas(), live)
        assert client.institutions()
    assert tape.play_count() == (sent, sent), "every recorded interaction played once"


def test_the_block_is_seen_by_its_tasks_and_copied_contexts_as_any_context_variable(tmp_path: Path) -> None:
    def build() -> str:
        # A loopback URL: a mode that may record opens no socket until a request is sent.
        return repr(bf.Client("http://127.0.0.1:9", "43387ca6-0391-4c82-857d-70d95f087ecb"))

    async def in_a_task() -> str:
        return await asyncio.create_task(asyncio.to_thread(build))

    seen: list[str] = []
    with bf.cassette(tmp_path / "context.yaml", mode="once"):
        on_tape = asyncio.run(in_a_task())
        copied = contextvars.copy_context()
        thread = threading.Thread(target=lambda: seen.append(copied.run(build)))
        thread.start()
        thread.join()
        plain = threading.Thread(target=lambda: seen.append(build()))
        plain.start()
        plain.join()
    assert 'record_mode="once"' in on_tape
    assert "cassette=" in seen[0], "a thread that runs in a copy of the context sees the block"
    assert "cassette=" not in seen[1], "a plain thread starts with an empty context, as Python's threads do"


def test_a_request_the_cassette_has_no_answer_for_raises_an_error_naming_the_cassette_and_the_request(
    tmp_path: Path,
) -> None:
    path = tmp_path / "unmatched.yaml"
    with bf.Sandbox() as sb:
        url, customer_id = sb.url, sb.customer_id
        with sb.client(cassette=path, record_mode="once", poll_interval=0.01) as client:
            session = client.login(INSTITUTION, USERNAME, PASSWORD, on_challenge=bf.answers(GREATDAY))
            session.investments()
    client = bf.Client(url, customer_id, cassette=path)
    session = client.login(INSTITUTION, USERNAME, PASSWORD, on_challenge=bf.answers(GREATDAY))
    with raises(bf.CassetteError, path=str(path)) as info:
        session.accounts_summary()
    error = info.value
    assert error.request is not None and "GetAccountsSummary" in error.request
    assert error.closest is not None and error.closest.startswith("interaction ")
    assert error.differences and all(isinstance(line, str) for line in error.differences)
    text = str(error)
    assert str(path) in text and "has no recorded answer for POST /v3/{customer_id}/" in text
    assert error.closest in text and error.differences[0] in text
    # The recorded answer, played once, is not played again: an error, never a repeat.
    session.investments()
    with raises(bf.CassetteError, path=str(path), closest=None, differences=[]) as info:
        session.investments()
    assert "all were played" in str(info.value)


def test_mode_once_records_when_the_file_is_missing_then_replays_it(api: Api, tmp_path: Path) -> None:
    path = tmp_path / "once.yaml"
    with bf.Sandbox(pending_polls=2) as sb:
        client = api.client(sb, cassette=path, record_mode="once")
        first = run_session(api, client)
        client.close()
        sent = sb.request_count
        assert sent > 0 and path.exists()
        written = path.read_bytes()
        client = api.client(sb, cassette=path, record_mode="once")
        again = run_session(api, client)
        client.close()
        assert sb.request_count == sent, "the second run sent nothing: it replayed"
    assert path.read_bytes() == written, "a replay writes nothing"
    for name, table in first.tables.items():
        kept = [column for column in table.columns if column not in CASSETTE_DISGUISED_COLUMNS]
        pd.testing.assert_frame_equal(again.tables[name][kept], table[kept], obj=name)


def test_none_on_a_missing_file_says_how_to_record_it(tmp_path: Path) -> None:
    path = tmp_path / "missing.yaml"
    with raises(bf.CassetteError, path=str(path), request=None) as info:
        bf.Client("http://127.0.0.1:9", "43387ca6-0391-4c82-857d-70d95f087ecb", cassette=path)
    assert "does not exist" in str(info.value) and "record_mode once" in str(info.value)


@pytest.mark.parametrize(
    ("options", "error", "field", "words"),
    [
        ({"cassette": "x.yaml", "record_mode": "sometimes"}, bf.ConfigError, "record_mode", ['"sometimes"', "rewrite"]),
        ({"cassette": "x.yaml", "record_mode": 3}, TypeError, None, ["record_mode must be", "not int"]),
        ({"cassette": 3}, TypeError, None, ["cassette must be", "not int"]),
        ({"cassette": b"x.yaml"}, TypeError, None, ["cassette must be", "not bytes"]),
        ({"cassette": ""}, bf.ConfigError, "cassette", ["empty string"]),
        ({"record_mode": "once"}, bf.ConfigError, "record_mode", ["cassette=PATH"]),
        ({"allow_live_record": True}, bf.ConfigError, "allow_live_record", ["cassette=PATH"]),
        ({"cassette": "x.yaml", "allow_live_record": "yes"}, TypeError, None, ["allow_live_record must be a bool"]),
    ],
)
def test_a_bad_cassette_argument_is_refused_naming_it(
    tmp_path: Path, options: dict[str, Any], error: type[Exception], field: str | None, words: list[str]
) -> None:
    with pytest.raises(error) as info:
        bf.Client("http://127.0.0.1:9", "43387ca6-0391-4c82-857d-70d95f087ecb", **options)
    if field is not None:
        assert isinstance(info.value, bf.ConfigError) and info.value.field == field
    for word in words:
        assert word in str(info.value)


def test_a_directory_or_a_bad_mode_of_the_block_is_refused_naming_the_argument(tmp_path: Path) -> None:
    with raises(bf.ConfigError, field="cassette") as info:
        bf.Client("http://127.0.0.1:9", "43387ca6-0391-4c82-857d-70d95f087ecb", cassette=tmp_path)
    assert "directory" in str(info.value)
    with raises(bf.ConfigError, field="mode") as block:
        bf.cassette(tmp_path / "x.yaml", mode="always")  # type: ignore[arg-type]
    assert "must be one of none, once, new_episodes, all, rewrite" in str(block.value)
    with raises(bf.ConfigError, field="record_mode"), bf.cassette(tmp_path / "x.yaml", mode="once"):
        bf.Client("http://127.0.0.1:9", "43387ca6-0391-4c82-857d-70d95f087ecb", record_mode="all")


def test_recording_against_a_remote_host_needs_allow_live_record(tmp_path: Path) -> None:
    path = tmp_path / "live.yaml"
    with raises(bf.ConfigError, field="allow_live_record") as info:
        bf.Client("https://bank.example", "43387ca6-0391-4c82-857d-70d95f087ecb", cassette=path, record_mode="once")
    assert "lockout" in str(info.value)
    client = bf.Client(
        "https://bank.example",
        "43387ca6-0391-4c82-857d-70d95f087ecb",
        cassette=path,
        record_mode="once",
        allow_live_record=True,
    )
    assert "cassette=" in repr(client)


def test_a_client_on_a_cassette_does_not_pickle(tmp_path: Path) -> None:
    client = bf.Client(
        "http://127.0.0.1:9", "43387ca6-0391-4c82-857d-70d95f087ecb", cassette=tmp_path / "p.yaml", record_mode="once"
    )
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(client)


def every_operation(api: Api, client: Any, bulk_ids: list[str]) -> dict[str, pd.DataFrame]:
    """A login answering its question, then every data operation of a session (each polled
    through 202s), and the investments of ``bulk_ids`` in one bulk call: every table, by name."""
    session = api.run(
        client.login(INSTITUTION, USERNAME, PASSWORD, on_challenge=api.handler(bf.answers(GREATDAY)), save=True)
    )
    results = {
        "detail": api.run(session.accounts_detail(with_transactions=True, days="Days90")),
        "summary": api.run(session.accounts_summary()),
        "statements": api.run(session.statements(number_of_statements="Months3")),
        "investments": api.run(session.investments()),
        "attributes": api.run(session.attributes(package="income")),
    }
    tables = {}
    for kind, result in results.items():
        names = {
            "detail": ("accounts", "transactions"),
            "summary": ("accounts",),
            "statements": ("statements",),
            "investments": ("accounts", "positions", "transactions", "securities"),
            "attributes": ("values",),
        }[kind]
        tables.update({f"{kind}.{name}": getattr(result, name).to_pandas() for name in names})
    tables["statements.files"] = pd.DataFrame(results["statements"].files)
    for login_id, investments in sorted(api.collect(client.investments_many(bulk_ids, concurrency=3))):
        assert isinstance(investments, bf.Investments), investments
        tables[f"bulk.{login_id}.positions"] = investments.positions.to_pandas()
    return tables


@pytest.mark.parametrize("async_links", ["template", "concrete"])
def test_every_data_operation_a_retried_fault_and_a_bulk_call_replay_value_for_value(
    api: Api, tmp_path: Path, async_links: str
) -> None:
    path = tmp_path / "every.yaml"
    # Every data operation answers 202 twice, its link in the style asked; the summary fails once
    # with a 503, retried.
    fault = {"kind": "status", "status": 503, "retry_after": "0", "operation": "GetAccountsSummary", "times": 1}
    options: dict[str, Any] = {"pending_polls": 2, "async_links": async_links, "logins": 3, "faults": [fault]}
    every = ["GetAccountsDetail", "GetAccountsSummary", "GetStatements", "Investments", "Attributes"]
    with bf.Sandbox(pending_operations=every, **options) as sb:
        bulk_ids = list(sb.login_ids)
        client = api.client(sb, cassette=path, record_mode="once")
        live = every_operation(api, client, bulk_ids)
        client.close()
        url, customer_id, sent = sb.url, sb.customer_id, sb.request_count
        keys = {"api_key": sb.api_key, "secret_key": sb.secret_key}
    text = path.read_text(encoding="utf-8")
    assert text.count("status: 202") >= 10 and text.count("status: 503") == 1, "polled, and the fault recorded"
    assert ("{Endpoint}Async" in text) == (async_links == "template"), "the 202s' links as the sandbox sent them"
    assert text.count("\n- request:") == sent

    # No server at all, and a poll interval a replay never sleeps.
    client = api.client_at(url, customer_id, cassette=path, record_mode="none", poll_interval=5.0, **keys)
    started = time.monotonic()
    replayed = every_operation(api, client, bulk_ids)
    assert time.monotonic() - started < 4, "no poll interval slept"
    client.close()
    assert replayed.keys() == live.keys()
    # The columns a recording changes: personal data disguised (titles among it), the ids of the
    # login pseudonyms, and a statement's file the placeholder PDF (docs/cassettes.md#redaction).
    changed = CASSETTE_DISGUISED_COLUMNS | {"account_number", "login_id", "group_id", "content"}
    for name, table in live.items():
        assert len(table) > 0 or name.endswith("transactions"), name
        kept = [column for column in table.columns if column not in changed]
        pd.testing.assert_frame_equal(replayed[name][kept], table[kept], check_exact=True, obj=name)
    assert replayed["attributes.values"]["group_id"].str.startswith("ca55e77e-").all(), "the login's pseudonym"
