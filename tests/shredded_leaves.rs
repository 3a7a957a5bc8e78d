//! Which Parquet leaves a query on a shredded variant column reads: the byte ranges the scan
//! requests from the object store are recorded and mapped to the file's column chunks.
mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::recording::{Recording, leaves_read};
use datafusion::arrow::array::{Array, AsArray};
use datafusion::parquet::file::reader::{FileReader, SerializedFileReader};
use datafusion::prelude::SessionContext;
use datafusion_parquet_variant::session_context;

fn scratch(name: &str) -> common::TempPath {
    common::scratch_dir("shredded-leaves-test", name)
}

/// A session reading files through a [`Recording`] store, with the table `t` over `path`.
async fn recording_session(path: &Path) -> (SessionContext, Arc<Recording>) {
    let ctx = session_context();
    let store = Recording::new();
    ctx.register_object_store(
        &url::Url::parse("file://").unwrap(),
        Arc::clone(&store) as _,
    );
    common::run(
        &ctx,
        &format!(
            "CREATE EXTERNAL TABLE t STORED AS PARQUET LOCATION '{}'",
            path.display()
        ),
    )
    .await;
    (ctx, store)
}

/// The text of the first column of `batches` (no NULLs), row by row.
fn first_column_text(batches: &[datafusion::arrow::array::RecordBatch]) -> Vec<String> {
    batches
        .iter()
        .flat_map(|b| {
            let column = b.column(0).as_string::<i32>();
            column
                .iter()
                .map(|s| s.unwrap().to_string())
                .collect::<Vec<_>>()
        })
        .collect()
}

fn set(leaves: &[&str]) -> BTreeSet<String> {
    leaves.iter().map(|s| s.to_string()).collect()
}

/// Writes the test file: `v` shredded as `struct<a bigint, b string, c array<struct<x bigint,
/// y string>>, d struct<e double>>`; every `a` is a bigint (its residual is empty), some `b` are
/// not strings, a few rows hold unshredded fields.
async fn write_file(dir: &Path) -> PathBuf {
    let ctx = session_context();
    let path = dir.join("events.parquet");
    common::run(&ctx, &format!(
        r#"COPY (SELECT id, parse_json(j) AS v FROM (VALUES
            (1, '{{"a":1,"b":"x","c":[{{"x":10,"y":"p"}}],"d":{{"e":1.5e0}}}}'),
            (2, '{{"a":2,"b":7,"c":[],"d":{{"e":2.5e0,"f":1}}}}'),
            (3, '{{"a":3,"b":"z","zz":true,"c":[{{"x":"eleven"}}]}}')
          ) AS t(id, j)) TO '{}' STORED AS PARQUET
          OPTIONS ('variant.shred.v' 'struct<a bigint, b string, c array<struct<x bigint, y string>>, d struct<e double>>')"#,
        path.display()
    )).await;
    path
}

