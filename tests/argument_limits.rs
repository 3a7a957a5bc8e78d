//! Arguments that nest or repeat without bound get a clear error, never a stack overflow or a
//! huge allocation: paths of more segments than a variant can nest, type strings nested more
//! than 100 levels (as the third argument of `variant_get` and as a `variant.shred.*` option), mutator
//! results deeper than readers accept, and indexes that pad too many nulls in all. Written in
//! Rust because the arguments are built by repetition (SQL's `repeat` is not a constant where
//! these functions read their arguments, at planning).

mod common;

use datafusion::prelude::SessionContext;

fn ctx() -> SessionContext {
    let ctx = SessionContext::new();
    datafusion_parquet_variant::register_all(&ctx).unwrap();
    ctx
}

async fn error_of(ctx: &SessionContext, sql: &str) -> String {
    match common::first_cell(ctx, sql).await {
        Err(e) => e,
        Ok(v) => panic!("{}... gave {v:?}", &sql[..sql.len().min(80)]),
    }
}

#[tokio::test]
async fn paths_have_at_most_1000_segments() {
    let ctx = ctx();
    let long = format!("${}", ".a".repeat(200_000));
    for call in [
        format!("variant_insert(parse_json('{{}}'), '{long}', 1)"),
        format!("variant_set(parse_json('{{}}'), '{long}', 1)"),
        format!("variant_get(parse_json('{{}}'), '{long}')"),
        format!("try_variant_get(parse_json('{{}}'), '{long}', 'int')"),
    ] {
        let e = error_of(&ctx, &format!("SELECT {call}")).await;
        assert!(
            e.contains(
                "the path `$.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a....` has more than 1000 segments"
            ),
            "{e}"
        );
    }
    // 1000 segments are a path: absent here, and the deepest a created value may go.
    let deepest = format!("${}", "[0]".repeat(1000));
    assert_eq!(
        common::first_cell(
            &ctx,
            &format!("SELECT variant_get(parse_json('[]'), '{deepest}')")
        )
        .await,
        Ok(None)
    );
    let e = error_of(
        &ctx,
        &format!("SELECT variant_get(parse_json('[]'), '{deepest}[0]')"),
    )
    .await;
    assert!(e.contains("has more than 1000 segments"), "{e}");
}

#[tokio::test]
async fn type_strings_nest_at_most_100_levels() {
    let ctx = ctx();
    let deep = |n: usize| format!("{}int{}", "array<".repeat(n), ">".repeat(n));
    let e = error_of(
        &ctx,
        &format!(
            "SELECT variant_get(parse_json('1'), '$', '{}')",
            deep(20_000)
        ),
    )
    .await;
    assert!(
        e.contains(
            "type 'array<array<array<array<array<array<arra...' nests deeper than 100 levels"
        ),
        "{e}"
    );
    let e = error_of(
        &ctx,
        &format!("SELECT variant_get(parse_json('1'), '$', '{}')", deep(101)),
    )
    .await;
    assert!(e.contains("nests deeper than 100 levels"), "{e}");
    // 100 levels are a type: 1 is not an array, so NULL.
    assert_eq!(
        common::first_cell(
            &ctx,
            &format!(
                "SELECT try_variant_get(parse_json('1'), '$', '{}')",
                deep(100)
            ),
        )
        .await,
        Ok(None)
    );
    // The shredding option goes through the same parser.
    let dir = common::scratch_dir("argument_limits", "shred");
    let e = error_of(
        &ctx,
        &format!(
            "COPY (SELECT parse_json('1') AS v) TO '{}/out.parquet' STORED AS PARQUET \
             OPTIONS ('variant.shred.v' '{}')",
            dir.display(),
            deep(20_000)
        ),
    )
    .await;
    assert!(e.contains("nests deeper than 100 levels"), "{e}");
    assert!(!dir.join("out.parquet").exists());
}

/// A mutator may not build a value deeper than 1000 levels, which no reader (ours, Spark's)
/// would accept: 1000 created objects holding a number are the limit, holding an array are past
/// it.
#[tokio::test]
async fn mutators_build_at_most_1000_levels() {
    let ctx = ctx();
    let path = format!("${}", ".a".repeat(1000));
    let ok = format!(
        "SELECT variant_get(variant_set(parse_json('{{}}'), '{path}', parse_json('7')), '{path}', 'int')"
    );
    assert_eq!(
        common::first_cell(&ctx, &ok).await,
        Ok(Some("7".to_string()))
    );
    for (function, value) in [("variant_set", "'[1]'"), ("variant_insert", "'{\"b\":1}'")] {
        let e = error_of(
            &ctx,
            &format!("SELECT {function}(parse_json('{{}}'), '{path}', parse_json({value}))"),
        )
        .await;
        assert!(e.contains("nesting depth exceeds the limit of 1000"), "{e}");
        let nulled = format!(
            "SELECT try_{function}(parse_json('{{}}'), '{path}', parse_json({value})) IS NULL"
        );
        assert_eq!(
            common::first_cell(&ctx, &nulled).await,
            Ok(Some("true".to_string()))
        );
    }
}

/// Indexes past an array's end pad nulls: at most 2^20 in one edit, over all of the path's
/// indexes (one index of 2^20 is fine; two are not).
#[tokio::test]
async fn padding_is_bounded_in_total() {
    let ctx = ctx();
    let length = "SELECT variant_array_length(variant_get(variant_set(parse_json('[]'), '$[1048575]', 1), '$'))";
    assert_eq!(
        common::first_cell(&ctx, length).await,
        Ok(Some("1048576".to_string()))
    );
    let e = error_of(
        &ctx,
        "SELECT variant_set(parse_json('[]'), '$[1048576][1048576]', 1)",
    )
    .await;
    assert!(
        e.contains("the path's indexes pad 2097152 nulls into arrays (at most 1048576 in all)"),
        "{e}"
    );
    // The 17 GB row.
    let path = format!("${}", "[1048576]".repeat(1000));
    let e = error_of(
        &ctx,
        &format!("SELECT variant_insert(parse_json('[]'), '{path}', 1)"),
    )
    .await;
    assert!(e.contains("(at most 1048576 in all)"), "{e}");
    let e = error_of(
        &ctx,
        "SELECT variant_insert(parse_json('[]'), '$[1048577]', 1)",
    )
    .await;
    assert!(
        e.contains("the index is 1048577 elements past the end of the array (at most 1048576)"),
        "{e}"
    );
}
