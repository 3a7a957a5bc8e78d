//! Differential tests of our Variant codec against arrow-rs `parquet-variant` 59.3:
//! (a) values encoded with our builder decode to the same value with arrow-rs (and with ours),
//!     pass our `validate`, and are in the canonical form our builder promises (sorted unique
//!     dictionary with the sorted flag, smallest widths, `is_large` only above 255 elements);
//! (b) values encoded with the arrow-rs builder validate and decode to the same value with ours;
//! (c) JSON text -> our `JsonParser` -> `write_json` keeps the value, with Spark's number rules
//!     (ints stay ints, plain fractions stay exact decimals, exponents become doubles printed the
//!     way Java prints them) and Jackson's string escaping;
//! (d) SQL values converted by our `to_variant` decode (with both decoders) to what arrow-rs
//!     `cast_to_variant` produces for the same Arrow column.
//! Plus deterministic cases at every width boundary.

mod common;

use std::cell::RefCell;

use chrono::{Datelike, NaiveDate, Timelike};
use std::fmt::Write as _;

use common::*;
use datafusion_parquet_variant::codec::{
    JsonParser, SessionTimeZone, Variant, VariantBuilder, validate,
};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

/// 256 cases by default (seconds in debug mode); `PROPTEST_CASES` overrides.
fn cases() -> u32 {
    proptest_cases(256)
}

fn fail(e: impl std::fmt::Display) -> TestCaseError {
    TestCaseError::fail(e.to_string())
}

// ---------------------------------------------------------------------------------------------
// Strategies for variant values
// ---------------------------------------------------------------------------------------------

fn string_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{0,8}",
        // Around the 63/64-byte short-string boundary.
        "[ -~]{60,70}",
        // Non-ASCII whose byte length crosses 64.
        "[éü中😀a]{10,40}",
        prop::collection::vec(
            prop_oneof![
                4 => any::<char>(),
                1 => prop::sample::select(vec![
                    '\u{0}', '\u{8}', '\t', '\n', '\u{c}', '\r', '\u{1f}', '"', '\\', '/',
                    '\u{7f}', 'é', '\u{2028}', '😅', '\u{fffd}'
                ]),
            ],
            0..80
        )
        .prop_map(String::from_iter),
    ]
}

fn key_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        // A small alphabet: keys repeat across objects and collide (then deduplicated).
        "[a-d]{0,2}",
        "[a-zA-Z_0-9é]{1,6}",
        prop::collection::vec(any::<char>(), 0..8).prop_map(String::from_iter),
    ]
}

const MAX4: i32 = 999_999_999;
const MAX8: i64 = 999_999_999_999_999_999;
const MAX16: i128 = 99_999_999_999_999_999_999_999_999_999_999_999_999;

fn leaf_strategy() -> impl Strategy<Value = V> {
    let ints = prop_oneof![
        Just(V::Null),
        any::<bool>().prop_map(V::Bool),
        any::<i8>().prop_map(V::I8),
        any::<i16>().prop_map(V::I16),
        any::<i32>().prop_map(V::I32),
        any::<i64>().prop_map(V::I64),
    ];
    let floats = prop_oneof![
        any::<f64>().prop_map(|f| V::Double(F64(f))),
        prop::sample::select(vec![0.0, -0.0, f64::NAN, f64::INFINITY, 1e300, 5e-324])
            .prop_map(|f| V::Double(F64(f))),
        any::<f32>().prop_map(|f| V::Float(F32(f))),
    ];
    let decimals = prop_oneof![
        (-MAX4..=MAX4, 0u8..=9).prop_map(|(u, s)| V::D4(u, s)),
        (-MAX8..=MAX8, 0u8..=18).prop_map(|(u, s)| V::D8(u, s)),
        (-MAX16..=MAX16, 0u8..=38).prop_map(|(u, s)| V::D16(u, s)),
        (
            prop::sample::select(vec![0i128, 1, -1, MAX16, -MAX16]),
            0u8..=38
        )
            .prop_map(|(u, s)| V::D16(u, s)),
    ];
    // Dates and micro timestamps stay inside chrono's range (arrow-rs decodes into chrono types).
    let times = prop_oneof![
        (-90_000_000i32..90_000_000).prop_map(V::Date),
        (-6_000_000_000_000_000_000i64..6_000_000_000_000_000_000).prop_map(V::Ts),
        (-6_000_000_000_000_000_000i64..6_000_000_000_000_000_000).prop_map(V::TsNtz),
        (0i64..86_400_000_000).prop_map(V::Time),
        any::<i64>().prop_map(V::TsNanos),
        any::<i64>().prop_map(V::TsNtzNanos),
        any::<[u8; 16]>().prop_map(V::Uuid),
    ];
    let bytes = prop_oneof![
        prop::collection::vec(any::<u8>(), 0..100).prop_map(V::Binary),
        string_strategy().prop_map(V::Str),
    ];
    prop_oneof![1 => ints, 1 => floats, 1 => decimals, 1 => times, 2 => bytes]
}

/// Keeps the first field of each key.
fn dedup(fields: Vec<(String, V)>) -> Vec<(String, V)> {
    let mut seen = std::collections::HashSet::new();
    fields
        .into_iter()
        .filter(|(k, _)| seen.insert(k.clone()))
        .collect()
}

fn nested_strategy() -> impl Strategy<Value = V> {
    leaf_strategy().prop_recursive(4, 64, 10, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..10).prop_map(V::Arr),
            prop::collection::vec((key_strategy(), inner), 0..10).prop_map(|f| V::Obj(dedup(f))),
        ]
    })
}

