//! Turns record batches into the rows and column types that sqllogictest compares.
//!
//! Follows DataFusion's own `datafusion-sqllogictest` harness (`engines/datafusion_engine/
//! normalize.rs` and `conversion.rs`):
//!
//! - any NULL prints as `NULL`, an empty string as `(empty)`, trailing newlines of strings are
//!   dropped;
//! - booleans print as `true` / `false`;
//! - floats and decimals are rounded to 12 decimal places (half-even), trailing zeros are dropped
//!   and no exponent is used (`1.5`, `0.1`, `100000000000000000000`); NaN and infinities print as
//!   `NaN`, `Infinity`, `-Infinity`;
//! - everything else goes through arrow's `ArrayFormatter` with DataFusion's default format
//!   options (dates `%Y-%m-%d`, timestamps `%Y-%m-%dT%H:%M:%S%.f`, ...);
//! - when the last cell of a row spans several lines (EXPLAIN output), each extra line becomes a
//!   row of its own, numbered `01)`, `02)`, ... with its leading spaces turned into `-`.
//!
//! Variant columns are rendered as JSON text by the caller before this runs, so they print as
//! text (`T`). Column types are checked strictly and values exactly (trailing whitespace
//! trimmed only), as in DataFusion's harness.

use datafusion::arrow::array::{Array, ArrayRef, AsArray};
use datafusion::arrow::datatypes::{DataType, Fields, Float16Type, Float32Type, Float64Type};
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::config::FormatOptions as DfFormatOptions;
use sqllogictest::ColumnType;

/// How a NULL cell prints.
pub const NULL_STR: &str = "NULL";

/// Decimal places floats and decimals are rounded to (as DataFusion's harness).
const ROUND_DIGITS: usize = 12;

/// The column type characters of DataFusion's harness, checked strictly: `B`oolean, `I`nteger,
/// `R`eal (floats and decimals), `T`ext (strings, and variants, which print as JSON text),
/// `D`ate or time of day, timestamP, and `?` for every other type (lists, structs, ...).
#[derive(Debug, PartialEq, Eq, Clone)]
pub enum DFColumnType {
    /// `B`
    Boolean,
    /// `I`
    Integer,
    /// `R`: floats and decimals.
    Float,
    /// `T`: strings and variants.
    Text,
    /// `D`: dates and times of day.
    DateTime,
    /// `P`: timestamps.
    Timestamp,
    /// `?`: every other type.
    Another,
}

impl ColumnType for DFColumnType {
    fn from_char(value: char) -> Option<Self> {
        Some(match value {
            'B' => Self::Boolean,
            'I' => Self::Integer,
            'R' => Self::Float,
            'T' => Self::Text,
            'D' => Self::DateTime,
            'P' => Self::Timestamp,
            _ => Self::Another,
        })
    }

    fn to_char(&self) -> char {
        match self {
            Self::Boolean => 'B',
            Self::Integer => 'I',
            Self::Float => 'R',
            Self::Text => 'T',
            Self::DateTime => 'D',
            Self::Timestamp => 'P',
            Self::Another => '?',
        }
    }
}

/// The column type characters for a (variant-rendered) schema, as DataFusion's harness gives
/// them.
pub fn convert_schema_to_types(fields: &Fields) -> Vec<DFColumnType> {
    fields.iter().map(|f| column_type(f.data_type())).collect()
}

fn column_type(data_type: &DataType) -> DFColumnType {
    match data_type {
        DataType::Boolean => DFColumnType::Boolean,
        t if t.is_integer() => DFColumnType::Integer,
        t if t.is_floating() || t.is_decimal() => DFColumnType::Float,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => DFColumnType::Text,
        DataType::Date32 | DataType::Date64 | DataType::Time32(_) | DataType::Time64(_) => {
            DFColumnType::DateTime
        }
        DataType::Timestamp(_, _) => DFColumnType::Timestamp,
        DataType::Dictionary(key, value) if key.is_integer() => column_type(value),
        _ => DFColumnType::Another,
    }
}

/// Expected lines compare with actual rows after trailing whitespace is trimmed, nothing else
/// (DataFusion's `value_normalizer`): runs of spaces inside a value count.
#[allow(clippy::ptr_arg)]
pub fn value_normalizer(s: &String) -> String {
    s.trim_end().to_string()
}

