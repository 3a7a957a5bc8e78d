//! Delta tables where SQL cannot reach (sqllogictests/delta_tables.slt has the rest): a table of
//! shredded files read from their leaves, time travel by commit time, the Rust registration, and
//! broken logs (a missing commit, a corrupt checkpoint, a reader feature we do not know), each a
//! clear error.
mod common;

use std::path::Path;
use std::time::{Duration, SystemTime};

use datafusion::arrow::array::AsArray;
use datafusion::arrow::datatypes::Int64Type;
use datafusion::physical_plan::collect;
use datafusion::prelude::SessionContext;
use datafusion_parquet_variant::delta::{DeltaVersion, register_delta};
use datafusion_parquet_variant::session_context;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/delta");

/// A copy of fixture `name` in a scratch folder of its own.
fn copy_of(name: &str, test: &str) -> common::TempPath {
    let dir = common::scratch_dir("delta", test);
    common::copy_dir(&Path::new(FIXTURES).join(name), &dir);
    dir
}

/// Version 0 of a table in `dir` whose one data file is the test's `part-00000.parquet`:
/// `protocol`, the Delta `schema` (JSON text) and the file's `stats` (JSON text), the table's
/// `configuration` that of [`commit_one_file_configured`].
fn commit_one_file(dir: &Path, protocol: serde_json::Value, schema: &str, stats: &str) {
    commit_one_file_configured(dir, protocol, schema, stats, serde_json::json!({}));
}

fn commit_one_file_configured(
    dir: &Path,
    protocol: serde_json::Value,
    schema: &str,
    stats: &str,
    configuration: serde_json::Value,
) {
    let size = std::fs::metadata(dir.join("part-00000.parquet"))
        .unwrap()
        .len();
    let log = [
        serde_json::json!({ "protocol": protocol }),
        serde_json::json!({"metaData": {"id": "test", "format": {"provider": "parquet", "options": {}},
            "schemaString": schema, "partitionColumns": [], "configuration": configuration,
            "createdTime": 0}}),
        serde_json::json!({"add": {"path": "part-00000.parquet", "partitionValues": {}, "size": size,
            "modificationTime": 0, "dataChange": true, "stats": stats}}),
    ];
    std::fs::create_dir_all(dir.join("_delta_log")).unwrap();
    let text: String = log.iter().map(|a| format!("{a}\n")).collect();
    std::fs::write(dir.join("_delta_log/00000000000000000000.json"), text).unwrap();
}

async fn one_i64(ctx: &SessionContext, sql: &str) -> i64 {
    let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
    batches[0].column(0).as_primitive::<Int64Type>().value(0)
}

async fn error_of(ctx: &SessionContext, sql: &str) -> String {
    match ctx.sql(sql).await {
        Err(e) => e.to_string(),
        Ok(df) => match df.collect().await {
            Err(e) => e.to_string(),
            Ok(_) => panic!("{sql} succeeded"),
        },
    }
}

/// A Delta table whose one data file is ours, shredded (`v` as `struct<a bigint, b string>`):
/// paths are read from the leaves, as for the same file registered as Parquet.
#[tokio::test]
async fn shredded_files_are_read_from_their_leaves() {
    let dir = common::scratch_dir("delta", "shredded");
    let ctx = session_context();
    let file = dir.join("part-00000.parquet");
    let copy = format!(
        "COPY (SELECT id, parse_json('{{\"a\": ' || id || ', \"b\": \"s' || (id % 3) || '\"}}') AS v \
         FROM generate_series(1, 1000) AS t(id)) TO '{}' STORED AS PARQUET \
         OPTIONS ('variant.shred.v' 'struct<a bigint, b string>')",
        file.display()
    );
    ctx.sql(&copy).await.unwrap().collect().await.unwrap();
    let schema = r#"{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"v","type":"variant","nullable":true,"metadata":{}}]}"#;
    let protocol = serde_json::json!({"minReaderVersion": 3, "minWriterVersion": 7,
        "readerFeatures": ["variantType", "variantShredding"],
        "writerFeatures": ["variantType", "variantShredding"]});
    let stats =
        r#"{"numRecords":1000,"minValues":{"id":1},"maxValues":{"id":1000},"nullCount":{"id":0}}"#;
    commit_one_file(&dir, protocol, schema, stats);

    register_delta(&ctx, "t", dir.to_str().unwrap(), DeltaVersion::Newest)
        .await
        .unwrap();
    // 1 + .. + 1000, and the 334 ids = 1 mod 3 (b = "s1")
    assert_eq!(
        one_i64(&ctx, "SELECT sum(v:a::bigint) FROM t").await,
        500500
    );
    assert_eq!(
        one_i64(&ctx, "SELECT count(*) FROM t WHERE v:b::string = 's1'").await,
        334
    );
    let plan = common::plan(&ctx, "SELECT sum(v:a::bigint) FROM t").await;
    collect(plan.clone(), ctx.task_ctx()).await.unwrap();
    assert_eq!(
        common::metric_sum(plan.as_ref(), "variant_paths_from_shredded_leaves"),
        1
    );
}

