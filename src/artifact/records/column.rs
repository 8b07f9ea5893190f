//! Field types as artifact columns ([`Column`]): each type's Arrow type, nullability and
//! array, one line per scalar type, a `split` as text, a `Vec` as a list; decoding errors
//! name the row and the item ([`CellError`]).

use crate::split::Split;
use arrow_array::builder::{BooleanBuilder, Int32Builder, Int64Builder, StringBuilder};
use arrow_array::{Array, ArrayRef, BooleanArray, Int32Array, Int64Array, ListArray, StringArray};
use arrow_buffer::OffsetBuffer;
use arrow_schema::{DataType, Field, FieldRef};
use std::sync::Arc;

/// A field type that can be an artifact column: its Arrow type and nullability, and the
/// encoding of the rows' values as one Arrow array and back.
pub(super) trait Column: Sized {
    /// Whether the column may hold nulls (the `Option` types).
    const NULLABLE: bool = false;
    fn data_type() -> DataType;
    fn to_array<'a>(values: impl Iterator<Item = &'a Self>) -> ArrayRef
    where
        Self: 'a;
    fn from_array(array: &dyn Array) -> Result<Vec<Self>, CellError>;
    /// Bytes this value adds to its array: the text, plus an offset or a fixed-width value.
    fn encoded_bytes(&self) -> usize {
        8
    }
}

/// Why a column's values could not be decoded: where (the row, then the item within each
/// level of list; empty for the whole column) and what was wrong.
pub(super) struct CellError {
    at: Vec<usize>,
    message: String,
}

impl CellError {
    fn column(message: String) -> Self {
        CellError {
            at: Vec::new(),
            message,
        }
    }

    pub(super) fn row(row: usize, message: impl Into<String>) -> Self {
        CellError {
            at: vec![row],
            message: message.into(),
        }
    }

    /// The same error seen from the list that holds the failing value at `row`.
    fn within(mut self, row: usize) -> Self {
        self.at.insert(0, row);
        self
    }
}

impl std::fmt::Display for CellError {
    /// `row 3: null`, `row 3, item 1: null`, or the bare message for the whole column.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (depth, index) in self.at.iter().enumerate() {
            let sep = if depth == 0 { "row" } else { ", item" };
            write!(f, "{sep} {index}")?;
        }
        if !self.at.is_empty() {
            f.write_str(": ")?;
        }
        f.write_str(&self.message)
    }
}

/// The array as `A`, or an error naming the type the column `C` expected and the one found.
pub(super) fn downcast<A: Array + 'static, C: Column>(array: &dyn Array) -> Result<&A, CellError> {
    array.as_any().downcast_ref::<A>().ok_or_else(|| {
        CellError::column(format!(
            "expected {}, found {}",
            C::data_type(),
            array.data_type()
        ))
    })
}

/// `Column` for scalar types and their `Option`s, one line each: the type, its Arrow type,
/// array and builder, the value the builder takes for `v: &Self`, and the owned value read
/// back from array `a` at row `i`.
macro_rules! scalar_columns {
    ($($t:ty: $data_type:expr, $array:ty, $builder:ty, |$v:ident| $put:expr, |$a:ident, $i:ident| $get:expr;)*) => {$(
        impl Column for $t {
            fn data_type() -> DataType {
                $data_type
            }

            fn to_array<'a>(values: impl Iterator<Item = &'a Self>) -> ArrayRef {
                let mut b = <$builder>::new();
                for $v in values {
                    b.append_value($put);
                }
                Arc::new(b.finish())
            }

            fn encoded_bytes(&self) -> usize {
                8 + TextLen::text_len(self)
            }

            fn from_array(array: &dyn Array) -> Result<Vec<Self>, CellError> {
                let $a = downcast::<$array, Self>(array)?;
                (0..$a.len())
                    .map(|$i| {
                        if $a.is_null($i) {
                            Err(CellError::row($i, "null"))
                        } else {
                            Ok($get)
                        }
                    })
                    .collect()
            }
        }

        impl Column for Option<$t> {
            const NULLABLE: bool = true;

            fn data_type() -> DataType {
                $data_type
            }

            fn to_array<'a>(values: impl Iterator<Item = &'a Self>) -> ArrayRef {
                let mut b = <$builder>::new();
                for value in values {
                    match value {
                        Some($v) => b.append_value($put),
                        None => b.append_null(),
                    }
                }
                Arc::new(b.finish())
            }

            fn from_array(array: &dyn Array) -> Result<Vec<Self>, CellError> {
                let $a = downcast::<$array, Self>(array)?;
                Ok((0..$a.len())
                    .map(|$i| (!$a.is_null($i)).then(|| $get))
                    .collect())
            }

            fn encoded_bytes(&self) -> usize {
                8 + self.as_ref().map_or(0, TextLen::text_len)
            }
        }
    )*};
}

