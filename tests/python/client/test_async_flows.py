"""Every flow of the sync suite, run once for bf.Client and once for bf.AsyncClient (the ``api``
fixture): logins of every user, handlers, ChallengeRequired, cached sessions and every data call,
delete_login, the errors, resuming after PendingTimeout, pickling."""

from __future__ import annotations

import pickle
import uuid
from collections.abc import Iterator
from typing import Any, NoReturn

import pytest

import bankfeed as bf
from bfhelpers import (
    API_KEY,
    GREATDAY,
    INSTITUTION,
    PASSWORD,
    REFUSED,
    SECRET_KEY,
    WRONG_TEXT,
    Api,
    SandboxUser,
    answer_map,
    answers_for,
    assert_investments,
    assert_secret_free,
    choices_of,
    investment_posts,
    is_guid,
    login_id_of,
    raises,
    usernames,
)

USERS = usernames()

#: (user, challenge type answered wrongly), as in test_wrong_answers.py.
WRONG_CASES = [
    ("Greatday", "QuestionAndAnswer"),
    ("mfa_securid", "QuestionAndAnswer"),
    ("mfa_multiple_choice", "MultipleChoice"),
    ("mfa_multiple_answers", "MultipleChoiceMultipleAnswers"),
    ("mfa_image", "ImageSelection"),
]


class HandlerFailed(Exception):
    pass


@pytest.fixture
def client(api: Api, sandbox: bf.Sandbox) -> Any:
    """A client of the shared sandbox, of the kind the case runs against."""
    return api.client(sandbox)


@pytest.fixture(scope="module")
def saved_login_id(sandbox: bf.Sandbox) -> str:
    """The LoginId of greatday_nomfa, saved on the shared sandbox."""
    session = sandbox.client(poll_interval=0.01).authorize(INSTITUTION, "greatday_nomfa", PASSWORD, save=True)
    assert isinstance(session, bf.Session)
    return login_id_of(session)


@pytest.fixture(scope="module")
def reference(sandbox: bf.Sandbox, saved_login_id: str) -> bf.Session:
    """A cached session of the saved login read by the sync client: what both clients must give."""
    return sandbox.client(poll_interval=0.01).authorize_cached(saved_login_id)


# --- Logins ---------------------------------------------------------------------------------


@pytest.mark.parametrize("username", USERS)
def test_step_by_step(api: Api, client: Any, users: dict[str, SandboxUser], username: str) -> None:
    user = users[username]
    if username in REFUSED:
        exc_type, code = REFUSED[username]
        with raises(exc_type, code=code):
            api.run(client.authorize(INSTITUTION, username, PASSWORD, save=True))
        return
    seen: list[str] = []
    session = api.login_step_by_step(client, user, seen=seen)
    assert seen == list(user["challenge_types"])
    assert isinstance(session, api.Session)
    assert is_guid(session.request_id) and is_guid(session.login_id)


@pytest.mark.parametrize("username", USERS)
def test_login_with_a_handler(api: Api, client: Any, users: dict[str, SandboxUser], username: str) -> None:
    user = users[username]
    seen: list[str] = []
    canned = bf.answers(user["answers"])

    def answer(challenge: Any) -> dict[str, list[str]]:
        assert isinstance(challenge, api.Challenge)
        seen.extend(item.type for item in challenge.challenges)
        return canned(challenge)

    on_challenge = api.handler(answer)
    if username in REFUSED:
        exc_type, code = REFUSED[username]
        with raises(exc_type, code=code):
            api.run(client.login(INSTITUTION, username, PASSWORD, on_challenge=on_challenge))
        assert seen == []
        return
    session = api.run(client.login(INSTITUTION, username, PASSWORD, on_challenge=on_challenge, save=True))
    if not seen and user["challenge_types"]:
        # The trusted-device flow: the challenge comes on a live login by saved connection.
        login_id = login_id_of(session)
        session = api.run(client.login_saved(login_id, on_challenge=on_challenge))
        assert session.login_id == login_id
    assert isinstance(session, api.Session)
    assert seen == list(user["challenge_types"])
    assert is_guid(session.request_id) and is_guid(session.login_id)


