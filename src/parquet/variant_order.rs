//! A file's order by typed variant paths: recorded by the sink, read back as the scan's order,
//! and given in the form queries read those paths.
//!
//! DataFusion's sink records a sort by plain columns as Parquet `sorting_columns`; a sort by
//! variant paths (JSONBench's load: `ORDER BY v:kind::string, .., v:did::string`) has no column
//! to name, so the sink records it in the footer's key-value metadata under [`ORDER_KEY`]
//! ([`sorted_by_variant_paths`], [`encode`]), and the scan reads it back as the file's order
//! ([`file_ordering`]), as it reads `sorting_columns`.
//!
//! A query's `v:did::string` (or typed `variant_get(v, '$.did', 'string')`) is planned as
//! `variant_get_checked(variant_get_deferred(v, '$.did', 'STRING_VIEW'))`: the extraction moves
//! into the scan, the check stays where the call was written (`functions::variant_get_checked`).
//! A scan sorted by `variant_get(v, '$.did', 'string')` (recorded, or a table's declared order)
//! is sorted by that checked form too — the same values, nulls where it has nulls, and the errors
//! it would raise raised where the query reads it — but DataFusion cannot see it.
//! [`with_read_forms`] adds the order in the checked forms beside it, so that the scan's
//! equivalences carry it onto the extracted columns: a query filtering the leading paths to
//! constants then groups or sorts by the next one without a hash table or a sort.
use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Schema};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::logical_expr::ScalarUDF;
use datafusion::physical_expr::expressions::{Column, Literal};
use datafusion::physical_expr::projection::ProjectionExpr;
use datafusion::physical_expr::{LexOrdering, PhysicalExpr, PhysicalSortExpr, ScalarFunctionExpr};
use datafusion::physical_plan::projection::ProjectionExec;
use datafusion::physical_plan::sorts::sort::SortExec;
use datafusion::physical_plan::sorts::sort_preserving_merge::SortPreservingMergeExec;
use datafusion::physical_plan::{ExecutionPlan, ExecutionPlanProperties};
use datafusion::scalar::ScalarValue;

use crate::cast::target_type::{parse_target_type, sql_type_name};
use crate::codec::VariantPath;
use crate::functions::variant_get::VariantGet;
use crate::functions::variant_get_checked::{VariantGetChecked, variant_get_checked_udf};
use crate::variant_array::{is_variant_field, variant_data_type};

/// The footer's key-value metadata key of a file's order by variant paths.
pub const ORDER_KEY: &str = "datafusion_parquet_variant.sorted_by";

/// One key of a file's order: `variant_get(column, path, target)` in a direction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VariantSortKey {
    /// The top-level variant column.
    pub column: String,
    /// The path, as `variant_get` takes it (`$.did`).
    pub path: String,
    /// The target type, as `variant_get` takes it (`STRING_VIEW`, `BIGINT`).
    pub target: String,
    /// Descending rather than ascending.
    pub descending: bool,
    /// Nulls before the values rather than after.
    pub nulls_first: bool,
    /// The session time zone the key was computed in (`UTC` where none was set), for a target
    /// whose values depend on it ([`depends_on_time_zone`]: a timestamp's text, date or local
    /// time); None for the others. A scan in another time zone takes no order from such a key.
    pub time_zone: Option<String>,
}

/// Whether `variant_get` to `target` may answer differently in another session time zone: a
/// timestamp's text, date and local time are the session's, a local time read as an instant is
/// read in it. Numbers, booleans and binary are the same everywhere.
pub fn depends_on_time_zone(target: &DataType) -> bool {
    !(target.is_numeric()
        || matches!(
            target,
            DataType::Boolean | DataType::Binary | DataType::LargeBinary | DataType::BinaryView
        ))
}

/// The session time zone of `config` as a key records it: `UTC` where none is set.
fn session_time_zone(config: &ConfigOptions) -> String {
    config
        .execution
        .time_zone
        .clone()
        .unwrap_or_else(|| "UTC".to_string())
}

