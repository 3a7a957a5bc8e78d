//! Reading variant paths from the shredded leaves of Parquet files gives exactly what the same
//! query gives on the same values held unshredded in memory: for generated values shredded as
//! many types (a property test), and for every case of the parquet-testing shredded files.
mod common;

use std::path::Path;
use std::sync::Arc;

use common::*;
use datafusion::arrow::array::{ArrayRef, RecordBatch};
use datafusion::arrow::datatypes::{Field, Schema};
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::datasource::MemTable;
use datafusion::physical_plan::collect;
use datafusion::prelude::SessionContext;
use datafusion_parquet_variant::parquet::{
    ShreddingOptions, register_parquet_table, write_parquet,
};
use datafusion_parquet_variant::session_context;
use datafusion_parquet_variant::variant_array::{VariantArrayBuilder, variant_field};
use proptest::prelude::*;

fn scratch(name: &str) -> common::TempPath {
    scratch_dir("shredded-pushdown-test", name)
}

/// Paths through the keys the value strategy uses: shredded fields, residual fields, array
/// elements, paths into scalars, and the whole value.
const PATHS: &[&str] = &[
    "$",
    "$.a",
    "$.b",
    "$.c",
    "$.o",
    "$.o.a",
    "$.o.b",
    "$.o.o",
    "$.o.o.a",
    "$.c[0]",
    "$.c[1]",
    "$.c[0].a",
    "$.c[1].b",
    "$.c[0][0]",
    "$[0]",
    "$[1].a",
    "$[0].b",
    "$.zz",
    "$.a.x",
    "$.b[0]",
];

/// Result types, each with how its values are shown for comparison.
const TYPES: &[&str] = &[
    "string",
    "bigint",
    "int",
    "smallint",
    "double",
    "float",
    "boolean",
    "decimal(20,4)",
    "decimal(38,0)",
    "date",
    "timestamp",
    "timestamp_ntz",
    "binary",
    "array<bigint>",
    "struct<a bigint, b string>",
];

/// The types `variant_get` is checked with (errors on the same inputs).
const STRICT_TYPES: &[&str] = &[
    "string",
    "bigint",
    "double",
    "decimal(20,4)",
    "boolean",
    "date",
];

/// `expr` (a typed extraction) as text.
fn shown(expr: &str, ty: &str) -> String {
    match ty {
        "binary" => format!("encode({expr}, 'hex')"),
        "array<bigint>" | "struct<a bigint, b string>" => format!("to_json(to_variant({expr}))"),
        // as numbers: text would need the dates and times inside chrono's range
        "date" => format!("arrow_cast({expr}, 'Int32')"),
        "timestamp" | "timestamp_ntz" => format!("arrow_cast({expr}, 'Int64')"),
        _ => format!("CAST({expr} AS VARCHAR)"),
    }
}

/// The select list of every path as a variant (JSON) and as each type (`try_variant_get`).
fn all_paths() -> String {
    let mut columns = vec![];
    for path in PATHS {
        columns.push(format!("to_json(variant_get(v, '{path}'))"));
        columns.push(format!("is_variant_null(variant_get(v, '{path}'))"));
        for ty in TYPES {
            columns.push(shown(&format!("try_variant_get(v, '{path}', '{ty}')"), ty));
        }
    }
    columns.join(", ")
}

/// The select list of every path as `ty` with `variant_get` (errors where a value cannot be
/// cast).
fn strict_paths(ty: &str) -> String {
    PATHS
        .iter()
        .map(|path| shown(&format!("variant_get(v, '{path}', '{ty}')"), ty))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The rows of `sql` as text, or its error; and how many paths the scans read from shredded
/// leaves.
async fn run(ctx: &SessionContext, sql: &str) -> (Result<Vec<String>, String>, usize) {
    let plan = match ctx.sql(sql).await {
        Ok(df) => df.create_physical_plan().await,
        Err(e) => Err(e),
    };
    let plan = match plan {
        Ok(plan) => plan,
        Err(e) => return (Err(e.to_string()), 0),
    };
    let batches = collect(Arc::clone(&plan), ctx.task_ctx()).await;
    let pushed = metric_sum(plan.as_ref(), "variant_paths_from_shredded_leaves");
    let batches = match batches {
        Ok(b) => b,
        Err(e) => return (Err(e.to_string()), pushed),
    };
    let options = FormatOptions::default().with_null("NULL");
    let mut rows = vec![];
    for batch in &batches {
        let formatters: Vec<_> = batch
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options).unwrap())
            .collect();
        for i in 0..batch.num_rows() {
            let cells: Vec<String> = formatters.iter().map(|f| f.value(i).to_string()).collect();
            rows.push(cells.join(" | "));
        }
    }
    (Ok(rows), pushed)
}