def test_login_without_a_handler_raises_an_answerable_challenge_required(api: Api, client: Any) -> None:
    with raises(bf.ChallengeRequired) as info:
        api.run(client.login(INSTITUTION, "Greatday", PASSWORD))
    challenge = info.value.challenge
    assert isinstance(challenge, api.Challenge)
    assert challenge.prompts == ["What city were you born in?"]
    assert info.value.request_id == challenge.request_id
    session = api.complete(challenge, GREATDAY)
    assert isinstance(session, api.Session)


def test_login_without_a_handler_works_when_nothing_is_asked(api: Api, client: Any) -> None:
    assert isinstance(api.run(client.login(INSTITUTION, "greatday_nomfa", PASSWORD)), api.Session)


def test_the_trusted_device_challenge_comes_on_authorize_saved(
    api: Api, client: Any, users: dict[str, SandboxUser]
) -> None:
    session = api.run(client.authorize(INSTITUTION, "mfa_trusted_device", PASSWORD, save=True))
    assert isinstance(session, api.Session)
    step = api.run(client.authorize_saved(login_id_of(session)))
    assert isinstance(step, api.Challenge)
    assert [c.type for c in step.challenges] == ["WaitUntilEUAccept"]
    final = api.run(step.answer(answers_for(step, answer_map(users["mfa_trusted_device"]))))
    assert isinstance(final, api.Session)
    assert final.login_id == session.login_id and final.request_id != session.request_id


def test_three_questions_are_answered_in_one_request(
    api: Api, client: Any, users: dict[str, SandboxUser], sandbox: bf.Sandbox
) -> None:
    step = api.run(client.authorize(INSTITUTION, "mfa_three_questions", PASSWORD))
    assert isinstance(step, api.Challenge) and len(step.challenges) == 3
    before = sandbox.request_count
    assert isinstance(api.run(step.answer(answers_for(step, answer_map(users["mfa_three_questions"])))), api.Session)
    assert sandbox.request_count - before == 1


def test_image_selection_gives_16_png_images(api: Api, client: Any, users: dict[str, SandboxUser]) -> None:
    step = api.step_with(client, users["mfa_image"], "ImageSelection")
    item = next(c for c in step.challenges if c.type == "ImageSelection")
    assert item.images is not None and len(item.images) == 16 == len(choices_of(item))
    assert all(image.startswith(b"\x89PNG\r\n\x1a\n") for image in item.images)
    assert isinstance(api.complete(step, answer_map(users["mfa_image"])), api.Session)


@pytest.mark.parametrize("exc", [HandlerFailed("the user gave up"), KeyError("missing")], ids=["custom", "keyerror"])
def test_the_handlers_own_exception_propagates_as_it_was(api: Api, client: Any, exc: Exception) -> None:
    def fail(challenge: Any) -> NoReturn:
        raise exc

    with pytest.raises(type(exc)) as info:
        api.run(client.login(INSTITUTION, "Greatday", PASSWORD, on_challenge=api.handler(fail)))
    assert info.value is exc


def test_a_handler_failing_in_a_later_round_propagates_too(api: Api, client: Any) -> None:
    rounds: list[list[str]] = []

    def answer(challenge: Any) -> dict[str, str]:
        rounds.append(challenge.prompts)
        if len(rounds) == 2:
            raise HandlerFailed("round two")
        return {p: GREATDAY[p] for p in challenge.prompts}

    with pytest.raises(HandlerFailed, match="round two"):
        api.run(client.login(INSTITUTION, "Greatday", PASSWORD, on_challenge=api.handler(answer)))
    assert rounds == [["What city were you born in?"], ["What is the best country on earth?"]]


def test_a_missing_answer_fails_before_sending_and_names_the_prompt(api: Api, client: Any, sandbox: bf.Sandbox) -> None:
    handler = api.handler(bf.answers({"What city were you born in?": "Montreal"}))
    before = sandbox.request_count
    with raises(bf.InvalidAnswer, prompt="What is the best country on earth?"):
        api.run(client.login(INSTITUTION, "Greatday", PASSWORD, on_challenge=handler))
    # The credentials call and the first answer were sent; the second round was not.
    assert sandbox.request_count - before == 2


