//! Variant columns in Arrow: `Struct{metadata, value[, typed_value]}` fields carrying the canonical
//! extension type `arrow.parquet.variant`.
//!
//! - [`variant_field`] / [`is_variant_field`]: the field and its recognition.
//! - [`VariantColumn`]: reads rows of a variant struct array (Binary, LargeBinary or BinaryView
//!   children) as [`Variant`] views.
//! - [`VariantArrayBuilder`]: builds the unshredded form our functions return.
use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayAccessor, ArrayRef, AsArray, BinaryArray, BinaryViewArray, LargeBinaryArray,
    StructArray, new_null_array,
};
use datafusion::arrow::buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Fields};
use datafusion::common::{DataFusionError, Result, exec_err, plan_err};

use crate::codec::{Variant, VariantBuilder, VariantError};

/// Data that is not a valid variant: bytes that break the encoding, or a shredded column that
/// breaks the shredding specification. The data is at fault, not the query, so a Parquet scan
/// under `variant.ignore_corrupt_files` skips the file whose values raise it (errors of casts
/// and other functions are the query's, and stop it).
#[derive(Debug)]
pub struct InvalidVariant(String);

/// How [`InvalidVariant`] appears in an error's debug text: DataFusion's row filters pass their
/// errors on only as that text.
pub const INVALID_VARIANT_DEBUG: &str = "External(InvalidVariant(";

impl std::fmt::Display for InvalidVariant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InvalidVariant {}

/// An [`InvalidVariant`] error saying `message`.
pub fn invalid_variant(message: impl Into<String>) -> DataFusionError {
    DataFusionError::External(Box::new(InvalidVariant(message.into())))
}

/// A codec error as a DataFusion error naming `function` (none where empty): bytes that are not
/// a variant are [`InvalidVariant`], the rest (JSON text, limits) execution errors.
pub fn codec_error(function: &str, e: VariantError) -> DataFusionError {
    let message = if function.is_empty() {
        e.to_string()
    } else {
        format!("{function}: {e}")
    };
    if e.is_invalid_bytes() {
        invalid_variant(message)
    } else {
        DataFusionError::Execution(message)
    }
}

/// The canonical Arrow extension name of variant columns.
pub const VARIANT_EXTENSION_NAME: &str = "arrow.parquet.variant";
/// Field-metadata key holding an extension name.
pub const EXTENSION_NAME_KEY: &str = "ARROW:extension:name";
/// Field-metadata key holding extension metadata.
pub const EXTENSION_METADATA_KEY: &str = "ARROW:extension:metadata";

/// The canonical Arrow extension name of UUID columns (`FixedSizeBinary(16)`), the Arrow form
/// of variant uuids.
pub const UUID_EXTENSION_NAME: &str = "arrow.uuid";

/// The struct type of unshredded variants: `Struct{metadata: Binary, value: Binary}`.
pub fn variant_data_type() -> DataType {
    DataType::Struct(Fields::from(vec![
        Field::new("metadata", DataType::Binary, false),
        Field::new("value", DataType::Binary, false),
    ]))
}

/// The field metadata that marks a field as a variant.
pub fn variant_extension_metadata() -> HashMap<String, String> {
    HashMap::from([
        (
            EXTENSION_NAME_KEY.to_string(),
            VARIANT_EXTENSION_NAME.to_string(),
        ),
        (EXTENSION_METADATA_KEY.to_string(), String::new()),
    ])
}

/// A variant field named `name` with the extension type set.
pub fn variant_field(name: &str, nullable: bool) -> Field {
    Field::new(name, variant_data_type(), nullable).with_metadata(variant_extension_metadata())
}

/// True when `field` carries the `arrow.parquet.variant` extension.
pub fn is_variant_field(field: &Field) -> bool {
    field.metadata().get(EXTENSION_NAME_KEY).map(String::as_str) == Some(VARIANT_EXTENSION_NAME)
}

/// True when `field` is a variant: the extension, or the variant struct shape (extension metadata
/// is lost by some operators, e.g. on list elements built by `array_agg`).
pub fn is_variant_like(field: &Field) -> bool {
    is_variant_field(field) || has_variant_shape(field.data_type())
}

/// Whether a column declared in SQL as `declared` is the table's column `actual`: the same
/// name and the same type as [`declared_type_as`] compares them. (`CREATE EXTERNAL TABLE` over
/// a table whose columns are fixed or logged.)
pub fn declared_as(declared: &Field, actual: &Field) -> bool {
    declared.name() == actual.name() && declared_type_as(declared, actual)
}

