//! Tables as Arrow record batches, and as an Arrow C stream for zero-copy handoff to pyarrow,
//! polars and pandas (the Arrow PyCapsule interface).

use std::sync::Arc;

use arrow_array::builder::{ListBuilder, StringBuilder};
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{
    ArrayRef, BooleanArray, Date32Array, Float64Array, RecordBatch, RecordBatchIterator, StringArray,
    TimestampMicrosecondArray,
};
use arrow_schema::{ArrowError, DataType, Field, Schema, TimeUnit};

use super::{ColumnData, Table};

fn array(data: &ColumnData) -> ArrayRef {
    match data {
        ColumnData::Float(values) => Arc::new(Float64Array::from(values.clone())),
        ColumnData::Bool(values) => Arc::new(BooleanArray::from(values.clone())),
        ColumnData::Text(values) => Arc::new(values.iter().map(Option::as_deref).collect::<StringArray>()),
        ColumnData::Date(values) => Arc::new(Date32Array::from(values.clone())),
        ColumnData::Timestamp(values) => Arc::new(TimestampMicrosecondArray::from(values.clone()).with_timezone("UTC")),
        ColumnData::TextList(values) => {
            let mut builder = ListBuilder::new(StringBuilder::new());
            for item in values {
                match item {
                    Some(items) => {
                        items.iter().for_each(|s| builder.values().append_value(s));
                        builder.append(true);
                    }
                    None => builder.append(false),
                }
            }
            Arc::new(builder.finish())
        }
    }
}

fn data_type(data: &ColumnData) -> DataType {
    match data {
        ColumnData::Float(_) => DataType::Float64,
        ColumnData::Bool(_) => DataType::Boolean,
        ColumnData::Text(_) => DataType::Utf8,
        ColumnData::Date(_) => DataType::Date32,
        ColumnData::Timestamp(_) => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        ColumnData::TextList(_) => DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
    }
}

impl Table {
    pub fn schema(&self) -> Arc<Schema> {
        let fields: Vec<Field> = self.columns.iter().map(|c| Field::new(c.name, data_type(&c.data), true)).collect();
        Arc::new(Schema::new(fields))
    }

    pub fn to_record_batch(&self) -> Result<RecordBatch, ArrowError> {
        let arrays: Vec<ArrayRef> = self.columns.iter().map(|c| array(&c.data)).collect();
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
mod tests {
    use super::*;
    use crate::tables::Column;
    use arrow_array::ffi_stream::RecordBatchStreamReader;
    use arrow_array::Array;

    fn sample() -> Table {
        Table {
            columns: vec![
                Column { name: "x", data: ColumnData::Float(vec![Some(1.5), None]) },
                Column { name: "s", data: ColumnData::Text(vec![None, Some("b".into())]) },
                Column { name: "d", data: ColumnData::Date(vec![Some(1), None]) },
                Column { name: "t", data: ColumnData::Timestamp(vec![Some(0), Some(1)]) },
                Column { name: "l", data: ColumnData::TextList(vec![Some(vec!["a".into()]), Some(vec![])]) },
                Column { name: "b", data: ColumnData::Bool(vec![Some(true), None]) },
            ],
            rows: 2,
        }
    }

    #[test]
    fn a_table_round_trips_through_the_c_stream() {
        let table = sample();
        let stream = table.to_c_stream().unwrap();
        let reader = RecordBatchStreamReader::try_new(stream).unwrap();
        let batches: Vec<RecordBatch> = reader.map(Result::unwrap).collect();
        assert_eq!(batches.len(), 1);
        let batch = &batches[0];
        assert_eq!(batch.num_rows(), 2);
        assert_eq!(batch.schema().field(3).data_type(), &DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())));
        let x = batch.column(0).as_any().downcast_ref::<Float64Array>().unwrap();
        assert_eq!((x.value(0), x.is_null(1)), (1.5, true));
        assert_eq!(batch.column(4).len(), 2);
    }

    #[test]
    fn an_empty_table_keeps_its_schema() {
        let mut table = sample();
        for column in &mut table.columns {
            column.data = match &column.data {
                ColumnData::Float(_) => ColumnData::Float(vec![]),
                ColumnData::Text(_) => ColumnData::Text(vec![]),
                ColumnData::Date(_) => ColumnData::Date(vec![]),
                ColumnData::Timestamp(_) => ColumnData::Timestamp(vec![]),
                ColumnData::TextList(_) => ColumnData::TextList(vec![]),
                ColumnData::Bool(_) => ColumnData::Bool(vec![]),
            };
        }
        table.rows = 0;
        let batch = table.to_record_batch().unwrap();
        assert_eq!((batch.num_rows(), batch.num_columns()), (0, 6));
    }
}