/// A row matches its expected line when its cells, each trimmed at the end and joined by one
/// space, equal the line trimmed at the end (DataFusion's `df_value_validator`). Expected output
/// holding `<slt:ignore>` matches when its other parts appear in order (volatile metrics).
pub fn value_validator(
    normalizer: fn(&String) -> String,
    actual: &[Vec<String>],
    expected: &[String],
) -> bool {
    const IGNORE: &str = "<slt:ignore>";
    let actual: Vec<String> = actual
        .iter()
        .map(|row| {
            let cells: Vec<&str> = row.iter().map(|c| c.trim_end()).collect();
            cells.join(" ").trim_end().to_string()
        })
        .collect();
    if expected.iter().any(|line| line.contains(IGNORE)) {
        let (expected, actual) = (expected.join("\n"), actual.join("\n"));
        let mut at = 0;
        for part in expected.split(IGNORE).filter(|p| !p.is_empty()) {
            match actual[at..].find(part) {
                Some(found) => at += found + part.len(),
                None => return false,
            }
        }
        return true;
    }
    let expected: Vec<String> = expected.iter().map(normalizer).collect();
    actual == expected
}

/// All rows of `batches` (already variant-rendered), each cell normalized.
pub fn convert_batches(batches: &[RecordBatch]) -> Result<Vec<Vec<String>>, ArrowError> {
    let mut rows = vec![];
    for batch in batches {
        for row in 0..batch.num_rows() {
            let cells = batch
                .columns()
                .iter()
                .map(|col| cell_to_string(col, row))
                .collect::<Result<Vec<_>, _>>()?;
            rows.extend(expand_row(cells));
        }
    }
    Ok(rows)
}

/// A row whose last cell has several lines becomes that row (with the first line) followed by
/// one single-cell row per line, `NN)` numbered, leading spaces shown as `-` (sqllogictest
/// would otherwise ignore them).
fn expand_row(mut row: Vec<String>) -> Vec<Vec<String>> {
    let Some(last) = row.pop() else {
        return vec![row];
    };
    let lines: Vec<&str> = last.split('\n').collect();
    if lines.len() < 2 {
        row.push(last);
        return vec![row];
    }
    let mut out = vec![row];
    for (idx, line) in lines.iter().enumerate() {
        let content = line.trim_start();
        let prefix = "-".repeat(line.len() - content.len());
        out.push(vec![format!("{:02}){prefix}{content}", idx + 1)]);
    }
    out
}

/// The normalized text of one cell.
pub fn cell_to_string(col: &ArrayRef, row: usize) -> Result<String, ArrowError> {
    if col.is_null(row) {
        return Ok(NULL_STR.to_string());
    }
    Ok(match col.data_type() {
        DataType::Null => NULL_STR.to_string(),
        DataType::Boolean => col.as_boolean().value(row).to_string(),
        DataType::Float16 => {
            let v = col.as_primitive::<Float16Type>().value(row);
            float_to_str(v.to_f32().into(), v.to_string())
        }
        DataType::Float32 => {
            let v = col.as_primitive::<Float32Type>().value(row);
            float_to_str(v.into(), v.to_string())
        }
        DataType::Float64 => {
            let v = col.as_primitive::<Float64Type>().value(row);
            float_to_str(v, v.to_string())
        }
        DataType::Utf8 => varchar_to_str(col.as_string::<i32>().value(row)),
        DataType::LargeUtf8 => varchar_to_str(col.as_string::<i64>().value(row)),
        DataType::Utf8View => varchar_to_str(col.as_string_view().value(row)),
        DataType::Dictionary(_, _) => {
            let dict = col.as_any_dictionary();
            let key = dict.normalized_keys()[row];
            return cell_to_string(dict.values(), key);
        }
        t if t.is_decimal() => round_decimal_str(&format_cell(col, row)?, ROUND_DIGITS),
        _ => format_cell(col, row)?,
    })
}

/// A cell formatted by arrow with DataFusion's default format options and `NULL` for nulls.
fn format_cell(col: &ArrayRef, row: usize) -> Result<String, ArrowError> {
    let df_options = DfFormatOptions {
        null: NULL_STR.to_string(),
        ..Default::default()
    };
    let options: FormatOptions<'_> = (&df_options)
        .try_into()
        .map_err(|e: datafusion::error::DataFusionError| ArrowError::ExternalError(Box::new(e)))?;
    let formatter = ArrayFormatter::try_new(col.as_ref(), &options)?;
    Ok(formatter.value(row).to_string())
}

fn varchar_to_str(value: &str) -> String {
    if value.is_empty() {
        "(empty)".to_string()
    } else {
        value.trim_end_matches('\n').to_string()
    }
}

/// `value` is the float as f64 (for the special values), `shortest` its shortest round-trip text.
fn float_to_str(value: f64, shortest: String) -> String {
    if value.is_nan() {
        // the sign of NaN differs between platforms
        "NaN".to_string()
    } else if value == f64::INFINITY {
        "Infinity".to_string()
    } else if value == f64::NEG_INFINITY {
        "-Infinity".to_string()
    } else {
        round_decimal_str(&shortest, ROUND_DIGITS)
    }
}