def test_the_bound_of_challenge_rounds_raises_too_many_challenges(api: Api, sandbox: bf.Sandbox) -> None:
    tight = api.client(sandbox, max_challenge_rounds=1)
    with raises(bf.TooManyChallenges):
        api.run(tight.login(INSTITUTION, "Greatday", PASSWORD, on_challenge=api.handler(bf.answers(GREATDAY))))
    roomy = api.client(sandbox, max_challenge_rounds=3)
    session = api.run(roomy.login(INSTITUTION, "Greatday", PASSWORD, on_challenge=api.handler(bf.answers(GREATDAY))))
    assert isinstance(session, api.Session)


# --- Wrong answers --------------------------------------------------------------------------


@pytest.mark.parametrize(("username", "kind"), WRONG_CASES, ids=[f"{u}-{k}" for u, k in WRONG_CASES])
def test_a_wrong_answer_is_refused_and_the_challenge_can_be_answered_again(
    api: Api, client: Any, users: dict[str, SandboxUser], username: str, kind: str
) -> None:
    user = users[username]
    step = api.step_with(client, user, kind)
    correct = answers_for(step, answer_map(user))
    wrong = dict(correct)
    for item in step.challenges:
        if item.type == kind:
            right = correct[item.prompt]
            if kind == "QuestionAndAnswer":
                wrong[item.prompt] = ["000000" if right[0].isdigit() else WRONG_TEXT]
            else:
                wrong[item.prompt] = [next(c for c in choices_of(item) if c not in right)]
    assert wrong != correct
    with raises(bf.InvalidSecurityResponse, code="INVALID_SECURITY_RESPONSE", request_id=step.request_id):
        api.run(step.answer(wrong))
    assert isinstance(api.complete(api.run(step.answer(correct)), answer_map(user)), api.Session)


def test_a_handler_that_always_answers_wrongly_ends_in_invalid_security_response(api: Api, client: Any) -> None:
    def wrongly(challenge: Any) -> dict[str, str]:
        return dict.fromkeys(challenge.prompts, WRONG_TEXT)

    with raises(bf.InvalidSecurityResponse, code="INVALID_SECURITY_RESPONSE"):
        api.run(client.login(INSTITUTION, "Greatday", PASSWORD, on_challenge=api.handler(wrongly)))


# --- Cached sessions and data ---------------------------------------------------------------


def test_a_cached_session_serves_every_data_call(
    api: Api, client: Any, saved_login_id: str, reference: bf.Session
) -> None:
    session = api.run(client.authorize_cached(saved_login_id))
    assert isinstance(session, api.Session)
    assert is_guid(session.request_id) and session.request_id != reference.request_id
    assert session.login_id == saved_login_id

    investments = api.run(session.investments())
    assert_investments(investments)
    assert investments.request_id is not None and investments.request_id.lower() == session.request_id.lower()
    assert investments.positions.to_records() == reference.investments().positions.to_records()

    detail = api.run(session.accounts_detail(with_transactions=True, days="Days365"))
    assert isinstance(detail, bf.Accounts) and len(detail.transactions) > 0
    expected = reference.accounts_detail(with_transactions=True, days="Days365")
    assert detail.transactions.to_records() == expected.transactions.to_records()

    summary = api.run(session.accounts_summary(with_balance=True))
    assert isinstance(summary, bf.Accounts) and len(summary.accounts) == len(detail.accounts)

    statements = api.run(session.statements(number_of_statements="MostRecent"))
    assert isinstance(statements, bf.Statements) and statements.files
    assert all(isinstance(file["content"], bytes) and file["content"] for file in statements.files)

    income = api.run(session.attributes(package="income"))
    assert isinstance(income, bf.Attributes) and len(income.values) > 0
    assert income.to_dict() == reference.attributes(package="income").to_dict()

    custom = api.run(session.attributes({"Card": ["balance_min", "count_nsf"]}, detail=["count_nsf"]))
    assert isinstance(custom, bf.Attributes)
    assert set(custom.values.column("attribute")) == {"balance_min", "count_nsf"}


