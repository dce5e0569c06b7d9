"""Values the real service was recorded sending, read through the public API from the loopback
server answering in the recorded shapes (``recordedserver``, made-up values; docs/protocol.md#authorize,
docs/protocol.md#account-detail-summary-and-statements):

- ``LastRefresh`` with six or seven fractional digits, with or without ``Z``: one moment in
  ``Session.last_refresh``;
- ``InstitutionName`` and ``InstitutionId`` beside ``Institution`` in the 200 and the 203 of
  Authorize: ``institution_name`` and ``institution_id`` of the session and of the challenge (a live
  login's, and a cached read's asked through ``ChallengeRequired``);
- ``LastFourDigits``, ``AccountType``, ``Balance.Available`` and ``Holder`` null, and a summary with
  or without ``Login`` and account ``Type``: every table keeps its columns and their types
  (``bf.schema``), in ``to_arrow``, ``to_pandas`` and ``bf.combine``.

Each case runs for ``bf.Client`` and ``bf.AsyncClient`` alike (the ``api`` fixture).
"""

from __future__ import annotations

import datetime as dt
import json
import pickle
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("pyarrow")

import pyarrow

import bankfeed as bf
from bfhelpers import Api
from recordedserver import CACHED_PROMPT, CUSTOMER, LIVE_PROMPT, LOGIN_IDS, RecordedServer, Serve, servers

#: The login of every case: the one a live login gives too.
LOGIN = LOGIN_IDS[0]

#: The institution as the recorded answers name it three times: made-up values, the name and the
#: short name told apart so that a test sees which one was read.
INSTITUTION_NAME = "Capital Test Bank"
INSTITUTION_ID = 31
INSTITUTION = "CapitalTestBank"
NAMES = {"InstitutionName": INSTITUTION_NAME, "InstitutionId": INSTITUTION_ID, "Institution": INSTITUTION}

#: ``LastRefresh`` as the service writes it: seven fractional digits (the corpus's Authorize 200),
#: or six, with or without Z; each is this moment, in UTC (seven digits are cut to microseconds).
LAST_REFRESH = dt.datetime(2025, 11, 3, 6, 12, 48, 441963, tzinfo=dt.timezone.utc)
LAST_REFRESHES = (
    "2025-11-03T06:12:48.4419637",
    "2025-11-03T06:12:48.441963",
    "2025-11-03T06:12:48.4419637Z",
    "2025-11-03T06:12:48.441963Z",
)


@pytest.fixture
def serve() -> Iterator[Serve]:
    yield from servers(institution=NAMES)


def client_of(api: Api, stub: RecordedServer) -> Any:  # bf.Client or bf.AsyncClient
    return api.client_at(stub.url, CUSTOMER, max_retries=0)


@pytest.mark.parametrize("last_refresh", LAST_REFRESHES)
def test_last_refresh_of_six_or_seven_digits_with_or_without_z_is_one_utc_moment(
    api: Api, serve: Serve, last_refresh: str
) -> None:
    stub = serve(last_refresh=last_refresh)
    session = api.run(client_of(api, stub).authorize_cached(LOGIN))
    assert session.last_refresh == LAST_REFRESH
    assert session.last_refresh.utcoffset().total_seconds() == 0
    assert session.login["LastRefresh"] == last_refresh


def assert_named(step: Any) -> None:
    """A session or challenge of the recorded answers: the three names of its institution."""
    assert (step.institution_name, step.institution_id, step.institution) == (
        INSTITUTION_NAME,
        str(INSTITUTION_ID),
        INSTITUTION,
    )


def test_a_live_login_s_challenge_and_session_name_their_institution(api: Api, serve: Serve) -> None:
    # The recorded flow: a 203 of one question, then a 200 that carries Login.
    stub = serve()
    step = api.run(client_of(api, stub).authorize("FlinksCapital", "someone", "pw-recorded-1"))
    assert isinstance(step, api.Challenge) and step.prompts == [LIVE_PROMPT]
    assert_named(step)
    session = api.run(step.answer({LIVE_PROMPT: "The Little One"}))
    assert isinstance(session, api.Session) and session.login_id == LOGIN
    assert_named(session)
    assert session.last_refresh == LAST_REFRESH


def test_a_challenged_cached_read_names_its_institution_and_keeps_the_login_id(api: Api, serve: Serve) -> None:
    # The recorded cached read: a 203, then the answer's 200 without Login.
    stub = serve(challenged={LOGIN})
    asked = LOGIN.upper()
    with pytest.raises(bf.ChallengeRequired) as raised:
        api.run(client_of(api, stub).authorize_cached(asked))
    assert raised.value.challenge is not None
    assert_named(raised.value.challenge)
    session = api.run(raised.value.challenge.answer({CACHED_PROMPT: "The Little One"}))
    assert session.login_id == asked and session.login is None and session.last_refresh is None
    assert_named(session)