/// `OPTIONS ('timestamp' ..)` reads the newest version committed at or before that time; the
/// commits' times are their files' (the fixture's commits carry no in-commit timestamps).
#[tokio::test]
async fn time_travel_by_commit_time() {
    let dir = copy_of("spark-variant-checkpoint", "timestamp");
    let base = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000); // 2023-11-14T22:13:20Z
    for version in 0..3u64 {
        let commit = dir.join(format!("_delta_log/{version:020}.json"));
        let file = std::fs::File::options().write(true).open(commit).unwrap();
        file.set_modified(base + Duration::from_secs(100 * version))
            .unwrap();
    }
    let ctx = session_context();
    for (time, rows) in [
        ("2023-11-14T22:13:20Z", 100),
        ("2023-11-14 22:14:59", 100),
        ("2023-11-14T22:15:00Z", 101),
        ("2023-11-14T23:16:40+01:00", 102),
        ("2030-01-01", 102),
    ] {
        let create = format!(
            "CREATE OR REPLACE EXTERNAL TABLE t STORED AS DELTATABLE LOCATION '{}' \
             OPTIONS ('timestamp' '{time}')",
            dir.display()
        );
        ctx.sql(&create).await.unwrap().collect().await.unwrap();
        assert_eq!(
            one_i64(&ctx, "SELECT count(*) FROM t").await,
            rows,
            "{time}"
        );
    }
    let create = format!(
        "CREATE EXTERNAL TABLE early STORED AS DELTATABLE LOCATION '{}' \
         OPTIONS ('timestamp' '2020-01-01')",
        dir.display()
    );
    let err = error_of(&ctx, &create).await;
    assert!(
        err.contains("timestamp 2020-01-01 00:00:00 UTC is before the table's first commit"),
        "{err}"
    );
}

/// A log that lost a commit: the newest version is still read from the checkpoint after it,
/// the lost version is an error.
#[tokio::test]
async fn a_missing_commit_is_an_error_for_its_version() {
    let dir = copy_of("spark-variant-checkpoint", "missing-commit");
    std::fs::remove_file(dir.join("_delta_log/00000000000000000001.json")).unwrap();
    let ctx = session_context();
    let newest = format!(
        "CREATE EXTERNAL TABLE t STORED AS DELTATABLE LOCATION '{}'",
        dir.display()
    );
    ctx.sql(&newest).await.unwrap().collect().await.unwrap();
    assert_eq!(one_i64(&ctx, "SELECT count(*) FROM t").await, 102);
    let lost = format!(
        "CREATE EXTERNAL TABLE t1 STORED AS DELTATABLE LOCATION '{}' OPTIONS ('version' '1')",
        dir.display()
    );
    let err = error_of(&ctx, &lost).await;
    assert!(err.contains("Delta table at file://"), "{err}");

    // without the checkpoint either, the newest version has a gap in its log
    let dir = copy_of("spark-variant-checkpoint", "missing-commit-no-checkpoint");
    std::fs::remove_file(dir.join("_delta_log/00000000000000000001.json")).unwrap();
    std::fs::remove_file(dir.join("_delta_log/00000000000000000002.checkpoint.parquet")).unwrap();
    std::fs::remove_file(dir.join("_delta_log/_last_checkpoint")).unwrap();
    let gap = format!(
        "CREATE EXTERNAL TABLE t2 STORED AS DELTATABLE LOCATION '{}'",
        dir.display()
    );
    let err = error_of(&ctx, &gap).await;
    assert!(err.contains("Delta table at file://"), "{err}");
}

/// A checkpoint that is not Parquet: an error naming the table, no panic, no partial answer.
#[tokio::test]
async fn a_corrupt_checkpoint_is_an_error() {
    let dir = copy_of("spark-variant-checkpoint", "corrupt-checkpoint");
    let checkpoint = dir.join("_delta_log/00000000000000000002.checkpoint.parquet");
    let mut bytes = std::fs::read(&checkpoint).unwrap();
    let half = bytes.len() / 2;
    bytes.truncate(half);
    std::fs::write(&checkpoint, bytes).unwrap();
    let ctx = session_context();
    let create = format!(
        "CREATE EXTERNAL TABLE t STORED AS DELTATABLE LOCATION '{}'",
        dir.display()
    );
    let err = error_of(&ctx, &create).await;
    assert!(err.contains("Delta table at file://"), "{err}");
}

