//! `to_json` straight from shredded columns: each row's JSON text is written from its typed
//! columns and residual `value`s without reassembling the variant first (no field ids to look
//! up, no values encoded and copied up level by level only to be read again). The text is the
//! one `to_json` gives for the reassembled value, byte for byte: object fields in name order
//! (a residual object alone: in its stored order), typed values rendered by the same writer,
//! residual values by [`JsonRowWriter`].
use std::cmp::Ordering;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, StringArray, StructArray};
use datafusion::common::{Result, exec_err};

use super::codec_err;
use super::reassemble::{
    Bytes, GroupPlan, Lists, ObjectField, Primitive, RowBuffers, Typed, is_shredded,
    residual_object, row_metadata,
};
use crate::codec::format::write_json_bytes;
use crate::codec::{EMPTY_METADATA, JsonRowWriter, Metadata, ObjectView, SessionTimeZone};

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
    /// Appends the JSON of `g` at row `i`; false (nothing written) when the value is missing.
    /// (The recursion goes through [`Self::object`] and [`Self::array`], which guard the stack,
    /// not through each primitive.)
    #[inline]
    fn group(
        &mut self,
        metadata: &'k [u8],
        meta: Metadata<'k>,
        g: &'k GroupPlan<'k>,
        i: usize,
        out: &mut Vec<u8>,
        depth: usize,
    ) -> Result<bool> {
        let value = g.value.as_ref().and_then(|v: &Bytes<'k>| v.get(i));
        let Some((_, typed)) = g.typed.as_ref().filter(|(t, _)| t.is_valid(i)) else {
            return match value {
                Some(v) => {
                    self.residual(out, metadata, v)?;
                    Ok(true)
                }
                None => Ok(false),
            };
        };
        match typed {
            Typed::Object(fields) => self.object(metadata, meta, fields, value, i, out, depth)?,
            _ if value.is_some() => {
                return exec_err!("Invalid variant, conflicting value and typed_value");
            }
            Typed::Primitive(p) => self.primitive(p, i, out)?,
            Typed::Array(lists, element) => {
                self.array(metadata, meta, lists, element, i, out, depth)?
            }
        }
        Ok(true)
    }

    /// Appends the shredded array of row `i`.
    #[allow(clippy::too_many_arguments)]
    #[recursive::recursive]
    fn array(
        &mut self,
        metadata: &'k [u8],
        meta: Metadata<'k>,
        lists: &Lists<'k>,
        element: &'k GroupPlan<'k>,
        i: usize,
        out: &mut Vec<u8>,
        depth: usize,
    ) -> Result<()> {
        out.push(b'[');
        for (n, j) in lists.range(i).enumerate() {
            if n > 0 {
                out.push(b',');
            }
            // a missing element reads as a variant null
            if !self.group(metadata, meta, element, j, out, depth + 1)? {
                out.extend_from_slice(b"null");
            }
        }
        out.push(b']');
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    #[recursive::recursive]
    fn object(
        &mut self,
        metadata: &'k [u8],
        meta: Metadata<'k>,
        shredded: &'k [ObjectField<'k>],
        residual: Option<&'k [u8]>,
        i: usize,
        out: &mut Vec<u8>,
        depth: usize,
    ) -> Result<()> {
        let Some(residual) = residual else {
            // the shredded fields alone, already in name order: a field is written with its
            // key, and taken back if it turns out missing
            out.push(b'{');
            let mut first = true;
            for f in shredded {
                self.shredded_field(metadata, meta, f, i, out, depth, &mut first)?;
            }
            out.push(b'}');
            return Ok(());
        };
        let obj = residual_object(meta, residual)?;
        let mark = out.len();
        if self.merged(metadata, meta, shredded, &obj, i, out, depth)? {
            return Ok(());
        }
        // the residual's keys are out of order (an invalid value, written as before): collect
        // the fields and sort them
        out.truncate(mark);
        if self.fields.len() <= depth {
            self.fields.resize_with(depth + 1, Vec::new);
        }
        let mut fields = std::mem::take(&mut self.fields[depth]);
        fields.clear();
        fields.extend(
            shredded
                .iter()
                .filter(|f| f.validity.is_valid(i) && present(&f.group, i))
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
                    self.group(metadata, meta, &f.group, i, out, depth + 1)?;
                }
                Field::Residual(key, value) => self.residual_field(out, metadata, key, value)?,
            }
        }
        out.push(b'}');
        self.fields[depth] = fields;
        Ok(())
    }

    /// Appends the object of row `i` by merging its shredded fields with the fields of its
    /// residual object `obj`, both in name order, in one pass (a residual field a shredded one
    /// overrides is skipped). False, with part of an object written, when the residual's keys
    /// are not strictly increasing.
    #[allow(clippy::too_many_arguments)]
    fn merged(
        &mut self,
        metadata: &'k [u8],
        meta: Metadata<'k>,
        shredded: &'k [ObjectField<'k>],
        obj: &ObjectView<'k>,
        i: usize,
        out: &mut Vec<u8>,
        depth: usize,
    ) -> Result<bool> {
        out.push(b'{');
        let mut first = true;
        let mut next = 0;
        let mut previous: Option<&[u8]> = None;
        for j in 0..obj.len() {
            let key = obj.key_bytes(j).map_err(codec_err)?;
            if previous.is_some_and(|p| p >= key) {
                return Ok(false);
            }
            previous = Some(key);
            let mut overridden = false;
            while let Some(f) = shredded.get(next) {
                match f.name.as_bytes().cmp(key) {
                    Ordering::Greater => break,
                    order => {
                        overridden = order == Ordering::Equal;
                        next += 1;
                        self.shredded_field(metadata, meta, f, i, out, depth, &mut first)?;
                    }
                }
            }
            if overridden {
                continue;
            }
            if !first {
                out.push(b',');
            }
            first = false;
            let value = obj.value(j).map_err(codec_err)?.exact_value_bytes();
            self.residual_field(out, metadata, key, value.map_err(codec_err)?)?;
        }
        for f in &shredded[next..] {
            self.shredded_field(metadata, meta, f, i, out, depth, &mut first)?;
        }
        out.push(b'}');
        Ok(true)
    }

    /// Appends shredded field `f` of row `i` with its key (and a comma unless `first`), or
    /// nothing when it is missing.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn shredded_field(
        &mut self,
        metadata: &'k [u8],
        meta: Metadata<'k>,
        f: &'k ObjectField<'k>,
        i: usize,
        out: &mut Vec<u8>,
        depth: usize,
        first: &mut bool,
    ) -> Result<()> {
        if !f.validity.is_valid(i) {
            return Ok(());
        }
        let mark = out.len();
        if !*first {
            out.push(b',');
        }
        out.extend_from_slice(&f.json_key);
        if self.group(metadata, meta, &f.group, i, out, depth + 1)? {
            *first = false;
        } else {
            out.truncate(mark);
        }
        Ok(())
    }

    /// Appends a residual field: its key (checked to be UTF-8) and its value.
    fn residual_field(
        &mut self,
        out: &mut Vec<u8>,
        metadata: &[u8],
        key: &[u8],
        value: &[u8],
    ) -> Result<()> {
        if std::str::from_utf8(key).is_err() {
            return exec_err!("invalid variant: an object key is not UTF-8");
        }
        write_json_bytes(out, key);
        out.push(b':');
        self.residual(out, metadata, value)
    }

    /// Appends a typed primitive: text and integers directly, the rest through its variant
    /// encoding (so every type is rendered exactly as `to_json` renders it).
    #[inline]
    fn primitive(&mut self, p: &Primitive<'_>, i: usize, out: &mut Vec<u8>) -> Result<()> {
        match p {
            // (Arrow text is UTF-8)
            Primitive::String(text) => write_json_bytes(out, text.get(i)),
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

    fn residual(&mut self, out: &mut Vec<u8>, metadata: &[u8], value: &[u8]) -> Result<()> {
        self.rows
            .write(out, metadata, value, self.tz)
            .map_err(codec_err)
    }
}

/// True when group `g` has a value at row `i`.
fn present(g: &GroupPlan<'_>, i: usize) -> bool {
    g.value.as_ref().is_some_and(|v| v.get(i).is_some())
        || g.typed.as_ref().is_some_and(|(t, _)| t.is_valid(i))
}

/// The JSON text of every row of the shredded variant column `array` (SQL NULL stays NULL), as
/// `to_json` renders the reassembled rows; `function` names the caller in errors.
pub fn shredded_to_json(
    function: &str,
    array: &StructArray,
    tz: &SessionTimeZone,
) -> Result<ArrayRef> {
    super::check_group(array.fields(), "")?;
    let Some(metadata_column) = array.column_by_name("metadata") else {
        return exec_err!("variant column has no metadata");
    };
    let metadata = Bytes::new(metadata_column)?;
    let mut slots = 0;
    let plan = GroupPlan::new(array, 0, &mut slots)?;
    let mut writer = JsonWriter {
        rows: JsonRowWriter::default(),
        tz,
        scalar: Vec::new(),
        fields: Vec::new(),
    };
    let mut rows = RowBuffers::with_rows(array.len());
    for i in 0..array.len() {
        let m = row_metadata(array, &metadata, i);
        if let Some(m) = m {
            let meta = Metadata::try_new(m).map_err(codec_err)?;
            // a missing top-level value reads as a variant null
            if !writer.group(m, meta, &plan, i, &mut rows.values, 0)? {
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
mod tests {
    use datafusion::arrow::array::{AsArray, BinaryArray, Int64Array};
    use datafusion::arrow::datatypes::{DataType, Field};

    use super::*;

    /// Metadata with the keys `a`, `b`, `c` (unsorted flag off).
    const METADATA: &[u8] = &[0x01, 3, 0, 1, 2, 3, b'a', b'b', b'c'];

    /// An object of one-byte ids and offsets whose fields are stored in the order given, each
    /// an INT8.
    fn object(fields: &[(u8, i8)]) -> Vec<u8> {
        let mut out = vec![0x02, fields.len() as u8];
        out.extend(fields.iter().map(|(id, _)| *id));
        out.extend((0..=fields.len()).map(|n| 2 * n as u8));
        for (_, v) in fields {
            out.extend_from_slice(&[0x0C, *v as u8]);
        }
        out
    }

    /// Rows of `{metadata, value: residual object, typed_value: {b: {value, typed_value}}}`.
    fn column(residuals: Vec<Vec<u8>>, b: Vec<Option<i64>>) -> StructArray {
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
                    METADATA, n,
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
}