/// A session with `mem (id, v)` holding `values` unshredded, and `file`, the same written to
/// Parquet shredded as `shredding`.
async fn tables(
    values: &[Option<(Vec<u8>, Vec<u8>)>],
    shredding: &str,
    dir: &Path,
) -> SessionContext {
    let ctx = session_context();
    let mut v = VariantArrayBuilder::with_capacity(values.len());
    for value in values {
        match value {
            Some((m, val)) => v.append(m, val),
            None => v.append_null(),
        }
    }
    let ids: ArrayRef = Arc::new(datafusion::arrow::array::Int64Array::from_iter_values(
        0..values.len() as i64,
    ));
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", datafusion::arrow::datatypes::DataType::Int64, false),
        variant_field("v", true),
    ]));
    let batch = RecordBatch::try_new(Arc::clone(&schema), vec![ids, v.finish().unwrap()]).unwrap();
    ctx.register_table(
        "mem",
        Arc::new(MemTable::try_new(schema, vec![vec![batch]]).unwrap()),
    )
    .unwrap();
    let path = dir.join("shredded.parquet");
    let df = ctx.table("mem").await.unwrap();
    write_parquet(
        df,
        path.to_str().unwrap(),
        ShreddingOptions::new().with_column("v", shredding).unwrap(),
    )
    .await
    .unwrap();
    register_parquet_table(&ctx, "file", path.to_str().unwrap())
        .await
        .unwrap();
    ctx
}

/// Shredding types: objects (with arrays of objects, nested objects, every primitive kind),
/// arrays, a primitive, nothing.
const SCHEMAS: &[&str] = &[
    "struct<a bigint, b string, c array<int>, o struct<a decimal(12,3), b boolean>>",
    "struct<a double, b date, c array<struct<a timestamp, b timestamp_ntz>>, o variant>",
    "struct<a tinyint, b binary, c array<array<string>>, o struct<o struct<a float>>>",
    "struct<a string, c array<struct<a bigint, b string>>, o struct<o struct<a string>, b bigint>>",
    "array<struct<a decimal(38,0), b smallint>>",
    "decimal(18,4)",
    "variant",
];

fn cases() -> u32 {
    proptest_cases(8)
}