/// Whether the type of `declared` is that of `actual` as far as a declaration can say: a
/// variant where it is one (by shape), text or bytes of any layout, a timestamp of any unit
/// (with a time zone or without, as `actual`), lists of the same elements, structs and maps of
/// the same fields, whatever Arrow names their inner fields; nullability aside.
#[recursive::recursive]
pub fn declared_type_as(declared: &Field, actual: &Field) -> bool {
    use DataType::*;
    if is_variant_like(actual) || is_variant_like(declared) {
        return is_variant_like(actual) && is_variant_like(declared);
    }
    match (declared.data_type(), actual.data_type()) {
        (Utf8 | LargeUtf8 | Utf8View, Utf8 | LargeUtf8 | Utf8View) => true,
        (Binary | LargeBinary | BinaryView, Binary | LargeBinary | BinaryView) => true,
        (Timestamp(_, a), Timestamp(_, b)) => a.is_some() == b.is_some(),
        (List(a) | LargeList(a), List(b) | LargeList(b)) => declared_type_as(a, b),
        (Struct(a), Struct(b)) => {
            a.len() == b.len() && (a.iter().zip(b.iter())).all(|(a, b)| declared_as(a, b))
        }
        (Map(a, _), Map(b, _)) => match (a.data_type(), b.data_type()) {
            (Struct(a), Struct(b)) if a.len() == b.len() => {
                (a.iter().zip(b.iter())).all(|(a, b)| declared_type_as(a, b))
            }
            _ => false,
        },
        (a, b) => a == b,
    }
}

/// A table's columns as a declaration would give them: `v VARIANT, n Int64`.
pub fn column_list<'a>(fields: impl IntoIterator<Item = &'a FieldRef>) -> String {
    let columns: Vec<String> = fields
        .into_iter()
        .map(|f| {
            if is_variant_like(f) {
                format!("{} VARIANT", f.name())
            } else {
                format!("{} {}", f.name(), f.data_type())
            }
        })
        .collect();
    columns.join(", ")
}

/// True when `field` is a variant or a struct, list or map with a variant somewhere inside.
pub fn contains_variant(field: &Field) -> bool {
    holds_field(field, &is_variant_like)
}

/// True when `field`, or a field nested in it (struct fields, list elements, map entries), is
/// one that `is` accepts.
#[recursive::recursive]
pub fn holds_field(field: &Field, is: &impl Fn(&Field) -> bool) -> bool {
    if is(field) {
        return true;
    }
    match field.data_type() {
        DataType::Struct(fields) => fields.iter().any(|f| holds_field(f, is)),
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::ListView(f)
        | DataType::LargeListView(f)
        | DataType::FixedSizeList(f, _)
        | DataType::Map(f, _) => holds_field(f, is),
        _ => false,
    }
}

/// True when `data_type` has the shape of a variant struct (a binary `metadata` child and a binary
/// `value` and/or a `typed_value` child). Used for inputs that lost their field metadata on the way.
pub fn has_variant_shape(data_type: &DataType) -> bool {
    let DataType::Struct(fields) = data_type else {
        return false;
    };
    let binary = |f: &FieldRef| {
        matches!(
            f.data_type(),
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView
        )
    };
    let metadata = fields.find("metadata").is_some_and(|(_, f)| binary(f));
    let value = fields.find("value").map(|(_, f)| binary(f));
    let typed = fields.find("typed_value").is_some();
    metadata && value != Some(false) && (value == Some(true) || typed)
}

/// True when `data_type` is exactly the unshredded variant struct: a binary `metadata` and a
/// binary `value`, in either order (Spark's nested variants put `value` first), nothing else.
pub fn has_unshredded_variant_shape(data_type: &DataType) -> bool {
    has_variant_shape(data_type)
        && matches!(data_type, DataType::Struct(children)
            if children.len() == 2 && children.find("typed_value").is_none())
}

/// Checks that argument `field` of `function` is a variant (or an untyped NULL); the error names
/// the function and the type.
pub fn check_variant_arg(function: &str, field: &Field) -> Result<()> {
    if is_variant_field(field)
        || has_variant_shape(field.data_type())
        || field.data_type() == &DataType::Null
    {
        Ok(())
    } else {
        plan_err!(
            "{function} expects a VARIANT argument, got {}",
            field.data_type()
        )
    }
}