/// `keys` as the JSON text stored under [`ORDER_KEY`].
pub fn encode(keys: &[VariantSortKey]) -> String {
    let keys: Vec<serde_json::Value> = keys
        .iter()
        .map(|k| {
            let mut key = serde_json::json!({
                "column": k.column,
                "path": k.path,
                "type": k.target,
                "descending": k.descending,
                "nulls_first": k.nulls_first,
            });
            if let Some(time_zone) = &k.time_zone {
                key["time_zone"] = serde_json::Value::from(time_zone.as_str());
            }
            key
        })
        .collect();
    serde_json::Value::Array(keys).to_string()
}

/// The keys of a text stored under [`ORDER_KEY`]; None when it is not such a text (a file
/// claims no order it does not state in full).
pub fn decode(text: &str) -> Option<Vec<VariantSortKey>> {
    let serde_json::Value::Array(keys) = serde_json::from_str(text).ok()? else {
        return None;
    };
    keys.iter()
        .map(|k| {
            let text = |name: &str| k.get(name)?.as_str().map(str::to_string);
            let flag = |name: &str| k.get(name)?.as_bool();
            Some(VariantSortKey {
                column: text("column")?,
                path: text("path")?,
                target: text("type")?,
                descending: flag("descending")?,
                nulls_first: flag("nulls_first")?,
                time_zone: match k.get("time_zone") {
                    None => None,
                    Some(zone) => Some(zone.as_str()?.to_string()),
                },
            })
        })
        .collect::<Option<Vec<_>>>()
        .filter(|keys| !keys.is_empty())
}

/// The order of a sink's `input` by typed variant paths of its own columns, read from the sort
/// it writes from: a `SortExec` of the whole input (or a merge of sorted partitions) with only
/// projections between
/// it and the sink, whose leading keys are typed `variant_get` calls (as queries plan them, or
/// checked) on columns the projections pass to the sink unchanged. Empty when there is no such
/// sort or its first key is something else; the keys up to the first other key otherwise.
pub fn sorted_by_variant_paths(input: &Arc<dyn ExecutionPlan>) -> Vec<VariantSortKey> {
    let schema = input.schema();
    // each of the sink's columns as an expression over the node reached
    let mut columns: Vec<Option<Arc<dyn PhysicalExpr>>> = (schema.fields().iter().enumerate())
        .map(|(i, f)| Some(Arc::new(Column::new(f.name(), i)) as Arc<dyn PhysicalExpr>))
        .collect();
    let mut node = Arc::clone(input);
    let ordering = loop {
        if let Some(projection) = node.downcast_ref::<ProjectionExec>() {
            columns = columns
                .into_iter()
                .map(|c| c.and_then(|c| through(&c, projection.expr())))
                .collect();
            node = Arc::clone(projection.input());
        } else if let Some(sort) = node.downcast_ref::<SortExec>() {
            // (each partition sorted on its own is no order of the files they are merged into)
            if sort.preserve_partitioning()
                && sort.input().output_partitioning().partition_count() > 1
            {
                return vec![];
            }
            break sort.expr().clone();
        } else if let Some(merge) = node.downcast_ref::<SortPreservingMergeExec>() {
            break merge.expr().clone();
        } else {
            return vec![];
        }
    };
    // the sort keeps its input's columns: on through the projections below it
    let mut keys: Vec<Option<Arc<dyn PhysicalExpr>>> =
        ordering.iter().map(|k| Some(Arc::clone(&k.expr))).collect();
    let mut below = node.children().first().map(|c| Arc::clone(*c));
    while let Some(projection) = below
        .as_ref()
        .and_then(|n| n.downcast_ref::<ProjectionExec>())
    {
        let exprs = projection.expr();
        columns = (columns.into_iter())
            .map(|c| c.and_then(|c| through(&c, exprs)))
            .collect();
        keys = (keys.into_iter())
            .map(|k| k.and_then(|k| through(&k, exprs)))
            .collect();
        below = Some(Arc::clone(projection.input()));
    }
    let Some(base) = below else {
        return vec![];
    };
    let base = base.schema();
    (ordering.iter().zip(keys))
        .map_while(|(sort, key)| {
            let (variant, path, target, time_zone) = typed_get(&key?)?;
            let index = variant.downcast_ref::<Column>()?.index();
            // the sink's column that is this base column, unchanged, and a variant
            let sink_column = columns.iter().position(|c| {
                c.as_ref()
                    .and_then(|c| c.downcast_ref::<Column>())
                    .is_some_and(|c| c.index() == index)
            })?;
            let field = schema.field(sink_column);
            (is_variant_field(field) && is_variant_field(base.field(index))).then(|| {
                VariantSortKey {
                    column: field.name().clone(),
                    path,
                    target,
                    descending: sort.options.descending,
                    nulls_first: sort.options.nulls_first,
                    time_zone,
                }
            })
        })
        .collect()
}