/// Rounds a plain decimal string (`-123.4567`, no exponent) to `digits` decimal places with
/// half-even rounding, drops trailing fractional zeros and the sign of zero. Equivalent to
/// DataFusion's `BigDecimal::round(12).normalized().to_plain_string()`. Strings that are not
/// plain decimals are returned unchanged.
pub fn round_decimal_str(s: &str, digits: usize) -> String {
    let (negative, unsigned) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let (int_part, frac_part) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    if int_part.is_empty() && frac_part.is_empty()
        || !int_part.bytes().all(|b| b.is_ascii_digit())
        || !frac_part.bytes().all(|b| b.is_ascii_digit())
    {
        return s.to_string();
    }

    // all kept digits, integer part first; `point` = number of integer digits
    let mut kept: Vec<u8> = int_part.bytes().map(|b| b - b'0').collect();
    if kept.is_empty() {
        kept.push(0);
    }
    let mut point = kept.len();
    let frac: Vec<u8> = frac_part.bytes().map(|b| b - b'0').collect();
    if frac.len() > digits {
        kept.extend_from_slice(&frac[..digits]);
        let first_dropped = frac[digits];
        let rest_nonzero = frac[digits + 1..].iter().any(|&d| d != 0);
        let last_odd = kept.last().is_some_and(|d| d % 2 == 1);
        let round_up = first_dropped > 5 || first_dropped == 5 && (rest_nonzero || last_odd);
        if round_up {
            let mut i = kept.len();
            loop {
                if i == 0 {
                    kept.insert(0, 1);
                    point += 1;
                    break;
                }
                i -= 1;
                if kept[i] == 9 {
                    kept[i] = 0;
                } else {
                    kept[i] += 1;
                    break;
                }
            }
        }
    } else {
        kept.extend_from_slice(&frac);
    }

    // drop trailing fractional zeros and leading integer zeros
    while kept.len() > point && kept.last() == Some(&0) {
        kept.pop();
    }
    let mut start = 0;
    while start + 1 < point && kept[start] == 0 {
        start += 1;
    }
    let int_digits: String = kept[start..point]
        .iter()
        .map(|d| (b'0' + d) as char)
        .collect();
    let frac_digits: String = kept[point..].iter().map(|d| (b'0' + d) as char).collect();
    if kept.iter().all(|&d| d == 0) {
        return "0".to_string();
    }
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    out.push_str(&int_digits);
    if !frac_digits.is_empty() {
        out.push('.');
        out.push_str(&frac_digits);
    }
    out
}

/// Checks that the comparison is as strict as it claims (the runner has no unit-test harness, so
/// it runs this before the files): values differing only in inner whitespace, or in column type
/// letters, do not match; trailing whitespace does not count; decimals print as DataFusion's
/// harness prints them (rounded to 12 places, trailing zeros dropped).
pub fn check_strictness() -> Result<(), String> {
    let row = |cells: &[&str]| vec![cells.iter().map(|c| c.to_string()).collect::<Vec<_>>()];
    let line = |l: &str| vec![l.to_string()];
    let checks = [
        (
            "inner spaces",
            !value_validator(value_normalizer, &row(&["a  b"]), &line("a b")),
        ),
        (
            "cell boundaries",
            value_validator(value_normalizer, &row(&["a", "b"]), &line("a b")),
        ),
        (
            "trailing spaces",
            value_validator(value_normalizer, &row(&["a "]), &line("a  ")),
        ),
        (
            "decimals as DataFusion prints them",
            cell_text_of_decimal(150, 2) == "1.5",
        ),
        (
            "volatile parts",
            value_validator(
                value_normalizer,
                &row(&["x 1 y"]),
                &line("x <slt:ignore> y"),
            ),
        ),
    ];
    for (what, ok) in checks {
        if !ok {
            return Err(format!("the slt comparison is wrong about {what}"));
        }
    }
    let types = |t: &str| {
        t.chars()
            .filter_map(DFColumnType::from_char)
            .collect::<Vec<_>>()
    };
    if sqllogictest::strict_column_validator(&types("IT"), &types("TT"))
        || !sqllogictest::strict_column_validator(&types("I?"), &types("I?"))
    {
        return Err("the slt column types are not checked strictly".to_string());
    }
    Ok(())
}

/// The text of the DECIMAL(10, `scale`) value `unscaled`, as a query prints it.
fn cell_text_of_decimal(unscaled: i128, scale: i8) -> String {
    use datafusion::arrow::array::Decimal128Array;
    let array: ArrayRef = std::sync::Arc::new(
        Decimal128Array::from(vec![unscaled])
            .with_precision_and_scale(10, scale)
            .expect("valid"),
    );
    cell_to_string(&array, 0).expect("formats")
}
