"""Pickling: exceptions keep their type and fields; a Client (its configuration, keys included),
a Session (its client, ids and body), results (their payload) and tables (their columns) come back
working, so that they cross process pools, Dask and Spark (docs/architecture.md#pickling)."""

from __future__ import annotations

import copy as copying
import json
import math
import multiprocessing
import os
import pickle
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

import pytest

import bankfeed as bf
import datahelpers as dh
from bfhelpers import API_KEY, GREATDAY, INSTITUTION, PASSWORD, SECRET_KEY, login_id_of

_E = TypeVar("_E", bound=BaseException)


def roundtrip(exc: _E) -> _E:
    copy = pickle.loads(pickle.dumps(exc))
    assert type(copy) is type(exc)
    assert str(copy) == str(exc)
    return copy


def test_an_api_error_from_the_server(client: bf.Client) -> None:
    with pytest.raises(bf.LoginDisabled) as info:
        client.authorize(INSTITUTION, "test_disabled_account", PASSWORD)
    original = info.value
    copy = roundtrip(original)
    for field in ("code", "status", "request_id", "message", "body"):
        assert getattr(copy, field) == getattr(original, field), field
    assert copy.code == "DISABLED_LOGIN" and copy.status == 401
    assert isinstance(copy.body, dict) and copy.body
    assert copy.message
    assert isinstance(copy, bf.ApiError)


def test_an_invalid_security_response_keeps_its_request_id(client: bf.Client) -> None:
    step = client.authorize(INSTITUTION, "Greatday", PASSWORD)
    assert isinstance(step, bf.Challenge)
    with pytest.raises(bf.InvalidSecurityResponse) as info:
        step.answer({step.prompts[0]: "Wrong answer qz"})
    original = info.value
    copy = roundtrip(original)
    assert copy.request_id == step.request_id
    assert (copy.code, copy.status, copy.message, copy.body) == (
        original.code,
        original.status,
        original.message,
        original.body,
    )


def test_invalid_answer(client: bf.Client) -> None:
    step = client.authorize(INSTITUTION, "Greatday", PASSWORD)
    assert isinstance(step, bf.Challenge)
    with pytest.raises(bf.InvalidAnswer) as info:
        step.validate({})
    original = info.value
    copy = roundtrip(original)
    assert copy.prompt == original.prompt == step.prompts[0]
    assert copy.rule == original.rule and copy.rule
    assert isinstance(copy, ValueError)


def test_pending_timeout() -> None:
    with bf.Sandbox(pending_seconds=30) as sb:
        client = sb.client(poll_interval=0.05, poll_timeout=0.2)
        session = client.authorize(INSTITUTION, "greatday_nomfa", PASSWORD)
        assert isinstance(session, bf.Session)
        with pytest.raises(bf.PendingTimeout) as info:
            session.investments()
        original = info.value
    copy = roundtrip(original)
    assert copy.request_id == original.request_id == session.request_id
    assert copy.waited == original.waited >= 0.2


def test_challenge_required_keeps_its_request_id_but_not_the_challenge(client: bf.Client) -> None:
    with pytest.raises(bf.ChallengeRequired) as info:
        client.login(INSTITUTION, "Greatday", PASSWORD)
    original = info.value
    copy = roundtrip(original)
    assert copy.request_id == original.request_id
    assert copy.challenge is None
    # The original is still answerable.
    assert original.challenge is not None
    prompt = original.challenge.prompts[0]  # Greatday asks one of its questions (docs/sandbox.md#users)
    assert original.challenge.answer({prompt: GREATDAY[prompt]})


# ---------------------------------------------------------------------------------------------
# Client, Session, results and tables.

_T = TypeVar("_T")

#: Every option of a Client, as its getters give them.
CLIENT_OPTIONS = (
    "base_url",
    "investments_base_url",
    "customer_id",
    "timeout",
    "poll_interval",
    "poll_timeout",
    "max_retries",
    "max_challenge_rounds",
    "max_body_bytes",
    "allow_insecure_http",
    "deadline",
)

#: A customer id for clients that send nothing.
CUSTOMER = "43387ca6-0391-4c82-857d-70d95f087ecb"


def every_protocol(value: _T) -> list[_T]:
    """``value`` through every pickle protocol, and through ``copy.deepcopy``."""
    copies: list[_T] = [pickle.loads(pickle.dumps(value, protocol)) for protocol in range(pickle.HIGHEST_PROTOCOL + 1)]
    copies.append(copying.deepcopy(value))
    for copy in copies:
        assert type(copy) is type(value)
        assert copy is not value
    return copies


def options_of(client: bf.Client) -> dict[str, Any]:
    return {name: getattr(client, name) for name in CLIENT_OPTIONS}


def records(table: bf.Table) -> list[dict[str, Any]]:
    """``table.to_records()`` with NaN (which equals nothing) as a string, to compare tables."""
    nan = "NaN"
    return [
        {key: nan if isinstance(value, float) and math.isnan(value) else value for key, value in row.items()}
        for row in table.to_records()
    ]


