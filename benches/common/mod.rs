//! Shared input for the benches: seeded batches of realistic JSON event objects.
//!
//! The generator is a small xorshift64* PRNG (no extra dependencies), so every run and every bench
//! sees exactly the same rows.
#![allow(dead_code)]

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, StringArray};

/// Rows per batch (DataFusion's default batch size).
pub const BATCH_ROWS: usize = 8192;

/// The seed used by every bench.
pub const SEED: u64 = 0x005E_ED0F_DA7A_F051;

/// xorshift64*: tiny, fast and good enough for test data.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.max(1))
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

const EVENT_TYPES: &[&str] = &["click", "view", "purchase", "signup", "logout", "search"];
const COUNTRIES: &[&str] = &["US", "DE", "FR", "JP", "BR", "IN", "GB"];
const TAGS: &[&str] = &["new", "promo", "mobile", "web", "beta", "vip", "retry"];
const NAMES: &[&str] = &["alice", "bob", "carol", "dave", "eve", "mallory", "trent"];
const CURRENCIES: &[&str] = &["USD", "EUR", "JPY"];

/// One JSON event object, roughly 60 to 200 bytes.
pub fn json_event(rng: &mut Rng, out: &mut String) {
    use std::fmt::Write;
    out.clear();
    let id = rng.below(10_000_000);
    let ty = rng.pick(EVENT_TYPES);
    write!(out, r#"{{"id":{id},"type":"{ty}""#).unwrap();
    // Nested object (always present, so every row has some nesting).
    {
        let uid = rng.below(100_000);
        let name = rng.pick(NAMES);
        write!(out, r#","user":{{"id":{uid},"name":"{name}""#).unwrap();
        if rng.chance(50) {
            write!(out, r#","premium":{}"#, rng.chance(30)).unwrap();
        }
        if rng.chance(40) {
            write!(out, r#","country":"{}""#, rng.pick(COUNTRIES)).unwrap();
        }
        out.push('}');
    }
    // Timestamp-like int.
    if rng.chance(70) {
        write!(
            out,
            r#","ts":{}"#,
            1_700_000_000_000u64 + rng.below(100_000_000_000)
        )
        .unwrap();
    }
    // Decimal with a trailing zero, like 12.50.
    if rng.chance(60) {
        let cents = rng.below(100_000);
        write!(
            out,
            r#","price":{}.{:02},"currency":"{}""#,
            cents / 100,
            (cents % 100) / 10 * 10,
            rng.pick(CURRENCIES)
        )
        .unwrap();
    }
    // Double with an exponent.
    if rng.chance(50) {
        let mantissa = rng.below(99_999) as f64 / 10_000.0 + 1.0;
        let exp = rng.below(12) as i64 - 6;
        write!(out, r#","score":{mantissa:.4}e{exp}"#).unwrap();
    }
    // Array of strings.
    if rng.chance(60) {
        out.push_str(r#","tags":["#);
        let n = 1 + rng.below(3);
        for i in 0..n {
            if i > 0 {
                out.push(',');
            }
            write!(out, r#""{}""#, rng.pick(TAGS)).unwrap();
        }
        out.push(']');
    }
    // Array of small ints (only in shorter rows, to keep rows under ~200 bytes).
    if out.len() < 120 && rng.chance(40) {
        let (a, b, c) = (rng.below(100), rng.below(1000), rng.below(70000));
        write!(out, r#","dims":[{a},{b},{c}]"#).unwrap();
    }
    // Booleans and nulls.
    write!(out, r#","ok":{}"#, rng.chance(90)).unwrap();
    if rng.chance(30) {
        out.push_str(r#","ref":null"#);
    }
    if out.len() < 150 && rng.chance(30) {
        write!(out, r#","session":"s-{:08x}""#, rng.next_u64() as u32).unwrap();
    }
    out.push('}');
}

/// A batch of `rows` JSON event objects as a `StringArray` (no SQL NULLs).
pub fn json_batch(rows: usize, seed: u64) -> ArrayRef {
    let mut rng = Rng::new(seed);
    let mut row = String::new();
    let mut values = Vec::with_capacity(rows);
    for _ in 0..rows {
        json_event(&mut rng, &mut row);
        values.push(row.clone());
    }
    Arc::new(StringArray::from(values))
}

/// The standard bench input: 8192 events.
pub fn default_batch() -> ArrayRef {
    json_batch(BATCH_ROWS, SEED)
}

/// Size statistics of a string batch: (min, mean, max) bytes per row.
pub fn row_sizes(array: &ArrayRef) -> (usize, usize, usize) {
    let a = array.as_any().downcast_ref::<StringArray>().unwrap();
    let lens: Vec<usize> = (0..a.len()).map(|i| a.value(i).len()).collect();
    let min = *lens.iter().min().unwrap();
    let max = *lens.iter().max().unwrap();
    (min, lens.iter().sum::<usize>() / lens.len().max(1), max)
}

static CONFIG: std::sync::LazyLock<Arc<datafusion::config::ConfigOptions>> =
    std::sync::LazyLock::new(|| Arc::new(datafusion::config::ConfigOptions::default()));

/// Invokes a one-argument UDF on `array` the way DataFusion's executor does.
pub fn invoke_udf(
    udf: &datafusion::logical_expr::ScalarUDF,
    arg_field: &arrow::datatypes::FieldRef,
    array: &ArrayRef,
) -> ArrayRef {
    use datafusion::logical_expr::{ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs};
    let arg_fields = vec![Arc::clone(arg_field)];
    let return_field = udf
        .return_field_from_args(ReturnFieldArgs {
            arg_fields: &arg_fields,
            scalar_arguments: &[None],
        })
        .expect("return field");
    let args = ScalarFunctionArgs {
        args: vec![ColumnarValue::Array(Arc::clone(array))],
        arg_fields,
        number_rows: array.len(),
        return_field,
        config_options: Arc::clone(&CONFIG),
    };
    match udf.invoke_with_args(args).expect("invoke") {
        ColumnarValue::Array(a) => a,
        ColumnarValue::Scalar(_) => panic!("expected an array result"),
    }
}

/// The input field of a string column.
pub fn utf8_field() -> arrow::datatypes::FieldRef {
    Arc::new(arrow::datatypes::Field::new(
        "json",
        arrow::datatypes::DataType::Utf8,
        true,
    ))
}

/// Parses the default batch with our `parse_json` (the input of `to_json` / `is_variant_null`).
pub fn our_variant_batch(json: &ArrayRef) -> ArrayRef {
    let udf = datafusion_parquet_variant::functions::parse_json::parse_json_udf();
    invoke_udf(&udf, &utf8_field(), json)
}

/// The field of one of our variant columns.
pub fn our_variant_field() -> arrow::datatypes::FieldRef {
    Arc::new(datafusion_parquet_variant::variant_array::variant_field(
        "v", true,
    ))
}

/// arrow-rs's variant column for `json`, converted to the `Struct<Binary, Binary>` layout that its
/// `variant_to_json` kernel requires (its own builder produces `BinaryView`).
pub fn arrow_rs_variant_batch(json: &ArrayRef) -> ArrayRef {
    use arrow::array::{Array, StructArray};
    use arrow::datatypes::{DataType, Field};
    let variant = parquet_variant_compute::json_to_variant(json).expect("arrow-rs json_to_variant");
    let inner = variant.into_inner();
    let to_binary = |name: &str| {
        let column = inner.column_by_name(name).expect("column");
        arrow::compute::cast(column, &DataType::Binary).expect("cast to Binary")
    };
    let metadata = to_binary("metadata");
    let value = to_binary("value");
    let fields = vec![
        Arc::new(Field::new("metadata", DataType::Binary, false)),
        Arc::new(Field::new("value", DataType::Binary, false)),
    ];
    Arc::new(
        StructArray::try_new(fields.into(), vec![metadata, value], inner.nulls().cloned())
            .expect("struct"),
    )
}
