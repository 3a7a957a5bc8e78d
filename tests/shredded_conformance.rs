//! Conformance of `unshred` with the shredded-variant test files of `parquet-testing`
//! (`tests/data/parquet-testing-variant/shredded_variant`, generated from Iceberg's
//! `TestVariantReaders`).
//!
//! Every case of `cases.json` is run: the `var` column of its Parquet file is read with the
//! parquet crate's Arrow reader, reassembled with [`unshred`] (unshredded columns are read as
//! they are), and each row is compared with the expected `*.variant.bin` file using an exact
//! structural equality (same primitive type, decimals by unscaled value and scale, floats by
//! bits, objects by keys in stored order, arrays element-wise). Error cases must give an error,
//! never a value and never a panic. All mismatches are collected and reported in one assertion.
mod common;

use std::fs::File;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, StructArray};
use datafusion::arrow::datatypes::DataType;
use datafusion_parquet_variant::codec::{
    Metadata, SessionTimeZone, Value, Variant, validate, write_json,
};
use datafusion_parquet_variant::functions::to_json::variant_array_to_json;
use datafusion_parquet_variant::shredding::unshred;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde_json::Value as Json;

use common::conformance_dir;

/// One row read from a Parquet file: None for SQL NULL, else `(metadata, value)` bytes.
type Row = Option<(Vec<u8>, Vec<u8>)>;

/// What reading one case's Parquet file gave.
struct Read {
    /// `{:?}` of the `var` column's Arrow type (or the Parquet schema when the Arrow reader could
    /// not be built).
    schema: String,
    /// The rows, or the error text of the first failing step.
    rows: Result<Vec<Row>, String>,
}

/// How our reader handles each of the `*-INVALID.parquet` files. The spec
/// (`VariantShredding.md`, "Objects") says such files must not be written; when a reader still
/// reads them, "the `typed_value` column must be used" for a field set in both `value` and
/// `typed_value`, and a non-object `value` with a non-null typed object is invalid.
#[derive(Debug, Clone, Copy, PartialEq)]
enum InvalidBehaviour {
    /// We read the file and must produce exactly the expected variant file (the reading where
    /// `typed_value` wins).
    ReadsExpected,
    /// We reject the file with an error.
    #[allow(dead_code)]
    Errors,
}

fn invalid_behaviour(case_number: u64) -> Option<InvalidBehaviour> {
    match case_number {
        // testPartiallyShreddedObjectMissingFieldConflict: the residual `value` is
        // `{"b": "2024-01-30"}` while the shredded field `b` has both `value` and `typed_value`
        // null, i.e. `b` is missing. The shredded column is authoritative ("the typed_value
        // column must be used"), so `b` is absent from the result: `{"a": null}`. Our unshred
        // drops residual keys that have a shredded column, which gives exactly that.
        43 => Some(InvalidBehaviour::ReadsExpected),
        // testShreddedObjectWithOptionalFieldStructs: the per-field groups are `optional` where
        // the spec requires `required` (here the group of `d` is null). Nothing conflicts, so
        // the only sensible reading is the shredded one; unshred treats a null field group like
        // a missing field: `{"a": 34, "b": "iceberg"}`.
        84 => Some(InvalidBehaviour::ReadsExpected),
        // testPartiallyShreddedObjectFieldConflict: the residual `value` is
        // `{"b": "2024-01-30"}` while the shredded `b` is `"iceberg"`. The typed_value column
        // must be used, so the shredded `b` wins: `{"a": null, "b": "iceberg"}`; unshred does
        // exactly that.
        125 => Some(InvalidBehaviour::ReadsExpected),
        _ => None,
    }
}

/// Bytes of row `i` of a binary column of any layout; None when null.
fn binary_at(array: &ArrayRef, i: usize) -> Result<Option<Vec<u8>>, String> {
    if array.is_null(i) {
        return Ok(None);
    }
    Ok(Some(match array.data_type() {
        DataType::Binary => array.as_binary::<i32>().value(i).to_vec(),
        DataType::LargeBinary => array.as_binary::<i64>().value(i).to_vec(),
        DataType::BinaryView => array.as_binary_view().value(i).to_vec(),
        other => return Err(format!("variant column child is not binary: {other:?}")),
    }))
}

