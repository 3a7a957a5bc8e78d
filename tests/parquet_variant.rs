//! Variant columns through DataFusion's Parquet data source (`datafusion_parquet_variant::parquet`):
//! reading (VARIANT-annotated and Spark-marked groups, whatever `skip_metadata` says), writing
//! (`COPY` annotates the group `VARIANT`), round trips, tables over directories and globs, the
//! per-file expression-adapter hook, the shredded conformance files through SQL, and the fixtures
//! of `sqllogictests/parquet_variant.slt`.
mod common;

use std::fs::File;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{
    assert_schema_lines, conformance_dir, parquet_schema_text, schema_text, scratch_dir,
    split_variant_file,
};
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BinaryArray, Int64Array, RecordBatch, StringArray, StructArray,
};
use datafusion::arrow::datatypes::{DataType, Field, Fields, Schema, SchemaRef};
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::common::Result;
use datafusion::physical_expr_adapter::{
    DefaultPhysicalExprAdapterFactory, PhysicalExprAdapter, PhysicalExprAdapterFactory,
};
use datafusion::prelude::SessionContext;
use datafusion_parquet_variant::codec::{
    JsonParser, SessionTimeZone, Variant, VariantBuilder, write_json,
};
use datafusion_parquet_variant::display::render_variants_as_json;
use datafusion_parquet_variant::parquet::variant_columns::SPARK_ROW_METADATA_KEY;
use datafusion_parquet_variant::parquet::{VariantParquetFormatFactory, register_parquet_table};
use datafusion_parquet_variant::variant_array::{
    VARIANT_EXTENSION_NAME, is_variant_field, variant_extension_metadata,
};
use datafusion_parquet_variant::{register_all, session_context};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_writer::ArrowWriterOptions;
use parquet::basic::LogicalType;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{FileReader, SerializedFileReader};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> common::TempPath {
    scratch_dir("parquet-variant-test", name)
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}

/// Our session with `FROM 'file.parquet'` enabled.
fn ctx() -> SessionContext {
    session_context().enable_url_table()
}

async fn run(ctx: &SessionContext, sql: &str) -> Result<Vec<RecordBatch>> {
    ctx.sql(sql).await?.collect().await
}

async fn query(ctx: &SessionContext, sql: &str) -> Vec<RecordBatch> {
    run(ctx, sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// `CREATE EXTERNAL TABLE name STORED AS PARQUET` over `file`.
async fn create_parquet_table(ctx: &SessionContext, name: &str, file: &std::path::Path) {
    let sql = format!(
        "CREATE EXTERNAL TABLE {name} STORED AS PARQUET LOCATION '{}'",
        path_str(file)
    );
    query(ctx, &sql).await;
}

/// The output schema of `sql` as planned (the DataFrame's schema).
async fn planned_schema(ctx: &SessionContext, sql: &str) -> Schema {
    let df = ctx.sql(sql).await.unwrap();
    df.schema().as_arrow().clone()
}

/// The rows of `batches` as text, variants as JSON, one `|`-joined line per row.
fn rows(batches: &[RecordBatch]) -> Vec<String> {
    let mut out = vec![];
    for batch in batches {
        let batch = render_variants_as_json(batch, None).unwrap();
        for i in 0..batch.num_rows() {
            let cells: Vec<String> = batch
                .columns()
                .iter()
                .map(|c| {
                    if c.is_null(i) {
                        return "NULL".to_string();
                    }
                    let c = datafusion::arrow::compute::cast(c, &DataType::Utf8).unwrap();
                    c.as_string::<i32>().value(i).to_string()
                })
                .collect();
            out.push(cells.join("|"));
        }
    }
    out
}

/// The logical type of top-level column `name` of the Parquet file at `path`.
fn parquet_logical_type(path: &Path, name: &str) -> Option<LogicalType> {
    let reader = SerializedFileReader::new(File::open(path).unwrap()).unwrap();
    let schema = reader.metadata().file_metadata().schema_descr_ptr();
    let field = schema
        .root_schema()
        .get_fields()
        .iter()
        .find(|f| f.name() == name)
        .unwrap_or_else(|| panic!("no column {name} in {}", path.display()))
        .clone();
    field.get_basic_info().logical_type_ref().cloned()
}

fn assert_variant(schema: &Schema, name: &str) {
    let field = schema.field_with_name(name).unwrap();
    assert!(
        is_variant_field(field),
        "{name} should carry {VARIANT_EXTENSION_NAME}: {field:?}"
    );
}

fn assert_not_variant(schema: &Schema, name: &str) {
    let field = schema.field_with_name(name).unwrap();
    assert!(
        !is_variant_field(field),
        "{name} should be plain: {field:?}"
    );
}

fn encode(json: &str) -> (Vec<u8>, Vec<u8>) {
    let mut b = VariantBuilder::new();
    JsonParser::new().parse(json, &mut b).unwrap();
    (b.metadata().to_vec(), b.value().to_vec())
}

/// A struct of two binary columns in the given order (Spark writes `value` first).
fn binary_struct(names: [&str; 2], docs: &[Option<&str>]) -> StructArray {
    // rows that are SQL NULL hold empty bytes under the null struct
    let (metadata, value): (Vec<_>, Vec<_>) = docs
        .iter()
        .map(|d| d.map(encode).unwrap_or_default())
        .unzip();
    let metadata: ArrayRef = Arc::new(BinaryArray::from_iter_values(metadata));
    let value: ArrayRef = Arc::new(BinaryArray::from_iter_values(value));
    let children = match names {
        ["value", "metadata"] => vec![value, metadata],
        _ => vec![metadata, value],
    };
    let fields = Fields::from(
        names
            .iter()
            .map(|n| Field::new(*n, DataType::Binary, false))
            .collect::<Vec<_>>(),
    );
    let nulls = docs.iter().map(Option::is_some).collect::<Vec<_>>();
    StructArray::new(fields, children, Some(nulls.into()))
}

/// Writes a Parquet file the way Spark 4.0 does: variant columns as unannotated groups
/// `{value, metadata}`, marked only by Spark's schema in the key-value metadata; no Arrow schema.
/// `extra` adds a column `s` of the same shape that Spark's schema does not call a variant.
fn write_spark_file(path: &Path, docs: &[Option<&str>], extra: bool) {
    let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(1..=docs.len() as i64));
    let v = binary_struct(["value", "metadata"], docs);
    let mut fields = vec![
        Field::new("id", DataType::Int64, false),
        Field::new("v", v.data_type().clone(), true),
    ];
    let mut columns: Vec<ArrayRef> = vec![ids, Arc::new(v.clone())];
    if extra {
        fields.push(Field::new("s", v.data_type().clone(), true));
        columns.push(Arc::new(v));
    }
    let schema = Arc::new(Schema::new(fields));
    let batch = RecordBatch::try_new(Arc::clone(&schema), columns).unwrap();
    let mut spark_fields = vec![
        r#"{"name":"id","type":"long","nullable":false,"metadata":{}}"#,
        r#"{"name":"v","type":"variant","nullable":true,"metadata":{}}"#,
    ];
    if extra {
        spark_fields.push(
            r#"{"name":"s","type":{"type":"struct","fields":[{"name":"value","type":"binary","nullable":false,"metadata":{}},{"name":"metadata","type":"binary","nullable":false,"metadata":{}}]},"nullable":true,"metadata":{}}"#,
        );
    }
    let spark_schema = format!(
        r#"{{"type":"struct","fields":[{}]}}"#,
        spark_fields.join(",")
    );
    let props = WriterProperties::builder()
        .set_key_value_metadata(Some(vec![
            KeyValue::new(SPARK_ROW_METADATA_KEY.to_string(), spark_schema),
            KeyValue::new("org.apache.spark.version".to_string(), "4.0.0".to_string()),
        ]))
        .build();
    let options = ArrowWriterOptions::new()
        .with_properties(props)
        .with_skip_arrow_metadata(true);
    let mut writer =
        ArrowWriter::try_new_with_options(File::create(path).unwrap(), schema, options).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
}

/// Writes an annotated, shredded file: `v` shredded as `{a: bigint, b: string}` by arrow-rs
/// `shred_variant` (rows that do not fit go to `value`), plus an `id` column.
fn write_shredded_file(path: &Path, docs: &[Option<&str>]) {
    use parquet_variant_compute::{json_to_variant, shred_variant};
    let json: ArrayRef = Arc::new(StringArray::from(docs.to_vec()));
    let variants = json_to_variant(&json).unwrap();
    let shredded_type = DataType::Struct(Fields::from(vec![
        Field::new("a", DataType::Int64, true),
        Field::new("b", DataType::Utf8, true),
    ]));
    let shredded = shred_variant(&variants, &shredded_type).unwrap();
    let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(1..=docs.len() as i64));
    let v_field = shredded.field("v");
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        v_field,
    ]));
    let v: ArrayRef = Arc::new(shredded.into_inner());
    let batch = RecordBatch::try_new(Arc::clone(&schema), vec![ids, v]).unwrap();
    let mut writer = ArrowWriter::try_new(File::create(path).unwrap(), schema, None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
}

