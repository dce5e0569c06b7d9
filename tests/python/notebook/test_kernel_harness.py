"""The kernel the other tests of this axis use imports the installed bankfeed."""

from __future__ import annotations

import pytest
from kernelhelpers import outputs_of, run_cells

# Deselected by scripts/test --quick (CONTRIBUTING.md#the-quick-loop): a real kernel starts.
pytestmark = pytest.mark.notebook


def test_a_real_kernel_runs_cells_with_the_installed_bankfeed() -> None:
    notebook = run_cells("import bankfeed as bf", "bf.__version__")
    import bankfeed as bf

    assert outputs_of(notebook, 1) == [repr(bf.__version__)]
