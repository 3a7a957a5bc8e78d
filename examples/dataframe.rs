//! Variants through DataFusion's DataFrame API with `expr_fn`: parse JSON, filter and group on
//! typed paths, write shredded Parquet and read a path back from its leaf.
//!
//! Run with `cargo run --example dataframe`.
use datafusion::arrow::datatypes::DataType;
use datafusion::dataframe::DataFrameWriteOptions;
use datafusion::error::Result;
use datafusion::functions_aggregate::expr_fn::{count, sum};
use datafusion::prelude::*;
use datafusion_parquet_variant::expr_fn::{parse_json, to_json, variant_get};

#[tokio::main]
async fn main() -> Result<()> {
    let ctx = SessionContext::new();
    datafusion_parquet_variant::register_all(&ctx)?;

    let raw = ctx.read_batch(datafusion::arrow::record_batch::RecordBatch::try_from_iter(
        [(
            "json",
            std::sync::Arc::new(datafusion::arrow::array::StringArray::from(vec![
                r#"{"user": {"id": 7, "country": "DE"}, "amount": 12.5}"#,
                r#"{"user": {"id": 9, "country": "FR"}, "amount": 3}"#,
                r#"{"user": {"id": 11, "country": "DE"}, "amount": 8}"#,
            ])) as _,
        )],
    )?)?;
    let events = raw.select(vec![parse_json(col("json")).alias("v")])?;

    // typed paths, as `v:user.country::string` and `v:amount::double` in SQL
    let country = variant_get(col("v"), "$.user.country", Some(DataType::Utf8));
    let amount = variant_get(col("v"), "$.amount", Some(DataType::Float64));
    events
        .clone()
        .filter(amount.clone().gt(lit(5.0)))?
        .aggregate(
            vec![country.alias("country")],
            vec![count(lit(1)).alias("n"), sum(amount).alias("total")],
        )?
        .sort(vec![col("country").sort(true, false)])?
        .show()
        .await?;

    // written as Parquet, the variant shredded (automatically, from its rows)
    let dir = std::env::temp_dir().join("datafusion-parquet-variant-dataframe-example");
    let _ = std::fs::remove_dir_all(&dir);
    let path = dir.join("events.parquet");
    let path = path.to_str().expect("a UTF-8 path");
    events
        .write_parquet(path, DataFrameWriteOptions::new(), None)
        .await?;
    ctx.register_parquet("events", path, ParquetReadOptions::default())
        .await?;
    ctx.table("events")
        .await?
        .select(vec![
            variant_get(col("v"), "$.user.id", Some(DataType::Int64)).alias("id"),
            to_json(variant_get(col("v"), "$.user", None)).alias("user"),
        ])?
        .show()
        .await?;
    Ok(())
}
