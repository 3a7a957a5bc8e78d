//! Shredded writing (`datafusion_parquet_variant::shredding::shred_variant`, `COPY ..
//! OPTIONS ('variant.shred.v' ..)`, `parquet::write_parquet`): the Parquet schema written (as
//! `spec/VariantShredding.md` and `spec/LogicalTypes.md` say), property-generated values that
//! shred and reassemble to the same value (by our reader and by arrow-rs `parquet-variant-compute`),
//! and every shredding schema of the conformance files written by us and read back exactly.
mod common;

use std::sync::Arc;

use common::*;
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BinaryArray, Int64Array, RecordBatch, StructArray,
};
use datafusion::arrow::datatypes::{DataType, Field, Fields, Schema};
use datafusion::prelude::SessionContext;
use datafusion_parquet_variant::codec::{self, SessionTimeZone, Variant, write_json};
use datafusion_parquet_variant::functions::schema_of_variant::variant_array_schemas;
use datafusion_parquet_variant::functions::to_json::variant_array_to_json;
use datafusion_parquet_variant::parquet::{
    ShreddingOptions, register_parquet_table, write_parquet,
};
use datafusion_parquet_variant::session_context;
use datafusion_parquet_variant::shredding::{
    self, TopLevel, for_each_top_level, shred_variant, shredded_validity, shredded_variant_type,
};
use datafusion_parquet_variant::variant_array::{
    VariantArrayBuilder, variant_data_type, variant_field,
};
use parquet_variant_compute::{VariantArray as ArrowVariantArray, unshred_variant};
use proptest::prelude::*;

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn scratch(name: &str) -> common::TempPath {
    scratch_dir("parquet-shredding-test", name)
}

/// A variant column of `values` (None: SQL NULL).
fn variant_column(values: &[Option<(Vec<u8>, Vec<u8>)>]) -> ArrayRef {
    let mut out = VariantArrayBuilder::with_capacity(values.len());
    for v in values {
        match v {
            Some((m, v)) => out.append(m, v),
            None => out.append_null(),
        }
    }
    out.finish().unwrap()
}

/// The rows of a variant column (any layout) in the value model, as our reader reassembles them.
fn ours(array: &ArrayRef) -> Vec<Option<V>> {
    let column = shredding::variant_column(array).unwrap();
    let rows = column.rows().unwrap();
    (0..column.len())
        .map(|i| rows.get(i).unwrap().map(|v| decode_ours(v).unwrap()))
        .collect()
}

/// `to_json` of every row of a variant column (any layout), in the session time zone UTC.
fn json_texts(array: &ArrayRef) -> Vec<Option<String>> {
    let tz = SessionTimeZone::utc();
    let json = variant_array_to_json("to_json", array, &tz).unwrap();
    json.as_string::<i32>()
        .iter()
        .map(|s| s.map(String::from))
        .collect()
}

/// `schema_of_variant` of every row of a variant column (any layout).
fn schema_texts(array: &ArrayRef) -> Vec<Option<String>> {
    let schemas = variant_array_schemas("schema_of_variant", array).unwrap();
    schemas
        .as_string::<i32>()
        .iter()
        .map(|s| s.map(String::from))
        .collect()
}

/// `is_valid_variant` of every row of a variant column: checked where a shredded column holds
/// each value, byte by byte for an unshredded one.
fn validity(array: &ArrayRef) -> Vec<Option<bool>> {
    if array.as_struct().column_by_name("typed_value").is_some() {
        let valid = shredded_validity(array.as_struct()).unwrap();
        return valid.as_boolean().iter().collect();
    }
    let column = shredding::variant_column(array).unwrap();
    let rows = column.rows().unwrap();
    (0..column.len())
        .map(|i| rows.bytes(i).map(|(m, v)| codec::validate(m, v).is_ok()))
        .collect()
}

/// The top level of every row of a variant column, as `is_variant_null`,
/// `variant_array_length` and `variant_object_keys` see it: read from the shredded columns
/// (`for_each_top_level`) for a shredded column, from the values for an unshredded one.
fn top_levels(array: &ArrayRef) -> Vec<String> {
    fn of_value(v: Variant<'_>) -> String {
        match v.get().unwrap() {
            codec::Value::Null => "null".into(),
            codec::Value::Array(a) => format!("array of {}", a.len()),
            codec::Value::Object(o) => {
                let keys: Vec<_> = (0..o.len()).map(|i| o.key(i).unwrap()).collect();
                format!("object {keys:?}")
            }
            _ => "primitive".into(),
        }
    }
    let mut out = vec![];
    if array.as_struct().column_by_name("typed_value").is_some() {
        for_each_top_level(array.as_struct(), |row| {
            out.push(match row {
                TopLevel::Null => "SQL NULL".into(),
                TopLevel::Missing => "null".into(),
                TopLevel::Residual(v) => of_value(v),
                TopLevel::Primitive => "primitive".into(),
                TopLevel::Array(n) => format!("array of {n}"),
                TopLevel::Object(keys) => format!("object {keys:?}"),
            });
            Ok(())
        })
        .unwrap();
        return out;
    }
    let column = shredding::variant_column(array).unwrap();
    let rows = column.rows().unwrap();
    (0..column.len())
        .map(|i| rows.get(i).unwrap().map_or("SQL NULL".into(), of_value))
        .collect()
}

/// The rows of a (shredded) variant struct as arrow-rs reassembles them (`unshred_variant`).
fn arrow_rs(array: &ArrayRef) -> Vec<Option<V>> {
    let shredded = ArrowVariantArray::try_new(array.as_ref()).unwrap();
    let variants = unshred_variant(&shredded).unwrap();
    (0..variants.len())
        .map(|i| {
            variants
                .is_valid(i)
                .then(|| from_arrow(&variants.try_value(i).unwrap()))
        })
        .collect()
}

/// `v` with every exact numeric as one normalized decimal: shredding may move a value to
/// another member of the spec's Exact Numeric class (an int8 into a bigint column), which is the
/// same value.
fn numeric_class(v: &V) -> V {
    let decimal = |mut unscaled: i128, mut scale: u8| {
        while scale > 0 && unscaled % 10 == 0 {
            unscaled /= 10;
            scale -= 1;
        }
        V::D16(unscaled, scale)
    };
    match v {
        V::I8(x) => decimal(*x as i128, 0),
        V::I16(x) => decimal(*x as i128, 0),
        V::I32(x) => decimal(*x as i128, 0),
        V::I64(x) => decimal(*x as i128, 0),
        V::D4(x, s) => decimal(*x as i128, *s),
        V::D8(x, s) => decimal(*x as i128, *s),
        V::D16(x, s) => decimal(*x, *s),
        V::Obj(fields) => {
            let mut f: Vec<_> = fields
                .iter()
                .map(|(k, v)| (k.clone(), numeric_class(v)))
                .collect();
            f.sort_by(|a, b| a.0.cmp(&b.0));
            V::Obj(f)
        }
        V::Arr(items) => V::Arr(items.iter().map(numeric_class).collect()),
        other => other.clone(),
    }
}

