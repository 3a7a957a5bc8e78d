//! JSON text: `JsonParser` must never panic; on success the built variant must validate, render
//! with `write_json`, and the rendered JSON must parse again.
#![no_main]

use datafusion_parquet_variant::codec::{
    JsonParser, SessionTimeZone, Variant, VariantBuilder, validate, write_json,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    let mut parser = JsonParser::new();
    let mut builder = VariantBuilder::new();
    if parser.parse(input, &mut builder).is_err() {
        return;
    }
    let (metadata, value) = (builder.metadata(), builder.value());
    if let Err(e) = validate(metadata, value) {
        panic!("built variant does not validate: {e}");
    }
    let v = Variant::try_new(metadata, value).expect("validated");
    let mut out = Vec::new();
    if let Err(e) = write_json(&mut out, v, &SessionTimeZone::utc()) {
        panic!("write_json failed: {e}");
    }
    let json = std::str::from_utf8(&out).expect("write_json produced invalid UTF-8");
    let mut again = VariantBuilder::new();
    if let Err(e) = parser.parse(json, &mut again) {
        panic!("re-parse of our output failed: {e}: {json}");
    }
});
