//! Untrusted variant bytes: `validate` and `write_json` must never panic.
//!
//! Input layout: the first byte is the metadata length `n`; the next `n` bytes are the metadata and
//! the rest is the value. When `validate` accepts the bytes, `write_json` must succeed and produce
//! JSON that our own parser reads back.
#![no_main]

use datafusion_parquet_variant::codec::{
    JsonParser, SessionTimeZone, Variant, VariantBuilder, validate, write_json,
};
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