/// Rows of an unshredded variant struct (`metadata`, `value`).
fn unshredded_rows(s: &StructArray) -> Result<Vec<Row>, String> {
    let metadata = s
        .column_by_name("metadata")
        .ok_or("variant struct has no metadata")?;
    let value = s
        .column_by_name("value")
        .ok_or("variant struct has no value")?;
    let mut rows = Vec::with_capacity(s.len());
    for i in 0..s.len() {
        if s.is_null(i) {
            rows.push(None);
            continue;
        }
        match (binary_at(metadata, i)?, binary_at(value, i)?) {
            (Some(m), Some(v)) => rows.push(Some((m, v))),
            (None, _) => return Err(format!("row {i}: metadata is null in a non-null variant")),
            // A missing value in a non-null unshredded variant: nothing to read (SQL NULL).
            (Some(_), None) => rows.push(None),
        }
    }
    Ok(rows)
}

fn parquet_schema_text(path: &Path) -> String {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let Ok(file) = File::open(path) else {
        return "<file not readable>".into();
    };
    match SerializedFileReader::new(file) {
        Ok(r) => {
            let mut out = Vec::new();
            parquet::schema::printer::print_schema(
                &mut out,
                r.metadata().file_metadata().schema_descr().root_schema(),
            );
            format!(
                "(Arrow reader failed) Parquet schema: {}",
                String::from_utf8_lossy(&out)
            )
        }
        Err(e) => format!("<Parquet metadata not readable: {e}>"),
    }
}

fn read_parquet(path: &Path) -> Read {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) => {
            return Read {
                schema: "<missing file>".into(),
                rows: Err(format!("open {}: {e}", path.display())),
            };
        }
    };
    let builder = match ParquetRecordBatchReaderBuilder::try_new(file) {
        Ok(b) => b,
        Err(e) => {
            return Read {
                schema: parquet_schema_text(path),
                rows: Err(format!("reader: {e}")),
            };
        }
    };
    let schema = match builder.schema().field_with_name("var") {
        Ok(f) => {
            let ext = f
                .metadata()
                .get("ARROW:extension:name")
                .map(|n| format!(" [extension {n}]"))
                .unwrap_or_default();
            format!("{:?}{ext}", f.data_type())
        }
        Err(_) => format!("<no var column in {:?}>", builder.schema()),
    };
    let rows = (|| -> Result<Vec<Row>, String> {
        let reader = builder.build().map_err(|e| format!("reader: {e}"))?;
        let mut rows = Vec::new();
        let mut last_id: Option<i64> = None;
        for batch in reader {
            let batch = batch.map_err(|e| format!("read: {e}"))?;
            // Rows are expected in id order (the files number ids from 1; row i is variant file i).
            if let Some(ids) = batch.column_by_name("id") {
                let ids = datafusion::arrow::compute::cast(ids, &DataType::Int64)
                    .map_err(|e| format!("id column: {e}"))?;
                for id in ids.as_primitive::<datafusion::arrow::datatypes::Int64Type>() {
                    let Some(id) = id else {
                        return Err("null id".into());
                    };
                    if last_id.is_some_and(|last| id != last + 1) {
                        return Err(format!("ids not consecutive: {id} after {last_id:?}"));
                    }
                    last_id = Some(id);
                }
            }
            let col = batch.column_by_name("var").ok_or("no var column")?;
            let s = col
                .as_struct_opt()
                .ok_or_else(|| format!("var column is not a struct: {:?}", col.data_type()))?;
            let rows_of_batch = if s.column_by_name("typed_value").is_some() {
                // to_json straight from the shredded columns fails where reassembling does,
                // and otherwise gives the text of the reassembled rows
                let tz = SessionTimeZone::utc();
                let direct = variant_array_to_json("to_json", col, &tz);
                let u = match unshred(s) {
                    Ok(u) => u,
                    Err(e) if direct.is_ok() => {
                        return Err(format!("unshred: {e}; but to_json rendered the rows"));
                    }
                    Err(e) => return Err(format!("unshred: {e}")),
                };
                let direct = direct.map_err(|e| format!("to_json of the shredded column: {e}"))?;
                let reassembled: ArrayRef = Arc::new(u.clone());
                let via = variant_array_to_json("to_json", &reassembled, &tz)
                    .map_err(|e| format!("to_json of the reassembled rows: {e}"))?;
                if direct
                    .as_string::<i32>()
                    .iter()
                    .ne(via.as_string::<i32>().iter())
                {
                    return Err(format!(
                        "to_json of the shredded column {direct:?} differs from the reassembled rows' {via:?}"
                    ));
                }
                unshredded_rows(&u)?
            } else {
                unshredded_rows(s)?
            };
            rows.extend(rows_of_batch);
        }
        Ok(rows)
    })();
    Read { schema, rows }
}