/// Every path, as a variant and as every type, reads the same from the shredded file as from
/// memory, with `try_variant_get` and with `variant_get` (an error on one side is an error on
/// the other).
async fn same_answers(values: Vec<Option<V>>) -> Result<(), String> {
    let encoded: Vec<_> = values
        .iter()
        .map(|v| v.as_ref().map(|v| encode_ours(v).unwrap()))
        .collect();
    let dir = scratch("property");
    for schema in SCHEMAS {
        let ctx = tables(&encoded, schema, &dir).await;
        let query = |table: &str| format!("SELECT id, {} FROM {table} ORDER BY id", all_paths());
        let (expected, _) = run(&ctx, &query("mem")).await;
        let (got, pushed) = run(&ctx, &query("file")).await;
        if let Err(e) = &expected {
            return Err(format!("{schema}: the query fails in memory: {e}"));
        }
        if got != expected {
            return Err(format!("{schema}: file {got:?}\nmemory {expected:?}"));
        }
        if schema.starts_with("struct") && pushed == 0 {
            return Err(format!("{schema}: no path was read from shredded leaves"));
        }
        for ty in STRICT_TYPES {
            let query =
                |table: &str| format!("SELECT id, {} FROM {table} ORDER BY id", strict_paths(ty));
            let (expected, _) = run(&ctx, &query("mem")).await;
            let (got, _) = run(&ctx, &query("file")).await;
            match (&got, &expected) {
                (Err(_), Err(_)) => {}
                _ if got == expected => {}
                _ => {
                    return Err(format!(
                        "{schema} as {ty}: file {got:?}\nmemory {expected:?}"
                    ));
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn shredded_reads_give_the_unshredded_answers(
        values in proptest::collection::vec(proptest::option::weighted(0.9, value_strategy()), 1..20)
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let result = runtime.block_on(same_answers(values));
        prop_assert!(result.is_ok(), "{}", result.unwrap_err());
    }
}

/// The paths of every key and of the first two elements, up to depth 3, in `value`.
fn paths_in(value: &V, prefix: String, depth: usize, out: &mut Vec<String>) {
    if depth == 0 {
        return;
    }
    match value {
        V::Obj(fields) => {
            for (key, child) in fields {
                let path = format!("{prefix}[\"{key}\"]");
                if !out.contains(&path) {
                    out.push(path.clone());
                }
                paths_in(child, path, depth - 1, out);
            }
        }
        V::Arr(items) => {
            for (i, child) in items.iter().enumerate().take(2) {
                let path = format!("{prefix}[{i}]");
                if !out.contains(&path) {
                    out.push(path.clone());
                }
                paths_in(child, path, depth - 1, out);
            }
        }
        _ => {}
    }
}

/// Every conformance case that reads without error: the paths its values have, read from the
/// file, give what they give on the file's values reassembled into memory.
#[tokio::test]
async fn conformance_files_read_by_path_give_the_reassembled_answers() {
    let dir = conformance_dir("shredded_variant");
    let cases: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("cases.json")).unwrap()).unwrap();
    let mut checked = 0;
    let mut pushed_paths = 0;
    let mut failures = vec![];
    for case in cases.as_array().unwrap() {
        let Some(file) = case["parquet_file"].as_str() else {
            continue;
        };
        if case.get("error_message").is_some() {
            continue;
        }
        let expected_files: Vec<&str> = match case.get("variant_files") {
            Some(files) => files
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|f| f.as_str())
                .collect(),
            None => case["variant_file"].as_str().into_iter().collect(),
        };
        let mut paths = vec!["$".to_string()];
        for f in &expected_files {
            let bytes = std::fs::read(dir.join(f)).unwrap();
            let (m, v) = split_variant_file(&bytes);
            let value = decode_ours_bytes(m, v).unwrap();
            paths_in(&value, "$".into(), 3, &mut paths);
        }
        paths.extend(["$.missing".to_string(), "$[5]".to_string()]);
        let ctx = session_context();
        let path = dir.join(file);
        register_parquet_table(&ctx, "file", path.to_str().unwrap())
            .await
            .unwrap();
        // the file's values, reassembled, in memory
        if let Err(e) = ctx
            .sql("CREATE TABLE mem AS SELECT id, var FROM file")
            .await
            .unwrap()
            .collect()
            .await
        {
            failures.push(format!("{file}: cannot read: {e}"));
            continue;
        }
        let mut columns = vec![];
        for p in &paths {
            let p = p.replace('\'', "''");
            columns.push(format!("to_json(variant_get(var, '{p}'))"));
            for ty in [
                "string",
                "bigint",
                "double",
                "decimal(38,10)",
                "boolean",
                "date",
            ] {
                columns.push(shown(&format!("try_variant_get(var, '{p}', '{ty}')"), ty));
            }
        }
        let query =
            |table: &str| format!("SELECT id, {} FROM {table} ORDER BY id", columns.join(", "));
        let (expected, _) = run(&ctx, &query("mem")).await;
        let (got, pushed) = run(&ctx, &query("file")).await;
        pushed_paths += pushed;
        if let Err(e) = &expected {
            failures.push(format!("{file}: the query fails in memory: {e}"));
        }
        if got != expected {
            failures.push(format!("{file}: file {got:?}\nmemory {expected:?}"));
        }
        checked += 1;
    }
    assert!(checked >= 120, "only {checked} cases");
    assert!(
        pushed_paths >= 100,
        "only {pushed_paths} paths read from leaves"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
