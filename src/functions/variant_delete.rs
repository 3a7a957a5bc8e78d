//! `variant_delete(variant, path [, ...])`: removes fields or array elements (Spark 4.3).
use datafusion::logical_expr::{Signature, Volatility};

use super::mutate::{invoke_delete, mutator_udf};

mutator_udf! {
    /// The `variant_delete` UDF.
    struct VariantDelete;
    name: "variant_delete",
    udf: variant_delete_udf,
    signature: Signature::variadic_any(Volatility::Immutable),
    with_value: false,
    invoke: |name, args| invoke_delete(name, args),
    description: "Removes the object fields and array elements at the given paths, applied left to right (later elements shift left). Missing targets and SQL NULL paths are skipped; a SQL NULL variant gives NULL.",
    syntax: "variant_delete(variant, path [, ...])",
    example: "```sql\n> SELECT to_json(variant_delete(parse_json('{\"a\":1,\"b\":[1,2]}'), '$.a', '$.b[0]'));\n{\"b\":[2]}\n```",
    arguments: [
        ("variant", "A VARIANT value."),
        ("path", "One or more paths in variant_get's grammar."),
    ],
}