/// A reader feature this reader does not implement is named.
#[tokio::test]
async fn an_unknown_reader_feature_is_named() {
    let dir = copy_of("table-with-dv-small", "reader-feature");
    let first = dir.join("_delta_log/00000000000000000000.json");
    let log = std::fs::read_to_string(&first).unwrap().replace(
        r#""readerFeatures":["deletionVectors"],"writerFeatures":["deletionVectors"]"#,
        r#""readerFeatures":["deletionVectors","catalogManaged"],"writerFeatures":["deletionVectors","catalogManaged"]"#,
    );
    std::fs::write(&first, log).unwrap();
    let ctx = session_context();
    let create = format!(
        "CREATE EXTERNAL TABLE t STORED AS DELTATABLE LOCATION '{}'",
        dir.display()
    );
    let err = error_of(&ctx, &create).await;
    // (the kernel names what it lacks for such a table; a feature it reads that we do not
    // would be named by us: see delta::schema's unit test)
    assert!(err.contains("catalog"), "{err}");
}

/// `INSERT INTO` appends a version: its files are ours (variants shredded, as `COPY` shreds),
/// its commit adds the shredding feature beside the table's variant feature, and both we and
/// deltalake-core read the new version.
#[tokio::test]
async fn appends_land_as_new_versions() {
    let dir = copy_of("spark-variant-checkpoint", "append");
    let ctx = session_context();
    let create = format!(
        "CREATE EXTERNAL TABLE t STORED AS DELTATABLE LOCATION '{}'",
        dir.display()
    );
    ctx.sql(&create).await.unwrap().collect().await.unwrap();
    let insert = "INSERT INTO t SELECT 1000 + n, parse_json('{\"key\": ' || (1000 + n) || '}'), \
                  NULL AS a, NULL AS b, NULL AS c, NULL AS d, NULL AS e \
                  FROM generate_series(0, 99) AS s(n)";
    assert_eq!(one_u64(&ctx, insert).await, 100);
    // the same table (no registration again) reads the new version
    assert_eq!(one_i64(&ctx, "SELECT count(*) FROM t").await, 202);
    assert_eq!(
        one_i64(&ctx, "SELECT sum(v:key::bigint) FROM t WHERE id >= 1000").await,
        (1000..1100).sum::<i64>()
    );
    // deltalake-core's own reading of the log: version 3, one file more, the shredding feature
    let url = url::Url::from_directory_path(&*dir).unwrap();
    let table = deltalake_core::open_table(url).await.unwrap();
    assert_eq!(table.version(), Some(3));
    let snapshot = table.snapshot().unwrap();
    assert_eq!(snapshot.log_data().num_files(), 5);
    let features: Vec<String> = (snapshot.protocol().reader_features().unwrap().iter())
        .map(|f| f.to_string())
        .collect();
    assert!(
        features.contains(&"variantShredding-preview".to_string()),
        "{features:?}"
    );
    // the write left no staging folder behind
    let hidden: Vec<_> = std::fs::read_dir(&*dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(".variant-write")
        })
        .collect();
    assert!(hidden.is_empty());
}

async fn one_u64(ctx: &SessionContext, sql: &str) -> u64 {
    let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
    batches[0]
        .column(0)
        .as_primitive::<datafusion::arrow::datatypes::UInt64Type>()
        .value(0)
}

/// The data files of the table folder `dir` (its root only).
fn data_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "_delta_log")
        .collect();
    names.sort();
    names
}

