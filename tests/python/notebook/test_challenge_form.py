"""bf.ChallengeForm in a real kernel, as a notebook user clicks it: cell 1 starts a login and shows
the form; later cells set the widgets as a person would, click Answer and poll form.session,
round after round, for every challenge type; a wrong answer is shown in the form and asked again
(docs/answering.md#in-a-notebook)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kernelhelpers import outputs_of, run_cells
from typedhelpers import CHALLENGE_USERS

pytest.importorskip("ipywidgets")

# Deselected by scripts/test --quick (CONTRIBUTING.md#the-quick-loop): a real kernel starts.
pytestmark = pytest.mark.notebook

TESTS = Path(__file__).resolve().parents[1]
WIDGET = "application/vnd.jupyter.widget-view+json"

SETUP = f"""
import asyncio, sys, time
import bankfeed as bf
sys.path.insert(0, {str(TESTS)!r})
from typedhelpers import first_step, INSTITUTION, PASSWORD
sb = bf.Sandbox()
client = sb.client(poll_interval=0.01)
"""

# What a person sets in the form, by prompt: a free text, an image's or a choice's number, the
# boxes to tick, (phone number, Text or Call), (question, answer).
PERSON = """
SET = {
    "What city were you born in?": "Montreal",
    "What is the best country on earth?": "Canada",
    "What shape do people like most?": "Triangle",
    "Enter the 6-digit security code from your SecurID token": "123456",
    "Enter the security code we sent you": "654321",
    "Select your personal image": 8,
    "Which of these streets have you lived on?": "2",
    "Which bank branch did you open your first account at?": "2",
    "What year did you open your first account?": "2",
    "Which of these cards do you hold?": [1, 3],
    "How would you like to receive your security code?": ("1", "Text"),
    "New security question 1": ("1", "Rex"),
    "New security question 2": ("2", "Civic"),
    "New security question 3": ("5", "Quebec City"),
    "Confirm this sign-in on your trusted device, then continue": None,
}

def fill(form, wrong=False):
    for field in form.fields:
        value, parts = SET[field.challenge.prompt], field.parts
        if "images" in parts:
            parts["images"][value - 1].value = True
        elif "choice" in parts:
            parts["choice"].value = value
        elif "checks" in parts:
            for number in value:
                parts["checks"][number - 1].value = True
        elif "phone" in parts:
            parts["phone"].value, parts["method"].value = value
        elif "question" in parts:
            parts["question"].value, parts["answer"].value = value
        elif "text" in parts:
            parts["text"].value = "Paris" if wrong else value

def settle(form, before):
    for _ in range(400):
        if form.session is not None or form.step is not before or form.error is not None:
            return
        time.sleep(0.05)
    raise TimeoutError("the form did not move on")
"""

ROUND = """
before = form.step
fill(form)
form.submit.click()
settle(form, before)
(type(form.session).__name__, form.error, [c.type for c in form.step.challenges] if form.step else None)
"""


def result_of(notebook: object, index: int) -> str:
    return "".join(outputs_of(notebook, index))


@pytest.mark.parametrize("username", CHALLENGE_USERS)
def test_the_form_walks_every_round_of_a_live_login(username: str) -> None:
    start = f"""
got = []
step = first_step(client, {username!r})
form = bf.ChallengeForm(step, on_session=got.append)
form
"""
    rounds = {"mfa_reset_questions": 2, "mfa_image": 2, "mfa_securid": 2, "mfa_text_or_call": 2}.get(username, 1)
    if username == "greatday_three_rounds":
        rounds = 3
    cells = [SETUP, PERSON, start, *[ROUND] * rounds, "(type(form.session).__name__, got == [form.session], form)"]
    notebook = run_cells(*cells, timeout=120)
    # The form is shown as a widget by the cell that made it, which returned at once.
    shown: list[object] = list(outputs_of(notebook, 2, WIDGET))
    assert shown and "model_id" in (shown[0] if isinstance(shown[0], dict) else json.loads(str(shown[0])))
    last = result_of(notebook, len(cells) - 1)
    assert last == "('Session', True, bankfeed.ChallengeForm(open))", last


def test_a_wrong_answer_is_shown_in_the_form_and_asked_again() -> None:
    start = """
