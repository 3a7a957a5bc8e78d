//! The mutators on random values, paths and new values: each call gives a variant that passes
//! full validation (or NULL, or a clear error), never a panic and never invalid bytes; and the
//! value set at a path reads back there.
mod common;

use common::{encode_ours, proptest_cases, value_strategy};
use datafusion::prelude::SessionContext;
use proptest::prelude::*;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}

/// Paths over the keys the generated values use, with indexes, 1 to 3 segments.
fn path() -> impl Strategy<Value = String> {
    let segment = prop_oneof![
        Just(".a".to_string()),
        Just(".b".to_string()),
        Just(".o".to_string()),
        Just("[\"c\"]".to_string()),
        (0u32..4).prop_map(|i| format!("[{i}]")),
    ];
    proptest::collection::vec(segment, 1..4).prop_map(|s| format!("${}", s.concat()))
}

const NEW_VALUES: [&str; 5] = ["1", "\"x\"", "null", "[1,2]", "{\"k\":true}"];

/// [`common::first_cell`] from the synchronous test body.
fn cell(
    rt: &tokio::runtime::Runtime,
    ctx: &SessionContext,
    sql: &str,
) -> Result<Option<String>, String> {
    rt.block_on(common::first_cell(ctx, sql))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(proptest_cases(200)))]

    #[test]
    fn mutators_give_valid_variants(
        v in value_strategy(),
        path in path(),
        new in 0usize..NEW_VALUES.len(),
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let ctx = SessionContext::new();
        datafusion_parquet_variant::register_all(&ctx).unwrap();
        let (m, value) = encode_ours(&v).unwrap();
        let input = format!("named_struct('metadata', X'{}', 'value', X'{}')", hex(&m), hex(&value));
        let new_value = format!("parse_json('{}')", NEW_VALUES[new]);
        for call in [
            format!("try_variant_set({input}, '{path}', {new_value})"),
            format!("try_variant_insert({input}, '{path}', {new_value})"),
            format!("variant_delete({input}, '{path}')"),
            format!("try_variant_array_append({input}, '{path}', {new_value})"),
        ] {
            let valid = cell(&rt, &ctx, &format!("SELECT is_valid_variant({call})"));
            prop_assert!(
                matches!(valid.as_ref().map(|c| c.as_deref()), Ok(Some("true")) | Ok(None)),
                "{} gave {:?} on {:?}", call, valid, v
            );
        }
        // What variant_set wrote reads back at its path.
        let set = format!("try_variant_set({input}, '{path}', {new_value})");
        let back = cell(&rt, &ctx, &format!("SELECT to_json(variant_get({set}, '{path}'))"));
        let written = cell(&rt, &ctx, &format!("SELECT to_json({new_value})")).unwrap();
        if let Ok(Some(back)) = back {
            prop_assert_eq!(Some(back), written, "{} on {:?}", set, v);
        }
    }
}
