//! Shredding variants (`spec/VariantShredding.md`): each value is split into a `typed_value` of a
//! user-given type and a residual `value`, the inverse of [`super::unshred`].
//!
//! The shredding type is a SQL type (`bigint`, `decimal(10,2)`, `string`, `array<T>`,
//! `struct<a T, ..>`; `variant` shreds nothing at that level). A value goes to `typed_value` when
//! it is exactly representable there: booleans, strings, binaries, dates, floats and doubles only
//! in columns of their own type, timestamps (micros) in the timestamp column of their kind, and
//! exact numerics (every integer width and decimal; the spec's "Exact Numeric" class) in any
//! integer or decimal column that holds the number without rounding. Everything else stays in
//! `value`, as its original bytes. Objects keep fields the type does not name in `value` (a
//! partially shredded object); the row's metadata is kept unchanged, so every key stays in it.
use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use datafusion::arrow::array::{
    ArrayBuilder, ArrayRef, BinaryBuilder, BooleanBuilder, Date32Builder, Decimal128Builder,
    FixedSizeBinaryBuilder, Float32Builder, Float64Builder, Int8Builder, Int16Builder,
    Int32Builder, Int64Builder, ListArray, StringBuilder, StructArray, Time64MicrosecondBuilder,
    TimestampMicrosecondBuilder, TimestampNanosecondBuilder,
};
use datafusion::arrow::buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Fields, TimeUnit};
use datafusion::common::{DataFusionError, Result, plan_err};

use super::reassemble::FieldSizes;
use super::variant_column;
use crate::cast::target_type::sql_type_name;
use crate::codec::{Metadata, ObjectView, Value, Variant, VariantError, write_object};
use crate::variant_array::{EXTENSION_NAME_KEY, UUID_EXTENSION_NAME, has_variant_shape};

fn codec_err(e: VariantError) -> DataFusionError {
    DataFusionError::Execution(format!("cannot shred variant: {e}"))
}

/// The Arrow type of a variant column shredded as `shredding` (a SQL type, see the module docs):
/// `Struct{metadata, value, typed_value}`, with `typed_value` left out when `shredding` is
/// `variant`. Types that cannot be shredded (maps, intervals, ...) are errors.
pub fn shredded_variant_type(shredding: &DataType) -> Result<DataType> {
    let mut fields = vec![Arc::new(Field::new("metadata", DataType::Binary, false))];
    fields.extend(group_fields(shredding, "")?.iter().cloned());
    Ok(DataType::Struct(fields.into()))
}

/// The `value` and `typed_value` fields of one shredded level.
fn group_fields(shredding: &DataType, path: &str) -> Result<Fields> {
    let mut fields = vec![Field::new("value", DataType::Binary, true)];
    if let Some(typed) = typed_value_type(shredding, path)? {
        let field = Field::new("typed_value", typed, true);
        fields.push(if field.data_type() == &DataType::FixedSizeBinary(16) {
            field.with_metadata(HashMap::from([(
                EXTENSION_NAME_KEY.to_string(),
                UUID_EXTENSION_NAME.to_string(),
            )]))
        } else {
            field
        });
    }
    Ok(fields.into())
}

fn typed_value_type(shredding: &DataType, path: &str) -> Result<Option<DataType>> {
    if has_variant_shape(shredding) {
        return Ok(None);
    }
    Ok(Some(match shredding {
        DataType::Boolean
        | DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::Float32
        | DataType::Float64
        | DataType::Date32
        | DataType::Utf8
        | DataType::Binary
        | DataType::Time64(TimeUnit::Microsecond)
        | DataType::Timestamp(TimeUnit::Microsecond | TimeUnit::Nanosecond, _) => shredding.clone(),
        // uuid; the field gets the `arrow.uuid` extension (Parquet's UUID) in `group_fields`
        DataType::FixedSizeBinary(16) => shredding.clone(),
        DataType::Decimal128(_, scale) if *scale >= 0 => shredding.clone(),
        DataType::List(element) => {
            let fields = group_fields(element.data_type(), &format!("{path}[]"))?;
            DataType::List(Arc::new(Field::new(
                "element",
                DataType::Struct(fields),
                false,
            )))
        }
        DataType::Struct(fields) => {
            if fields.is_empty() {
                return plan_err!("cannot shred a variant{path} as an object without fields");
            }
            let mut shredded = Vec::with_capacity(fields.len());
            for (i, f) in fields.iter().enumerate() {
                if fields.iter().take(i).any(|g| g.name() == f.name()) {
                    return plan_err!(
                        "cannot shred a variant{path}: field `{}` is named twice",
                        f.name()
                    );
                }
                let group = group_fields(f.data_type(), &format!("{path}.{}", f.name()))?;
                shredded.push(Field::new(f.name(), DataType::Struct(group), false));
            }
            DataType::Struct(shredded.into())
        }
        other => {
            return plan_err!(
                "cannot shred a variant{path} as {}: shredding supports boolean, integers, \
                 float, double, decimal, string, binary, date, time, timestamp, timestamp_ntz \
                 (micro- or nanoseconds), uuid, array<..>, struct<..> and variant",
                sql_type_name(other)
            );
        }
    }))
}

/// Shreds every row of the variant column `array` (any layout) into the type
/// [`shredded_variant_type`] gives for `shredding`.
pub fn shred_variant(array: &ArrayRef, shredding: &DataType) -> Result<ArrayRef> {
    let DataType::Struct(fields) = shredded_variant_type(shredding)? else {
        unreachable!("shredded_variant_type returns a struct")
    };
    let column = variant_column(array)?;
    let rows = column.rows()?;
    let len = column.len();
    let mut metadata = BinaryBuilder::with_capacity(len, len * 16);
    let group: Fields = fields.iter().skip(1).cloned().collect();
    let mut root = Level::new(&group, len);
    let mut validity = Vec::with_capacity(len);
    let mut scratch = Scratch::default();
    // (only objects are matched by their dictionary)
    let has_objects = matches!(root.typed, Typed::Object { .. } | Typed::Array { .. });
    for i in 0..len {
        match rows.bytes(i) {
            None => {
                metadata.append_value(b"");
                root.append_missing();
                validity.push(false);
            }
            Some((m, value)) => {
                let v = Variant::try_new(m, value).map_err(codec_err)?;
                metadata.append_value(m);
                if has_objects {
                    scratch.dictionary = scratch.dictionaries.activate(&v.metadata());
                }
                root.append(v, &mut scratch)?;
                validity.push(true);
            }
        }
    }
    let nulls = NullBuffer::from(validity);
    let nulls = (nulls.null_count() > 0).then_some(nulls);
    let mut columns: Vec<ArrayRef> = vec![Arc::new(metadata.finish())];
    let (_, group_columns, _) = root.finish_group()?.into_parts();
    columns.extend(group_columns);
    Ok(Arc::new(StructArray::try_new(fields, columns, nulls)?))
}