/// `expr` (over a projection's output) over the projection's input.
fn through(
    expr: &Arc<dyn PhysicalExpr>,
    projection: &[ProjectionExpr],
) -> Option<Arc<dyn PhysicalExpr>> {
    let mut missing = false;
    let out = Arc::clone(expr)
        .transform_up(|e| {
            let Some(column) = e.downcast_ref::<Column>() else {
                return Ok(Transformed::no(e));
            };
            match projection.get(column.index()) {
                Some(p) => Ok(Transformed::yes(Arc::clone(&p.expr))),
                None => {
                    missing = true;
                    Ok(Transformed::no(e))
                }
            }
        })
        .ok()?
        .data;
    (!missing).then_some(out)
}

/// The variant argument, path and target type of a typed `variant_get` call with literal path
/// and type, as written or as the analyzer defers it (`variant_get_checked(variant_get_deferred
/// (..))`), with the session time zone it runs in where its values depend on it
/// ([`depends_on_time_zone`]); None for any other expression.
fn typed_get(expr: &Arc<dyn PhysicalExpr>) -> Option<TypedGet> {
    let mut call = expr.downcast_ref::<ScalarFunctionExpr>()?;
    let checked = call
        .fun()
        .inner()
        .downcast_ref::<VariantGetChecked>()
        .is_some();
    if checked {
        call = call.args().first()?.downcast_ref::<ScalarFunctionExpr>()?;
    }
    let get = call.fun().inner().downcast_ref::<VariantGet>()?;
    if get.is_deferred() != checked {
        return None;
    }
    let [variant, path, target] = call.args() else {
        return None;
    };
    let (path, target) = (literal_text(path)?, literal_text(target)?);
    let data_type = parse_target_type(&target).ok()?;
    let time_zone =
        depends_on_time_zone(&data_type).then(|| session_time_zone(call.config_options()));
    (data_type != variant_data_type()).then(|| (Arc::clone(variant), path, target, time_zone))
}

/// What [`typed_get`] finds: the variant, path, target type and, where the answers depend on
/// it, the session time zone the call runs in.
type TypedGet = (Arc<dyn PhysicalExpr>, String, String, Option<String>);

fn literal_text(expr: &Arc<dyn PhysicalExpr>) -> Option<String> {
    match expr.downcast_ref::<Literal>()?.value() {
        ScalarValue::Utf8(Some(s)) | ScalarValue::Utf8View(Some(s)) => Some(s.clone()),
        _ => None,
    }
}

