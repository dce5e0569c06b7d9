"""The Rust core speaks no Python (docs/architecture.md#how-errors-reach-python): the next steps of
its messages that name a Python call or Python syntax are written by the binding
(`src/raise.rs`, `PythonAdvice`), so the core's string literals hold none."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SRC = ROOT / "crates" / "bankfeed" / "src"

#: What only Python's words would contain: a call on a Python object, a keyword argument, a
#: Python constant as a value, a Python block.
PYTHON_WORDS = re.compile(
    r"\bclient\.\w+\(|\bchallenge\.answer\(|\b(?:request_ids?|login_id|on_challenge|proxy)=|=(?:None|True|False)\b"
    r"|\basync with\b|\bwith block\b"
)
#: A Rust string literal, plain or raw.
LITERAL = re.compile(r'r#*"(?:.|\n)*?"#*|"(?:\\.|[^"\\])*"')


def core_literals() -> list[tuple[str, str]]:
    """Every string literal of the core's library code (crates/bankfeed): not the fuzzing entry
    points, nor any module's tests."""
    found = []
    for path in sorted(SRC.rglob("*.rs")):
        relative = path.relative_to(SRC)
        if relative.name == "fuzzing.rs":
            continue
        code = re.split(r"^#\[cfg\(test\)\]\s*\n\s*mod ", path.read_text(encoding="utf-8"), flags=re.M)[0]
        code = "\n".join(line for line in code.splitlines() if not line.lstrip().startswith("//"))
        found += [(str(relative), literal) for literal in LITERAL.findall(code)]
    return found


def test_the_cores_messages_name_no_python_call_or_syntax() -> None:
    literals = core_literals()
    assert len(literals) > 200, "the core's literals are found"
    python = [(path, literal) for path, literal in literals if PYTHON_WORDS.search(literal)]
    assert not python, f"Python words in the core (the binding's PythonAdvice writes them): {python}"


def test_the_check_sees_python_words() -> None:
    # The advice the core wrote before the binding did (issue 18), and what it writes now.
    assert PYTHON_WORDS.search('"as client.investments(login_id, request_id={id:?})"')
    assert PYTHON_WORDS.search('"(proxy=None, or the host in NO_PROXY, connects directly)"')
    assert PYTHON_WORDS.search('"the end of its with or async with block"')
    assert not PYTHON_WORDS.search('"resume polling it with the same call on Target::login(login_id, Some(id))"')