step = client.authorize(INSTITUTION, "greatday_three_rounds", PASSWORD)
form = bf.ChallengeForm(step)
form
"""
    wrong = """
before = form.step
fill(form, wrong=True)
form.submit.click()
settle(form, before)
print(repr((type(form.error).__name__, form.session, form.step is not None, form.status.value)))
"""
    refused = """
form.fields[0].parts["text"].value = " "
form.submit.click()
(type(form.error).__name__, form.error.prompt, form.submit.disabled, type(form.fields[0].parts["text"]).__name__)
"""
    notebook = run_cells(SETUP, PERSON, start, wrong, refused, ROUND, ROUND, ROUND, timeout=120)
    after_wrong = result_of(notebook, 3)
    assert after_wrong.startswith("('InvalidSecurityResponse', None, True,"), after_wrong
    assert "the challenge stays open: answer it again" in after_wrong and "Paris" not in after_wrong
    # A blank answer is refused in the form before anything is sent.
    assert result_of(notebook, 4) == "('InvalidAnswer', 'What city were you born in?', False, 'Password')"
    assert result_of(notebook, 7).startswith("('Session', None, None)")


def test_an_async_challenge_is_answered_by_a_task_of_the_kernels_loop() -> None:
    start = """
aclient = sb.async_client(poll_interval=0.01)
step = await aclient.authorize(INSTITUTION, "mfa_image", PASSWORD)
form = bf.ChallengeForm(step)
form
"""
    round_ = """
before = form.step
fill(form)
form.submit.click()
for _ in range(400):
    if form.session is not None or form.step is not before or form.error is not None:
        break
    await asyncio.sleep(0.05)   # the answer runs on this loop: wait without blocking it
(type(form.session).__name__, form.error)
"""
    notebook = run_cells(SETUP, PERSON, start, round_, round_, timeout=120)
    assert result_of(notebook, 3) == "('NoneType', None)"
    assert result_of(notebook, 4) == "('AsyncSession', None)"


# The widget state a saved notebook keeps ("save widget state", an HTML export): every widget the
# kernel knows, as ipywidgets' own embed_data writes it.
SAVED = """
import json
from ipywidgets.embed import embed_data

TEXTS = ["Montreal", "Canada", "Triangle", "123456", "12345", "654321", "Rex", "Civic", "Quebec City", "Paris"]

def saved():
    while True:
        try:
            return embed_data(views=None)["manager_state"]["state"]
        # The form's thread drew a widget while it was read (RuntimeError: the dict changed
        # size), or closed one (AttributeError: its comm is gone).
        except (RuntimeError, AttributeError):
            continue

def answer_widgets(form):
    found = []
    for field in form.fields:
        for part in field.parts.values():
            found.extend(part if isinstance(part, list) else [part])
    return found

def answered_round(fill_in):
    '''Fills the form, clicks Answer and waits for the next step: says whether the widgets the
    person set held an answer in the saved state, then whether any still held one right after the
    click, whether any was left once the next round was drawn, and the texts typed found anywhere.'''
    before = form.step
    drawn = {w.model_id: saved()[w.model_id]["state"] for w in answer_widgets(form)}
    fill_in(form)
    state = saved()
    typed_in = [i for i in drawn if state[i]["state"] != drawn[i]]
    form.submit.click()
    state = saved()
    at_click = [i for i in drawn if i in state and state[i]["state"] != drawn[i]]
    settle(form, before)
    state = saved()
    left = [i for i in drawn if i in state]
    return bool(typed_in) or not drawn, at_click, left, [t for t in TEXTS if t in json.dumps(state)]
