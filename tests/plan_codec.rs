//! Plans encoded with our codecs and decoded in a fresh session (`register_all`, no tables):
//! what the slt round trip (tests/plan_round_trip.rs) cannot see from results alone. Variant
//! fields, the shredded-leaf pushdown of scans, planned paths, the sink's shredding and staging,
//! the logical codec, and corrupt bytes.
mod common;

use std::path::Path;
use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::catalog::TableProvider;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::datasource::file_format::FileFormatFactory;
use datafusion::datasource::file_format::csv::CsvFormatFactory;
use datafusion::datasource::memory::DataSourceExec;
use datafusion::datasource::physical_plan::FileScanConfig;
use datafusion::datasource::source_as_provider;
use datafusion::execution::TaskContext;
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_expr::ScalarFunctionExpr;
use datafusion::physical_plan::projection::ProjectionExec;
use datafusion::physical_plan::{ExecutionPlan, collect};
use datafusion::prelude::SessionContext;
use datafusion_parquet_variant::codec::VariantPath;
use datafusion_parquet_variant::functions::try_variant_get::TryVariantGet;
use datafusion_parquet_variant::functions::variant_get::VariantGet;
use datafusion_parquet_variant::parquet::input_sample::{SampleExec, SampleOf};
use datafusion_parquet_variant::parquet::{
    ShreddingOptions, VariantParquetFormatFactory, VariantParquetSource, VariantParquetTable,
};
use datafusion_parquet_variant::plan_codec::{
    VariantLogicalCodec, logical_plan_from_bytes, logical_plan_to_bytes, physical_plan_from_bytes,
    physical_plan_to_bytes,
};
use datafusion_parquet_variant::session_context;
use datafusion_parquet_variant::variant_array::is_variant_field;
use datafusion_proto::logical_plan::LogicalExtensionCodec;

/// Plans `sql` in `ctx`, encodes the physical plan and decodes it in a fresh session; returns
/// the decoded plan and the fresh session's task context.
async fn ship(ctx: &SessionContext, sql: &str) -> (Arc<dyn ExecutionPlan>, Arc<TaskContext>) {
    let plan = common::plan(ctx, sql).await;
    let bytes = physical_plan_to_bytes(plan).unwrap();
    let receiver = session_context().task_ctx();
    let decoded = physical_plan_from_bytes(&bytes, &receiver).unwrap();
    (decoded, receiver)
}

fn pretty(batches: &[RecordBatch]) -> String {
    pretty_format_batches(batches).unwrap().to_string()
}

/// The first node of `plan` (depth first) that is a `T`.
fn find<T: ExecutionPlan + 'static>(
    plan: &Arc<dyn ExecutionPlan>,
) -> Option<Arc<dyn ExecutionPlan>> {
    let mut found = None;
    plan.apply(|node| {
        if node.downcast_ref::<T>().is_some() {
            found = Some(Arc::clone(node));
            return Ok(TreeNodeRecursion::Stop);
        }
        Ok(TreeNodeRecursion::Continue)
    })
    .unwrap();
    found
}

const DOCS: &str = r#"(VALUES (1, '{"a": 1, "b": "x", "c": [{"d": 10}]}'),
                               (2, '{"a": "27", "b": "y"}'),
                               (3, '{"z": true}'),
                               (4, NULL)) AS t(id, j)"#;

#[tokio::test]
async fn variant_results_keep_their_type_after_decoding() {
    let ctx = session_context();
    let sql = format!("SELECT id, parse_json(j) AS v FROM {DOCS}");
    let plan = common::plan(&ctx, &sql).await;
    assert!(is_variant_field(plan.schema().field(1)));
    let bytes = physical_plan_to_bytes(Arc::clone(&plan)).unwrap();
    let receiver = session_context().task_ctx();

    // DataFusion 55's own decoding drops the extension of a function's result (when this fails,
    // DataFusion keeps it and `restore_variant_fields` can go) ...
    let raw = datafusion_proto::bytes::physical_plan_from_bytes_with_extension_codec(
        &bytes,
        &receiver,
        &datafusion_parquet_variant::plan_codec::VariantPhysicalCodec::default(),
    )
    .unwrap();
    assert!(!is_variant_field(raw.schema().field(1)));
    // ... which ours puts back, on the projection and on what the plan produces
    let decoded = physical_plan_from_bytes(&bytes, &receiver).unwrap();
    assert!(is_variant_field(decoded.schema().field(1)));
    let batches = collect(decoded, receiver).await.unwrap();
    assert!(is_variant_field(batches[0].schema().field(1)));
}