/// One binary child column of any of the three binary layouts.
#[derive(Debug, Clone, Copy)]
enum BinaryColumn<'a> {
    Binary(&'a BinaryArray),
    Large(&'a LargeBinaryArray),
    View(&'a BinaryViewArray),
}

impl<'a> BinaryColumn<'a> {
    fn try_new(array: &'a ArrayRef) -> Result<Self> {
        Ok(match array.data_type() {
            DataType::Binary => BinaryColumn::Binary(array.as_binary()),
            DataType::LargeBinary => BinaryColumn::Large(array.as_binary()),
            DataType::BinaryView => BinaryColumn::View(array.as_binary_view()),
            other => return exec_err!("variant child must be binary, got {other}"),
        })
    }

    fn len(&self) -> usize {
        match self {
            BinaryColumn::Binary(a) => a.len(),
            BinaryColumn::Large(a) => a.len(),
            BinaryColumn::View(a) => a.len(),
        }
    }

    #[inline]
    fn value(&self, i: usize) -> &'a [u8] {
        match self {
            BinaryColumn::Binary(a) => a.value(i),
            BinaryColumn::Large(a) => a.value(i),
            BinaryColumn::View(a) => a.value(i),
        }
    }

    fn nulls(self) -> Option<&'a NullBuffer> {
        match self {
            BinaryColumn::Binary(a) => a.nulls(),
            BinaryColumn::Large(a) => a.nulls(),
            BinaryColumn::View(a) => a.nulls(),
        }
    }

    #[inline]
    fn is_null(&self, i: usize) -> bool {
        match self {
            BinaryColumn::Binary(a) => a.is_null(i),
            BinaryColumn::Large(a) => a.is_null(i),
            BinaryColumn::View(a) => a.is_null(i),
        }
    }
}

/// The loop of [`VariantRows::try_for_each`] for one pair of binary layouts.
#[inline]
fn for_each_row<'a, M, V, F>(
    nulls: Option<&NullBuffer>,
    metadata: M,
    value: V,
    mut f: F,
) -> Result<()>
where
    M: ArrayAccessor<Item = &'a [u8]>,
    V: ArrayAccessor<Item = &'a [u8]>,
    F: FnMut(usize, Option<(&'a [u8], &'a [u8])>) -> Result<()>,
{
    // One call of `f` per layout (callers inline their row body into it).
    (0..value.len()).try_for_each(|i| {
        let row = nulls
            .is_none_or(|n| n.is_valid(i))
            .then(|| (metadata.value(i), value.value(i)));
        f(i, row)
    })
}

/// Reads the rows of an unshredded variant column. A shredded one (with `typed_value`) is read
/// through `shredding::variant_column`, which reassembles it into this form first.
#[derive(Debug)]
pub struct VariantColumn {
    array: StructArray,
}

impl VariantColumn {
    /// Wraps an unshredded variant struct array (any binary layout) or an untyped NULL column; a
    /// shredded one is an error (`shredding::variant_column` reads every layout).
    pub fn try_new(array: &ArrayRef) -> Result<Self> {
        if array.data_type() == &DataType::Null {
            // An untyped NULL literal: every row is SQL NULL.
            let nulls = new_null_array(&variant_data_type(), array.len());
            return Ok(VariantColumn {
                array: nulls.as_struct().clone(),
            });
        }
        let Some(s) = array.as_struct_opt() else {
            return exec_err!(
                "expected a variant struct column, got {}",
                array.data_type()
            );
        };
        Self::unshredded(s.clone())
    }

    /// Wraps an unshredded variant struct array (`metadata` and `value` children); a shredded
    /// one is an error.
    pub fn unshredded(s: StructArray) -> Result<Self> {
        if s.column_by_name("metadata").is_none() {
            return exec_err!("variant column has no metadata child");
        }
        if s.column_by_name("typed_value").is_some() {
            return exec_err!("a shredded variant column must be reassembled before it is read");
        }
        if s.column_by_name("value").is_none() {
            return exec_err!("variant column has no value child");
        }
        Ok(VariantColumn { array: s })
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.array.len()
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.array.is_empty()
    }

    /// Borrows the rows for reading.
    pub fn rows(&self) -> Result<VariantRows<'_>> {
        let metadata =
            BinaryColumn::try_new(self.array.column_by_name("metadata").expect("checked"))?;
        let value = BinaryColumn::try_new(self.array.column_by_name("value").expect("checked"))?;
        Ok(VariantRows {
            nulls: self.array.nulls(),
            metadata,
            value,
        })
    }
}

