//! `to_json` straight from shredded columns: each row's JSON text is written from its typed
//! columns and residual `value`s without reassembling the variant first (no field ids to look
//! up, no values encoded and copied up level by level only to be read again). The text is the
//! one `to_json` gives for the reassembled value, byte for byte: object fields in name order
//! (a residual object alone: in its stored order), typed values rendered by the same writer,
//! residual objects merged by the byte-level reader with the row's keys read once
//! ([`JsonRowWriter::row_keys`]), what it cannot read by the checked views.
use std::cmp::Ordering;
use std::sync::Arc;

use crate::variant_array::invalid_variant;
use datafusion::arrow::array::{Array, ArrayRef, StringArray, StructArray};
use datafusion::common::Result;

use super::reassemble::{
    Bytes, FieldSizes, GroupPlan, Lists, ObjectField, Primitive, RowBuffers, ShreddedRows, Typed,
    is_shredded, residual_object,
};
use super::{codec_err, stack_checked_every_few_levels};
use crate::codec::format::{write_i64, write_json_bytes};
use crate::codec::json_write::{KeyText, write_in_row, write_raw_value};
use crate::codec::raw::{RawChildren, RawLayout, compare_keys};
use crate::codec::{
    EMPTY_METADATA, JsonRowWriter, Metadata, ObjectView, SessionTimeZone, Unreadable, basic_type,
    value_size,
};

/// One field of an object being written: a shredded one, or one of the residual object's
/// (`(key, value bytes)`).
enum Field<'k> {
    Shredded(&'k ObjectField<'k>),
    Residual(&'k [u8], &'k [u8]),
}

impl Field<'_> {
    fn key(&self) -> &[u8] {
        match self {
            Field::Shredded(f) => f.name.as_bytes(),
            Field::Residual(key, _) => key,
        }
    }
}

/// The row being written: its metadata (the checked view, and the byte-level writer's key
/// dictionary where that can read it) and its index.
#[derive(Clone, Copy)]
struct Row<'k> {
    meta: Metadata<'k>,
    keys: Option<KeyText<'k>>,
    i: usize,
}

/// Writes the JSON text of one batch's rows.
struct JsonWriter<'k, 'tz> {
    rows: JsonRowWriter,
    tz: &'tz SessionTimeZone,
    /// A typed primitive encoded as a variant, to be rendered.
    scalar: Vec<u8>,
    /// The fields of the objects being written, one list per depth.
    fields: Vec<Vec<Field<'k>>>,
}

