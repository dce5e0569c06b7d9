"""What a person types for each prompt of the sandbox's users (docs/sandbox.md#users), as
bf.typed_answer reads it: numbers for images and choices, "1 Text" for TextOrCall, Enter for the
trusted device. Shared by the README loop, the terminal handler and the notebook form tests."""

from __future__ import annotations

from typing import Any

import bankfeed as bf

INSTITUTION = "FlinksCapital"
PASSWORD = "Everyday"

#: Prompt -> what a person types at input() (one line).
TYPED: dict[str, str] = {
    "What city were you born in?": "Montreal",
    "What is the best country on earth?": "Canada",
    "What shape do people like most?": "Triangle",
    "Enter the 6-digit security code from your SecurID token": "123 456",
    "Select your personal image": "8",
    "Which of these streets have you lived on?": "2",
    "Which of these cards do you hold?": "1, 3",
    "How would you like to receive your security code?": "1 Text",
    "Enter the security code we sent you": "654321",
    "Confirm this sign-in on your trusted device, then continue": "",
    "Which bank branch did you open your first account at?": "laval centre",
    "What year did you open your first account?": "2003",
    "New security question 1": "1 Rex",
    "New security question 2": "What was the make of your first car? Civic",
    "New security question 3": "5: Quebec City",
}

#: The users with challenges, each answered by typing (the trusted device on its saved login).
CHALLENGE_USERS = [
    "Greatday",
    "greatday_three_rounds",
    "mfa_three_questions",
    "mfa_image",
    "mfa_securid",
    "mfa_multiple_choice",
    "mfa_multiple_answers",
    "mfa_text_or_call",
    "mfa_trusted_device",
    "mfa_reset_questions",
]


def first_step(client: bf.Client, username: str) -> Any:
    """The first step a person answers for ``username``: its live login's, or for the trusted
    device the login by its saved connection (the challenge comes there)."""
    step = client.authorize(INSTITUTION, username, PASSWORD, save=True)
    if username == "mfa_trusted_device":
        assert isinstance(step, bf.Session) and step.login_id is not None
        step = client.authorize_saved(step.login_id)
    return step


def typed_for(prompt: str) -> str:
    """What a person types for ``prompt`` (the README's input() gets ``prompt + " "``)."""
    return TYPED[prompt.strip()]


def every_step(sandbox: bf.Sandbox, username: str) -> list[bf.Challenge]:
    """Every step ``username`` asks, each answered with what a person types for it."""
    step = first_step(sandbox.client(poll_interval=0.01), username)
    steps = []
    while isinstance(step, bf.Challenge):
        steps.append(step)
        answers: dict[str, list[str]] = {}
        for item in step.challenges:
            answers.update(bf.typed_answer(item, typed_for(item.prompt)))
        step = step.answer(answers)
    return steps