// ---------------------------------------------------------------------------------------------
// Writing and reading back
// ---------------------------------------------------------------------------------------------

/// Documents covering every JSON shape and Spark's number rules.
const DOCS: &[&str] = &[
    r#"{"user":{"id":7,"name":"ada"},"tags":["a","b"],"price":12.50}"#,
    r#"{"z":1,"a":[true,false,null],"m":{"deep":{"deeper":[{"x":-1}]}}}"#,
    r#"[1, 2.5, 1e3, "three", null, {"k": "v"}]"#,
    r#""a string with \"quotes\", \\ and \u00e9 and 😀""#,
    "12345678901234567890",
    "-0.0",
    "3.141592653589793238462643383279",
    "null",
    "true",
    "{}",
    "[]",
];

/// `(id, json)` rows as a `VALUES` list, plus one SQL NULL.
fn docs_values() -> String {
    let mut rows: Vec<String> = DOCS
        .iter()
        .enumerate()
        .map(|(i, d)| format!("({}, '{}')", i + 1, d.replace('\'', "''")))
        .collect();
    rows.push(format!("({}, NULL)", DOCS.len() + 1));
    rows.join(", ")
}

#[tokio::test]
async fn copy_writes_a_variant_annotated_group() {
    let dir = scratch("copy-annotated");
    let file = dir.join("out.parquet");
    let ctx = ctx();
    query(
        &ctx,
        &format!(
            "COPY (SELECT 1 AS id, parse_json('{{\"a\":1}}') AS v, named_struct('x', 1) AS s) \
             TO '{}' STORED AS PARQUET",
            path_str(&file)
        ),
    )
    .await;
    // specification version 1: Spark 4.3 rejects a VARIANT group without it (checked by hand
    // with pyspark 4.3.0: "Unrecognized Parquet type: .. (VARIANT(0))")
    assert_eq!(
        parquet_logical_type(&file, "v"),
        Some(LogicalType::variant(Some(1))),
        "{}",
        parquet_schema_text(&file)
    );
    assert_eq!(parquet_logical_type(&file, "s"), None);
    assert_eq!(parquet_logical_type(&file, "id"), None);
}

