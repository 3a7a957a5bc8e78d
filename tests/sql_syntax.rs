//! `:` bound as Spark binds it through the library's entry points, and what
//! `SessionContext::sql` (whose parser DataFusion 55 gives no hook) does with the same text.
use datafusion::arrow::array::AsArray;
use datafusion::arrow::datatypes::Int64Type;
use datafusion::prelude::SessionContext;
use datafusion_parquet_variant::register_all;
use datafusion_parquet_variant::sql::{parse_sql, run_sql};

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
