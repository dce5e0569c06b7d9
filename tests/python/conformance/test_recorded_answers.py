"""The client against answers in the shapes a real instance was recorded sending (tests/corpus):
a 202 whose link is a literal ``{Endpoint}Async`` template, a cached Authorize answered with a
question and its answer's 200 without ``Login``, LoginIds outside RFC 4122, ``LastRefresh`` with 6
and 7 fractional digits, summary and statements at once, null holders and balances. Every entry
point that polls is driven through it: sessions and single calls of both clients, the bulk calls,
``bf.export``/``bf.aexport`` and the dlt source (docs/protocol.md#polling).

The server (``recordedserver``) finishes account detail only on
``GET .../GetAccountsDetailAsync/{RequestId}`` and refuses a path with a brace, so a client that
cannot read the template fails here, as it failed against production.
"""

from __future__ import annotations

import asyncio
import datetime
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyarrow")

import pyarrow.parquet as pq

import bankfeed as bf
from bfhelpers import Api
from recordedserver import CUSTOMER, LOGIN_IDS, Recorded, serving

ANSWERS = bf.answers(
    {
        "What shape do people like most?": "Triangle",
        "What is the best country on earth?": "Canada",
    }
)


@pytest.fixture
def server() -> Iterator[tuple[Recorded, str]]:
    recorded = Recorded()
    with serving(recorded) as server:
        yield recorded, server.url


def test_the_recorded_login_ids_are_outside_rfc_4122() -> None:
    # The point of the fixture: pydantic's UUID4 and RFC 4122 readers refuse these.
    assert [uuid.UUID(login_id).version for login_id in LOGIN_IDS] == [None, None, None]


def test_a_live_login_then_every_banking_call(api: Api, server: tuple[Recorded, str]) -> None:
    recorded, url = server
    client = api.client_at(url, CUSTOMER)
    handler = api.handler(ANSWERS)
    session = api.run(client.login("FlinksCapital", "Greatday", "Everyday", save=True, on_challenge=handler))
    assert session.login_id == LOGIN_IDS[0]
    # 7 fractional digits (the recorded Authorize), read to the microsecond.
    assert session.last_refresh == datetime.datetime(2025, 11, 3, 6, 12, 48, 441963, tzinfo=datetime.timezone.utc)

    detail = api.run(session.accounts_detail())
    transactions = detail.transactions.to_pandas()
    assert len(transactions) == 3
    assert set(detail.accounts.to_pandas()["account_number"]) == {"2004417", "451201******7731"}
    assert ("GET", "GetAccountsDetailAsync") in recorded.calls()
    assert ("POST", "GetAccountsDetail") in recorded.calls()
    assert recorded.braces == 0

    summary = api.run(session.accounts_summary())
    assert len(summary.accounts.to_pandas()) == 2
    statements = api.run(session.statements())
    assert statements.raw["StatementsByAccount"][1]["Statements"] == []
    assert recorded.braces == 0


def test_a_polled_single_call_through_a_cached_session(api: Api, server: tuple[Recorded, str]) -> None:
    recorded, url = server
    client = api.client_at(url, CUSTOMER)
    for login_id in LOGIN_IDS:
        session = api.run(client.authorize_cached(login_id))
        assert session.login_id is not None and session.login_id.lower() == login_id.lower()
        detail = api.run(session.accounts_detail(days="Days90"))
        assert len(detail.transactions.to_pandas()) == 3
    assert recorded.braces == 0


def test_a_challenged_cached_read_raises_then_answers_keep_the_login(api: Api, server: tuple[Recorded, str]) -> None:
    recorded, url = server
    recorded.challenged = {LOGIN_IDS[1]}
    client = api.client_at(url, CUSTOMER)
    with pytest.raises(bf.ChallengeRequired) as caught:
        api.run(client.authorize_cached(LOGIN_IDS[1]))
    challenge = caught.value.challenge
    assert challenge is not None
    assert challenge.prompts == ["What is the best country on earth?"]
    session = api.run(challenge.answer({"What is the best country on earth?": ["Canada"]}))
    # The answer's 200 has no Login: the session keeps the LoginId asked for.
    assert session.login is None
    assert session.login_id == LOGIN_IDS[1]
    detail = api.run(session.accounts_detail())
    assert len(detail.transactions.to_pandas()) == 3