def same_table(copy: bf.Table, original: bf.Table) -> None:
    assert copy.columns == original.columns
    assert len(copy) == len(original)
    assert records(copy) == records(original)
    assert repr(copy) == repr(original)


def test_a_client_carries_its_whole_configuration_and_its_keys() -> None:
    client = bf.Client(
        "https://bank.example.com/",
        CUSTOMER,
        api_key=API_KEY,
        secret_key=SECRET_KEY,
        investments_base_url="https://wealth.example.com",
        timeout=12.5,
        poll_interval=0.25,
        poll_timeout=30,
        max_retries=5,
        max_challenge_rounds=3,
        deadline=90,
        max_body_bytes=1_000_000,
    )
    data = pickle.dumps(client)
    # Documented: the keys travel in the pickle, which is as secret as they are.
    assert API_KEY.encode() in data and SECRET_KEY.encode() in data
    for copy in every_protocol(client):
        assert options_of(copy) == options_of(client)
        assert repr(copy) == repr(client)
        assert API_KEY not in repr(copy) and SECRET_KEY not in repr(copy)
        assert "api_key='***'" in repr(copy) and "secret_key='***'" in repr(copy)


def test_insecure_http_and_defaults_come_back() -> None:
    insecure = bf.Client("http://bank.example.com", CUSTOMER, allow_insecure_http=True)
    for copy in every_protocol(insecure):
        assert options_of(copy) == options_of(insecure)
        assert copy.allow_insecure_http and copy.deadline is None


def test_a_client_without_keys_takes_none_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    client = bf.Client("https://bank.example.com", CUSTOMER)
    data = pickle.dumps(client)
    monkeypatch.setenv("BANKFEED_API_KEY", "ak-from-the-environment")
    monkeypatch.setenv("BANKFEED_BASE_URL", "https://elsewhere.example.com")
    assert "api_key='***'" in repr(bf.Client(customer_id=CUSTOMER)), "the environment is read by Client()"
    copy = pickle.loads(data)
    assert "api_key=None" in repr(copy) and "secret_key=None" in repr(copy)
    assert copy.base_url == "https://bank.example.com"


def test_an_unpickled_client_calls_the_service() -> None:
    # A sandbox that asks for keys of its own: the copy authenticates only with the keys pickled.
    with bf.Sandbox(api_key=API_KEY, secret_key=SECRET_KEY) as keyed:
        client = keyed.client(poll_interval=0.01, poll_timeout=10)
        copy = pickle.loads(pickle.dumps(client))
        session = copy.authorize(INSTITUTION, "greatday_nomfa", PASSWORD, save=True)
        assert isinstance(session, bf.Session)
        assert copy.investments(login_id_of(session)).accounts.to_records()


def test_a_session_pickles_by_its_ids_and_serves_data_after(client: bf.Client) -> None:
    session = client.authorize(INSTITUTION, "greatday_nomfa", PASSWORD, save=True)
    assert isinstance(session, bf.Session)
    for copy in every_protocol(session):
        assert (copy.request_id, copy.login_id) == (session.request_id, session.login_id)
        assert copy.raw == session.raw
        assert (copy.login, copy.institution, copy.links) == (session.login, session.institution, session.links)
        assert copy.last_refresh == session.last_refresh
        assert repr(copy) == repr(session)
    copy = pickle.loads(pickle.dumps(session))
    same_table(copy.investments().positions, session.investments().positions)
    assert copy.accounts_summary().accounts.to_records() == session.accounts_summary().accounts.to_records()


def test_a_session_after_challenges_keeps_its_login_id(client: bf.Client) -> None:
    session = client.login(INSTITUTION, "Greatday", PASSWORD, on_challenge=bf.answers(GREATDAY), save=True)
    cached = client.authorize_cached(login_id_of(session))
    for original in (session, cached):
        copy = pickle.loads(pickle.dumps(original))
        assert (copy.request_id, copy.login_id, copy.raw) == (original.request_id, original.login_id, original.raw)


def check_result(result: Any, tables: tuple[str, ...]) -> None:
    """``result`` through every protocol: same type, payload, RequestId, repr and tables."""
    for copy in every_protocol(result):
        assert copy.raw == result.raw
        assert getattr(copy, "request_id", None) == getattr(result, "request_id", None)
        assert repr(copy) == repr(result)
        for name in tables:
            same_table(getattr(copy, name), getattr(result, name))


def test_results_pickle_as_their_payload(sized: dh.Sized) -> None:
    _, data = sized
    check_result(data.investments, ("accounts", "positions", "transactions", "securities"))
    for investments in every_protocol(data.investments):
        assert (investments.value, investments.cash) == (data.investments.value, data.investments.cash)
    check_result(data.detail, ("accounts", "transactions"))
    check_result(data.summary, ("accounts", "transactions"))
    for summary in every_protocol(data.summary):
        assert summary.eft_eligible_ratio == data.summary.eft_eligible_ratio
    check_result(data.statements, ("statements",))
    assert pickle.loads(pickle.dumps(data.statements)).files == data.statements.files
    # The pickle is the payload, not the payload and its tables too.
    payload = len(pickle.dumps(data.detail.raw))
    assert len(pickle.dumps(data.detail)) < 2 * payload + 1000


