//! Containers whose children share bytes ("aliased" children: array offsets that do not increase,
//! several object fields pointing at one value). The spec gives each array element its own range
//! and each object field its own value; sharing lets a few hundred bytes stand for an exponential
//! tree (4 nested arrays of 50 elements at offset 0: 816 bytes rendered as 31.5 MB of JSON).
//!
//! - `validate` rejects any sharing, at any nesting level, of either container kind;
//! - every walker over whole values (JSON writers, the builder's copy, the SQL functions that
//!   walk, cast or rebuild values) gives an error instead of walking the shared bytes again, so
//!   that its work stays linear in the input;
//! - valid values laid out unusually (object values stored in another order than their keys,
//!   padding between children) still pass.

mod common;

use common::*;
use datafusion::prelude::SessionContext;
use datafusion_parquet_variant::codec::{
    JsonRowWriter, SessionTimeZone, Value, Variant, VariantBuilder, VariantError, validate,
    write_json,
};
use proptest::prelude::*;

/// int8 42.
const LEAF: &[u8] = &[0x0C, 0x2A];

/// A sorted dictionary of the keys `k00`, `k01`, ... (`n` of them).
fn keys_metadata(n: usize) -> Vec<u8> {
    let mut m = vec![0x11, n as u8]; // version 1, sorted, 1-byte offsets
    for i in 0..=n {
        m.push((3 * i) as u8);
    }
    for i in 0..n {
        m.extend(format!("k{i:02}").bytes());
    }
    m
}

/// An array of `offsets.len() - 1` elements over `data`, with 2-byte offsets.
fn array(offsets: &[u16], data: &[u8]) -> Vec<u8> {
    let mut v = vec![0x03 | (1 << 2), (offsets.len() - 1) as u8];
    offsets.iter().for_each(|o| v.extend(o.to_le_bytes()));
    v.extend_from_slice(data);
    v
}

/// An object of fields `k00`, `k01`, ... at `offsets` (the last one: the data's end) over `data`,
/// with 1-byte ids and 2-byte offsets.
fn object(offsets: &[u16], data: &[u8]) -> Vec<u8> {
    let n = offsets.len() - 1;
    let mut v = vec![0x02 | (1 << 2), n as u8];
    v.extend((0..n).map(|i| i as u8));
    offsets.iter().for_each(|o| v.extend(o.to_le_bytes()));
    v.extend_from_slice(data);
    v
}

/// `n` children that all start at offset 0: the one `child`, shared.
fn shared(n: usize, child: &[u8]) -> Vec<u16> {
    let mut offsets = vec![0u16; n];
    offsets.push(child.len() as u16);
    offsets
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Array,
    Object,
}

/// A value `levels` containers deep around [`LEAF`]; the container at `aliased_level` (0: the
/// outermost) has three children sharing one value, the others have one child each (arrays and
/// objects alternating).
fn nested(levels: usize, aliased_level: usize, aliased_kind: Kind) -> Vec<u8> {
    let mut child = LEAF.to_vec();
    for level in (0..levels).rev() {
        let kind = if level == aliased_level {
            aliased_kind
        } else if level % 2 == 0 {
            Kind::Object
        } else {
            Kind::Array
        };
        let offsets = if level == aliased_level {
            shared(3, &child)
        } else {
            vec![0, child.len() as u16]
        };
        child = match kind {
            Kind::Array => array(&offsets, &child),
            Kind::Object => object(&offsets, &child),
        };
    }
    child
}

/// The issue's example: `levels` nested arrays of 50 elements that all start at offset 0.
fn exploding(levels: usize, kind: Kind) -> Vec<u8> {
    let mut child = LEAF.to_vec();
    for _ in 0..levels {
        child = match kind {
            Kind::Array => array(&shared(50, &child), &child),
            Kind::Object => object(&shared(50, &child), &child),
        };
    }
    child
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}

/// `validate` names the sharing.
fn assert_rejected_by_validate(m: &[u8], v: &[u8]) {
    match validate(m, v) {
        Err(VariantError::Malformed(message)) => assert!(
            message.contains("overlaps") || message.contains("share bytes"),
            "{message}"
        ),
        other => panic!("validate gave {other:?}"),
    }
}

/// Every walker of the codec refuses the value.
fn assert_rejected_by_codec_walkers(m: &[u8], v: &[u8]) {
    let tz = SessionTimeZone::utc();
    let variant = Variant::try_new(m, v).unwrap();
    assert!(write_json(&mut Vec::new(), variant, &tz).is_err());
    let mut out = Vec::new();
    let rendered = JsonRowWriter::default().write(&mut out, m, v, &tz);
    assert!(rendered.is_err(), "rendered {} bytes", out.len());
    let mut b = VariantBuilder::new();
    assert!(b.append_variant(variant).is_err());
}