/// An append whose input fails half way, or whose commit conflicts, leaves no version and no
/// file; two appends at once both land.
#[tokio::test]
async fn appends_are_atomic_and_concurrent_ones_both_land() {
    let dir = copy_of("spark-variant-checkpoint", "append-atomic");
    let before = data_files(&dir);
    let ctx = session_context();
    let create = format!(
        "CREATE EXTERNAL TABLE t STORED AS DELTATABLE LOCATION '{}'",
        dir.display()
    );
    ctx.sql(&create).await.unwrap().collect().await.unwrap();

    // the 5000th row is not JSON: parse_json fails after rows were written
    let failing = "INSERT INTO t SELECT n, parse_json(CASE WHEN n = 5000 THEN 'oops' \
                   ELSE '{\"key\": ' || n || '}' END), NULL AS a, NULL AS b, NULL AS c, NULL AS d, \
                   NULL AS e FROM generate_series(1, 20000) AS s(n)";
    let err = error_of(&ctx, failing).await;
    assert!(err.contains("parse_json"), "{err}");
    assert_eq!(data_files(&dir), before);
    assert!(!dir.join("_delta_log/00000000000000000003.json").exists());
    assert_eq!(one_i64(&ctx, "SELECT count(*) FROM t").await, 102);

    // a commit that changed the schema took version 3 after the append planned: a conflict
    let insert = "INSERT INTO t SELECT 7, parse_json('{\"key\": 7}'), NULL AS a, NULL AS b, \
                  NULL AS c, NULL AS d, NULL AS e";
    let plan = common::plan(&ctx, insert).await;
    let metadata = std::fs::read_to_string(dir.join("_delta_log/00000000000000000000.json"))
        .unwrap()
        .lines()
        .find(|l| l.contains("\"metaData\""))
        .unwrap()
        .to_string();
    std::fs::write(
        dir.join("_delta_log/00000000000000000003.json"),
        format!("{{\"commitInfo\":{{\"operation\":\"SET TBLPROPERTIES\"}}}}\n{metadata}\n"),
    )
    .unwrap();
    let err = collect(plan, ctx.task_ctx()).await.unwrap_err().to_string();
    assert!(
        err.contains("a concurrent commit (version 3) changed the table's schema"),
        "{err}"
    );
    assert_eq!(data_files(&dir), before);
    assert!(!dir.join("_delta_log/00000000000000000004.json").exists());

    // two appends planned on the same version: one commits version 4, the other version 5
    let ctx2 = session_context();
    ctx2.sql(&create).await.unwrap().collect().await.unwrap();
    let one = "INSERT INTO t SELECT n, parse_json('{\"key\": ' || n || '}'), NULL AS a, NULL AS b, \
               NULL AS c, NULL AS d, NULL AS e FROM generate_series(2000, 2009) AS s(n)";
    let two = one.replace("2000, 2009", "3000, 3019");
    let plan_one = common::plan(&ctx, one).await;
    let plan_two = common::plan(&ctx2, &two).await;
    let (a, b) = tokio::join!(
        collect(plan_one, ctx.task_ctx()),
        collect(plan_two, ctx2.task_ctx())
    );
    a.unwrap();
    b.unwrap();
    assert!(dir.join("_delta_log/00000000000000000005.json").exists());
    assert_eq!(one_i64(&ctx, "SELECT count(*) FROM t").await, 132);
    assert_eq!(data_files(&dir).len(), before.len() + 2);
}

/// Scans travel to other processes (datafusion-distributed, Ballista) with their files' row
/// selections (deletion vectors, which DataFusion's own encoding drops), and answer the same.
#[tokio::test]
async fn scans_with_deletion_vectors_travel() {
    use datafusion_parquet_variant::plan_codec::{
        physical_plan_from_bytes, physical_plan_to_bytes,
    };
    let ctx = session_context();
    for (name, dir) in [
        ("dv", "table-with-dv-small"),
        ("plain", "spark-variant-checkpoint"),
    ] {
        let create = format!(
            "CREATE EXTERNAL TABLE {name} STORED AS DELTATABLE LOCATION '{FIXTURES}/{dir}'"
        );
        ctx.sql(&create).await.unwrap().collect().await.unwrap();
    }
    for (sql, expected) in [
        ("SELECT sum(CAST(value AS BIGINT)) FROM dv", 36),
        ("SELECT count(*) FROM dv", 8),
        ("SELECT sum(v:key::bigint) FROM plain", 4951),
    ] {
        let plan = common::plan(&ctx, sql).await;
        let bytes = physical_plan_to_bytes(plan).unwrap();
        let back = physical_plan_from_bytes(&bytes, &ctx.task_ctx()).unwrap();
        let batches = collect(back, ctx.task_ctx()).await.unwrap();
        let got = batches[0].column(0).as_primitive::<Int64Type>().value(0);
        assert_eq!(got, expected, "{sql}");
    }
}

/// The protocol lets a writer cut a string's maximum to a prefix and truncate a timestamp's to
/// milliseconds: such maxima are no upper bounds, and a file whose values lie above them is
/// still read.
#[tokio::test]
async fn cut_maxima_prune_no_file_they_do_not_bound() {
    let dir = common::scratch_dir("delta", "cut-maxima");
    let ctx = session_context();
    let file = dir.join("part-00000.parquet");
    let copy = format!(
        "COPY (SELECT 'abcdef' AS s, arrow_cast(TIMESTAMP '2026-01-01 00:00:00.000900', \
         'Timestamp(Microsecond, Some(\"UTC\"))') AS ts, 5 AS n) TO '{}' STORED AS PARQUET",
        file.display()
    );
    ctx.sql(&copy).await.unwrap().collect().await.unwrap();
    let schema = r#"{"type":"struct","fields":[{"name":"s","type":"string","nullable":true,"metadata":{}},{"name":"ts","type":"timestamp","nullable":true,"metadata":{}},{"name":"n","type":"long","nullable":true,"metadata":{}}]}"#;
    // the maxima as a writer may cut them: "abc", and the time truncated to milliseconds
    let stats = r#"{"numRecords":1,"minValues":{"s":"abc","ts":"2026-01-01T00:00:00.000Z","n":5},"maxValues":{"s":"abc","ts":"2026-01-01T00:00:00.000Z","n":5},"nullCount":{"s":0,"ts":0,"n":0}}"#;
    let protocol = serde_json::json!({"minReaderVersion": 1, "minWriterVersion": 2});
    commit_one_file(&dir, protocol, schema, stats);
    register_delta(&ctx, "t", dir.to_str().unwrap(), DeltaVersion::Newest)
        .await
        .unwrap();
    for filter in [
        "s = 'abcdef'",
        "s > 'abc'",
        "ts > TIMESTAMP '2026-01-01 00:00:00.000500Z'",
    ] {
        let sql = format!("SELECT sum(n) FROM t WHERE {filter}");
        assert_eq!(one_i64(&ctx, &sql).await, 5, "{filter}");
    }
    // the exact bounds of integers still leave the file out
    let batches = ctx
        .sql("SELECT sum(n) FROM t WHERE n > 5")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert!(batches[0].column(0).is_null(0));
}