/// Row access over a [`VariantColumn`].
#[derive(Debug, Clone, Copy)]
pub struct VariantRows<'a> {
    nulls: Option<&'a NullBuffer>,
    metadata: BinaryColumn<'a>,
    value: BinaryColumn<'a>,
}

impl<'a> VariantRows<'a> {
    /// Rows of an unshredded variant struct array borrowed as it is; None when it is not one
    /// (shredded, an untyped NULL, ...: use [`VariantColumn`]).
    pub fn borrowed(array: &'a ArrayRef) -> Option<Self> {
        let s = array.as_struct_opt()?;
        if s.column_by_name("typed_value").is_some() {
            return None;
        }
        Some(VariantRows {
            nulls: s.nulls(),
            metadata: BinaryColumn::try_new(s.column_by_name("metadata")?).ok()?,
            value: BinaryColumn::try_new(s.column_by_name("value")?).ok()?,
        })
    }

    /// The number of rows ([`VariantRows::try_for_each`] visits rows `0..len`).
    pub fn len(&self) -> usize {
        self.value.len()
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Row `i` as raw `(metadata, value)` bytes, or None for SQL NULL.
    #[inline]
    pub fn bytes(&self, i: usize) -> Option<(&'a [u8], &'a [u8])> {
        if self.nulls.is_some_and(|n| n.is_null(i)) || self.value.is_null(i) {
            return None;
        }
        Some((self.metadata.value(i), self.value.value(i)))
    }

    /// Calls `f` with every row in order: its index and raw `(metadata, value)` bytes, None for
    /// SQL NULL. The binary layouts of both children and the nulls are resolved once, not per
    /// row, so that whole-column kernels run one tight loop. Stops at the first error of `f`.
    #[inline]
    pub fn try_for_each<F>(&self, f: F) -> Result<()>
    where
        F: FnMut(usize, Option<(&'a [u8], &'a [u8])>) -> Result<()>,
    {
        use BinaryColumn::{Binary, Large, View};
        let nulls = NullBuffer::union(self.nulls, self.value.nulls());
        let nulls = nulls.as_ref();
        match (self.metadata, self.value) {
            (Binary(m), Binary(v)) => for_each_row(nulls, m, v, f),
            (Binary(m), Large(v)) => for_each_row(nulls, m, v, f),
            (Binary(m), View(v)) => for_each_row(nulls, m, v, f),
            (Large(m), Binary(v)) => for_each_row(nulls, m, v, f),
            (Large(m), Large(v)) => for_each_row(nulls, m, v, f),
            (Large(m), View(v)) => for_each_row(nulls, m, v, f),
            (View(m), Binary(v)) => for_each_row(nulls, m, v, f),
            (View(m), Large(v)) => for_each_row(nulls, m, v, f),
            (View(m), View(v)) => for_each_row(nulls, m, v, f),
        }
    }

    /// A [`KeyPrefilter`] for `key` over these rows; None for an empty key, when the metadata
    /// bytes are not in one buffer (views), or when the key is in more than 8 of the first 64
    /// rows (then the search would cost more than it saves).
    pub(crate) fn key_prefilter(&self, key: &[u8]) -> Option<KeyPrefilter<'a>> {
        if key.is_empty() {
            return None;
        }
        let (bytes, offsets) = match self.metadata {
            BinaryColumn::Binary(a) => (a.values().as_slice(), Offsets::Small(a.value_offsets())),
            BinaryColumn::Large(a) => (a.values().as_slice(), Offsets::Large(a.value_offsets())),
            BinaryColumn::View(_) => return None,
        };
        let finder = memchr::memmem::Finder::new(key).into_owned();
        let sample = offsets.start(0)..offsets.start(offsets.rows().min(64));
        if finder.find_iter(bytes.get(sample)?).nth(8).is_some() {
            return None;
        }
        Some(KeyPrefilter {
            finder,
            bytes,
            offsets,
            next: 0,
            candidates: 0,
            enabled: true,
        })
    }

    /// Row `i` as a variant view, None for SQL NULL; corrupt metadata headers are errors.
    #[inline]
    pub fn get(&self, i: usize) -> Result<Option<Variant<'a>>> {
        match self.bytes(i) {
            None => Ok(None),
            Some((m, v)) => Variant::try_new(m, v)
                .map(Some)
                .map_err(|e| codec_error("", e)),
        }
    }
}

