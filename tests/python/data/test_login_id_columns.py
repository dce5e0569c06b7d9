"""``login_ids`` of the bulk calls taken from where a data job keeps them: a list, a pandas or polars
Series, a NumPy array, a pyarrow array or chunked array (a Ray Data batch's column). A missing
value is that login's own error; any other item that is not text fails the call
(docs/bad-input.md#arguments). Each case runs for ``bf.Client`` and ``bf.AsyncClient`` alike (the
``api`` fixture)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

pytest.importorskip("numpy")
pytest.importorskip("pandas")
pytest.importorskip("polars")
pytest.importorskip("pyarrow")

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa

import bankfeed as bf
from bfhelpers import Api

LOGINS = 3

#: Every container of text a data job hands over, made from a list of LoginIds.
CONTAINERS: dict[str, Callable[[list[str]], Any]] = {
    "list": list,
    "tuple": tuple,
    "generator": lambda ids: (login_id for login_id in ids),
    "pandas-object": lambda ids: pd.Series(ids, dtype=object),
    "pandas-string": lambda ids: pd.Series(ids, dtype="string"),
    "pandas-string-pyarrow": lambda ids: pd.Series(ids, dtype="string[pyarrow]"),
    "pandas-index": pd.Index,
    "polars": lambda ids: pl.Series("login_id", ids),
    "numpy-str": np.array,
    "numpy-object": lambda ids: np.array(ids, dtype=object),
    "pyarrow": pa.array,
    "pyarrow-large-string": lambda ids: pa.array(ids, type=pa.large_string()),
    "pyarrow-string-view": lambda ids: pa.array(ids, type=pa.string_view()),
    "pyarrow-chunked": lambda ids: pa.chunked_array([ids[:1], ids[1:]]),
    "ray-batch-column": lambda ids: pa.table({"login_id": ids})["login_id"],
}


@pytest.fixture(scope="module")
def sandbox() -> Iterator[bf.Sandbox]:
    with bf.Sandbox(logins=LOGINS) as sb:
        yield sb


def pairs_of(api: Api, sb: bf.Sandbox, login_ids: Any, call: str = "investments_many") -> list[tuple[str, Any]]:
    """Every pair of the bulk call ``call`` over ``login_ids``, made by a client of the case's kind."""
    options: dict[str, Any] = {"package": "income"} if call == "attributes_many" else {}
    return api.collect(getattr(api.client(sb), call)(login_ids, **options))


@pytest.mark.parametrize("container", list(CONTAINERS))
def test_every_container_of_text_is_read(api: Api, sandbox: bf.Sandbox, container: str) -> None:
    ids = sandbox.login_ids
    pairs = pairs_of(api, sandbox, CONTAINERS[container](ids))
    assert sorted(login_id for login_id, _ in pairs) == sorted(ids)
    # Handed back as plain text, whatever the container held (numpy.str_, an Arrow scalar).
    assert all(type(login_id) is str for login_id, _ in pairs)
    assert all(isinstance(result, bf.Investments) for _, result in pairs), pairs


@pytest.mark.parametrize("call", ["attributes_many", "accounts_detail_many"])
def test_the_other_bulk_calls_read_them_too(api: Api, sandbox: bf.Sandbox, call: str) -> None:
    ids = sandbox.login_ids
    pairs = pairs_of(api, sandbox, pa.chunked_array([ids]), call)
    assert sorted(login_id for login_id, _ in pairs) == sorted(ids)
    assert not any(isinstance(result, BaseException) for _, result in pairs), pairs


#: Each container of text with missing values among the LoginIds, and how its messages name them.
WITH_MISSING: dict[str, tuple[Callable[[list[Any]], Any], str]] = {
    "list": (list, "None"),
    "pandas-object": (lambda ids: pd.Series(ids, dtype=object), "None"),
    "pandas-nan": (lambda ids: pd.Series([np.nan if i is None else i for i in ids], dtype=object), "NaN"),
    "pandas-string": (lambda ids: pd.Series(ids, dtype="string"), "pandas.NA"),
    "polars": (lambda ids: pl.Series("login_id", ids), "None"),
    "numpy-object": (lambda ids: np.array(ids, dtype=object), "None"),
    "pyarrow": (pa.array, "an Arrow null"),
    "pyarrow-chunked": (lambda ids: pa.chunked_array([ids]), "an Arrow null"),
}


@pytest.mark.parametrize("container", list(WITH_MISSING))
def test_a_missing_value_is_that_logins_own_error(api: Api, sandbox: bf.Sandbox, container: str) -> None:
    make, shown = WITH_MISSING[container]
    ids = sandbox.login_ids
    given = [ids[0], None, ids[1], None, ids[2]]
    pairs = pairs_of(api, sandbox, make(given))
    assert len(pairs) == len(given)
    fetched = {login_id: result for login_id, result in pairs if login_id}
    assert sorted(fetched) == sorted(ids)
    assert all(isinstance(result, bf.Investments) for result in fetched.values())
    # Handed back as "", the text of no LoginId: the pairs stay (str, result), for bf.combine too.
    missing = [result for login_id, result in pairs if login_id == ""]
    assert len(missing) == 2
    for index, error in zip((1, 3), sorted(missing, key=str), strict=True):
        assert isinstance(error, bf.ConfigError) and error.field == "login_id"
        assert f"login_ids[{index}] is {shown}" in str(error), str(error)
    combined = bf.combine(pairs)
    assert list(combined.errors) == [""]
    assert set(combined.positions.column("login_id")) <= set(ids)


@pytest.mark.parametrize(
    ("login_ids", "says"),
    [
        (pa.array([1, 2]), r"login_ids\[0\] must be a str, not Int64Scalar"),
        (pa.array([b"ab"]), r"login_ids\[0\] must be a str, not BinaryScalar"),
        (np.array([1, 2]), r"login_ids\[0\] must be a str, not int64"),
        (pd.Series([1.5]), r"login_ids\[0\] must be a str, not float"),
        (pl.Series([1]), r"login_ids\[0\] must be a str, not int"),
        (pa.array([["a"]]), r"login_ids\[0\] must be a str, not ListScalar"),
    ],
    ids=["arrow-ints", "arrow-binary", "numpy-ints", "pandas-floats", "polars-ints", "arrow-lists"],
)
def test_items_of_another_kind_are_the_calls_type_error(
    api: Api, sandbox: bf.Sandbox, login_ids: Any, says: str
) -> None:
    before = sandbox.request_count
    with pytest.raises(TypeError, match=says):
        pairs_of(api, sandbox, login_ids)
    assert sandbox.request_count == before, "nothing may be sent"


@pytest.mark.parametrize(
    "frame",
    [
        pd.DataFrame({"login_id": ["a"]}),
        pl.DataFrame({"login_id": ["a"]}),
        pa.table({"login_id": ["a"]}),
        pa.record_batch({"login_id": ["a"]}),
    ],
    ids=["pandas", "polars", "arrow-table", "arrow-batch"],
)
def test_a_whole_frame_is_refused_with_the_column_to_pass(api: Api, sandbox: bf.Sandbox, frame: Any) -> None:
    # A pandas DataFrame iterates its column names: they would have been read as LoginIds.
    with pytest.raises(TypeError, match=r'pass its column of LoginIds, such as frame\["login_id"\]'):
        pairs_of(api, sandbox, frame)
