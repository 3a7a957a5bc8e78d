//! `variant_set(variant, path, value [, create_if_missing])`: replaces or creates a field or array element along a path (Spark 4.3).
use datafusion::logical_expr::{Signature, TypeSignature, Volatility};

use super::mutate::{Edit, constant_flag, invoke_mutator, mutator_udf};

mutator_udf! {
    /// The `variant_set` UDF.
    struct VariantSet;
    name: "variant_set",
    udf: variant_set_udf,
    signature: Signature::one_of(
        vec![TypeSignature::Any(3), TypeSignature::Any(4)],
        Volatility::Immutable,
    ),
    with_value: true,
    invoke: |name, args| {
        let create_if_missing = constant_flag(name, "create_if_missing", args.args.get(3))?;
        invoke_mutator(name, Edit::Set { create_if_missing }, false, args)
    },
    description: "Sets the field or array element at path to value, creating it (and missing intermediate objects, padding arrays with variant nulls) unless create_if_missing is false, in which case the input is returned unchanged. A segment that meets the wrong kind of value gives an error. Any SQL NULL argument gives NULL.",
    syntax: "variant_set(variant, path, value [, create_if_missing])",
    example: "```sql\n> SELECT to_json(variant_set(parse_json('{\"a\": {\"b\": 1}}'), '$.a.c', 2));\n{\"a\":{\"b\":1,\"c\":2}}\n```",
    arguments: [
        ("variant", "A VARIANT value."),
        ("path", "A path in variant_get's grammar (`$.a.b[0]`)."),
        ("value", "The value to write; any type, converted as CAST(value AS VARIANT)."),
        ("create_if_missing", "A constant BOOLEAN, default true."),
    ],
}
