"""A kind or table named almost right is refused with the name meant (docs/export.md#the-command):
``--what investment`` says ``did you mean 'investments'?``, and so do ``bf.schema``, the Dask and
Spark reads for kinds and tables."""

from __future__ import annotations

from pathlib import Path

import pytest

import bankfeed as bf
import bankfeed.spark
from bankfeed._export.kinds import KINDS, did_you_mean
from exporthelpers import run_export


def test_the_command_suggests_the_kind_meant(tmp_path: Path) -> None:
    with bf.Sandbox(logins=1) as sb:
        done = run_export(sb, "--out", str(tmp_path), "--what", "investments,account")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "error: --what: must name investments, accounts or attributes:<package> (or <query.json>), got 'account' "
        "(did you mean 'accounts'?)"
    )


@pytest.mark.parametrize(
    ("given", "meant"),
    [
        ("investment", "investments"),
        ("Investments", "investments"),
        ("acounts", "accounts"),
        ("attribute", "attributes:<package>"),
    ],
)
def test_every_kind_name_has_its_suggestion(given: str, meant: str) -> None:
    with pytest.raises(bf.ConfigError) as wrong:
        bf.export(bf.Client("http://127.0.0.1:9", "c"), [], "unused", what=[given])
    assert wrong.value.field == "what"
    assert str(wrong.value).endswith(f"(did you mean {meant!r}?)")


def test_a_name_near_nothing_gets_no_guess() -> None:
    assert did_you_mean("gold", KINDS) == ""
    with pytest.raises(bf.ConfigError) as wrong:
        bf.schema("gold", "positions")
    assert "did you mean" not in str(wrong.value)


def test_tables_and_kinds_of_the_reads_are_suggested_too() -> None:
    with pytest.raises(bf.ConfigError, match=r"got 'position' \(did you mean 'positions'\?\)"):
        bf.schema("investments", "position")
    with pytest.raises(bf.ConfigError, match=r"got 'investment' \(did you mean 'investments'\?\)"):
        bf.schema("investment", "positions")
    client = bf.Client("http://127.0.0.1:9", "43387ca6-0391-4c82-857d-70d95f087ecb")
    with pytest.raises(bf.ConfigError, match=r"got 'transaction' \(did you mean 'transactions'\?\)"):
        bankfeed.spark.fetch(client, "accounts", "transaction")
    with pytest.raises(bf.ConfigError, match=r"\(did you mean 'investments'\?\)"):
        bankfeed.spark.fetch(client, "investment", "positions")