/// Column mapping inside columns: the file names a struct's fields, the fields of structs in a
/// list and in a map's values by their physical names; the table reads them by its own names
/// (the values by hand: row 1 is `{b: 7, c: [{d: x}, {d: y}]}`, row 2's struct is NULL).
#[tokio::test]
async fn column_mapping_renames_fields_inside_columns() {
    let dir = common::scratch_dir("delta", "nested-mapping");
    let ctx = session_context();
    let copy = format!(
        "COPY (SELECT CASE WHEN i = 1 THEN named_struct('col-b', 7, 'col-c', \
         [named_struct('col-d', 'x'), named_struct('col-d', 'y')]) END AS \"col-a\", \
         MAP {{'k': named_struct('col-e', 3 * i)}} AS \"col-m\", i AS \"col-id\" \
         FROM generate_series(1, 2) AS s(i)) TO '{}' STORED AS PARQUET",
        dir.join("part-00000.parquet").display()
    );
    ctx.sql(&copy).await.unwrap().collect().await.unwrap();
    let mapped = |id: u32, physical: &str| {
        format!(
            r#"{{"delta.columnMapping.id":{id},"delta.columnMapping.physicalName":"{physical}"}}"#
        )
    };
    let schema = format!(
        r#"{{"type":"struct","fields":[
        {{"name":"s","type":{{"type":"struct","fields":[
            {{"name":"b","type":"long","nullable":true,"metadata":{}}},
            {{"name":"c","type":{{"type":"array","elementType":{{"type":"struct","fields":[
                {{"name":"d","type":"string","nullable":true,"metadata":{}}}]}},"containsNull":true}},
              "nullable":true,"metadata":{}}}]}},"nullable":true,"metadata":{}}},
        {{"name":"m","type":{{"type":"map","keyType":"string","valueType":{{"type":"struct","fields":[
            {{"name":"e","type":"long","nullable":true,"metadata":{}}}]}},"valueContainsNull":true}},
          "nullable":true,"metadata":{}}},
        {{"name":"id","type":"long","nullable":true,"metadata":{}}}]}}"#,
        mapped(2, "col-b"),
        mapped(4, "col-d"),
        mapped(3, "col-c"),
        mapped(1, "col-a"),
        mapped(6, "col-e"),
        mapped(5, "col-m"),
        mapped(7, "col-id"),
    );
    let protocol = serde_json::json!({"minReaderVersion": 2, "minWriterVersion": 5});
    let configuration = serde_json::json!({"delta.columnMapping.mode": "name",
        "delta.columnMapping.maxColumnId": "7"});
    commit_one_file_configured(
        &dir,
        protocol,
        &schema,
        r#"{"numRecords":2}"#,
        configuration,
    );
    register_delta(&ctx, "t", dir.to_str().unwrap(), DeltaVersion::Newest)
        .await
        .unwrap();
    let batches = ctx
        .sql(
            "SELECT id, s.b, get_field(s.c[2], 'd'), get_field(m['k'], 'e'), s IS NULL, arrow_typeof(s) FROM t \
             WHERE get_field(m['k'], 'e') > 0 ORDER BY id",
        )
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let text = datafusion::arrow::util::pretty::pretty_format_batches(&batches)
        .unwrap()
        .to_string();
    let rows: Vec<&str> = text
        .lines()
        .skip(3)
        .filter(|l| l.starts_with("| "))
        .collect();
    assert_eq!(rows.len(), 2, "{text}");
    for (row, expected) in rows.iter().zip(["| 1  | 7 ", "| 2  |   "]) {
        assert!(row.starts_with(expected), "{text}");
    }
    assert!(rows[0].contains("| y ") && rows[0].contains("| 3 ") && rows[0].contains("false"));
    assert!(
        rows[1].contains("| 6 ") && rows[1].contains("true"),
        "{text}"
    );
    // the struct's type carries the table's names, none of the file's (which the fields'
    // metadata still mentions, as deltalake-core gives it)
    assert!(rows[0].contains(r#""b": Int64"#) && rows[0].contains(r#""d": Utf8"#));
    assert!(
        !text.contains(r#""col-b": "#) && !text.contains(r#""col-d": "#),
        "{text}"
    );
    assert_eq!(one_i64(&ctx, "SELECT id FROM t WHERE s.b = 7").await, 1);
    // the renaming travels with the scan
    use datafusion_parquet_variant::plan_codec::{
        physical_plan_from_bytes, physical_plan_to_bytes,
    };
    let plan = common::plan(&ctx, "SELECT s.b FROM t WHERE s IS NOT NULL").await;
    let shown = datafusion::physical_plan::displayable(plan.as_ref())
        .indent(true)
        .to_string();
    assert!(shown.contains("delta_logical_names(col-a@0)"), "{shown}");
    let bytes = physical_plan_to_bytes(plan).unwrap();
    let back = physical_plan_from_bytes(&bytes, &ctx.task_ctx()).unwrap();
    let batches = collect(back, ctx.task_ctx()).await.unwrap();
    let got = batches[0].column(0).as_primitive::<Int64Type>().value(0);
    assert_eq!(got, 7);

    // an append writes the file as the table's writers do: physical names and column mapping
    // ids (as Parquet field ids) at every depth
    let insert = "INSERT INTO t VALUES (named_struct('b', 8, 'c', [named_struct('d', 'z')]), \
                  MAP {'k': named_struct('e', 9)}, 3)";
    ctx.sql(insert).await.unwrap().collect().await.unwrap();
    let sql =
        "SELECT sum(s.b) FROM t WHERE get_field(s.c[1], 'd') = 'z' AND get_field(m['k'], 'e') = 9";
    assert_eq!(one_i64(&ctx, sql).await, 8);
    let written = data_files(&dir)
        .into_iter()
        .find(|name| name != "part-00000.parquet")
        .unwrap();
    let ids = parquet_field_ids(&dir.join(written));
    for (path, id) in [
        ("col-a", 1),
        ("col-a.col-b", 2),
        ("col-a.col-c", 3),
        ("col-a.col-c.list.element.col-d", 4),
        ("col-m", 5),
        ("col-m.key_value.value.col-e", 6),
        ("col-id", 7),
    ] {
        assert_eq!(ids.get(path), Some(&id), "{path} in {ids:?}");
    }
}

/// Each field of a Parquet file's schema by its dotted path, with its field id where it has one.
fn parquet_field_ids(file: &Path) -> std::collections::HashMap<String, i32> {
    use datafusion::parquet::file::reader::{FileReader, SerializedFileReader};
    use datafusion::parquet::schema::types::Type;
    fn walk(t: &Type, path: &str, out: &mut std::collections::HashMap<String, i32>) {
        let name = match path {
            "" => t.name().to_string(),
            _ => format!("{path}.{}", t.name()),
        };
        if t.get_basic_info().has_id() {
            out.insert(name.clone(), t.get_basic_info().id());
        }
        if t.is_group() {
            for child in t.get_fields() {
                walk(child, &name, out);
            }
        }
    }
    let reader = SerializedFileReader::new(std::fs::File::open(file).unwrap()).unwrap();
    let mut out = std::collections::HashMap::new();
    for field in reader.metadata().file_metadata().schema().get_fields() {
        walk(field, "", &mut out);
    }
    out
}

/// Appends to a Databricks table with column mapping (by name) and a partition column: the
/// file names its column physically, with its id, and the log's partition value and statistics
/// are keyed by physical names; the rows read back by the table's names.
#[tokio::test]
async fn appends_to_a_column_mapped_table_write_physical_names() {
    let dir = copy_of("table_with_column_mapping", "mapped-append");
    let ctx = session_context();
    register_delta(&ctx, "t", dir.to_str().unwrap(), DeltaVersion::Newest)
        .await
        .unwrap();
    let insert = r#"INSERT INTO t VALUES ('BMS', 'Ada Lovelace'), ('NEW', 'Grace Hopper')"#;
    ctx.sql(insert).await.unwrap().collect().await.unwrap();
    let sql = r#"SELECT count(*) FROM t WHERE "Company Very Short" = 'BMS'"#;
    assert_eq!(one_i64(&ctx, sql).await, 5);
    let sql = r#"SELECT count(*) FROM t WHERE "Super Name" = 'Grace Hopper' AND "Company Very Short" = 'NEW'"#;
    assert_eq!(one_i64(&ctx, sql).await, 1);
    let commit = std::fs::read_to_string(dir.join("_delta_log/00000000000000000001.json")).unwrap();
    let company = "col-173b4db9-b5ad-427f-9e75-516aae37fbbb";
    let name = "col-3877fd94-0973-4941-ac6b-646849a1ff65";
    let adds: Vec<serde_json::Value> = (commit.lines())
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter_map(|a| a.get("add").cloned())
        .collect();
    assert_eq!(adds.len(), 2, "{commit}");
    let mut companies: Vec<&str> = (adds.iter())
        .map(|a| a["partitionValues"][company].as_str().unwrap())
        .collect();
    companies.sort();
    assert_eq!(companies, ["BMS", "NEW"]);
    for add in &adds {
        let stats: serde_json::Value =
            serde_json::from_str(add["stats"].as_str().unwrap()).unwrap();
        assert!(stats["minValues"][name].is_string(), "{stats}");
        let file = dir.join(add["path"].as_str().unwrap());
        assert_eq!(parquet_field_ids(&file).get(name), Some(&2), "{file:?}");
    }
}

/// An empty table in `dir` (version 0) with the Delta `schema` (JSON text), `configuration` and
/// a protocol with variants, invariants and CHECK constraints.
fn empty_table(dir: &Path, schema: serde_json::Value, configuration: serde_json::Value) {
    let log = [
        serde_json::json!({"protocol": {"minReaderVersion": 3, "minWriterVersion": 7,
            "readerFeatures": ["variantType"],
            "writerFeatures": ["variantType", "invariants", "checkConstraints"]}}),
        serde_json::json!({"metaData": {"id": "rules", "format": {"provider": "parquet", "options": {}},
            "schemaString": schema.to_string(), "partitionColumns": [],
            "configuration": configuration, "createdTime": 0}}),
    ];
    std::fs::create_dir_all(dir.join("_delta_log")).unwrap();
    let text: String = log.iter().map(|a| format!("{a}\n")).collect();
    std::fs::write(dir.join("_delta_log/00000000000000000000.json"), text).unwrap();
}

/// The newest version of the table at `dir`, as deltalake-core reads its log.
async fn version_of(dir: &Path) -> i64 {
    let url = url::Url::from_directory_path(dir).unwrap();
    let table = deltalake_core::open_table(url).await.unwrap();
    table.version().unwrap() as i64
}

/// Appends check the rows against the table's rules: NOT NULL fields inside columns (where
/// what holds them is not NULL), column invariants and CHECK constraints (false or NULL fails);
/// a failing append commits nothing and leaves no file; a rule that cannot be planned refuses
/// the append before anything is written.
#[tokio::test]
async fn appends_keep_the_tables_rules() {
    let dir = common::scratch_dir("delta", "rules");
    let schema = serde_json::json!({"type": "struct", "fields": [
        {"name": "x", "type": "long", "nullable": true,
         "metadata": {"delta.invariants": "{\"expression\": {\"expression\": \"x > 3\"}}"}},
        {"name": "s", "type": {"type": "struct", "fields": [
            {"name": "a", "type": "long", "nullable": false, "metadata": {}}]},
         "nullable": true, "metadata": {}},
        {"name": "v", "type": "variant", "nullable": true, "metadata": {}}]});
    empty_table(
        &dir,
        schema,
        serde_json::json!({"delta.constraints.small_a": "coalesce(s.a, 0) < 100",
            "delta.constraints.v_n_positive": "variant_get(v, '$.n', 'int') > 0"}),
    );
    let ctx = session_context();
    let create = format!(
        "CREATE EXTERNAL TABLE t STORED AS DELTATABLE LOCATION '{}'",
        dir.display()
    );
    ctx.sql(&create).await.unwrap().collect().await.unwrap();
    let good = "SELECT 4 + n AS x, named_struct('a', n) AS s, \
                parse_json('{\"n\": ' || (n + 1) || '}') AS v FROM generate_series(0, 9) AS g(n)";
    assert_eq!(one_u64(&ctx, &format!("INSERT INTO t {good}")).await, 10);
    // a NULL struct holds no field: its non-nullable field's NULL there is fine (and the CHECK
    // constraint on the field is written to be true there: a NULL would fail it)
    let null_struct = "INSERT INTO t SELECT 50, CASE WHEN false THEN named_struct('a', 1) END, parse_json('{\"n\": 1}')";
    assert_eq!(one_u64(&ctx, null_struct).await, 1);
    assert_eq!(version_of(&dir).await, 2);

    let root = url::Url::from_directory_path(&*dir).unwrap();
    let refused = [
        (
            "SELECT 5, named_struct('a', CAST(NULL AS BIGINT)), parse_json('{\"n\": 1}')",
            "NOT NULL constraint violated for column s.a".to_string(),
        ),
        (
            "SELECT CASE WHEN n = 7 THEN 2 ELSE 5 END, named_struct('a', 1), \
             parse_json('{\"n\": 1}') FROM generate_series(1, 10) AS g(n)",
            format!("Delta table at {root}: invariant of column x (x > 3) violated by row with values: x: 2; nothing was appended"),
        ),
        (
            "SELECT CAST(NULL AS BIGINT), named_struct('a', 1), parse_json('{\"n\": 1}')",
            "invariant of column x (x > 3) violated by row with values: x: NULL".to_string(),
        ),
        (
            "SELECT 5, named_struct('a', 100), parse_json('{\"n\": 1}')",
            "CHECK constraint small_a (coalesce(s.a, 0) < 100) violated by row with values: s: {a:100}".to_string(),
        ),
        (
            "SELECT 5, named_struct('a', 1), parse_json('{\"n\": -3, \"m\": [1]}')",
            "CHECK constraint v_n_positive (variant_get(v, '$.n', 'int') > 0) violated by row \
             with values: v: {\"m\":[1],\"n\":-3}"
                .to_string(),
        ),
    ];
    for (rows, expected) in refused {
        let error = error_of(&ctx, &format!("INSERT INTO t {rows}")).await;
        assert!(error.contains(&expected), "{rows}:\n{error}");
    }
    // the checks travel with the plan (as to a worker) and hold where it runs
    let plan = common::plan(
        &ctx,
        "INSERT INTO t SELECT 2, named_struct('a', 1), parse_json('{\"n\": 1}')",
    )
    .await;
    let bytes = datafusion_parquet_variant::plan_codec::physical_plan_to_bytes(plan).unwrap();
    let worker = session_context();
    let decoded = datafusion_parquet_variant::plan_codec::physical_plan_from_bytes(
        &bytes,
        &worker.task_ctx(),
    )
    .unwrap();
    let error = collect(decoded, worker.task_ctx()).await.unwrap_err();
    assert!(
        error
            .to_string()
            .contains("invariant of column x (x > 3) violated by row with values: x: 2"),
        "{error}"
    );
    // none of them committed or left a file
    assert_eq!(version_of(&dir).await, 2);
    assert_eq!(one_i64(&ctx, "SELECT count(*) FROM t").await, 11);
    assert_eq!(data_files(&dir).len(), 2, "{:?}", data_files(&dir));

    // a constraint this engine cannot evaluate refuses the append while it is planned
    let strange = common::scratch_dir("delta", "rules-strange");
    empty_table(
        &strange,
        serde_json::json!({"type": "struct", "fields": [
            {"name": "x", "type": "long", "nullable": true, "metadata": {}}]}),
        serde_json::json!({"delta.constraints.odd": "spark_only_function(x)"}),
    );
    let create = format!(
        "CREATE EXTERNAL TABLE strange STORED AS DELTATABLE LOCATION '{}'",
        strange.display()
    );
    ctx.sql(&create).await.unwrap().collect().await.unwrap();
    let error = error_of(&ctx, "INSERT INTO strange VALUES (1)").await;
    assert!(
        error.contains("the CHECK constraint odd (spark_only_function(x)) cannot be checked here"),
        "{error}"
    );
    assert_eq!(version_of(&strange).await, 0);
    assert_eq!(data_files(&strange), Vec::<String>::new());
}

/// The hidden write folders (`.variant-write-*`) under the table folder `dir` that hold files.
fn staged_files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(".variant-write-")
        })
        .map(|e| {
            let mut count = 0;
            let mut folders = vec![e.path()];
            while let Some(folder) = folders.pop() {
                for entry in std::fs::read_dir(folder).into_iter().flatten().flatten() {
                    if entry.path().is_dir() {
                        folders.push(entry.path());
                    } else {
                        count += 1;
                    }
                }
            }
            count
        })
        .sum()
}