/// Buffers reused across rows.
#[derive(Default)]
struct Scratch {
    /// The encoded residual object.
    object: Vec<u8>,
    /// Spare lists of residual fields (one is taken per object level being written).
    residuals: Vec<Vec<(u32, Range<usize>)>>,
    /// Spare lists of an object's field ids (one is taken per object level being written).
    field_ids: Vec<Vec<u32>>,
    /// The dictionaries of recent rows.
    dictionaries: Dictionaries,
    /// The row's dictionary, when its keys ascend: objects are then matched to the shredded
    /// fields by field id.
    dictionary: Option<ActiveDictionary>,
}

/// How many dictionaries [`Dictionaries`] keeps, and how large each may be.
const CACHED_DICTIONARIES: usize = 64;
const CACHED_DICTIONARY_BYTES: usize = 4096;

/// The dictionaries (metadata bytes) of recent rows, each with whether its keys are strictly
/// ascending. Rows repeat a few key sets (`parse_json` writes one sorted dictionary for each),
/// so each object level resolves its shredded names to field ids once per dictionary
/// ([`Typed::Object`]'s `resolved`) and then matches an object's fields by id, without reading
/// its keys. When rows hardly repeat their dictionaries, caching stops for the batch.
#[derive(Default)]
struct Dictionaries {
    entries: Vec<CachedDictionary>,
    /// The entry the last row used.
    last: usize,
    /// The entry replaced next, once full.
    next: usize,
    /// Counts new entries: a level's resolution of an entry's slot is valid for one generation.
    generation: u64,
    /// Rows looked up, and those that missed.
    rows: usize,
    misses: usize,
}

struct CachedDictionary {
    bytes: Vec<u8>,
    generation: u64,
    /// Keys strictly ascending (so key order is id order, and no key repeats).
    ascending: bool,
}

/// The row's dictionary: its entry in [`Dictionaries`] and that entry's generation.
#[derive(Clone, Copy)]
struct ActiveDictionary {
    slot: usize,
    generation: u64,
}

impl Dictionaries {
    /// The entry of `metadata` (added when new), or `None` when its keys do not ascend or it is
    /// not cached.
    fn activate(&mut self, metadata: &Metadata<'_>) -> Option<ActiveDictionary> {
        let bytes = metadata.bytes();
        if bytes.len() > CACHED_DICTIONARY_BYTES || self.given_up() {
            return None;
        }
        self.rows += 1;
        let slot = if self
            .entries
            .get(self.last)
            .is_some_and(|e| e.bytes == bytes)
        {
            self.last
        } else if let Some(slot) = self.entries.iter().position(|e| e.bytes == bytes) {
            slot
        } else {
            self.misses += 1;
            if self.given_up() {
                return None;
            }
            self.generation += 1;
            let entry = CachedDictionary {
                bytes: bytes.to_vec(),
                generation: self.generation,
                ascending: keys_ascend(metadata),
            };
            if self.entries.len() < CACHED_DICTIONARIES {
                self.entries.push(entry);
                self.entries.len() - 1
            } else {
                let slot = self.next;
                self.next = (slot + 1) % CACHED_DICTIONARIES;
                self.entries[slot] = entry;
                slot
            }
        };
        self.last = slot;
        let entry = &self.entries[slot];
        entry.ascending.then_some(ActiveDictionary {
            slot,
            generation: entry.generation,
        })
    }

    /// True once most rows have missed (past the first entries): caching stops for the batch,
    /// so that rows that hardly repeat their dictionaries do not pay for the search either.
    fn given_up(&self) -> bool {
        self.misses > CACHED_DICTIONARIES && self.misses * 2 > self.rows
    }
}

/// True when every key of `metadata` is readable and greater than the one before.
fn keys_ascend(metadata: &Metadata<'_>) -> bool {
    let mut previous: Option<&[u8]> = None;
    for id in 0..metadata.len() {
        match metadata.key_bytes(id) {
            Ok(k) if previous.is_none_or(|p| p < k) => previous = Some(k),
            _ => return false,
        }
    }
    true
}

/// An object level's shredded names as field ids of one cached dictionary.
#[derive(Default)]
struct ResolvedNames {
    /// The [`CachedDictionary::generation`] resolved (0: none).
    generation: u64,
    /// The id of each name, in `by_name` order; [`ABSENT`] for a name not in the dictionary.
    ids: Vec<u32>,
}

/// A shredded name the dictionary does not hold.
const ABSENT: u32 = u32::MAX;

/// One `{value, typed_value}` level being written.
struct Level {
    /// `value` and, when shredded, `typed_value`.
    fields: Fields,
    value: BinaryBuilder,
    typed: Typed,
    /// Missing values not appended yet: a run of them is appended at once, before the next
    /// value or at the end, so that an absent field costs a row one count instead of a null in
    /// each column under it (sparse fields with deep subtrees are common).
    missing: usize,
}

enum Typed {
    /// No `typed_value`: every value goes to `value`.
    None,
    Leaf(Leaf),
    Object {
        fields: Fields,
        children: Vec<Level>,
        /// Indices of `fields` in key order, for the residual lookup.
        by_name: Vec<usize>,
        /// `by_name` as field ids, for each slot of [`Dictionaries`].
        resolved: Vec<ResolvedNames>,
        validity: Vec<bool>,
    },
    Array {
        element_field: FieldRef,
        element: Box<Level>,
        offsets: Vec<i32>,
        validity: Vec<bool>,
    },
}

impl Level {
    /// A level writing the group `fields` (`value`, and `typed_value` when shredded).
    fn new(fields: &Fields, capacity: usize) -> Self {
        let typed = match fields.find("typed_value").map(|(_, f)| f.data_type()) {
            None => Typed::None,
            Some(DataType::Struct(fields)) => {
                let children = fields
                    .iter()
                    .map(|f| Level::new(group_of(f), capacity))
                    .collect();
                let mut by_name: Vec<usize> = (0..fields.len()).collect();
                by_name.sort_by(|&a, &b| fields[a].name().cmp(fields[b].name()));
                Typed::Object {
                    fields: fields.clone(),
                    children,
                    by_name,
                    resolved: Vec::new(),
                    validity: Vec::with_capacity(capacity),
                }
            }
            Some(DataType::List(element_field)) => Typed::Array {
                element: Box::new(Level::new(group_of(element_field), capacity)),
                element_field: Arc::clone(element_field),
                offsets: vec![0],
                validity: Vec::with_capacity(capacity),
            },
            Some(leaf) => Typed::Leaf(Leaf::new(leaf, capacity)),
        };
        Level {
            fields: fields.clone(),
            value: BinaryBuilder::with_capacity(capacity, 0),
            typed,
            missing: 0,
        }
    }

    /// Appends a missing value: both `value` and `typed_value` NULL (when the run of missing
    /// values ends).
    fn append_missing(&mut self) {
        self.missing += 1;
    }

    /// Appends the pending run of missing values.
    fn flush_missing(&mut self) {
        let n = std::mem::take(&mut self.missing);
        if n > 0 {
            self.value.append_nulls(n);
            self.typed_nulls(n);
        }
    }