#[tokio::test]
async fn planned_paths_travel_with_the_functions() {
    let ctx = session_context();
    let sql = format!(
        "SELECT variant_get(v, '$.c[0].d', 'int') AS d, try_variant_get(v, '$[\"b\"]', 'string') AS b
         FROM (SELECT parse_json(j) AS v FROM {DOCS})"
    );
    let (decoded, receiver) = ship(&ctx, &sql).await;
    let mut paths = vec![];
    decoded
        .apply(|node| {
            if let Some(projection) = node.downcast_ref::<ProjectionExec>() {
                for p in projection.expr() {
                    p.expr.apply(|e| {
                        if let Some(call) = e.downcast_ref::<ScalarFunctionExpr>() {
                            let inner = call.fun().inner();
                            let path = match (
                                inner.downcast_ref::<VariantGet>(),
                                inner.downcast_ref::<TryVariantGet>(),
                            ) {
                                (Some(get), _) => Some(get.path().cloned()),
                                (_, Some(get)) => Some(get.path().cloned()),
                                _ => None,
                            };
                            if let Some(path) = path {
                                paths.push((call.name().to_string(), path));
                            }
                        }
                        Ok(TreeNodeRecursion::Continue)
                    })?;
                }
            }
            Ok(TreeNodeRecursion::Continue)
        })
        .unwrap();
    // the typed variant_get is planned in its deferred form; both paths parsed at planning
    assert_eq!(
        paths,
        vec![
            (
                "variant_get_deferred".to_string(),
                Some(VariantPath::parse("$.c[0].d").unwrap())
            ),
            (
                "try_variant_get".to_string(),
                Some(VariantPath::parse("$.b").unwrap())
            ),
        ]
    );
    let expected = [
        "+----+---+",
        "| d  | b |",
        "+----+---+",
        "| 10 | x |",
        "|    | y |",
        "|    |   |",
        "|    |   |",
        "+----+---+",
    ];
    let batches = collect(decoded, receiver).await.unwrap();
    assert_eq!(pretty(&batches), expected.join("\n"));
}

/// A session with the table `events`: a shredded file of 2000 rows (`v` shredded on `a` and
/// `b`) in a scratch folder of its own, removed when the folder returned beside it is dropped.
async fn shredded_events(name: &str) -> (SessionContext, common::TempPath) {
    let dir = common::scratch_dir("plan-codec", name);
    let file = dir.join("events.parquet");
    let ctx = session_context();
    write_shredded(&ctx, &file).await;
    let table = format!(
        "CREATE EXTERNAL TABLE events STORED AS PARQUET LOCATION '{}'",
        file.display()
    );
    common::run(&ctx, &table).await;
    (ctx, dir)
}

/// Writes a shredded file of 2000 rows (`v` shredded on `a` and `b`) at `path`.
async fn write_shredded(ctx: &SessionContext, path: &Path) {
    let sql = format!(
        r#"COPY (SELECT i AS id,
                 parse_json('{{"a": ' || i || ', "b": "s' || (i % 7) || '", "rest": [' || i || ']}}') AS v
                 FROM generate_series(1, 2000) AS g(i))
           TO '{}' STORED AS PARQUET
           OPTIONS ('variant.shred.v' 'struct<a bigint, b string>')"#,
        path.display()
    );
    common::run(ctx, &sql).await;
}

