//! Corrupt input: our codec returns errors, never panics (nothing here catches a panic; a panic
//! fails the test).
//! - every truncation and every single-bit flip of every conformance example's value and
//!   metadata bytes, through `validate`, `write_json`, the views and lookups;
//! - random mutations of random values;
//! - hand-made corrupt bytes with the specific error each must give.
//!
//! Invariant checked throughout: bytes that pass `validate` decode and render without error.

mod common;

use common::*;
use datafusion_parquet_variant::codec::{
    JsonRowWriter, Metadata, SessionTimeZone, Value, Variant, VariantError, VariantPath, validate,
    validate_with_depth, value_size, write_json,
};
use proptest::prelude::*;

/// Runs every reader over (metadata, value); returns whether `validate` accepted it.
/// Panics (fails the test) if a reader panics, or if validated bytes fail to decode or render.
fn exercise(m: &[u8], v: &[u8]) -> bool {
    let valid = validate(m, v).is_ok();
    let _ = value_size(v);
    if let Ok(meta) = Metadata::try_new(m) {
        let _ = meta.validate();
        let _ = meta.find("a");
        let _ = meta.find("id");
        for id in 0..meta.len().min(64) {
            let _ = meta.key(id);
        }
        let _ = meta.key(meta.len());
    }
    let zones = [
        SessionTimeZone::utc(),
        SessionTimeZone::parse(Some("America/Los_Angeles")).unwrap(),
    ];
    for tz in &zones {
        let mut out = Vec::new();
        let rendered = match Variant::try_new(m, v) {
            Ok(var) => write_json(&mut out, var, tz),
            Err(e) => Err(e),
        };
        // The byte-level row writer (to_json's hot loop) renders exactly what write_json does:
        // the same text, or an error where it errs.
        let mut fast = Vec::new();
        let fast_rendered = JsonRowWriter::default().write(&mut fast, m, v, tz);
        assert_eq!(
            fast_rendered.is_ok(),
            rendered.is_ok(),
            "JsonRowWriter and write_json disagree on success: {fast_rendered:?} vs {rendered:?}"
        );
        if rendered.is_ok() {
            assert_eq!(fast, out, "JsonRowWriter and write_json render differently");
        }
        if valid {
            rendered.unwrap_or_else(|e| panic!("validated but write_json failed: {e}"));
            String::from_utf8(out).expect("write_json wrote invalid UTF-8");
        }
    }
    // The byte-level lookup (variant_get's hot loop) agrees with `navigate` wherever both read
    // the bytes, and reads every valid variant; its path shapes: one short key, two short keys
    // (`$.a.b`, `$.species.name` of the nested conformance example), and the general loop.
    for path in [
        "$",
        "$.a",
        "$.id",
        "$[0]",
        "$[1].a",
        "$.a.b",
        "$.species.name",
        "$.a[1].b",
        "$.zzz",
        "$['']",
    ] {
        let path = VariantPath::parse(path).unwrap();
        let raw = path.lookup_raw(m, v);
        let nav = Variant::try_new(m, v).and_then(|var| path.navigate(var));
        if valid {
            assert!(
                raw.is_ok(),
                "valid bytes unreadable by lookup_raw at {path}"
            );
            assert!(nav.is_ok(), "valid bytes unreadable by navigate at {path}");
        }
        if let (Ok(raw), Ok(nav)) = (raw, &nav) {
            assert_eq!(
                raw.map(|b| b.as_ptr()),
                nav.map(|n| n.value_bytes().as_ptr()),
                "lookup_raw and navigate disagree at {path}"
            );
        }
    }
    let decoded = decode_ours_bytes(m, v);
    if valid {
        decoded.unwrap_or_else(|e| panic!("validated but decoding failed: {e}"));
    }
    if let Ok(var) = Variant::try_new(m, v) {
        let _ = var.is_null();
        let _ = var.basic_type();
        let _ = var.exact_value_bytes();
        match var.get() {
            Ok(Value::Object(obj)) => {
                let _ = obj.is_sorted();
                for name in ["a", "id", "zzz", ""] {
                    let _ = obj.get(name);
                }
                for i in 0..obj.len().min(64) {
                    let _ = obj.key(i);
                    let _ = obj.field_id(i);
                    let _ = obj.value(i).map(|c| c.get());
                }
                let _ = obj.value(obj.len());
                for kv in obj.iter().take(64) {
                    let _ = kv;
                }
            }
            Ok(Value::Array(arr)) => {
                for i in 0..arr.len().min(64) + 1 {
                    let _ = arr.get(i).map(|c| c.map(|c| c.get()));
                }
                for e in arr.iter().take(64) {
                    let _ = e.map(|e| e.get());
                }
            }
            _ => {}
        }
    }
    valid
}

