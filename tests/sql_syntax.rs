//! `:` bound as Spark binds it through the library's entry points, and what
//! `SessionContext::sql` (whose parser DataFusion 55 gives no hook) does with the same text;
//! subscripts and `->`/`->>` on variants in a plain session.
use datafusion::arrow::array::AsArray;
use datafusion::arrow::datatypes::Int64Type;
use datafusion::prelude::SessionContext;
use datafusion_parquet_variant::register_all;
use datafusion_parquet_variant::sql::{parse_sql, run_sql};

mod common;

const QUERY: &str = "SELECT 1 + v:a::int * 2 AS x FROM (SELECT parse_json('{\"a\": 5}') AS v)";

#[tokio::test]
async fn run_sql_binds_colon_as_spark() {
    let ctx = SessionContext::new();
    register_all(&ctx).unwrap();
    let batches = run_sql(&ctx, QUERY).await.unwrap().collect().await.unwrap();
    // 1 + (5 * 2), Spark's answer
    let x = batches[0].column(0).as_primitive::<Int64Type>();
    assert_eq!((x.len(), x.value(0)), (1, 11));

    // several statements parse; each is rebound
    let statements = parse_sql(&ctx.state(), &format!("{QUERY}; SELECT -v:a::int FROM t")).unwrap();
    assert_eq!(statements[1].to_string(), "SELECT -(v:a)::INT FROM t");

    // one statement, as SessionContext::sql
    let err = run_sql(&ctx, "SELECT 1; SELECT 2").await.unwrap_err();
    assert!(err.to_string().contains("single SQL statement"), "{err}");
}

#[tokio::test]
async fn session_sql_names_the_fix_instead_of_misreading() {
    let ctx = SessionContext::new();
    register_all(&ctx).unwrap();
    let err = ctx.sql(QUERY).await.unwrap_err().to_string();
    assert!(
        err.contains("binds `:` more loosely than `+`") && err.contains("run_sql"),
        "{err}"
    );
    // parentheses around the path read the same in every parser
    let batches = ctx
        .sql("SELECT 1 + (v:a)::int * 2 FROM (SELECT parse_json('{\"a\": 5}') AS v)")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert_eq!(
        batches[0].column(0).as_primitive::<Int64Type>().value(0),
        11
    );
}

/// `v['a']['b']`, `->` and `->>` in a plain `SessionContext` given `register_all` (no entry point
/// of ours): the planner goes before DataFusion's field access planner, which would take
/// `v['user']` for a struct's field; the session keeps every function under its own name.
#[tokio::test]
async fn paths_in_plain_sessions() {
    use datafusion::arrow::array::StringArray;
    use datafusion::logical_expr::{ColumnarValue, ScalarUDF, Volatility, create_udf};

    let ctx = SessionContext::new();
    // an application's function that takes a name of DataFusion's (`date_trunc`, whose alias
    // `datetrunc` stays DataFusion's)
    let mine: ScalarUDF = create_udf(
        "date_trunc",
        vec![datafusion::arrow::datatypes::DataType::Int64],
        datafusion::arrow::datatypes::DataType::Int64,
        Volatility::Immutable,
        std::sync::Arc::new(|_: &[ColumnarValue]| {
            Ok(ColumnarValue::Scalar(
                datafusion::common::ScalarValue::Int64(Some(42)),
            ))
        }),
    );
    ctx.register_udf(mine);
    let session_id = ctx.session_id();
    register_all(&ctx).unwrap();
    assert_eq!(ctx.session_id(), session_id);

    let sql = "SELECT v['user']['id']::int AS id, v->>'kind' AS kind, v->'items'->1 AS second \
               FROM (SELECT parse_json('{\"user\": {\"id\": \"7\"}, \"kind\": \"click\", \"items\": [1, 2]}') AS v)";
    let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
    let id = batches[0]
        .column(0)
        .as_primitive::<datafusion::arrow::datatypes::Int32Type>();
    assert_eq!(id.value(0), 7);
    let kind = batches[0]
        .column(1)
        .as_any()
        .downcast_ref::<StringArray>()
        .unwrap();
    assert_eq!(kind.value(0), "click");

    // the application's date_trunc is still the one `date_trunc` names
    let batches = ctx
        .sql("SELECT date_trunc(1)")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert_eq!(
        batches[0].column(0).as_primitive::<Int64Type>().value(0),
        42
    );
    // what DataFusion takes only when a state is built: the VARIANT type name, a union's
    // widening to VARIANT (an analyzer rule before DataFusion's type coercion)
    ctx.sql("CREATE TABLE typed (v VARIANT)").await.unwrap();
    let batches = ctx
        .sql("SELECT to_json(x) FROM (SELECT parse_json('1') AS x UNION ALL SELECT 'two')")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 2);
    // and structs keep DataFusion's field access
    let batches = ctx
        .sql("SELECT named_struct('a', 5)['a']")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert_eq!(batches[0].column(0).as_primitive::<Int64Type>().value(0), 5);
}

/// A table of DataFusion's own `register_parquet` holds a shredded file's VARIANT column as the
/// file lays it out (`metadata`, `value`, `typed_value`, no extension): paths on it are paths
/// into the variant, with the same answers as through our Parquet table.
#[tokio::test]
async fn paths_on_datafusions_own_parquet_tables() {
    use datafusion::arrow::array::StringArray;
    use datafusion::arrow::datatypes::Int32Type;
    use datafusion::prelude::ParquetReadOptions;

    let ctx = SessionContext::new();
    register_all(&ctx).unwrap();
    let file = common::TempPath::parquet_file("sql-syntax-register-parquet");
    let file = file.to_str().unwrap();
    ctx.sql(&format!(
        "COPY (SELECT parse_json(j) AS v FROM (VALUES ('{{\"user\": {{\"id\": 7}}, \"kind\": \"click\"}}'), \
         ('{{\"user\": {{\"id\": 9}}, \"kind\": [1]}}')) AS t(j)) TO '{file}' STORED AS PARQUET \
         OPTIONS ('variant.shred.v' 'struct<user struct<id bigint>, kind string>')"
    ))
    .await
    .unwrap()
    .collect()
    .await
    .unwrap();
    ctx.register_parquet("raw", file, ParquetReadOptions::default())
        .await
        .unwrap();
    let batches = ctx
        .sql("SELECT v['user']['id']::int AS id, v->>'kind' AS kind FROM raw ORDER BY id")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let ids = batches[0].column(0).as_primitive::<Int32Type>();
    assert_eq!((ids.value(0), ids.value(1)), (7, 9));
    let kinds = batches[0]
        .column(1)
        .as_any()
        .downcast_ref::<StringArray>()
        .unwrap();
    // the second kind is not shredded (an array): read from the residual value, as JSON text
    assert_eq!((kinds.value(0), kinds.value(1)), ("click", "[1]"));
}
