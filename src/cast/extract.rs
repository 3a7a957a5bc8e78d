//! Whole-column typed extraction for the commonest targets of `variant_get` (BIGINT, INT,
//! DOUBLE, STRING): one loop per batch, with the binary layouts, the path and the target resolved once,
//! and values written straight into the output buffers instead of through a per-row dispatch
//! over builders. Leaves of any other kind go through the same cast rules as
//! [`TypedBuilder`](super::TypedBuilder), so the answers are the same.
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, PrimitiveArray, StringArray};
use datafusion::arrow::buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use datafusion::arrow::datatypes::{
    ArrowPrimitiveType, DataType, Float64Type, Int32Type, Int64Type,
};
use datafusion::common::{Result, exec_err};

use super::target_type::sql_type_name;
use super::to_arrow::{CastOptions, cast_error, codec, to_f64, to_int, to_text};
use crate::codec::{
    Unreadable, Value, Variant, VariantPath, basic_type, metadata_version, primitive, raw_int,
};
use crate::variant_array::{NoFilter, RowFilter, VariantRows};

/// Extracts `path` from every row cast to `target`, as `variant_get` does with a constant path;
/// None when `target` is not one of the types handled here (the caller then uses
/// [`TypedBuilder`](super::TypedBuilder)).
pub(crate) fn extract_column(
    rows: &VariantRows<'_>,
    len: usize,
    path: &VariantPath,
    target: &DataType,
    opts: &CastOptions,
) -> Result<Option<ArrayRef>> {
    // The loops write row `i` of the output at index `i`.
    if rows.len() != len {
        return exec_err!(
            "{}: {} variant rows for {len} output rows",
            opts.function,
            rows.len()
        );
    }
    let job = Extraction {
        rows,
        len,
        path,
        target,
        opts,
    };
    // One loop with the prefilter, one without (for paths without a key, binary views, and
    // keys the sample finds in most rows), so that the usual case pays nothing for it.
    match path
        .first_key()
        .and_then(|k| rows.key_prefilter(k.as_bytes()))
    {
        Some(filter) => extract_filtered(job, filter),
        None => extract_filtered(job, NoFilter),
    }
}

/// What every loop of [`extract_column`] works from: the rows and their count, the path, the
/// target type and the cast options.
#[derive(Clone, Copy)]
struct Extraction<'r, 'a> {
    rows: &'r VariantRows<'a>,
    len: usize,
    path: &'r VariantPath,
    target: &'r DataType,
    opts: &'r CastOptions,
}

/// [`extract_column`] skipping the rows `filter` rules out.
fn extract_filtered(job: Extraction<'_, '_>, filter: impl RowFilter) -> Result<Option<ArrayRef>> {
    Ok(Some(match job.target {
        DataType::Int64 => extract_primitive::<Int64Type>(job, filter, fast_int, to_int)?,
        DataType::Int32 => extract_primitive::<Int32Type>(
            job,
            filter,
            |leaf| match fast_int(leaf) {
                Fast::Value(v) => i32::try_from(v).map_or(Fast::Slow, Fast::Value),
                Fast::Null => Fast::Null,
                Fast::Slow => Fast::Slow,
            },
            |v| to_int(v).and_then(|i| i32::try_from(i).ok()),
        )?,
        DataType::Float64 => extract_primitive::<Float64Type>(job, filter, fast_double, to_f64)?,
        DataType::Utf8 => extract_string(job, filter)?,
        _ => return Ok(None),
    }))
}

/// A leaf as the fast path reads it.
enum Fast<T> {
    Value(T),
    /// A variant null: SQL NULL.
    Null,
    /// Any other kind: cast by the general rules.
    Slow,
}

/// INT8..INT64 leaves.
#[inline(always)]
fn fast_int(leaf: &[u8]) -> Fast<i64> {
    match leaf.first() {
        Some(0) => Fast::Null,
        Some(&h) if h & 0x03 == 0 && (primitive::INT8..=primitive::INT64).contains(&(h >> 2)) => {
            raw_int(leaf, h >> 2).map_or(Fast::Slow, Fast::Value)
        }
        _ => Fast::Slow,
    }
}