"""

ANSWERED = "answered_round(fill)"


@pytest.mark.parametrize(
    "username",
    ["mfa_reset_questions", "mfa_image", "mfa_multiple_answers", "mfa_text_or_call", "greatday_three_rounds"],
)
def test_no_answer_survives_in_the_saved_widget_state(username: str) -> None:
    start = f"""
step = first_step(client, {username!r})
form = bf.ChallengeForm(step)
form
"""
    rounds = {"mfa_reset_questions": 2, "mfa_image": 2, "mfa_text_or_call": 2, "greatday_three_rounds": 3}.get(
        username, 1
    )
    last = "(type(form.session).__name__, [t for t in TEXTS if t in json.dumps(saved())])"
    notebook = run_cells(SETUP, PERSON, SAVED, start, *[ANSWERED] * rounds, last, timeout=120)
    for index in range(4, 4 + rounds):
        assert result_of(notebook, index) == "(True, [], [], [])", (index, result_of(notebook, index))
    assert result_of(notebook, 4 + rounds) == "('Session', [])"


def test_a_refused_or_wrong_answer_leaves_nothing_in_the_saved_widget_state() -> None:
    start = """
form = bf.ChallengeForm(client.authorize(INSTITUTION, "mfa_securid", PASSWORD))
form
"""
    # Refused before anything is sent (five digits): the field is cleared all the same.
    refused = """
form.fields[0].parts["text"].value = "12345"
form.submit.click()
(type(form.error).__name__, form.fields[0].parts["text"].value, "12345" in json.dumps(saved()))
"""
    wrong = """
step = client.authorize(INSTITUTION, "greatday_three_rounds", PASSWORD)
form = bf.ChallengeForm(step)
answered_round(lambda form: fill(form, wrong=True)) + (type(form.error).__name__,)
"""
    notebook = run_cells(SETUP, PERSON, SAVED, start, refused, wrong, timeout=120)
    assert result_of(notebook, 4) == "('InvalidAnswer', '', False)"
    assert result_of(notebook, 5) == "(True, [], [], [], 'InvalidSecurityResponse')"


# What the person reads, and where the callback prints (docs/answering.md#in-a-notebook): the form
# speaks plainly, and its output, shown with it, catches what on_session prints.
#: The texts of every HTML widget of a form, as the person reads them.
FORM_TEXT = """
def texts(widget):
    found, boxes = [], [widget]
    while boxes:
        box = boxes.pop()
        boxes.extend(getattr(box, "children", ()))
        if type(box).__name__ == "HTML":
            found.append(box.value)
    return found
"""

#: What shows in the cell: the widget's own output's text, from the kernel's copy of its state.
OUTPUT_TEXT = "print(repr(''.join(o.get('text', '') for o in {owner}.output.outputs)))"


def stream_text(notebook: Any, index: int) -> str:
    return "".join(o.get("text", "") for o in notebook.cells[index].outputs if o.get("output_type") == "stream")


def test_the_form_shows_plain_words_and_prints_on_session_in_its_cell() -> None:
    start = """
step = first_step(client, "mfa_image")
form = bf.ChallengeForm(step, on_session=lambda s: print("connected:", type(s).__name__))
form
"""
    shown = "print(json.dumps(texts(form.widget)))"
    notebook = run_cells(
        SETUP + "import json", PERSON, FORM_TEXT, start, shown, ROUND, shown, ROUND, OUTPUT_TEXT.format(owner="form")
    )
    views = outputs_of(notebook, 3, WIDGET)
    assert len(views) == 1
    for index in (4, 6):
        words = " ".join(json.loads("".join(outputs_of(notebook, index))))
        for code in ("typed_answer", "c.prompt", "c.choices", "{", "bf."):
            assert code not in words, words
    image_page = " ".join(json.loads("".join(outputs_of(notebook, 6))))
    assert "Select your personal image" in image_page and "Click your image (numbered 1 to 16)" in image_page
    # The callback ran in the round that opened the session: its print is in the form's output.
    assert "connected:" not in stream_text(notebook, 7)
    assert "".join(outputs_of(notebook, 8)) == "'connected: Session\\n'\n"