/// Splits a `*.variant.bin` file into metadata and value: the metadata's length follows from its
/// header (offset size), dictionary size and last offset.
fn split_variant_file(bytes: &[u8]) -> Result<(Vec<u8>, Vec<u8>), String> {
    let m = Metadata::try_new(bytes).map_err(|e| format!("expected metadata: {e}"))?;
    let offset_size = ((bytes[0] >> 6) & 0x03) as usize + 1;
    let read = |pos: usize| -> Result<usize, String> {
        let b = bytes
            .get(pos..pos + offset_size)
            .ok_or("expected metadata offsets out of bounds")?;
        Ok(b.iter()
            .rev()
            .fold(0usize, |acc, &x| (acc << 8) | x as usize))
    };
    let dict_len = m.len();
    let strings_start = 1 + (dict_len + 2) * offset_size;
    let last_offset = read(1 + (dict_len + 1) * offset_size)?;
    let meta_len = strings_start + last_offset;
    if meta_len > bytes.len() {
        return Err(format!(
            "expected metadata of {meta_len} bytes does not fit in {} bytes",
            bytes.len()
        ));
    }
    Ok((bytes[..meta_len].to_vec(), bytes[meta_len..].to_vec()))
}

fn render(m: &[u8], v: &[u8]) -> String {
    let variant = match Variant::try_new(m, v) {
        Ok(x) => x,
        Err(e) => return format!("<bad variant: {e}>"),
    };
    let mut out = Vec::new();
    match write_json(&mut out, variant, &SessionTimeZone::utc()) {
        Ok(()) => String::from_utf8_lossy(&out).into_owned(),
        Err(e) => format!("<not renderable: {e}>"),
    }
}

fn render_row(row: &Row) -> String {
    match row {
        None => "SQL NULL".into(),
        Some((m, v)) => render(m, v),
    }
}