/// The order `keys` state, over `schema` (a table's) in a session of `config`:
/// `variant_get(column, path, type)` per key, up to the first whose column is not a variant
/// column of `schema`, whose path or type does not parse, or whose values depend on the session
/// time zone and were not computed in this session's. None when the first is such a key.
pub fn file_ordering(
    keys: &[VariantSortKey],
    schema: &Schema,
    config: &Arc<ConfigOptions>,
) -> Option<LexOrdering> {
    let reading_in = session_time_zone(config);
    let exprs = keys.iter().map_while(|key| {
        let index = schema.index_of(&key.column).ok()?;
        if !is_variant_field(schema.field(index)) {
            return None;
        }
        // (a file of an older version states no zone for such a key: its order is not known)
        if depends_on_time_zone(&parse_target_type(&key.target).ok()?)
            && key.time_zone.as_deref() != Some(reading_in.as_str())
        {
            return None;
        }
        let column: Arc<dyn PhysicalExpr> = Arc::new(Column::new(&key.column, index));
        let get = get_call(column, &key.path, &key.target, false, schema, config)?;
        Some(PhysicalSortExpr::new(
            get,
            datafusion::arrow::compute::SortOptions {
                descending: key.descending,
                nulls_first: key.nulls_first,
            },
        ))
    });
    LexOrdering::new(exprs)
}

/// `variant_get(variant, path, target)`, or (`deferred`) its deferred form, planned as queries
/// plan it (the path parsed).
fn get_call(
    variant: Arc<dyn PhysicalExpr>,
    path: &str,
    target: &str,
    deferred: bool,
    schema: &Schema,
    config: &Arc<ConfigOptions>,
) -> Option<Arc<dyn PhysicalExpr>> {
    parse_target_type(target).ok()?;
    let parsed = VariantPath::parse(path).ok()?;
    let udf = Arc::new(ScalarUDF::from(VariantGet::planned(Some(parsed), deferred)));
    let literal = |s: &str| -> Arc<dyn PhysicalExpr> {
        Arc::new(Literal::new(ScalarValue::Utf8(Some(s.to_string()))))
    };
    let call = ScalarFunctionExpr::try_new(
        udf,
        vec![variant, literal(path), literal(target)],
        schema,
        Arc::clone(config),
    )
    .ok()?;
    Some(Arc::new(call))
}

/// `orderings` (a scan's, over `schema`, in a session of `config`), each up to its first key
/// computed in another time zone than the session's where its values depend on it (a file's
/// order is inferred once and cached by the table, whatever zone later queries run in), and
/// followed by the same order in the checked forms queries read its typed `variant_get` keys in
/// (the type as written, and as a cast names it), up to its first key of another kind.
/// Orderings without such a key are left alone.
pub(crate) fn with_read_forms(
    orderings: Vec<LexOrdering>,
    schema: &Schema,
    config: &Arc<ConfigOptions>,
) -> Vec<LexOrdering> {
    let orderings: Vec<LexOrdering> = (orderings.into_iter())
        .filter_map(|ordering| in_time_zone(ordering, config))
        .collect();
    let mut out = orderings.clone();
    for ordering in &orderings {
        for cast_name in [false, true] {
            let keys: Vec<PhysicalSortExpr> = ordering
                .iter()
                .map_while(|key| {
                    let expr = checked_form(&key.expr, cast_name, schema, config)?;
                    Some(PhysicalSortExpr::new(expr, key.options))
                })
                .collect();
            if let Some(read) = LexOrdering::new(keys)
                && !out.contains(&read)
            {
                out.push(read);
            }
        }
    }
    out
}

/// `ordering` up to its first typed `variant_get` key whose values depend on the session time
/// zone and whose call runs in another zone than `config`'s; None when that is the first key.
fn in_time_zone(ordering: LexOrdering, config: &ConfigOptions) -> Option<LexOrdering> {
    let zone = session_time_zone(config);
    let keys = ordering
        .iter()
        .take_while(|key| match typed_get(&key.expr) {
            Some((_, _, _, Some(computed_in))) => computed_in == zone,
            _ => true,
        });
    LexOrdering::new(keys.cloned())
}