/// Finds the rows whose metadata bytes contain an object key, with one substring search over
/// the metadata buffer of the whole column. Every key of a row is in its metadata's dictionary,
/// so a row whose metadata lacks the key's bytes has no field of that name anywhere: a path
/// through that key finds nothing there, and the row needs no lookup. This pays when the key is
/// absent or sparse; when the search keeps finding it (in more than about one row in eight),
/// it stops and every row is looked up.
pub(crate) struct KeyPrefilter<'a> {
    finder: memchr::memmem::Finder<'static>,
    /// The metadata child's value buffer, and its offsets.
    bytes: &'a [u8],
    offsets: Offsets<'a>,
    /// The first row, at or after the last one asked about, that may contain the key.
    next: usize,
    /// Rows found to contain the key so far.
    candidates: usize,
    enabled: bool,
}

/// The offsets of a binary or large binary column.
enum Offsets<'a> {
    Small(&'a [i32]),
    Large(&'a [i64]),
}

impl Offsets<'_> {
    /// Where row `i` starts (`i` up to the row count).
    fn start(&self, i: usize) -> usize {
        match self {
            Offsets::Small(o) => o[i] as usize,
            Offsets::Large(o) => o[i] as usize,
        }
    }

    /// The number of rows.
    fn rows(&self) -> usize {
        match self {
            Offsets::Small(o) => o.len() - 1,
            Offsets::Large(o) => o.len() - 1,
        }
    }

    /// The row holding byte `at` of the buffer, looking from row `from` on.
    fn row_of(&self, at: usize, from: usize) -> usize {
        let after = |o: usize| o <= at;
        let ends = match self {
            Offsets::Small(o) => o[from + 1..].partition_point(|&x| after(x as usize)),
            Offsets::Large(o) => o[from + 1..].partition_point(|&x| after(x as usize)),
        };
        from + ends
    }
}

/// Rows a whole-column loop may skip: [`KeyPrefilter`], or [`NoFilter`].
pub(crate) trait RowFilter {
    /// True when row `i` certainly lacks what the loop looks for (rows are asked about in
    /// ascending order).
    fn lacks(&mut self, i: usize) -> bool;
}

/// Skips no row.
pub(crate) struct NoFilter;

impl RowFilter for NoFilter {
    #[inline(always)]
    fn lacks(&mut self, _: usize) -> bool {
        false
    }
}

impl RowFilter for KeyPrefilter<'_> {
    #[inline(always)]
    fn lacks(&mut self, i: usize) -> bool {
        if i < self.next {
            return true;
        }
        if self.enabled {
            self.advance(i);
        }
        false
    }
}

impl KeyPrefilter<'_> {
    /// Row `i` may contain the key: finds the next row after it that may.
    #[inline(never)]
    fn advance(&mut self, i: usize) {
        self.candidates += 1;
        let rows = self.offsets.rows();
        if self.candidates > 8 + i / 8 || i + 1 >= rows {
            // Too dense to pay (or the last row).
            self.enabled = false;
            self.next = 0;
            return;
        }
        let from = self.offsets.start(i + 1);
        let end = self.offsets.start(rows);
        self.next = match self.bytes.get(from..end).and_then(|b| self.finder.find(b)) {
            Some(at) => self.offsets.row_of(from + at, i + 1),
            None => usize::MAX,
        };
    }
}

/// Builds an unshredded variant column (`Struct{metadata: Binary, value: Binary}`), reusing its
/// buffers as rows are appended.
#[derive(Debug, Default)]
pub struct VariantArrayBuilder {
    metadata: Vec<u8>,
    metadata_offsets: Vec<i32>,
    value: Vec<u8>,
    value_offsets: Vec<i32>,
    validity: Vec<bool>,
    any_null: bool,
    /// Re-encodes the parts [`Self::append_part`] gives a dictionary of their own.
    parts: Option<Box<VariantBuilder>>,
}

/// A part of a variant ([`VariantArrayBuilder::append_part`]) keeps the whole's dictionary when
/// that is at most this many bytes, or at most twice the part's size.
const SHARED_DICTIONARY_BYTES: usize = 256;

impl VariantArrayBuilder {
    /// A builder with room for `rows` rows.
    pub fn with_capacity(rows: usize) -> Self {
        Self::with_byte_capacity(rows, rows * 8, rows * 32)
    }

