//! `read_json_variant(location [, 'option', 'value' ...])`: the documents of JSON files as rows
//! of one VARIANT column. Options come as trailing name/value pairs, or as named arguments
//! (`mode => 'PERMISSIVE'`), which [`ReadJsonVariantPlanner`] plans (DataFusion 55's own table
//! functions take positional arguments only).
use std::sync::Arc;

use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{DFSchema, Result, ScalarValue, TableReference, plan_err};
use datafusion::datasource::provider_as_source;
use datafusion::logical_expr::planner::{
    PlannedRelation, RelationPlanner, RelationPlannerContext, RelationPlanning,
};
use datafusion::logical_expr::{Expr, LogicalPlanBuilder};
use datafusion::sql::sqlparser::ast::{FunctionArg, FunctionArgExpr, ObjectName, TableFactor};

use super::options::JsonReadOptions;
use super::table::VariantJsonTable;

/// The function's name.
pub const READ_JSON_VARIANT: &str = "read_json_variant";

/// The `read_json_variant` table function.
#[derive(Debug, Default)]
pub struct ReadJsonVariant;

impl TableFunctionImpl for ReadJsonVariant {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let texts = args
            .exprs()
            .iter()
            .enumerate()
            .map(|(i, e)| constant_text(e, i + 1))
            .collect::<Result<Vec<_>>>()?;
        let Some((location, rest)) = texts.split_first() else {
            return plan_err!("{READ_JSON_VARIANT} expects a location (a file, folder or glob)");
        };
        if rest.len() % 2 != 0 {
            return plan_err!(
                "{READ_JSON_VARIANT}: options come in name/value pairs; '{}' has no value",
                rest[rest.len() - 1]
            );
        }
        let pairs = rest.chunks(2).map(|p| (p[0].as_str(), p[1].as_str()));
        read_json_variant_table(location, pairs)
    }
}

/// The table `read_json_variant(location, pairs..)` reads.
pub fn read_json_variant_table<'a>(
    location: &str,
    pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<Arc<dyn TableProvider>> {
    let options = JsonReadOptions::from_pairs(pairs)?;
    Ok(Arc::new(VariantJsonTable::try_new(
        &[location.to_string()],
        options,
    )?))
}

/// The text of a constant argument (strings; numbers and booleans as written).
fn constant_text(expr: &Expr, position: usize) -> Result<String> {
    let value = match expr {
        Expr::Literal(value, _) => value,
        _ => return plan_err!("{READ_JSON_VARIANT}: argument {position} must be a constant"),
    };
    match value {
        ScalarValue::Utf8(Some(s))
        | ScalarValue::LargeUtf8(Some(s))
        | ScalarValue::Utf8View(Some(s)) => Ok(s.clone()),
        ScalarValue::Boolean(Some(_))
        | ScalarValue::Int8(Some(_))
        | ScalarValue::Int16(Some(_))
        | ScalarValue::Int32(Some(_))
        | ScalarValue::Int64(Some(_))
        | ScalarValue::UInt8(Some(_))
        | ScalarValue::UInt16(Some(_))
        | ScalarValue::UInt32(Some(_))
        | ScalarValue::UInt64(Some(_)) => Ok(value.to_string()),
        _ => plan_err!(
            "{READ_JSON_VARIANT}: argument {position} must be a string, not {}",
            value.data_type()
        ),
    }
}

/// Plans `read_json_variant(..)` FROM items that have named arguments
/// (`read_json_variant('logs/', mode => 'DROPMALFORMED')`); those without go to DataFusion's
/// table function. Registered by `register_all`.
#[derive(Debug, Default)]
pub struct ReadJsonVariantPlanner;

impl RelationPlanner for ReadJsonVariantPlanner {
    fn plan_relation(
        &self,
        relation: TableFactor,
        ctx: &mut dyn RelationPlannerContext,
    ) -> Result<RelationPlanning> {
        let TableFactor::Table {
            name,
            args: Some(args),
            alias,
            ..
        } = &relation
        else {
            return Ok(RelationPlanning::Original(Box::new(relation)));
        };
        let named = args
            .args
            .iter()
            .any(|a| matches!(a, FunctionArg::Named { .. }));
        if !named || !is_read_json_variant(name, ctx) {
            return Ok(RelationPlanning::Original(Box::new(relation)));
        }
        let mut location = None;
        let mut pairs: Vec<(String, String)> = Vec::new();
        for (i, arg) in args.args.iter().enumerate() {
            let (key, arg) = match arg {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => (None, e),
                FunctionArg::Named {
                    name,
                    arg: FunctionArgExpr::Expr(e),
                    ..
                } => (Some(name.value.clone()), e),
                _ => return plan_err!("{READ_JSON_VARIANT}: unsupported argument {arg}"),
            };
            let text = constant_text(&ctx.sql_to_expr(arg.clone(), &DFSchema::empty())?, i + 1)?;
            match key {
                Some(key) if key.eq_ignore_ascii_case("location") => location = Some(text),
                Some(key) => pairs.push((key, text)),
                None if i == 0 => location = Some(text),
                None => {
                    return plan_err!(
                        "{READ_JSON_VARIANT}: give options either all as name/value pairs or \
                         all as named arguments"
                    );
                }
            }
        }
        let Some(location) = location else {
            return plan_err!("{READ_JSON_VARIANT} expects a location (a file, folder or glob)");
        };
        let provider = read_json_variant_table(
            &location,
            pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        )?;
        let plan = LogicalPlanBuilder::scan(
            TableReference::bare(format!("{READ_JSON_VARIANT}()")),
            provider_as_source(provider),
            None,
        )?
        .build()?;
        Ok(RelationPlanning::Planned(Box::new(PlannedRelation::new(
            plan,
            alias.clone(),
        ))))
    }
}

fn is_read_json_variant(name: &ObjectName, ctx: &dyn RelationPlannerContext) -> bool {
    let [part] = name.0.as_slice() else {
        return false;
    };
    part.as_ident()
        .is_some_and(|ident| ctx.normalize_ident(ident.clone()) == READ_JSON_VARIANT)
}
