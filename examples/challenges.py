"""Every kind of security challenge, answered by one handler that looks at each challenge's type.

A real application shows ``challenge.prompt`` and ``challenge.choices`` (or the images) to the end
user; here the sandbox's documented answers stand in for the user. Image challenges are written to
PNG files in a temporary directory, as an application would show them.

Run it with ``python examples/challenges.py``.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import bankfeed as bf

INSTITUTION = "FlinksCapital"
PASSWORD = "Everyday"

#: Free-text answers the end user knows (security questions, codes received by text or token).
TYPED = {
    "What city were you born in?": "Montreal",
    "Enter the 6-digit security code from your SecurID token": "123456",
    "Enter the security code we sent you": "654321",
}
#: Choices the end user would click.
PICKED = {
    "Which of these streets have you lived on?": ["Maple Avenue"],
    "Which of these cards do you hold?": ["Visa Infinite", "Amex Gold"],
    "Which bank branch did you open your first account at?": ["Laval Centre"],
    "What year did you open your first account?": ["2003"],
}
#: The sandbox's right image, as its documentation says.
RIGHT_IMAGE = 7
NEW_ANSWERS = ["Rex", "Civic", "Quebec City"]


class Handler:
    """An ``on_challenge`` handler: it gets a :class:`bankfeed.Challenge`, returns its answers."""

    def __init__(self, image_dir: Path) -> None:
        self.image_dir = image_dir
        self.seen: list[str] = []

    def __call__(self, step: bf.Challenge) -> bf.Answers:
        answers: dict[str, bf.Answer] = {}
        new_questions = 0
        for challenge in step.challenges:
            self.seen.append(challenge.type)
            describe(challenge)
            choices = challenge.choices or []
            if challenge.type == "TextOrCall":
                # Keyed by the phone number chosen, answered with how the code should come.
                answers[choices[0]] = "Text"
            elif challenge.type == "ImageSelection":
                self.show_images(challenge)
                answers[challenge.prompt] = choices[RIGHT_IMAGE]
            elif challenge.type in ("MultipleChoice", "MultipleChoiceMultipleAnswers"):
                answers[challenge.prompt] = PICKED[challenge.prompt]
            elif choices:
                # A new security question: pick one of the offered questions, then answer it.
                answers[challenge.prompt] = [choices[new_questions], NEW_ANSWERS[new_questions]]
                new_questions += 1
            else:
                answers[challenge.prompt] = TYPED[challenge.prompt]
        return answers

    def show_images(self, challenge: bf.SecurityChallenge) -> None:
        images = challenge.images or []
        for index, image in enumerate(images):
            (self.image_dir / f"choice-{index:02}.png").write_bytes(image)
        is_png = all(image.startswith(b"\x89PNG") for image in images)
        print(f"    {len(images)} images written to {self.image_dir} (PNG: {is_png})")


def describe(challenge: bf.SecurityChallenge) -> None:
    """What an application would show the end user."""
    kind = "a security code" if challenge.is_security_code else challenge.type
    print(f"  {kind}: {challenge.prompt}")
    if challenge.choices and challenge.type != "ImageSelection":
        print(f"    choices: {challenge.choices}")
    fields = sorted(challenge.raw)
    print(f"    as sent: {fields}")


def main() -> None:
    with bf.Sandbox() as sb, tempfile.TemporaryDirectory() as tmp:
        client = sb.client(poll_interval=0.01)
        users = [
            "mfa_securid",
            "mfa_image",
            "mfa_multiple_choice",
            "mfa_multiple_answers",
            "mfa_text_or_call",
            "mfa_reset_questions",
        ]
        for username in users:
            print(f"{username}:")
            handler = Handler(Path(tmp))
            session = client.login(INSTITUTION, username, PASSWORD, on_challenge=handler)
            print(f"  -> session {session.request_id} after {', '.join(handler.seen)}")

        # bf.ask_in_terminal asks a person at a terminal (getpass for answers, numbers for choices
        # and images). A bf.TerminalHandler takes other functions to read a line: here a scripted
        # person, who types the city, then the number of the image as the terminal lists them.
        typed = iter(["Montreal", "8"])
        person = bf.TerminalHandler(image_dir=tmp, input=lambda _prompt: next(typed), getpass=lambda _p: next(typed))
        session = client.login(INSTITUTION, "mfa_image", PASSWORD, on_challenge=person)
        print(f"mfa_image at the terminal -> session {session.request_id}")

        # A step can also be inspected and checked before answering it.
        step = client.authorize(INSTITUTION, "mfa_multiple_choice", PASSWORD)
        if isinstance(step, bf.Challenge):
            print(f"pending challenge {step.request_id}: {step.prompts}")
            try:
                step.validate({step.prompts[0]: "Not one of the choices"})
            except bf.InvalidAnswer as exc:
                print(f"refused before sending: {exc.prompt!r} breaks {exc.rule!r}")
        print("challenges: done")


if __name__ == "__main__":
    main()
