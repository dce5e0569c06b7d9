//! Several logins' tables of one kind as one table, with the LoginId of each row in a first
//! `login_id` column (what `bf.combine` gives for the results of a bulk call).

use arrow_array::builder::{
    ArrayBuilder, BooleanBuilder, Date32Builder, Decimal128Builder, Float64Builder, ListBuilder, StringBuilder,
    TimestampMicrosecondBuilder,
};
use arrow_array::cast::AsArray;
use arrow_array::Array;
use arrow_schema::DataType;

use super::{Column, ColumnData, Table};
use crate::error::Error;

/// The name of the column [`Combiner`] puts first.
pub const LOGIN_ID: &str = "login_id";
/// The columns a combiner [`with_provenance`](Combiner::with_provenance) puts after `login_id`:
/// the RequestId each row came from, and when it was fetched (docs/export.md#the-layout).
pub const REQUEST_ID: &str = "request_id";
pub const FETCHED_AT: &str = "fetched_at";

/// The most bytes of text one Arrow string column holds (its offsets are `i32`).
const MAX_TEXT_BYTES: usize = i32::MAX as usize;

/// Several logins' tables of one kind made into one as they come, so that a bulk call's results
/// can be dropped one by one rather than all held until the last has come (`bf.combine` over a
/// bulk iterator then needs about the memory of the combined table, not twice it).
///
/// - The columns are the union of the parts' columns, in the order they are first seen; a part
///   without a column has nulls there (tables of one kind have the same columns, but, say, the
///   attribute tables of two different queries need not).
/// - A part's own `login_id` column (the attributes' values table has one) is left out: the
///   LoginId given with the part fills the first column of its rows.
/// - No parts: a table with the `login_id` column only and no rows.
pub struct Combiner {
    login_ids: StringBuilder,
    /// [`REQUEST_ID`] and [`FETCHED_AT`], when asked for.
    provenance: Option<(StringBuilder, TimestampMicrosecondBuilder)>,
    columns: Vec<(&'static str, DataType, Builder)>,
    rows: usize,
    /// What each column reserves when it is first seen (see [`Combiner::sized_like`]).
    reserve: CombinedSize,
    /// [`MAX_TEXT_BYTES`]; a test lowers it to reach it.
    max_text_bytes: usize,
}

impl Default for Combiner {
    fn default() -> Self {
        Combiner {
            login_ids: StringBuilder::new(),
            provenance: None,
            columns: Vec::new(),
            rows: 0,
            reserve: CombinedSize::default(),
            max_text_bytes: MAX_TEXT_BYTES,
        }
    }
}

/// How large a combined table grew: its rows, and per column the bytes of its text and the items
/// of its lists. What a combiner of the next batch of the same kind reserves.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CombinedSize {
    rows: usize,
    login_id_bytes: usize,
    request_id_bytes: usize,
    /// `(name, text bytes, list items)`; both are 0 where they do not apply.
    columns: Vec<(&'static str, usize, usize)>,
}

impl CombinedSize {
    /// With an eighth more of everything, so that a batch a little larger than the last does not
    /// double a column it has nearly filled.
    fn with_headroom(mut self) -> Self {
        let more = |n: usize| n + n / 8;
        self.rows = more(self.rows);
        self.login_id_bytes = more(self.login_id_bytes);
        self.request_id_bytes = more(self.request_id_bytes);
        for (_, bytes, items) in &mut self.columns {
            *bytes = more(*bytes);
            *items = more(*items);
        }
        self
    }

    fn of(&self, name: &str) -> (usize, usize) {
        self.columns.iter().find(|(n, ..)| *n == name).map_or((0, 0), |&(_, bytes, items)| (bytes, items))
    }
}

impl Combiner {
    /// A combiner whose columns start as large as `size`'s, and an eighth larger.
    ///
    /// An export combines batch after batch of about the same size; growing each column from
    /// nothing copies it at every doubling into fresh memory, which the kernel must first hand
    /// over a page at a time (BENCHMARKS.md, export).
    pub fn sized_like(size: &CombinedSize) -> Self {
        let reserve = size.clone().with_headroom();
        Combiner {
            login_ids: StringBuilder::with_capacity(reserve.rows, reserve.login_id_bytes),
            reserve,
            ..Combiner::default()
        }
    }