    /// A builder with room for `rows` rows of `metadata_bytes` and `value_bytes` in total (an
    /// estimate that saves the buffers growing and copying while rows are appended).
    pub fn with_byte_capacity(rows: usize, metadata_bytes: usize, value_bytes: usize) -> Self {
        let mut metadata_offsets = Vec::with_capacity(rows + 1);
        metadata_offsets.push(0);
        let mut value_offsets = Vec::with_capacity(rows + 1);
        value_offsets.push(0);
        VariantArrayBuilder {
            metadata: Vec::with_capacity(metadata_bytes),
            metadata_offsets,
            value: Vec::with_capacity(value_bytes),
            value_offsets,
            validity: Vec::with_capacity(rows),
            any_null: false,
            parts: None,
        }
    }

    /// Appends a part of a larger variant (an object's field, an array's element, a path's
    /// value) whose `metadata` is the whole's and `value` exactly the part's bytes. A dictionary
    /// large beside the part (past 256 bytes and twice the part's size) is not copied: the part
    /// is written again with a dictionary of its own keys. So exploding an object of n keys
    /// costs its size, not n times its dictionary.
    pub fn append_part(&mut self, metadata: &[u8], value: &[u8]) -> Result<(), VariantError> {
        if metadata.len() <= SHARED_DICTIONARY_BYTES.max(2 * value.len()) {
            self.append(metadata, value);
            return Ok(());
        }
        if value.first().is_some_and(|header| header & 0x03 < 2) {
            // a primitive or a short string uses no key
            self.append(crate::codec::EMPTY_METADATA, value);
            return Ok(());
        }
        let mut part = self.parts.take().unwrap_or_default();
        part.reset();
        let written = part
            .append_variant(Variant::try_new(metadata, value)?)
            .and_then(|()| part.finish());
        if written.is_ok() {
            self.append(part.metadata(), part.value());
        }
        self.parts = Some(part);
        written
    }

    /// Appends a variant from raw bytes.
    #[inline]
    pub fn append(&mut self, metadata: &[u8], value: &[u8]) {
        self.metadata.extend_from_slice(metadata);
        self.metadata_offsets.push(self.metadata.len() as i32);
        self.value.extend_from_slice(value);
        self.value_offsets.push(self.value.len() as i32);
        self.validity.push(true);
    }

    /// Appends the row last finished in `builder`.
    #[inline]
    pub fn append_built(&mut self, builder: &VariantBuilder) {
        self.append(builder.metadata(), builder.value());
    }

    /// The bytes of metadata and of values appended so far.
    pub fn byte_lengths(&self) -> (usize, usize) {
        (self.metadata.len(), self.value.len())
    }

    /// Number of rows appended.
    pub fn len(&self) -> usize {
        self.validity.len()
    }

    /// True when no rows were appended.
    pub fn is_empty(&self) -> bool {
        self.validity.is_empty()
    }

    /// Appends SQL NULL.
    #[inline]
    pub fn append_null(&mut self) {
        self.metadata_offsets.push(self.metadata.len() as i32);
        self.value_offsets.push(self.value.len() as i32);
        self.validity.push(false);
        self.any_null = true;
    }

    /// Finishes the struct array. Byte buffers that grew well past what they hold are cut to
    /// size: a batch's memory is what sorts, merges and writers reserve for it, and a buffer
    /// that doubled (up to half of it spare) would count its spare bytes for as long as the
    /// batch lives.
    pub fn finish(mut self) -> Result<ArrayRef> {
        if self.metadata.len() > i32::MAX as usize || self.value.len() > i32::MAX as usize {
            return exec_err!("variant column exceeds 2 GiB in one batch");
        }
        for bytes in [&mut self.metadata, &mut self.value] {
            if bytes.capacity() - bytes.len() > bytes.len() / 8 {
                bytes.shrink_to_fit();
            }
        }
        let metadata = BinaryArray::new(
            OffsetBuffer::new(ScalarBuffer::from(self.metadata_offsets)),
            self.metadata.into(),
            None,
        );
        let value = BinaryArray::new(
            OffsetBuffer::new(ScalarBuffer::from(self.value_offsets)),
            self.value.into(),
            None,
        );
        let nulls = self.any_null.then(|| NullBuffer::from(self.validity));
        let DataType::Struct(fields) = variant_data_type() else {
            unreachable!()
        };
        Ok(Arc::new(StructArray::try_new(
            fields,
            vec![Arc::new(metadata), Arc::new(value)],
            nulls,
        )?))
    }
}