#[test]
fn conformance_truncations_and_bit_flips() {
    let dir = conformance_dir("variant");
    let mut runs = 0usize;
    for (name, m, v) in conformance_examples(&dir) {
        assert!(exercise(&m, &v), "{name}: the example itself must validate");
        for k in 0..v.len() {
            assert!(
                !exercise(&m, &v[..k]),
                "{name}: value truncated to {k} of {} bytes validated",
                v.len()
            );
        }
        for k in 0..m.len() {
            assert!(
                !exercise(&m[..k], &v),
                "{name}: metadata truncated to {k} of {} bytes validated",
                m.len()
            );
        }
        for i in 0..v.len() {
            for bit in 0..8 {
                let mut w = v.clone();
                w[i] ^= 1 << bit;
                exercise(&m, &w);
            }
        }
        for i in 0..m.len() {
            for bit in 0..8 {
                let mut w = m.clone();
                w[i] ^= 1 << bit;
                exercise(&w, &v);
            }
        }
        // Both at once: a flipped metadata byte with a truncated value.
        for i in 0..m.len() {
            let mut w = m.clone();
            w[i] ^= 0x80;
            exercise(&w, &v[..v.len() / 2]);
        }
        runs += v.len() * 9 + m.len() * 10 + 1;
    }
    assert!(runs > 5_000, "only {runs} corrupt inputs");
}

// ---------------------------------------------------------------------------------------------
// Random mutations
// ---------------------------------------------------------------------------------------------

fn small_value() -> impl Strategy<Value = V> {
    let leaf = prop_oneof![
        Just(V::Null),
        any::<bool>().prop_map(V::Bool),
        any::<i8>().prop_map(V::I8),
        any::<i64>().prop_map(V::I64),
        any::<f64>().prop_map(|f| V::Double(F64(f))),
        // (valid decimals: digits and scale within the width's precision, 9 or 38)
        (-999_999_999..=999_999_999i32, 0u8..=9).prop_map(|(u, s)| V::D4(u, s)),
        (-(10i128.pow(38) - 1)..=10i128.pow(38) - 1, 0u8..=38).prop_map(|(u, s)| V::D16(u, s)),
        any::<i32>().prop_map(V::Date),
        any::<i64>().prop_map(V::Ts),
        any::<i64>().prop_map(V::TsNanos),
        (0i64..86_400_000_000).prop_map(V::Time),
        any::<[u8; 16]>().prop_map(V::Uuid),
        prop::collection::vec(any::<u8>(), 0..20).prop_map(V::Binary),
        "[a-c]{0,3}|[ -~]{60,70}".prop_map(V::Str),
    ];
    leaf.prop_recursive(4, 48, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(V::Arr),
            prop::collection::btree_map("[a-e]{0,2}", inner, 0..8)
                .prop_map(|m| V::Obj(m.into_iter().collect())),
        ]
    })
}

#[derive(Debug, Clone)]
enum Mutation {
    Set(usize, u8),
    Flip(usize, u8),
    Truncate(usize),
    Insert(usize, u8),
    Remove(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Set(i, b)),
        (any::<usize>(), 0u8..8).prop_map(|(i, b)| Mutation::Flip(i, b)),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Insert(i, b)),
        any::<usize>().prop_map(Mutation::Remove),
    ]
}

