//! Untrusted arguments of the path mutators (`variant_insert`, `variant_set`, `variant_delete`,
//! `variant_array_append` and their `try_` forms): any variant bytes, any path text, any new
//! value. They must never panic or overflow the stack, and every value they return from a
//! valid input is valid (`validate`: well formed, at most 1000 levels deep, no shared bytes); a
//! row the edit leaves unchanged is returned as it came, valid or not.
#![no_main]

use std::sync::{Arc, LazyLock};

use datafusion::arrow::array::{ArrayRef, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::config::ConfigOptions;
use datafusion::logical_expr::{ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF};
use datafusion_parquet_variant::codec::{JsonParser, VariantBuilder, validate};
use datafusion_parquet_variant::functions::scalar_functions;
use datafusion_parquet_variant::variant_array::{
    VariantArrayBuilder, VariantColumn, variant_field,
};
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;

const MUTATORS: [&str; 7] = [
    "variant_insert",
    "variant_set",
    "variant_delete",
    "variant_array_append",
    "try_variant_insert",
    "try_variant_set",
    "try_variant_array_append",
];

static UDFS: LazyLock<Vec<Arc<ScalarUDF>>> = LazyLock::new(|| {
    let all = scalar_functions();
    MUTATORS
        .iter()
        .map(|name| {
            let udf = all.iter().find(|f| f.name() == *name).expect("registered");
            Arc::clone(udf)
        })
        .collect()
});

static CONFIG: LazyLock<Arc<ConfigOptions>> = LazyLock::new(|| Arc::new(ConfigOptions::new()));

/// A variant argument: JSON text (a valid value, often deep or wide) or raw bytes.
#[derive(Arbitrary, Debug)]
enum Source {
    Json(String),
    Raw(Vec<u8>, Vec<u8>),
}

#[derive(Arbitrary, Debug)]
struct Input {
    function: u8,
    variant: Source,
    path: String,
    new_value: Source,
}

/// Whether `source` is a valid variant (JSON that parses always is).
fn is_valid(source: &Source) -> bool {
    match source {
        Source::Json(_) => true,
        Source::Raw(metadata, value) => validate(metadata, value).is_ok(),
    }
}

/// One row of a variant column holding `source`; None when its JSON does not parse.
fn column(source: &Source) -> Option<ArrayRef> {
    let mut out = VariantArrayBuilder::with_capacity(1);
    match source {
        Source::Json(text) => {
            let mut b = VariantBuilder::new();
            JsonParser::new().parse(text, &mut b).ok()?;
            out.append_built(&b);
        }
        Source::Raw(metadata, value) => out.append(metadata, value),
    }
    out.finish().ok()
}

fuzz_target!(|input: Input| {
    let udf = &UDFS[input.function as usize % UDFS.len()];
    let (Some(variant), Some(new_value)) = (column(&input.variant), column(&input.new_value))
    else {
        return;
    };
    let mut args = vec![
        ColumnarValue::Array(variant),
        ColumnarValue::Array(Arc::new(StringArray::from(vec![input.path.as_str()]))),
    ];
    let mut arg_fields: Vec<FieldRef> = vec![
        Arc::new(variant_field("v", true)),
        Arc::new(Field::new("path", DataType::Utf8, true)),
    ];
    if udf.name() != "variant_delete" {
        args.push(ColumnarValue::Array(new_value));
        arg_fields.push(Arc::new(variant_field("value", true)));
    }
    let scalars = vec![None; args.len()];
    let return_field = udf
        .return_field_from_args(ReturnFieldArgs {
            arg_fields: &arg_fields,
            scalar_arguments: &scalars,
        })
        .expect("planned");
    let result = udf.invoke_with_args(ScalarFunctionArgs {
        args,
        arg_fields,
        number_rows: 1,
        return_field,
        config_options: Arc::clone(&CONFIG),
    });
    let Ok(ColumnarValue::Array(out)) = result else {
        return;
    };
    if !is_valid(&input.variant) || !is_valid(&input.new_value) {
        return;
    }
    let column = VariantColumn::try_new(&out).expect("a variant column");
    let rows = column.rows().expect("readable rows");
    let Some((metadata, value)) = rows.bytes(0) else {
        return;
    };
    if let Err(e) = validate(metadata, value) {
        panic!("{} returned an invalid value: {e}", udf.name());
    }
});