/// Exact structural comparison; returns a description of the first difference.
fn diff(path: &str, e: Variant<'_>, a: Variant<'_>) -> Option<String> {
    let ev = match e.get() {
        Ok(v) => v,
        Err(err) => return Some(format!("{path}: expected value not decodable: {err}")),
    };
    let av = match a.get() {
        Ok(v) => v,
        Err(err) => return Some(format!("{path}: actual value not decodable: {err}")),
    };
    use Value::*;
    let same = match (ev, av) {
        (Object(eo), Object(ao)) => {
            if eo.len() != ao.len() {
                return Some(format!(
                    "{path}: object has {} fields, expected {}",
                    ao.len(),
                    eo.len()
                ));
            }
            for i in 0..eo.len() {
                let (ek, ak) = match (eo.key(i), ao.key(i)) {
                    (Ok(x), Ok(y)) => (x, y),
                    (x, y) => return Some(format!("{path}: key {i}: {x:?} vs {y:?}")),
                };
                if ek != ak {
                    return Some(format!("{path}: field {i} is `{ak}`, expected `{ek}`"));
                }
                let (ec, ac) = match (eo.value(i), ao.value(i)) {
                    (Ok(x), Ok(y)) => (x, y),
                    (x, y) => return Some(format!("{path}.{ek}: {x:?} vs {y:?}")),
                };
                if let Some(d) = diff(&format!("{path}.{ek}"), ec, ac) {
                    return Some(d);
                }
            }
            return None;
        }
        (Array(ea), Array(aa)) => {
            if ea.len() != aa.len() {
                return Some(format!(
                    "{path}: array has {} elements, expected {}",
                    aa.len(),
                    ea.len()
                ));
            }
            for (i, (x, y)) in ea.iter().zip(aa.iter()).enumerate() {
                let (x, y) = match (x, y) {
                    (Ok(x), Ok(y)) => (x, y),
                    (x, y) => return Some(format!("{path}[{i}]: {x:?} vs {y:?}")),
                };
                if let Some(d) = diff(&format!("{path}[{i}]"), x, y) {
                    return Some(d);
                }
            }
            return None;
        }
        (Null, Null) => true,
        (Boolean(x), Boolean(y)) => x == y,
        (Int8(x), Int8(y)) => x == y,
        (Int16(x), Int16(y)) => x == y,
        (Int32(x), Int32(y)) => x == y,
        (Int64(x), Int64(y)) => x == y,
        (Double(x), Double(y)) => x.to_bits() == y.to_bits(),
        (Float(x), Float(y)) => x.to_bits() == y.to_bits(),
        (Decimal4(x, s), Decimal4(y, t)) => x == y && s == t,
        (Decimal8(x, s), Decimal8(y, t)) => x == y && s == t,
        (Decimal16(x, s), Decimal16(y, t)) => x == y && s == t,
        (Date(x), Date(y)) => x == y,
        (Timestamp(x), Timestamp(y)) => x == y,
        (TimestampNtz(x), TimestampNtz(y)) => x == y,
        (TimestampNanos(x), TimestampNanos(y)) => x == y,
        (TimestampNtzNanos(x), TimestampNtzNanos(y)) => x == y,
        (Time(x), Time(y)) => x == y,
        (Binary(x), Binary(y)) => x == y,
        (String(x), String(y)) => x == y,
        (Uuid(x), Uuid(y)) => x == y,
        _ => false,
    };
    (!same).then(|| format!("{path}: got {av:?}, expected {ev:?}"))
}

/// Compares one actual row with the expected one; None when equal.
fn compare_row(expected: &Row, actual: &Row) -> Option<String> {
    match (expected, actual) {
        (None, None) => None,
        (None, Some(_)) => Some("expected SQL NULL, got a value".into()),
        (Some(_), None) => Some("expected a value, got SQL NULL".into()),
        (Some((em, ev)), Some((am, av))) => {
            if let Err(e) = validate(am, av) {
                return Some(format!("actual variant fails validation: {e}"));
            }
            let e = match Variant::try_new(em, ev) {
                Ok(x) => x,
                Err(err) => return Some(format!("expected variant unreadable: {err}")),
            };
            let a = Variant::try_new(am, av).expect("validated");
            diff("$", e, a)
        }
    }
}