    /// Appends `n` NULLs to `typed_value` (and, for an object, missing fields to keep the
    /// children aligned).
    fn typed_nulls(&mut self, n: usize) {
        match &mut self.typed {
            Typed::None => {}
            Typed::Leaf(leaf) => leaf.append_nulls(n),
            Typed::Object {
                children, validity, ..
            } => {
                children.iter_mut().for_each(|c| c.missing += n);
                validity.extend(std::iter::repeat_n(false, n));
            }
            Typed::Array {
                offsets, validity, ..
            } => {
                let end = *offsets.last().expect("starts with 0");
                offsets.extend(std::iter::repeat_n(end, n));
                validity.extend(std::iter::repeat_n(false, n));
            }
        }
    }

    /// Appends `v`, shredded as far as this level's type allows.
    fn append(&mut self, v: Variant<'_>, scratch: &mut Scratch) -> Result<()> {
        self.flush_missing();
        let shredded = match &mut self.typed {
            Typed::None => false,
            // (strings, the commonest leaves, read straight from the header; another value is
            // decoded only to find it corrupt, as for any other leaf)
            Typed::Leaf(Leaf::String(b)) => match v.as_string().map_err(codec_err)? {
                Some(s) => {
                    b.append_value(s);
                    true
                }
                None => {
                    v.get().map_err(codec_err)?;
                    false
                }
            },
            Typed::Leaf(leaf) => leaf.try_append(&v.get().map_err(codec_err)?),
            Typed::Object {
                fields,
                children,
                by_name,
                resolved,
                validity,
            } => match v.get().map_err(codec_err)? {
                Value::Object(object) => {
                    validity.push(true);
                    let ids = match scratch.dictionary {
                        Some(active) => Some(resolve_names(
                            resolved,
                            active,
                            &v.metadata(),
                            fields,
                            by_name,
                        )?),
                        None => None,
                    };
                    let residual = shred_fields(&object, fields, by_name, ids, children, scratch)?;
                    if residual.is_empty() {
                        self.value.append_null();
                    } else {
                        scratch.object.clear();
                        write_object(&mut scratch.object, object.value_bytes(), &residual);
                        self.value.append_value(&scratch.object);
                    }
                    scratch.residuals.push(residual);
                    return Ok(());
                }
                _ => false,
            },
            Typed::Array {
                element,
                offsets,
                validity,
                ..
            } => match v.get().map_err(codec_err)? {
                Value::Array(array) => {
                    for e in array.iter() {
                        element.append(e.map_err(codec_err)?, scratch)?;
                    }
                    let end = i32::try_from(element.value.len())
                        .map_err(|_| DataFusionError::Execution("shredded list too long".into()))?;
                    offsets.push(end);
                    validity.push(true);
                    true
                }
                _ => false,
            },
        };
        if shredded {
            self.value.append_null();
        } else {
            self.value
                .append_value(v.exact_value_bytes().map_err(codec_err)?);
            self.typed_nulls(1);
        }
        Ok(())
    }

    /// The finished level as a (non-null) `{value, typed_value}` struct.
    fn finish_group(mut self) -> Result<StructArray> {
        self.flush_missing();
        let mut value = self.value;
        let mut columns: Vec<ArrayRef> = vec![Arc::new(value.finish())];
        let typed: Option<ArrayRef> = match self.typed {
            Typed::None => None,
            Typed::Leaf(leaf) => Some(leaf.finish()),
            Typed::Object {
                fields,
                children,
                validity,
                ..
            } => {
                let columns = children
                    .into_iter()
                    .map(|c| c.finish_group().map(|g| Arc::new(g) as ArrayRef))
                    .collect::<Result<Vec<_>>>()?;
                Some(Arc::new(StructArray::try_new(
                    fields,
                    columns,
                    nulls_of(validity),
                )?))
            }
            Typed::Array {
                element_field,
                element,
                offsets,
                validity,
            } => {
                let elements = element.finish_group()?;
                Some(Arc::new(ListArray::try_new(
                    element_field,
                    OffsetBuffer::new(ScalarBuffer::from(offsets)),
                    Arc::new(elements),
                    nulls_of(validity),
                )?))
            }
        };
        columns.extend(typed);
        Ok(StructArray::try_new(self.fields, columns, None)?)
    }
}

/// The group fields of a shredded object field or list element.
fn group_of(field: &Field) -> &Fields {
    match field.data_type() {
        DataType::Struct(fields) => fields,
        other => unreachable!("shredded groups are structs, not {other}"),
    }
}

fn nulls_of(validity: Vec<bool>) -> Option<NullBuffer> {
    let nulls = NullBuffer::from(validity);
    (nulls.null_count() > 0).then_some(nulls)
}

/// `by_name` as field ids of the active dictionary, resolved once per dictionary.
fn resolve_names<'r>(
    resolved: &'r mut Vec<ResolvedNames>,
    active: ActiveDictionary,
    metadata: &Metadata<'_>,
    fields: &Fields,
    by_name: &[usize],
) -> Result<&'r [u32]> {
    if resolved.len() <= active.slot {
        resolved.resize_with(active.slot + 1, ResolvedNames::default);
    }
    let names = &mut resolved[active.slot];
    if names.generation != active.generation {
        names.ids.clear();
        for &f in by_name {
            let id = metadata.find(fields[f].name()).map_err(codec_err)?;
            names.ids.push(id.map_or(ABSENT, |id| id as u32));
        }
        names.generation = active.generation;
    }
    Ok(&names.ids)
}

