//! Row groups and pages skipped with the statistics of shredded leaves: only where the predicate
//! is false for every row, never where a row's value sits in a residual `value` (whose values the
//! leaf's statistics do not cover); the answers are those of the same query in memory.
mod common;
use std::path::Path;
use std::sync::Arc;

use common::{metric_sum, proptest_cases, scratch_dir};
use datafusion::physical_plan::collect;
use datafusion::prelude::SessionContext;
use datafusion_parquet_variant::session_context;
use proptest::prelude::*;

fn scratch(name: &str) -> common::TempPath {
    scratch_dir("shredded-pruning-test", name)
}

/// The ids `sql` selects (its first column, sorted), and the row groups pruned by variant paths.
async fn ids(ctx: &SessionContext, sql: &str) -> (Vec<i64>, usize) {
    let (ids, row_groups, _) = ids_and_pruning(ctx, sql).await;
    (ids, row_groups)
}

/// The ids `sql` selects (its first column, sorted), and the row groups and the rows of pages
/// pruned by variant paths.
async fn ids_and_pruning(ctx: &SessionContext, sql: &str) -> (Vec<i64>, usize, usize) {
    let plan = common::plan(ctx, sql).await;
    let batches = collect(Arc::clone(&plan), ctx.task_ctx()).await.unwrap();
    let pruned = metric_sum(plan.as_ref(), "variant_row_groups_pruned");
    let page_rows = metric_sum(plan.as_ref(), "variant_page_rows_pruned");
    let mut ids: Vec<i64> = batches
        .iter()
        .flat_map(|b| {
            let column = datafusion::arrow::compute::cast(
                b.column(0),
                &datafusion::arrow::datatypes::DataType::Int64,
            )
            .unwrap();
            let column = column
                .as_any()
                .downcast_ref::<datafusion::arrow::array::Int64Array>()
                .unwrap()
                .clone();
            column.iter().flatten().collect::<Vec<_>>()
        })
        .collect();
    ids.sort();
    (ids, pruned, page_rows)
}

/// `rows` (`(id, json)`) as table `mem`, and written to `dir` in row groups of `group_rows`
/// rows, shredded as `shredding`, as table `t`.
async fn tables(
    rows: &[(i64, &str)],
    shredding: &str,
    group_rows: usize,
    dir: &Path,
) -> SessionContext {
    tables_with_pages(rows, shredding, group_rows, group_rows, dir).await
}

/// [`tables`] with data pages of at most `page_rows` rows.
async fn tables_with_pages(
    rows: &[(i64, &str)],
    shredding: &str,
    group_rows: usize,
    page_rows: usize,
    dir: &Path,
) -> SessionContext {
    let ctx = session_context();
    let values: Vec<String> = rows
        .iter()
        .map(|(id, json)| format!("({id}, '{}')", json.replace('\'', "''")))
        .collect();
    common::run(
        &ctx,
        &format!(
            "CREATE TABLE mem AS SELECT id, parse_json(j) AS v FROM (VALUES {}) AS r(id, j)",
            values.join(", ")
        ),
    )
    .await;
    let path = dir.join("t.parquet");
    common::run(&ctx, &format!(
        "COPY (SELECT * FROM mem ORDER BY id) TO '{}' STORED AS PARQUET \
         OPTIONS ('variant.shred.v' '{shredding}', 'format.max_row_group_size' '{group_rows}', \
         'format.data_page_row_count_limit' '{page_rows}', 'format.write_batch_size' '{page_rows}')",
        path.display()
    )).await;
    common::run(
        &ctx,
        &format!(
            "CREATE EXTERNAL TABLE t STORED AS PARQUET LOCATION '{}'",
            path.display()
        ),
    )
    .await;
    ctx
}