/// `variant_get_checked(variant_get_deferred(v, path, type))` for `expr`, a typed
/// `variant_get(v, path, type)` with literal path and type (`type` named as a cast names it
/// when `cast_name`); None for any other expression.
fn checked_form(
    expr: &Arc<dyn PhysicalExpr>,
    cast_name: bool,
    schema: &Schema,
    config: &Arc<ConfigOptions>,
) -> Option<Arc<dyn PhysicalExpr>> {
    let call = expr.downcast_ref::<ScalarFunctionExpr>()?;
    // (the declared form only: an order already in the checked form stands as it is)
    if call
        .fun()
        .inner()
        .downcast_ref::<VariantGetChecked>()
        .is_some()
    {
        return None;
    }
    let (variant, path, target, _) = typed_get(expr)?;
    let target = if cast_name {
        // as `sql::cast_rewrite` names the type of a cast (`v:did::string`)
        match parse_target_type(&target).ok()? {
            DataType::Utf8 | DataType::Utf8View => "STRING_VIEW".to_string(),
            other => sql_type_name(&other),
        }
    } else {
        target
    };
    let deferred = get_call(variant, &path, &target, true, schema, config)?;
    let checked = ScalarFunctionExpr::try_new(
        variant_get_checked_udf(),
        vec![deferred],
        schema,
        Arc::clone(config),
    );
    Some(Arc::new(checked.ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(path: &str, target: &str, descending: bool) -> VariantSortKey {
        VariantSortKey {
            column: "v".into(),
            path: path.into(),
            target: target.into(),
            descending,
            nulls_first: descending,
            time_zone: None,
        }
    }

    #[test]
    fn keys_round_trip_through_the_footer_text() {
        let mut text = key("$.kind", "STRING_VIEW", false);
        text.time_zone = Some("America/New_York".into());
        let keys = vec![text, key(r#"$['a "b"'].c[0]"#, "BIGINT", true)];
        assert_eq!(decode(&encode(&keys)), Some(keys));
    }

    #[test]
    fn keys_that_depend_on_the_time_zone_order_scans_in_their_zone_only() {
        let schema = Schema::new(vec![crate::variant_array::variant_field("v", true)]);
        let mut text = key("$.t", "STRING_VIEW", false);
        text.time_zone = Some("UTC".into());
        let keys = vec![key("$.id", "BIGINT", false), text];
        let ordered = |time_zone: Option<&str>, keys: &[VariantSortKey]| {
            let mut config = ConfigOptions::default();
            config.execution.time_zone = time_zone.map(str::to_string);
            file_ordering(keys, &schema, &Arc::new(config)).map_or(0, |o| o.len())
        };
        assert_eq!(ordered(None, &keys), 2);
        assert_eq!(ordered(Some("UTC"), &keys), 2);
        // in New York the text of a timestamp is another text: only the number orders the scan
        assert_eq!(ordered(Some("America/New_York"), &keys), 1);
        // an older file's text key states no zone
        let mut unstated = keys.clone();
        unstated[1].time_zone = None;
        assert_eq!(ordered(None, &unstated), 1);
        assert_eq!(ordered(None, &unstated[1..]), 0);
        for (target, depends) in [
            ("BIGINT", false),
            ("DOUBLE", false),
            ("DECIMAL(10, 2)", false),
            ("BOOLEAN", false),
            ("BINARY", false),
            ("STRING", true),
            ("DATE", true),
            ("TIMESTAMP", true),
            ("TIMESTAMP_NTZ", true),
        ] {
            let data_type = parse_target_type(target).unwrap();
            assert_eq!(depends_on_time_zone(&data_type), depends, "{target}");
        }
    }

    #[test]
    fn a_text_that_is_not_a_whole_order_states_none() {
        let whole =
            r#"{"column":"v","path":"$.a","type":"BIGINT","descending":false,"nulls_first":false}"#;
        assert!(decode(&format!("[{whole}]")).is_some());
        for bad in [
            "",
            "not json",
            "[]",
            whole,
            r#"[{"column":"v","path":"$.a","type":"BIGINT","descending":false}]"#,
            r#"[{"column":"v","path":"$.a","type":7,"descending":false,"nulls_first":false}]"#,
            &format!("[{whole}, 1]"),
            &format!("[{whole}"),
        ] {
            assert_eq!(decode(bad), None, "{bad}");
        }
    }
}