    /// A combiner whose table has [`REQUEST_ID`] and [`FETCHED_AT`] after `login_id`, filled by
    /// [`Combiner::add_fetched`]: the columns an export writes before a table's own. Made here,
    /// with the rows they repeat over, rather than repeated over them afterwards by index.
    pub fn with_provenance(mut self) -> Self {
        let rows = self.reserve.rows;
        self.provenance = Some((
            StringBuilder::with_capacity(rows, self.reserve.request_id_bytes),
            TimestampMicrosecondBuilder::with_capacity(rows).with_timezone("UTC"),
        ));
        self
    }

    /// How large the table grew so far.
    pub fn size(&self) -> CombinedSize {
        CombinedSize {
            rows: self.rows,
            login_id_bytes: self.login_ids.values_slice().len(),
            request_id_bytes: self.provenance.as_ref().map_or(0, |(ids, _)| ids.values_slice().len()),
            columns: self
                .columns
                .iter()
                .map(|(name, _, builder)| {
                    let (bytes, items) = builder.size();
                    (*name, bytes, items)
                })
                .collect(),
        }
    }

    /// Appends the rows of `table`, each with `login_id`.
    ///
    /// Fails with [`Error::Config`] (field `tables`), and adds nothing of `table`, when one of its
    /// columns has a type other than the column of that name had so far, is not as long as the
    /// table, or would take a text column past Arrow's 2 GiB.
    pub fn add(&mut self, login_id: &str, table: &Table) -> Result<(), Error> {
        self.append(login_id, table)?;
        // Rows added without provenance have none.
        if let Some((request_ids, fetched_at)) = &mut self.provenance {
            request_ids.append_nulls(table.rows);
            fetched_at.append_nulls(table.rows);
        }
        Ok(())
    }

    /// [`Combiner::add`] of the table's own columns and `login_id`.
    fn append(&mut self, login_id: &str, table: &Table) -> Result<(), Error> {
        // Columns the combiner fills itself: a part's own are left out.
        let provenance = self.provenance.is_some();
        let ours = |name: &str| name == LOGIN_ID || (provenance && (name == REQUEST_ID || name == FETCHED_AT));
        for column in &table.columns {
            if column.data.len() != table.rows {
                return Err(Error::config(
                    "tables",
                    format!(
                        "of {login_id:?}: column {:?} has {} values for {} rows",
                        column.name,
                        column.data.len(),
                        table.rows
                    ),
                ));
            }
            if ours(column.name) {
                continue;
            }
            let Some((_, data_type, builder)) = self.columns.iter().find(|(name, ..)| *name == column.name) else {
                continue;
            };
            if data_type != column.data.array().data_type() {
                return Err(Error::config(
                    "tables",
                    format!(
                        "column {:?} is {data_type} in one table and {} in the one of {login_id:?}",
                        column.name,
                        column.data.array().data_type()
                    ),
                ));
            }
            if !builder.has_room_for(&column.data, self.max_text_bytes) {
                return Err(too_much_text(column.name));
            }
        }
        if self.login_ids.values_slice().len() + login_id.len() * table.rows > self.max_text_bytes {
            return Err(too_much_text(LOGIN_ID));
        }

        for column in &table.columns {
            if !ours(column.name) && !self.columns.iter().any(|(name, ..)| *name == column.name) {
                let (bytes, items) = self.reserve.of(column.name);
                let mut builder = Builder::like(&column.data, self.reserve.rows, bytes, items);
                builder.append_nulls(self.rows);
                self.columns.push((column.name, column.data.array().data_type().clone(), builder));
            }
        }
        for (name, _, builder) in &mut self.columns {
            match table.column(name) {
                Some(data) => builder.append(data),
                None => builder.append_nulls(table.rows),
            }
        }
        (0..table.rows).for_each(|_| self.login_ids.append_value(login_id));
        self.rows += table.rows;
        Ok(())
    }

    /// [`Combiner::add`], with the provenance of `table`'s rows: the RequestId its data came from,
    /// and when it was fetched (microseconds since the epoch). Without provenance, `add` alone.
    pub fn add_fetched(
        &mut self,
        login_id: &str,
        request_id: Option<&str>,
        fetched_at_us: i64,
        table: &Table,
    ) -> Result<(), Error> {
        if let Some((request_ids, _)) = &self.provenance {
            let bytes = request_ids.values_slice().len() + request_id.map_or(0, str::len) * table.rows;
            if bytes > self.max_text_bytes {
                return Err(too_much_text(REQUEST_ID));
            }
        }
        self.append(login_id, table)?;
        if let Some((request_ids, fetched_at)) = &mut self.provenance {
            for _ in 0..table.rows {
                request_ids.append_option(request_id);
                fetched_at.append_value(fetched_at_us);
            }
        }
        Ok(())
    }