fn classes(rows: &[Option<V>]) -> Vec<Option<V>> {
    rows.iter().map(|r| r.as_ref().map(numeric_class)).collect()
}

async fn to_json_rows(ctx: &SessionContext, sql: &str) -> Vec<String> {
    let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
    let mut out = vec![];
    for b in &batches {
        let c = b.column(0).as_string::<i32>();
        for i in 0..c.len() {
            out.push(if c.is_null(i) {
                "NULL".to_string()
            } else {
                c.value(i).to_string()
            });
        }
    }
    out
}

fn json_of(v: Variant<'_>) -> String {
    let mut out = vec![];
    write_json(&mut out, v, &SessionTimeZone::utc()).unwrap();
    String::from_utf8(out).unwrap()
}

// ---------------------------------------------------------------------------------------------
// The Parquet schema written
// ---------------------------------------------------------------------------------------------

/// Every shredded type maps to the Parquet type of the spec's table; object fields are required
/// groups, arrays 3-level lists with a required `element` group, the column a VARIANT group.
#[tokio::test]
async fn the_written_parquet_schema_follows_the_spec() {
    let dir = scratch("schema");
    let path = dir.join("s.parquet");
    let ctx = session_context().enable_url_table();
    let sql = format!(
        "COPY (SELECT 1 AS id, parse_json('{{}}') AS v) TO '{}' STORED AS PARQUET OPTIONS (\
         'variant.shred.v' 'struct<b boolean, i8 tinyint, i16 smallint, i32 int, i64 bigint, \
         f float, d double, d4 decimal(9,2), d8 decimal(18,2), d16 decimal(38,2), dt date, \
         ts timestamp, ntz timestamp_ntz, bin binary, s string, l array<string>, \
         o struct<x variant>>')",
        path.display()
    );
    ctx.sql(&sql).await.unwrap().collect().await.unwrap();
    let text = parquet_schema_text(&path);
    let expected = [
        // specification version 1, which Spark 4.3 requires (parse_json of a literal is never
        // NULL, hence REQUIRED)
        "REQUIRED group v (VARIANT(Some(1))) {",
        "REQUIRED BYTE_ARRAY metadata;",
        "OPTIONAL BYTE_ARRAY value;",
        "OPTIONAL group typed_value {",
        "REQUIRED group b {",
        "OPTIONAL BOOLEAN typed_value;",
        "OPTIONAL INT32 typed_value (INTEGER(8,true));",
        "OPTIONAL INT32 typed_value (INTEGER(16,true));",
        "OPTIONAL INT32 typed_value;",
        "OPTIONAL INT64 typed_value;",
        "OPTIONAL FLOAT typed_value;",
        "OPTIONAL DOUBLE typed_value;",
        "OPTIONAL INT32 typed_value (DECIMAL(9,2));",
        "OPTIONAL INT64 typed_value (DECIMAL(18,2));",
        "OPTIONAL FIXED_LEN_BYTE_ARRAY (16) typed_value (DECIMAL(38,2));",
        "OPTIONAL INT32 typed_value (DATE);",
        "OPTIONAL INT64 typed_value (TIMESTAMP(MICROS,true));",
        "OPTIONAL INT64 typed_value (TIMESTAMP(MICROS,false));",
        "OPTIONAL BYTE_ARRAY typed_value;",
        "OPTIONAL BYTE_ARRAY typed_value (STRING);",
        "OPTIONAL group typed_value (LIST) {",
        "REPEATED group list {",
        "REQUIRED group element {",
        "REQUIRED group o {",
        "REQUIRED group x {",
    ];
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    for line in expected {
        assert!(lines.contains(&line), "missing `{line}` in\n{text}");
    }
    // `o.x` is shredded as variant: a value column only
    let x = text.find("REQUIRED group x {").unwrap();
    let x_group = &text[x..x + text[x..].find('}').unwrap()];
    assert!(!x_group.contains("typed_value"), "{x_group}");
}

/// The lines of the Parquet group that starts at line `start` of a printed schema (its own line
/// included, up to its closing brace).
fn group_at<'a>(lines: &[&'a str], start: usize) -> Vec<&'a str> {
    let mut depth = 0;
    let mut out = vec![];
    for line in &lines[start..] {
        out.push(*line);
        depth += line.matches('{').count();
        depth -= line.matches('}').count();
        if depth == 0 {
            break;
        }
    }
    out
}

/// Variants inside a struct, a list and a map, shredded by path (`s.v`, `arr.element`,
/// `m.value`): each a VARIANT group of specification version 1 with `metadata`, `value` and a
/// `typed_value` of its shredding type, as the spec lays out a top-level one; they read back as
/// written, the map's values too (which SQL cannot declare in the file's layout).
#[tokio::test]
async fn nested_variants_are_shredded_by_path() {
    let dir = scratch("nested");
    let path = dir.join("n.parquet");
    let ctx = session_context().enable_url_table();
    let input = "SELECT id, named_struct('n', id, 'v', parse_json(j)) AS s, \
         make_array(parse_json(j)) AS arr, map(['k'], [parse_json(j)]) AS m \
         FROM (VALUES (1, '{\"a\": 1, \"b\": \"x\"}'), (2, '{\"a\": \"no\"}'), (3, '[7]')) \
         AS t(id, j)";
    let sql = format!(
        "COPY ({input}) TO '{}' STORED AS PARQUET OPTIONS (\
         'variant.shred.s.v' 'struct<a bigint>', 'variant.shred.arr.element' 'struct<b string>', \
         'variant.shred.m.value' 'array<bigint>')",
        path.display()
    );
    ctx.sql(&sql).await.unwrap().collect().await.unwrap();
    let text = parquet_schema_text(&path);
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    // (parse_json of a column may be NULL: OPTIONAL groups)
    let expected: [(&str, &[&str]); 3] = [
        (
            "OPTIONAL group v (VARIANT(Some(1))) {",
            &[
                "OPTIONAL group typed_value {",
                "REQUIRED group a {",
                "OPTIONAL INT64 typed_value;",
            ],
        ),
        (
            // (DataFusion names a list's element `item`; the option says `element` for any)
            "OPTIONAL group item (VARIANT(Some(1))) {",
            &[
                "OPTIONAL group typed_value {",
                "REQUIRED group b {",
                "OPTIONAL BYTE_ARRAY typed_value (STRING);",
            ],
        ),
        (
            "OPTIONAL group value (VARIANT(Some(1))) {",
            &[
                "OPTIONAL group typed_value (LIST) {",
                "OPTIONAL INT64 typed_value;",
            ],
        ),
    ];
    for (group, inside) in expected {
        let start = lines.iter().position(|l| *l == group);
        let start = start.unwrap_or_else(|| panic!("missing `{group}` in\n{text}"));
        let group_lines = group_at(&lines, start);
        for line in [
            "REQUIRED BYTE_ARRAY metadata;",
            "OPTIONAL BYTE_ARRAY value;",
        ]
        .iter()
        .chain(inside)
        {
            assert!(
                group_lines.contains(line),
                "missing `{line}` in\n{}",
                group_lines.join("\n")
            );
        }
    }
    let read = "SELECT to_json(s['v']) || ' ' || to_json(arr[1]) || ' ' || to_json(m['k']) FROM";
    let written = to_json_rows(&ctx, &format!("{read} ({input}) ORDER BY id")).await;
    let back = to_json_rows(&ctx, &format!("{read} '{}' ORDER BY id", path.display())).await;
    assert_eq!(back, written);
    assert_eq!(written[2], "[7] [7] [7]");
}

