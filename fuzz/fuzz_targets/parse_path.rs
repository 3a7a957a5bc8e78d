//! Untrusted path text (`variant_get`'s and the mutators' second argument): `VariantPath::parse`
//! must never panic, whatever the length or nesting, and a path it accepts has at most
//! `MAX_PATH_SEGMENTS` segments and prints back to text that parses to the same path.
#![no_main]

use datafusion_parquet_variant::codec::{MAX_PATH_SEGMENTS, VariantPath};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(path) = VariantPath::parse(text) else {
        return;
    };
    assert!(path.segments().len() <= MAX_PATH_SEGMENTS);
    let printed = path.to_string();
    let again = VariantPath::parse(&printed)
        .unwrap_or_else(|e| panic!("{text:?} printed as {printed:?}, which does not parse: {e}"));
    assert_eq!(
        again.segments(),
        path.segments(),
        "{text:?} printed as {printed:?}"
    );
});
