//! `to_json` straight from shredded columns: each row's JSON text is written from its typed
//! columns and residual `value`s without reassembling the variant first (no field ids to look
//! up, no values encoded and copied up level by level only to be read again). The text is the
//! one `to_json` gives for the reassembled value, byte for byte: object fields in name order
//! (a residual object alone: in its stored order), typed values rendered by the same writer,
//! residual values by [`JsonRowWriter`].
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, StringArray, StructArray};
use datafusion::common::{Result, exec_err};

use super::codec_err;
use super::reassemble::{
    Bytes, GroupPlan, ObjectField, Primitive, RowBuffers, Typed, is_shredded, residual_object,
    row_metadata,
};
use crate::codec::format::write_json_bytes;
use crate::codec::{EMPTY_METADATA, JsonRowWriter, Metadata, SessionTimeZone};

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
    #[recursive::recursive]
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
            }
        }
        Ok(true)
    }

    #[allow(clippy::too_many_arguments)]
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
            for f in shredded.iter().filter(|f| f.array.is_valid(i)) {
                let mark = out.len();
                if !first {
                    out.push(b',');
                }
                out.extend_from_slice(&f.json_key);
                if self.group(metadata, meta, &f.group, i, out, depth + 1)? {
                    first = false;
                } else {
                    out.truncate(mark);
                }
            }
            out.push(b'}');
            return Ok(());
        };
        if self.fields.len() <= depth {
            self.fields.resize_with(depth + 1, Vec::new);
        }
        let mut fields = std::mem::take(&mut self.fields[depth]);
        fields.clear();
        fields.extend(
            shredded
                .iter()
                .filter(|f| f.array.is_valid(i) && present(&f.group, i))
                .map(Field::Shredded),
        );
        let obj = residual_object(meta, residual)?;
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
            fields.sort_unstable_by(|a, b| a.key().cmp(b.key()));
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
                Field::Residual(key, value) => {
                    if std::str::from_utf8(key).is_err() {
                        return exec_err!("invalid variant: an object key is not UTF-8");
                    }
                    write_json_bytes(out, key);
                    out.push(b':');
                    self.residual(out, metadata, value)?;
                }
            }
        }
        out.push(b'}');
        self.fields[depth] = fields;
        Ok(())
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