/// The SQL functions refuse the value: the walks over it error, casts error or give NULL,
/// mutators that rebuild it error or give a value that no longer shares bytes (the shared part
/// replaced); the validity check says false. (A mutation that changes nothing, such as deleting
/// an absent path, returns its input as it is, without a walk.)
async fn assert_rejected_by_sql(m: &[u8], v: &[u8], top_level_aliased: bool) {
    let ctx = SessionContext::new();
    datafusion_parquet_variant::register_all(&ctx).unwrap();
    let v_sql = format!(
        "named_struct('metadata', X'{}', 'value', X'{}')",
        hex(m),
        hex(v)
    );
    let valid = first_cell(&ctx, &format!("SELECT is_valid_variant({v_sql})")).await;
    assert_eq!(valid.unwrap().as_deref(), Some("false"));
    for walk in ["to_json", "schema_of_variant", "variant_strip_nulls"] {
        let sql = format!("SELECT {walk}({v_sql})");
        assert!(first_cell(&ctx, &sql).await.is_err(), "{sql} did not fail");
    }
    // Shredding for a write takes each field once: the top-level object's shared fields are
    // refused (and the failed COPY leaves no file).
    if top_level_aliased {
        let dir = scratch_dir("codec_aliased", "shred");
        let copy = format!(
            "COPY (SELECT {v_sql} AS v) TO '{}/out.parquet' STORED AS PARQUET \
             OPTIONS ('variant.shred.v' 'struct<k00 string, k01 string, k02 string>')",
            dir.display()
        );
        let result = match ctx.sql(&copy).await {
            Ok(df) => df.collect().await.map(|_| ()),
            Err(e) => Err(e),
        };
        if v[0] & 0x03 == 0x02 {
            assert!(result.is_err(), "{copy} did not fail");
            assert!(!dir.join("out.parquet").exists());
        }
    }
    // variant_explode reads one level: it copies the children's bytes and walks no further.
    let explode = format!("SELECT count(*) FROM variant_explode({v_sql})");
    let exploded = first_cell(&ctx, &explode).await;
    if top_level_aliased {
        assert!(exploded.is_err(), "{explode} did not fail");
    } else {
        assert_eq!(exploded.unwrap().as_deref(), Some("1"));
    }
    for ty in [
        "map<string, string>",
        "array<string>",
        "struct<k00 string, k01 string>",
    ] {
        let sql = format!("SELECT variant_get({v_sql}, '$', '{ty}')");
        let cast = first_cell(&ctx, &sql).await;
        assert!(matches!(cast, Err(_) | Ok(None)), "{sql} gave {cast:?}");
    }
    for mutate in [
        format!("variant_set({v_sql}, '$.zz', parse_json('1'))"),
        format!("variant_array_append({v_sql}, parse_json('1'))"),
    ] {
        let sql = format!("SELECT is_valid_variant({mutate})");
        let result = first_cell(&ctx, &sql).await;
        assert!(
            matches!(
                result.as_ref().map(|r| r.as_deref()),
                Err(_) | Ok(None) | Ok(Some("true"))
            ),
            "{sql} gave {result:?}"
        );
    }
}

#[test]
fn validate_rejects_shared_children_at_every_level() {
    let m = keys_metadata(50);
    for kind in [Kind::Array, Kind::Object] {
        for level in 0..4 {
            let v = nested(4, level, kind);
            assert_rejected_by_validate(&m, &v);
            assert_rejected_by_codec_walkers(&m, &v);
        }
    }
}

#[tokio::test]
async fn sql_functions_reject_shared_children_at_every_level() {
    let m = keys_metadata(50);
    for kind in [Kind::Array, Kind::Object] {
        for level in 0..4 {
            assert_rejected_by_sql(&m, &nested(4, level, kind), level == 0).await;
        }
    }
}

/// The issue's 816-byte value, which rendered as 31.5 MB, and its object twin: refused, not
/// expanded.
#[tokio::test]
async fn exponential_expansions_are_refused() {
    let m = keys_metadata(50);
    for kind in [Kind::Array, Kind::Object] {
        let v = exploding(4, kind);
        assert!(v.len() < 1000, "{} bytes", v.len());
        assert_rejected_by_validate(&m, &v);
        assert_rejected_by_codec_walkers(&m, &v);
        assert_rejected_by_sql(&m, &v, true).await;
        // A level more (1.5 GB of JSON before) and ten more.
        for levels in [5, 15] {
            assert_rejected_by_codec_walkers(&m, &exploding(levels, kind));
        }
    }
}

