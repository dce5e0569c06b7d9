//! Money columns (docs/tables.md#money): `float64` from a model read with `f64` numbers, or an
//! exact `decimal128` from one read with [`Written`] numbers, of the column's documented size.

use arrow_array::{Decimal128Array, Float64Array};

use super::{ColumnData, Validity};
use crate::data::money::{unscaled, DecimalSize, MoneyType, Written};

/// A money value of a model, as a cell of its column.
#[derive(Clone, Copy, Debug)]
pub enum Cell<'a> {
    Float(f64),
    Written(&'a str),
}

/// The number type of a model whose tables are built: what its money columns become.
pub trait Amount: Sync {
    /// The size of a column of `size` built from this type: `None` for a `float64` column.
    fn decimal(size: DecimalSize) -> Option<DecimalSize>;
    fn cell(&self) -> Cell<'_>;
}

impl Amount for f64 {
    fn decimal(_: DecimalSize) -> Option<DecimalSize> {
        None
    }

    fn cell(&self) -> Cell<'_> {
        Cell::Float(*self)
    }
}

impl Amount for Written<'_> {
    fn decimal(size: DecimalSize) -> Option<DecimalSize> {
        Some(size)
    }

    fn cell(&self) -> Cell<'_> {
        Cell::Written(&self.0)
    }
}

/// The money type of tables built from a model whose numbers are `N`.
pub(crate) fn money_type<N: Amount>() -> MoneyType {
    if N::decimal(crate::data::money::AMOUNT).is_some() {
        MoneyType::Decimal
    } else {
        MoneyType::Float
    }
}

/// The cell of an optional field, for a column's reader.
pub(crate) fn cell<N: Amount>(value: Option<&N>) -> Option<Cell<'_>> {
    value.map(Amount::cell)
}

/// A money value that does not fit its decimal column: more places than its scale, or more
/// digits before the point than its precision leaves. Never rounded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unfit {
    pub column: &'static str,
    /// The number as the payload wrote it (its first 40 characters).
    pub value: String,
    pub rule: String,
    pub size: DecimalSize,
}

impl Unfit {
    /// The message of the login's error, naming `table`.`column`.
    pub fn message(&self, table: &str) -> String {
        format!(
            "{table}.{}: {} {} of its {} column (money=\"decimal\" never rounds; money=\"float\" reads it as a float)",
            self.column, self.value, self.rule, self.size
        )
    }
}

/// The column `name` of `cells`: `float64` without a size, else `decimal128` of `size`.
pub(super) fn column<'a>(
    name: &'static str,
    size: Option<DecimalSize>,
    cells: impl Iterator<Item = Option<Cell<'a>>>,
) -> Result<ColumnData, Unfit> {
    let mut validity = Validity::default();
    match size {
        None => {
            let values: Vec<f64> = cells
                .map(|cell| {
                    validity.push(cell.is_some());
                    match cell {
                        Some(Cell::Float(value)) => value,
                        // Not built so: a model's money is all floats or all written.
                        Some(Cell::Written(text)) => text.parse().unwrap_or(f64::NAN),
                        None => 0.0,
                    }
                })
                .collect();
            Ok(ColumnData::Float(Float64Array::new(values.into(), validity.nulls())))
        }
        Some(size) => {
            let unfit =
                |text: &str, rule: String| Unfit { column: name, value: text.chars().take(40).collect(), rule, size };
            let mut values = Vec::new();
            for cell in cells {
                validity.push(cell.is_some());
                values.push(match cell {
                    Some(Cell::Written(text)) => unscaled(text, size).map_err(|rule| unfit(text, rule))?,
                    // Not built so: a float's digits are not the payload's.
                    Some(Cell::Float(value)) => {
                        return Err(unfit(&value.to_string(), "was read through a float".to_owned()))
                    }
                    None => 0,
                });
            }
            let array = Decimal128Array::new(values.into(), validity.nulls())
                .with_precision_and_scale(size.precision, size.scale)
                .map_err(|e| unfit("", e.to_string()))?;
            Ok(ColumnData::Decimal(array))
        }
    }
}