/// A uuid shredding type (Rust API only: SQL has no uuid type name) is FIXED_LEN_BYTE_ARRAY(16)
/// with the UUID logical type; times and nanosecond timestamps are INT64 with TIME / TIMESTAMP.
/// Values nested 30 deep (arrays, objects), shredded automatically and by an explicit type:
/// their Arrow schema nests past what the IPC verifier of Arrow readers accepts (64 tables), so
/// the files go without the footer's ARROW:schema and read back by their Parquet schema, every
/// value as written (before, the `COPY` wrote a file no Arrow reader could open). A Rust test on
/// a thread of 64 MiB, not an slt file: a debug build handling types nested this deep overflows
/// the 2 MiB stacks of test threads and tokio workers (release builds do not).
#[test]
fn values_shredded_30_deep_read_back() {
    let thread = std::thread::Builder::new().stack_size(64 << 20).spawn(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(shred_30_deep_and_read_back());
    });
    thread.unwrap().join().unwrap();
}

async fn shred_30_deep_and_read_back() {
    let dir = scratch("deep");
    let ctx = session_context();
    let arrays = format!("{}1{}", "[".repeat(30), "]".repeat(30));
    let objects = format!("{}2{}", "{\"a\":".repeat(30), "}".repeat(30));
    let typed = format!("{}3{}", "[".repeat(30), "]".repeat(30));
    let array_type = format!("{}bigint{}", "array<".repeat(30), ">".repeat(30));
    for (name, id, json, options) in [
        ("arrays", 1, &arrays, String::new()),
        ("objects", 2, &objects, String::new()),
        (
            "typed",
            3,
            &typed,
            format!("OPTIONS ('variant.shred.v' '{array_type}')"),
        ),
    ] {
        let copy = format!(
            "COPY (SELECT {id} AS id, parse_json('{json}') AS v) TO '{}' STORED AS PARQUET {options}",
            dir.join(format!("{name}.parquet")).display()
        );
        ctx.sql(&copy).await.unwrap().collect().await.unwrap();
    }
    let create = format!(
        "CREATE EXTERNAL TABLE deep STORED AS PARQUET LOCATION '{}/'",
        dir.display()
    );
    ctx.sql(&create).await.unwrap().collect().await.unwrap();
    let rows = to_json_rows(&ctx, "SELECT to_json(v) FROM deep ORDER BY id").await;
    assert_eq!(rows, [arrays, objects, typed]);
    let paths = format!(
        "SELECT to_json(coalesce(try_variant_get(v, '${}', 'variant'), \
         try_variant_get(v, '${}', 'variant'))) FROM deep ORDER BY id",
        "[0]".repeat(30),
        ".a".repeat(30)
    );
    assert_eq!(to_json_rows(&ctx, &paths).await, ["1", "2", "3"]);
}

#[tokio::test]
async fn rust_only_shredding_types() {
    let dir = scratch("rust-types");
    let path = dir.join("u.parquet");
    let ctx = session_context().enable_url_table();
    let df = ctx
        .sql("SELECT parse_json('\"x\"') AS u, parse_json('1') AS t, parse_json('2') AS n")
        .await
        .unwrap();
    let shredding = ShreddingOptions::new()
        .with_column_type("u", DataType::FixedSizeBinary(16))
        .unwrap()
        .with_column_type(
            "t",
            DataType::Time64(datafusion::arrow::datatypes::TimeUnit::Microsecond),
        )
        .unwrap()
        .with_column_type(
            "n",
            DataType::Timestamp(
                datafusion::arrow::datatypes::TimeUnit::Nanosecond,
                Some("UTC".into()),
            ),
        )
        .unwrap();
    write_parquet(df, path.to_str().unwrap(), shredding)
        .await
        .unwrap();
    assert_schema_lines(
        &parquet_schema_text(&path),
        &[
            "OPTIONAL FIXED_LEN_BYTE_ARRAY (16) typed_value (UUID);",
            "OPTIONAL INT64 typed_value (TIME(MICROS,false));",
            "OPTIONAL INT64 typed_value (TIMESTAMP(NANOS,true));",
        ],
    );
    // values of other types stay in value and read back unchanged
    let got = to_json_rows(
        &ctx,
        &format!(
            "SELECT to_json(u) || to_json(t) || to_json(n) FROM '{}'",
            path.display()
        ),
    )
    .await;
    assert_eq!(got, ["\"x\"12"]);
}

// ---------------------------------------------------------------------------------------------
// Row groups
// ---------------------------------------------------------------------------------------------

/// The row counts of the row groups of the Parquet file at `path`.
fn row_group_rows(path: &std::path::Path) -> Vec<i64> {
    use datafusion::parquet::file::reader::{FileReader, SerializedFileReader};
    let reader = SerializedFileReader::new(std::fs::File::open(path).unwrap()).unwrap();
    (reader.metadata().row_groups().iter())
        .map(|rg| rg.num_rows())
        .collect()
}

/// Files with variant columns are written in row groups of 128 Ki rows (DataFusion's default is
/// a million) and compressed with zstd's first level (DataFusion's default is level 3), unless
/// `max_row_group_size` or `compression` say otherwise; files without keep DataFusion's. (The
/// footer names the codec, not its level: the file is the one `zstd(1)` writes, byte for byte.)
#[tokio::test]
async fn variant_files_have_row_groups_of_128_ki_rows() {
    let dir = scratch("row_groups");
    let ctx = session_context();
    let copy = |name: &str, select: &str, options: &str| {
        format!(
            "COPY ({select} FROM generate_series(1, 300000)) TO '{}' STORED AS PARQUET{options}",
            dir.join(name).display()
        )
    };
    let variants = "SELECT parse_json('{\"a\":' || value || '}') AS v";
    for sql in [
        copy("auto.parquet", variants, ""),
        copy(
            "unshredded.parquet",
            variants,
            " OPTIONS ('variant.shred.v' 'none')",
        ),
        copy(
            "set.parquet",
            variants,
            " OPTIONS ('format.max_row_group_size' '200000')",
        ),
        copy("plain.parquet", "SELECT value", ""),
        copy(
            "level_1.parquet",
            variants,
            " OPTIONS ('format.compression' 'zstd(1)')",
        ),
        copy(
            "level_9.parquet",
            variants,
            " OPTIONS ('format.compression' 'zstd(9)')",
        ),
    ] {
        ctx.sql(&sql).await.unwrap().collect().await.unwrap();
    }
    let expected = vec![131072, 131072, 37856];
    assert_eq!(row_group_rows(&dir.join("auto.parquet")), expected);
    assert_eq!(row_group_rows(&dir.join("unshredded.parquet")), expected);
    assert_eq!(
        row_group_rows(&dir.join("set.parquet")),
        vec![200000, 100000]
    );
    assert_eq!(row_group_rows(&dir.join("plain.parquet")), vec![300000]);
    let bytes = |name: &str| std::fs::read(dir.join(name)).unwrap();
    assert!(bytes("auto.parquet") == bytes("level_1.parquet"));
    assert!(bytes("auto.parquet") != bytes("level_9.parquet"));
}

