//! Untrusted variant bytes: `validate` and `write_json` must never panic.
//!
//! Input layout: the first byte is the metadata length `n`; the next `n` bytes are the metadata and
//! the rest is the value. When `validate` accepts the bytes, `write_json` must succeed and produce
//! JSON that our own parser reads back. The byte-level readers of the hot loops agree with the
//! checked views: `JsonRowWriter` renders exactly what `write_json` renders (or fails where it
//! fails), and `lookup_raw` finds what `navigate` finds wherever both read the bytes.
//! `schema_of_variant`'s text written while reading (`VariantSchema::write_of`) is the text of
//! the schema built as a tree (`VariantSchema::of`), and both fail on the same bytes.
#![no_main]

use datafusion_parquet_variant::codec::{
    JsonParser, JsonRowWriter, SessionTimeZone, Variant, VariantBuilder, VariantPath, validate,
    write_json,
};
use datafusion_parquet_variant::variant_schema::VariantSchema;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&n, rest)) = data.split_first() else {
        return;
    };
    let n = (n as usize).min(rest.len());
    let (metadata, value) = rest.split_at(n);
    let tz = SessionTimeZone::utc();

    let valid = validate(metadata, value).is_ok();

    // Unvalidated bytes: the bounds-checked views must return errors, never panic.
    let mut out = Vec::new();
    let written = match Variant::try_new(metadata, value) {
        Ok(v) => write_json(&mut out, v, &tz).is_ok(),
        Err(_) => false,
    };

    let mut fast = Vec::new();
    let fast_written = JsonRowWriter::default()
        .write(&mut fast, metadata, value, &tz)
        .is_ok();
    assert_eq!(
        fast_written, written,
        "JsonRowWriter and write_json disagree"
    );
    if written {
        assert_eq!(fast, out, "JsonRowWriter and write_json render differently");
    }
    for path in ["$", "$.a", "$.a.b", "$[0]", "$.a[1].b", "$['']"] {
        let path = VariantPath::parse(path).unwrap();
        let raw = path.lookup_raw(metadata, value);
        let nav = Variant::try_new(metadata, value).and_then(|v| path.navigate(v));
        if let (Ok(raw), Ok(nav)) = (raw, nav) {
            assert_eq!(
                raw.map(|b| b.as_ptr()),
                nav.map(|n| n.value_bytes().as_ptr()),
                "lookup_raw and navigate disagree at {path}"
            );
        }
        if valid {
            assert!(raw.is_ok(), "lookup_raw cannot read valid bytes at {path}");
        }
    }

    if let Ok(v) = Variant::try_new(metadata, value) {
        let tree = VariantSchema::of(v).map(|schema| schema.to_string());
        let mut text = String::new();
        let direct = VariantSchema::write_of(v, &mut text).map(|()| text);
        match (&tree, &direct) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "write_of and of disagree"),
            (Err(_), Err(_)) => {}
            _ => panic!("write_of and of disagree: {tree:?} against {direct:?}"),
        }
        if valid {
            assert!(tree.is_ok(), "schema_of_variant failed on validated bytes");
        }
    }

    if valid {
        assert!(written, "write_json failed on validated bytes");
        let json = std::str::from_utf8(&out).expect("write_json produced invalid UTF-8");
        let mut parser = JsonParser::new();
        let mut builder = VariantBuilder::new();
        if let Err(e) = parser.parse(json, &mut builder) {
            panic!("our JSON output does not parse: {e}: {json}");
        }
    }
});