def test_the_bulk_calls_poll_the_template(api: Api, server: tuple[Recorded, str]) -> None:
    recorded, url = server
    recorded.challenged = {LOGIN_IDS[2]}
    client = api.client_at(url, CUSTOMER)
    results = dict(api.collect(client.accounts_detail_many(list(LOGIN_IDS), concurrency=3)))
    assert isinstance(results[LOGIN_IDS[0]], bf.Accounts), results[LOGIN_IDS[0]]
    assert isinstance(results[LOGIN_IDS[1]], bf.Accounts), results[LOGIN_IDS[1]]
    # The challenged login is its own failure; the others went on.
    assert isinstance(results[LOGIN_IDS[2]], bf.ChallengeRequired), results[LOGIN_IDS[2]]
    fetched = [(login_id, result) for login_id, result in results.items() if isinstance(result, bf.Accounts)]
    combined = bf.combine(fetched)
    assert len(combined.transactions.to_pandas()) == 6
    assert recorded.braces == 0


def test_a_resumed_request_id_polls_the_template(api: Api, server: tuple[Recorded, str]) -> None:
    recorded, url = server
    client = api.client_at(url, CUSTOMER, poll_timeout=0.05, poll_interval=0.01)
    session = api.run(client.authorize_cached(LOGIN_IDS[0]))
    # poll_timeout 0.05 s: one or two polls, then the wait ends with the RequestId to resume.
    recorded.polls = 10_000
    with pytest.raises(bf.PendingTimeout) as caught:
        api.run(session.accounts_detail())
    assert caught.value.request_id == session.request_id
    recorded.polls = 0
    again = api.client_at(url, CUSTOMER)
    resumed = api.run(again.session(session.request_id, login_id=LOGIN_IDS[0]).accounts_detail())
    assert len(resumed.transactions.to_pandas()) == 3
    assert recorded.braces == 0


def _check_export(out: Path, report: bf.ExportReport) -> None:
    transactions = pq.read_table(out / "accounts" / "transactions").to_pandas()
    assert sorted(set(transactions["login_id"].str.lower())) == sorted(i.lower() for i in LOGIN_IDS[:2])
    assert len(transactions) == 6
    failures = [json.loads(line) for line in (out / "_failures.jsonl").read_text().splitlines()]
    assert [record["login_id"].lower() for record in failures] == [LOGIN_IDS[2].lower()]
    assert failures[0]["error"] == "ChallengeRequired", failures[0]


def test_bf_export_lands_the_template_polled_logins(server: tuple[Recorded, str], tmp_path: Path) -> None:
    recorded, url = server
    recorded.challenged = {LOGIN_IDS[2]}
    client = bf.Client(url, CUSTOMER, poll_interval=0.01, poll_timeout=10)
    report = bf.export(client, list(LOGIN_IDS), tmp_path / "out", what="accounts", days=90)
    _check_export(tmp_path / "out", report)
    assert recorded.braces == 0


def test_bf_aexport_lands_the_template_polled_logins(server: tuple[Recorded, str], tmp_path: Path) -> None:
    recorded, url = server
    recorded.challenged = {LOGIN_IDS[2]}

    async def run() -> bf.ExportReport:
        async with bf.AsyncClient(url, CUSTOMER, poll_interval=0.01, poll_timeout=10) as client:
            return await bf.aexport(client, list(LOGIN_IDS), tmp_path / "out", what="accounts", days=90)

    _check_export(tmp_path / "out", asyncio.run(run()))
    assert recorded.braces == 0


def test_the_dlt_source_loads_the_template_polled_logins(
    server: tuple[Recorded, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dlt = pytest.importorskip("dlt")
    import bankfeed.dlt

    # dlt reports each run to its makers by default; a test run sends nothing anywhere.
    monkeypatch.setenv("RUNTIME__DLTHUB_TELEMETRY", "false")
    recorded, url = server
    client = bf.Client(url, CUSTOMER, poll_interval=0.01, poll_timeout=10)
    pipeline: Any = dlt.pipeline(
        pipeline_name="recorded_shapes",
        pipelines_dir=str(tmp_path / "pipelines"),
        destination=dlt.destinations.duckdb(str(tmp_path / "landed.duckdb")),
        dataset_name="nightly",
    )
    source = bankfeed.dlt.source(client, list(LOGIN_IDS), what="accounts", days=90)
    pipeline.run(source.with_resources("accounts_transactions"))
    assert source.failures == []
    with pipeline.sql_client() as sql:
        rows = sql.execute_sql("select count(*), count(distinct lower(login_id)) from accounts_transactions")
    assert rows == [(9, 3)]
    assert recorded.braces == 0