/// Each leaf's column chunks, row group by row group: whether it has a dictionary page, by
/// the leaf's path (`v.typed_value.id.typed_value`).
fn dictionary_pages(path: &std::path::Path) -> std::collections::BTreeMap<String, Vec<bool>> {
    use datafusion::parquet::file::reader::{FileReader, SerializedFileReader};
    let reader = SerializedFileReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let mut out = std::collections::BTreeMap::<String, Vec<bool>>::new();
    for rg in reader.metadata().row_groups() {
        for c in rg.columns() {
            (out.entry(c.column_path().string()).or_default())
                .push(c.dictionary_page_offset().is_some());
        }
    }
    out
}

/// A shredded leaf whose sampled values hardly repeat (an id per row) is written without a
/// dictionary, which would hold every value once more; leaves whose values repeat (three kinds;
/// each number twice) keep theirs. A dictionary set for the leaf, or for every column to
/// another value than DataFusion's default, is followed.
#[tokio::test]
async fn leaves_whose_values_hardly_repeat_are_written_without_a_dictionary() {
    let dir = scratch("dictionaries");
    let ctx = session_context().enable_url_table();
    let copy = |name: &str, options: &str| {
        format!(
            "COPY (SELECT parse_json('{{\"id\": \"u' || value || '\", \"kind\": \"k' || \
             (value % 3) || '\", \"n\": ' || (value / 2) || '}}') AS v \
             FROM generate_series(1, 200000)) TO '{}' STORED AS PARQUET{options}",
            dir.join(name).display()
        )
    };
    for sql in [
        copy("auto.parquet", ""),
        copy(
            "id_set.parquet",
            " OPTIONS ('format.dictionary_enabled::v.typed_value.id.typed_value' 'true')",
        ),
        copy(
            "none.parquet",
            " OPTIONS ('format.dictionary_enabled' 'false')",
        ),
    ] {
        ctx.sql(&sql).await.unwrap().collect().await.unwrap();
    }
    let leaf = |file: &str, leaf: &str| dictionary_pages(&dir.join(file))[leaf].clone();
    // two row groups (131072 + 68928 rows)
    let (with, without) = (vec![true, true], vec![false, false]);
    assert_eq!(
        leaf("auto.parquet", "v.typed_value.id.typed_value"),
        without
    );
    assert_eq!(leaf("auto.parquet", "v.typed_value.kind.typed_value"), with);
    assert_eq!(leaf("auto.parquet", "v.typed_value.n.typed_value"), with);
    assert_eq!(leaf("auto.parquet", "v.metadata"), with);
    assert_eq!(leaf("id_set.parquet", "v.typed_value.id.typed_value"), with);
    assert_eq!(
        leaf("none.parquet", "v.typed_value.kind.typed_value"),
        without
    );
    // the values read back
    let got = to_json_rows(
        &ctx,
        &format!(
            "SELECT count(DISTINCT v:id::string) || ' ' || count(DISTINCT v:kind::string) || ' ' \
             || sum(v:n::bigint) FROM '{}'",
            dir.join("auto.parquet").display()
        ),
    )
    .await;
    // n = value / 2: 0 for 1, each of 1..=99999 twice, 100000 for 200000
    assert_eq!(got, ["200000 3 10000000000"]);
}

