"""The scripts of ``examples/`` run against the sandbox and finish, so that they never rot.

Each runs as a user would run it (a fresh interpreter, the installed package), must exit 0 and print
its last line. Together they use every public name of ``bankfeed``, and no private one.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import bankfeed as bf

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
SCRIPTS = sorted(EXAMPLES.glob("*.py"))
#: The line each script prints when it has done everything it shows.
LAST_LINE = {
    "async_and_bulk.py": "async and bulk: done",
    "async_quickstart.py": "0 of 100 logins failed",
    "challenges.py": "challenges: done",
    "connect.py": "connect: done",
    "connect_quickstart.py": "FlinksCapital True",
    "data.py": "data: done",
    "handling_errors.py": "errors: done",
    "nightly_export.py": "nightly export: done",
    "quickstart.py": "INVALID_LOGIN 401 None",
    "sessions.py": "sessions: done",
    "testing.py": "testing: done",
}
TIMEOUT = 120
#: What a person types at the scripts' input() prompts: the answer to the one question Greatday
#: asks at the first login of a sandbox of the default seed ("What shape do people like most?").
STDIN = {"quickstart.py": "Triangle\n"}
#: The browser ``webbrowser.open`` runs: for the widget's example, a person who signs in.
BROWSER = {"connect_quickstart.py": f"{sys.executable} {Path(__file__).with_name('widget_person.py')} %s"}


def test_every_example_is_listed() -> None:
    assert sorted(path.name for path in SCRIPTS) == sorted(LAST_LINE)
    readme = (EXAMPLES / "README.md").read_text(encoding="utf-8")
    for name in LAST_LINE:
        assert name in readme, f"examples/README.md does not list {name}"


@pytest.mark.parametrize("script", SCRIPTS, ids=[path.name for path in SCRIPTS])
def test_example_runs_and_finishes(script: Path, tmp_path: Path) -> None:
    # Run from an empty directory: an example must not depend on the working directory.
    result = subprocess.run(
        [sys.executable, str(script)],
        input=STDIN.get(script.name, ""),
        env={**os.environ, "BROWSER": BROWSER[script.name]} if script.name in BROWSER else None,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert result.returncode == 0, f"{script.name} exited {result.returncode}:\n{result.stderr[-3000:]}"
    lines = result.stdout.splitlines()
    assert lines and lines[-1] == LAST_LINE[script.name], result.stdout[-2000:]


def test_the_examples_use_every_public_name_and_no_private_one() -> None:
    source = "\n".join(path.read_text(encoding="utf-8") for path in SCRIPTS)
    used = set(re.findall(r"\bbf\.(\w+)", source))
    missing = sorted(set(bf.__all__) - used)
    assert not missing, f"no example uses {missing}"
    private = sorted(name for name in used if name.startswith("_") and name != "__version__")
    assert not private, f"examples use private names {private}"
    assert "bankfeed._" not in source and "from bankfeed" not in source
