//! `variant_array_append(variant, path, value)`: appends to the array at a path (Spark 4.3).
use datafusion::logical_expr::{Signature, Volatility};

use super::mutate::{Edit, invoke_mutator, mutator_udf};

mutator_udf! {
    /// The `variant_array_append` UDF.
    struct VariantArrayAppend;
    name: "variant_array_append",
    udf: variant_array_append_udf,
    signature: Signature::any(3, Volatility::Immutable),
    with_value: true,
    invoke: |name, args| invoke_mutator(name, Edit::Append, false, args),
    description: "Appends value to the array at path (`$` is the variant itself). A missing key or index returns the input unchanged; a target that is not an array, or a segment that meets the wrong kind of value, gives an error. Any SQL NULL argument gives NULL.",
    syntax: "variant_array_append(variant, path, value)",
    example: "```sql\n> SELECT to_json(variant_array_append(parse_json('[1, 2, 3]'), '$', 4));\n[1,2,3,4]\n```",
    arguments: [
        ("variant", "A VARIANT value."),
        ("path", "A path in variant_get's grammar; `$` for the variant itself."),
        ("value", "The value to write; any type, converted as CAST(value AS VARIANT)."),
    ],
}