/// DOUBLE leaves.
#[inline(always)]
fn fast_double(leaf: &[u8]) -> Fast<f64> {
    match leaf.first() {
        Some(0) => Fast::Null,
        Some(&h) if h == primitive::DOUBLE << 2 => match leaf.get(1..9) {
            Some(b) => Fast::Value(f64::from_le_bytes(b.try_into().expect("8 bytes"))),
            None => Fast::Slow,
        },
        _ => Fast::Slow,
    }
}

/// True when row `i` certainly has nothing at the path: `filter` finds its metadata lacks the
/// path's first key (see [`KeyPrefilter`](crate::variant_array::KeyPrefilter)). Rows whose
/// metadata is not version 1 or whose value is empty are looked up, so that corrupt rows are
/// still reported.
#[inline(always)]
fn lacks_key(filter: &mut impl RowFilter, i: usize, metadata: &[u8], value: &[u8]) -> bool {
    filter.lacks(i)
        && metadata.first().is_some_and(|&h| metadata_version(h) == 1)
        && !value.is_empty()
}

/// What the raw lookup found in one row.
type Found<'a> = std::result::Result<Option<&'a [u8]>, Unreadable>;

/// The leaf at `path` in one row, for values the fast path does not take: the raw lookup's
/// answer, or (for bytes it could not read) the checked one, which reports corruption.
fn checked_leaf<'a>(
    metadata: &'a [u8],
    value: &'a [u8],
    found: Found<'a>,
    path: &VariantPath,
    opts: &CastOptions,
) -> Result<Option<Variant<'a>>> {
    let error = |e| codec(opts.function, e);
    match found {
        Ok(None) => Ok(None),
        Ok(Some(leaf)) => Variant::try_new(metadata, leaf).map(Some).map_err(error),
        Err(Unreadable) => {
            let v = Variant::try_new(metadata, value).map_err(error)?;
            path.navigate(v).map_err(error)
        }
    }
}

/// Validity bits, set as valid rows are written.
struct Validity {
    words: Vec<u64>,
}

impl Validity {
    fn new(len: usize) -> Self {
        Validity {
            words: vec![0; len.div_ceil(64)],
        }
    }

    /// Marks row `i` (below the `len` given to [`Validity::new`]) valid.
    #[inline(always)]
    fn set(&mut self, i: usize) {
        self.words[i / 64] |= 1 << (i % 64);
    }

    /// The null buffer of `len` rows, None when every row is valid.
    fn finish(self, len: usize) -> Option<NullBuffer> {
        let nulls = NullBuffer::new(BooleanBuffer::new(Buffer::from_vec(self.words), 0, len));
        (nulls.null_count() > 0).then_some(nulls)
    }
}