    /// The rows added so far as one table.
    pub fn finish(mut self) -> Table {
        let mut columns = Vec::with_capacity(self.columns.len() + 3);
        columns.push(Column { name: LOGIN_ID, data: ColumnData::Text(self.login_ids.finish()) });
        if let Some((mut request_ids, mut fetched_at)) = self.provenance {
            columns.push(Column { name: REQUEST_ID, data: ColumnData::Text(request_ids.finish()) });
            columns.push(Column { name: FETCHED_AT, data: ColumnData::Timestamp(fetched_at.finish()) });
        }
        columns.extend(self.columns.into_iter().map(|(name, _, builder)| Column { name, data: builder.finish() }));
        Table { columns, rows: self.rows }
    }
}

/// What adding a part that would take column `name` past [`MAX_TEXT_BYTES`] fails with.
fn too_much_text(name: &str) -> Error {
    Error::config(
        "tables",
        format!(
            "column {name:?} would hold more than 2 GiB of text, the most of one Arrow string column; \
             combine the logins in smaller groups"
        ),
    )
}

/// The builder of one combined column, of the variant (and Arrow type) of its first part.
enum Builder {
    Float(Float64Builder),
    Decimal(Decimal128Builder),
    Bool(BooleanBuilder),
    Text(StringBuilder),
    Date(Date32Builder),
    Timestamp(TimestampMicrosecondBuilder),
    TextList(ListBuilder<StringBuilder>),
}

impl Builder {
    /// Room for `rows` rows, `bytes` bytes of text and `items` list items.
    fn like(data: &ColumnData, rows: usize, bytes: usize, items: usize) -> Self {
        match data {
            ColumnData::Float(_) => Builder::Float(Float64Builder::with_capacity(rows)),
            // The size of the parts (checked equal by their Arrow type) is kept.
            ColumnData::Decimal(a) => {
                Builder::Decimal(Decimal128Builder::with_capacity(rows).with_data_type(a.data_type().clone()))
            }
            ColumnData::Bool(_) => Builder::Bool(BooleanBuilder::with_capacity(rows)),
            ColumnData::Text(_) => Builder::Text(StringBuilder::with_capacity(rows, bytes)),
            ColumnData::Date(_) => Builder::Date(Date32Builder::with_capacity(rows)),
            // The zone of the parts (UTC for every table the core builds) is kept.
            ColumnData::Timestamp(a) => Builder::Timestamp(
                TimestampMicrosecondBuilder::with_capacity(rows).with_data_type(a.data_type().clone()),
            ),
            ColumnData::TextList(_) => {
                Builder::TextList(ListBuilder::with_capacity(StringBuilder::with_capacity(items, bytes), rows))
            }
        }
    }

    /// The bytes of text and the list items held.
    fn size(&self) -> (usize, usize) {
        match self {
            Builder::Text(b) => (b.values_slice().len(), 0),
            Builder::TextList(b) => (b.values_ref().values_slice().len(), b.values_ref().len()),
            _ => (0, 0),
        }
    }

    /// Whether `data`'s text fits beside what the builder holds (only text has a limit short of
    /// the memory: an Arrow string column's offsets are `i32`).
    fn has_room_for(&self, data: &ColumnData, max_text_bytes: usize) -> bool {
        match (self, data) {
            (Builder::Text(b), ColumnData::Text(a)) => b.values_slice().len() + a.value_data().len() <= max_text_bytes,
            (Builder::TextList(b), ColumnData::TextList(a)) => {
                let items = a.values().as_string::<i32>();
                b.values_ref().values_slice().len() + items.value_data().len() <= max_text_bytes
                    && b.values_ref().len() + items.len() <= max_text_bytes
            }
            _ => true,
        }
    }

    fn append_nulls(&mut self, n: usize) {
        match self {
            Builder::Float(b) => b.append_nulls(n),
            Builder::Decimal(b) => b.append_nulls(n),
            Builder::Bool(b) => b.append_nulls(n),
            Builder::Text(b) => b.append_nulls(n),
            Builder::Date(b) => b.append_nulls(n),
            Builder::Timestamp(b) => b.append_nulls(n),
            Builder::TextList(b) => b.append_nulls(n),
        }
    }