/// Appends each shredded field of `object` to its child level (missing ones as missing) and
/// returns the fields left for the residual `value`: `(field id, byte range)` in the bytes of
/// `object`'s value, in key order. One merge pass over the object's fields and the shredded
/// names, both in key order. With `ids` (the names' ids in a dictionary whose keys ascend) and
/// field ids that ascend, the merge compares ids and reads no key; otherwise it compares keys,
/// and objects stored out of order (DuckDB writes them) are sorted first.
fn shred_fields(
    object: &ObjectView<'_>,
    fields: &Fields,
    by_name: &[usize],
    ids: Option<&[u32]>,
    children: &mut [Level],
    scratch: &mut Scratch,
) -> Result<Vec<(u32, Range<usize>)>> {
    let mut residual = scratch.residuals.pop().unwrap_or_default();
    residual.clear();
    let n = object.len();
    let mut field_ids = scratch.field_ids.pop().unwrap_or_default();
    let by_id = match ids {
        Some(ids) => ascending_field_ids(object, &mut field_ids).then_some(ids),
        None => None,
    };
    let mut order = Vec::new();
    let key = |j: usize| object.key_bytes(j).map_err(codec_err);
    let mut sorted = true;
    if by_id.is_none() {
        let mut previous: Option<&[u8]> = None;
        for j in 0..n {
            let k = key(j)?;
            if previous.is_some_and(|p| p >= k) {
                sorted = false;
                break;
            }
            previous = Some(k);
        }
    }
    if !sorted {
        order = (0..n).collect::<Vec<_>>();
        let mut keys = Vec::with_capacity(n);
        for j in 0..n {
            keys.push(key(j)?);
        }
        order.sort_by(|&a, &b| keys[a].cmp(keys[b]));
        // an object with a key twice is not a variant: shredding would keep one of them
        if let Some(pair) = order.windows(2).find(|p| keys[p[0]] == keys[p[1]]) {
            let key = String::from_utf8_lossy(keys[pair[0]]).into_owned();
            return Err(codec_err(VariantError::DuplicateKey(key)));
        }
    }
    let at = |j: usize| if sorted { j } else { order[j] };
    // field `j` (in key order) against the name at `by_name[r]`; `None`: the name is absent
    let compare = |j: usize, r: usize| -> Result<Option<std::cmp::Ordering>> {
        Ok(match by_id {
            Some(ids) if ids[r] == ABSENT => None,
            Some(ids) => Some(field_ids[j].cmp(&ids[r])),
            None => Some(key(at(j))?.cmp(fields[by_name[r]].name().as_bytes())),
        })
    };
    let base = object.value_bytes().as_ptr() as usize;
    // The fields' values, by their sizes, must fit in the object's data together (checked as
    // each is taken, before it is copied or shredded): values sharing bytes could otherwise make
    // the copies and the shredding longer than the input (see `ObjectView::check_field_sizes`).
    let mut sizes = FieldSizes::new(object.data_len());
    let keep =
        |j: usize, residual: &mut Vec<(u32, Range<usize>)>, sizes: &mut FieldSizes| -> Result<()> {
            let bytes = object
                .value(j)
                .and_then(|v| v.exact_value_bytes())
                .map_err(codec_err)?;
            sizes.take(j, bytes.len()).map_err(codec_err)?;
            let start = bytes.as_ptr() as usize - base;
            let id = object.field_id(j).map_err(codec_err)? as u32;
            residual.push((id, start..start + bytes.len()));
            Ok(())
        };
    let mut j = 0;
    for (r, &f) in by_name.iter().enumerate() {
        let mut found = None;
        while j < n {
            match compare(j, r)? {
                None => break,
                Some(std::cmp::Ordering::Less) => keep(at(j), &mut residual, &mut sizes)?,
                Some(std::cmp::Ordering::Equal) => {
                    found = Some(at(j));
                    j += 1;
                    break;
                }
                Some(std::cmp::Ordering::Greater) => break,
            }
            j += 1;
        }
        match found {
            Some(k) => {
                let value = object.value(k).map_err(codec_err)?;
                sizes
                    .take(k, value.exact_value_bytes().map_err(codec_err)?.len())
                    .map_err(codec_err)?;
                children[f].append(value, scratch)?;
            }
            None => children[f].append_missing(),
        }
    }
    while j < n {
        keep(at(j), &mut residual, &mut sizes)?;
        j += 1;
    }
    scratch.field_ids.push(field_ids);
    Ok(residual)
}

/// Reads the field ids of `object` into `ids`; true when they ascend strictly and are in the
/// dictionary's range (false leaves the object to the merge by keys, which names what is wrong).
fn ascending_field_ids(object: &ObjectView<'_>, ids: &mut Vec<u32>) -> bool {
    ids.clear();
    let dictionary_len = object.metadata().len();
    for j in 0..object.len() {
        match object.field_id(j) {
            Ok(id) if id < dictionary_len && ids.last().is_none_or(|&p| (p as usize) < id) => {
                ids.push(id as u32)
            }
            _ => return false,
        }
    }
    true
}

/// A primitive `typed_value` column being written.
enum Leaf {
    Boolean(BooleanBuilder),
    Int8(Int8Builder),
    Int16(Int16Builder),
    Int32(Int32Builder),
    Int64(Int64Builder),
    Float(Float32Builder),
    Double(Float64Builder),
    Decimal(Decimal128Builder, u8, u8),
    Date(Date32Builder),
    /// Timestamps adjusted to UTC (`timestamp`) when the type has a time zone, else
    /// `timestamp_ntz`.
    Timestamp(TimestampMicrosecondBuilder, bool),
    TimestampNanos(TimestampNanosecondBuilder, bool),
    Time(Time64MicrosecondBuilder),
    String(StringBuilder),
    Binary(BinaryBuilder),
    Uuid(FixedSizeBinaryBuilder),
}

impl Leaf {
    fn new(t: &DataType, capacity: usize) -> Self {
        match t {
            DataType::Boolean => Leaf::Boolean(BooleanBuilder::with_capacity(capacity)),
            DataType::Int8 => Leaf::Int8(Int8Builder::with_capacity(capacity)),
            DataType::Int16 => Leaf::Int16(Int16Builder::with_capacity(capacity)),
            DataType::Int32 => Leaf::Int32(Int32Builder::with_capacity(capacity)),
            DataType::Int64 => Leaf::Int64(Int64Builder::with_capacity(capacity)),
            DataType::Float32 => Leaf::Float(Float32Builder::with_capacity(capacity)),
            DataType::Float64 => Leaf::Double(Float64Builder::with_capacity(capacity)),
            DataType::Decimal128(p, s) => Leaf::Decimal(
                Decimal128Builder::with_capacity(capacity)
                    .with_precision_and_scale(*p, *s)
                    .expect("checked by typed_value_type"),
                *p,
                *s as u8,
            ),
            DataType::Date32 => Leaf::Date(Date32Builder::with_capacity(capacity)),
            DataType::Timestamp(TimeUnit::Nanosecond, tz) => Leaf::TimestampNanos(
                TimestampNanosecondBuilder::with_capacity(capacity).with_timezone_opt(tz.clone()),
                tz.is_some(),
            ),
            DataType::Time64(_) => Leaf::Time(Time64MicrosecondBuilder::with_capacity(capacity)),
            DataType::FixedSizeBinary(_) => {
                Leaf::Uuid(FixedSizeBinaryBuilder::with_capacity(capacity, 16))
            }
            DataType::Timestamp(_, tz) => Leaf::Timestamp(
                TimestampMicrosecondBuilder::with_capacity(capacity).with_timezone_opt(tz.clone()),
                tz.is_some(),
            ),
            DataType::Utf8 => Leaf::String(StringBuilder::with_capacity(capacity, 0)),
            DataType::Binary => Leaf::Binary(BinaryBuilder::with_capacity(capacity, 0)),
            other => unreachable!("typed_value_type admits no {other}"),
        }
    }

    fn append_nulls(&mut self, n: usize) {
        match self {
            Leaf::Boolean(b) => b.append_nulls(n),
            Leaf::Int8(b) => b.append_nulls(n),
            Leaf::Int16(b) => b.append_nulls(n),
            Leaf::Int32(b) => b.append_nulls(n),
            Leaf::Int64(b) => b.append_nulls(n),
            Leaf::Float(b) => b.append_nulls(n),
            Leaf::Double(b) => b.append_nulls(n),
            Leaf::Decimal(b, ..) => b.append_nulls(n),
            Leaf::Date(b) => b.append_nulls(n),
            Leaf::Timestamp(b, _) => b.append_nulls(n),
            Leaf::TimestampNanos(b, _) => b.append_nulls(n),
            Leaf::Time(b) => b.append_nulls(n),
            Leaf::String(b) => b.append_nulls(n),
            Leaf::Binary(b) => b.append_nulls(n),
            Leaf::Uuid(b) => b.append_nulls(n),
        }
    }

