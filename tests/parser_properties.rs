//! The argument parsers on arbitrary text: the variant path parser and the type-string parser
//! never panic (random characters, near-miss syntax, non-ASCII, deep nesting), and what they
//! accept prints back as text they parse to the same thing.
use datafusion_parquet_variant::cast::target_type::{parse_target_type, sql_type_name};
use datafusion_parquet_variant::codec::VariantPath;
use proptest::prelude::*;

mod common;

/// Path-like text: the grammar's characters, digits, letters, spaces and non-ASCII.
fn path_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("$".to_string()),
        Just(".".to_string()),
        Just("[".to_string()),
        Just("]".to_string()),
        Just("'".to_string()),
        Just("\"".to_string()),
        "[0-9]{1,11}",
        "[a-zé ]{1,4}",
    ];
    proptest::collection::vec(piece, 0..24).prop_map(|parts| parts.concat())
}

/// Type-like text: the parser's words and punctuation in any order.
fn type_text() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        Just("array"),
        Just("map"),
        Just("struct"),
        Just("<"),
        Just(">"),
        Just(","),
        Just(":"),
        Just("("),
        Just(")"),
        Just("int"),
        Just("string"),
        Just("decimal"),
        Just("timestamp"),
        Just("variant"),
        Just("10"),
        Just("2"),
        Just("`"),
        Just("a"),
        Just("é"),
        Just(" "),
    ];
    proptest::collection::vec(token, 0..40).prop_map(|tokens| tokens.concat())
}

/// Valid type strings: leaves, and arrays, maps and structs of them (field names plain or
/// backquoted with spaces, dots and backquotes), nested up to 4 levels.
fn valid_type() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("int".to_string()),
        Just("BIGINT".to_string()),
        Just("string".to_string()),
        Just("boolean".to_string()),
        Just("double".to_string()),
        Just("date".to_string()),
        Just("timestamp".to_string()),
        Just("timestamp_ntz".to_string()),
        Just("decimal(10, 2)".to_string()),
        Just("binary".to_string()),
        Just("variant".to_string()),
    ];
    leaf.prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            inner.clone().prop_map(|t| format!("array<{t}>")),
            inner.clone().prop_map(|t| format!("map<string, {t}>")),
            proptest::collection::vec(inner, 1..4).prop_map(|types| {
                let fields: Vec<String> = types
                    .iter()
                    .enumerate()
                    .map(|(i, t)| {
                        if i % 2 == 0 {
                            format!("f{i}: {t}")
                        } else {
                            format!("`odd name.{i}``x`: {t}")
                        }
                    })
                    .collect();
                format!("struct<{}>", fields.join(", "))
            }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(common::proptest_cases(2000)))]

    #[test]
    fn valid_types_parse_and_print_back(text in valid_type()) {
        let ty = parse_target_type(&text)
            .map_err(|e| TestCaseError::fail(format!("{text:?}: {e}")))?;
        let printed = sql_type_name(&ty);
        prop_assert_eq!(parse_target_type(&printed), Ok(ty));
    }

    #[test]
    fn paths_parse_or_error_and_print_back(text in path_text()) {
        if let Ok(path) = VariantPath::parse(&text) {
            let printed = path.to_string();
            // Keys holding both quote kinds have no text form (the grammar has no escapes).
            let quotes_both = path.segments().iter().any(|s| {
                matches!(s, datafusion_parquet_variant::codec::PathSegment::Key(k)
                    if k.contains('\'') && k.contains('"'))
            });
            if !quotes_both {
                prop_assert_eq!(VariantPath::parse(&printed), Ok(path));
            }
        }
    }

    #[test]
    fn types_parse_or_error_and_print_back(text in type_text()) {
        if let Ok(ty) = parse_target_type(&text) {
            let printed = sql_type_name(&ty);
            let again = parse_target_type(&printed)
                .map_err(|e| TestCaseError::fail(format!("{text:?} -> {printed:?}: {e}")))?;
            prop_assert_eq!(sql_type_name(&again), printed);
        }
    }
}

/// Deep nesting of every container kind, just past the limit: an error each, no overflow.
#[test]
fn deep_types_of_every_kind_are_errors() {
    for (open, close) in [("array<", ">"), ("map<string, ", ">"), ("struct<a: ", ">")] {
        let text = format!("{}int{}", open.repeat(101), close.repeat(101));
        let e = parse_target_type(&text).unwrap_err();
        assert!(e.contains("nests deeper than 100 levels"), "{e}");
        let text = format!("{}int{}", open.repeat(100), close.repeat(100));
        assert!(parse_target_type(&text).is_ok(), "{open}");
    }
}