/// A write keeps its input's order in the file: batches are shredded by tasks of their own,
/// several at once on several threads, and written in the order they came. Every other batch
/// is heavy, so the tasks finish out of order.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn shredded_batches_are_written_in_their_order() {
    let dir = scratch("write_order");
    let path = dir.join("ordered.parquet");
    let ctx = session_context();
    for set in [
        "SET datafusion.execution.batch_size = 97",
        "SET datafusion.execution.target_partitions = 4",
    ] {
        ctx.sql(set).await.unwrap().collect().await.unwrap();
    }
    let heavy_array = r#"{"c":"x","d":[1,2,3]},"#.repeat(40);
    let sql = format!(
        "COPY (SELECT value AS id, parse_json(CASE WHEN (value / 97) % 2 = 0 \
           THEN '{{\"a\":' || value || ',\"b\":[{heavy_array}1]}}' \
           ELSE '{{\"a\":' || value || '}}' END) AS v \
         FROM generate_series(1, 20000) ORDER BY id DESC) TO '{}' STORED AS PARQUET",
        path.display()
    );
    ctx.sql(&sql).await.unwrap().collect().await.unwrap();
    let ids: Vec<i64> = read_parquet_raw(&path)
        .iter()
        .flat_map(|b| {
            b.column(0)
                .as_primitive::<datafusion::arrow::datatypes::Int64Type>()
                .values()
                .to_vec()
        })
        .collect();
    assert_eq!(ids, (1..=20000).rev().collect::<Vec<i64>>());
    // and the variants are the rows' own
    register_parquet_table(&ctx, "back", path.to_str().unwrap())
        .await
        .unwrap();
    let back = to_json_rows(
        &ctx,
        "SELECT to_json(v) FROM back WHERE id IN (50, 100) ORDER BY id",
    )
    .await;
    assert_eq!(
        back,
        vec![
            format!(r#"{{"a":50,"b":[{heavy_array}1]}}"#),
            r#"{"a":100}"#.to_string()
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// The Rust API
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn write_parquet_shreds_and_register_parquet_table_reads_back() {
    let dir = scratch("api");
    let path = dir.join("events.parquet");
    let ctx = session_context().enable_url_table();
    let df = ctx
        .sql(
            r#"SELECT id, parse_json(j) AS v FROM (VALUES
                (1, '{"kind":"click","n":1}'), (2, '{"kind":7,"extra":[1]}'), (3, NULL)
              ) AS t(id, j)"#,
        )
        .await
        .unwrap();
    let shredding = ShreddingOptions::new()
        .with_column("v", "struct<kind string, n bigint>")
        .unwrap();
    let written = write_parquet(df, path.to_str().unwrap(), shredding)
        .await
        .unwrap();
    assert_eq!(
        written[0]
            .column(0)
            .as_primitive::<datafusion::arrow::datatypes::UInt64Type>()
            .value(0),
        3
    );
    let read = session_context();
    register_parquet_table(&read, "events", path.to_str().unwrap())
        .await
        .unwrap();
    let got = to_json_rows(
        &read,
        "SELECT coalesce(to_json(v), 'NULL') FROM events ORDER BY id",
    )
    .await;
    assert_eq!(
        got,
        [
            r#"{"kind":"click","n":1}"#,
            r#"{"extra":[1],"kind":7}"#,
            "NULL"
        ]
    );
    // the file holds `kind` shredded as a string where it is one
    let raw = read_parquet_raw(&path);
    let kind = raw[0]
        .column_by_name("v")
        .unwrap()
        .as_struct()
        .column_by_name("typed_value")
        .unwrap()
        .as_struct()
        .column_by_name("kind")
        .unwrap()
        .as_struct()
        .column_by_name("typed_value")
        .unwrap()
        .as_string_view()
        .clone();
    // (read as views: the footer's Arrow schema says so)
    assert_eq!(kind.iter().collect::<Vec<_>>(), [Some("click"), None, None]);
    // an invalid type or column is an error at the call, not when writing
    assert!(
        ShreddingOptions::new()
            .with_column("v", "map<string, int>")
            .is_err()
    );
    assert!(
        ShreddingOptions::new()
            .with_column("v", "no such type")
            .is_err()
    );
    let df = ctx.sql("SELECT 1 AS id").await.unwrap();
    let err = write_parquet(
        df,
        dir.join("x.parquet").to_str().unwrap(),
        ShreddingOptions::new().with_column("v", "bigint").unwrap(),
    )
    .await
    .unwrap_err();
    assert!(
        err.to_string().contains("the output has no column v"),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------------
// Property: shredding then reassembling gives the same value, by us and by arrow-rs
// ---------------------------------------------------------------------------------------------

const SCHEMAS: &[&str] = &[
    "struct<a bigint, b string, c array<int>, o struct<a decimal(12,3), b boolean>>",
    "struct<a double, b date, c array<struct<a timestamp, b timestamp_ntz>>, o variant>",
    "struct<a tinyint, b binary, c array<array<string>>, o struct<o struct<a float>>>",
    "array<struct<a decimal(38,0), b smallint>>",
    "decimal(18,4)",
    "variant",
];

fn cases() -> u32 {
    proptest_cases(64)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn shredded_values_reassemble_to_the_same_value(
        values in proptest::collection::vec(proptest::option::weighted(0.9, value_strategy()), 1..24)
    ) {
        let encoded: Vec<_> = values
            .iter()
            .map(|v| v.as_ref().map(|v| encode_ours(v).unwrap()))
            .collect();
        let input = variant_column(&encoded);
        let expected = classes(&ours(&input));
        for schema in SCHEMAS {
            let ty = datafusion_parquet_variant::cast::target_type::parse_target_type(schema)
                .unwrap();
            let shredded = shred_variant(&input, &ty).unwrap();
            prop_assert_eq!(shredded.data_type(), &shredded_variant_type(&ty).unwrap());
            prop_assert_eq!(classes(&ours(&shredded)), expected.clone(), "ours, {}", schema);
            prop_assert_eq!(classes(&arrow_rs(&shredded)), expected.clone(), "arrow-rs, {}", schema);
            // to_json straight from the shredded columns: the text of the unshredded input
            prop_assert_eq!(json_texts(&shredded), json_texts(&input), "to_json, {}", schema);
            // schema_of_variant straight from the shredded columns: the schemas of the values
            // reassembled (not always the input's: an exact numeric may have gone into a column
            // of another numeric type, which to_json does not show)
            let reassembled: ArrayRef =
                Arc::new(datafusion_parquet_variant::shredding::unshred(shredded.as_struct()).unwrap());
            prop_assert_eq!(schema_texts(&shredded), schema_texts(&reassembled), "schema_of_variant, {}", schema);
            // is_valid_variant where the shredded column holds each value: valid as the input
            prop_assert_eq!(validity(&shredded), validity(&input), "is_valid_variant, {}", schema);
            // the top level read from the shredded columns: that of the reassembled values
            prop_assert_eq!(top_levels(&shredded), top_levels(&reassembled), "top level, {}", schema);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    /// `is_valid_variant` on a shredded column with one byte of its metadata or top-level
    /// residuals flipped: a row it calls valid reassembles, and to a valid value.
    #[test]
    fn a_shredded_row_said_valid_reassembles_to_a_valid_value(
        values in proptest::collection::vec(proptest::option::weighted(0.9, value_strategy()), 1..12),
        in_metadata in any::<bool>(),
        at in any::<proptest::sample::Index>(),
        mask in 1u8..=255,
    ) {
        let encoded: Vec<_> = values
            .iter()
            .map(|v| v.as_ref().map(|v| encode_ours(v).unwrap()))
            .collect();
        let input = variant_column(&encoded);
        let name = if in_metadata { "metadata" } else { "value" };
        for schema in SCHEMAS {
            let ty = datafusion_parquet_variant::cast::target_type::parse_target_type(schema)
                .unwrap();
            let shredded = shred_variant(&input, &ty).unwrap();
            let corrupted = with_flipped_byte(shredded.as_struct(), name, &at, mask);
            let Some(corrupted) = corrupted else { continue };
            for (i, said) in validity(&corrupted).into_iter().enumerate() {
                if said == Some(true) {
                    let row = corrupted.slice(i, 1);
                    let reassembled = datafusion_parquet_variant::shredding::unshred(row.as_struct());
                    prop_assert!(reassembled.is_ok(), "{}: row {} said valid: {:?}", schema, i, reassembled);
                    let reassembled: ArrayRef = Arc::new(reassembled.unwrap());
                    prop_assert_eq!(validity(&reassembled), vec![Some(true)], "{}: row {}", schema, i);
                }
            }
        }
    }
}

/// `column` with byte `at` of its binary child `name` xor-ed with `mask`; None when the child
/// is missing or holds no bytes.
fn with_flipped_byte(
    column: &StructArray,
    name: &str,
    at: &proptest::sample::Index,
    mask: u8,
) -> Option<ArrayRef> {
    let binary = column.column_by_name(name)?.as_binary::<i32>();
    let mut bytes = binary.values().to_vec();
    if bytes.is_empty() {
        return None;
    }
    let k = at.index(bytes.len());
    bytes[k] ^= mask;
    let flipped = BinaryArray::new(
        binary.offsets().clone(),
        bytes.into(),
        binary.nulls().cloned(),
    );
    let columns = column
        .fields()
        .iter()
        .zip(column.columns())
        .map(|(f, c)| match f.name() == name {
            true => Arc::new(flipped.clone()) as ArrayRef,
            false => Arc::clone(c),
        })
        .collect();
    Some(Arc::new(StructArray::new(
        column.fields().clone(),
        columns,
        column.nulls().cloned(),
    )))
}

/// What arrow-rs `shred_variant` writes, we reassemble. Values here are ones its shredding
/// keeps exact: it casts (a double 0.0 goes into a decimal column as 0), so on arbitrary values
/// its output is not the input.
#[test]
fn arrow_rs_shredded_output_reads_back() {
    let docs = [
        Some(r#"{"a":1,"b":"x","c":[1,2]}"#),
        Some(r#"{"a":"str","z":{"y":[true]}}"#),
        Some(r#"{"b":null}"#),
        Some("42"),
        Some("null"),
        None,
        Some(r#"[{"a":1}]"#),
        Some("{}"),
    ];
    let values: Vec<_> = docs
        .iter()
        .map(|d| {
            d.map(|d| {
                let mut b = codec::VariantBuilder::new();
                codec::JsonParser::new().parse(d, &mut b).unwrap();
                (b.metadata().to_vec(), b.value().to_vec())
            })
        })
        .collect();
    let input = variant_column(&values);
    let expected = classes(&ours(&input));
    let arrow_input = ArrowVariantArray::try_new(input.as_ref()).unwrap();
    for ty in [
        "struct<a bigint, b string>",
        "struct<c array<bigint>>",
        "string",
    ] {
        let ty = datafusion_parquet_variant::cast::target_type::parse_target_type(ty).unwrap();
        let theirs = parquet_variant_compute::shred_variant(&arrow_input, &ty).unwrap();
        let theirs: ArrayRef = Arc::new(theirs.into_inner());
        assert!(theirs.as_struct().column_by_name("typed_value").is_some());
        assert_eq!(classes(&ours(&theirs)), expected, "{ty}");
    }
}

// ---------------------------------------------------------------------------------------------
// JSON -> variant -> shredded Parquet -> read -> to_json, unchanged
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn json_round_trips_through_shredded_parquet() {
    let docs = [
        r#"{"a":1,"b":"x","c":[1,2,3],"o":{"a":1.250,"b":true}}"#,
        r#"{"a":"one","b":2,"c":["x",{"y":null}],"o":[1],"z":{"deep":[[[]]]}}"#,
        r#"{"a":-0.0,"b":null,"c":null,"o":{"a":1e400,"b":"no","c":0}}"#,
        r#"[{"a":1,"b":2},{"a":"x"},null,3]"#,
        r#""just a string \u00e9\ud83d\ude00""#,
        "12345678901234567890123456789012345678",
        "1E10",
        "null",
        "{}",
        "[]",
    ];
    let dir = scratch("round-trip");
    let ctx = session_context().enable_url_table();
    let values: String = docs
        .iter()
        .enumerate()
        .map(|(i, d)| format!("({i}, '{d}')"))
        .collect::<Vec<_>>()
        .join(", ");
    let source = format!("SELECT id, parse_json(j) AS v FROM (VALUES {values}) AS t(id, j)");
    let expected = to_json_rows(
        &ctx,
        &format!("SELECT to_json(v) FROM ({source}) ORDER BY id"),
    )
    .await;
    assert_eq!(expected.len(), docs.len());
    for (n, schema) in SCHEMAS.iter().enumerate() {
        let path = dir.join(format!("{n}.parquet"));
        let sql = format!(
            "COPY ({source}) TO '{}' STORED AS PARQUET OPTIONS ('variant.shred.v' '{schema}')",
            path.display()
        );
        ctx.sql(&sql).await.unwrap().collect().await.unwrap();
        let got = to_json_rows(
            &ctx,
            &format!("SELECT to_json(v) FROM '{}' ORDER BY id", path.display()),
        )
        .await;
        assert_eq!(got, expected, "shredded as {schema}");
    }
}

// ---------------------------------------------------------------------------------------------
// The conformance files' shredding schemas, written by us
// ---------------------------------------------------------------------------------------------

/// The shredding type whose `typed_value` is `typed` (the inverse of `shredded_variant_type`).
fn shredding_type_of(typed: Option<&DataType>) -> DataType {
    let Some(typed) = typed else {
        return variant_data_type();
    };
    let group_typed = |f: &Field| match f.data_type() {
        DataType::Struct(g) => g.find("typed_value").map(|(_, t)| t.data_type().clone()),
        other => panic!("not a group: {other}"),
    };
    match typed {
        DataType::Struct(fields) => DataType::Struct(Fields::from(
            fields
                .iter()
                .map(|f| Field::new(f.name(), shredding_type_of(group_typed(f).as_ref()), true))
                .collect::<Vec<_>>(),
        )),
        DataType::List(e) | DataType::LargeList(e) => DataType::List(Arc::new(Field::new(
            "element",
            shredding_type_of(group_typed(e).as_ref()),
            true,
        ))),
        DataType::Decimal32(p, s) | DataType::Decimal64(p, s) | DataType::Decimal128(p, s) => {
            DataType::Decimal128(*p, *s)
        }
        DataType::Utf8View | DataType::LargeUtf8 => DataType::Utf8,
        DataType::BinaryView | DataType::LargeBinary => DataType::Binary,
        other => other.clone(),
    }
}

/// For every conformance case that reads without error: the expected variants, shredded by us
/// with the case's own shredding schema, written to Parquet and read back, are exactly the
/// expected variants (value for value, in the exact-numeric sense), and render the same JSON.
#[tokio::test]
async fn conformance_schemas_written_by_us_read_back_exactly() {
    let dir = conformance_dir("shredded_variant");
    let cases: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("cases.json")).unwrap()).unwrap();
    let out = scratch("conformance");
    let ctx = session_context().enable_url_table();
    let mut checked = 0;
    let mut typed_rows_written = 0;
    let mut failures = vec![];
    for case in cases.as_array().unwrap() {
        let Some(file) = case["parquet_file"].as_str() else {
            continue;
        };
        if case.get("error_message").is_some() || file.contains("INVALID") {
            continue;
        }
        let expected_files: Vec<Option<&str>> = match case.get("variant_files") {
            Some(files) => files
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f.as_str())
                .collect(),
            None => vec![case["variant_file"].as_str()],
        };
        let values: Vec<Option<(Vec<u8>, Vec<u8>)>> = expected_files
            .iter()
            .map(|f| {
                f.map(|f| {
                    let bytes = std::fs::read(dir.join(f)).unwrap();
                    let (m, v) = split_variant_file(&bytes);
                    (m.to_vec(), v.to_vec())
                })
            })
            .collect();
        // the case's typed_value type, and its rows in id order, as the file holds them
        let original: Vec<RecordBatch> = read_parquet_raw(&dir.join(file))
            .iter()
            .map(|b| {
                let order = datafusion::arrow::compute::sort_to_indices(
                    b.column_by_name("id").unwrap(),
                    None,
                    None,
                )
                .unwrap();
                datafusion::arrow::compute::take_record_batch(b, &order).unwrap()
            })
            .collect();
        let var_field = original[0].schema().field_with_name("var").unwrap().clone();
        let DataType::Struct(var) = var_field.data_type() else {
            panic!("{file}: var is not a struct");
        };
        let shredding = shredding_type_of(var.find("typed_value").map(|(_, f)| f.data_type()));
        let input = variant_column(&values);
        let expected = classes(&ours(&input));
        let shredded = match shred_variant(&input, &shredding) {
            Ok(s) => s,
            Err(e) => {
                failures.push(format!("{file}: cannot shred as {shredding}: {e}"));
                continue;
            }
        };
        // the same rows go to typed_value as in the case's file (top level), so we shred as
        // that writer does
        let typed_rows = |a: &ArrayRef| -> Vec<bool> {
            let s = a.as_struct();
            let t = s.column_by_name("typed_value");
            (0..s.len())
                .map(|i| s.is_valid(i) && t.is_some_and(|t| t.is_valid(i)))
                .collect()
        };
        let original_typed: Vec<bool> = original
            .iter()
            .flat_map(|b| typed_rows(b.column_by_name("var").unwrap()))
            .collect();
        // (except where the case's writer kept values unshredded on purpose)
        let deliberately_unshredded =
            case["test"].as_str() == Some("testUnshreddedVariantsWithShreddedSchema");
        if typed_rows(&shredded) != original_typed && !deliberately_unshredded {
            failures.push(format!(
                "{file}: typed_value rows {:?}, the file's {original_typed:?}",
                typed_rows(&shredded)
            ));
        }
        typed_rows_written += original_typed.iter().filter(|t| **t).count();
        // write the shredded column with ids, read it back
        let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(0..values.len() as i64));
        let field = variant_field("var", true);
        let field = Field::new("var", shredded.data_type().clone(), true)
            .with_metadata(field.metadata().clone());
        let batch = RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("id", DataType::Int64, false),
                field,
            ])),
            vec![ids, shredded],
        )
        .unwrap();
        let path = out.join(file);
        let df = ctx.read_batch(batch).unwrap();
        write_parquet(df, path.to_str().unwrap(), ShreddingOptions::new())
            .await
            .unwrap();
        let read = ctx
            .sql(&format!("SELECT var FROM '{}' ORDER BY id", path.display()))
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        let got: Vec<Option<V>> = read.iter().flat_map(|b| ours(b.column(0))).collect();
        if classes(&got) != expected {
            failures.push(format!("{file}: got {got:?}, expected {expected:?}"));
        }
        let expected_json: Vec<Option<String>> = (0..values.len())
            .map(|i| {
                values[i]
                    .as_ref()
                    .map(|(m, v)| json_of(Variant::try_new(m, v).unwrap()))
            })
            .collect();
        let got_json: Vec<Option<String>> = read
            .iter()
            .flat_map(|b| {
                let column = shredding::variant_column(b.column(0)).unwrap();
                let rows = column.rows().unwrap();
                (0..column.len())
                    .map(|i| rows.get(i).unwrap().map(json_of))
                    .collect::<Vec<_>>()
            })
            .collect();
        if got_json != expected_json {
            failures.push(format!(
                "{file}: JSON {got_json:?}, expected {expected_json:?}"
            ));
        }
        checked += 1;
    }
    assert!(checked >= 120, "only {checked} cases");
    assert!(
        typed_rows_written >= 50,
        "typed_value used in {typed_rows_written} rows only"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// Automatic shredding: each file is shredded as `variant_shredding_schema_agg` says of its first
// rows, and reads back unchanged
// ---------------------------------------------------------------------------------------------

/// Values that mostly share one shape (so that the inference keeps fields), with some that do
/// not (other types at the same keys, other shapes, nulls).
fn mostly_one_shape() -> impl Strategy<Value = V> {
    let shaped = (
        any::<i32>(),
        "[a-z]{0,6}",
        proptest::collection::vec(any::<i16>(), 0..3),
        proptest::option::of(any::<bool>()),
        (any::<i32>(), 0u8..4),
    )
        .prop_map(|(n, s, list, flag, (d, scale))| {
            let mut inner = vec![("d".to_string(), V::D4(d % 1_000_000, scale))];
            if let Some(flag) = flag {
                inner.push(("flag".to_string(), V::Bool(flag)));
            }
            V::Obj(vec![
                ("n".to_string(), V::I32(n)),
                ("s".to_string(), V::Str(s)),
                (
                    "list".to_string(),
                    V::Arr(list.into_iter().map(V::I16).collect()),
                ),
                ("o".to_string(), V::Obj(inner)),
            ])
        });
    prop_oneof![6 => shaped, 1 => value_strategy()]
}

/// A session whose table `t (id, v)` holds `values` in batches of `batch_rows` rows.
fn session_with(values: &[Option<V>], batch_rows: usize) -> SessionContext {
    let ctx = session_context();
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        variant_field("v", true),
    ]));
    let batches: Vec<RecordBatch> = values
        .chunks(batch_rows)
        .enumerate()
        .map(|(n, chunk)| {
            let encoded: Vec<_> = chunk
                .iter()
                .map(|v| v.as_ref().map(|v| encode_ours(v).unwrap()))
                .collect();
            let ids = (0..chunk.len()).map(|i| (n * batch_rows + i) as i64);
            RecordBatch::try_new(
                Arc::clone(&schema),
                vec![
                    Arc::new(Int64Array::from_iter_values(ids)),
                    variant_column(&encoded),
                ],
            )
            .unwrap()
        })
        .collect();
    let table =
        datafusion::datasource::MemTable::try_new(Arc::clone(&schema), vec![batches]).unwrap();
    ctx.register_table("t", Arc::new(table)).unwrap();
    ctx
}

/// The variant column `v` of the Parquet file at `path`, ordered by `id`.
async fn read_back(path: &std::path::Path) -> Vec<Option<V>> {
    let read = session_context();
    register_parquet_table(&read, "back", path.to_str().unwrap())
        .await
        .unwrap();
    let sql = "SELECT v FROM back ORDER BY id";
    let batches = read.sql(sql).await.unwrap().collect().await.unwrap();
    batches.iter().flat_map(|b| ours(b.column(0))).collect()
}

/// The single string `sql` returns.
async fn one_string(ctx: &SessionContext, sql: &str) -> String {
    let rows = to_json_rows(ctx, sql).await;
    assert_eq!(rows.len(), 1, "{sql}");
    rows[0].clone()
}

/// Writes `SELECT id, v FROM t` to `path` with `options` (a COPY options list, or "").
async fn copy_t(ctx: &SessionContext, path: &std::path::Path, options: &str) {
    let sql = format!(
        "COPY (SELECT id, v FROM t ORDER BY id) TO '{}' STORED AS PARQUET {options}",
        path.display()
    );
    ctx.sql(&sql).await.unwrap().collect().await.unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(proptest_cases(24)))]

    /// An unsorted write infers from its first rows; a sorted one from a sample of its whole
    /// input (`parquet::input_sample`), which is every row when the sample may hold them.
    #[test]
    fn automatic_shredding_is_what_the_aggregate_says_of_the_sampled_rows(
        values in proptest::collection::vec(proptest::option::weighted(0.9, mostly_one_shape()), 1..40),
        batch_rows in 1usize..16,
        sample in 1usize..48,
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let dir = scratch("auto-property");
            let ctx = session_with(&values, batch_rows);
            ctx.sql(&format!("SET variant.shred_sample_rows = {sample}")).await.unwrap();
            // one partition: the unsorted write receives the rows in the table's order
            ctx.sql("SET datafusion.execution.target_partitions = 1").await.unwrap();
            let first_rows = dir.join("first_rows.parquet");
            let sql = format!(
                "COPY (SELECT id, v FROM t) TO '{}' STORED AS PARQUET",
                first_rows.display()
            );
            ctx.sql(&sql).await.unwrap().collect().await.unwrap();
            let sorted = dir.join("sorted.parquet");
            copy_t(&ctx, &sorted, "").await;
            // the type the aggregate gives for the sampled rows, written explicitly
            let explicit = async |rows: &str, name: &str| {
                let chosen = one_string(
                    &ctx,
                    &format!("SELECT variant_shredding_schema_agg(v) FROM \
                              (SELECT v FROM t ORDER BY id {rows})"),
                )
                .await;
                // (VARIANT: nothing shredded, the unshredded layout)
                let option = if chosen == "VARIANT" { "none".to_string() } else { chosen };
                let path = dir.join(name);
                copy_t(&ctx, &path, &format!("OPTIONS ('variant.shred.v' '{option}')")).await;
                (parquet_schema_text(&path), option)
            };
            let (expected, chosen) = explicit(&format!("LIMIT {sample}"), "explicit.parquet").await;
            prop_assert_eq!(parquet_schema_text(&first_rows), expected, "{}", chosen);
            if sample >= values.len() {
                let (expected, chosen) = explicit("", "explicit_all.parquet").await;
                prop_assert_eq!(parquet_schema_text(&sorted), expected, "{}", chosen);
            }
            // and every value reads back as it was
            prop_assert_eq!(classes(&read_back(&first_rows).await), classes(&values));
            prop_assert_eq!(classes(&read_back(&sorted).await), classes(&values));
            Ok(())
        })?;
    }
}

