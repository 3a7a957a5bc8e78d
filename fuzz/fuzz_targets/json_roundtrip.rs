//! Stability of the JSON round trip `r(j) = to_json(parse_json(j))`.
//!
//! One round is not a fixpoint by design (Spark's rules): a double printed in plain form
//! (`-3e5` -> `-300000.0`) parses back as a decimal and prints as `-300000`. After that first
//! normalization the text must be stable: `r(r(r(x))) == r(r(x))`.
#![no_main]

use datafusion_parquet_variant::codec::{
    JsonParser, SessionTimeZone, Variant, VariantBuilder, write_json,
};
use libfuzzer_sys::fuzz_target;

fn round(parser: &mut JsonParser, builder: &mut VariantBuilder, json: &str) -> Option<String> {
    parser.parse(json, builder).ok()?;
    let v = Variant::try_new(builder.metadata(), builder.value()).expect("built variant");
    let mut out = Vec::new();
    write_json(&mut out, v, &SessionTimeZone::utc()).expect("write_json of a built variant");
    Some(String::from_utf8(out).expect("UTF-8"))
}

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    let mut parser = JsonParser::new();
    let mut builder = VariantBuilder::new();
    let Some(first) = round(&mut parser, &mut builder, input) else {
        return;
    };
    let second = round(&mut parser, &mut builder, &first).expect("our output re-parses");
    let third = round(&mut parser, &mut builder, &second).expect("our output re-parses");
    assert_eq!(
        second, third,
        "to_json(parse_json(x)) is not stable after one normalization (first round: {first})"
    );
});
