"""What a type checker sees of the public API: mypy checks this file (strict), so each
``assert_type`` fails the type check when the stub loses the type; at run time the same lines show
the values are what the types say."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from typing_extensions import assert_type

pytest.importorskip("pandas")
pytest.importorskip("polars")

import pandas as pd
import polars as pl

import bankfeed as bf
from bfhelpers import GREATDAY


@pytest.fixture(scope="module")
def saved() -> Iterator[bf.Sandbox]:
    """A sandbox with one saved login."""
    with bf.Sandbox(logins=1) as sb:
        yield sb


def test_tables_convert_to_typed_frames(saved: bf.Sandbox) -> None:
    table = saved.client().investments(saved.login_ids[0]).positions
    frame = assert_type(table.to_pandas(), pd.DataFrame)
    assert isinstance(frame, pd.DataFrame)
    polars_frame = assert_type(table.to_polars(), pl.DataFrame)
    assert isinstance(polars_frame, pl.DataFrame)


def test_combined_errors_have_the_type_of_the_bulk_calls_errors(saved: bf.Sandbox) -> None:
    ids = [saved.login_ids[0], "00000000-0000-4000-8000-000000000000"]
    combined = bf.combine(saved.client().investments_many(ids))
    errors = assert_type(combined.errors, dict[str, bf.BankfeedError])
    assert [type(error) for error in errors.values()] == [bf.InvalidLogin]
    # A plain annotation takes any exception; the subscript works at run time too.
    plain: bf.Combined = combined
    assert_type(plain.errors, dict[str, BaseException])
    assert repr(bf.Combined[bf.BankfeedError]) == "bankfeed.Combined[bankfeed.errors.BankfeedError]"


def test_one_canned_handler_serves_both_clients(sandbox: bf.Sandbox) -> None:
    canned: bf.CannedAnswers = bf.answers(GREATDAY)
    with sandbox.client() as blocking:
        assert blocking.login("FlinksCapital", "Greatday", "Everyday", on_challenge=canned).request_id

    async def login() -> bf.AsyncSession:
        async with sandbox.async_client() as client:
            return await client.login("FlinksCapital", "Greatday", "Everyday", on_challenge=canned)

    assert asyncio.run(login()).request_id