/// Variants inside structs, lists and maps, built by `named_struct`, `make_array` and `map`
/// (which drop the extension on the fields they make), are written as VARIANT groups and read
/// back as variants.
#[tokio::test]
async fn nested_variants_are_annotated() {
    let dir = scratch("copy-nested-variants");
    let file = dir.join("out.parquet");
    let ctx = ctx();
    query(
        &ctx,
        &format!(
            "COPY (SELECT id, named_struct('a', id, 'v', parse_json(j)) AS s, \
                    make_array(parse_json(j), parse_json('[1]')) AS arr, \
                    map(['k'], [parse_json(j)]) AS m, \
                    named_struct('metadata', X'01', 'other', X'02') AS not_variant \
             FROM (VALUES (1, '{{\"x\":1}}'), (2, 'null')) t(id, j)) \
             TO '{}' STORED AS PARQUET",
            path_str(&file)
        ),
    )
    .await;
    // s.v, the list's element and the map's value; not the struct without the variant layout
    let text = parquet_schema_text(&file);
    assert_eq!(text.matches("(VARIANT(Some(1)))").count(), 3, "{text}");
    let df = ctx
        .sql(&format!("SELECT * FROM '{}'", path_str(&file)))
        .await
        .unwrap();
    let schema = df.schema().as_arrow().clone();
    let DataType::Struct(s) = schema.field_with_name("s").unwrap().data_type() else {
        panic!("{schema:?}");
    };
    assert!(is_variant_field(s.find("v").unwrap().1), "{schema:?}");
    let batches = query(
        &ctx,
        &format!(
            "SELECT id, to_json(s['v']), to_json(arr[1]), to_json(arr[2]), to_json(m['k']), \
                    variant_get(s['v'], '$.x', 'int') FROM '{}' ORDER BY id",
            path_str(&file)
        ),
    )
    .await;
    assert_eq!(
        rows(&batches),
        [
            r#"1|{"x":1}|{"x":1}|[1]|{"x":1}|1"#,
            "2|null|null|[1]|null|NULL"
        ]
    );
}

/// A partitioned COPY (the partition column left out of the files) annotates variant columns the
/// same way.
#[tokio::test]
async fn partitioned_copies_are_annotated() {
    let dir = scratch("copy-nested");
    let ctx = ctx();
    query(
        &ctx,
        &format!(
            "COPY (SELECT k, parse_json('[1]') AS v, parse_json('2') AS w FROM (VALUES (1), (2)) t(k)) TO '{}' STORED AS PARQUET PARTITIONED BY (k)",
            path_str(&dir)
        ),
    )
    .await;
    let mut files = vec![];
    for part in std::fs::read_dir(&dir).unwrap() {
        for f in std::fs::read_dir(part.unwrap().path()).unwrap() {
            files.push(f.unwrap().path());
        }
    }
    assert_eq!(files.len(), 2, "{files:?}");
    for file in &files {
        let text = parquet_schema_text(file);
        assert_eq!(text.matches("(VARIANT(Some(1)))").count(), 2, "{text}");
        assert!(!text.contains(" k;"), "{text}");
    }
    let rows = rows(
        &query(
            &ctx,
            &format!(
                "SELECT k, to_json(v), to_json(w) FROM '{}' ORDER BY k",
                path_str(&dir)
            ),
        )
        .await,
    );
    assert_eq!(rows, ["1|[1]|2", "2|[1]|2"]);
}

/// Expressions that return plain fields (CASE, coalesce, nullif) drop the variant extension; the
/// columns are still written as VARIANT groups, and read back as variants.
#[tokio::test]
async fn variants_from_case_and_coalesce_are_still_annotated() {
    let dir = scratch("copy-case-coalesce");
    let file = dir.join("out.parquet");
    let ctx = ctx();
    query(
        &ctx,
        &format!(
            "COPY (SELECT column1 AS id, \
                    coalesce(try_parse_json(column2), parse_json('null')) AS c, \
                    CASE WHEN column1 = 1 THEN parse_json('[1]') ELSE try_parse_json(column2) END AS w, \
                    named_struct('metadata', X'01', 'other', X'02') AS s \
             FROM (VALUES (1, '{{\"a\":1}}'), (2, 'oops'))) \
             TO '{}' STORED AS PARQUET",
            path_str(&file)
        ),
    )
    .await;
    for column in ["c", "w"] {
        assert!(
            matches!(
                parquet_logical_type(&file, column),
                Some(LogicalType::Variant { .. })
            ),
            "{column}: {}",
            parquet_schema_text(&file)
        );
    }
    // a struct without the variant layout stays a plain group
    assert_eq!(parquet_logical_type(&file, "s"), None);
    let batches = query(
        &ctx,
        &format!(
            "SELECT id, to_json(c), to_json(w) FROM '{}' ORDER BY id",
            path_str(&file)
        ),
    )
    .await;
    assert_eq!(
        rows(&batches),
        vec!["1|{\"a\":1}|[1]".to_string(), "2|null|NULL".to_string()]
    );
}

#[tokio::test]
async fn json_round_trips_through_parquet_unchanged() {
    let dir = scratch("round-trip");
    let file = dir.join("docs.parquet");
    let ctx = ctx();
    let source = format!(
        "SELECT id, parse_json(j) AS v FROM (VALUES {}) AS t(id, j)",
        docs_values()
    );
    let expected = rows(
        &query(
            &ctx,
            &format!("SELECT id, to_json(v) FROM ({source}) ORDER BY id"),
        )
        .await,
    );
    assert_eq!(expected.len(), DOCS.len() + 1);
    assert_eq!(
        expected[0],
        r#"1|{"price":12.5,"tags":["a","b"],"user":{"id":7,"name":"ada"}}"#
    );
    assert_eq!(expected[DOCS.len()], format!("{}|NULL", DOCS.len() + 1));

    query(
        &ctx,
        &format!("COPY ({source}) TO '{}' STORED AS PARQUET", path_str(&file)),
    )
    .await;
    assert!(matches!(
        parquet_logical_type(&file, "v"),
        Some(LogicalType::Variant { .. })
    ));

    let read_back = format!(
        "SELECT id, to_json(v) FROM '{}' ORDER BY id",
        path_str(&file)
    );
    assert_eq!(rows(&query(&ctx, &read_back).await), expected);

    // the read-back field has the extension: in the plan, and in every scan output batch
    let select_v = format!("SELECT v FROM '{}'", path_str(&file));
    assert_variant(&planned_schema(&ctx, &select_v).await, "v");
    let batches = query(&ctx, &select_v).await;
    assert!(!batches.is_empty());
    for batch in &batches {
        assert_variant(&batch.schema(), "v");
    }
    // and the functions see a variant: v:path and variant_get on the read-back column
    let get = format!(
        "SELECT v:user.name, variant_get(v, '$.user.id', 'int') FROM '{}' WHERE id = 1",
        path_str(&file)
    );
    assert_eq!(rows(&query(&ctx, &get).await), vec!["\"ada\"|7"]);
}