/// Objects around 256 fields and dictionaries past 256 keys, with small objects closed before the
/// dictionary grew (the builder's re-encode path) or after it.
fn wide_strategy() -> impl Strategy<Value = V> {
    (
        prop::collection::btree_set("[a-z]{1,6}", 250..300)
            .prop_flat_map(|keys| Just(keys.into_iter().collect::<Vec<_>>()).prop_shuffle()),
        prop::collection::vec(leaf_strategy(), 1..4),
        prop::collection::vec((key_strategy(), leaf_strategy()), 0..5),
        0u8..3,
    )
        .prop_map(|(keys, leaves, small, layout)| {
            let big = V::Obj(
                keys.into_iter()
                    .enumerate()
                    .map(|(i, k)| (k, leaves[i % leaves.len()].clone()))
                    .collect(),
            );
            let small = V::Obj(dedup(small));
            match layout {
                0 => V::Arr(vec![small, big]),
                1 => V::Arr(vec![big, small]),
                _ => V::Obj(vec![("\u{10ffff}".into(), big), (String::new(), small)]),
            }
        })
}

fn any_value() -> impl Strategy<Value = V> {
    prop_oneof![8 => nested_strategy(), 1 => wide_strategy()]
}

// ---------------------------------------------------------------------------------------------
// (a) ours -> arrow-rs, (b) arrow-rs -> ours
// ---------------------------------------------------------------------------------------------