    /// Appends `v` when this column represents it exactly; false (nothing appended) otherwise.
    fn try_append(&mut self, v: &Value<'_>) -> bool {
        match (self, v) {
            (Leaf::Boolean(b), Value::Boolean(x)) => b.append_value(*x),
            (Leaf::Int8(b), _) => match exact_integer(v).and_then(|x| i8::try_from(x).ok()) {
                Some(x) => b.append_value(x),
                None => return false,
            },
            (Leaf::Int16(b), _) => match exact_integer(v).and_then(|x| i16::try_from(x).ok()) {
                Some(x) => b.append_value(x),
                None => return false,
            },
            (Leaf::Int32(b), _) => match exact_integer(v).and_then(|x| i32::try_from(x).ok()) {
                Some(x) => b.append_value(x),
                None => return false,
            },
            (Leaf::Int64(b), _) => match exact_integer(v).and_then(|x| i64::try_from(x).ok()) {
                Some(x) => b.append_value(x),
                None => return false,
            },
            (Leaf::Float(b), Value::Float(x)) => b.append_value(*x),
            (Leaf::Double(b), Value::Double(x)) => b.append_value(*x),
            (Leaf::Decimal(b, precision, scale), _) => match exact_decimal(v, *precision, *scale) {
                Some(x) => b.append_value(x),
                None => return false,
            },
            (Leaf::Date(b), Value::Date(x)) => b.append_value(*x),
            (Leaf::Timestamp(b, true), Value::Timestamp(x)) => b.append_value(*x),
            (Leaf::Timestamp(b, false), Value::TimestampNtz(x)) => b.append_value(*x),
            (Leaf::TimestampNanos(b, true), Value::TimestampNanos(x)) => b.append_value(*x),
            (Leaf::TimestampNanos(b, false), Value::TimestampNtzNanos(x)) => b.append_value(*x),
            (Leaf::Time(b), Value::Time(x)) => b.append_value(*x),
            (Leaf::String(b), Value::String(x)) => b.append_value(x),
            (Leaf::Binary(b), Value::Binary(x)) => b.append_value(x),
            (Leaf::Uuid(b), Value::Uuid(x)) => b.append_value(x).expect("16 bytes"),
            _ => return false,
        }
        true
    }

    fn finish(self) -> ArrayRef {
        match self {
            Leaf::Boolean(mut b) => Arc::new(b.finish()),
            Leaf::Int8(mut b) => Arc::new(b.finish()),
            Leaf::Int16(mut b) => Arc::new(b.finish()),
            Leaf::Int32(mut b) => Arc::new(b.finish()),
            Leaf::Int64(mut b) => Arc::new(b.finish()),
            Leaf::Float(mut b) => Arc::new(b.finish()),
            Leaf::Double(mut b) => Arc::new(b.finish()),
            Leaf::Decimal(mut b, ..) => Arc::new(b.finish()),
            Leaf::Date(mut b) => Arc::new(b.finish()),
            Leaf::Timestamp(mut b, _) => Arc::new(b.finish()),
            Leaf::TimestampNanos(mut b, _) => Arc::new(b.finish()),
            Leaf::Time(mut b) => Arc::new(b.finish()),
            Leaf::String(mut b) => Arc::new(b.finish()),
            Leaf::Binary(mut b) => ArrayBuilder::finish(&mut b),
            Leaf::Uuid(mut b) => Arc::new(b.finish()),
        }
    }
}

/// An exact numeric value as `(unscaled, scale)`; None for other kinds.
fn exact_numeric(v: &Value<'_>) -> Option<(i128, u8)> {
    Some(match *v {
        Value::Int8(x) => (x as i128, 0),
        Value::Int16(x) => (x as i128, 0),
        Value::Int32(x) => (x as i128, 0),
        Value::Int64(x) => (x as i128, 0),
        Value::Decimal4(x, s) => (x as i128, s),
        Value::Decimal8(x, s) => (x as i128, s),
        Value::Decimal16(x, s) => (x, s),
        _ => return None,
    })
}

/// An exact numeric value that is a whole number.
fn exact_integer(v: &Value<'_>) -> Option<i128> {
    let (unscaled, scale) = exact_numeric(v)?;
    let divisor = 10i128.checked_pow(scale as u32)?;
    (unscaled % divisor == 0).then(|| unscaled / divisor)
}

/// An exact numeric value as the unscaled value of `DECIMAL(precision, scale)`, when it fits
/// without rounding.
fn exact_decimal(v: &Value<'_>, precision: u8, scale: u8) -> Option<i128> {
    let (unscaled, from) = exact_numeric(v)?;
    let rescaled = if from > scale {
        let divisor = 10i128.checked_pow((from - scale) as u32)?;
        if unscaled % divisor != 0 {
            return None;
        }
        unscaled / divisor
    } else {
        unscaled.checked_mul(10i128.checked_pow((scale - from) as u32)?)?
    };
    let limit = 10i128.checked_pow(precision as u32).unwrap_or(i128::MAX);
    (rescaled.unsigned_abs() < limit.unsigned_abs()).then_some(rescaled)
}

#[cfg(test)]
mod tests {
    //! Expected layouts are the tables of `spec/VariantShredding.md`.
    use datafusion::arrow::array::{Array, AsArray};
    use datafusion::arrow::datatypes::{Int32Type, Int64Type, TimestampMicrosecondType};

    use super::*;
    use crate::cast::target_type::parse_target_type;
    use crate::codec::{JsonParser, SessionTimeZone, VariantBuilder, write_json};
    use crate::variant_array::VariantArrayBuilder;

    /// One row: what to build, or None for SQL NULL.
    type Row = Option<Box<dyn Fn(&mut VariantBuilder)>>;

    /// A variant column of the rows (None: SQL NULL).
    fn column(rows: Vec<Row>) -> ArrayRef {
        let mut out = VariantArrayBuilder::with_capacity(rows.len());
        let mut b = VariantBuilder::new();
        for row in rows {
            match row {
                None => out.append_null(),
                Some(build) => {
                    b.reset();
                    build(&mut b);
                    b.finish().unwrap();
                    out.append_built(&b);
                }
            }
        }
        out.finish().unwrap()
    }

    fn json_column(docs: &[Option<&str>]) -> ArrayRef {
        column(
            docs.iter()
                .map(|d| {
                    d.map(|d| {
                        let d = d.to_string();
                        Box::new(move |b: &mut VariantBuilder| {
                            JsonParser::new().parse(&d, b).unwrap()
                        }) as Box<dyn Fn(&mut VariantBuilder)>
                    })
                })
                .collect(),
        )
    }

    fn shred(array: &ArrayRef, ty: &str) -> StructArray {
        shred_variant(array, &parse_target_type(ty).unwrap())
            .unwrap()
            .as_struct()
            .clone()
    }

