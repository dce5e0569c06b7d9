"""Notebook cells run in a real Jupyter kernel (``nbclient``), as a notebook user runs them.

``run_cells`` executes the cells in order in one fresh kernel and returns the executed notebook:
each cell's ``outputs`` are what the user would see (``text/plain``, ``text/html``, widget views
as ``application/vnd.jupyter.widget-view+json``, errors). Widget messages from a front-end are
not simulated; a later cell can act as the person does instead (set a widget's value, call a
button's ``click()``), since the kernel runs the same callbacks for them.
"""

from __future__ import annotations

from typing import Any

import pytest


def run_cells(*cells: str, timeout: float = 60, allow_errors: bool = False) -> Any:
    """The notebook of ``cells`` after running them in a new ``python3`` kernel (this interpreter)."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    client = nbclient.NotebookClient(notebook, timeout=int(timeout), kernel_name="python3", allow_errors=allow_errors)
    client.execute()
    return notebook


def outputs_of(notebook: Any, index: int, mime: str = "text/plain") -> list[str]:
    """The ``mime`` data of cell ``index``'s outputs (results and displays), in order."""
    found: list[str] = []
    for output in notebook.cells[index].outputs:
        data = output.get("data", {})
        if mime in data:
            found.append(data[mime])
        elif mime == "text/plain" and output.get("output_type") == "stream":
            found.append(output["text"])
    return found