#[tokio::test]
async fn shredded_scans_keep_their_pushdown() {
    let (ctx, _dir) = shredded_events("scan").await;
    let sql =
        "SELECT variant_get(v, '$.b', 'string') AS b, sum(variant_get(v, '$.a', 'bigint')) AS a
               FROM events WHERE variant_get(v, '$.a', 'bigint') > 1000 GROUP BY 1 ORDER BY 1";

    // the same query in one process, for the results and the bytes read
    let local = common::plan(&ctx, sql).await;
    let local_batches = collect(Arc::clone(&local), ctx.task_ctx()).await.unwrap();

    let (decoded, receiver) = ship(&ctx, sql).await;
    let scan = find::<DataSourceExec>(&decoded).expect("a scan");
    let scan = scan.downcast_ref::<DataSourceExec>().unwrap();
    let config = scan.data_source().downcast_ref::<FileScanConfig>().unwrap();
    let source = config
        .file_source
        .downcast_ref::<VariantParquetSource>()
        .expect("our source after decoding");
    let adapter = source.adapter().expect("the variant adapter");
    let used = config
        .expr_adapter_factory
        .as_ref()
        .expect("an adapter on the scan");
    assert!(std::ptr::addr_eq(Arc::as_ptr(adapter), Arc::as_ptr(used)));

    let batches = collect(Arc::clone(&decoded), receiver).await.unwrap();
    assert_eq!(pretty(&batches), pretty(&local_batches));
    // one group per `b` (s0 .. s6)
    assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 7);

    // the decoded scan read the shredded leaves, and exactly the bytes the local one read
    assert!(common::metric_sum(decoded.as_ref(), "variant_paths_from_shredded_leaves") > 0);
    assert_eq!(
        common::metric_sum(decoded.as_ref(), "bytes_scanned"),
        common::metric_sum(local.as_ref(), "bytes_scanned")
    );
    assert!(common::metric_sum(local.as_ref(), "bytes_scanned") > 0);
}

#[tokio::test]
async fn writes_from_decoded_plans_are_variant_shredded_and_staged() {
    let dir = common::scratch_dir("plan-codec", "copy");
    let ctx = session_context();
    // a name that needs encoding, as the staged names made from it do
    let explicit = dir.join("explicit ~#%.parquet");
    let automatic = dir.join("automatic");
    let select = "SELECT i AS id, parse_json('{\"a\": ' || i || ', \"b\": \"s\"}') AS v
                  FROM generate_series(1, 100) AS g(i)";
    let copies = [
        format!(
            "COPY ({select}) TO '{}' STORED AS PARQUET
             OPTIONS ('variant.shred.v' 'struct<a bigint>')",
            explicit.display()
        ),
        format!(
            "COPY ({select}) TO '{}/' STORED AS PARQUET PARTITIONED BY (id)",
            automatic.display()
        ),
    ];
    for copy in &copies {
        let (decoded, receiver) = ship(&ctx, copy).await;
        let rows = collect(decoded, receiver).await.unwrap();
        assert_eq!(pretty(&rows).matches("| 100   |").count(), 1, "{copy}");
    }
    // the explicit type, through the decoded shredding projection and sink
    let schema = common::parquet_schema_text(&explicit);
    assert!(schema.contains("group v (VARIANT(Some(1)))"), "{schema}");
    assert!(schema.contains("REQUIRED group a {"), "{schema}");
    assert!(schema.contains("OPTIONAL INT64 typed_value;"), "{schema}");
    assert!(!schema.contains("group b"), "{schema}");
    // automatic shredding, in each partition's file; nothing left under staging names
    let mut files = vec![];
    for partition in std::fs::read_dir(&automatic).unwrap() {
        let partition = partition.unwrap().path();
        let name = partition
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(name.starts_with("id="), "a staging folder was left: {name}");
        for file in std::fs::read_dir(&partition).unwrap() {
            files.push(file.unwrap().path());
        }
    }
    assert_eq!(files.len(), 100);
    let schema = common::parquet_schema_text(&files[0]);
    assert!(schema.contains("REQUIRED group a {"), "{schema}");
    assert!(schema.contains("REQUIRED group b {"), "{schema}");
    assert!(
        schema.contains("OPTIONAL BYTE_ARRAY typed_value (STRING);"),
        "{schema}"
    );

    // an unsorted write's sampler of its partitions' first rows travels
    let unsorted = dir.join("unsorted.parquet");
    let copy = format!(
        "COPY ({select}) TO '{}' STORED AS PARQUET",
        unsorted.display()
    );
    let (decoded, receiver) = ship(&ctx, &copy).await;
    let sampler = find::<SampleExec>(&decoded).expect("a sampler");
    let sampler = sampler.downcast_ref::<SampleExec>().unwrap();
    assert_eq!(sampler.sample().of(), SampleOf::PartitionHeads);
    collect(decoded, receiver).await.unwrap();
    let schema = common::parquet_schema_text(&unsorted);
    assert!(schema.contains("REQUIRED group a {"), "{schema}");

    // read back in the sending session: the values written are the values planned
    let table = format!(
        "CREATE EXTERNAL TABLE written STORED AS PARQUET LOCATION '{}'",
        explicit.display()
    );
    common::run(&ctx, &table).await;
    let check = "SELECT sum(variant_get(v, '$.a', 'bigint')) FROM written";
    assert_eq!(
        common::first_cell(&ctx, check).await.unwrap().as_deref(),
        Some("5050")
    );
}