#[tokio::test]
async fn skip_metadata_setting_does_not_matter() {
    let dir = scratch("skip-metadata");
    let file = dir.join("one.parquet");
    let ctx = ctx();
    query(
        &ctx,
        &format!(
            "COPY (SELECT 1 AS id, parse_json('[1]') AS v) TO '{}' STORED AS PARQUET",
            path_str(&file)
        ),
    )
    .await;
    for skip in ["true", "false"] {
        query(
            &ctx,
            &format!("SET datafusion.execution.parquet.skip_metadata = {skip}"),
        )
        .await;
        let schema = planned_schema(&ctx, &format!("SELECT * FROM '{}'", path_str(&file))).await;
        assert_variant(&schema, "v");
        assert_not_variant(&schema, "id");
        // per-table options as well
        let table = format!("t_{skip}");
        query(
            &ctx,
            &format!(
                "CREATE EXTERNAL TABLE {table} STORED AS PARQUET LOCATION '{}' \
                 OPTIONS ('format.skip_metadata' '{skip}')",
                path_str(&file)
            ),
        )
        .await;
        assert_variant(
            &planned_schema(&ctx, &format!("SELECT * FROM {table}")).await,
            "v",
        );
    }
}

#[tokio::test]
async fn spark_marked_groups_are_variants() {
    let dir = scratch("spark");
    let file = dir.join("spark.parquet");
    write_spark_file(
        &file,
        &[Some(r#"{"b":1,"a":[2]}"#), None, Some("\"x\"")],
        true,
    );
    assert_eq!(
        parquet_logical_type(&file, "v"),
        None,
        "the fixture must not be annotated"
    );

    let ctx = ctx();
    let sql = format!("SELECT id, v, s FROM '{}' ORDER BY id", path_str(&file));
    let schema = planned_schema(&ctx, &sql).await;
    assert_variant(&schema, "v");
    // the same shape without Spark's mark stays a plain struct
    assert_not_variant(&schema, "s");
    let batches = query(&ctx, &sql).await;
    assert_variant(&batches[0].schema(), "v");
    let json = format!(
        "SELECT id, to_json(v), v:a[0] FROM '{}' ORDER BY id",
        path_str(&file)
    );
    assert_eq!(
        rows(&query(&ctx, &json).await),
        vec![r#"1|{"a":[2],"b":1}|2"#, "2|NULL|NULL", r#"3|"x"|NULL"#]
    );
}

#[tokio::test]
async fn directories_globs_tables_and_register_parquet_table() {
    let dir = scratch("dirs");
    let table_dir = dir.join("events");
    std::fs::create_dir_all(&table_dir).unwrap();
    let ctx = ctx();
    for part in 1..=2 {
        let file = table_dir.join(format!("part-{part}.parquet"));
        query(
            &ctx,
            &format!(
                "COPY (SELECT {part} AS id, parse_json('{{\"part\":{part}}}') AS v) \
                 TO '{}' STORED AS PARQUET",
                path_str(&file)
            ),
        )
        .await;
    }
    let dir_url = format!("{}/", path_str(&table_dir));
    let glob = format!("{}/part-*.parquet", path_str(&table_dir));
    let expected = vec!["1|1", "2|2"];

    for location in [&dir_url, &glob] {
        let sql = format!("SELECT id, v:part FROM '{location}' ORDER BY id");
        assert_eq!(rows(&query(&ctx, &sql).await), expected, "{location}");
        let schema = planned_schema(&ctx, &format!("SELECT * FROM '{location}'")).await;
        assert_variant(&schema, "v");
    }

    query(
        &ctx,
        &format!("CREATE EXTERNAL TABLE ev STORED AS PARQUET LOCATION '{dir_url}'"),
    )
    .await;
    assert_variant(&planned_schema(&ctx, "SELECT * FROM ev").await, "v");
    assert_eq!(
        rows(&query(&ctx, "SELECT id, v:part FROM ev ORDER BY id").await),
        expected
    );

    // the one-call Rust API, on a session without url tables
    let plain = session_context();
    register_parquet_table(&plain, "ev_dir", &dir_url)
        .await
        .unwrap();
    register_parquet_table(&plain, "ev_glob", &glob)
        .await
        .unwrap();
    register_parquet_table(
        &plain,
        "ev_file",
        path_str(&table_dir.join("part-2.parquet")),
    )
    .await
    .unwrap();
    for (table, expected) in [
        ("ev_dir", &expected[..]),
        ("ev_glob", &expected[..]),
        ("ev_file", &expected[1..]),
    ] {
        let sql = format!("SELECT id, v:part FROM {table} ORDER BY id");
        assert_eq!(rows(&query(&plain, &sql).await), expected, "{table}");
        let table = plain.table(table).await.unwrap();
        assert_variant(table.schema().as_arrow(), "v");
    }
}

#[tokio::test]
async fn register_all_installs_the_format_on_an_existing_context() {
    let dir = scratch("register-all");
    let file = dir.join("x.parquet");
    let ctx = SessionContext::new();
    register_all(&ctx).unwrap();
    query(
        &ctx,
        &format!(
            "COPY (SELECT parse_json('{{\"k\":[1,2]}}') AS v) TO '{}' STORED AS PARQUET",
            path_str(&file)
        ),
    )
    .await;
    assert!(matches!(
        parquet_logical_type(&file, "v"),
        Some(LogicalType::Variant { .. })
    ));
    create_parquet_table(&ctx, "x", &file).await;
    assert_variant(&planned_schema(&ctx, "SELECT v FROM x").await, "v");
    assert_eq!(
        rows(&query(&ctx, "SELECT to_json(v) FROM x").await),
        vec![r#"{"k":[1,2]}"#]
    );
    // the physical rule that computes whole-value reads of a filter in the scan, which a state
    // takes only when built: register_all builds the context's state again with it
    let filter_rule = "variant_whole_value_filters_into_scan";
    let rules = ctx.state().physical_optimizers().to_vec();
    assert_eq!(rules.iter().filter(|r| r.name() == filter_rule).count(), 1);
    // a second call installs nothing twice
    register_all(&ctx).unwrap();
    let rules = ctx.state().physical_optimizers().to_vec();
    assert_eq!(rules.iter().filter(|r| r.name() == filter_rule).count(), 1);
    let count = "SELECT count(*) FROM x WHERE is_valid_variant(v)";
    assert_eq!(rows(&query(&ctx, count).await), vec!["1"]);
    let built = session_context();
    let rules = built.state().physical_optimizers().to_vec();
    assert_eq!(rules.iter().filter(|r| r.name() == filter_rule).count(), 1);
    create_parquet_table(&built, "x", &file).await;
    let plan = rows(&query(&built, &format!("EXPLAIN {count}")).await);
    let moved = "projection=[is_valid_variant(v@0) as __variant_whole_value_0]";
    assert!(plan.iter().any(|line| line.contains(moved)), "{plan:?}");
    assert_eq!(rows(&query(&built, count).await), vec!["1"]);
}

/// Whole-value reads under a CASE stay where they are written: the CASE computes its branch only
/// for the rows that reach it, so a guard keeps a corrupt value (row 2's object claims 5 fields
/// and has no bytes for them) away from `to_json`, in a filter and in an aggregate over the scan.
/// (A Rust test: the plan round trip of the slt suite writes such bytes differently.)
#[tokio::test]
async fn a_case_guard_keeps_rows_away_from_whole_value_reads() {
    let dir = scratch("case-guard");
    let file = dir.join("guarded.parquet");
    let ctx = session_context();
    let copy = format!(
        "COPY (SELECT id, v FROM (VALUES \
           (1, named_struct('metadata', X'010000', 'value', X'0C05')), \
           (2, named_struct('metadata', X'010000', 'value', X'0205'))) AS t(id, v)) \
         TO '{}' STORED AS PARQUET OPTIONS ('variant.shred.v' 'none')",
        path_str(&file)
    );
    query(&ctx, &copy).await;
    create_parquet_table(&ctx, "guarded", &file).await;
    let valid = "SELECT id, is_valid_variant(v) FROM guarded ORDER BY id";
    assert_eq!(rows(&query(&ctx, valid).await), ["1|true", "2|false"]);
    let unguarded = "SELECT count(*) FROM guarded WHERE to_json(v) = '5'";
    let err = run(&ctx, unguarded).await.unwrap_err().to_string();
    assert!(err.contains("to_json: malformed variant"), "{err}");
    for guarded in [
        "SELECT count(*) FROM guarded WHERE CASE WHEN is_valid_variant(v) THEN to_json(v) END = '5'",
        "SELECT sum(CASE WHEN is_valid_variant(v) THEN length(to_json(v)) END) FROM guarded",
    ] {
        assert_eq!(rows(&query(&ctx, guarded).await), ["1"], "{guarded}");
    }
}

#[tokio::test]
async fn insert_into_a_variant_table_writes_annotated_files() {
    let dir = scratch("insert");
    let table_dir = dir.join("t");
    std::fs::create_dir_all(&table_dir).unwrap();
    let ctx = ctx();
    query(
        &ctx,
        &format!(
            "CREATE EXTERNAL TABLE t (id BIGINT, v VARIANT) STORED AS PARQUET LOCATION '{}/'",
            path_str(&table_dir)
        ),
    )
    .await;
    query(&ctx, "INSERT INTO t SELECT 1, parse_json('{\"x\":[1]}')").await;
    let files: Vec<_> = std::fs::read_dir(&table_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1);
    assert!(matches!(
        parquet_logical_type(&files[0], "v"),
        Some(LogicalType::Variant { .. })
    ));
    assert_eq!(
        rows(&query(&ctx, "SELECT id, v:x[0] FROM t").await),
        vec!["1|1"]
    );
}

/// The extension survives a merge of files whose other metadata conflicts (the reason DataFusion
/// skips metadata by default): one file per inference then.
#[tokio::test]
async fn files_with_conflicting_metadata_still_give_variants() {
    let dir = scratch("conflict");
    let table_dir = dir.join("t");
    std::fs::create_dir_all(&table_dir).unwrap();
    for (i, version) in ["3.5.0", "4.0.0"].iter().enumerate() {
        let v = binary_struct(["metadata", "value"], &[Some("1")]);
        let field = Field::new("v", v.data_type().clone(), true)
            .with_metadata(variant_extension_metadata());
        let schema = Arc::new(Schema::new(vec![field]));
        let batch = RecordBatch::try_new(Arc::clone(&schema), vec![Arc::new(v)]).unwrap();
        let props = WriterProperties::builder()
            .set_key_value_metadata(Some(vec![KeyValue::new(
                "writer.version".to_string(),
                version.to_string(),
            )]))
            .build();
        let file = table_dir.join(format!("{i}.parquet"));
        let mut writer =
            ArrowWriter::try_new(File::create(&file).unwrap(), schema, Some(props)).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        assert!(matches!(
            parquet_logical_type(&file, "v"),
            Some(LogicalType::Variant { .. })
        ));
    }
    let ctx = ctx();
    let location = format!("{}/", path_str(&table_dir));
    query(
        &ctx,
        "SET datafusion.execution.parquet.skip_metadata = false",
    )
    .await;
    assert!(
        run(&ctx, &format!("SELECT * FROM '{location}'"))
            .await
            .is_err(),
        "DataFusion itself cannot merge these files' metadata"
    );
    query(
        &ctx,
        "SET datafusion.execution.parquet.skip_metadata = true",
    )
    .await;
    let schema = planned_schema(&ctx, &format!("SELECT * FROM '{location}'")).await;
    assert_variant(&schema, "v");
    assert_eq!(
        rows(&query(&ctx, &format!("SELECT to_json(v) FROM '{location}'")).await),
        vec!["1", "1"]
    );
}

// ---------------------------------------------------------------------------------------------
// The per-file expression adapter hook
// ---------------------------------------------------------------------------------------------

/// DataFusion's default adapter, counting the files it is created for.
#[derive(Debug, Default)]
struct CountingAdapterFactory {
    files: AtomicUsize,
}

impl PhysicalExprAdapterFactory for CountingAdapterFactory {
    fn create(
        &self,
        logical_file_schema: SchemaRef,
        physical_file_schema: SchemaRef,
    ) -> Result<Arc<dyn PhysicalExprAdapter>> {
        // the logical schema has the extension; the physical one is the file's own
        assert!(is_variant_field(logical_file_schema.field_with_name("v")?));
        assert!(physical_file_schema.field_with_name("v").is_ok());
        self.files.fetch_add(1, Ordering::SeqCst);
        DefaultPhysicalExprAdapterFactory.create(logical_file_schema, physical_file_schema)
    }
}

#[tokio::test]
async fn expr_adapter_factory_sees_every_file() {
    let dir = scratch("adapter");
    let table_dir = dir.join("t");
    std::fs::create_dir_all(&table_dir).unwrap();
    let ctx = ctx();
    for part in 1..=3 {
        query(
            &ctx,
            &format!(
                "COPY (SELECT {part} AS id, parse_json('{part}') AS v) TO '{}' STORED AS PARQUET",
                path_str(&table_dir.join(format!("{part}.parquet")))
            ),
        )
        .await;
    }
    let counting = Arc::new(CountingAdapterFactory::default());
    let factory = VariantParquetFormatFactory::new()
        .with_expr_adapter_factory(Some(Arc::clone(&counting) as _));
    ctx.state_ref()
        .write()
        .register_file_format(Arc::new(factory), true)
        .unwrap();
    // DataFusion's Parquet opener asks for an adapter only when the scan has a predicate or the
    // file's schema differs from the table's; `id > 0` gives the scan a (pruning) predicate.
    let sql = format!(
        "SELECT sum(variant_get(v, '$', 'int')) FROM '{}/' WHERE id > 0",
        path_str(&table_dir)
    );
    assert_eq!(rows(&query(&ctx, &sql).await), vec!["6"]);
    assert_eq!(counting.files.load(Ordering::SeqCst), 3);
}

// ---------------------------------------------------------------------------------------------
// Shredded conformance files through SQL
// ---------------------------------------------------------------------------------------------

/// `SELECT to_json(var) FROM '<file>' ORDER BY id` as text rows, or the error.
async fn conformance_rows(ctx: &SessionContext, dir: &Path, file: &str) -> Result<Vec<String>> {
    let path = dir.join(file);
    let sql = format!("SELECT to_json(var) FROM '{}' ORDER BY id", path_str(&path));
    Ok(rows(&run(ctx, &sql).await?))
}

#[tokio::test]
async fn shredded_conformance_cases_through_sql() {
    let dir = conformance_dir("shredded_variant");
    let ctx = ctx();
    let cases: &[(&str, &[&str])] = &[
        ("case-001.parquet", &[r#"["comedy","drama"]"#]),
        ("case-004.parquet", &["true"]),
        ("case-010.parquet", &["12345"]),
        ("case-041.parquet", &[r#"["comedy","drama"]"#]),
        // not valid per the spec; the shredded column is authoritative
        ("case-043-INVALID.parquet", &[r#"{"a":null}"#]),
        (
            "case-044.parquet",
            &[r#"{"c":{"a":34,"b":"iceberg"},"d":-0.0}"#],
        ),
        (
            "case-045.parquet",
            &[
                r#"["comedy","drama"]"#,
                "34",
                r#"{"a":null,"d":"iceberg"}"#,
                r#"["action","horror"]"#,
            ],
        ),
    ];
    for (file, expected) in cases {
        let got = conformance_rows(&ctx, &dir, file)
            .await
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(got, *expected, "{file}");
        let schema = planned_schema(
            &ctx,
            &format!("SELECT var FROM '{}'", path_str(&dir.join(file))),
        )
        .await;
        assert_variant(&schema, "var");
    }
    // testValueAndTypedValueConflict
    let err = conformance_rows(&ctx, &dir, "case-042.parquet")
        .await
        .expect_err("case 42 must fail");
    assert!(
        err.to_string()
            .contains("conflicting value and typed_value"),
        "{err}"
    );
}

/// Every case of `cases.json` through SQL: the JSON of each row equals the JSON of the expected
/// variant file; error cases fail (and never panic).
#[tokio::test]
async fn every_shredded_conformance_case_through_sql() {
    let dir = conformance_dir("shredded_variant");
    let cases: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("cases.json")).unwrap()).unwrap();
    let ctx = ctx();
    let mut failures = vec![];
    let mut checked = 0;
    for case in cases.as_array().unwrap() {
        let Some(file) = case["parquet_file"].as_str() else {
            continue;
        };
        let got = conformance_rows(&ctx, &dir, file).await;
        if case.get("error_message").is_some() {
            if let Ok(rows) = got {
                failures.push(format!("{file}: expected an error, got {rows:?}"));
            }
            checked += 1;
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
        let expected: Vec<String> = expected_files
            .iter()
            .map(|f| match f {
                None => "NULL".to_string(),
                Some(f) => {
                    let bytes = std::fs::read(dir.join(f)).unwrap();
                    let (m, v) = split_variant_file(&bytes);
                    let mut out = vec![];
                    write_json(
                        &mut out,
                        Variant::try_new(m, v).unwrap(),
                        &SessionTimeZone::utc(),
                    )
                    .unwrap();
                    String::from_utf8(out).unwrap()
                }
            })
            .collect();
        match got {
            Ok(rows) if rows == expected => {}
            Ok(rows) => failures.push(format!("{file}: got {rows:?}, expected {expected:?}")),
            Err(e) => failures.push(format!("{file}: {e}")),
        }
        checked += 1;
    }
    assert!(checked >= 137, "only {checked} cases found");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// Fixtures of sqllogictests/parquet_variant.slt
// ---------------------------------------------------------------------------------------------

const FIXTURE_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/sqllogictests/data");

/// `variant_events.parquet`: written by our `COPY`; `id`, `kind`, `v` (objects, an array, a
/// string, a double, and a SQL NULL).
const EVENTS_SQL: &str = r#"SELECT id, kind, parse_json(j) AS v FROM (VALUES
  (1, 'click', '{"user":{"id":7,"name":"ada"},"tags":["a","b"],"price":12.50}'),
  (2, 'view', '{"user":{"id":8,"name":"bob"},"tags":[],"price":null}'),
  (3, 'click', '[1,2,3]'),
  (4, 'noop', '"just a string"'),
  (5, 'noop', NULL),
  (6, 'view', '{"user":{"id":9},"price":3.5e2}')
) AS t(id, kind, j) ORDER BY id"#;

/// `variant_spark.parquet`: Spark 4.0 style (unannotated `{value, metadata}` group marked only in
/// Spark's schema metadata).
const SPARK_DOCS: &[Option<&str>] = &[Some(r#"{"b":1,"a":[2]}"#), None, Some("\"x\"")];

/// `variant_shredded.parquet`: annotated and shredded as `{a: bigint, b: string}`.
const SHREDDED_DOCS: &[Option<&str>] = &[
    Some(r#"{"a":1,"b":"x"}"#),
    Some(r#"{"a":2,"c":true}"#),
    Some(r#"{"a":"str","b":"y"}"#),
    Some("42"),
    None,
];

async fn write_fixtures(dir: &Path) {
    let ctx = ctx();
    let events = dir.join("variant_events.parquet");
    query(
        &ctx,
        &format!(
            // (unshredded: the shredded fixture is the next one)
            "COPY ({EVENTS_SQL}) TO '{}' STORED AS PARQUET OPTIONS ('variant.shred.v' 'none')",
            path_str(&events)
        ),
    )
    .await;
    write_spark_file(&dir.join("variant_spark.parquet"), SPARK_DOCS, false);
    write_shredded_file(&dir.join("variant_shredded.parquet"), SHREDDED_DOCS);
}

const FIXTURES: [&str; 3] = [
    "variant_events.parquet",
    "variant_spark.parquet",
    "variant_shredded.parquet",
];

/// What a fixture holds: its Parquet schema and its rows (variants as JSON).
async fn fixture_content(path: &Path) -> String {
    let ctx = ctx();
    let batches = query(
        &ctx,
        &format!("SELECT * FROM '{}' ORDER BY id", path_str(path)),
    )
    .await;
    let rendered: Vec<_> = batches
        .iter()
        .map(|b| render_variants_as_json(b, None).unwrap())
        .collect();
    format!(
        "{}\n{}",
        parquet_schema_text(path),
        pretty_format_batches(&rendered).unwrap()
    )
}

/// The fixtures are what the generator writes (schema and rows); `UPDATE_FIXTURES=1` (or a missing
/// fixture outside CI) rewrites them. They stay small.
#[tokio::test]
async fn slt_fixtures_are_current() {
    let fixture_dir = Path::new(FIXTURE_DIR);
    let update = std::env::var_os("UPDATE_FIXTURES").is_some()
        || (std::env::var_os("CI").is_none()
            && FIXTURES.iter().any(|f| !fixture_dir.join(f).is_file()));
    if update {
        std::fs::create_dir_all(fixture_dir).unwrap();
        write_fixtures(fixture_dir).await;
    }
    let fresh = scratch("fixtures");
    write_fixtures(&fresh).await;
    let mut total = 0;
    for name in FIXTURES {
        let committed = fixture_dir.join(name);
        assert!(
            committed.is_file(),
            "missing fixture {}",
            committed.display()
        );
        total += std::fs::metadata(&committed).unwrap().len();
        assert_eq!(
            fixture_content(&committed).await,
            fixture_content(&fresh.join(name)).await,
            "{name} is stale: rerun with UPDATE_FIXTURES=1"
        );
    }
    assert!(total < 50_000, "fixtures take {total} bytes");
    assert!(matches!(
        parquet_logical_type(&fixture_dir.join("variant_events.parquet"), "v"),
        Some(LogicalType::Variant { .. })
    ));
    assert!(matches!(
        parquet_logical_type(&fixture_dir.join("variant_shredded.parquet"), "v"),
        Some(LogicalType::Variant { .. })
    ));
    assert_eq!(
        parquet_logical_type(&fixture_dir.join("variant_spark.parquet"), "v"),
        None
    );
}

/// An encrypted write (DataFusion's encryption options) goes through our sink like a plain one:
/// top-level and nested variants are VARIANT groups of specification version 1 (which Spark
/// requires; the parquet crate alone writes none), intervals INTERVAL leaves, and the file reads
/// back with the key (not without), its variants as they were written. Its intervals, which
/// DataFusion's reader (the only one that decrypts) would read without their months, are an
/// error, not a wrong value: also a field beside one in a struct (the struct is read whole).
#[tokio::test]
async fn encrypted_writes_annotate_variants_with_the_spec_version() {
    const KEY: &str = "30313233343536373839303132333435"; // b"0123456789012345"
    let dir = scratch_dir("parquet-variant-test", "encrypted");
    let path = dir.join("e.parquet");
    let ctx = session_context();
    let sql = format!(
        "COPY (SELECT 1 AS id, parse_json('{{\"a\": [1, 2]}}') AS v, \
         named_struct('v', parse_json('\"x\"'), 'iv', INTERVAL '1 month') AS s, \
         INTERVAL '2 months' AS iv, named_struct('v', parse_json('\"x\"')) AS s2) \
         TO '{}' STORED AS PARQUET OPTIONS (\
         'format.crypto.file_encryption.encrypt_footer' 'true', \
         'format.crypto.file_encryption.footer_key_as_hex' '{KEY}', \
         'variant.shred.s.v' 'string', 'variant.shred.s2.v' 'string')",
        path.display()
    );
    ctx.sql(&sql).await.unwrap().collect().await.unwrap();
    assert_schema_lines(
        &schema_text(&decrypted_schema(&path)),
        &[
            "REQUIRED group v (VARIANT(Some(1))) {",
            "OPTIONAL group v (VARIANT(Some(1))) {",
            "OPTIONAL BYTE_ARRAY typed_value (STRING);",
            "OPTIONAL FIXED_LEN_BYTE_ARRAY (12) iv (INTERVAL);",
            "REQUIRED FIXED_LEN_BYTE_ARRAY (12) iv (INTERVAL);",
        ],
    );
    // without the key, the footer cannot be read
    assert!(SerializedFileReader::new(File::open(&path).unwrap()).is_err());
    let create = format!(
        "CREATE EXTERNAL TABLE e STORED AS PARQUET LOCATION '{}' OPTIONS (\
         'format.crypto.file_decryption.footer_key_as_hex' '{KEY}')",
        path.display()
    );
    ctx.sql(&create).await.unwrap();
    let batches = ctx
        .sql("SELECT to_json(v), to_json(s2['v']) FROM e")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let expected = [
        "+--------------+------------------+",
        "| to_json(e.v) | to_json(e.s2[v]) |",
        "+--------------+------------------+",
        "| {\"a\":[1,2]}  | \"x\"              |",
        "+--------------+------------------+",
    ];
    assert_eq!(
        pretty_format_batches(&batches).unwrap().to_string(),
        expected.join("\n")
    );
    for read in ["iv", "s['iv']", "s['v']"] {
        let err = ctx
            .sql(&format!("SELECT {read} FROM e"))
            .await
            .unwrap()
            .collect()
            .await;
        let err = err.unwrap_err().to_string();
        assert!(
            err.contains("of this file can only be read as Interval(DayTime), which drops"),
            "{read}: {err}"
        );
    }
}

/// With per-column keys, the leaves an inferred shredding would add have no key: automatic
/// shredding is off, the variant's `metadata` and `value` are encrypted with their keys. A
/// variant some of whose leaves have keys and others not (a shredding type given, or a key
/// forgotten) is an error, not a file with part of the variant in the clear.
#[tokio::test]
async fn per_column_encryption_never_leaves_part_of_a_variant_unencrypted() {
    const FOOTER: &str = "30313233343536373839303132333435"; // b"0123456789012345"
    const COLUMN: &str = "31323334353637383930313233343530"; // b"1234567890123450"
    let dir = scratch_dir("parquet-variant-test", "column-keys");
    let ctx = session_context();
    let copy = |file: &str, options: &str| {
        format!(
            "COPY (SELECT parse_json('{{\"a\": 1}}') AS v) TO '{}' STORED AS PARQUET OPTIONS (\
             'format.crypto.file_encryption.encrypt_footer' 'true', \
             'format.crypto.file_encryption.footer_key_as_hex' '{FOOTER}', {options})",
            dir.join(file).display()
        )
    };
    let both = format!(
        "'format.crypto.file_encryption.column_key_as_hex::v.metadata' '{COLUMN}', \
         'format.crypto.file_encryption.column_key_as_hex::v.value' '{COLUMN}'"
    );
    ctx.sql(&copy("keys.parquet", &both))
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let schema = decrypted_schema(&dir.join("keys.parquet"));
    let leaves: Vec<String> = (0..schema.num_columns())
        .map(|i| schema.column(i).path().string())
        .collect();
    assert_eq!(leaves, ["v.metadata", "v.value"]);
    let only_value =
        format!("'format.crypto.file_encryption.column_key_as_hex::v.value' '{COLUMN}'");
    let shredded = format!("{both}, 'variant.shred.v' 'struct<a bigint>'");
    for (file, options, unkeyed) in [
        ("value.parquet", only_value.as_str(), "v.metadata"),
        (
            "shredded.parquet",
            shredded.as_str(),
            "v.typed_value.a.value",
        ),
    ] {
        let result = ctx.sql(&copy(file, options)).await.unwrap().collect().await;
        let err = result.unwrap_err().to_string();
        assert!(
            err.contains("gives keys to some leaves of the variant v") && err.contains(unkeyed),
            "{options}: {err}"
        );
        assert!(!dir.join(file).exists(), "{file} was left behind");
    }
}

/// The Parquet schema of the file at `path`, its footer encrypted with the key b"0123456789012345".
fn decrypted_schema(path: &Path) -> parquet::schema::types::SchemaDescPtr {
    use parquet::encryption::decrypt::FileDecryptionProperties;
    use parquet::file::metadata::ParquetMetaDataReader;
    let decryption = FileDecryptionProperties::builder(b"0123456789012345".to_vec())
        .build()
        .unwrap();
    let metadata = ParquetMetaDataReader::new()
        .with_decryption_properties(Some(decryption))
        .parse_and_finish(&File::open(path).unwrap())
        .unwrap();
    metadata.file_metadata().schema_descr_ptr()
}

/// `DataFrame::write_parquet` (DataFusion's DataFrame writer, which names its own Parquet
/// format) writes variant files as `COPY` does: the VARIANT annotation, shredded columns, the
/// DataFrame's writer options kept.
#[tokio::test]
async fn dataframe_writes_are_variant_files() {
    use datafusion::dataframe::DataFrameWriteOptions;
    let dir = scratch_dir("parquet_variant", "dataframe-write");
    let file = dir.join("events.parquet");
    let ctx = SessionContext::new();
    datafusion_parquet_variant::register_all(&ctx).unwrap();
    let df = ctx
        .sql("SELECT n AS id, parse_json('{\"a\": ' || n || '}') AS v FROM generate_series(1, 100) AS t(n)")
        .await
        .unwrap();
    let mut options = datafusion::config::TableParquetOptions::default();
    options.global.max_row_group_size = 10;
    df.write_parquet(path_str(&file), DataFrameWriteOptions::new(), Some(options))
        .await
        .unwrap();
    let text = parquet_schema_text(&file);
    assert_eq!(text.matches("(VARIANT(Some(1)))").count(), 1, "{text}");
    assert!(text.contains("typed_value"), "{text}");
    let metadata = datafusion::parquet::file::reader::SerializedFileReader::new(
        std::fs::File::open(&file).unwrap(),
    )
    .unwrap();
    use datafusion::parquet::file::reader::FileReader;
    assert_eq!(metadata.metadata().num_row_groups(), 10);
    create_parquet_table(&ctx, "written", &file).await;
    let sum = rows(&query(&ctx, "SELECT sum(v:a::bigint) FROM written").await);
    assert_eq!(sum, ["5050"]);
}