impl<'k> JsonWriter<'k, '_> {
    /// Appends the JSON of `g` at the row; false (nothing written) when the value is missing.
    /// (The recursion checks the stack at the objects every few levels and at each array
    /// ([`Self::array`]), not at each primitive.)
    #[inline]
    fn group(
        &mut self,
        row: &Row<'k>,
        g: &'k GroupPlan<'k>,
        out: &mut Vec<u8>,
        depth: usize,
    ) -> Result<bool> {
        let value = g.value.as_ref().and_then(|v: &Bytes<'k>| v.get(row.i));
        let Some((_, typed)) = g.typed.as_ref().filter(|(t, _)| t.is_valid(row.i)) else {
            return match value {
                Some(v) => {
                    self.residual(out, row, v)?;
                    Ok(true)
                }
                None => Ok(false),
            };
        };
        match typed {
            Typed::Object(fields) => stack_checked_every_few_levels(depth, || {
                self.object(row, fields, value, out, depth)
            })?,
            _ if value.is_some() => {
                return Err(invalid_variant(
                    "Invalid variant, conflicting value and typed_value",
                ));
            }
            Typed::Primitive(p) => self.primitive(p, row.i, out)?,
            Typed::Array(lists, element) => self.array(row, lists, element, out, depth)?,
        }
        Ok(true)
    }

    /// Appends the shredded array of the row.
    #[recursive::recursive]
    fn array(
        &mut self,
        row: &Row<'k>,
        lists: &Lists<'k>,
        element: &'k GroupPlan<'k>,
        out: &mut Vec<u8>,
        depth: usize,
    ) -> Result<()> {
        out.push(b'[');
        for (n, j) in lists.range(row.i).enumerate() {
            if n > 0 {
                out.push(b',');
            }
            // a missing element reads as a variant null
            let element_row = Row { i: j, ..*row };
            if !self.group(&element_row, element, out, depth + 1)? {
                out.extend_from_slice(b"null");
            }
        }
        out.push(b']');
        Ok(())
    }

    /// Appends the object of the row: its shredded fields and its residual's, in name order.
    fn object(
        &mut self,
        row: &Row<'k>,
        shredded: &'k [ObjectField<'k>],
        residual: Option<&'k [u8]>,
        out: &mut Vec<u8>,
        depth: usize,
    ) -> Result<()> {
        let Some(residual) = residual else {
            // the shredded fields alone, already in name order: a field is written with its
            // key, and taken back if it turns out missing
            out.push(b'{');
            let mut first = true;
            for f in shredded {
                self.shredded_field(row, f, out, depth, &mut first)?;
            }
            out.push(b'}');
            return Ok(());
        };
        if let Some(keys) = &row.keys
            && self.merged(row, keys, shredded, residual, out, depth)?
        {
            return Ok(());
        }
        // the residual cannot be read byte by byte, or its keys are out of order (an invalid
        // value, written as before): read it with the checked views, collect the fields and
        // sort them
        let i = row.i;
        let obj = residual_object(row.meta, residual)?;
        if self.fields.len() <= depth {
            self.fields.resize_with(depth + 1, Vec::new);
        }
        let mut fields = std::mem::take(&mut self.fields[depth]);
        fields.clear();
        fields.extend(
            shredded
                .iter()
                .filter(|f| f.is_present(i))
                .map(Field::Shredded),
        );
        let typed = fields.len();
        for j in 0..obj.len() {
            let key = obj.key_bytes(j).map_err(codec_err)?;
            if is_shredded(shredded, key) {
                continue;
            }
            let child = obj.value(j).map_err(codec_err)?;
            fields.push(Field::Residual(
                key,
                child.exact_value_bytes().map_err(codec_err)?,
            ));
        }
        if fields.len() > typed && typed > 0 {
            // (stable, as the reassembly's: duplicate keys of invalid input keep one order)
            fields.sort_by(|a, b| a.key().cmp(b.key()));
        }
        out.push(b'{');
        for (n, field) in fields.iter().enumerate() {
            if n > 0 {
                out.push(b',');
            }
            match field {
                Field::Shredded(f) => {
                    out.extend_from_slice(&f.json_key);
                    self.group(row, &f.group, out, depth + 1)?;
                }
                Field::Residual(key, value) => self.residual_field(out, row, key, value)?,
            }
        }
        out.push(b'}');
        self.fields[depth] = fields;
        Ok(())
    }

    /// Appends the object of the row by merging its shredded fields with the fields of its
    /// residual object, both in name order, in one pass (a residual field a shredded one
    /// overrides is skipped), the residual read byte by byte with the row's `keys`. False, with
    /// nothing written, when the residual cannot be read so or its keys are not strictly
    /// increasing (both known before anything is written, so that no field is written twice).
    /// (Not inlined: inlined into [`Self::object_level`], it keeps [`Self::shredded_field`]
    /// from being inlined into itself, which costs 1% of `to_json` over shredded files.)
    #[inline(never)]
    fn merged(
        &mut self,
        row: &Row<'k>,
        keys: &KeyText<'k>,
        shredded: &'k [ObjectField<'k>],
        residual: &'k [u8],
        out: &mut Vec<u8>,
        depth: usize,
    ) -> Result<bool> {
        let Some(children) = residual_fields(keys, residual) else {
            return Ok(false);
        };
        out.push(b'{');
        let mut first = true;
        let mut next = 0;
        // Each residual value is read within the bytes the earlier ones left of the object's
        // data, so that fields sharing bytes cannot make the walk longer than the input; the
        // fields a shredded one overrides are counted too (as the reassembly checks them).
        let mut sizes = FieldSizes::new(children.data_len());
        // The checked view of the residual, made at the first field the byte-level reader
        // cannot read (once: each such field then costs only its own bytes).
        let mut checked: Option<ObjectView<'k>> = None;
        for j in 0..children.len() {
            // (ids and keys were read in `residual_fields`)
            let id = children.id(j).unwrap_or_default();
            let key = keys.keys.checked_region_key(id).unwrap_or_default();
            let mut overridden = false;
            while let Some(f) = shredded.get(next) {
                match compare_keys(f.name.as_bytes(), key) {
                    Ordering::Greater => break,
                    order => {
                        overridden = order == Ordering::Equal;
                        next += 1;
                        self.shredded_field(row, f, out, depth, &mut first)?;
                    }
                }
            }
            let mark = out.len();
            let read = if overridden {
                children
                    .child_within(j, sizes.left())
                    .and_then(|child| value_size(child).map_err(|_| Unreadable))
            } else {
                keys.write_field_name(out, id, first)
                    .and_then(|()| children.child_within(j, sizes.left()))
                    .and_then(|child| write_raw_value(out, keys, child, self.tz, 0))
            };
            let size = match read {
                Ok(size) => size,
                Err(Unreadable) => {
                    // the checked views give the field's extent, or the precise error
                    out.truncate(mark);
                    if checked.is_none() {
                        checked = Some(residual_object(row.meta, residual)?);
                    }
                    let obj = checked.as_ref().expect("made above");
                    let value = obj.value(j).map_err(codec_err)?;
                    let value = value.exact_value_bytes().map_err(codec_err)?;
                    if !overridden {
                        if !first {
                            out.push(b',');
                        }
                        let key = obj.key_bytes(j).map_err(codec_err)?;
                        self.residual_field(out, row, key, value)?;
                    }
                    value.len()
                }
            };
            sizes.take(j, size).map_err(codec_err)?;
            if !overridden {
                first = false;
            }
        }
        for f in &shredded[next..] {
            self.shredded_field(row, f, out, depth, &mut first)?;
        }
        out.push(b'}');
        Ok(true)
    }

    /// Appends a residual field read by the checked views: its key (checked to be UTF-8) and
    /// its value.
    fn residual_field(
        &mut self,
        out: &mut Vec<u8>,
        row: &Row<'k>,
        key: &[u8],
        value: &[u8],
    ) -> Result<()> {
        if std::str::from_utf8(key).is_err() {
            return Err(invalid_variant(
                "invalid variant: an object key is not UTF-8",
            ));
        }
        write_json_bytes(out, key);
        out.push(b':');
        self.residual(out, row, value)
    }

    /// Appends shredded field `f` of the row with its key (and a comma unless `first`), or
    /// nothing when it is missing.
    #[inline]
    fn shredded_field(
        &mut self,
        row: &Row<'k>,
        f: &'k ObjectField<'k>,
        out: &mut Vec<u8>,
        depth: usize,
        first: &mut bool,
    ) -> Result<()> {
        if !f.is_present(row.i) {
            return Ok(());
        }
        if !*first {
            out.push(b',');
        }
        out.extend_from_slice(&f.json_key);
        // (present: the group writes a value)
        self.group(row, &f.group, out, depth + 1)?;
        *first = false;
        Ok(())
    }

    /// Appends a typed primitive: text and integers directly, the rest through its variant
    /// encoding (so every type is rendered exactly as `to_json` renders it).
    #[inline]
    fn primitive(&mut self, p: &Primitive<'_>, i: usize, out: &mut Vec<u8>) -> Result<()> {
        match p {
            // (Arrow text is UTF-8)
            Primitive::String(text) => write_json_bytes(out, text.get(i)),
            Primitive::Int8(a) => write_i64(out, a.value(i).into()),
            Primitive::Int16(a) => write_i64(out, a.value(i).into()),
            Primitive::Int32(a) => write_i64(out, a.value(i).into()),
            Primitive::Int64(a) => write_i64(out, a.value(i)),
            _ => {
                self.scalar.clear();
                p.write(i, &mut self.scalar);
                let scalar = std::mem::take(&mut self.scalar);
                let written = self.rows.write(out, EMPTY_METADATA, &scalar, self.tz);
                self.scalar = scalar;
                written.map_err(codec_err)?;
            }
        }
        Ok(())
    }

    /// Appends a residual value of the row.
    fn residual(&mut self, out: &mut Vec<u8>, row: &Row<'k>, value: &[u8]) -> Result<()> {
        match &row.keys {
            Some(keys) => write_in_row(out, keys, value, self.tz),
            None => self.rows.write(out, row.meta.bytes(), value, self.tz),
        }
        .map_err(codec_err)
    }
}