thread_local! {
    /// One builder reused across all cases (reset between rows), as the SQL kernels use it.
    static REUSED: RefCell<VariantBuilder> = RefCell::new(VariantBuilder::new());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn ours_encodes_what_arrow_decodes(v in any_value()) {
        let (m, val) = encode_ours(&v).map_err(fail)?;
        validate(&m, &val).map_err(|e| fail(format!("our output fails validate: {e}")))?;
        check_canonical(&m, &val).map_err(|e| fail(format!("not canonical: {e}")))?;
        let expected = v.canonical();
        prop_assert_eq!(&decode_arrow(&m, &val).map_err(fail)?, &expected);
        prop_assert_eq!(&decode_ours_bytes(&m, &val).map_err(fail)?, &expected);
        to_json_ours(&m, &val, &SessionTimeZone::utc()).map_err(fail)?;

        // A reused builder gives the same bytes as a fresh one.
        let reused = REUSED.with(|b| {
            let mut b = b.borrow_mut();
            b.reset();
            build_ours(&mut b, &v)?;
            b.finish()?;
            Ok::<_, datafusion_parquet_variant::codec::VariantError>(
                (b.metadata().to_vec(), b.value().to_vec()),
            )
        }).map_err(fail)?;
        prop_assert_eq!(&reused, &(m.clone(), val.clone()));

        // Building in sorted order gives the same value, and re-appending a decoded variant
        // (`append_variant`) gives exactly those bytes.
        let (m_sorted, v_sorted) = encode_ours(&expected).map_err(fail)?;
        prop_assert_eq!(&m_sorted, &m);
        let mut copy = VariantBuilder::new();
        copy.append_variant(Variant::try_new(&m, &val).map_err(fail)?).map_err(fail)?;
        copy.finish().map_err(fail)?;
        prop_assert_eq!(copy.metadata(), &m_sorted[..]);
        prop_assert_eq!(copy.value(), &v_sorted[..]);
    }

    #[test]
    fn reused_builder_matches_fresh_builders(
        rows in prop::collection::vec(prop_oneof![nested_strategy(), wide_strategy()], 1..24),
        repeats in prop::collection::vec(0usize..24, 0..24),
    ) {
        // One builder across rows (keys kept from row to row, sorting reused for a repeated key
        // sequence) writes exactly what a fresh builder writes for each row. Rows repeat, in
        // place and later, so that key sequences recur.
        let mut sequence = rows.clone();
        for r in repeats {
            let row = rows[r % rows.len()].clone();
            sequence.push(row.clone());
            sequence.push(row);
        }
        let mut b = VariantBuilder::new();
        for v in &sequence {
            b.reset();
            build_ours(&mut b, v).map_err(fail)?;
            b.finish().map_err(fail)?;
            let (m, value) = encode_ours(v).map_err(fail)?;
            prop_assert_eq!(b.metadata(), &m[..]);
            prop_assert_eq!(b.value(), &value[..]);
        }
    }

    #[test]
    fn default_builder_matches_new(v in nested_strategy()) {
        // `VariantBuilder::default()` is `new()`: the same bytes.
        let mut b = VariantBuilder::default();
        build_ours(&mut b, &v).map_err(fail)?;
        b.finish().map_err(fail)?;
        let (m, value) = encode_ours(&v).map_err(fail)?;
        prop_assert_eq!(b.metadata(), &m[..]);
        prop_assert_eq!(b.value(), &value[..]);
        validate(b.metadata(), b.value()).map_err(fail)?;
        check_canonical(b.metadata(), b.value()).map_err(fail)?;
        prop_assert_eq!(decode_ours_bytes(b.metadata(), b.value()).map_err(fail)?, v.canonical());
    }

    #[test]
    fn arrow_encodes_what_ours_decodes(v in any_value()) {
        let (m, val) = encode_arrow(&v);
        validate(&m, &val).map_err(|e| fail(format!("arrow-rs output fails validate: {e}")))?;
        let decoded = decode_ours_bytes(&m, &val).map_err(fail)?;
        prop_assert_eq!(decoded.canonical(), v.canonical());
        to_json_ours(&m, &val, &SessionTimeZone::utc()).map_err(fail)?;
        // Lookups by name find every field.
        if let V::Obj(fields) = &v {
            let var = Variant::try_new(&m, &val).map_err(fail)?;
            let datafusion_parquet_variant::codec::Value::Object(obj) = var.get().map_err(fail)?
            else {
                return Err(fail("not an object"));
            };
            for (k, fv) in fields {
                let found = obj.get(k).map_err(fail)?.ok_or_else(|| fail(format!("{k:?} not found")))?;
                prop_assert_eq!(&decode_ours(found).map_err(fail)?.canonical(), &fv.canonical());
            }
            let missing = "\u{0}no such key\u{0}";
            prop_assert!(obj.get(missing).map_err(fail)?.is_none());
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Width boundaries (deterministic)
// ---------------------------------------------------------------------------------------------

/// Our encoding is canonical and valid, and both decoders agree with the model.
fn assert_round_trip(v: &V) -> (Vec<u8>, Vec<u8>) {
    let (m, val) = encode_ours(v).unwrap();
    validate(&m, &val).unwrap();
    check_canonical(&m, &val).unwrap();
    let expected = v.canonical();
    assert!(decode_ours_bytes(&m, &val).unwrap() == expected);
    assert!(decode_arrow(&m, &val).unwrap() == expected);
    let (am, av) = encode_arrow(v);
    validate(&am, &av).unwrap();
    assert!(decode_ours_bytes(&am, &av).unwrap().canonical() == expected);
    (m, val)
}

/// A binary value whose encoding is exactly `size` bytes.
fn binary_of_size(size: usize) -> V {
    V::Binary(vec![0xAB; size - 5])
}

#[test]
fn array_offset_width_boundaries() {
    for (data, width) in [
        (255, 1),
        (256, 2),
        (65_535, 2),
        (65_536, 3),
        (16_777_215, 3),
        (16_777_216, 4),
    ] {
        let (_, val) = assert_round_trip(&V::Arr(vec![binary_of_size(data)]));
        assert_eq!(
            val[0],
            0x03 | (((width - 1) as u8) << 2),
            "{data} bytes of data"
        );
        // Same for an object.
        let (_, val) = assert_round_trip(&V::Obj(vec![("k".into(), binary_of_size(data))]));
        assert_eq!(
            val[0],
            0x02 | (((width - 1) as u8) << 2),
            "{data} bytes of data"
        );
    }
}

#[test]
fn element_count_boundaries() {
    for n in [255usize, 256, 257] {
        let (_, val) = assert_round_trip(&V::Arr(vec![V::Null; n]));
        assert_eq!(val[0] & 0x10 != 0, n > 255, "array of {n}");
        // 256 distinct keys use ids 0..=255 (1 byte); 257 need 2 bytes.
        let fields: Vec<(String, V)> = (0..n).rev().map(|i| (format!("{i:03}"), V::Null)).collect();
        let (m, val) = assert_round_trip(&V::Obj(fields));
        assert_eq!(val[0] & 0x40 != 0, n > 255, "object of {n}");
        let id_width = ((val[0] >> 4) & 3) + 1;
        assert_eq!(id_width as usize, width_for(n - 1), "object of {n}");
        assert_eq!(parse_metadata(&m).0.len(), n);
    }
}

#[test]
fn metadata_offset_width_boundaries() {
    for (len, width) in [(255usize, 1u8), (256, 2), (65_535, 2), (65_536, 3)] {
        let (m, _) = assert_round_trip(&V::Obj(vec![("k".repeat(len), V::I8(1))]));
        assert_eq!(m[0], 0x11 | ((width - 1) << 6), "key of {len} bytes");
    }
}

#[test]
fn reused_builder_starts_afresh_after_many_keys() {
    // More distinct keys across rows than the builder keeps: the dictionary starts afresh and the
    // rows after it (with old and new keys) are still exactly what fresh builders write.
    let mut b = VariantBuilder::new();
    let row = |i: usize| {
        V::Obj(vec![
            (format!("k{i}"), V::I8(1)),
            ("z".to_string(), V::Null),
        ])
    };
    for i in (0..6000).chain(0..50).chain([7, 7, 5999, 5999]) {
        let v = row(i).canonical();
        b.reset();
        build_ours(&mut b, &v).unwrap();
        b.finish().unwrap();
        let (m, value) = encode_ours(&v).unwrap();
        assert_eq!((b.metadata(), b.value()), (&m[..], &value[..]), "row {i}");
    }
}

#[test]
fn dictionary_resorted_after_growth() {
    // A small object closed while the dictionary had 3 keys (1-byte ids), then 300 more keys in
    // reverse order: the final dictionary needs 2-byte ids and a re-sort.
    let mut fields = vec![(
        "zz_inner".to_string(),
        V::Obj(vec![("b".into(), V::I8(1)), ("a".into(), V::I8(2))]),
    )];
    fields.extend((0..300).rev().map(|i| (format!("k{i:03}"), V::I16(i))));
    let (m, _) = assert_round_trip(&V::Obj(fields.clone()));
    assert!(parse_metadata(&m).0.len() == 303);
    // Inner objects both before and after the growth, inside an array.
    let v = V::Arr(vec![
        V::Obj(vec![("y".into(), V::Null), ("x".into(), V::Null)]),
        V::Obj(fields),
        V::Obj(vec![("x".into(), V::Bool(true)), ("a".into(), V::Null)]),
    ]);
    assert_round_trip(&v);
}

// ---------------------------------------------------------------------------------------------
// (c) JSON round trips
// ---------------------------------------------------------------------------------------------

/// A JSON document to write as text. Numbers are kept as their text; strings carry how to
/// escape them; objects keep their (random) order.
#[derive(Clone, Debug)]
enum J {
    Null,
    Bool(bool),
    Num(String),
    /// (value, escape mode: 0 = serde_json, 1 = \u escapes lowercase, 2 = uppercase)
    Str(String, u8),
    Arr(Vec<J>),
    Obj(Vec<(String, u8, J)>),
}

fn number_text_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|i| i.to_string()),
        any::<i8>().prop_map(|i| i.to_string()),
        ((i64::MAX as u64) + 1..=u64::MAX).prop_map(|u| u.to_string()),
        "-?[1-9][0-9]{18,45}",
        "-?(0|[1-9][0-9]{0,20})\\.[0-9]{1,40}",
        "-?0\\.0{0,40}[1-9]{1,3}",
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| serde_json::to_string(&f).unwrap()),
        "-?[1-9](\\.[0-9]{1,17})?[eE][+-]?[0-9]{1,3}",
        prop::sample::select(vec![
            "0",
            "-0",
            "0.0",
            "-0.0",
            "1.0",
            "2.50",
            "1e0",
            "1E+2",
            "123e-2",
            "1e309",
            "-1e309",
            "1e-400",
            "-0.0e0",
            "4.9e-324",
            "1.7976931348623157e308",
            "9223372036854775807",
            "-9223372036854775808",
            "9223372036854775808",
            "-9223372036854775809",
            "99999999999999999999999999999999999999",
            "999999999999999999999999999999999999999",
            "9999999999999999999.9999999999999999999",
            "9999999999999999999.99999999999999999999",
            "0.00000000000000000000000000000000000001",
            "0.000000000000000000000000000000000000001",
            "1.23456789012345678901234567890123456789",
            "1.000000000000000000000000000000000000000",
            "10000000",
            "9999999.999",
            "0.001",
            "0.00099",
        ])
        .prop_map(String::from),
    ]
}