#[tokio::test]
async fn paths_read_only_their_leaves() {
    let dir = scratch("paths");
    let path = write_file(&dir).await;
    let (ctx, store) = recording_session(&path).await;
    let read = |sql: &'static str| {
        let (ctx, store, path) = (&ctx, &store, &path);
        async move { leaves_read(ctx, store, path, sql).await }
    };

    // a fully shredded path: its typed leaf alone (the residual is empty in the file)
    assert_eq!(
        read("SELECT v:a::bigint FROM t").await,
        set(&["v.typed_value.a.typed_value"])
    );
    // a path with residuals (7 is no string): the leaf's value, its typed value, the metadata
    assert_eq!(
        read("SELECT v:b::string FROM t").await,
        set(&[
            "v.metadata",
            "v.typed_value.b.typed_value",
            "v.typed_value.b.value"
        ])
    );
    // two paths of one column: their leaves together
    assert_eq!(
        read("SELECT v:a::bigint, v:b::string FROM t WHERE id > 0").await,
        set(&[
            "id",
            "v.metadata",
            "v.typed_value.a.typed_value",
            "v.typed_value.b.typed_value",
            "v.typed_value.b.value"
        ])
    );
    // a nested field: its leaves only, not its parent's residual (d.value holds {"f":1})
    assert_eq!(
        read("SELECT v:d.e::double FROM t").await,
        set(&["v.typed_value.d.typed_value.e.typed_value"])
    );
    // a field that is not shredded: the object's residual (and the metadata to look it up)
    assert_eq!(
        read("SELECT v:zz::boolean FROM t").await,
        set(&["v.metadata", "v.value"])
    );
    // a field of an array's element: that field's leaves in the elements ("eleven" is a
    // residual), not the elements' other fields
    assert_eq!(
        read("SELECT try_variant_get(v, '$.c[0].x', 'bigint') FROM t").await,
        set(&[
            "v.metadata",
            "v.typed_value.c.typed_value.list.element.typed_value.x.typed_value",
            "v.typed_value.c.typed_value.list.element.typed_value.x.value",
        ])
    );
    // with a path beside it, the union of their leaves
    assert_eq!(
        read("SELECT try_variant_get(v, '$.c[1].y', 'string'), v:a::bigint FROM t").await,
        set(&[
            "v.typed_value.a.typed_value",
            "v.typed_value.c.typed_value.list.element.typed_value.y.typed_value",
        ])
    );
    // in a filter too (the extraction moves into the scan's projection)
    assert_eq!(
        read("SELECT id FROM t WHERE try_variant_get(v, '$.c[0].x', 'bigint') = 10").await,
        set(&[
            "id",
            "v.metadata",
            "v.typed_value.c.typed_value.list.element.typed_value.x.typed_value",
            "v.typed_value.c.typed_value.list.element.typed_value.x.value",
        ])
    );
    // a filter on a path reads the same leaves
    assert_eq!(
        read("SELECT id FROM t WHERE v:a::bigint = 2").await,
        set(&["id", "v.typed_value.a.typed_value"])
    );
    // the whole value: every leaf of the column but the `value`s beside a `typed_value` that
    // hold nothing in the file (every `a` is a bigint, every `c` an array, no element holds
    // fields other than `x` and `y`, every `y` and `e` is of its shredded type)
    let reader = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
    let every_leaf: BTreeSet<String> = reader.metadata().row_groups()[0]
        .columns()
        .iter()
        .map(|c| c.column_path().string())
        .filter(|p| p.starts_with("v."))
        .collect();
    assert_eq!(every_leaf.len(), 15);
    let empty = set(&[
        "v.typed_value.a.value",
        "v.typed_value.c.value",
        "v.typed_value.c.typed_value.list.element.value",
        "v.typed_value.c.typed_value.list.element.typed_value.y.value",
        "v.typed_value.d.typed_value.e.value",
    ]);
    assert!(empty.is_subset(&every_leaf));
    let whole: BTreeSet<String> = every_leaf.difference(&empty).cloned().collect();
    // read by a function that takes the shredded column as the file has it
    assert_eq!(read("SELECT to_json(v) FROM t").await, whole);
    // and by the reassembly, for the other uses
    assert_eq!(
        read("SELECT to_json(variant_strip_nulls(v)) FROM t").await,
        whole
    );
    // with the same answers
    let expected = [
        r#"{"a":1,"b":"x","c":[{"x":10,"y":"p"}],"d":{"e":1.5}}"#,
        r#"{"a":2,"b":7,"c":[],"d":{"e":2.5,"f":1}}"#,
        r#"{"a":3,"b":"z","c":[{"x":"eleven"}],"zz":true}"#,
    ];
    for sql in [
        "SELECT to_json(v) FROM t ORDER BY id",
        "SELECT to_json(variant_strip_nulls(v)) FROM t ORDER BY id",
    ] {
        let json = first_column_text(&common::run(&ctx, sql).await);
        assert_eq!(json, expected, "{sql}");
    }
    // a whole value and a path of the same column in one scan: the answers of each alone
    let batches = common::run(
        &ctx,
        "SELECT to_json(v), try_variant_get(v, '$.c[0].x', 'bigint') FROM t ORDER BY id",
    )
    .await;
    let x: Vec<Option<i64>> = batches
        .iter()
        .flat_map(|b| {
            let x = b
                .column(1)
                .as_primitive::<datafusion::arrow::datatypes::Int64Type>();
            (0..b.num_rows())
                .map(|i| x.is_valid(i).then(|| x.value(i)))
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(first_column_text(&batches), expected);
    assert_eq!(x, [Some(10), None, None]);
}

/// A file whose every value is in its typed leaves: a whole value reads neither the top-level
/// `value` nor the field's, both empty.
#[tokio::test]
async fn fully_shredded_whole_values_read_the_typed_leaves_and_metadata() {
    let dir = scratch("fully");
    let ctx = session_context();
    let path = dir.join("full.parquet");
    common::run(
        &ctx,
        &format!(
            r#"COPY (SELECT parse_json(j) AS v FROM (VALUES ('{{"a":1}}'), ('{{"a":2}}')) AS t(j))
               TO '{}' STORED AS PARQUET OPTIONS ('variant.shred.v' 'struct<a bigint>')"#,
            path.display()
        ),
    )
    .await;
    let (ctx, store) = recording_session(&path).await;
    assert_eq!(
        leaves_read(&ctx, &store, &path, "SELECT to_json(v) FROM t").await,
        set(&["v.metadata", "v.typed_value.a.typed_value"])
    );
    let batches = common::run(&ctx, "SELECT to_json(variant_strip_nulls(v)) FROM t").await;
    let mut json = first_column_text(&batches);
    json.sort();
    assert_eq!(json, [r#"{"a":1}"#, r#"{"a":2}"#]);
}

#[tokio::test]
async fn unshredded_files_read_the_whole_column() {
    let dir = scratch("unshredded");
    let ctx = session_context();
    let path = dir.join("plain.parquet");
    common::run(
        &ctx,
        &format!(
            r#"COPY (SELECT 1 AS id, parse_json('{{"a":1}}') AS v) TO '{}' STORED AS PARQUET
           OPTIONS ('variant.shred.v' 'none')"#,
            path.display()
        ),
    )
    .await;
    let (ctx, store) = recording_session(&path).await;
    assert_eq!(
        leaves_read(&ctx, &store, &path, "SELECT v:a::bigint FROM t").await,
        set(&["v.metadata", "v.value"])
    );
}