#[tokio::test]
async fn logical_plans_carry_the_explode_and_the_parquet_file_type() {
    let ctx = session_context();
    let sql = format!(
        "SELECT t.id, e.key FROM {DOCS}, LATERAL variant_explode(parse_json(t.j)) AS e ORDER BY 1, 2"
    );
    let expected = pretty(&common::run(&ctx, &sql).await);
    // shipped analyzed and optimized, where the lateral explode is an unnest of our hidden
    // list function
    let (decoded, receiver) = ship_logical(&ctx, &sql).await;
    assert!(
        format!("{decoded}").contains("__variant_explode_list"),
        "{decoded}"
    );
    assert_eq!(pretty(&execute(&receiver, decoded).await), expected);

    // COPY's file type: our factory with its shredding options and fixed Parquet options
    let codec = VariantLogicalCodec::default();
    let mut options = datafusion::common::config::TableParquetOptions::default();
    options.global.compression = Some("zstd(3)".to_string());
    let shredding = ShreddingOptions::new()
        .with_column("v", "struct<a bigint, b array<string>>")
        .unwrap()
        .without_shredding("w");
    let factory: Arc<dyn FileFormatFactory> = Arc::new(
        VariantParquetFormatFactory::new_with_options(options.clone())
            .with_shredding(shredding.clone()),
    );
    let mut buf = vec![];
    codec.try_encode_file_format(&mut buf, factory).unwrap();
    let decoded = codec
        .try_decode_file_format(&buf, &receiver.task_ctx())
        .unwrap();
    let decoded = decoded
        .downcast_ref::<VariantParquetFormatFactory>()
        .expect("our factory");
    assert_eq!(decoded.shredding(), &shredding);
    assert_eq!(
        decoded
            .parquet_options()
            .unwrap()
            .global
            .compression
            .as_deref(),
        Some("zstd(3)")
    );
    // other file types go to DataFusion's codec
    let mut buf = vec![];
    codec
        .try_encode_file_format(&mut buf, Arc::new(CsvFormatFactory::new()))
        .unwrap();
    let csv = codec
        .try_decode_file_format(&buf, &receiver.task_ctx())
        .unwrap();
    assert!(csv.downcast_ref::<CsvFormatFactory>().is_some());
}