/// The fields of `residual` when it is an object the byte-level reader can read, its keys in
/// the checked region of `keys` and strictly increasing.
fn residual_fields<'k>(keys: &KeyText<'k>, residual: &'k [u8]) -> Option<RawChildren<'k>> {
    if residual.first()? & 0x03 != basic_type::OBJECT {
        return None;
    }
    let children = RawLayout::read(residual, true)
        .and_then(|layout| layout.children(residual))
        .ok()?;
    let mut previous: Option<&[u8]> = None;
    for j in 0..children.len() {
        let key = keys.keys.checked_region_key(children.id(j).ok()?).ok()?;
        if previous.is_some_and(|p| compare_keys(p, key) != Ordering::Less) {
            return None;
        }
        previous = Some(key);
    }
    Some(children)
}

/// The JSON text of every row of the shredded variant column `array` (SQL NULL stays NULL), as
/// `to_json` renders the reassembled rows; `function` names the caller in errors.
pub fn shredded_to_json(
    function: &str,
    array: &StructArray,
    tz: &SessionTimeZone,
) -> Result<ArrayRef> {
    let column = ShreddedRows::new(array)?;
    let plan = &column.plan;
    let mut writer = JsonWriter {
        rows: JsonRowWriter::default(),
        tz,
        scalar: Vec::new(),
        fields: Vec::new(),
    };
    let mut rows = RowBuffers::with_rows(array.len());
    for i in 0..array.len() {
        let m = column.metadata(i);
        if let Some(m) = m {
            let row = Row {
                meta: Metadata::try_new(m).map_err(codec_err)?,
                keys: writer.rows.row_keys(m).ok(),
                i,
            };
            // a missing top-level value reads as a variant null
            if !writer.group(&row, plan, &mut rows.values, 0)? {
                rows.values.extend_from_slice(b"null");
            }
        }
        rows.end_row(m.is_some(), function)?;
    }
    let (offsets, values, nulls) = rows.finish();
    // Every row is UTF-8: keys are checked, Arrow text is UTF-8 and the rest is written by
    // `JsonRowWriter`, which writes UTF-8 only.
    debug_assert!(std::str::from_utf8(&values).is_ok());
    // SAFETY: offsets start at 0 and grow up to `values.len()` (checked to fit in i32), and
    // the text is UTF-8 (above).
    Ok(Arc::new(unsafe {
        StringArray::new_unchecked(offsets, values.into(), nulls)
    }))
}

