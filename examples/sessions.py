"""Open sessions every way the service allows, on the embedded sandbox.

- a live login answered step by step (a ``Challenge`` loop),
- the same login in one call, with canned answers (``bf.answers``),
- a cached read of the saved connection (``authorize_cached``),
- a live login by saved connection (``authorize_saved`` and ``login_saved``), where a trusted
  device has to confirm the sign-in,
- the nightly refresh of a saved login: turned on, the security questions that would stop it
  answered in advance, and its status; and the institutions the service supports.

Run it with ``python examples/sessions.py``.
"""

from __future__ import annotations

import bankfeed as bf

INSTITUTION = "FlinksCapital"
PASSWORD = "Everyday"

#: What a user would type at each prompt (the sandbox's Greatday user).
KNOWN_ANSWERS = {
    "What city were you born in?": "Montreal",
    "What is the best country on earth?": "Canada",
    "What shape do people like most?": "Triangle",
}


def saved_login_id(session: bf.Session) -> str:
    """The LoginId of a session. Every login has one, but only a login made with ``save=True`` can be
    opened again by it (``authorize_cached``); an unsaved one is refused there with ``InvalidLogin``."""
    login_id = session.login_id
    if login_id is None:
        raise SystemExit("the service returned no LoginId")
    return login_id


def step_by_step(client: bf.Client) -> bf.Session:
    """A live login, answering each round of challenges as it comes."""
    step: bf.Step = client.authorize(INSTITUTION, "Greatday", PASSWORD, save=True)
    rounds = 0
    while isinstance(step, bf.Challenge):
        rounds += 1
        for challenge in step.challenges:
            print(f"round {rounds}: {challenge.type}: {challenge.prompt}")
        # Checked against the answer rules before anything is sent.
        answers: bf.Answers = {prompt: KNOWN_ANSWERS[prompt] for prompt in step.prompts}
        step.validate(answers)
        step = step.answer(answers)
    print(f"step by step: a session after {rounds} round(s), RequestId {step.request_id}")
    return step


def in_one_call(client: bf.Client) -> bf.Session:
    """The same login, every challenge answered by a handler built from canned answers."""
    handler: bf.ChallengeHandler = bf.answers(KNOWN_ANSWERS)
    print(f"handler: {handler!r}")  # shows the prompts it knows, never the answers
    session = client.login(INSTITUTION, "Greatday", PASSWORD, save=True, on_challenge=handler)
    print(f"in one call: LoginId {saved_login_id(session)}")
    return session


def cached(client: bf.Client, login_id: str) -> None:
    """A new RequestId on already processed data: no challenge, no credentials."""
    session = client.authorize_cached(login_id)
    institution = session.institution
    name = institution.get("Name") if isinstance(institution, dict) else institution
    print(f"cached: RequestId {session.request_id}, institution {name}, last refresh {session.last_refresh}")
    links = session.links or []
    print(f"cached: links {[link.get('rel') for link in links]}")
    login = session.login
    if login is not None:
        print(f"cached: login of {login.get('Username')}")


def trusted_device(client: bf.Client) -> None:
    """A live login by saved connection: the institution asks to confirm on a trusted device."""
    first = client.authorize(INSTITUTION, "mfa_trusted_device", PASSWORD, save=True)
    if not isinstance(first, bf.Session):
        raise SystemExit("mfa_trusted_device logs in without a challenge")
    login_id = saved_login_id(first)

    step: bf.Step = client.authorize_saved(login_id)
    while isinstance(step, bf.Challenge):
        for challenge in step.challenges:
            print(f"saved connection: {challenge.type}: {challenge.prompt}")
        # The user confirms on the device, then the step is answered VERIFIED.
        step = step.answer(dict.fromkeys(step.prompts, "VERIFIED"))
    print(f"authorize_saved: session {step.request_id} for {step.login_id}")

    def confirm(challenge: bf.Challenge) -> bf.Answers:
        return dict.fromkeys(challenge.prompts, "VERIFIED")

    again = client.login_saved(login_id, on_challenge=confirm)
    print(f"login_saved: session {again.request_id}")


def nightly_refresh(client: bf.Client, login_id: str) -> None:
    """Turns the service's nightly refresh of a saved login on, and answers in advance the
    security questions a refresh would stop at (docs/protocol.md#operations-beyond-the-interface)."""
    client.set_scheduled_refresh(login_id, True)
    stuck: list[bf.IneligibleLogin] = client.nightly_refresh_status()
    print(f"nightly refresh: {len(stuck)} login(s) would stop at a question")
    questions = client.mfa_questions(login_id)
    client.answer_mfa_questions(login_id, {question: KNOWN_ANSWERS[question] for question in questions})
    print(f"nightly refresh: answered {len(questions)} question(s); {len(client.nightly_refresh_status())} stop now")
    institutions: list[bf.SupportedInstitution] = client.institutions()
    names: list[bf.InstitutionName] = institutions[0]["Localizations"]
    links: list[bf.InstitutionLink] = names[0]["Urls"]
    print(f"institutions: {[name['Name'] for name in names]}, {len(links)} link(s)")


def main() -> None:
    print(f"bankfeed {bf.__version__}")
    with bf.Sandbox() as sb:
        client = sb.client(poll_interval=0.01)
        print(f"sandbox at {sb.url}, customer {client.customer_id}, {len(sb.users)} users")
        step_by_step(client)
        session = in_one_call(client)
        cached(client, saved_login_id(session))
        nightly_refresh(client, saved_login_id(session))
        trusted_device(client)
        operations = sorted({request["operation"] or request["path"] for request in sb.requests})
        print(f"the sandbox served {sb.request_count} requests: {', '.join(operations)}")
        print("sessions: done")


if __name__ == "__main__":
    main()