    fn child<'a>(s: &'a StructArray, name: &str) -> &'a StructArray {
        s.column_by_name(name).unwrap().as_struct()
    }

    /// `value` of row `i` as JSON (with the row's metadata), None when NULL.
    fn value_json(root: &StructArray, group: &StructArray, i: usize) -> Option<String> {
        let value = group.column_by_name("value").unwrap().as_binary::<i32>();
        if value.is_null(i) {
            return None;
        }
        let metadata = root.column_by_name("metadata").unwrap().as_binary::<i32>();
        let mut out = vec![];
        write_json(
            &mut out,
            Variant::try_new(metadata.value(i), value.value(i)).unwrap(),
            &SessionTimeZone::utc(),
        )
        .unwrap();
        Some(String::from_utf8(out).unwrap())
    }

    fn typed(group: &StructArray) -> &ArrayRef {
        group.column_by_name("typed_value").unwrap()
    }

    fn to_json_rows(array: &ArrayRef) -> Vec<Option<String>> {
        let column = variant_column(array).unwrap();
        let rows = column.rows().unwrap();
        (0..column.len())
            .map(|i| {
                rows.get(i).unwrap().map(|v| {
                    let mut out = vec![];
                    write_json(&mut out, v, &SessionTimeZone::utc()).unwrap();
                    String::from_utf8(out).unwrap()
                })
            })
            .collect()
    }

    fn event(fields: &'static [(&'static str, Option<&'static str>, Option<i64>)]) -> Row {
        Some(Box::new(move |b: &mut VariantBuilder| {
            b.begin_object();
            for (key, text, ts) in fields {
                b.key(key);
                match (text, ts) {
                    (Some(t), _) => b.string(t),
                    (None, Some(ts)) => b.timestamp_micros(*ts),
                    (None, None) => b.null(),
                }
            }
            b.end_object().unwrap();
        }))
    }

    #[test]
    fn the_spec_event_table() {
        let rows: Vec<Row> = vec![
            event(&[
                ("event_type", Some("noop"), None),
                ("event_ts", None, Some(1729794114937)),
            ]),
            event(&[
                ("event_type", Some("login"), None),
                ("event_ts", None, Some(1729794146402)),
                ("email", Some("user@example.com"), None),
            ]),
            event(&[("error_msg", Some("malformed: ..."), None)]),
            Some(Box::new(|b: &mut VariantBuilder| {
                b.string("malformed: not an object")
            })),
            event(&[
                ("event_ts", None, Some(1729794240241)),
                ("click", Some("_button"), None),
            ]),
            event(&[
                ("event_type", None, None),
                ("event_ts", None, Some(1729794954163)),
            ]),
            event(&[
                ("event_type", Some("noop"), None),
                ("event_ts", Some("2024-10-24"), None),
            ]),
            event(&[]),
            Some(Box::new(|b: &mut VariantBuilder| b.null())),
            None,
        ];
        let s = shred(
            &column(rows),
            "struct<event_type string, event_ts timestamp>",
        );
        let t = typed(&s).as_struct();
        let event_type = child(t, "event_type");
        let event_ts = child(t, "event_ts");
        let et_typed = typed(event_type).as_string::<i32>();
        let ts_typed = typed(event_ts).as_primitive::<TimestampMicrosecondType>();
        let opt_str = |i: usize| et_typed.is_valid(i).then(|| et_typed.value(i).to_string());
        let opt_ts = |i: usize| ts_typed.is_valid(i).then(|| ts_typed.value(i));
        // (value, typed_value non-null, event_type.value, .typed_value, event_ts.value, .typed_value)
        type Expected = (
            Option<&'static str>,
            bool,
            Option<&'static str>,
            Option<&'static str>,
            Option<&'static str>,
            Option<i64>,
        );
        let expected: [Expected; 9] = [
            (None, true, None, Some("noop"), None, Some(1729794114937)),
            (
                Some(r#"{"email":"user@example.com"}"#),
                true,
                None,
                Some("login"),
                None,
                Some(1729794146402),
            ),
            (
                Some(r#"{"error_msg":"malformed: ..."}"#),
                true,
                None,
                None,
                None,
                None,
            ),
            (
                Some(r#""malformed: not an object""#),
                false,
                None,
                None,
                None,
                None,
            ),
            (
                Some(r#"{"click":"_button"}"#),
                true,
                None,
                None,
                None,
                Some(1729794240241),
            ),
            (None, true, Some("null"), None, None, Some(1729794954163)),
            (
                None,
                true,
                None,
                Some("noop"),
                Some(r#""2024-10-24""#),
                None,
            ),
            (None, true, None, None, None, None),
            (Some("null"), false, None, None, None, None),
        ];
        for (i, e) in expected.iter().enumerate() {
            let got = (
                value_json(&s, &s, i),
                t.is_valid(i),
                value_json(&s, event_type, i),
                opt_str(i),
                value_json(&s, event_ts, i),
                opt_ts(i),
            );
            let want = (
                e.0.map(String::from),
                e.1,
                e.2.map(String::from),
                e.3.map(String::from),
                e.4.map(String::from),
                e.5,
            );
            assert_eq!(got, want, "row {i}");
        }
        // the last row is SQL NULL: the variant itself is missing
        assert!(s.is_null(9));
        // the field groups are required: never NULL themselves
        assert_eq!(event_type.null_count(), 0);
        assert_eq!(event_ts.null_count(), 0);
    }

    #[test]
    fn the_spec_measurement_table() {
        let input = json_column(&[Some("34"), Some("null"), Some(r#""n/a""#), Some("100")]);
        let s = shred(&input, "bigint");
        let value = s.column_by_name("value").unwrap().as_binary::<i32>();
        let typed = typed(&s).as_primitive::<Int64Type>();
        let got: Vec<_> = (0..4)
            .map(|i| {
                (
                    value.is_valid(i).then(|| value.value(i).to_vec()),
                    typed.is_valid(i).then(|| typed.value(i)),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (None, Some(34)),
                (Some(vec![0x00]), None),
                // a short string of 3 bytes: header (3 << 2) | 1 = 13
                (Some(vec![13, b'n', b'/', b'a']), None),
                (None, Some(100)),
            ]
        );
        // each row's metadata is kept unchanged
        let metadata = s.column_by_name("metadata").unwrap().as_binary::<i32>();
        let original = input.as_struct().column(0).as_binary::<i32>();
        assert!((0..4).all(|i| metadata.value(i) == original.value(i)));
    }

    #[test]
    fn the_spec_tags_table() {
        let input = json_column(&[
            Some(r#"["comedy","drama"]"#),
            Some(r#"["horror",null]"#),
            Some(r#"["comedy","drama","romance"]"#),
            Some("null"),
        ]);
        let s = shred(&input, "array<string>");
        let list = typed(&s).as_list::<i32>();
        assert_eq!(
            (0..4).map(|i| list.is_valid(i)).collect::<Vec<_>>(),
            [true, true, true, false]
        );
        assert_eq!(value_json(&s, &s, 3).as_deref(), Some("null"));
        assert!((0..3).all(|i| value_json(&s, &s, i).is_none()));
        assert_eq!(list.value_offsets(), &[0, 2, 4, 7, 7]);
        let elements = list.values().as_struct();
        let element_typed = typed(elements).as_string::<i32>();
        let got: Vec<_> = (0..7)
            .map(|j| {
                (
                    value_json(&s, elements, j),
                    element_typed
                        .is_valid(j)
                        .then(|| element_typed.value(j).to_string()),
                )
            })
            .collect();
        let strings = [
            "comedy", "drama", "horror", "", "comedy", "drama", "romance",
        ];
        for (j, (value, typed)) in got.iter().enumerate() {
            if j == 3 {
                // a null element: Variant null in value (elements are never missing)
                assert_eq!((value.as_deref(), typed.as_deref()), (Some("null"), None));
            } else {
                assert_eq!(
                    (value.as_deref(), typed.as_deref()),
                    (None, Some(strings[j]))
                );
            }
        }
    }

    #[test]
    fn exact_numerics_shred_into_any_column_that_holds_them() {
        // int8, int64, decimal 1.50 (scale 2), decimal 2.00, a double, a too-large int
        let input = json_column(&[
            Some("7"),
            Some("3000000000"),
            Some("1.50"),
            Some("2.00"),
            Some("1e0"),
            Some("300"),
        ]);
        let ints = shred(&input, "int");
        let typed_ints = typed(&ints).as_primitive::<Int32Type>();
        let got: Vec<_> = (0..6)
            .map(|i| typed_ints.is_valid(i).then(|| typed_ints.value(i)))
            .collect();
        // 2.00 is the whole number 2; 1.50 and the double are not exact integers; 3e9 overflows
        assert_eq!(got, [Some(7), None, None, Some(2), None, Some(300)]);
        let tiny = shred(&input, "tinyint");
        assert!(typed(&tiny).is_null(5), "300 does not fit a tinyint");
        let decimals = shred(&input, "decimal(4,1)");
        let d = typed(&decimals).as_primitive::<datafusion::arrow::datatypes::Decimal128Type>();
        let got: Vec<_> = (0..6).map(|i| d.is_valid(i).then(|| d.value(i))).collect();
        // 7 -> 7.0; 3e9 needs more than 4 digits; 1.50 -> 1.5; 2.00 -> 2.0; 300 -> 300.0
        assert_eq!(got, [Some(70), None, Some(15), Some(20), None, Some(3000)]);
        let narrower = shred(&input, "decimal(3,0)");
        assert!(typed(&narrower).is_null(2), "1.50 would need rounding");
        // rows left in value keep their original bytes
        assert_eq!(value_json(&ints, &ints, 2).as_deref(), Some("1.5"));
        assert_eq!(value_json(&ints, &ints, 4).as_deref(), Some("1.0"));
    }

    #[test]
    fn shredding_then_reassembling_gives_the_same_json() {
        let docs = [
            Some(r#"{"a":1,"b":"x","c":[1,2,{"d":null}],"e":{"f":1.25,"g":[]}}"#),
            Some(r#"{"a":"not an int","z":{"deep":[1,[2,[3]]]},"e":"no object"}"#),
            Some(r#"{"e":{"f":1e300,"h":true},"c":"no array"}"#),
            Some(r#"[{"a":1}]"#),
            Some("{}"),
            Some("null"),
            None,
            Some(r#"{"b":null,"c":[null,null],"a":-9223372036854775808}"#),
        ];
        let input = json_column(&docs);
        let expected = to_json_rows(&input);
        for ty in [
            "struct<a bigint, b string, c array<variant>, e struct<f decimal(10,2), g array<int>>>",
            "struct<a int, c array<struct<d string>>, e variant>",
            "struct<z struct<deep array<array<bigint>>>>",
            "array<struct<a bigint>>",
            "variant",
            "string",
            "boolean",
        ] {
            let shredded: ArrayRef = Arc::new(shred(&input, ty));
            assert_eq!(to_json_rows(&shredded), expected, "shredded as {ty}");
        }
    }

    #[test]
    fn unshreddable_types_are_errors() {
        for (ty, message) in [
            (
                "map<string, int>",
                "cannot shred a variant as MAP<STRING, INT>",
            ),
            (
                "struct<a map<string, int>>",
                "cannot shred a variant.a as MAP<STRING, INT>",
            ),
            (
                "array<map<string, int>>",
                "cannot shred a variant[] as MAP<STRING, INT>",
            ),
        ] {
            let err = shredded_variant_type(&parse_target_type(ty).unwrap()).unwrap_err();
            assert!(err.to_string().contains(message), "{ty}: {err}");
        }
        let dup = DataType::Struct(Fields::from(vec![
            Field::new("a", DataType::Int64, true),
            Field::new("a", DataType::Utf8, true),
        ]));
        let err = shredded_variant_type(&dup).unwrap_err();
        assert!(
            err.to_string().contains("field `a` is named twice"),
            "{err}"
        );
        let empty = DataType::Struct(Fields::empty());
        assert!(shredded_variant_type(&empty).is_err());
    }

    #[test]
    fn objects_stored_out_of_key_order_shred_the_same() {
        // keys a, b, z (sorted dictionary); the object stores z, a, b (as DuckDB may)
        let metadata = [0x11, 3, 0, 1, 2, 3, b'a', b'b', b'z'];
        let data = [0x0C, 3, 0x0C, 1, 0x0C, 2]; // int8 3 (z), 1 (a), 2 (b)
        let mut value = vec![];
        write_object(&mut value, &data, &[(2, 0..2), (0, 2..4), (1, 4..6)]);
        let mut out = VariantArrayBuilder::with_capacity(1);
        out.append(&metadata, &value);
        let input = out.finish().unwrap();
        let s = shred(&input, "struct<b bigint>");
        let b = child(typed(&s).as_struct(), "b");
        assert_eq!(typed(b).as_primitive::<Int64Type>().value(0), 2);
        // the residual keeps a and z, now in key order
        assert_eq!(value_json(&s, &s, 0).as_deref(), Some(r#"{"a":1,"z":3}"#));
        let residual = s
            .column_by_name("value")
            .unwrap()
            .as_binary::<i32>()
            .value(0);
        let v = Variant::try_new(&metadata, residual).unwrap();
        let Value::Object(o) = v.get().unwrap() else {
            panic!("residual is an object")
        };
        assert!(o.is_sorted().unwrap());
    }

    /// Rows that share dictionaries are matched to the shredded fields by id, resolved once per
    /// dictionary: here `a` is id 0 in some dictionaries and id 1 in others, 100 dictionaries
    /// take turns in runs of three rows (more than are cached, so entries are replaced and
    /// resolved again); a second input has a new dictionary in every row (caching stops).
    #[test]
    fn rows_sharing_dictionaries_shred_each_by_its_own() {
        let doc = |i: usize, d: usize| {
            if d.is_multiple_of(3) {
                format!(r#"{{"a":{i},"z{d}":{i}}}"#)
            } else {
                format!(r#"{{"0{d}":{i},"a":{i},"n":{{"a":{i}}}}}"#)
            }
        };
        for dictionary_of in [|i: usize| i / 3, |i: usize| i] {
            let docs: Vec<String> = (0..300).map(|i| doc(i, dictionary_of(i))).collect();
            let refs: Vec<Option<&str>> = docs.iter().map(|d| Some(d.as_str())).collect();
            let input = json_column(&refs);
            let s = shred(&input, "struct<a bigint, n struct<a bigint>>");
            let a = child(typed(&s).as_struct(), "a");
            let n = child(typed(&s).as_struct(), "n");
            let n_a = child(typed(n).as_struct(), "a");
            for i in 0..300 {
                let d = dictionary_of(i);
                assert_eq!(typed(a).as_primitive::<Int64Type>().value(i), i as i64);
                let residual = if d.is_multiple_of(3) {
                    format!(r#"{{"z{d}":{i}}}"#)
                } else {
                    format!(r#"{{"0{d}":{i}}}"#)
                };
                assert_eq!(value_json(&s, &s, i), Some(residual), "row {i}");
                if d.is_multiple_of(3) {
                    assert!(typed(n).is_null(i), "row {i}");
                } else {
                    assert_eq!(typed(n_a).as_primitive::<Int64Type>().value(i), i as i64);
                }
            }
            let shredded: ArrayRef = Arc::new(s);
            assert_eq!(to_json_rows(&shredded), to_json_rows(&input));
        }
    }

    /// The cache hands out an entry for a dictionary whose keys ascend, the same one for the same
    /// bytes, none for a dictionary flagged sorted whose keys are not, and a new generation when
    /// an entry is replaced.
    #[test]
    fn dictionaries_are_cached_by_their_bytes() {
        let ascending = [0x11, 2, 0, 1, 2, b'a', b'b'];
        let lying = [0x11, 2, 0, 1, 2, b'b', b'a'];
        let mut cache = Dictionaries::default();
        fn metadata(bytes: &[u8]) -> Metadata<'_> {
            Metadata::try_new(bytes).unwrap()
        }
        let first = cache.activate(&metadata(&ascending)).expect("keys ascend");
        assert!(cache.activate(&metadata(&lying)).is_none());
        let again = cache.activate(&metadata(&ascending)).expect("cached");
        assert_eq!(
            (again.slot, again.generation),
            (first.slot, first.generation)
        );
        // other dictionaries of one key each, each used three times (so that caching goes on),
        // until `ascending` is replaced
        for k in 0..CACHED_DICTIONARIES as u8 {
            let other = [0x11, 1, 0, 2, b'c' + k % 20, b'0' + k / 20];
            for _ in 0..3 {
                assert!(cache.activate(&metadata(&other)).is_some());
            }
        }
        let back = cache.activate(&metadata(&ascending)).expect("added again");
        assert_ne!(back.generation, first.generation);
    }

    /// A shredded name the dictionary lacks, with a residual field sorting between it and the
    /// next name: `b` is missing, `a` stays in the residual, `z` is shredded (rows sharing one
    /// dictionary, matched by id).
    #[test]
    fn a_missing_name_before_a_residual_field_and_a_shredded_one() {
        let input = json_column(&[Some(r#"{"a":1,"z":2}"#), Some(r#"{"a":3,"z":4}"#)]);
        let s = shred(&input, "struct<b bigint, z bigint>");
        let b = child(typed(&s).as_struct(), "b");
        let z = child(typed(&s).as_struct(), "z");
        for (i, (a, z_value)) in [(1, 2), (3, 4)].into_iter().enumerate() {
            assert!(typed(b).is_null(i) && b.column_by_name("value").unwrap().is_null(i));
            assert_eq!(typed(z).as_primitive::<Int64Type>().value(i), z_value);
            assert_eq!(value_json(&s, &s, i), Some(format!(r#"{{"a":{a}}}"#)));
        }
    }

    /// A dictionary flagged sorted whose keys are not (`b`, `a`) is not trusted: an object whose
    /// ids ascend still has its keys read. (Trusting the flag, `b` would not be found and would
    /// stay in the residual.)
    #[test]
    fn dictionaries_flagged_sorted_are_checked() {
        let metadata = [0x11, 2, 0, 1, 2, b'b', b'a'];
        let data = [0x0C, 2, 0x0C, 1]; // int8 2 (b, id 0), 1 (a, id 1)
        let mut value = vec![];
        write_object(&mut value, &data, &[(0, 0..2), (1, 2..4)]);
        let mut out = VariantArrayBuilder::with_capacity(2);
        out.append(&metadata, &value);
        out.append(&metadata, &value);
        let input = out.finish().unwrap();
        let s = shred(&input, "struct<a bigint, b bigint>");
        for i in 0..2 {
            let a = child(typed(&s).as_struct(), "a");
            let b = child(typed(&s).as_struct(), "b");
            assert_eq!(typed(a).as_primitive::<Int64Type>().value(i), 1);
            assert_eq!(typed(b).as_primitive::<Int64Type>().value(i), 2);
            assert!(s.column_by_name("value").unwrap().is_null(i));
        }
    }

    #[test]
    fn an_object_with_a_key_twice_is_an_error() {
        // the dictionary holds "a" twice (ids 0 and 1); the object {a: 1, a: 2} uses both, or id
        // 0 twice: shredding would keep one of the two values
        let metadata = [0x01, 2, 0, 1, 2, b'a', b'a'];
        let data = [0x0C, 1, 0x0C, 2]; // int8 1, int8 2
        for ids in [[0, 1], [0, 0]] {
            let mut value = vec![];
            write_object(&mut value, &data, &[(ids[0], 0..2), (ids[1], 2..4)]);
            let mut out = VariantArrayBuilder::with_capacity(1);
            out.append(&metadata, &value);
            let input = out.finish().unwrap();
            for ty in ["struct<a bigint>", "struct<b bigint>"] {
                let error = shred_variant(&input, &parse_target_type(ty).unwrap()).unwrap_err();
                assert!(
                    error.to_string().contains(r#"duplicate object key "a""#),
                    "{ids:?} {ty}: {error}"
                );
            }
        }
    }

    #[test]
    fn corrupt_input_is_an_error_not_a_panic() {
        let input = json_column(&[Some(r#"{"a":[1,2,3],"b":"x"}"#)]);
        let s = input.as_struct();
        let metadata = s.column(0).as_binary::<i32>().value(0).to_vec();
        let value = s.column(1).as_binary::<i32>().value(0).to_vec();
        for cut in 0..value.len() {
            let mut out = VariantArrayBuilder::with_capacity(1);
            out.append(&metadata, &value[..cut]);
            let array = out.finish().unwrap();
            for ty in ["struct<a array<int>, b string>", "variant", "bigint"] {
                // an error or a (garbage-in) result, never a panic
                let _ = shred_variant(&array, &parse_target_type(ty).unwrap());
            }
        }
    }
}