#[cfg(test)]
pub(super) mod tests {
    use datafusion::arrow::array::{AsArray, BinaryArray, Int64Array};
    use datafusion::arrow::datatypes::{DataType, Field};

    use super::*;

    /// Metadata with the keys `a`, `b`, `c` (unsorted flag off).
    pub(in crate::shredding) const METADATA: &[u8] = &[0x01, 3, 0, 1, 2, 3, b'a', b'b', b'c'];

    /// An object of one-byte ids and offsets whose fields are stored in the order given, each
    /// an INT8.
    pub(in crate::shredding) fn object(fields: &[(u8, i8)]) -> Vec<u8> {
        let mut out = vec![0x02, fields.len() as u8];
        out.extend(fields.iter().map(|(id, _)| *id));
        out.extend((0..=fields.len()).map(|n| 2 * n as u8));
        for (_, v) in fields {
            out.extend_from_slice(&[0x0C, *v as u8]);
        }
        out
    }

    /// Rows of `{metadata, value: residual object, typed_value: {b: {value, typed_value}}}`.
    pub(in crate::shredding) fn column(
        residuals: Vec<Vec<u8>>,
        b: Vec<Option<i64>>,
    ) -> StructArray {
        column_with(METADATA, residuals, b)
    }

    /// [`column`] with other metadata (keys of one byte's id, the shredded `b` among them).
    fn column_with(metadata: &[u8], residuals: Vec<Vec<u8>>, b: Vec<Option<i64>>) -> StructArray {
        let n = b.len();
        let b_group = StructArray::from(vec![
            (
                Arc::new(Field::new("value", DataType::Binary, true)),
                Arc::new(BinaryArray::from(vec![None::<&[u8]>; n])) as ArrayRef,
            ),
            (
                Arc::new(Field::new("typed_value", DataType::Int64, true)),
                Arc::new(Int64Array::from(b)) as ArrayRef,
            ),
        ]);
        let typed = StructArray::from(vec![(
            Arc::new(Field::new("b", b_group.data_type().clone(), false)),
            Arc::new(b_group) as ArrayRef,
        )]);
        let residuals = BinaryArray::from_iter_values(residuals.iter());
        StructArray::from(vec![
            (
                Arc::new(Field::new("metadata", DataType::Binary, false)),
                Arc::new(BinaryArray::from_iter_values(std::iter::repeat_n(
                    metadata, n,
                ))) as ArrayRef,
            ),
            (
                Arc::new(Field::new("value", DataType::Binary, true)),
                Arc::new(residuals) as ArrayRef,
            ),
            (
                Arc::new(Field::new("typed_value", typed.data_type().clone(), true)),
                Arc::new(typed) as ArrayRef,
            ),
        ])
    }