#[tokio::test]
async fn automatic_shredding_can_be_turned_off_and_a_given_type_wins() {
    let dir = scratch("auto-options");
    let values: Vec<Option<V>> = (0..20)
        .map(|i| {
            Some(V::Obj(vec![
                ("a".to_string(), V::I64(i)),
                ("b".to_string(), V::Str(format!("s{i}"))),
            ]))
        })
        .collect();
    let ctx = session_with(&values, 8);
    let typed = |path: &std::path::Path| {
        let text = parquet_schema_text(path);
        text.lines()
            .filter(|l| l.contains("typed_value"))
            .map(|l| l.trim().to_string())
            .collect::<Vec<_>>()
    };
    // by default: shredded as inferred
    let auto = dir.join("auto.parquet");
    copy_t(&ctx, &auto, "").await;
    assert_eq!(
        typed(&auto),
        [
            "OPTIONAL group typed_value {",
            "OPTIONAL INT64 typed_value;",
            "OPTIONAL BYTE_ARRAY typed_value (STRING);"
        ]
    );
    // 'none' for the column
    let none = dir.join("none.parquet");
    copy_t(&ctx, &none, "OPTIONS ('variant.shred.v' 'none')").await;
    assert!(typed(&none).is_empty(), "{}", parquet_schema_text(&none));
    // a type of its own
    let given = dir.join("given.parquet");
    copy_t(
        &ctx,
        &given,
        "OPTIONS ('variant.shred.v' 'struct<b string>')",
    )
    .await;
    assert_eq!(
        typed(&given),
        [
            "OPTIONAL group typed_value {",
            "OPTIONAL BYTE_ARRAY typed_value (STRING);"
        ]
    );
    // the session option
    ctx.sql("SET variant.shred_on_write = false").await.unwrap();
    let off = dir.join("off.parquet");
    copy_t(&ctx, &off, "").await;
    assert!(typed(&off).is_empty(), "{}", parquet_schema_text(&off));
    // ... which a given type still overrides
    let given_off = dir.join("given-off.parquet");
    copy_t(
        &ctx,
        &given_off,
        "OPTIONS ('variant.shred.v' 'struct<b string>')",
    )
    .await;
    assert_eq!(typed(&given_off), typed(&given));
    // every file reads back the same values
    for path in [&auto, &none, &given, &off, &given_off] {
        assert_eq!(
            classes(&read_back(path).await),
            classes(&values),
            "{}",
            path.display()
        );
    }
}