    /// Appends `data`, whose Arrow type [`Combiner::add`] checked to be the builder's, and whose
    /// text it checked to fit.
    fn append(&mut self, data: &ColumnData) {
        match (self, data) {
            (Builder::Float(b), ColumnData::Float(a)) => b.append_array(a),
            (Builder::Decimal(b), ColumnData::Decimal(a)) => b.append_array(a),
            (Builder::Bool(b), ColumnData::Bool(a)) => b.append_array(a),
            (Builder::Text(b), ColumnData::Text(a)) => {
                // Cannot fail: it fails only on the offset overflow `has_room_for` ruled out.
                let _ = b.append_array(a);
            }
            (Builder::Date(b), ColumnData::Date(a)) => b.append_array(a),
            (Builder::Timestamp(b), ColumnData::Timestamp(a)) => b.append_array(a),
            (Builder::TextList(b), ColumnData::TextList(a)) => {
                for row in 0..a.len() {
                    if a.is_null(row) {
                        b.append_null();
                    } else {
                        b.values().extend(a.value(row).as_string::<i32>().iter());
                        b.append(true);
                    }
                }
            }
            // Types are checked equal before anything is appended, and each Arrow type has one variant.
            (builder, data) => builder.append_nulls(data.len()),
        }
    }

    fn finish(self) -> ColumnData {
        match self {
            Builder::Float(mut b) => ColumnData::Float(b.finish()),
            Builder::Decimal(mut b) => ColumnData::Decimal(b.finish()),
            Builder::Bool(mut b) => ColumnData::Bool(b.finish()),
            Builder::Text(mut b) => ColumnData::Text(b.finish()),
            Builder::Date(mut b) => ColumnData::Date(b.finish()),
            Builder::Timestamp(mut b) => ColumnData::Timestamp(b.finish()),
            Builder::TextList(mut b) => ColumnData::TextList(b.finish()),
        }
    }
}

#[cfg(test)]
mod tests {
    use arrow_array::{Float64Array, StringArray};

    use super::*;
    use crate::tables::arrow::tests::{sample, Row};

    /// One table of every `(login_id, table)` of `parts`, in order: a [`Combiner`] given them all.
    fn combine(parts: &[(&str, &Table)]) -> Result<Table, Error> {
        let mut combiner = Combiner::default();
        for (login_id, table) in parts {
            combiner.add(login_id, table)?;
        }
        Ok(combiner.finish())
    }

    fn rows(n: usize, tag: &'static str) -> Vec<Row> {
        (0..n)
            .map(|i| Row {
                x: if i % 2 == 0 { Some(i as f64) } else { None },
                s: Some(tag),
                d: Some("2024-02-29"),
                t: if i == 0 { None } else { Some("2024-01-01T00:00:01Z") },
                l: vec![tag, "z"],
                b: Some(i == 1),
            })
            .collect()
    }

