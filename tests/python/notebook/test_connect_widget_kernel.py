"""``bf.ConnectWidget`` in a real kernel (docs/connect.md#in-a-notebook): the cell that creates it
returns at once with a widget view; a later cell delivers the front-end's state as a front-end
does (``set_state``, what the comm's update message calls), and ``.result`` and ``on_connect``
see the connection. Its JavaScript is tested in a real browser
(tests/python/browser/test_connect_widget_js.py)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from kernelhelpers import outputs_of, run_cells

# Deselected by scripts/test --quick (CONTRIBUTING.md#the-quick-loop): a real kernel starts.
pytestmark = pytest.mark.notebook

LOGIN_ID = "8b35f6c8-e7b6-41d3-98f8-08d68b7f8d31"

pytest.importorskip("anywidget")


def test_the_widget_returns_at_once_and_a_later_cell_sees_the_connection() -> None:
    notebook = run_cells(
        "import time, bankfeed as bf\nstarted = time.monotonic()\nseen = []",
        "widget = bf.ConnectWidget('http://127.0.0.1:9/v2/', demo=True, on_connect=seen.append)\nwidget",
        "print(round(time.monotonic() - started, 1) < 5, widget.result, len(seen))",
        # What the front-end sends when the widget posts its events.
        "widget.set_state({'events': [{'step': 'APP_MOUNTED'}, {'step': 'REDIRECT', 'loginId': '***'}],\n"
        f"                  'redirect': {{'step': 'REDIRECT', 'loginId': '{LOGIN_ID}',"
        " 'institution': 'FlinksCapital', 'accountId': ['a1']}})",
        "print(repr(widget.result), len(seen), seen[0] is widget.result)\n"
        f"print(widget.result.login_id == '{LOGIN_ID}', widget.result.account_ids,"
        " widget.redirect, len(widget.events))\n"
        "print(repr(widget))",
    )
    views = outputs_of(notebook, 1, "application/vnd.jupyter.widget-view+json")
    assert len(views) == 1, notebook.cells[1].outputs
    assert outputs_of(notebook, 2) == ["True None 0\n"]
    printed = "".join(outputs_of(notebook, 4))
    assert 'Connection(login_id="***", institution="FlinksCapital", account_ids=["a1"]' in printed
    assert " 1 True\nTrue ['a1'] {} 2\n" in printed
    assert "authorizeToken" not in printed and "connected)" in printed
    assert LOGIN_ID not in printed.replace(f"== '{LOGIN_ID}'", "")


def test_a_redirect_event_that_is_not_a_connection_is_kept_as_the_error() -> None:
    notebook = run_cells(
        "import bankfeed as bf\nwidget = bf.ConnectWidget('http://127.0.0.1:9/v2/')",
        "widget.set_state({'redirect': {'step': 'REDIRECT', 'loginId': 'not-a-guid'}})",
        "print(widget.result, type(widget.error).__name__, widget.error.field)",
    )
    assert outputs_of(notebook, 2) == ["None ConfigError loginId\n"]


def test_an_async_client_is_refused_with_the_way_to_do_it() -> None:
    started = time.monotonic()
    notebook = run_cells(
        "import bankfeed as bf\nsb = bf.Sandbox()\nclient = sb.async_client()",
        "try:\n    bf.ConnectWidget(client)\nexcept TypeError as e:\n    print(e)",
        "url = await client.connect_url(demo=True, inner_redirect=True)\n"
        "widget = bf.ConnectWidget(url)\n"
        "print(widget.url == url.reveal(), 'authorizeToken=' in widget.url)\nsb.close()",
    )
    assert "await client.connect_url" in "".join(outputs_of(notebook, 1))
    assert outputs_of(notebook, 2) == ["True True\n"]
    assert time.monotonic() - started < 60


#: Every spelling the kernel reads a LoginId from (Connection.from_event): a key "loginId" in any
#: case, and a loginId query parameter of a "url" key in any case, its name %-escaped or not.
SPELLINGS = [
    {"step": "REDIRECT", "LOGINID": LOGIN_ID},
    {"step": "REDIRECT", "LoginID": LOGIN_ID, "institution": "FlinksCapital"},
    {"step": "REDIRECT", "URL": f"http://localhost/x?institution=FlinksCapital&LoginId={LOGIN_ID}"},
    {"step": "REDIRECT", "Url": f"http://localhost/x?login%49d={LOGIN_ID}&accountId=a1"},
    {"step": "REDIRECT", "url": f"loginid={LOGIN_ID}"},
    {"step": "REDIRECT", "url": f"http://localhost/a=b?loginId={LOGIN_ID}#loginId={LOGIN_ID}"},
    {"step": "REDIRECT", "detail": {"LoginId": LOGIN_ID, "links": [f"?loginid={LOGIN_ID}"]}},
]


def test_the_events_the_kernel_keeps_mask_every_spelling_of_the_login_id() -> None:
    pytest.importorskip("ipywidgets")
    notebook = run_cells(
        "import json, bankfeed as bf\nfrom bankfeed._native import Connection\n"
        "from ipywidgets.embed import embed_data\n"
        f"SPELLINGS = {SPELLINGS!r}\n"
        # What the kernel reads from each: the LoginId, so each must be masked.
        f"print([Connection.from_event(e).login_id == {LOGIN_ID!r} for e in SPELLINGS[:6]])",
        "widget = bf.ConnectWidget('http://127.0.0.1:9/v2/')\n"
        # What a front-end sends when its events are not masked.
        "widget.set_state({'events': SPELLINGS})",
        "state = json.dumps(embed_data(views=[widget])['manager_state'])\n"
        "print(len(widget.events), json.dumps(widget.events).count('***'), 'loginid' in state.lower())\n"
        f"print({LOGIN_ID!r} in json.dumps(widget.events), {LOGIN_ID!r} in state)",
    )
    assert outputs_of(notebook, 0) == ["[True, True, True, True, True, True]\n"]
    assert outputs_of(notebook, 2) == ["7 9 True\nFalse False\n"]


WIDGET = "application/vnd.jupyter.widget-view+json"


def stream_text(notebook: Any, index: int) -> str:
    return "".join(o.get("text", "") for o in notebook.cells[index].outputs if o.get("output_type") == "stream")


def test_on_connect_prints_under_the_widget_in_its_cell() -> None:
    pytest.importorskip("anywidget")
    notebook = run_cells(
        "import bankfeed as bf\n"
        "widget = bf.ConnectWidget('http://127.0.0.1:9/v2/', on_connect=lambda c: print('connected', c.institution))\n"
        "widget",
        # What the front-end sends when the widget posts its REDIRECT event.
        f"widget.set_state({{'redirect': {{'step': 'REDIRECT', 'loginId': '{LOGIN_ID}', "
        "'institution': 'FlinksCapital'}})",
        "print(repr(''.join(o.get('text', '') for o in widget.output.outputs)))",
        "print(widget.output in widget._shown.children)",  # shown with the widget
    )
    assert len(outputs_of(notebook, 0, WIDGET)) == 1
    assert "connected" not in stream_text(notebook, 1)
    assert "".join(outputs_of(notebook, 2)) == "'connected FlinksCapital\\n'\n"
    assert "".join(outputs_of(notebook, 3)) == "True\n"