fn json_strategy() -> impl Strategy<Value = J> {
    let leaf = prop_oneof![
        1 => Just(J::Null),
        1 => any::<bool>().prop_map(J::Bool),
        3 => number_text_strategy().prop_map(J::Num),
        3 => (string_strategy(), 0u8..3).prop_map(|(s, m)| J::Str(s, m)),
    ];
    leaf.prop_recursive(4, 64, 10, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..10).prop_map(J::Arr),
            prop::collection::vec((key_strategy(), 0u8..3, inner), 0..10).prop_map(|f| {
                let mut seen = std::collections::HashSet::new();
                J::Obj(
                    f.into_iter()
                        .filter(|(k, _, _)| seen.insert(k.clone()))
                        .collect(),
                )
            }),
        ]
    })
}

fn write_json_string(out: &mut String, s: &str, mode: u8) {
    if mode == 0 {
        out.push_str(&serde_json::to_string(s).unwrap());
        return;
    }
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '/' => out.push_str("\\/"),
            c if (c as u32) < 0x20 || !c.is_ascii() => {
                let mut buf = [0u16; 2];
                for u in c.encode_utf16(&mut buf) {
                    if mode == 1 {
                        write!(out, "\\u{u:04x}").unwrap();
                    } else {
                        write!(out, "\\u{u:04X}").unwrap();
                    }
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn write_j(out: &mut String, j: &J, ws: &str) {
    match j {
        J::Null => out.push_str("null"),
        J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        J::Num(t) => out.push_str(t),
        J::Str(s, mode) => write_json_string(out, s, *mode),
        J::Arr(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(ws);
                write_j(out, v, ws);
                out.push_str(ws);
            }
            out.push(']');
        }
        J::Obj(fields) => {
            out.push('{');
            for (i, (k, mode, v)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(ws);
                write_json_string(out, k, *mode);
                out.push_str(ws);
                out.push(':');
                out.push_str(ws);
                write_j(out, v, ws);
            }
            out.push_str(ws);
            out.push('}');
        }
    }
}

/// What a JSON number must become (Spark's rules).
enum NumExpect {
    /// An int or decimal printed exactly as this text.
    Exact(String),
    /// A double with this value.
    Double(f64),
}

fn expect_number(t: &str) -> NumExpect {
    let double = || NumExpect::Double(t.parse().unwrap());
    if t.contains(['e', 'E']) {
        return double();
    }
    let (neg, body) = match t.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, t),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let significant = format!("{int}{frac}").trim_start_matches('0').len();
    if !body.contains('.') {
        if let Ok(i) = t.parse::<i64>() {
            return NumExpect::Exact(i.to_string());
        }
        return if significant <= 38 {
            NumExpect::Exact(t.to_string())
        } else {
            double()
        };
    }
    if significant > 38 || frac.len() > 38 {
        return double();
    }
    let frac = frac.trim_end_matches('0');
    let int = match int.trim_start_matches('0') {
        "" => "0",
        i => i,
    };
    if int == "0" && frac.is_empty() {
        return NumExpect::Exact("0".into());
    }
    let mut s = String::new();
    if neg {
        s.push('-');
    }
    s.push_str(int);
    if !frac.is_empty() {
        s.push('.');
        s.push_str(frac);
    }
    NumExpect::Exact(s)
}

/// Checks that `t` is how Java's `Double.toString` (JDK 19+, shortest digits) prints `f`:
/// plain `ddd.ddd` for 1e-3 <= |f| < 1e7, else `d.dddE[-]n`; it parses back to exactly `f`;
/// and it has no more significant digits than the shortest round-trip representation (two for
/// one-digit values, which Java prints as `d.0` or the closest two-digit decimal).
pub fn check_java_double(t: &str, f: f64) -> Result<(), String> {
    let parsed: f64 = t.parse().map_err(|_| format!("{t:?} is not a number"))?;
    if parsed.to_bits() != f.to_bits() {
        return Err(format!("{t:?} does not parse back to {f:?}"));
    }
    check_java_layout(t, f.is_sign_negative(), f.abs(), &format!("{:e}", f.abs()))
}

/// The same for Java's `Float.toString`.
pub fn check_java_float(t: &str, f: f32) -> Result<(), String> {
    let parsed: f32 = t.parse().map_err(|_| format!("{t:?} is not a number"))?;
    if parsed.to_bits() != f.to_bits() {
        return Err(format!("{t:?} does not parse back to {f:?}"));
    }
    check_java_layout(
        t,
        f.is_sign_negative(),
        f64::from(f.abs()),
        &format!("{:e}", f.abs()),
    )
}

/// `shortest` is Rust's `{:e}` of the absolute value (shortest round-trip digits).
fn check_java_layout(t: &str, negative: bool, a: f64, shortest: &str) -> Result<(), String> {
    let body = t.strip_prefix('-').unwrap_or(t);
    if t.starts_with('-') != negative {
        return Err(format!("{t:?}: wrong sign"));
    }
    let digits_ok = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let frac_ok = |s: &str| digits_ok(s) && (s == "0" || !s.ends_with('0'));
    let (mantissa, exp) = body.split_once('E').unwrap_or((body, ""));
    let Some((int, frac)) = mantissa.split_once('.') else {
        return Err(format!("{t:?} has no decimal point"));
    };
    let ok = if a == 0.0 {
        body == "0.0"
    } else if (1e-3..1e7).contains(&a) {
        exp.is_empty() && digits_ok(int) && (int == "0" || !int.starts_with('0')) && frac_ok(frac)
    } else {
        let exp_digits = exp.strip_prefix('-').unwrap_or(exp);
        int.len() == 1
            && int != "0"
            && digits_ok(int)
            && frac_ok(frac)
            && digits_ok(exp_digits)
            && !exp_digits.starts_with('0')
    };
    if !ok {
        return Err(format!("{t:?} is not Java's layout"));
    }
    let count = |s: &str| {
        s.bytes()
            .filter(u8::is_ascii_digit)
            .map(char::from)
            .collect::<String>()
            .trim_start_matches('0')
            .trim_end_matches('0')
            .len()
    };
    let ours = count(mantissa);
    let shortest = count(shortest.split('e').next().unwrap());
    if ours > shortest.max(2) {
        return Err(format!(
            "{t:?} has {ours} significant digits, shortest has {shortest}"
        ));
    }
    Ok(())
}

fn check_json(j: &J, out: &Json) -> Result<(), String> {
    match (j, out) {
        (J::Null, Json::Null) => Ok(()),
        (J::Bool(a), Json::Bool(b)) if a == b => Ok(()),
        (J::Num(t), o) => match (expect_number(t), o) {
            (NumExpect::Exact(e), Json::Num(o)) if e == *o => Ok(()),
            (NumExpect::Double(f), Json::Str(s)) if f.is_infinite() => {
                let want = if f > 0.0 { "Infinity" } else { "-Infinity" };
                if s == want {
                    Ok(())
                } else {
                    Err(format!("{t} rendered as {s:?}"))
                }
            }
            (NumExpect::Double(f), Json::Num(o)) if f.is_finite() => {
                check_java_double(o, f).map_err(|e| format!("number {t}: {e}"))
            }
            (NumExpect::Exact(e), o) => Err(format!("number {t}: expected {e}, got {o:?}")),
            (NumExpect::Double(f), o) => Err(format!("number {t}: expected {f:?}, got {o:?}")),
        },
        (J::Str(a, _), Json::Str(b)) if a == b => Ok(()),
        (J::Arr(a), Json::Arr(b)) if a.len() == b.len() => {
            a.iter().zip(b).try_for_each(|(x, y)| check_json(x, y))
        }
        (J::Obj(a), Json::Obj(b)) if a.len() == b.len() => {
            let mut a: Vec<_> = a.iter().collect();
            a.sort_by(|x, y| x.0.as_bytes().cmp(y.0.as_bytes()));
            for ((k, _, v), (k2, v2)) in a.into_iter().zip(b) {
                if k != k2 {
                    return Err(format!("key {k:?} expected, got {k2:?} (sorted key order)"));
                }
                check_json(v, v2).map_err(|e| format!("{k:?}: {e}"))?;
            }
            Ok(())
        }
        _ => Err(format!("{j:?} rendered as {out:?}")),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn json_round_trip(j in json_strategy(), ws in prop::sample::select(vec!["", " ", "\n\t ", "\r\n"])) {
        let mut text = String::new();
        text.push_str(ws);
        write_j(&mut text, &j, ws);
        text.push_str(ws);

        let mut b = VariantBuilder::new();
        JsonParser::new().parse(&text, &mut b).map_err(|e| fail(format!("{text}: {e}")))?;
        let (m, v) = (b.metadata().to_vec(), b.value().to_vec());
        validate(&m, &v).map_err(fail)?;
        check_canonical(&m, &v).map_err(fail)?;
        prop_assert!(decode_arrow(&m, &v).map_err(fail)? == decode_ours_bytes(&m, &v).map_err(fail)?);

        let out = to_json_ours(&m, &v, &SessionTimeZone::utc()).map_err(fail)?;
        serde_json::from_str::<serde_json::Value>(&out)
            .map_err(|e| fail(format!("output is not JSON: {e}: {out}")))?;
        let parsed = parse_strict_json(&out).map_err(|e| fail(format!("{e}: {out}")))?;
        check_json(&j, &parsed).map_err(|e| fail(format!("{e}\ninput: {text}\noutput: {out}")))?;

        // Parsing the output again follows the same rules (`1.0` from a double is now a decimal
        // and prints `1`, so the text is not a fixed point, but the second rendering is).
        JsonParser::new().parse(&out, &mut b).map_err(fail)?;
        let again = to_json_ours(b.metadata(), b.value(), &SessionTimeZone::utc()).map_err(fail)?;
        let again_parsed = parse_strict_json(&again).map_err(|e| fail(format!("{e}: {again}")))?;
        check_json(&j_of(&parsed), &again_parsed)
            .map_err(|e| fail(format!("{e}\nfirst: {out}\nsecond: {again}")))?;
        JsonParser::new().parse(&again, &mut b).map_err(fail)?;
        let third = to_json_ours(b.metadata(), b.value(), &SessionTimeZone::utc()).map_err(fail)?;
        prop_assert_eq!(third, again);
    }

    #[test]
    fn serde_json_values_round_trip(v in json_strategy()) {
        // serde_json's own text (compact, keys sorted) through our parser and writer, compared
        // with serde_json's semantic equality where numbers are compared as f64 (serde_json
        // parses floats best-effort, so both sides go through its parser).
        let mut text = String::new();
        write_j(&mut text, &v, "");
        let Ok(value) = serde_json::from_str::<serde_json::Value>(&text) else {
            // e.g. 1e309 is out of serde_json's range
            return Ok(());
        };
        let text = serde_json::to_string(&value).unwrap();
        let mut b = VariantBuilder::new();
        JsonParser::new().parse(&text, &mut b).map_err(fail)?;
        let out = to_json_ours(b.metadata(), b.value(), &SessionTimeZone::utc()).map_err(fail)?;
        let back: serde_json::Value = serde_json::from_str(&out).map_err(fail)?;
        prop_assert!(json_eq(&value, &back), "{} -> {}", text, out);
    }
}

/// The document a rendering describes (to feed it back in).
fn j_of(json: &Json) -> J {
    match json {
        Json::Null => J::Null,
        Json::Bool(b) => J::Bool(*b),
        Json::Num(t) => J::Num(t.clone()),
        Json::Str(s) => J::Str(s.clone(), 0),
        Json::Arr(items) => J::Arr(items.iter().map(j_of).collect()),
        Json::Obj(fields) => J::Obj(
            fields
                .iter()
                .map(|(k, v)| (k.clone(), 0, j_of(v)))
                .collect(),
        ),
    }
}

fn json_eq(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value as S;
    match (a, b) {
        (S::Number(x), S::Number(y)) => {
            if let (Some(x), Some(y)) = (x.as_i64(), y.as_i64()) {
                return x == y;
            }
            if let (Some(x), Some(y)) = (x.as_u64(), y.as_u64()) {
                return x == y;
            }
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            x == y || (x - y).abs() <= x.abs().max(y.abs()) * 4.0 * f64::EPSILON
        }
        (S::Array(x), S::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(p, q))
        }
        (S::Object(x), S::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

#[test]
fn expected_number_oracle_examples() {
    // The oracle itself, on SEMANTICS.md's examples.
    let exact = |t: &str, e: &str| match expect_number(t) {
        NumExpect::Exact(s) => assert_eq!(s, e, "{t}"),
        NumExpect::Double(f) => panic!("{t}: double {f}"),
    };
    exact("-0", "0");
    exact("-0.0", "0");
    exact("2.50", "2.5");
    exact("9223372036854775808", "9223372036854775808");
    exact(
        "9999999999999999999.9999999999999999999",
        "9999999999999999999.9999999999999999999",
    );
    for (t, f) in [
        ("9999999999999999999.99999999999999999999", 1e19),
        ("999999999999999999999999999999999999999", 1e39),
        ("0.000000000000000000000000000000000000001", 1e-39),
        ("1e2", 100.0),
    ] {
        match expect_number(t) {
            NumExpect::Double(g) => assert_eq!(g, f, "{t}"),
            NumExpect::Exact(s) => panic!("{t}: exact {s}"),
        }
    }
    check_java_double("1.0E10", 1e10).unwrap();
    check_java_double("1500.0", 1500.0).unwrap();
    check_java_double("1.0E-5", 1e-5).unwrap();
    check_java_double("4.9E-324", 5e-324).unwrap();
    check_java_double("-0.0", -0.0).unwrap();
    assert!(check_java_double("1.0e10", 1e10).is_err());
    assert!(check_java_double("10000000.0", 1e7).is_err());
    assert!(check_java_double("1.50", 1.5).is_err());
    assert!(check_java_double("0.00010", 1e-4).is_err());
}

// ---------------------------------------------------------------------------------------------
// Scalar renderings against independent formatters
// ---------------------------------------------------------------------------------------------

fn render(v: &V, tz: &SessionTimeZone) -> String {
    let (m, val) = encode_ours(v).unwrap();
    to_json_ours(&m, &val, tz).unwrap()
}

/// `unscaled / 10^scale` as plain text without trailing fractional zeros.
fn plain_decimal(unscaled: i128, scale: u8) -> String {
    let digits = unscaled.unsigned_abs().to_string();
    let scale = scale as usize;
    let padded = if digits.len() <= scale {
        format!("{}{digits}", "0".repeat(scale + 1 - digits.len()))
    } else {
        digits
    };
    let (int, frac) = padded.split_at(padded.len() - scale);
    let frac = frac.trim_end_matches('0');
    let sign = if unscaled < 0 { "-" } else { "" };
    if frac.is_empty() {
        format!("{sign}{int}")
    } else {
        format!("{sign}{int}.{frac}")
    }
}

/// `.ffffff` trimmed of trailing zeros, or nothing.
fn fraction(nanos: u32) -> String {
    if nanos == 0 {
        String::new()
    } else {
        format!(".{nanos:09}").trim_end_matches('0').to_string()
    }
}

fn base64(bytes: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in bytes.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                out.push(A[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn doubles_and_floats_print_as_java(
        bits in any::<u64>(),
        d in any::<f64>(),
        fbits in any::<u32>(),
        f in any::<f32>(),
    ) {
        let utc = SessionTimeZone::utc();
        for x in [f64::from_bits(bits), d] {
            let t = render(&V::Double(F64(x)), &utc);
            if x.is_nan() {
                prop_assert_eq!(t, "\"NaN\"");
            } else if x.is_infinite() {
                prop_assert_eq!(t, if x > 0.0 { "\"Infinity\"" } else { "\"-Infinity\"" });
            } else {
                check_java_double(&t, x).map_err(fail)?;
            }
        }
        for x in [f32::from_bits(fbits), f] {
            let t = render(&V::Float(F32(x)), &utc);
            if x.is_nan() {
                prop_assert_eq!(t, "\"NaN\"");
            } else if x.is_infinite() {
                prop_assert_eq!(t, if x > 0.0 { "\"Infinity\"" } else { "\"-Infinity\"" });
            } else {
                check_java_float(&t, x).map_err(fail)?;
            }
        }
    }

    #[test]
    fn decimals_binary_uuid_print_exactly(
        d4 in (-MAX4..=MAX4, 0u8..=9),
        d8 in (-MAX8..=MAX8, 0u8..=18),
        d16 in (-MAX16..=MAX16, 0u8..=38),
        bytes in prop::collection::vec(any::<u8>(), 0..40),
        uuid in any::<[u8; 16]>(),
    ) {
        let utc = SessionTimeZone::utc();
        prop_assert_eq!(render(&V::D4(d4.0, d4.1), &utc), plain_decimal(d4.0.into(), d4.1));
        prop_assert_eq!(render(&V::D8(d8.0, d8.1), &utc), plain_decimal(d8.0.into(), d8.1));
        // (past 38 digits a decimal16 is malformed, as in Spark: `codec_corrupt.rs`)
        prop_assert_eq!(render(&V::D16(d16.0, d16.1), &utc), plain_decimal(d16.0, d16.1));
        prop_assert_eq!(render(&V::Binary(bytes.clone()), &utc), format!("\"{}\"", base64(&bytes)));
        prop_assert_eq!(
            render(&V::Uuid(uuid), &utc),
            format!("\"{}\"", parquet_variant::Uuid::from_bytes(uuid).hyphenated())
        );
    }

    #[test]
    fn dates_and_times_print_as_java_time(
        // Years 0000..=9999, where chrono's %Y matches ISO_LOCAL_DATE.
        days in -719_528i32..2_932_896,
        micros in -62_167_219_200_000_000i64..253_402_300_800_000_000,
        nanos in any::<i64>(),
        time in 0i64..86_400_000_000,
        // 1900..2100 in Los Angeles: whole-hour offsets.
        la_micros in -2_208_988_800_000_000i64..4_102_444_800_000_000,
    ) {
        let utc = SessionTimeZone::utc();
        let date = NaiveDate::from_ymd_opt(1970, 1, 1).unwrap() + chrono::Duration::days(days.into());
        prop_assert_eq!(render(&V::Date(days), &utc), format!("\"{}\"", date.format("%Y-%m-%d")));

        let dt = chrono::DateTime::from_timestamp_micros(micros).unwrap();
        let local = format!("{}{}", dt.format("%Y-%m-%d %H:%M:%S"), fraction(dt.timestamp_subsec_nanos()));
        prop_assert_eq!(render(&V::TsNtz(micros), &utc), format!("\"{local}\""));
        prop_assert_eq!(render(&V::Ts(micros), &utc), format!("\"{local}+00:00\""));
        let kolkata = SessionTimeZone::parse(Some("+05:30")).unwrap();
        let shifted = dt + chrono::Duration::minutes(330);
        if shifted.year() <= 9999 {
            prop_assert_eq!(
                render(&V::Ts(micros), &kolkata),
                format!(
                    "\"{}{}+05:30\"",
                    shifted.format("%Y-%m-%d %H:%M:%S"),
                    fraction(shifted.timestamp_subsec_nanos())
                )
            );
        }

        let dt = chrono::DateTime::from_timestamp_nanos(nanos);
        let local = format!("{}{}", dt.format("%Y-%m-%d %H:%M:%S"), fraction(dt.timestamp_subsec_nanos()));
        prop_assert_eq!(render(&V::TsNtzNanos(nanos), &utc), format!("\"{local}\""));
        prop_assert_eq!(render(&V::TsNanos(nanos), &utc), format!("\"{local}+00:00\""));

        let t = chrono::NaiveTime::from_num_seconds_from_midnight_opt(
            (time / 1_000_000) as u32,
            (time % 1_000_000) as u32 * 1000,
        )
        .unwrap();
        prop_assert_eq!(
            render(&V::Time(time), &utc),
            format!("\"{}{}\"", t.format("%H:%M:%S"), fraction(t.nanosecond()))
        );

        let la = SessionTimeZone::parse(Some("America/Los_Angeles")).unwrap();
        let zoned = chrono::DateTime::from_timestamp_micros(la_micros)
            .unwrap()
            .with_timezone(&chrono_tz::America::Los_Angeles);
        prop_assert_eq!(
            render(&V::Ts(la_micros), &la),
            format!(
                "\"{}{}{}\"",
                zoned.format("%Y-%m-%d %H:%M:%S"),
                fraction(zoned.timestamp_subsec_nanos()),
                zoned.format("%:z")
            )
        );
    }
}

// ---------------------------------------------------------------------------------------------
// SQL values to variants: our `to_variant` converter against arrow-rs `cast_to_variant`
// ---------------------------------------------------------------------------------------------

/// Our value in the form arrow-rs writes it: object fields that are variant null dropped (arrow-rs
/// leaves NULL struct fields out; Spark and we write them as variant nulls), and every decimal as
/// a decimal16 (arrow-rs writes a Decimal128 column as decimal16 whatever its precision; we pick
/// the width from the precision, as Spark does).
fn as_arrow_rs_writes(v: V) -> V {
    match v {
        V::Obj(fields) => V::Obj(
            fields
                .into_iter()
                .filter(|(_, f)| *f != V::Null)
                .map(|(k, f)| (k, as_arrow_rs_writes(f)))
                .collect(),
        ),
        V::Arr(items) => V::Arr(items.into_iter().map(as_arrow_rs_writes).collect()),
        V::D4(u, s) => V::D16(u.into(), s),
        V::D8(u, s) => V::D16(u.into(), s),
        other => other,
    }
}

/// Every type both implementations convert the same way, with NULLs at every level: each row of
/// our output decodes (with our decoder and arrow-rs's) to what arrow-rs's output decodes to.
#[test]
fn to_variant_matches_arrow_rs_cast_to_variant() {
    use datafusion::arrow::array::{
        Array, ArrayRef, AsArray, BinaryArray, BooleanArray, Date32Array, Decimal128Array,
        Float32Array, Float64Array, Int8Array, Int16Array, Int32Array, Int64Array, ListArray,
        StringArray, StructArray, TimestampMicrosecondArray,
    };
    use datafusion::arrow::buffer::{NullBuffer, OffsetBuffer};
    use datafusion::arrow::datatypes::{DataType, Field, Fields};
    use datafusion_parquet_variant::from_arrow::arrow_to_variant;
    use std::sync::Arc;

    let n = 6;
    let columns: Vec<ArrayRef> = vec![
        Arc::new(BooleanArray::from(vec![
            Some(true),
            None,
            Some(false),
            Some(true),
            None,
            Some(false),
        ])),
        Arc::new(Int8Array::from(vec![
            Some(-128),
            Some(0),
            None,
            Some(127),
            Some(1),
            Some(-1),
        ])),
        Arc::new(Int16Array::from(vec![
            Some(i16::MIN),
            None,
            Some(300),
            Some(0),
            Some(i16::MAX),
            Some(7),
        ])),
        Arc::new(Int32Array::from(vec![
            Some(i32::MIN),
            Some(70000),
            None,
            Some(0),
            Some(-5),
            Some(i32::MAX),
        ])),
        Arc::new(Int64Array::from(vec![
            Some(i64::MIN),
            Some(1 << 40),
            Some(0),
            None,
            Some(-9),
            Some(i64::MAX),
        ])),
        Arc::new(Float32Array::from(vec![
            Some(1.5),
            Some(-0.0),
            None,
            Some(f32::MAX),
            Some(1e-40),
            Some(3.25),
        ])),
        Arc::new(Float64Array::from(vec![
            Some(0.1),
            None,
            Some(-2.5e300),
            Some(5e-324),
            Some(0.0),
            Some(1e15),
        ])),
        Arc::new(
            Decimal128Array::from(vec![
                Some(12345),
                Some(-1),
                None,
                Some(0),
                Some(99999),
                Some(-99999),
            ])
            .with_precision_and_scale(5, 2)
            .unwrap(),
        ),
        Arc::new(
            Decimal128Array::from(vec![
                Some(i128::from(i64::MAX) * 1000),
                Some(1),
                None,
                Some(-7),
                Some(0),
                Some(10),
            ])
            .with_precision_and_scale(30, 3)
            .unwrap(),
        ),
        Arc::new(StringArray::from(vec![
            Some(""),
            Some("short"),
            None,
            Some("é ü 漢字"),
            Some(&"x".repeat(100)[..]),
            Some("a\"b"),
        ])),
        Arc::new(BinaryArray::from(vec![
            Some(&b""[..]),
            Some(b"\x00\xff"),
            None,
            Some(b"abc"),
            Some(b"z"),
            Some(b"\x01"),
        ])),
        Arc::new(Date32Array::from(vec![
            Some(0),
            Some(-719162),
            None,
            Some(19000),
            Some(2932896),
            Some(-1),
        ])),
        Arc::new(TimestampMicrosecondArray::from(vec![
            Some(0),
            Some(-1),
            None,
            Some(1_700_000_000_123_456),
            Some(1),
            Some(253_402_300_799_999_999),
        ])),
        Arc::new(
            TimestampMicrosecondArray::from(vec![
                Some(0),
                None,
                Some(-62_135_596_800_000_000),
                Some(1),
                Some(2),
                Some(3),
            ])
            .with_timezone("UTC"),
        ),
        Arc::new(ListArray::new(
            Arc::new(Field::new("item", DataType::Int64, true)),
            OffsetBuffer::from_lengths([2, 0, 1, 3, 0, 1]),
            Arc::new(Int64Array::from(vec![
                Some(1),
                None,
                Some(3),
                Some(4),
                Some(5),
                Some(6),
                Some(7),
            ])),
            Some(NullBuffer::from(vec![true, true, true, true, false, true])),
        )),
    ];
    let names = [
        "bool", "i8", "i16", "i32", "i64", "f32", "f64", "dec5_2", "dec30_3", "str", "bin", "date",
        "ts_ntz", "ts", "list",
    ];
    let fields: Fields = names
        .iter()
        .zip(&columns)
        .map(|(name, c)| Field::new(*name, c.data_type().clone(), true))
        .collect();
    let inner = StructArray::new(fields.clone(), columns, None);
    // A nested struct column too, NULL in one row.
    let outer_fields = Fields::from(vec![
        Field::new("inner", DataType::Struct(fields), true),
        Field::new("id", DataType::Int32, true),
    ]);
    let outer: ArrayRef = Arc::new(StructArray::new(
        outer_fields.clone(),
        vec![
            Arc::new(inner),
            Arc::new(Int32Array::from((0..n as i32).collect::<Vec<_>>())),
        ],
        Some(NullBuffer::from(vec![true, true, true, false, true, true])),
    ));
    let field = Field::new("x", DataType::Struct(outer_fields), true);

    let ours = arrow_to_variant("to_variant", &field, &outer).unwrap();
    let ours = ours.as_struct();
    let theirs = parquet_variant_compute::cast_to_variant(outer.as_ref())
        .unwrap()
        .into_inner();
    let their_metadata = theirs.column_by_name("metadata").unwrap().as_binary_view();
    let their_value = theirs.column_by_name("value").unwrap().as_binary_view();
    let our_metadata = ours.column(0).as_binary::<i32>();
    let our_value = ours.column(1).as_binary::<i32>();
    for i in 0..n {
        assert_eq!(ours.is_null(i), theirs.is_null(i), "row {i}: NULL differs");
        if ours.is_null(i) {
            continue;
        }
        let (m, v) = (our_metadata.value(i), our_value.value(i));
        validate(m, v).unwrap_or_else(|e| panic!("row {i}: ours does not validate: {e}"));
        let mine = decode_ours_bytes(m, v).unwrap().canonical();
        let mine_by_arrow = decode_arrow(m, v).unwrap().canonical();
        assert_eq!(
            mine, mine_by_arrow,
            "row {i}: arrow-rs reads ours differently"
        );
        let expected = decode_arrow(their_metadata.value(i), their_value.value(i))
            .unwrap()
            .canonical();
        assert_eq!(
            as_arrow_rs_writes(mine),
            expected,
            "row {i}: ours and arrow-rs cast_to_variant differ"
        );
    }
}