/// Encodes the optimized logical plan of `sql` in `ctx` with our codec and decodes it in a fresh
/// session (as Ballista ships a query); returns the decoded plan and that session.
async fn ship_logical(ctx: &SessionContext, sql: &str) -> (LogicalPlan, SessionContext) {
    let df = ctx.sql(sql).await.unwrap();
    let plan = ctx.state().optimize(df.logical_plan()).unwrap();
    let bytes = logical_plan_to_bytes(&plan).unwrap();
    let receiver = session_context();
    let decoded = logical_plan_from_bytes(&bytes, &receiver.task_ctx()).unwrap();
    (decoded, receiver)
}

/// The batches of the logical `plan` run in `ctx`.
async fn execute(ctx: &SessionContext, plan: LogicalPlan) -> Vec<RecordBatch> {
    let df = ctx.execute_logical_plan(plan).await.unwrap();
    df.collect().await.unwrap()
}

/// The table the first scan of `plan` reads.
fn scanned_table(plan: &LogicalPlan) -> Arc<dyn TableProvider> {
    let mut found = None;
    plan.apply(|node| {
        if let LogicalPlan::TableScan(scan) = node {
            found = Some(source_as_provider(&scan.source).unwrap());
            return Ok(TreeNodeRecursion::Stop);
        }
        Ok(TreeNodeRecursion::Continue)
    })
    .unwrap();
    found.expect("a table scan")
}

#[tokio::test]
async fn logical_plans_carry_parquet_tables() {
    let dir = common::scratch_dir("plan-codec", "tables");
    let ctx = session_context();
    // two partitions of shredded files, and a file that is not Parquet beside them: the glob
    // DataFusion gives a folder whose schema it infers (`*.parquet`) must travel, or the decoded
    // table reads that file and fails
    let copy = format!(
        r#"COPY (SELECT i AS id, i % 2 AS part,
                 parse_json('{{"a": ' || i || ', "b": "s' || (i % 3) || '"}}') AS v
                 FROM generate_series(1, 100) AS g(i))
           TO '{}/' STORED AS PARQUET PARTITIONED BY (part)
           OPTIONS ('variant.shred.v' 'struct<a bigint, b string>')"#,
        dir.display()
    );
    common::run(&ctx, &copy).await;
    std::fs::write(dir.join("part=1").join("notes.txt"), "not parquet").unwrap();
    let create = format!(
        "CREATE EXTERNAL TABLE events
         STORED AS PARQUET PARTITIONED BY (part) WITH ORDER (id ASC) LOCATION '{}/'
         OPTIONS ('variant.shred.v' 'struct<a bigint, never string>')",
        dir.display()
    );
    common::run(&ctx, &create).await;

    // a query: variant paths, a partition filter, the declared order
    let sql = "SELECT id, variant_get(v, '$.b', 'string') AS b FROM events
               WHERE part = 1 AND variant_get(v, '$.a', 'bigint') > 90 ORDER BY id";
    let expected = pretty(&common::run(&ctx, sql).await);
    // 91, 93, .. 99, and i % 3 by hand
    assert_eq!(expected.matches("| s").count(), 5, "{expected}");
    assert!(expected.contains("| 91 | s1 |"), "{expected}");
    let (decoded, receiver) = ship_logical(&ctx, sql).await;

    let provider = scanned_table(&decoded);
    let table = provider
        .downcast_ref::<VariantParquetTable>()
        .expect("our table after decoding");
    let options = table.inner().options();
    assert_eq!(
        options.table_partition_cols,
        [(
            "part".to_string(),
            DataType::Dictionary(Box::new(DataType::UInt16), Box::new(DataType::Utf8))
        )]
    );
    let definition = table.get_table_definition().expect("its statement");
    assert!(
        definition.starts_with("CREATE EXTERNAL TABLE events"),
        "{definition}"
    );
    assert_eq!(options.file_sort_order.len(), 1);
    let paths = table.inner().table_paths();
    assert_eq!(paths.len(), 1);
    assert_eq!(
        paths[0].get_glob().as_ref().map(|glob| glob.as_str()),
        Some("*.parquet")
    );
    assert!(is_variant_field(
        provider.schema().field_with_name("v").unwrap()
    ));

    // planned where it arrived: our scan, reading the shredded leaves
    let plan = receiver
        .state()
        .create_physical_plan(&decoded)
        .await
        .unwrap();
    let scan = find::<DataSourceExec>(&plan).expect("a scan");
    let config = scan
        .downcast_ref::<DataSourceExec>()
        .unwrap()
        .data_source()
        .downcast_ref::<FileScanConfig>()
        .unwrap();
    assert!(
        config
            .file_source
            .downcast_ref::<VariantParquetSource>()
            .is_some()
    );
    let batches = collect(Arc::clone(&plan), receiver.task_ctx())
        .await
        .unwrap();
    assert_eq!(pretty(&batches), expected);
    assert!(common::metric_sum(plan.as_ref(), "variant_paths_from_shredded_leaves") > 0);

    // an INSERT planned where it arrives writes with the table's shredding option (a field no
    // inference from the row would shred)
    let insert = r#"INSERT INTO events VALUES (1000, parse_json('{"a": 7}'), 0)"#;
    let (decoded, receiver) = ship_logical(&ctx, insert).await;
    let written = execute(&receiver, decoded).await;
    assert!(
        pretty(&written).contains("| 1     |"),
        "{}",
        pretty(&written)
    );
    let mut new_files = std::fs::read_dir(dir.join("part=0"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            common::read_parquet_raw(path)
                .iter()
                .any(|batch| batch.num_rows() == 1)
        })
        .collect::<Vec<_>>();
    assert_eq!(new_files.len(), 1, "{new_files:?}");
    let schema = common::parquet_schema_text(&new_files.pop().unwrap());
    assert!(schema.contains(" never "), "{schema}");
    // read in a new session (`ctx` keeps its listing of the files in its cache)
    let reader = session_context();
    common::run(&reader, &create).await;
    let check = "SELECT variant_get(v, '$.a', 'bigint') FROM events WHERE id = 1000";
    assert_eq!(
        common::first_cell(&reader, check).await.unwrap().as_deref(),
        Some("7")
    );
}

