"""``bf.Table`` read as pandas, polars and pyarrow users read a frame: ``shape``, ``num_rows``,
``column_names``, ``t["col"]``, ``head`` and ``slice``; and its notebook view showing the columns
a person reads before the ids (docs/notebooks.md)."""

from __future__ import annotations

import re
import sys

import pytest

pytest.importorskip("pyarrow")

import pyarrow as pa

import bankfeed as bf


@pytest.fixture(scope="module")
def positions() -> bf.Table:
    with bf.Sandbox(logins=1, seed=7) as sb, sb.client(poll_interval=0.01) as client:
        table: bf.Table = client.investments(sb.login_ids[0]).positions
    assert len(table) >= 4, "the tests below need a few rows"
    return table


def test_shape_rows_and_names_are_those_of_its_records(positions: bf.Table) -> None:
    records = positions.to_records()
    assert positions.shape == (len(records), len(records[0]))
    assert positions.num_rows == len(records) == len(positions)
    assert positions.column_names == list(records[0]) == positions.columns


def test_a_column_by_name_is_a_pyarrow_array_of_its_values(positions: bf.Table) -> None:
    symbols = positions["symbol"]
    assert isinstance(symbols, pa.Array)
    assert symbols.to_pylist() == [row["symbol"] for row in positions.to_records()]
    values = positions["market_value"]
    assert isinstance(values, pa.Array) and values.type == pa.float64()


def test_without_pyarrow_a_column_is_a_list(positions: bf.Table, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # what `import pyarrow` meets when it is not installed
    symbols = positions["symbol"]
    assert symbols == [row["symbol"] for row in positions.to_records()]


def test_an_unknown_column_is_a_key_error_naming_the_columns(positions: bf.Table) -> None:
    with pytest.raises(KeyError, match=r"no column 'symbl'.*'symbol'"):
        positions["symbl"]
    with pytest.raises(TypeError, match="named by a str"):
        positions[0]  # type: ignore[index]


def test_head_and_slice_are_tables_of_those_rows(positions: bf.Table) -> None:
    records = positions.to_records()
    assert positions.head().to_records() == records[:5]
    assert positions.head(2).to_records() == records[:2]
    assert positions.slice(1, 2).to_records() == records[1:3]
    assert positions.slice(2).to_records() == records[2:]
    assert positions.slice(len(records) + 5).shape == (0, positions.shape[1])
    assert positions.head(1000).num_rows == len(records)
    # A slice is a Table like any: it converts, and pyarrow reads its rows only.
    assert pa.table(positions.slice(1, 2)).column("symbol").to_pylist() == [r["symbol"] for r in records[1:3]]


@pytest.mark.parametrize(
    ("call", "name"),
    [(lambda t: t.slice(-1), "offset"), (lambda t: t.slice(0, -2), "length"), (lambda t: t.head(-1), "n")],
    ids=["offset", "length", "n"],
)
def test_a_negative_count_names_its_argument(positions: bf.Table, call: object, name: str) -> None:
    assert callable(call)
    with pytest.raises(ValueError, match=rf"^{name} must be 0 or more"):
        call(positions)


def test_the_view_shows_names_symbols_and_amounts_before_the_ids(positions: bf.Table) -> None:
    names_row = positions._repr_html_().split("<thead>", 1)[1].split("</tr>", 1)[0]
    header = re.findall(r"<th[^>]*>([a-z_]+)</th>", names_row)
    ids = [name for name in header if name.endswith("_id")]
    assert ids and header[-len(ids) :] == ids, header
    for readable in ("symbol", "quantity", "market_value", "account_name"):
        assert header.index(readable) < header.index(ids[0]), header
    # The table itself keeps its order: only the view moves the ids.
    assert positions.columns[0] == "account_id"


def test_the_text_repr_names_the_readable_columns_before_the_ids(positions: bf.Table) -> None:
    text = repr(positions)
    assert text.startswith(f"Table(rows={len(positions)}, columns=[")
    assert text.index('"symbol"') < text.index('"market_value"') < text.index("ids=[") < text.index('"account_id"')


def test_a_decimal_table_slices_and_keeps_its_exact_values() -> None:
    with bf.Sandbox(logins=1, seed=7) as sb, sb.client(poll_interval=0.01, money="decimal") as client:
        table: bf.Table = client.investments(sb.login_ids[0]).positions
    values = table["market_value"]
    assert isinstance(values, pa.Array) and values.type == pa.decimal128(18, 4)
    part = table.slice(1, 2)
    assert part.num_rows == 2
    assert part.column("market_value") == values.to_pylist()[1:3]
    assert table.head(1).to_records()[0]["market_value"] == values.to_pylist()[0]