fn apply(bytes: &mut Vec<u8>, muts: &[Mutation]) {
    for m in muts {
        if bytes.is_empty() {
            return;
        }
        let n = bytes.len();
        match *m {
            Mutation::Set(i, b) => bytes[i % n] = b,
            Mutation::Flip(i, b) => bytes[i % n] ^= 1 << b,
            Mutation::Truncate(i) => bytes.truncate(i % n),
            Mutation::Insert(i, b) => bytes.insert(i % (n + 1), b),
            Mutation::Remove(i) => {
                bytes.remove(i % n);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_mutations_never_panic(
        v in small_value(),
        value_muts in prop::collection::vec(prop::collection::vec(mutation(), 1..4), 16),
        meta_muts in prop::collection::vec(mutation(), 0..3),
    ) {
        let (m, val) = encode_ours(&v).unwrap();
        prop_assert!(exercise(&m, &val));
        for muts in &value_muts {
            let mut w = val.clone();
            apply(&mut w, muts);
            exercise(&m, &w);
            let mut mm = m.clone();
            apply(&mut mm, &meta_muts);
            exercise(&mm, &w);
        }
    }

    #[test]
    fn random_bytes_never_panic(
        meta in prop_oneof![
            Just(vec![0x01, 0x00, 0x00]),
            Just(vec![0x11, 0x02, 0x00, 0x01, 0x02, b'a', b'b']),
            Just(vec![0x01, 0x03, 0x00, 0x01, 0x02, 0x03, b'b', b'a', b'b']),
            prop::collection::vec(any::<u8>(), 0..16),
        ],
        value in prop::collection::vec(any::<u8>(), 0..48),
    ) {
        exercise(&meta, &value);
    }
}

// ---------------------------------------------------------------------------------------------
// Hand-made corrupt bytes with specific errors
// ---------------------------------------------------------------------------------------------

/// Metadata with `keys` in the given order; `sorted` sets the flag.
fn metadata(keys: &[&str], sorted: bool) -> Vec<u8> {
    let mut m = vec![0x01 | if sorted { 0x10 } else { 0 }, keys.len() as u8, 0];
    let mut pos = 0;
    for k in keys {
        pos += k.len();
        m.push(pos as u8);
    }
    for k in keys {
        m.extend_from_slice(k.as_bytes());
    }
    m
}

/// A small object (1-byte count, ids and offsets) with the given field ids and child values.
fn object(ids: &[u8], children: &[&[u8]]) -> Vec<u8> {
    let mut v = vec![0x02, ids.len() as u8];
    v.extend_from_slice(ids);
    let mut pos = 0;
    v.push(0);
    for c in children {
        pos += c.len();
        v.push(pos as u8);
    }
    for c in children {
        v.extend_from_slice(c);
    }
    v
}

const EMPTY_META: &[u8] = &[0x01, 0x00, 0x00];
const NULL: &[u8] = &[0x00];
const TRUE: &[u8] = &[0x04];

fn is_malformed(r: Result<(), VariantError>) -> bool {
    matches!(r, Err(VariantError::Malformed(_)))
}

fn json(m: &[u8], v: &[u8]) -> Result<String, VariantError> {
    to_json_ours(m, v, &SessionTimeZone::utc())
}

#[test]
fn corrupt_metadata() {
    // Empty metadata.
    assert_eq!(
        validate(&[], NULL),
        Err(VariantError::Malformed("empty metadata".into()))
    );
    assert!(json(&[], NULL).is_err());
    // Version 2 (and 0, 15); the reserved bit 5 is ignored.
    for header in [0x02u8, 0x00, 0x0F, 0x12] {
        assert_eq!(
            validate(&[header, 0, 0], NULL),
            Err(VariantError::UnsupportedVersion(header & 0x0F)),
            "header {header:#x}"
        );
        assert_eq!(
            json(&[header, 0, 0], NULL),
            Err(VariantError::UnsupportedVersion(header & 0x0F))
        );
    }
    assert_eq!(validate(&[0x21, 0, 0], NULL), Ok(()));
    // Dictionary size larger than the bytes.
    assert!(is_malformed(validate(&[0x01, 5, 0, 1], NULL)));
    assert!(is_malformed(validate(
        &[0xC1, 0xFF, 0xFF, 0xFF, 0xFF],
        NULL
    )));
    assert!(is_malformed(validate(&[0x01], NULL)));
    assert!(is_malformed(validate(&[0x41, 0x00], NULL)));
    // Offsets decreasing.
    assert!(is_malformed(validate(
        &[0x01, 2, 0, 3, 1, b'a', b'b', b'c'],
        NULL
    )));
    // First offset not 0.
    assert!(is_malformed(validate(&[0x01, 1, 1, 2, b'a', b'b'], NULL)));
    // Last offset past the end.
    assert!(is_malformed(validate(&[0x01, 1, 0, 3, b'a', b'b'], NULL)));
    // Non-UTF-8 key.
    assert!(is_malformed(validate(&[0x01, 1, 0, 1, 0xFF], NULL)));
    assert!(is_malformed(validate(&[0x01, 1, 0, 2, 0xC3, 0x28], NULL)));
    // Flagged sorted but not sorted, or not unique.
    assert!(is_malformed(validate(&metadata(&["b", "a"], true), NULL)));
    assert!(is_malformed(validate(&metadata(&["a", "a"], true), NULL)));
    // Not flagged: any order, duplicates allowed in the dictionary itself.
    assert_eq!(validate(&metadata(&["b", "a", "b"], false), NULL), Ok(()));
}

#[test]
fn corrupt_objects() {
    let m = metadata(&["a"], true);
    // Field id out of range.
    let v = object(&[1], &[NULL]);
    assert!(is_malformed(validate(&m, &v)));
    assert!(json(&m, &v).is_err());
    assert!(is_malformed(validate(EMPTY_META, &object(&[0], &[NULL]))));
    // Duplicate keys in an unsorted object: the same key under two ids, the same id twice, and
    // out-of-order ids.
    let m = metadata(&["b", "a", "b"], false);
    assert_eq!(
        validate(&m, &object(&[0, 2], &[NULL, TRUE])),
        Err(VariantError::DuplicateKey("b".into()))
    );
    assert_eq!(
        validate(&m, &object(&[1, 1], &[NULL, TRUE])),
        Err(VariantError::DuplicateKey("a".into()))
    );
    assert_eq!(
        validate(&m, &object(&[2, 1, 0], &[NULL, TRUE, NULL])),
        Err(VariantError::DuplicateKey("b".into()))
    );
    // Unsorted but unique is accepted (DuckDB writes such objects), and rendered in stored order.
    let v = object(&[0, 1], &[NULL, TRUE]);
    assert_eq!(validate(&m, &v), Ok(()));
    assert_eq!(json(&m, &v).unwrap(), r#"{"b":null,"a":true}"#);
    // A child offset past the data.
    let mut v = object(&[1], &[NULL]);
    v[3] = 5;
    assert!(is_malformed(validate(&m, &v)));
    // The last offset past the end of the bytes.
    let mut v = object(&[1], &[NULL]);
    v[4] = 9;
    assert!(is_malformed(validate(&m, &v)));
    // Header claims 4-byte count and ids but the bytes end.
    assert!(is_malformed(validate(&m, &[0x02 | 0x40 | 0x30, 1, 0])));
    assert!(is_malformed(validate(&m, &[0x42, 0xFF, 0xFF, 0xFF, 0xFF])));
    // A child that is itself truncated.
    let v = object(&[1], &[&[0x0C]]);
    assert!(is_malformed(validate(&m, &v)));
}

#[test]
fn corrupt_primitives() {
    // Unknown primitive type ids.
    for id in [21u8, 22, 63] {
        assert_eq!(
            validate(EMPTY_META, &[id << 2]),
            Err(VariantError::UnknownPrimitiveType(id))
        );
        assert_eq!(
            json(EMPTY_META, &[id << 2]),
            Err(VariantError::UnknownPrimitiveType(id))
        );
        // Also inside an array.
        assert_eq!(
            validate(EMPTY_META, &[0x03, 1, 0, 1, id << 2]),
            Err(VariantError::UnknownPrimitiveType(id))
        );
    }
    // Truncated long string length, and a length past the bytes.
    for v in [
        &[0x40u8, 0x05, 0x00][..],
        &[0x40],
        &[0x40, 10, 0, 0, 0, b'a'],
        &[0x3C, 1, 0, 0],
        &[0x3C, 0xFF, 0xFF, 0xFF, 0xFF],
    ] {
        assert!(is_malformed(validate(EMPTY_META, v)), "{v:?}");
        assert!(json(EMPTY_META, v).is_err());
    }
    // Invalid UTF-8 in short and long strings.
    assert!(is_malformed(validate(EMPTY_META, &[0x05, 0xFF])));
    assert!(is_malformed(validate(
        EMPTY_META,
        &[0x40, 1, 0, 0, 0, 0xFF]
    )));
    // Short string longer than the bytes.
    assert!(is_malformed(validate(EMPTY_META, &[(10 << 2) | 1, b'a'])));
    // A decimal's scale and digits within its width's precision (9, 18, 38: the specification's
    // decimal table, Spark's checkDecimal): one more of either is malformed.
    for (id, width, max) in [(8u8, 4usize, 9u8), (9, 8, 18), (10, 16, 38)] {
        let mut v = vec![id << 2, max + 1];
        v.extend(std::iter::repeat_n(0, width));
        v[2] = 1;
        assert!(is_malformed(validate(EMPTY_META, &v)), "decimal id {id}");
        assert!(json(EMPTY_META, &v).is_err());
        v[1] = max;
        assert_eq!(validate(EMPTY_META, &v), Ok(()));
        let zeros = "0".repeat(max as usize - 1);
        assert_eq!(json(EMPTY_META, &v).unwrap(), format!("0.{zeros}1"));
        // 10^max - 1 (max digits) is fine, 10^max (one more digit) is not
        let mut digits = |unscaled: i128| {
            v[1] = 0;
            v[2..].copy_from_slice(&unscaled.to_le_bytes()[..width]);
            validate(EMPTY_META, &v)
        };
        let limit = 10i128.pow(u32::from(max));
        assert_eq!(digits(limit - 1), Ok(()), "decimal id {id}");
        assert_eq!(digits(-(limit - 1)), Ok(()), "decimal id {id}");
        assert!(is_malformed(digits(limit)), "decimal id {id}");
    }
    // Truncated fixed-size primitives, UUID included (arrow-rs 59.3.2 panics on that one).
    for (id, size) in [
        (3u8, 1usize),
        (4, 2),
        (5, 4),
        (6, 8),
        (7, 8),
        (8, 5),
        (9, 9),
        (10, 17),
        (11, 4),
        (12, 8),
        (13, 8),
        (14, 4),
        (17, 8),
        (18, 8),
        (19, 8),
        (20, 16),
    ] {
        let mut v = vec![id << 2];
        v.extend(std::iter::repeat_n(0, size - 1));
        assert!(is_malformed(validate(EMPTY_META, &v)), "type {id}");
        assert!(json(EMPTY_META, &v).is_err());
    }
    // Empty value.
    assert!(is_malformed(validate(EMPTY_META, &[])));
}

#[test]
fn extreme_but_valid_primitives() {
    // Dates and timestamps at the ends of their ranges are valid and render (arrow-rs 59.3.2
    // panics on the dates); SEMANTICS.md's golden renderings.
    let date = |d: i32| {
        let mut v = vec![11 << 2];
        v.extend_from_slice(&d.to_le_bytes());
        v
    };
    assert_eq!(
        json(EMPTY_META, &date(i32::MAX)).unwrap(),
        r#""+5881580-07-11""#
    );
    assert_eq!(
        json(EMPTY_META, &date(i32::MIN)).unwrap(),
        r#""-5877641-06-23""#
    );
    let ts = |id: u8, t: i64| {
        let mut v = vec![id << 2];
        v.extend_from_slice(&t.to_le_bytes());
        v
    };
    assert_eq!(
        json(EMPTY_META, &ts(13, i64::MAX)).unwrap(),
        r#""+294247-01-10 04:00:54.775807""#
    );
    // a TIME is the microseconds of one day: before midnight or from the next one it is
    // malformed (DuckDB 2.0 refuses it too), not printed as another time of day
    for t in [0, 86_399_999_999] {
        assert_eq!(validate(EMPTY_META, &ts(17, t)), Ok(()));
    }
    assert_eq!(
        json(EMPTY_META, &ts(17, 86_399_999_999)).unwrap(),
        r#""23:59:59.999999""#
    );
    for t in [i64::MIN, -1, 86_400_000_000, i64::MAX] {
        assert!(is_malformed(validate(EMPTY_META, &ts(17, t))), "{t}");
        assert!(json(EMPTY_META, &ts(17, t)).is_err(), "{t}");
    }
    for id in [12u8, 13, 18, 19] {
        for t in [i64::MIN, i64::MAX, -1, 0] {
            assert_eq!(validate(EMPTY_META, &ts(id, t)), Ok(()));
            for tz in [
                "UTC",
                "America/Los_Angeles",
                "Asia/Kolkata",
                "+14:00",
                "-12:00",
            ] {
                let tz = SessionTimeZone::parse(Some(tz)).unwrap();
                to_json_ours(EMPTY_META, &ts(id, t), &tz).unwrap();
            }
        }
    }
}

/// `n` nested arrays around an empty one, built by hand with the smallest offset width
/// (sizes computed inside out, bytes written outside in).
fn nested_arrays(n: usize) -> Vec<u8> {
    let mut sizes = vec![3usize];
    for i in 1..n {
        let child = sizes[i - 1];
        sizes.push(2 + 2 * width_for(child) + child);
    }
    let mut v = Vec::with_capacity(sizes[n - 1]);
    for i in (1..n).rev() {
        let child = sizes[i - 1];
        let w = width_for(child);
        v.extend_from_slice(&[0x03 | (((w - 1) as u8) << 2), 1]);
        v.extend_from_slice(&0u32.to_le_bytes()[..w]);
        v.extend_from_slice(&(child as u32).to_le_bytes()[..w]);
    }
    v.extend_from_slice(&[0x03, 0x00, 0x00]);
    assert_eq!(v.len(), sizes[n - 1]);
    v
}

#[test]
fn nesting_depth() {
    let ok = nested_arrays(1000);
    assert_eq!(validate(EMPTY_META, &ok), Ok(()));
    let rendered = json(EMPTY_META, &ok).unwrap();
    assert_eq!(
        rendered,
        format!("{}{}", "[".repeat(1000), "]".repeat(1000))
    );
    let deep = nested_arrays(1001);
    assert_eq!(
        validate(EMPTY_META, &deep),
        Err(VariantError::DepthLimitExceeded(1000))
    );
    assert_eq!(
        json(EMPTY_META, &deep),
        Err(VariantError::DepthLimitExceeded(1000))
    );
    assert_eq!(
        validate_with_depth(EMPTY_META, &nested_arrays(5), 5),
        Ok(())
    );
    assert_eq!(
        validate_with_depth(EMPTY_META, &nested_arrays(6), 5),
        Err(VariantError::DepthLimitExceeded(5))
    );
    // Far deeper than any stack would allow for naive recursion.
    let very_deep = nested_arrays(100_000);
    assert_eq!(
        validate(EMPTY_META, &very_deep),
        Err(VariantError::DepthLimitExceeded(1000))
    );
    assert!(json(EMPTY_META, &very_deep).is_err());
    // The row writer of `to_json` (its own byte-level recursion) gives the same answers.
    let tz = SessionTimeZone::utc();
    let mut out = Vec::new();
    JsonRowWriter::default()
        .write(&mut out, EMPTY_META, &ok, &tz)
        .unwrap();
    assert_eq!(out, rendered.as_bytes());
    for too_deep in [&deep, &very_deep] {
        assert_eq!(
            JsonRowWriter::default().write(&mut Vec::new(), EMPTY_META, too_deep, &tz),
            Err(VariantError::DepthLimitExceeded(1000))
        );
    }
}

/// Inputs the fuzzer found, kept as regressions.
#[test]
fn fuzz_regressions() {
    let hex = |s: &str| -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    };
    // Metadata whose sorted flag lies (offsets out of order): `lookup_raw` used to trust the flag
    // for a dictionary search and miss a key that `navigate` found by scanning.
    let m = hex("710800000000000100900000000000000003000601611900ff66");
    let v = hex(
        "021d000000010300060700003a0000000000212200221d00000000000000000070ff030000000000000000000000000000000000000000000000000038000038387f0000003838383838383a383838383838383801ffffff233f22212200000059000000000100001c1c1c1c1c1c1c2f1c1c1c0000",
    );
    exercise(&m, &v);
    // Key offsets that point past the dictionary's last offset, at a NUL byte: the row writer
    // checked only the region up to the last offset for plain ASCII and wrote the key raw,
    // where write_json escapes it as \u0000. The row writer now writes only keys inside it.
    let m = hex("71080000000100010000000100028d581e00000000000000ff66");
    let v = hex("020600000000000000000000000010000000000161003a06feffffffffffff");
    exercise(&m, &v);
}