/// The loop for a primitive target: `fast` reads the usual leaf kinds from their bytes, `cast`
/// converts any other value by the general rules (None: it cannot be cast).
fn extract_primitive<T: ArrowPrimitiveType>(
    job: Extraction<'_, '_>,
    mut filter: impl RowFilter,
    fast: impl Fn(&[u8]) -> Fast<T::Native>,
    cast: impl Fn(&Value<'_>) -> Option<T::Native>,
) -> Result<ArrayRef> {
    // Every row starts out as the default value (and NULL); valid rows overwrite theirs.
    let mut values: Vec<T::Native> = vec![T::Native::default(); job.len];
    let out = values.as_mut_slice();
    let mut validity = Validity::new(job.len);
    let lookup = job.path.raw_lookup();
    job.rows.try_for_each(
        #[inline(always)]
        |i, row| {
            let Some((metadata, value)) = row else {
                return Ok(());
            };
            if lacks_key(&mut filter, i, metadata, value) {
                return Ok(());
            }
            let found = lookup.find(metadata, value);
            if let Ok(None) = found {
                return Ok(());
            }
            if let Ok(Some(leaf)) = found {
                match fast(leaf) {
                    Fast::Value(v) => {
                        out[i] = v;
                        validity.set(i);
                        return Ok(());
                    }
                    Fast::Null => return Ok(()),
                    Fast::Slow => {}
                }
            }
            if let Some(v) = cast_leaf(metadata, value, found, job, &cast)? {
                out[i] = v;
                validity.set(i);
            }
            job.opts.end_row(i);
            Ok(())
        },
    )?;
    let nulls = validity.finish(job.len);
    Ok(Arc::new(PrimitiveArray::<T>::try_new(
        ScalarBuffer::from(values),
        nulls,
    )?))
}

/// A leaf the fast path does not take, cast by the general rules: None for SQL NULL (and for
/// values that cannot be cast, unless strict). Out of line, so that the row loops it is called
/// from stay small.
#[inline(never)]
fn cast_leaf<N>(
    metadata: &[u8],
    value: &[u8],
    found: Found<'_>,
    job: Extraction<'_, '_>,
    cast: &impl Fn(&Value<'_>) -> Option<N>,
) -> Result<Option<N>> {
    let opts = job.opts;
    let Some(leaf) = checked_leaf(metadata, value, found, job.path, opts)? else {
        return Ok(None);
    };
    Ok(match leaf.get().map_err(|e| codec(opts.function, e))? {
        Value::Null => None,
        v => match cast(&v) {
            Some(c) => Some(c),
            None => {
                opts.cannot_cast(|| cast_error(leaf, &sql_type_name(job.target), opts))?;
                None
            }
        },
    })
}

/// The loop for a STRING target: string leaves are copied (checked for UTF-8), anything else is
/// rendered by the general rules.
fn extract_string(job: Extraction<'_, '_>, mut filter: impl RowFilter) -> Result<ArrayRef> {
    let mut text: Vec<u8> = Vec::with_capacity(job.len * 8);
    // Row `i` ends at `ends[i]` (`offsets[i + 1]`).
    let mut offsets: Vec<i32> = vec![0; job.len + 1];
    let ends = &mut offsets[1..];
    let mut validity = Validity::new(job.len);
    let mut scratch = Vec::new();
    let lookup = job.path.raw_lookup();
    job.rows.try_for_each(
        #[inline(always)]
        |i, row| {
            if let Some((metadata, value)) = row
                && !lacks_key(&mut filter, i, metadata, value)
            {
                let found = lookup.find(metadata, value);
                let fast = match found {
                    Ok(Some(leaf)) => match fast_string(leaf) {
                        Fast::Value(at) => Fast::Value((leaf, at)),
                        Fast::Null => Fast::Null,
                        Fast::Slow => Fast::Slow,
                    },
                    Ok(None) => Fast::Null,
                    Err(Unreadable) => Fast::Slow,
                };
                match fast {
                    Fast::Value((leaf, at)) => {
                        append_text(&mut text, leaf, at);
                        validity.set(i);
                    }
                    Fast::Null => {}
                    Fast::Slow => {
                        let leaf = (metadata, value, found);
                        if text_leaf(leaf, job, &mut scratch, &mut text)? {
                            validity.set(i);
                        }
                        job.opts.end_row(i);
                    }
                }
            }
            if text.len() > i32::MAX as usize {
                return exec_err!("{}: output exceeds 2 GiB in one batch", job.opts.function);
            }
            ends[i] = text.len() as i32;
            Ok(())
        },
    )?;
    let nulls = validity.finish(job.len);
    // Every row is whole UTF-8 text: string leaves are checked (ASCII or `from_utf8`) and copied
    // exactly, anything else goes through `from_utf8_lossy`. Tests confirm it in debug builds;
    // arrow's check would read all the text again. `OffsetBuffer::new` asserts the offsets ascend.
    debug_assert!(
        std::str::from_utf8(&text).is_ok(),
        "variant_get wrote invalid UTF-8"
    );
    let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
    if offsets
        .last()
        .is_some_and(|&end| end as usize != text.len())
    {
        return exec_err!("{}: text and offsets disagree", job.opts.function);
    }
    // SAFETY: the offsets ascend (asserted by `OffsetBuffer::new`) and end at the end of the
    // text (checked above), and every row is UTF-8 (see above).
    Ok(Arc::new(unsafe {
        StringArray::new_unchecked(offsets, Buffer::from_vec(text), nulls)
    }))
}

/// Appends a leaf the fast path does not take to `text`, rendered by the general rules; false
/// for SQL NULL (and for values that cannot be cast, unless strict). Out of line, like
/// [`cast_leaf`].
#[inline(never)]
fn text_leaf(
    (metadata, value, found): (&[u8], &[u8], Found<'_>),
    job: Extraction<'_, '_>,
    scratch: &mut Vec<u8>,
    text: &mut Vec<u8>,
) -> Result<bool> {
    let opts = job.opts;
    let Some(leaf) = checked_leaf(metadata, value, found, job.path, opts)? else {
        return Ok(false);
    };
    let v = leaf.get().map_err(|e| codec(opts.function, e))?;
    scratch.clear();
    if matches!(v, Value::Null) {
        Ok(false)
    } else if to_text(leaf, &v, opts, scratch)? {
        text.extend_from_slice(String::from_utf8_lossy(scratch).as_bytes());
        Ok(true)
    } else {
        opts.cannot_cast(|| cast_error(leaf, &sql_type_name(job.target), opts))?;
        Ok(false)
    }
}

/// Short and long string leaves that are UTF-8: where the text starts in the leaf, and its
/// length (anything else, including invalid UTF-8, which the checked path reports, is slow).
#[inline(always)]
fn fast_string(leaf: &[u8]) -> Fast<(usize, usize)> {
    let Some(&h) = leaf.first() else {
        return Fast::Slow;
    };
    let (start, len) = if h & 0x03 == basic_type::SHORT_STRING {
        (1, (h >> 2) as usize)
    } else if h == primitive::STRING << 2 {
        match leaf.get(1..5) {
            Some(n) => (
                5,
                u32::from_le_bytes(n.try_into().expect("4 bytes")) as usize,
            ),
            None => return Fast::Slow,
        }
    } else if h == 0 {
        return Fast::Null;
    } else {
        return Fast::Slow;
    };
    let utf8 = match (window16(leaf, start), leaf.get(start..start + len)) {
        // Most strings are short ASCII: one test of the bytes that are the text.
        (Some(w), Some(t)) if len <= 16 => {
            let text_bytes = u128::MAX.checked_shr(8 * (16 - len) as u32).unwrap_or(0);
            u128::from_le_bytes(*w) & text_bytes & ASCII_HIGH_BITS == 0
                || std::str::from_utf8(t).is_ok()
        }
        (_, Some(t)) => t.is_ascii() || std::str::from_utf8(t).is_ok(),
        (_, None) => false,
    };
    if utf8 {
        Fast::Value((start, len))
    } else {
        Fast::Slow
    }
}

/// The high bit of every byte of a 16-byte word.
const ASCII_HIGH_BITS: u128 = 0x8080_8080_8080_8080_8080_8080_8080_8080;

/// The 16 bytes of `bytes` from `start`, when there are that many.
#[inline(always)]
fn window16(bytes: &[u8], start: usize) -> Option<&[u8; 16]> {
    bytes.get(start..start + 16)?.try_into().ok()
}

/// Appends `leaf[start..start + len]` (in range) to `text`. Text of at most 16 bytes with 16
/// readable bytes from its start is copied as 16 bytes and the excess cut off again, which is
/// cheaper than a copy of variable length.
#[inline(always)]
fn append_text(text: &mut Vec<u8>, leaf: &[u8], (start, len): (usize, usize)) {
    match window16(leaf, start) {
        Some(w) if len <= 16 => {
            text.extend_from_slice(w);
            text.truncate(text.len() - (16 - len));
        }
        _ => text.extend_from_slice(&leaf[start..start + len]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{JsonParser, SessionTimeZone, VariantBuilder};
    use crate::variant_array::VariantArrayBuilder;
    use datafusion::arrow::array::{Array, AsArray};

    fn column(rows: &[(Vec<u8>, Vec<u8>)]) -> ArrayRef {
        let mut out = VariantArrayBuilder::with_capacity(rows.len());
        for (m, v) in rows {
            out.append(m, v);
        }
        out.finish().unwrap()
    }

    fn encode(json: &str) -> (Vec<u8>, Vec<u8>) {
        let mut b = VariantBuilder::new();
        JsonParser::new().parse(json, &mut b).unwrap();
        (b.metadata().to_vec(), b.value().to_vec())
    }

    /// `extract_column` over `array` at `path` to `target`, as `variant_get` (strict) or
    /// `try_variant_get` runs it.
    fn extract(array: &ArrayRef, path: &str, target: &DataType, strict: bool) -> Result<ArrayRef> {
        let function = if strict {
            "variant_get"
        } else {
            "try_variant_get"
        };
        let opts = CastOptions::new(function, "try_variant_get", strict, SessionTimeZone::utc());
        let path = VariantPath::parse(path).unwrap();
        let rows = VariantRows::borrowed(array).unwrap();
        Ok(extract_column(&rows, array.len(), &path, target, &opts)?.unwrap())
    }

    fn strings(
        rows: &[(Vec<u8>, Vec<u8>)],
        path: &str,
        strict: bool,
    ) -> Result<Vec<Option<String>>> {
        let out = extract(&column(rows), path, &DataType::Utf8, strict)?;
        let out = out.as_string::<i32>();
        Ok((0..out.len())
            .map(|i| out.is_valid(i).then(|| out.value(i).to_string()))
            .collect())
    }

    /// String leaves of every length around the 16-byte copy, with and without 16 bytes after
    /// their start, ASCII or not, come out whole and nothing else.
    #[test]
    fn string_leaves_copied_exactly() {
        let texts = [
            "",
            "a",
            "click",
            "fifteen chars!!",
            "sixteen chars!!!",
            "seventeen chars!!",
            "héllo wörld",
            "日本語のテキスト",
            &"x".repeat(70),
        ];
        let mut rows = Vec::new();
        let mut expected = Vec::new();
        for t in texts {
            // The string last in its row (no bytes after it), and first, before a long one.
            let j = serde_json::to_string(t).unwrap();
            rows.push(encode(&format!(r#"{{"s": {j}}}"#)));
            rows.push(encode(&format!(
                r#"{{"s": {j}, "z": "{}"}}"#,
                "y".repeat(40)
            )));
            expected.extend([Some(t.to_string()), Some(t.to_string())]);
        }
        // Not strings: rendered by the general rules; a variant null and a missing key: NULL.
        rows.push(encode(r#"{"s": 12}"#));
        rows.push(encode(r#"{"s": null}"#));
        rows.push(encode(r#"{"t": "a"}"#));
        expected.extend([Some("12".to_string()), None, None]);
        assert_eq!(strings(&rows, "$.s", true).unwrap(), expected);
    }

    /// Invalid UTF-8 in a short string is corrupt input: an error, also in `try_variant_get`.
    #[test]
    fn invalid_utf8_string_is_an_error() {
        for value in [
            vec![0x05, 0xFF],
            // Followed by 16 more bytes (a 16-byte window is readable).
            [vec![0x09, b'a', 0xC3], vec![0; 16]].concat(),
        ] {
            let rows = [(crate::codec::EMPTY_METADATA.to_vec(), value)];
            let err = strings(&rows, "$", false).unwrap_err().to_string();
            assert!(err.contains("try_variant_get"), "{err}");
        }
    }

    fn ints(array: &ArrayRef, path: &str) -> Result<Vec<Option<i64>>> {
        let out = extract(array, path, &DataType::Int64, true)?;
        let out = out.as_primitive::<Int64Type>();
        Ok((0..out.len())
            .map(|i| out.is_valid(i).then(|| out.value(i)))
            .collect())
    }

    /// The same column with large binary children.
    fn large(array: &ArrayRef) -> ArrayRef {
        use datafusion::arrow::array::StructArray;
        use datafusion::arrow::compute::cast;
        use datafusion::arrow::datatypes::{Field, Fields};
        let s = array.as_struct();
        let children: Vec<ArrayRef> = s
            .columns()
            .iter()
            .map(|c| cast(c, &DataType::LargeBinary).unwrap())
            .collect();
        let fields = Fields::from(vec![
            Field::new("metadata", DataType::LargeBinary, false),
            Field::new("value", DataType::LargeBinary, false),
        ]);
        Arc::new(StructArray::new(fields, children, s.nulls().cloned()))
    }

    /// Rows whose metadata lacks the key skip the lookup (KeyPrefilter): a key in a few rows
    /// (one of them the last), next to keys that contain it, in none, in sliced and large binary
    /// columns, with SQL NULL rows; a key that turns dense after the sample, and one dense from
    /// the start (no prefilter): all give what each row alone gives.
    #[test]
    fn sparse_absent_and_dense_keys() {
        let sparse = [0usize, 3, 50, 51, 120, 199];
        let mut rows = Vec::new();
        let mut expected = Vec::new();
        for i in 0..200usize {
            let json = if sparse.contains(&i) {
                format!(r#"{{"a": {{"k": {i}}}, "k": {i}}}"#)
            } else if i % 16 == 5 {
                // A key that contains "k" but is not "k", and "k" as a value.
                r#"{"xk": "k", "b": 2}"#.to_string()
            } else {
                r#"{"b": 1}"#.to_string()
            };
            rows.push(encode(&json));
            expected.push(sparse.contains(&i).then_some(i as i64));
        }
        let mut out = VariantArrayBuilder::with_capacity(rows.len() + 1);
        for (m, v) in &rows[..100] {
            out.append(m, v);
        }
        out.append_null();
        for (m, v) in &rows[100..] {
            out.append(m, v);
        }
        let array = out.finish().unwrap();
        let mut with_null = expected.clone();
        with_null.insert(100, None);
        // The sample (first 64 rows) finds "k" 8 times: few enough to use the prefilter.
        assert!(
            VariantRows::borrowed(&array)
                .unwrap()
                .key_prefilter(b"k")
                .is_some()
        );
        for array in [array.clone(), large(&array)] {
            assert_eq!(ints(&array, "$.k").unwrap(), with_null);
            assert_eq!(ints(&array, "$.a.k").unwrap(), with_null);
            assert_eq!(ints(&array, "$.nope").unwrap(), vec![None; 201]);
            // "b" is in every row but the sparse ones.
            let with_b = ints(&array, "$.b").unwrap().iter().flatten().count();
            assert_eq!(with_b, 200 - sparse.len());
            // Sliced: offsets that do not start at 0.
            let sliced = array.slice(40, 100);
            assert_eq!(ints(&sliced, "$.k").unwrap(), with_null[40..140]);
        }
        // Absent from the sample, then in every row: the prefilter gives up on the way.
        let late: Vec<_> = (0..200)
            .map(|i| match i {
                0..64 => encode(r#"{"b": 1}"#),
                _ => encode(&format!(r#"{{"k": {i}}}"#)),
            })
            .collect();
        let got = ints(&column(&late), "$.k").unwrap();
        let want: Vec<_> = (0..200).map(|i| (i >= 64).then_some(i)).collect();
        assert_eq!(got, want);
        // In every row from the start: no prefilter.
        let dense: Vec<_> = (0..100)
            .map(|i| encode(&format!(r#"{{"k": {i}}}"#)))
            .collect();
        let dense = column(&dense);
        assert!(
            VariantRows::borrowed(&dense)
                .unwrap()
                .key_prefilter(b"k")
                .is_none()
        );
        let got = ints(&dense, "$.k").unwrap();
        assert_eq!(got, (0..100).map(Some).collect::<Vec<_>>());
    }

    /// A corrupt row is reported even when its metadata lacks the key.
    #[test]
    fn corrupt_rows_without_the_key_are_errors() {
        let good = encode(r#"{"b": 1}"#);
        for bad in [
            // Metadata version 2.
            (vec![0x02, 0x00, 0x00], good.1.clone()),
            // An empty value.
            (good.0.clone(), vec![]),
        ] {
            let rows = [good.clone(), bad, good.clone()];
            let err = ints(&column(&rows), "$.k").unwrap_err().to_string();
            assert!(err.contains("variant_get"), "{err}");
        }
    }
}