def test_client_investments_and_attributes_open_a_cached_session_themselves(
    api: Api, client: Any, saved_login_id: str, reference: bf.Session
) -> None:
    investments = api.run(client.investments(saved_login_id))
    assert_investments(investments)
    assert investments.accounts.to_records() == reference.investments().accounts.to_records()
    by_package = api.run(client.attributes(saved_login_id, package="income"))
    assert isinstance(by_package, bf.Attributes)
    assert by_package.to_dict() == reference.attributes(package="income").to_dict()
    custom = api.run(client.attributes(saved_login_id, {"Card": ["balance_min"]}))
    assert isinstance(custom, bf.Attributes) and custom.values.column("attribute") == ["balance_min"]


def test_the_session_of_a_known_request_id_sends_nothing_until_its_data_call(
    api: Api, client: Any, sandbox: bf.Sandbox, saved_login_id: str
) -> None:
    opened = api.run(client.authorize_cached(saved_login_id))
    before = sandbox.request_count
    session = client.session(opened.request_id, login_id=saved_login_id)
    assert isinstance(session, api.Session)
    assert session.request_id == opened.request_id and session.login_id == saved_login_id
    assert sandbox.request_count == before
    assert_investments(api.run(session.investments()))


@pytest.mark.parametrize("call", ["authorize_cached", "investments", "attributes"])
def test_an_unknown_login_id_is_refused(api: Api, client: Any, call: str) -> None:
    unknown = str(uuid.uuid4())
    with raises(bf.InvalidLogin, code="INVALID_LOGIN"):
        if call == "attributes":
            api.run(client.attributes(unknown, package="income"))
        else:
            api.run(getattr(client, call)(unknown))


def test_delete_login_forgets_the_saved_connection(api: Api, fresh_sandbox: bf.Sandbox) -> None:
    client = api.client(fresh_sandbox)
    session = api.run(client.authorize(INSTITUTION, "greatday_nomfa", PASSWORD, save=True))
    login_id = login_id_of(session)
    assert isinstance(api.run(client.authorize_cached(login_id)), api.Session)
    answer = api.run(client.delete_login(login_id))
    assert isinstance(answer, dict) and answer
    with raises(bf.InvalidLogin):
        api.run(client.authorize_cached(login_id))


# --- Pending timeout and resuming -----------------------------------------------------------

#: Polls a data call answers 202 in the resuming tests: at 0.01 s a poll, longer than IMPATIENT.
SLOW_POLLS = 25
IMPATIENT = 0.05


@pytest.fixture
def slow_sandbox() -> Iterator[bf.Sandbox]:
    with bf.Sandbox(pending_polls=SLOW_POLLS) as sb:
        yield sb


def authorizes(sb: bf.Sandbox) -> int:
    return sum(1 for r in sb.requests if r["path"].rstrip("/").endswith("/Authorize"))


def test_investments_resume_with_the_request_id_a_pending_timeout_names(api: Api, slow_sandbox: bf.Sandbox) -> None:
    impatient = api.client(slow_sandbox, poll_timeout=IMPATIENT)
    login_id = login_id_of(api.run(impatient.authorize(INSTITUTION, "greatday_nomfa", PASSWORD, save=True)))
    with raises(bf.PendingTimeout, operation="Investments") as info:
        api.run(impatient.investments(login_id))
    request_id = info.value.request_id
    assert request_id is not None and f'request_id="{request_id}"' in str(info.value)
    posted, logins = investment_posts(slow_sandbox), authorizes(slow_sandbox)
    assert 1 <= posted < SLOW_POLLS

    patient = api.client(slow_sandbox)
    investments = api.run(patient.investments(login_id, request_id=request_id))
    assert_investments(investments)
    assert investments.request_id is not None and investments.request_id.lower() == request_id.lower()
    # No new session: polling went on where it stood, to the 202s left and the 200.
    assert authorizes(slow_sandbox) == logins
    assert investment_posts(slow_sandbox) == SLOW_POLLS + 1