#[tokio::test]
async fn corrupt_plan_bytes_are_errors() {
    let (ctx, _dir) = shredded_events("corrupt").await;
    let query =
        "SELECT variant_get(v, '$.a', 'bigint') AS a, to_json(v) AS j FROM events WHERE id < 3";
    let plan = common::plan(&ctx, query).await;
    let bytes = physical_plan_to_bytes(plan).unwrap().to_vec();
    let receiver = session_context().task_ctx();
    assert!(physical_plan_from_bytes(&bytes, &receiver).is_ok());
    // every truncation, and every byte flipped: an error, or a plan that runs to an answer or
    // an error, never a panic (decoding's own panics are caught and become errors)
    let mut refused = 0;
    for len in 0..bytes.len() {
        refused += usize::from(physical_plan_from_bytes(&bytes[..len], &receiver).is_err());
    }
    for i in 0..bytes.len() {
        let mut flipped = bytes.clone();
        flipped[i] ^= 0xff;
        match physical_plan_from_bytes(&flipped, &receiver) {
            Err(_) => refused += 1,
            // a sample of the plans that decode is run (all of them take minutes)
            Ok(plan) if i % 8 == 0 => {
                let _ = collect(plan, Arc::clone(&receiver)).await;
            }
            Ok(_) => {}
        }
    }
    assert!(
        refused > bytes.len(),
        "only {refused} of the corrupt plans were refused"
    );

    // a COPY plan (our sink, its staging and the shredding before it), garbled: decoded only,
    // never run (a garbled write could go anywhere)
    let out_dir = common::scratch_dir("plan-codec", "corrupt-copy");
    let out = out_dir.join("out.parquet");
    let copy = format!(
        "COPY (SELECT id, v FROM events) TO '{}' STORED AS PARQUET \
         OPTIONS ('variant.shred.v' 'struct<a bigint>')",
        out.display()
    );
    let bytes = physical_plan_to_bytes(common::plan(&ctx, &copy).await)
        .unwrap()
        .to_vec();
    assert!(physical_plan_from_bytes(&bytes, &receiver).is_ok());
    let mut refused = 0;
    for i in 0..bytes.len() {
        let mut flipped = bytes.clone();
        flipped[i] ^= 0xff;
        refused += usize::from(physical_plan_from_bytes(&flipped, &receiver).is_err());
        refused += usize::from(physical_plan_from_bytes(&bytes[..i], &receiver).is_err());
    }
    assert!(
        refused > bytes.len(),
        "only {refused} of the corrupt COPY plans were refused"
    );

    // our own nodes' bytes, garbled, through the codec directly
    let codec = VariantLogicalCodec::default();
    let schema = Arc::new(datafusion::arrow::datatypes::Schema::empty());
    let name = datafusion::common::TableReference::bare("t");
    for garbage in [
        &[][..],
        &[1, 0xff, 0xff, 0xff],
        &[7, 1, 2],
        &[1, 10, 1, 0xff],
    ] {
        assert!(codec.try_decode_file_format(garbage, &receiver).is_err());
        let table = codec.try_decode_table_provider(garbage, &name, schema.clone(), &receiver);
        assert!(table.is_err());
    }
    // a table without locations (an empty message, a valid file type), which an INSERT would
    // index
    let table = codec.try_decode_table_provider(&[1], &name, schema, &receiver);
    assert!(table.is_err());
}