@pytest.mark.parametrize(
    ("values", "named"),
    [
        # The interface's Authorize 200: Institution a name, no InstitutionName nor InstitutionId.
        ({"authorized": "authorize-200-interface", "institution": {}}, ("FlinksCapital", None)),
        # An investment login's: Institution an object.
        ({"authorized": "authorize-200-interface-investments", "institution": {}}, ("FlinksCapital", "14")),
        ({"institution": {"InstitutionName": "Capital Test Bank", "InstitutionId": "a7"}}, ("Capital Test Bank", "a7")),
        ({"authorized": "authorize-200-interface", "institution": {"Institution": None}}, (None, None)),
    ],
    ids=["name-only", "object", "text-id", "none"],
)
def test_without_the_recorded_fields_the_institution_gives_what_it_has(
    api: Api, serve: Serve, values: dict[str, Any], named: tuple[str | None, str | None]
) -> None:
    stub = serve(**values)
    session = api.run(client_of(api, stub).authorize_cached(LOGIN))
    assert (session.institution_name, session.institution_id) == named


def test_a_pickled_session_keeps_its_institution(serve: Serve) -> None:
    stub = serve()
    session = bf.Client(stub.url, CUSTOMER, max_retries=0).authorize_cached(LOGIN)
    copy = pickle.loads(pickle.dumps(session))
    assert_named(copy)
    assert copy.last_refresh == LAST_REFRESH


#: Data answers of every recorded variant, by the operation and the server's values that give it:
#: the summary without Login and Type, the summary with both (and a Holder of a name only), the
#: account detail with Holder and AccountType null.
VARIANTS = {
    "summary-recorded": ("GetAccountsSummary", {"summary_with_login": False}),
    "summary-with-login-and-type": ("GetAccountsSummary", {"summary_with_login": True}),
    "detail-nulls": ("GetAccountsDetail", {}),
}


def fetched(api: Api, serve: Serve, variant: str) -> Any:
    """The Accounts result of ``variant``, through a session."""
    operation, values = VARIANTS[variant]
    stub = serve(**values)
    session = api.run(client_of(api, stub).authorize_cached(LOGIN))
    call = session.accounts_summary if operation == "GetAccountsSummary" else session.accounts_detail
    return api.run(call())


def without(schema: pyarrow.Schema, *names: str) -> pyarrow.Schema:
    """``schema`` without the fields ``names``."""
    for name in names:
        schema = schema.remove(schema.get_field_index(name))
    return schema


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_recorded_variant_keeps_the_tables_columns_and_types(api: Api, serve: Serve, variant: str) -> None:
    result = fetched(api, serve, variant)
    for table in ("accounts", "transactions"):
        # bf.schema's columns without those an export adds: a result's table has the rest.
        expected = without(bf.schema("accounts", table), "login_id", "request_id", "fetched_at")
        assert getattr(result, table).to_arrow().schema == expected, table
    accounts = result.accounts.to_pandas()
    assert len(accounts) == 2
    # What the recorded answers send null is null, never dropped or read as something else.
    assert accounts["last_four_digits"].isna().all()
    assert accounts["balance_limit"].isna().all()
    if variant == "detail-nulls":
        # tests/corpus/accounts-detail-200.json: AccountType null in both accounts, Holder and
        # Balance.Available in the second one.
        assert accounts["account_type"].isna().all() and list(accounts["holder_name"].isna()) == [False, True]
        assert list(accounts["balance_available"].isna()) == [False, True] and len(result.transactions) == 3
    elif variant == "summary-recorded":
        assert accounts["type"].isna().all() and list(accounts["account_type"]) == ["Personal"] * 2
        assert accounts["balance_available"].isna().all() and list(accounts["holder_city"]) == ["Montréal"] * 2
        assert list(accounts["eft_eligible_ratio"]) == [1.0, 0.0] and len(result.transactions) == 0
    else:
        assert list(accounts["type"]) == ["Chequing", "CreditCard"] and accounts["holder_city"].isna().all()
        assert list(accounts["balance_available"]) == [4790.15, 1187.4]


def test_the_variants_combine_into_tables_of_the_same_columns_and_types(api: Api, serve: Serve) -> None:
    results = [(f"login-{variant}", fetched(api, serve, variant)) for variant in VARIANTS]
    dtypes = {tuple(result.accounts.to_pandas().dtypes.astype(str)) for _, result in results}
    assert len(dtypes) == 1, dtypes
    combined = bf.combine(results)
    for table in ("accounts", "transactions"):
        # bf.combine adds login_id first, as an export does; request_id and fetched_at are the export's.
        expected = without(bf.schema("accounts", table), "request_id", "fetched_at")
        assert combined.tables[table].to_arrow().schema == expected, table
    assert len(combined.tables["accounts"]) == 6


def test_recorded_statements_list_every_account_and_keep_the_table_s_columns(api: Api, serve: Serve) -> None:
    stub = serve()
    session = api.run(client_of(api, stub).authorize_cached(LOGIN))
    result = api.run(session.statements())
    assert len(result.statements) == 0 and result.files == []
    one = {"StatementsByAccount": [{"AccountNumber": "7700000", "Statements": [{"UniqueId": "A1", "FileType": "PDF"}]}]}
    assert result.statements.to_arrow().schema == bf.Statements.from_json(json.dumps(one)).statements.to_arrow().schema
    assert [entry["AccountNumber"] for entry in result.raw["StatementsByAccount"]] == ["2004417", "451201******7731"]