/// An append dropped half way (the query cancelled: its future dropped, as Ctrl-C does) leaves
/// no version and, within moments, no file of its own: what it staged is deleted by its drop
/// guard.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_append_leaves_nothing() {
    let dir = common::scratch_dir("delta", "cancelled");
    let ctx = session_context();
    let create = format!(
        "CREATE EXTERNAL TABLE t (id BIGINT, v VARIANT) STORED AS DELTATABLE LOCATION '{}'",
        dir.display()
    );
    ctx.sql(&create).await.unwrap().collect().await.unwrap();
    for setting in [
        "SET datafusion.execution.soft_max_rows_per_output_file = 1000",
        "SET datafusion.execution.batch_size = 1000",
    ] {
        ctx.sql(setting).await.unwrap().collect().await.unwrap();
    }
    let insert = "INSERT INTO t SELECT n, parse_json('{\"n\": ' || n || ', \"pad\": \"' || \
                  repeat('x', 200) || '\"}') FROM generate_series(1, 100000000) AS s(n)";
    let plan = common::plan(&ctx, insert).await;
    let task = tokio::spawn(collect(plan, ctx.task_ctx()));
    // until files of it are staged
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while staged_files(&dir) < 3 {
        assert!(std::time::Instant::now() < deadline, "nothing was staged");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    // the drop guard cleans up in the background
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while staged_files(&dir) > 0 || !data_files(&dir).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "left behind: {} staged, {:?}",
            staged_files(&dir),
            data_files(&dir)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(version_of(&dir).await, 0);
    assert_eq!(one_i64(&ctx, "SELECT count(*) FROM t").await, 0);
}