def test_attributes_pickle_as_their_payload(client: bf.Client) -> None:
    session = client.authorize(INSTITUTION, "greatday_nomfa", PASSWORD, save=True)
    assert isinstance(session, bf.Session)
    for attributes in (
        session.attributes(package="income"),
        session.attributes({"Card": ["balance_min", "count_nsf"]}, detail=["count_nsf"]),
    ):
        check_result(attributes, ("values", "detail"))
        copy = pickle.loads(pickle.dumps(attributes))
        assert copy.groups == attributes.groups and copy.to_dict() == attributes.to_dict()


def test_statements_read_from_json_as_the_others_do(sized: dh.Sized) -> None:
    _, data = sized
    again = bf.Statements.from_json(json.dumps(data.statements.raw))
    same_table(again.statements, data.statements.statements)
    with pytest.raises(bf.ProtocolError):
        bf.Statements.from_json(b"{}")


def test_tables_pickle_alone_with_their_types(sized: dh.Sized) -> None:
    _, data = sized
    tables = [
        data.investments.accounts,
        data.investments.positions,
        data.investments.transactions,
        data.investments.securities,
        data.detail.accounts,
        data.detail.transactions,
        data.statements.statements,
    ]
    for table in tables:
        for copy in every_protocol(table):
            same_table(copy, table)
        copy = pickle.loads(pickle.dumps(table))
        assert copy.to_arrow().schema == table.to_arrow().schema
        assert copy.to_pandas().equals(table.to_pandas())


def test_a_combined_bulk_call_pickles_with_its_tables_and_its_errors() -> None:
    with bf.Sandbox(logins=3) as sb:
        client = sb.client()
        pairs = list(client.investments_many([*sb.login_ids, "not-a-guid"]))
    combined = bf.combine(pairs)
    assert combined.kind == "Investments" and list(combined.errors) == ["not-a-guid"]
    for copy in every_protocol(combined):
        assert (copy.kind, repr(copy)) == (combined.kind, repr(combined))
        assert list(copy.tables) == list(combined.tables)
        for name, table in combined.tables.items():
            same_table(copy[name], table)
        error = copy.errors["not-a-guid"]
        assert type(error) is bf.ConfigError and str(error) == str(combined.errors["not-a-guid"])
    nothing = bf.combine([])
    assert [(c.kind, c.tables, c.errors) for c in every_protocol(nothing)] == [(None, {}, {})] * len(
        every_protocol(nothing)
    )


def test_bytes_that_are_not_a_table_raise_value_error() -> None:
    good = pickle.dumps(bf.Investments.from_json(b'{"Accounts": []}').accounts)
    with pytest.raises(ValueError, match="table"):
        pickle.loads(good.replace(b"bankfeed-table-1", b"bankfeed-table-9"))


def test_cloudpickle_as_dask_and_spark_use_it(client: bf.Client) -> None:
    cloudpickle = pytest.importorskip("cloudpickle")
    session = client.authorize(INSTITUTION, "greatday_nomfa", PASSWORD, save=True)
    assert isinstance(session, bf.Session)
    investments = session.investments()
    copied: tuple[bf.Client, bf.Session, bf.Investments] = pickle.loads(
        cloudpickle.dumps((client, session, investments))
    )
    assert options_of(copied[0]) == options_of(client)
    same_table(copied[1].investments().positions, investments.positions)
    same_table(copied[2].positions, investments.positions)


def in_worker(
    client: bf.Client, session: bf.Session, login_id: str
) -> tuple[int, bf.Investments, bf.Accounts, bf.Session]:
    """A pool task: calls with the client and session it received, and sends results back."""
    investments = client.investments(login_id)
    detail = session.accounts_detail(with_transactions=True)
    return os.getpid(), investments, detail, client.authorize_cached(login_id)


def test_a_spawn_process_pool_receives_a_client_and_returns_results(client: bf.Client) -> None:
    session = client.authorize(INSTITUTION, "greatday_nomfa", PASSWORD, save=True)
    assert isinstance(session, bf.Session)
    login_id = login_id_of(session)
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(in_worker, client, session, login_id) for _ in range(3)]
        results = [future.result(timeout=120) for future in futures]
    expected = client.investments(login_id)
    for pid, investments, detail, cached in results:
        assert pid != os.getpid()
        same_table(investments.positions, expected.positions)
        assert detail.transactions.to_records() and detail.raw["Accounts"]
        assert cached.login_id == login_id
        # A session made in the worker serves calls here.
        same_table(cached.investments().positions, expected.positions)