/// `payload` as a length-delimited protobuf field `field`.
fn length_delimited(field: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = vec![];
    prost::encoding::encode_key(field, prost::encoding::WireType::LengthDelimited, &mut out);
    prost::encoding::encode_varint(payload.len() as u64, &mut out);
    out.extend_from_slice(payload);
    out
}

#[test]
fn plans_nested_in_our_nodes_are_refused_before_the_stack_runs_out() {
    use datafusion_proto::protobuf::{
        EmptyExecNode, PhysicalExtensionNode, PhysicalPlanNode, Schema,
        physical_plan_node::PhysicalPlanType,
    };
    use prost::Message;
    // our nodes embed plans as bytes of their own, so each level is decoded afresh (prost's
    // depth limit restarts there): a thousand levels, a few kilobytes, must be an error, not a
    // stack overflow that aborts the process
    let empty = PhysicalPlanNode {
        physical_plan_type: Some(PhysicalPlanType::Empty(EmptyExecNode {
            schema: Some(Schema::default()),
            partitions: 1,
        })),
    };
    // `kind` (the field of VariantPlanNode: 1 a scan, 2 a staged sink) holding `plan` as its
    // first field (VariantScanNode.scan, StagedSinkNode.inner), over `inputs`
    let ours = |kind: u32, plan: &[u8], inputs: Vec<PhysicalPlanNode>| {
        let mut node = vec![1]; // (the tag of our codec's nodes)
        node.extend(length_delimited(kind, &length_delimited(1, plan)));
        PhysicalPlanNode {
            physical_plan_type: Some(PhysicalPlanType::Extension(PhysicalExtensionNode {
                node,
                inputs,
            })),
        }
        .encode_to_vec()
    };
    let receiver = session_context().task_ctx();
    let decode = |plan: &[u8]| {
        physical_plan_from_bytes(plan, &receiver)
            .unwrap_err()
            .to_string()
    };
    // a scan embeds a Parquet file scan and nothing else: refused before it is decoded
    let mut plan = empty.encode_to_vec();
    for _ in 0..1000 {
        plan = ours(1, &plan, vec![]);
    }
    let error = decode(&plan);
    assert!(error.contains("it embeds no Parquet file scan"), "{error}");
    // a staged sink embeds a plan of any kind: at most 8 of our nodes one in another
    let mut plan = empty.encode_to_vec();
    for _ in 0..1000 {
        plan = ours(2, &plan, vec![empty.clone()]);
    }
    let error = decode(&plan);
    assert!(
        error.contains("its variant plan nodes nest more than 8 deep"),
        "{error}"
    );
}