/// The expected rows of a case, or None for error cases.
fn expected_rows(dir: &Path, case: &Json) -> Result<Option<Vec<Row>>, String> {
    let load = |name: &str| -> Result<Row, String> {
        let bytes = std::fs::read(dir.join(name)).map_err(|e| format!("read {name}: {e}"))?;
        split_variant_file(&bytes).map(Some)
    };
    if let Some(Json::String(f)) = case.get("variant_file") {
        return Ok(Some(vec![load(f)?]));
    }
    if let Some(Json::Array(files)) = case.get("variant_files") {
        return files
            .iter()
            .map(|f| match f {
                Json::Null => Ok(None),
                Json::String(f) => load(f),
                other => Err(format!("bad variant_files entry {other}")),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some);
    }
    Ok(None)
}

enum Outcome {
    Pass(String),
    Fail(String),
    Skip(String),
}

fn run_case(dir: &Path, case: &Json) -> Outcome {
    let number = case["case_number"].as_u64().unwrap_or(0);
    let test = case.get("test").and_then(Json::as_str).unwrap_or("?");
    let Some(parquet_file) = case.get("parquet_file").and_then(Json::as_str) else {
        return Outcome::Skip(format!("case {number}: no parquet_file in cases.json"));
    };
    let read = read_parquet(&dir.join(parquet_file));
    let header = format!(
        "case {number} ({test}, {parquet_file})\n    schema: {}",
        read.schema
    );

    if let Some(message) = case.get("error_message").and_then(Json::as_str) {
        return match read.rows {
            Err(e) => Outcome::Pass(format!(
                "case {number}: error as expected ({message:?}); ours: {e}"
            )),
            Ok(rows) => Outcome::Fail(format!(
                "{header}\n    expected an error ({message:?}), got rows: [{}]",
                rows.iter().map(render_row).collect::<Vec<_>>().join(", ")
            )),
        };
    }

    let expected = match expected_rows(dir, case) {
        Ok(Some(rows)) => rows,
        Ok(None) => return Outcome::Fail(format!("{header}\n    case has no expected result")),
        Err(e) => return Outcome::Fail(format!("{header}\n    {e}")),
    };
    let invalid = invalid_behaviour(number);
    if parquet_file.contains("INVALID") && invalid.is_none() {
        return Outcome::Fail(format!(
            "{header}\n    INVALID file without a recorded behaviour; ours: {}",
            match &read.rows {
                Ok(rows) => rows.iter().map(render_row).collect::<Vec<_>>().join(", "),
                Err(e) => format!("error: {e}"),
            }
        ));
    }
    let rows = match (read.rows, invalid) {
        (Err(e), Some(InvalidBehaviour::Errors)) => {
            return Outcome::Pass(format!(
                "case {number}: INVALID file rejected as recorded: {e}"
            ));
        }
        (Ok(rows), Some(InvalidBehaviour::Errors)) => {
            return Outcome::Fail(format!(
                "{header}\n    INVALID file: recorded behaviour is an error, got rows: [{}]",
                rows.iter().map(render_row).collect::<Vec<_>>().join(", ")
            ));
        }
        (Err(e), _) => {
            return Outcome::Fail(format!(
                "{header}\n    error: {e}\n    expected: [{}]",
                expected
                    .iter()
                    .map(render_row)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        (Ok(rows), _) => rows,
    };
    let mut problems = Vec::new();
    if rows.len() != expected.len() {
        problems.push(format!("{} rows, expected {}", rows.len(), expected.len()));
    }
    for (i, (e, a)) in expected.iter().zip(&rows).enumerate() {
        if let Some(d) = compare_row(e, a) {
            problems.push(format!(
                "row {i}: {d}\n      expected: {}\n      actual:   {}",
                render_row(e),
                render_row(a)
            ));
        }
    }
    if problems.is_empty() {
        let note = if invalid.is_some() {
            " (INVALID file: read as recorded)"
        } else {
            ""
        };
        Outcome::Pass(format!("case {number}: {} row(s) equal{note}", rows.len()))
    } else {
        Outcome::Fail(format!("{header}\n    {}", problems.join("\n    ")))
    }
}

#[test]
fn shredded_variant_conformance() {
    let dir = conformance_dir("shredded_variant");
    let text = std::fs::read_to_string(dir.join("cases.json")).expect("read cases.json");
    let cases: Vec<Json> = serde_json::from_str(&text).expect("parse cases.json");
    assert!(!cases.is_empty(), "cases.json has no cases");

    let (mut passed, mut skipped) = (0usize, 0usize);
    let mut failures = Vec::new();
    for case in &cases {
        let number = case["case_number"].as_u64().unwrap_or(0);
        let outcome = catch_unwind(AssertUnwindSafe(|| run_case(&dir, case)))
            .unwrap_or_else(|_| Outcome::Fail(format!("case {number}: PANICKED (see stderr)")));
        match outcome {
            Outcome::Pass(note) => {
                passed += 1;
                println!("ok    {note}");
            }
            Outcome::Skip(note) => {
                skipped += 1;
                println!("skip  {note}");
            }
            Outcome::Fail(report) => {
                println!("FAIL  {report}");
                failures.push(report);
            }
        }
    }
    println!(
        "shredded variant conformance: {passed} passed, {} failed, {skipped} skipped of {} cases",
        failures.len(),
        cases.len()
    );
    assert!(
        failures.is_empty(),
        "{} shredded conformance case(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