/// The variable-length bytes of a scalar (its UTF-8 length for text, none otherwise).
trait TextLen {
    fn text_len(&self) -> usize {
        0
    }
}

impl TextLen for String {
    fn text_len(&self) -> usize {
        self.len()
    }
}
impl TextLen for i32 {}
impl TextLen for i64 {}
impl TextLen for bool {}

scalar_columns! {
    String: DataType::Utf8, StringArray, StringBuilder, |v| v, |a, i| a.value(i).to_string();
    i32: DataType::Int32, Int32Array, Int32Builder, |v| *v, |a, i| a.value(i);
    i64: DataType::Int64, Int64Array, Int64Builder, |v| *v, |a, i| a.value(i);
    bool: DataType::Boolean, BooleanArray, BooleanBuilder, |v| *v, |a, i| a.value(i);
}

/// A `split` column is text; every value must name a split.
impl Column for Split {
    fn data_type() -> DataType {
        DataType::Utf8
    }

    fn to_array<'a>(values: impl Iterator<Item = &'a Self>) -> ArrayRef {
        let mut b = StringBuilder::new();
        for v in values {
            b.append_value(v.as_str());
        }
        Arc::new(b.finish())
    }

    fn from_array(array: &dyn Array) -> Result<Vec<Self>, CellError> {
        String::from_array(array)?
            .iter()
            .enumerate()
            .map(|(i, v)| v.parse().map_err(|e: String| CellError::row(i, e)))
            .collect()
    }
}

/// A list column (`list<item>`, items declared nullable as Arrow's list builders do); a
/// null list, or a bad item, is an error naming the row and the item.
impl<T: Column> Column for Vec<T> {
    fn data_type() -> DataType {
        DataType::List(item_field::<T>())
    }

    fn to_array<'a>(rows: impl Iterator<Item = &'a Self>) -> ArrayRef
    where
        Self: 'a,
    {
        let mut lengths = Vec::new();
        let mut items = Vec::new();
        for row in rows {
            lengths.push(row.len());
            items.extend(row);
        }
        let values = T::to_array(items.into_iter());
        let offsets = OffsetBuffer::from_lengths(lengths);
        Arc::new(ListArray::new(item_field::<T>(), offsets, values, None))
    }

    fn encoded_bytes(&self) -> usize {
        8 + self.iter().map(T::encoded_bytes).sum::<usize>()
    }

    fn from_array(array: &dyn Array) -> Result<Vec<Self>, CellError> {
        let list = downcast::<ListArray, Self>(array)?;
        (0..list.len())
            .map(|i| {
                if list.is_null(i) {
                    return Err(CellError::row(i, "null"));
                }
                T::from_array(list.value(i).as_ref()).map_err(|e| e.within(i))
            })
            .collect()
    }
}

fn item_field<T: Column>() -> FieldRef {
    Arc::new(Field::new("item", T::data_type(), true))
}