/// Each file of a partitioned COPY or an INSERT is shredded as its own rows say.
#[tokio::test]
async fn each_file_is_shredded_as_its_own_rows_say() {
    let dir = scratch("auto-partitioned");
    let ctx = session_context();
    ctx.sql(
        r#"CREATE TABLE src AS SELECT kind, parse_json(j) AS v FROM (VALUES
             ('x', '{"a":1}'), ('x', '{"a":2}'), ('y', '{"b":"one"}'), ('y', '{"b":"two"}')
           ) AS t(kind, j)"#,
    )
    .await
    .unwrap()
    .collect()
    .await
    .unwrap();
    let out = dir.join("by_kind");
    ctx.sql(&format!(
        "COPY src TO '{}/' STORED AS PARQUET PARTITIONED BY (kind)",
        out.display()
    ))
    .await
    .unwrap()
    .collect()
    .await
    .unwrap();
    let file_in = |sub: &str| {
        let d = out.join(sub);
        std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|e| e == "parquet"))
            .unwrap()
    };
    let x = parquet_schema_text(&file_in("kind=x"));
    let y = parquet_schema_text(&file_in("kind=y"));
    assert!(
        x.contains("OPTIONAL INT64 typed_value;") && !x.contains("(STRING)"),
        "{x}"
    );
    assert!(
        y.contains("OPTIONAL BYTE_ARRAY typed_value (STRING);") && !y.contains("INT64"),
        "{y}"
    );
    // INSERT into a Parquet table
    let table = dir.join("table");
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE ins (kind VARCHAR, v VARIANT) STORED AS PARQUET LOCATION '{}/'",
        table.display()
    ))
    .await
    .unwrap();
    ctx.sql("INSERT INTO ins SELECT kind, v FROM src WHERE kind = 'x'")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let file = std::fs::read_dir(&table)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    assert!(parquet_schema_text(&file).contains("OPTIONAL INT64 typed_value;"));
    let got = to_json_rows(&ctx, "SELECT to_json(v) FROM ins ORDER BY 1").await;
    assert_eq!(got, [r#"{"a":1}"#, r#"{"a":2}"#]);
}