    #[test]
    fn residual_fields_are_merged_in_name_order() {
        let (a, b, c) = (0, 1, 2);
        let array = column(
            vec![
                // stored out of order: the fields are sorted
                object(&[(c, 1), (a, 2)]),
                object(&[(a, 2), (c, 1)]),
                // `b` in the residual is overridden by the shredded `b`
                object(&[(a, 2), (b, 9)]),
                object(&[(a, 2), (c, 1)]),
                // a residual alone, out of order: written in its stored order
                object(&[(c, 1), (a, 2)]),
                // `b` in the residual is skipped even where the shredded `b` is missing
                object(&[(a, 2), (b, 9)]),
            ],
            vec![Some(5), Some(5), Some(5), None, None, None],
        );
        let json = shredded_to_json("to_json", &array, &SessionTimeZone::utc()).unwrap();
        let rows: Vec<&str> = json.as_string::<i32>().iter().map(Option::unwrap).collect();
        assert_eq!(
            rows,
            [
                r#"{"a":2,"b":5,"c":1}"#,
                r#"{"a":2,"b":5,"c":1}"#,
                r#"{"a":2,"b":5}"#,
                r#"{"a":2,"c":1}"#,
                r#"{"c":1,"a":2}"#,
                r#"{"a":2}"#,
            ]
        );
    }

    /// A column shredded as `levels` objects nested in one another (`{"a": {"a": ... 7}}`), each
    /// group with its `typed_value` only.
    fn nested_objects(levels: usize) -> StructArray {
        let group = |typed: ArrayRef| {
            StructArray::from(vec![(
                Arc::new(Field::new("typed_value", typed.data_type().clone(), true)),
                typed,
            )])
        };
        let mut inner = group(Arc::new(Int64Array::from(vec![7])));
        for _ in 1..levels {
            let object = StructArray::from(vec![(
                Arc::new(Field::new("a", inner.data_type().clone(), true)),
                Arc::new(inner) as ArrayRef,
            )]);
            inner = group(Arc::new(object));
        }
        let object = StructArray::from(vec![(
            Arc::new(Field::new("a", inner.data_type().clone(), true)),
            Arc::new(inner) as ArrayRef,
        )]);
        StructArray::from(vec![
            (
                Arc::new(Field::new("metadata", DataType::Binary, false)),
                // the key `a`
                Arc::new(BinaryArray::from_iter_values([[0x01, 1, 0, 1, b'a']])) as ArrayRef,
            ),
            (
                Arc::new(Field::new("typed_value", object.data_type().clone(), true)),
                Arc::new(object) as ArrayRef,
            ),
        ])
    }

