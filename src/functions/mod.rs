//! The SQL functions, one per file, with the shared machinery in [`common`].
use std::sync::Arc;

use datafusion::logical_expr::{AggregateUDF, ScalarUDF, ScalarUDFImpl};

pub mod common;
pub mod expr_fn;
pub mod from_json;
pub mod is_valid_variant;
pub mod is_variant_null;
pub mod mutate;
pub mod parse_json;
pub mod schema_of_variant;
pub mod schema_of_variant_agg;
pub mod shred_variant;
pub mod to_json;
pub mod to_variant;
pub mod to_variant_object;
pub mod try_parse_json;
pub mod try_variant_array_append;
pub mod try_variant_get;
pub mod try_variant_insert;
pub mod try_variant_set;
pub mod variant_array_append;
pub mod variant_array_length;
pub mod variant_delete;
pub mod variant_explode;
pub mod variant_get;
pub mod variant_get_checked;
pub mod variant_insert;
pub mod variant_object_keys;
pub mod variant_set;
pub mod variant_shredding_schema_agg;
pub mod variant_strip_nulls;

/// True for the functions that read a shredded variant column as it is, without reassembling
/// it (`to_json`, `schema_of_variant`, `is_valid_variant`, and those that look at the top level
/// only: `is_variant_null`, `variant_array_length`, `variant_object_keys`): a Parquet scan hands
/// them a shredded file's column as the file has it.
pub fn reads_shredded_input(udf: &ScalarUDF) -> bool {
    fn is<F: ScalarUDFImpl>(udf: &ScalarUDF) -> bool {
        udf.inner().downcast_ref::<F>().is_some()
    }
    is::<to_json::ToJson>(udf)
        || is::<schema_of_variant::SchemaOfVariant>(udf)
        || is::<is_valid_variant::IsValidVariant>(udf)
        || is::<is_variant_null::IsVariantNull>(udf)
        || is::<variant_array_length::VariantArrayLength>(udf)
        || is::<variant_object_keys::VariantObjectKeys>(udf)
}

/// Every scalar function of this crate.
pub fn scalar_functions() -> Vec<Arc<ScalarUDF>> {
    vec![
        parse_json::parse_json_udf(),
        try_parse_json::try_parse_json_udf(),
        from_json::from_json_udf(),
        to_json::to_json_udf(),
        is_variant_null::is_variant_null_udf(),
        variant_get::variant_get_udf(),
        try_variant_get::try_variant_get_udf(),
        schema_of_variant::schema_of_variant_udf(),
        to_variant::to_variant_udf(),
        to_variant_object::to_variant_object_udf(),
        is_valid_variant::is_valid_variant_udf(),
        variant_object_keys::variant_object_keys_udf(),
        variant_array_length::variant_array_length_udf(),
        variant_insert::variant_insert_udf(),
        try_variant_insert::try_variant_insert_udf(),
        variant_set::variant_set_udf(),
        try_variant_set::try_variant_set_udf(),
        variant_delete::variant_delete_udf(),
        variant_array_append::variant_array_append_udf(),
        try_variant_array_append::try_variant_array_append_udf(),
        variant_strip_nulls::variant_strip_nulls_udf(),
    ]
}

/// Every aggregate function of this crate.
pub fn aggregate_functions() -> Vec<Arc<AggregateUDF>> {
    vec![
        schema_of_variant_agg::schema_of_variant_agg_udaf(),
        variant_shredding_schema_agg::variant_shredding_schema_agg_udaf(),
    ]
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    #[test]
    fn names_are_unique_and_documented() {
        let mut names = HashSet::new();
        for f in super::scalar_functions() {
            assert!(names.insert(f.name().to_string()), "duplicate {}", f.name());
            for alias in f.aliases() {
                assert!(names.insert(alias.clone()), "duplicate alias {alias}");
            }
            let doc = f.documentation().expect("documented");
            assert!(!doc.description.is_empty());
            assert!(doc.sql_example.is_some(), "{} has no SQL example", f.name());
        }
        for f in super::aggregate_functions() {
            assert!(names.insert(f.name().to_string()), "duplicate {}", f.name());
            let doc = f.documentation().expect("documented");
            assert!(doc.sql_example.is_some(), "{} has no SQL example", f.name());
        }
    }
}