/// Four row groups of two rows: kinds a/a, b/b, "c" and the number 5 (a residual of another
/// type), "d" and none.
const ROWS: &[(i64, &str)] = &[
    (1, r#"{"kind":"a","n":1}"#),
    (2, r#"{"kind":"a","n":2}"#),
    (3, r#"{"kind":"b","n":3}"#),
    (4, r#"{"kind":"b","n":4}"#),
    (5, r#"{"kind":"c","n":5}"#),
    (6, r#"{"kind":5,"n":6.5e0}"#),
    (7, r#"{"kind":"d","n":7}"#),
    (8, r#"{"n":8}"#),
];

#[tokio::test]
async fn row_groups_are_skipped_only_where_no_row_can_match() {
    let dir = scratch("example");
    let ctx = tables(ROWS, "struct<kind string, n bigint>", 2, &dir).await;
    // (predicate, ids, row groups pruned): the third row group keeps 5 in kind's residual and
    // 6.5 in n's, so it is never skipped on them
    let cases: &[(&str, &[i64], usize)] = &[
        ("v:kind::string = 'c'", &[5], 3),
        ("v:kind::string = 'b'", &[3, 4], 2),
        // "5" matches the residual 5 cast to a string: its row group must be read
        ("v:kind::string = '5'", &[6], 3),
        ("v:kind::string IN ('a', 'd')", &[1, 2, 7], 1),
        ("v:kind::string >= 'c'", &[5, 7], 2),
        ("v:kind::string LIKE 'b%'", &[3, 4], 2),
        ("v:kind::string IS NULL", &[8], 2),
        (
            "v:kind::string = 'c' OR v:kind::string = 'a'",
            &[1, 2, 5],
            2,
        ),
        ("try_variant_get(v, '$.n', 'bigint') > 6", &[7, 8], 2),
        (
            "try_variant_get(v, '$.n', 'bigint') BETWEEN 2 AND 3",
            &[2, 3],
            1,
        ),
        ("try_variant_get(v, '$.n', 'bigint') < 2", &[1], 2),
        // a leaf of another type than asked for: its statistics are not used
        ("v:n::double > 6.4", &[6, 7, 8], 0),
        // not shredded: nothing to prune with
        ("v:zz::string = 'x'", &[], 0),
        // a path the file shreds, beside one it does not: the shredded conjunct prunes
        ("v:kind::string = 'a' AND v:zz::string IS NULL", &[1, 2], 2),
    ];
    for pushdown in [false, true] {
        ctx.sql(&format!(
            "SET datafusion.execution.parquet.pushdown_filters = {pushdown}"
        ))
        .await
        .unwrap();
        for (predicate, expected, pruned) in cases {
            let (in_memory, _) = ids(&ctx, &format!("SELECT id FROM mem WHERE {predicate}")).await;
            assert_eq!(&in_memory, expected, "memory: {predicate}");
            let (got, got_pruned) = ids(&ctx, &format!("SELECT id FROM t WHERE {predicate}")).await;
            assert_eq!(&got, expected, "file: {predicate} (pushdown {pushdown})");
            assert_eq!(
                got_pruned, *pruned,
                "pruned by {predicate} (pushdown {pushdown})"
            );
        }
    }
}

#[tokio::test]
async fn pages_are_skipped_only_where_no_row_can_match() {
    let dir = scratch("pages");
    // one row group of eight rows in pages of two: the same rows as above
    let ctx = tables_with_pages(ROWS, "struct<kind string, n bigint>", 8, 2, &dir).await;
    // (predicate, ids, rows of pages skipped): kind's residual holds 5 in the third page of
    // both leaves, so those two rows are always read; kind's leaf is null in rows 6 and 8
    let cases: &[(&str, &[i64], usize)] = &[
        ("v:kind::string = 'c'", &[5], 6),
        ("v:kind::string = 'b'", &[3, 4], 4),
        ("v:kind::string = '5'", &[6], 6),
        ("v:kind::string IN ('a', 'd')", &[1, 2, 7], 2),
        ("v:kind::string IS NULL", &[8], 4),
        ("try_variant_get(v, '$.n', 'bigint') > 6", &[7, 8], 4),
        ("try_variant_get(v, '$.n', 'bigint') < 2", &[1], 4),
        // two paths, pages intersected: kind 'a' in the first page (and the residual's third),
        // n >= 2 in every page
        (
            "v:kind::string = 'a' AND try_variant_get(v, '$.n', 'bigint') >= 2",
            &[2],
            4,
        ),
        // one conjunct over two paths: not pruned by pages
        (
            "v:kind::string = 'c' OR try_variant_get(v, '$.n', 'bigint') = 1",
            &[1, 5],
            0,
        ),
        // a leaf of another type than asked for
        ("v:n::double > 6.4", &[6, 7, 8], 0),
    ];
    for pushdown in [false, true] {
        ctx.sql(&format!(
            "SET datafusion.execution.parquet.pushdown_filters = {pushdown}"
        ))
        .await
        .unwrap();
        for (predicate, expected, skipped) in cases {
            let (in_memory, _) = ids(&ctx, &format!("SELECT id FROM mem WHERE {predicate}")).await;
            assert_eq!(&in_memory, expected, "memory: {predicate}");
            let (got, row_groups, rows) =
                ids_and_pruning(&ctx, &format!("SELECT id FROM t WHERE {predicate}")).await;
            assert_eq!(&got, expected, "file: {predicate} (pushdown {pushdown})");
            assert_eq!(row_groups, 0, "row groups pruned by {predicate}");
            assert_eq!(
                rows, *skipped,
                "page rows skipped by {predicate} (pushdown {pushdown})"
            );
        }
    }
}

/// Leaves shredded as their type in some row groups only: a residual anywhere in a row group
/// keeps it.
fn kind_value() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-e]".prop_map(|s| format!("\"{s}\"")),
        (0i64..5).prop_map(|n| n.to_string()),
        Just("null".to_string()),
        Just("[\"a\"]".to_string()),
        Just("{\"x\":1}".to_string()),
    ]
}

fn number_value() -> impl Strategy<Value = String> {
    prop_oneof![
        (-5i64..5).prop_map(|n| n.to_string()),
        (-5i64..5).prop_map(|n| format!("{n}.5e0")),
        (-5i64..5).prop_map(|n| format!("\"{n}\"")),
        Just("null".to_string()),
    ]
}

fn row() -> impl Strategy<Value = String> {
    (
        proptest::option::weighted(0.8, kind_value()),
        proptest::option::weighted(0.8, number_value()),
        proptest::option::weighted(0.9, proptest::option::weighted(0.8, number_value())),
    )
        .prop_map(|(kind, n, o)| {
            let mut fields = vec![];
            if let Some(k) = kind {
                fields.push(format!("\"kind\":{k}"));
            }
            if let Some(n) = n {
                fields.push(format!("\"n\":{n}"));
            }
            match o {
                Some(Some(m)) => fields.push(format!("\"o\":{{\"m\":{m}}}")),
                Some(None) => fields.push("\"o\":7".to_string()),
                None => {}
            }
            format!("{{{}}}", fields.join(","))
        })
}

fn predicates() -> Vec<String> {
    let mut out = vec![];
    for k in ["a", "c", "e", "3"] {
        out.push(format!("v:kind::string = '{k}'"));
        out.push(format!("v:kind::string > '{k}'"));
        out.push(format!("try_variant_get(v, '$.kind', 'string') <= '{k}'"));
    }
    for n in [-3, 0, 2] {
        out.push(format!("try_variant_get(v, '$.n', 'bigint') = {n}"));
        out.push(format!("try_variant_get(v, '$.n', 'bigint') < {n}"));
        out.push(format!("try_variant_get(v, '$.o.m', 'bigint') >= {n}"));
        out.push(format!("try_variant_get(v, '$.n', 'double') > {n}.2"));
    }
    out.push("v:kind::string IS NULL".into());
    out.push("try_variant_get(v, '$.o.m', 'bigint') IS NOT NULL".into());
    out
}

fn cases() -> u32 {
    proptest_cases(16)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    /// Any rows, any predicate on the shredded paths: the file (pruned) gives the memory's
    /// answer.
    #[test]
    fn pruned_reads_give_the_unpruned_answers(
        rows in proptest::collection::vec(row(), 1..40),
        group_rows in 1usize..12,
        page_rows in 1usize..4,
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let result: Result<usize, String> = runtime.block_on(async {
            let dir = scratch("property");
            let rows: Vec<(i64, &str)> =
                rows.iter().enumerate().map(|(i, r)| (i as i64, r.as_str())).collect();
            let ctx = tables_with_pages(
                &rows,
                "struct<kind string, n bigint, o struct<m bigint>>",
                group_rows,
                page_rows,
                &dir,
            )
            .await;
            let mut pruned = 0;
            for predicate in predicates() {
                let (expected, _) = ids(&ctx, &format!("SELECT id FROM mem WHERE {predicate}")).await;
                let (got, p) = ids(&ctx, &format!("SELECT id FROM t WHERE {predicate}")).await;
                pruned += p;
                if got != expected {
                    return Err(format!("{predicate}: file {got:?}, memory {expected:?}"));
                }
            }
            Ok(pruned)
        });
        prop_assert!(result.is_ok(), "{}", result.unwrap_err());
    }
}