def test_attributes_resume_with_request_id(api: Api, slow_sandbox: bf.Sandbox) -> None:
    impatient = api.client(slow_sandbox, poll_timeout=IMPATIENT)
    login_id = login_id_of(api.run(impatient.authorize(INSTITUTION, "greatday_nomfa", PASSWORD, save=True)))
    with raises(bf.PendingTimeout) as info:
        api.run(impatient.attributes(login_id, package="income"))
    request_id = info.value.request_id
    assert request_id is not None and request_id in str(info.value)
    # Pending on the account detail it waits for first, the message still names the attributes call.
    assert info.value.operation == "GetAccountsDetail"
    assert f'client.attributes(login_id, ..., request_id="{request_id}")' in str(info.value)
    logins = authorizes(slow_sandbox)
    attributes = api.run(api.client(slow_sandbox).attributes(login_id, package="income", request_id=request_id))
    assert isinstance(attributes, bf.Attributes) and len(attributes.values) > 0
    assert authorizes(slow_sandbox) == logins


def test_a_session_data_call_resumes_through_client_session(api: Api, slow_sandbox: bf.Sandbox) -> None:
    impatient = api.client(slow_sandbox, poll_timeout=IMPATIENT)
    login_id = login_id_of(api.run(impatient.authorize(INSTITUTION, "greatday_nomfa", PASSWORD, save=True)))
    session = api.run(impatient.authorize_cached(login_id))
    with raises(bf.PendingTimeout, operation="GetAccountsDetail", request_id=session.request_id) as info:
        api.run(session.accounts_detail())
    assert f'client.session("{session.request_id}", login_id=login_id)' in str(info.value)
    logins = authorizes(slow_sandbox)
    detail = api.run(api.client(slow_sandbox).session(session.request_id, login_id=login_id).accounts_detail())
    assert isinstance(detail, bf.Accounts) and len(detail.accounts) > 0
    assert authorizes(slow_sandbox) == logins


def test_a_session_resumed_with_the_login_id_of_another_login_refuses_its_data(api: Api) -> None:
    with bf.Sandbox(logins=2) as sb:
        client = api.client(sb)
        mine, theirs = sb.login_ids
        opened = api.run(client.authorize_cached(theirs))
        session = client.session(opened.request_id, login_id=mine)
        calls = {"accounts_detail": "GetAccountsDetail", "accounts_summary": "GetAccountsSummary",
                 "statements": "GetStatements"}
        for call, operation in calls.items():
            with raises(bf.ProtocolError, operation=operation, status=200, request_id=opened.request_id) as info:
                api.run(getattr(session, call)())
            assert mine in str(info.value) and theirs in str(info.value), str(info.value)
            assert "resume each login with its own RequestId" in str(info.value)
        # Investments and attributes name the LoginId in their request: refused either way.
        with raises(bf.InvalidRequest):
            api.run(session.investments())
        with raises(bf.ProtocolError, operation="GetAccountsDetail"):
            api.run(session.attributes(package="income"))
        detail = api.run(client.session(opened.request_id, login_id=theirs).accounts_detail())
        assert isinstance(detail, bf.Accounts) and len(detail.accounts) > 0


def test_the_repr_of_a_client_and_its_session_hides_the_keys(api: Api) -> None:
    with bf.Sandbox(api_key=API_KEY, secret_key=SECRET_KEY) as sb:
        client = api.client(sb, api_key=API_KEY, secret_key=SECRET_KEY)
        session = api.run(client.login(INSTITUTION, "greatday_nomfa", PASSWORD, save=True))
        assert isinstance(session, api.Session)
        assert_investments(api.run(session.investments()))
        assert_secret_free(repr(client), str(client), repr(session))
        assert API_KEY not in repr(client) and SECRET_KEY not in repr(client)


# --- Pickling -------------------------------------------------------------------------------


def test_a_client_pickles_as_its_own_class_and_calls_the_service(api: Api, client: Any, saved_login_id: str) -> None:
    copy = pickle.loads(pickle.dumps(client))
    assert type(copy) is type(client)
    assert copy.base_url == client.base_url and copy.poll_interval == client.poll_interval
    assert_investments(api.run(copy.investments(saved_login_id)))


def test_a_session_pickles_as_its_own_class_and_serves_data(api: Api, client: Any, saved_login_id: str) -> None:
    session = api.run(client.authorize_cached(saved_login_id))
    copy = pickle.loads(pickle.dumps(session))
    assert type(copy) is type(session)
    assert copy.request_id == session.request_id and copy.raw == session.raw
    assert_investments(api.run(copy.investments()))
