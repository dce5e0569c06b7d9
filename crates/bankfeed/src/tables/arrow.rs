//! Tables as Arrow record batches, and as an Arrow C stream for zero-copy handoff to pyarrow,
//! polars and pandas (the Arrow PyCapsule interface).

use std::sync::Arc;

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{make_array, ArrayRef, RecordBatch, RecordBatchIterator};
use arrow_schema::{ArrowError, Field, Schema};

use super::Table;

impl Table {
    pub fn schema(&self) -> Arc<Schema> {
        let fields: Vec<Field> =
            self.columns.iter().map(|c| Field::new(c.name, c.data.array().data_type().clone(), true)).collect();
        Arc::new(Schema::new(fields))
    }

    /// The table as one record batch; the columns' buffers are shared, not copied.
    pub fn to_record_batch(&self) -> Result<RecordBatch, ArrowError> {
        let arrays: Vec<ArrayRef> = self.columns.iter().map(|c| make_array(c.data.array().to_data())).collect();
        let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(self.rows));
        RecordBatch::try_new_with_options(self.schema(), arrays, &options)
    }

    /// The table as an Arrow C stream of one batch.
    pub fn to_c_stream(&self) -> Result<FFI_ArrowArrayStream, ArrowError> {
        let batch = self.to_record_batch()?;
        let reader = RecordBatchIterator::new(vec![Ok(batch)], self.schema());
        Ok(FFI_ArrowArrayStream::new(Box::new(reader)))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::tables::{build, Read};
    use arrow_array::ffi_stream::RecordBatchStreamReader;
    use arrow_array::{Array, Date32Array, Float64Array, ListArray, TimestampMicrosecondArray};
    use arrow_schema::{DataType, TimeUnit};

    /// A row with a column of every type (also used by `wire.rs`'s tests).
    pub(crate) struct Row {
        pub(crate) x: Option<f64>,
        pub(crate) s: Option<&'static str>,
        pub(crate) d: Option<&'static str>,
        pub(crate) t: Option<&'static str>,
        pub(crate) l: Vec<&'static str>,
        pub(crate) b: Option<bool>,
    }

    pub(crate) fn sample(rows: &[Row]) -> Table {
        build(
            rows,
            &[
                ("x", Read::Float(|r| r.x)),
                ("s", Read::Text(|r| r.s)),
                ("d", Read::Date(|r| r.d)),
                ("t", Read::Timestamp(|r| r.t)),
                ("l", Read::TextList(|r| r.l.clone())),
                ("b", Read::Bool(|r| r.b)),
            ],
        )
        .unwrap()
    }

    fn two_rows() -> Table {
        sample(&[
            Row {
                x: Some(1.5),
                s: None,
                d: Some("1970-01-02"),
                t: Some("1970-01-01T00:00:00Z"),
                l: vec!["a"],
                b: Some(true),
            },
            Row { x: None, s: Some("b"), d: None, t: Some("1970-01-01T00:00:00.000001Z"), l: vec![], b: None },
        ])
    }

    #[test]
    fn a_table_round_trips_through_the_c_stream() {
        let table = two_rows();
        let stream = table.to_c_stream().unwrap();
        let reader = RecordBatchStreamReader::try_new(stream).unwrap();
        let batches: Vec<RecordBatch> = reader.map(Result::unwrap).collect();
        assert_eq!(batches.len(), 1);
        let batch = &batches[0];
        assert_eq!(batch.num_rows(), 2);
        assert_eq!(
            batch.schema().field(3).data_type(),
            &DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
        );
        let x = batch.column(0).as_any().downcast_ref::<Float64Array>().unwrap();
        assert_eq!((x.value(0), x.is_null(1)), (1.5, true));
        let d = batch.column(2).as_any().downcast_ref::<Date32Array>().unwrap();
        assert_eq!((d.value(0), d.is_null(1)), (1, true));
        let t = batch.column(3).as_any().downcast_ref::<TimestampMicrosecondArray>().unwrap();
        assert_eq!((t.value(0), t.value(1)), (0, 1));
        let l = batch.column(4).as_any().downcast_ref::<ListArray>().unwrap();
        assert_eq!((l.value_length(0), l.value_length(1)), (1, 0));
    }

    #[test]
    fn an_empty_table_keeps_its_schema() {
        let table = sample(&[]);
        let batch = table.to_record_batch().unwrap();
        assert_eq!((batch.num_rows(), batch.num_columns()), (0, 6));
        assert_eq!(batch.schema(), two_rows().schema());
    }
}