    /// The walks over a shredding schema nested as deep as a variant may be (`DEFAULT_MAX_DEPTH`)
    /// do not overflow the stack of a thread of 256 KiB, although they check it at one object
    /// level in a few only; one level deeper is an error.
    #[test]
    fn a_schema_nested_to_the_depth_limit_is_walked_within_the_stack() {
        let levels = crate::codec::DEFAULT_MAX_DEPTH;
        let array = nested_objects(levels);
        let expected = format!("{}7{}", r#"{"a":"#.repeat(levels), "}".repeat(levels));
        let (json, reassembled) = std::thread::scope(|s| {
            std::thread::Builder::new()
                .stack_size(256 * 1024)
                .spawn_scoped(s, || {
                    let reassembled = super::super::reassemble::reassemble(&array)
                        .unwrap()
                        .unwrap();
                    (json_rows(&array).unwrap(), reassembled)
                })
                .unwrap()
                .join()
                .unwrap()
        });
        assert_eq!(json, std::slice::from_ref(&expected));
        let value = reassembled
            .column_by_name("value")
            .unwrap()
            .as_binary::<i32>();
        let metadata = Metadata::try_new(&[0x01, 1, 0, 1, b'a']).unwrap();
        let mut text = Vec::new();
        crate::codec::write_json(
            &mut text,
            crate::codec::Variant::with_metadata(metadata, value.value(0)),
            &SessionTimeZone::utc(),
        )
        .unwrap();
        assert_eq!(String::from_utf8(text).unwrap(), expected);

        let too_deep = nested_objects(levels + 1);
        let err = json_rows(&too_deep).unwrap_err().to_string();
        assert!(err.contains("depth"), "{err}");
    }

    fn json_rows(array: &StructArray) -> Result<Vec<String>> {
        let json = shredded_to_json("to_json", array, &SessionTimeZone::utc())?;
        Ok(json
            .as_string::<i32>()
            .iter()
            .map(|r| r.unwrap().to_string())
            .collect())
    }

    #[test]
    fn residual_fields_sharing_bytes_are_refused() {
        // `a` and `c` both at offset 0 of a two-byte data region: together they claim four
        let aliased = vec![0x02, 2, 0, 2, 0, 0, 2, 0x0C, 1];
        let err = json_rows(&column(vec![aliased], vec![Some(5)])).unwrap_err();
        assert!(err.to_string().contains("overlap"), "{err}");
    }

    #[test]
    fn residual_keys_that_need_escaping_are_escaped() {
        // keys `b`, `q"` and `é` (sorted), the residual holding the last two
        let metadata = [0x11, 3, 0, 1, 3, 5, b'b', b'q', b'"', 0xC3, 0xA9];
        let residual = object(&[(1, 1), (2, 2)]);
        let rows = json_rows(&column_with(&metadata, vec![residual], vec![Some(5)])).unwrap();
        assert_eq!(rows, [r#"{"b":5,"q\"":1,"é":2}"#]);
    }

    #[test]
    fn a_dictionary_with_an_unused_invalid_key_is_read_with_the_checked_views() {
        // keys `a`, `b`, and 0xFF, which no value uses: the byte-level writer refuses the
        // dictionary, the checked views read the row
        let metadata = [0x01, 3, 0, 1, 2, 3, b'a', b'b', 0xFF];
        let residual = object(&[(0, 2)]);
        let rows = json_rows(&column_with(&metadata, vec![residual], vec![Some(5)])).unwrap();
        assert_eq!(rows, [r#"{"a":2,"b":5}"#]);
    }

    #[test]
    fn an_overridden_residual_field_is_checked_like_the_others() {
        // `b`, which the shredded `b` overrides, shares `a`'s bytes, or points past the data:
        // refused, as the reassembly refuses them
        for residual in [
            vec![0x02, 2, 0, 1, 0, 0, 2, 0x0C, 1],
            vec![0x02, 2, 0, 1, 0, 9, 2, 0x0C, 1],
        ] {
            assert!(json_rows(&column(vec![residual], vec![Some(5)])).is_err());
        }
    }

    #[test]
    fn a_residual_value_the_byte_level_reader_cannot_read_is_written_by_the_checked_views() {
        // key 2 (`xy`) ends past the last offset (3), outside the region the byte-level
        // reader checked; the checked views read it
        let metadata = [0x01, 4, 0, 1, 2, 4, 3, b'a', b'b', b'x', b'y'];
        let inner = [0x02, 1, 2, 0, 2, 0x0C, 1];
        let mut residual = vec![0x02, 1, 0, 0, inner.len() as u8];
        residual.extend_from_slice(&inner);
        let rows = json_rows(&column_with(&metadata, vec![residual], vec![Some(5)])).unwrap();
        assert_eq!(rows, [r#"{"a":{"xy":1},"b":5}"#]);
    }
}