    fn text(table: &Table, name: &str) -> Vec<Option<String>> {
        match table.column(name).unwrap() {
            ColumnData::Text(a) => a.iter().map(|v| v.map(str::to_owned)).collect(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn rows_follow_each_other_with_their_login_id_first() {
        let a = sample(&rows(2, "a"));
        let b = sample(&rows(3, "b"));
        let combined = combine(&[("L1", &a), ("L2", &b)]).unwrap();
        assert_eq!(combined.rows, 5);
        assert_eq!(combined.names(), ["login_id", "x", "s", "d", "t", "l", "b"]);
        assert_eq!(text(&combined, "login_id"), ["L1", "L1", "L2", "L2", "L2"].map(|s| Some(s.to_owned())));
        assert_eq!(text(&combined, "s"), ["a", "a", "b", "b", "b"].map(|s| Some(s.to_owned())));
        // Every other variant keeps its values and its nulls: each column of the result is the
        // parts' columns one after the other.
        for name in ["x", "d", "t", "l", "b"] {
            let column = combined.column(name).unwrap().array();
            let (first, second) = (a.column(name).unwrap().array(), b.column(name).unwrap().array());
            assert_eq!(column.data_type(), first.data_type(), "{name}");
            assert_eq!(column.slice(0, 2).to_data(), first.to_data(), "{name}");
            assert_eq!(column.slice(2, 3).to_data(), second.to_data(), "{name}");
        }
        assert_eq!(combined.to_record_batch().unwrap().num_rows(), 5);
    }

    #[test]
    fn provenance_follows_login_id_and_repeats_over_each_logins_rows() {
        let (a, b, c) = (sample(&rows(2, "a")), sample(&rows(3, "b")), sample(&rows(1, "c")));
        let mut combiner = Combiner::default().with_provenance();
        combiner.add_fetched("L1", Some("r1"), 1_000, &a).unwrap();
        combiner.add_fetched("L2", None, 2_000, &b).unwrap();
        // Added without provenance: none.
        combiner.add("L3", &c).unwrap();
        let size = combiner.size();
        let combined = combiner.finish();
        assert_eq!(combined.names(), ["login_id", "request_id", "fetched_at", "x", "s", "d", "t", "l", "b"]);
        let request_ids = [Some("r1"), Some("r1"), None, None, None, None];
        assert_eq!(text(&combined, "request_id"), request_ids.map(|s| s.map(str::to_owned)));
        match combined.column("fetched_at") {
            Some(ColumnData::Timestamp(at)) => {
                assert_eq!(
                    at.iter().collect::<Vec<_>>(),
                    [Some(1_000), Some(1_000), Some(2_000), Some(2_000), Some(2_000), None]
                );
                assert_eq!(at.timezone(), Some("UTC"));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(combined.to_record_batch().unwrap().num_rows(), 6);
        // The next batch reserves for its RequestIds too; a part's own provenance columns are
        // left out, as its `login_id` is.
        assert_eq!(size.request_id_bytes, 4);
        let mut next = Combiner::sized_like(&size).with_provenance();
        let mut own = sample(&rows(1, "d"));
        own.columns.push(Column { name: REQUEST_ID, data: ColumnData::Text(vec![Some("theirs")].into()) });
        next.add_fetched("L4", Some("r4"), 4_000, &own).unwrap();
        let next = next.finish();
        assert_eq!(next.names().iter().filter(|name| **name == REQUEST_ID).count(), 1);
        assert_eq!(text(&next, "request_id"), [Some("r4".to_owned())]);

        // A RequestId that would take its column past Arrow's limit adds nothing, and says which.
        let mut small = Combiner::default().with_provenance();
        small.max_text_bytes = 8;
        small.add_fetched("L", Some("r"), 0, &a).unwrap();
        match small.add_fetched("L", Some("a-long-request-id"), 0, &b) {
            Err(Error::Config { rule, .. }) => assert!(rule.starts_with("column \"request_id\" would hold"), "{rule}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(small.finish().rows, 2);
    }

    #[test]
    fn a_combiner_sized_like_another_gives_the_same_table_and_size() {
        let (a, b) = (sample(&rows(2, "a")), sample(&rows(3, "bb")));
        let mut first = Combiner::default();
        first.add("L1", &a).unwrap();
        first.add("L22", &b).unwrap();
        let size = first.size();
        assert_eq!((size.rows, size.login_id_bytes), (5, 2 * 2 + 3 * 3));
        // `s` holds each row's tag; `l` each row's two items, the tag and "z".
        assert_eq!(size.of("s"), (2 + 3 * 2, 0));
        assert_eq!(size.of("l"), (2 * 2 + 3 * 3, 10));
        let mut second = Combiner::sized_like(&size);
        second.add("L1", &a).unwrap();
        second.add("L22", &b).unwrap();
        assert_eq!(second.size(), size);
        assert_eq!(second.finish(), first.finish());
    }

    #[test]
    fn a_combiner_sized_like_a_large_one_reserves_its_rows_at_the_first_part() {
        // Past the 1,024 items a fresh builder starts with, so that what is reserved shows.
        let large = sample(&rows(4000, "a"));
        let mut first = Combiner::default();
        first.add("L1", &large).unwrap();
        let mut second = Combiner::sized_like(&first.size());
        second.add("L1", &sample(&rows(1, "a"))).unwrap();
        let reserved = |combiner: &Combiner| {
            combiner.columns.iter().find_map(|(name, _, builder)| match builder {
                Builder::Float(b) if *name == "x" => Some(b.capacity()),
                _ => None,
            })
        };
        assert!(reserved(&second).unwrap() >= 4000 + 4000 / 8, "{:?}", reserved(&second));
        let mut fresh = Combiner::default();
        fresh.add("L1", &sample(&rows(1, "a"))).unwrap();
        assert!(reserved(&fresh).unwrap() < 4000);
    }

    #[test]
    fn an_empty_part_adds_no_rows_and_no_parts_give_the_login_id_column_only() {
        let a = sample(&rows(2, "a"));
        let empty = sample(&[]);
        let combined = combine(&[("E", &empty), ("L1", &a), ("E2", &empty)]).unwrap();
        assert_eq!(combined.rows, 2);
        assert_eq!(text(&combined, "login_id"), [Some("L1".to_owned()), Some("L1".to_owned())]);
        assert_eq!(combined.names().len(), 7);
        let nothing = combine(&[]).unwrap();
        assert_eq!((nothing.rows, nothing.names()), (0, vec!["login_id"]));
        assert_eq!(nothing.to_record_batch().unwrap().num_columns(), 1);
    }

    fn table(columns: Vec<(&'static str, ColumnData)>) -> Table {
        let rows = columns.first().map_or(0, |(_, data)| data.len());
        Table { columns: columns.into_iter().map(|(name, data)| Column { name, data }).collect(), rows }
    }

    fn floats(values: &[Option<f64>]) -> ColumnData {
        ColumnData::Float(Float64Array::from(values.to_vec()))
    }

    fn texts(values: &[Option<&str>]) -> ColumnData {
        ColumnData::Text(StringArray::from(values.to_vec()))
    }

    #[test]
    fn differing_columns_are_united_in_first_seen_order_with_nulls() {
        let a = table(vec![("k", texts(&[Some("a")])), ("x", floats(&[Some(1.0)]))]);
        let b = table(vec![("y", floats(&[Some(2.0), None])), ("k", texts(&[Some("b"), Some("c")]))]);
        let combined = combine(&[("L1", &a), ("L2", &b)]).unwrap();
        assert_eq!(combined.names(), ["login_id", "k", "x", "y"]);
        assert_eq!(combined.column("x"), Some(&floats(&[Some(1.0), None, None])));
        assert_eq!(combined.column("y"), Some(&floats(&[None, Some(2.0), None])));
        assert_eq!(combined.column("k"), Some(&texts(&[Some("a"), Some("b"), Some("c")])));
    }

    #[test]
    fn a_login_id_column_of_a_part_gives_way_to_the_given_one() {
        let a = table(vec![("login_id", texts(&[Some("inner"), None])), ("x", floats(&[Some(1.0), Some(2.0)]))]);
        let combined = combine(&[("outer", &a)]).unwrap();
        assert_eq!(combined.names(), ["login_id", "x"]);
        assert_eq!(combined.column("login_id"), Some(&texts(&[Some("outer"), Some("outer")])));
    }

    #[test]
    fn a_column_of_two_types_or_of_the_wrong_length_is_refused() {
        let a = table(vec![("x", floats(&[Some(1.0)]))]);
        let b = table(vec![("x", texts(&[Some("1")]))]);
        let error = combine(&[("L1", &a), ("L2", &b)]).unwrap_err();
        assert!(matches!(error, Error::Config { field: "tables", .. }), "{error:?}");
        assert!(error.to_string().contains("\"x\" is Float64 in one table and Utf8"), "{error}");
        let short = Table { rows: 2, ..a.clone() };
        let error = combine(&[("L1", &short)]).unwrap_err();
        assert!(error.to_string().contains("1 values for 2 rows"), "{error}");
    }

    #[test]
    fn a_refused_part_adds_nothing_and_the_rows_before_it_stay() {
        let a = table(vec![("x", floats(&[Some(1.0)])), ("k", texts(&[Some("a")]))]);
        let b = table(vec![("k", texts(&[Some("b")])), ("x", texts(&[Some("1")]))]);
        let mut combiner = Combiner::default();
        combiner.add("L1", &a).unwrap();
        assert!(combiner.add("L2", &b).is_err());
        assert_eq!(combiner.finish(), combine(&[("L1", &a)]).unwrap());
    }

    #[test]
    fn text_past_what_one_arrow_column_holds_is_refused_by_name() {
        // Arrow's limit is 2 GiB; a lowered one reaches the same checks without the memory. Each
        // part has 9 bytes of list items, 10 of text and a LoginId of 15.
        let items = sample(&rows(1, "abcdefgh")).column("l").unwrap().clone();
        let a = table(vec![("l", items), ("k", texts(&[Some("abcdefghij")]))]);
        for (max_text_bytes, column) in [(15, "l"), (19, "k"), (25, "login_id")] {
            let mut combiner = Combiner { max_text_bytes, ..Combiner::default() };
            combiner.add(&"A".repeat(15), &a).unwrap();
            let error = combiner.add(&"B".repeat(15), &a).unwrap_err();
            assert!(error.to_string().contains(&format!("column {column:?} would hold more than 2 GiB")), "{error}");
            let once = combiner.finish();
            assert_eq!((once.rows, once.column("k")), (1, Some(&texts(&[Some("abcdefghij")]))));
        }
    }
}
