//! The sqllogictest engine from Rust, with an application's own session: a table and a function
//! of the application's, and the plugin, in the session every file runs in.
use std::sync::Arc;

use datafusion::arrow::array::{Int32Array, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::datasource::MemTable;
use datafusion::logical_expr::{ColumnarValue, Volatility, create_udf};
use datafusion::prelude::SessionContext;
use datafusion_parquet_variant::slt::{SessionFactory, collect_files, run_files};

mod common;

fn app_session() -> datafusion::error::Result<SessionContext> {
    let ctx = SessionContext::new();
    datafusion_parquet_variant::register_all(&ctx)?;
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int32, false),
        Field::new("doc", DataType::Utf8, false),
    ]));
    let batch = RecordBatch::try_new(
        Arc::clone(&schema),
        vec![
            Arc::new(Int32Array::from(vec![1, 2])),
            Arc::new(StringArray::from(vec![r#"{"a":1}"#, r#"{"a":[2,3]}"#])),
        ],
    )?;
    ctx.register_table(
        "docs",
        Arc::new(MemTable::try_new(schema, vec![vec![batch]])?),
    )?;
    ctx.register_udf(create_udf(
        "answer",
        vec![],
        DataType::Int32,
        Volatility::Immutable,
        Arc::new(|_| Ok(ColumnarValue::Scalar(42i32.into()))),
    ));
    Ok(ctx)
}

#[tokio::test]
async fn an_application_runs_its_suite_in_its_own_session() {
    let dir = common::scratch_dir("slt_engine", "suite");
    std::fs::write(
        dir.join("app.slt"),
        "query IT\nSELECT id, parse_json(doc):a FROM docs ORDER BY id\n----\n1 1\n2 [2,3]\n\n\
         query I\nSELECT answer()\n----\n42\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("wrong.slt"),
        "query I\nSELECT answer()\n----\n41\n",
    )
    .unwrap();
    let session: SessionFactory = Arc::new(app_session);
    let app = collect_files(&[dir.join("app.slt").display().to_string()]).unwrap();
    assert_eq!(run_files(app, Arc::clone(&session), 1, false).await, 0);
    let all = collect_files(&[dir.display().to_string()]).unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(run_files(all, session, 2, false).await, 1);
}
