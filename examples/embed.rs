//! Embedding the plugin in a DataFusion application with one call.
//!
//! Run with `cargo run --example embed`.
use datafusion::error::Result;
use datafusion::prelude::SessionContext;

#[tokio::main]
async fn main() -> Result<()> {
    let ctx = SessionContext::new();
    datafusion_parquet_variant::register_all(&ctx)?;

    ctx.sql(
        "CREATE TABLE events AS VALUES
           (1, '{\"user\": {\"id\": 7, \"tags\": [\"a\", \"b\"]}, \"amount\": 12.50}'),
           (2, '{\"user\": {\"id\": 9}, \"amount\": 3}'),
           (3, NULL)",
    )
    .await?;

    // Variant columns print as JSON.
    ctx.sql("SELECT column1 AS id, parse_json(column2) AS payload FROM events")
        .await?
        .show()
        .await?;

    ctx.sql(
        "SELECT column1 AS id, to_json(parse_json(column2)) AS json, \
                is_variant_null(parse_json(column2)) AS is_null \
         FROM events",
    )
    .await?
    .show()
    .await?;
    Ok(())
}
