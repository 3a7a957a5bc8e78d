//! Untrusted type strings (`variant_get`'s third argument, the `variant.shred.*` options):
//! `parse_target_type` must never panic or overflow the stack, whatever the nesting. A type it
//! accepts prints (`sql_type_name`) as text that, where it parses, prints the same again (a
//! fixed point: `string_view` prints as `STRING` and a variant-shaped struct as `VARIANT`, so
//! the types themselves may differ), and its shredded layout is built without a panic.
#![no_main]

use datafusion_parquet_variant::cast::target_type::{parse_target_type, sql_type_name};
use datafusion_parquet_variant::shredding::shredded_variant_type;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(ty) = parse_target_type(text) else {
        return;
    };
    let _ = shredded_variant_type(&ty);
    let printed = sql_type_name(&ty);
    // (a bare field list is one level shallower than the STRUCT<..> it prints as, so the
    // printed text of the deepest lists is refused as too deep)
    if let Ok(again) = parse_target_type(&printed) {
        assert_eq!(
            sql_type_name(&again),
            printed,
            "{text:?} printed as {printed:?}"
        );
    }
});
