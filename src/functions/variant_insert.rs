//! `variant_insert(variant, path, value)`: adds a field or inserts an array element along a path (Spark 4.3).
use datafusion::logical_expr::{Signature, Volatility};

use super::mutate::{Edit, invoke_mutator, mutator_udf};

mutator_udf! {
    /// The `variant_insert` UDF.
    struct VariantInsert;
    name: "variant_insert",
    udf: variant_insert_udf,
    signature: Signature::any(3, Volatility::Immutable),
    with_value: true,
    invoke: |name, args| invoke_mutator(name, Edit::Insert, false, args),
    description: "Inserts value at path: a new object field (an error if the key exists), or an array element at the index, shifting later elements right and padding with variant nulls past the end. Missing intermediate objects are created; a segment that meets the wrong kind of value gives an error. Any SQL NULL argument gives NULL.",
    syntax: "variant_insert(variant, path, value)",
    example: "```sql\n> SELECT to_json(variant_insert(parse_json('[\"a\",\"b\"]'), '$[1]', 'z'));\n[\"a\",\"z\",\"b\"]\n```",
    arguments: [
        ("variant", "A VARIANT value."),
        ("path", "A path in variant_get's grammar (`$.a.b[0]`)."),
        ("value", "The value to write; any type, converted as CAST(value AS VARIANT)."),
    ],
}