/// Two fields whose values start at different bytes but overlap, with padding that keeps their
/// sizes within the object's data: `validate` still finds the sharing (the walkers' size check
/// is what keeps their work linear; only `validate` promises that no byte is shared).
#[test]
fn validate_finds_partial_overlaps() {
    let m = keys_metadata(2);
    // k00 is the array [42] at 0..8; k01 is the int8 42 inside it, at 6..8; 6 bytes of padding.
    let inner = array(&[0, 2], LEAF);
    assert_eq!(inner.len(), 8);
    let mut data = inner.clone();
    data.extend([0; 6]);
    let v = object(&[0, 6, 14], &data);
    assert_rejected_by_validate(&m, &v);
    // An array whose second element starts inside the first one.
    let v = array(&[0, 6, 14], &data);
    assert_rejected_by_validate(&m, &v);
}

/// Valid layouts the checks must not refuse: object values stored in reverse key order, and
/// padding between children.
#[test]
fn unusual_valid_layouts_pass() {
    let m = keys_metadata(2);
    // {"k00": 1, "k01": 2} with k01's value stored first.
    let v = object(&[2, 0, 4], &[0x0C, 2, 0x0C, 1]);
    assert_eq!(validate(&m, &v), Ok(()));
    assert_eq!(json(&m, &v), r#"{"k00":1,"k01":2}"#);
    // [1, 2] and {"k00": 1, "k01": 2} with two bytes of padding after each child.
    let v = array(&[0, 4, 8], &[0x0C, 1, 0, 0, 0x0C, 2, 0, 0]);
    assert_eq!(validate(&m, &v), Ok(()));
    assert_eq!(json(&m, &v), "[1,2]");
    let v = object(&[4, 0, 8], &[0x0C, 2, 0, 0, 0x0C, 1, 0, 0]);
    assert_eq!(validate(&m, &v), Ok(()));
    assert_eq!(json(&m, &v), r#"{"k00":1,"k01":2}"#);
}

/// The JSON of a value through both writers (which must agree).
fn json(m: &[u8], v: &[u8]) -> String {
    let tz = SessionTimeZone::utc();
    let mut checked = Vec::new();
    write_json(&mut checked, Variant::try_new(m, v).unwrap(), &tz).unwrap();
    let mut rows = Vec::new();
    JsonRowWriter::default()
        .write(&mut rows, m, v, &tz)
        .unwrap();
    assert_eq!(checked, rows);
    String::from_utf8(checked).unwrap()
}

/// Re-encodes the value `v` with every object's values stored in reverse key order, `pad` bytes
/// of padding after every child, and 4-byte counts, ids and offsets.
fn relayout(v: Variant<'_>, pad: usize) -> Vec<u8> {
    match v.get().unwrap() {
        Value::Object(obj) => {
            let children: Vec<Vec<u8>> = obj.iter().map(|f| relayout(f.unwrap().1, pad)).collect();
            let mut data = Vec::new();
            let mut offsets = vec![0u32; children.len() + 1];
            for (i, child) in children.iter().enumerate().rev() {
                offsets[i] = data.len() as u32;
                data.extend_from_slice(child);
                data.extend(std::iter::repeat_n(0, pad));
            }
            offsets[children.len()] = data.len() as u32;
            let mut out = vec![0x02 | (3 << 2) | (3 << 4) | (1 << 6)];
            out.extend((children.len() as u32).to_le_bytes());
            for i in 0..children.len() {
                out.extend((obj.field_id(i).unwrap() as u32).to_le_bytes());
            }
            offsets.iter().for_each(|o| out.extend(o.to_le_bytes()));
            out.extend(data);
            out
        }
        Value::Array(arr) => {
            let mut data = Vec::new();
            let mut offsets = vec![0u32];
            for e in arr.iter() {
                data.extend(relayout(e.unwrap(), pad));
                data.extend(std::iter::repeat_n(0, pad));
                offsets.push(data.len() as u32);
            }
            let mut out = vec![0x03 | (3 << 2) | (1 << 4)];
            out.extend((arr.len() as u32).to_le_bytes());
            offsets.iter().for_each(|o| out.extend(o.to_le_bytes()));
            out.extend(data);
            out
        }
        _ => v.exact_value_bytes().unwrap().to_vec(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(proptest_cases(256)))]

    /// Valid values still pass, in the builder's layout and relaid with object values in reverse
    /// order and padding between children, and render the same JSON in every layout.
    #[test]
    fn valid_values_pass_in_any_layout(v in value_strategy(), pad in 0usize..3) {
        let (m, value) = encode_ours(&v).unwrap();
        prop_assert_eq!(validate(&m, &value), Ok(()));
        let relaid = relayout(Variant::try_new(&m, &value).unwrap(), pad);
        prop_assert_eq!(validate(&m, &relaid), Ok(()));
        prop_assert_eq!(json(&m, &relaid), json(&m, &value));
        let mut copy = VariantBuilder::new();
        copy.append_variant(Variant::try_new(&m, &relaid).unwrap()).unwrap();
        copy.finish().unwrap();
        prop_assert_eq!(json(copy.metadata(), copy.value()), json(&m, &value));
    }
}
