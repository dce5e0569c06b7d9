"""The async half of the stub says what the blocking half says.

``AsyncClient``, ``AsyncSession`` and ``AsyncChallenge`` document the same calls as ``Client``,
``Session`` and ``Challenge``, and the stub writes each text twice (the stub is the one place the
binding's docstrings live: docs/architecture.md#one-source-for-the-docstrings). A fix made to one
twin and not the other would leave ``help()`` telling async users something else. So every pair
must read the same once the words that only say "async" are taken out, but for the few whose
behaviour differs, each listed below with the reason.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

STUB = Path(__file__).resolve().parents[3] / "python" / "bankfeed" / "_native.pyi"

TWINS = {"Client": "AsyncClient", "Session": "AsyncSession", "Challenge": "AsyncChallenge"}

#: The twins whose texts differ because the calls behave differently, and why. Only these may
#: differ beyond the async spelling; a name here whose texts became equal fails too, so that the
#: list does not outlive its reasons.
DIFFER_BY_DESIGN = {
    "AsyncClient.login": "an async handler runs as a task of the loop, a plain one on a thread",
    "AsyncClient.investments_many": "cancelling, aclose() and asyncio.timeout stop it, and it "
    "refers to the blocking text for the shared parts rather than repeating them",
    "AsyncClient.connect": "task cancellation stops the wait too",
    "AsyncClient.authorize_cached": "the challenge's answer is awaited",
    "AsyncClient.session": "its example awaits two calls in one expression",
}

#: What only spells the same thing the async way: ``await``, the Async classes, acombine.
ASYNC_SPELLING = [
    (re.compile(r"\bawait "), ""),
    (re.compile(r"\ban (:class:`)Async"), r"a \1"),
    (re.compile(r"(:class:`|:meth:`|bf\.)Async"), r"\1"),
    (re.compile(r"\bacombine\b"), "combine"),
    (re.compile(r"\s+"), " "),
]


def methods(tree: ast.Module, name: str) -> dict[str, str]:
    """The docstring of each method of class ``name`` in the stub."""
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return {
                item.name: doc
                for item in node.body
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                and (doc := ast.get_docstring(item)) is not None
            }
    raise AssertionError(f"the stub has no class {name}")


def blocking_spelling(text: str) -> str:
    for pattern, replacement in ASYNC_SPELLING:
        text = pattern.sub(replacement, text)
    return text.strip()


def twin_pairs() -> list[tuple[str, str, str]]:
    """(async name, blocking text, async text) for every method both twins document."""
    tree = ast.parse(STUB.read_text(encoding="utf-8"))
    pairs = []
    for blocking, asynchronous in TWINS.items():
        left, right = methods(tree, blocking), methods(tree, asynchronous)
        for method in sorted(left.keys() & right.keys()):
            pairs.append((f"{asynchronous}.{method}", left[method], right[method]))
    return pairs


def test_every_twin_is_found() -> None:
    names = {name for name, _, _ in twin_pairs()}
    # The data calls of each half: were the stub's classes renamed, the comparison below would
    # compare nothing and pass.
    assert {"AsyncClient.investments", "AsyncSession.accounts_detail", "AsyncChallenge.answer"} <= names
    assert set(DIFFER_BY_DESIGN) <= names, "a listed twin is no longer in the stub"


@pytest.mark.parametrize(
    ("name", "blocking", "asynchronous"), [pytest.param(*pair, id=pair[0]) for pair in twin_pairs()]
)
def test_the_async_twin_says_what_the_blocking_one_says(name: str, blocking: str, asynchronous: str) -> None:
    same = blocking_spelling(blocking) == blocking_spelling(asynchronous)
    if name in DIFFER_BY_DESIGN:
        assert not same, f"{name} now reads as its blocking twin: take it out of DIFFER_BY_DESIGN"
    else:
        assert same, (
            f"{name}'s docstring says something other than its blocking twin's; change both, or "
            f"list it in DIFFER_BY_DESIGN with the reason:\n{blocking}\n---\n{asynchronous}"
        )
