//! Planning `variant_explode(v)` / `variant_explode_outer(v)` in FROM, including
//! `FROM t, LATERAL variant_explode(t.v) AS e` and chains of laterals.
//!
//! DataFusion 55's table functions take constants only, and a correlated lateral join does not
//! reach physical planning. So:
//! 1. [`VariantExplodePlanner`] (a `RelationPlanner`) plans the FROM item. A constant argument
//!    becomes the explode plan over a one-row relation right away. A lateral argument (which
//!    refers to the left side as an outer reference) becomes a [`LateralExplode`] placeholder;
//!    DataFusion wraps it as a correlated subquery joined to the left side.
//! 2. [`LateralExplodeRule`] (an analyzer rule, run before any optimizer rule) replaces each
//!    `Join(left, placeholder)` by the explode plan over `left`, keeping the join's output schema,
//!    so every reference above it (`e.value`, `e.*`, a further lateral) still resolves.
//!
//! The explode plan is `Projection(left.*, list(v))` -> Unnest (list to struct) -> Unnest (struct to
//! columns) -> `Projection(left.*, pos, key, value)`: one pass over the input, batch by batch.
//! The list comes from [`crate::functions::variant_explode`]; the `_outer` form uses Unnest's
//! `PreserveAndExpandEmpty`, which gives one all-NULL row for a NULL or empty list.
use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

use datafusion::arrow::datatypes::Schema;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{
    Column, DFSchema, DFSchemaRef, NullHandling, Result, ScalarValue, TableReference,
    UnnestOptions, plan_err,
};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::planner::{
    PlannedRelation, RelationPlanner, RelationPlannerContext, RelationPlanning,
};
use datafusion::logical_expr::{
    Expr, Extension, JoinType, LogicalPlan, LogicalPlanBuilder, UserDefinedLogicalNodeCore,
};
use datafusion::optimizer::AnalyzerRule;
use datafusion::sql::sqlparser::ast::{
    FunctionArg, FunctionArgExpr, Ident, ObjectName, TableAlias, TableFactor,
};

use crate::functions::variant_explode::{explode_fields, variant_explode_list_udf};

/// Placeholder for an explode whose argument refers to the left side of a lateral join; replaced
/// by [`LateralExplodeRule`] before optimization.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LateralExplode {
    /// The argument, with outer references to the left side.
    pub expr: Expr,
    /// True for `variant_explode_outer`.
    pub outer: bool,
    schema: DFSchemaRef,
}

impl LateralExplode {
    fn try_new(expr: Expr, outer: bool) -> Result<Self> {
        let schema = DFSchema::try_from(Schema::new(explode_fields()))?;
        Ok(LateralExplode {
            expr,
            outer,
            schema: Arc::new(schema),
        })
    }
}

impl PartialOrd for LateralExplode {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        match self.expr.partial_cmp(&other.expr)? {
            Ordering::Equal => self.outer.partial_cmp(&other.outer),
            ordering => Some(ordering),
        }
    }
}

impl UserDefinedLogicalNodeCore for LateralExplode {
    fn name(&self) -> &str {
        "VariantLateralExplode"
    }

    fn inputs(&self) -> Vec<&LogicalPlan> {
        vec![]
    }

    fn schema(&self) -> &DFSchemaRef {
        &self.schema
    }

    fn expressions(&self) -> Vec<Expr> {
        vec![self.expr.clone()]
    }

    fn fmt_for_explain(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "VariantLateralExplode: {} outer={}",
            self.expr, self.outer
        )
    }

    fn with_exprs_and_inputs(
        &self,
        mut exprs: Vec<Expr>,
        _inputs: Vec<LogicalPlan>,
    ) -> Result<Self> {
        let Some(expr) = exprs.pop() else {
            return plan_err!("VariantLateralExplode expects one expression");
        };
        Ok(LateralExplode {
            expr,
            ..self.clone()
        })
    }
}

/// Plans `variant_explode(..)` / `variant_explode_outer(..)` FROM items; registered by
/// `register_all`.
#[derive(Debug, Default)]
pub struct VariantExplodePlanner;

impl RelationPlanner for VariantExplodePlanner {
    fn plan_relation(
        &self,
        relation: TableFactor,
        ctx: &mut dyn RelationPlannerContext,
    ) -> Result<RelationPlanning> {
        let (name, args, alias, ordinality) = match &relation {
            TableFactor::Function {
                name,
                args,
                alias,
                with_ordinality,
                ..
            } => (name, args.as_slice(), alias, *with_ordinality),
            TableFactor::Table {
                name,
                args: Some(args),
                alias,
                with_ordinality,
                ..
            } => (name, args.args.as_slice(), alias, *with_ordinality),
            _ => return Ok(RelationPlanning::Original(Box::new(relation))),
        };
        let Some((function, outer)) = explode_name(name, ctx) else {
            return Ok(RelationPlanning::Original(Box::new(relation)));
        };
        if ordinality {
            return plan_err!("{function} does not support WITH ORDINALITY (it has a pos column)");
        }
        let arg = match args {
            [FunctionArg::Unnamed(FunctionArgExpr::Expr(arg))] => arg,
            [
                FunctionArg::Named {
                    name,
                    arg: FunctionArgExpr::Expr(arg),
                    ..
                },
            ] if name.value.eq_ignore_ascii_case("input") => arg,
            _ => return plan_err!("{function} expects one VARIANT argument"),
        };
        let expr = ctx.sql_to_expr(arg.clone(), &DFSchema::empty())?;
        let alias = alias.clone().or_else(|| {
            Some(TableAlias {
                explicit: false,
                name: Ident::new(function),
                columns: vec![],
                at: None,
            })
        });
        let plan = if expr.contains_outer() {
            LogicalPlan::Extension(Extension {
                node: Arc::new(LateralExplode::try_new(expr, outer)?),
            })
        } else {
            let names = ["pos", "key", "value"].map(|n| (None, n.to_string()));
            explode_plan(
                LogicalPlanBuilder::empty(true).build()?,
                expr,
                outer,
                &names,
            )?
        };
        Ok(RelationPlanning::Planned(Box::new(PlannedRelation::new(
            plan, alias,
        ))))
    }
}

fn explode_name(
    name: &ObjectName,
    ctx: &dyn RelationPlannerContext,
) -> Option<(&'static str, bool)> {
    let [part] = name.0.as_slice() else {
        return None;
    };
    match ctx.normalize_ident(part.as_ident()?.clone()).as_str() {
        "variant_explode" => Some(("variant_explode", false)),
        "variant_explode_outer" => Some(("variant_explode_outer", true)),
        _ => None,
    }
}

/// The column holding the list of entries while the plan expands it.
const ENTRIES: &str = "__variant_explode";

/// `input.*` followed by `pos, key, value` of `arg`'s entries, named (and qualified) as `names`.
fn explode_plan(
    input: LogicalPlan,
    arg: Expr,
    outer: bool,
    names: &[(Option<TableReference>, String)],
) -> Result<LogicalPlan> {
    let keep: Vec<Expr> = input
        .schema()
        .columns()
        .into_iter()
        .map(Expr::Column)
        .collect();
    let list = Expr::ScalarFunction(ScalarFunction::new_udf(
        variant_explode_list_udf(),
        vec![arg],
    ))
    .alias(ENTRIES);
    let options = UnnestOptions::new()
        .with_preserve_nulls(false)
        .with_null_handling(if outer {
            NullHandling::PreserveAndExpandEmpty
        } else {
            NullHandling::Drop
        });
    let exploded =
        ["pos", "key", "value"]
            .into_iter()
            .zip(names)
            .map(|(field, (qualifier, name))| {
                Expr::Column(Column::from_name(format!("{ENTRIES}.{field}")))
                    .alias_qualified(qualifier.clone(), name.clone())
            });
    LogicalPlanBuilder::from(input)
        .project(keep.iter().cloned().chain([list]))?
        .unnest_column_with_options(Column::from_name(ENTRIES), options.clone())?
        .unnest_column_with_options(Column::from_name(ENTRIES), options)?
        .project(keep.into_iter().chain(exploded))?
        .build()
}

/// The placeholder under the right side of a lateral join, as DataFusion wraps it:
/// `SubqueryAlias(e, Subquery([Projection(renames)] placeholder))`.
fn find_placeholder(plan: &LogicalPlan) -> Option<&LateralExplode> {
    match plan {
        LogicalPlan::SubqueryAlias(a) => find_placeholder(&a.input),
        LogicalPlan::Subquery(s) => find_placeholder(&s.subquery),
        LogicalPlan::Projection(p)
            if p.expr.len() == 3
                && p.expr.iter().all(|e| {
                    matches!(e, Expr::Column(_))
                        || matches!(e, Expr::Alias(a) if matches!(*a.expr, Expr::Column(_)))
                }) =>
        {
            find_placeholder(&p.input)
        }
        LogicalPlan::Extension(e) => e.node.as_any().downcast_ref::<LateralExplode>(),
        _ => None,
    }
}

fn rewrite_lateral(plan: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
    let LogicalPlan::Join(join) = &plan else {
        return Ok(Transformed::no(plan));
    };
    let Some(node) = find_placeholder(&join.right) else {
        return Ok(Transformed::no(plan));
    };
    let left_join = match join.join_type {
        JoinType::Inner => false,
        JoinType::Left => true,
        _ => return Ok(Transformed::no(plan)),
    };
    let filter = match &join.filter {
        None | Some(Expr::Literal(ScalarValue::Boolean(Some(true)), _)) => None,
        Some(f) if !left_join => Some(f.clone()),
        Some(_) => return Ok(Transformed::no(plan)),
    };
    if !join.on.is_empty() {
        return Ok(Transformed::no(plan));
    }
    let left_schema = join.left.schema();
    let mut resolvable = true;
    let arg = node
        .expr
        .clone()
        .transform(|e| {
            Ok(match e {
                Expr::OuterReferenceColumn(_, c) => {
                    resolvable &= left_schema.has_column(&c);
                    Transformed::yes(Expr::Column(c))
                }
                e => Transformed::no(e),
            })
        })?
        .data;
    if !resolvable {
        return Ok(Transformed::no(plan));
    }
    let names: Vec<_> = join
        .schema
        .iter()
        .skip(left_schema.fields().len())
        .map(|(q, f)| (q.cloned(), f.name().clone()))
        .collect();
    let mut rewritten = explode_plan(
        join.left.as_ref().clone(),
        arg,
        node.outer || left_join,
        &names,
    )?;
    if let Some(f) = filter {
        rewritten = LogicalPlanBuilder::from(rewritten).filter(f)?.build()?;
    }
    if !rewritten
        .schema()
        .logically_equivalent_names_and_types(&join.schema)
    {
        return plan_err!("variant_explode: the rewritten lateral join changed its schema");
    }
    Ok(Transformed::yes(rewritten))
}

/// Rewrites lateral joins over [`LateralExplode`] into one-pass explode plans; registered by
/// `register_all`.
#[derive(Debug, Default)]
pub struct LateralExplodeRule;

impl AnalyzerRule for LateralExplodeRule {
    fn name(&self) -> &str {
        "variant_lateral_explode"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        // Bottom-up, so the inner lateral of a chain is rewritten first.
        let plan = plan.transform_up_with_subqueries(rewrite_lateral)?.data;
        let mut left_over = false;
        plan.apply_with_subqueries(|p| {
            left_over |= matches!(p, LogicalPlan::Extension(e)
                if e.node.as_any().is::<LateralExplode>());
            Ok(if left_over {
                TreeNodeRecursion::Stop
            } else {
                TreeNodeRecursion::Continue
            })
        })?;
        if left_over {
            return plan_err!(
                "variant_explode over a column must be joined laterally: \
                 `FROM t, LATERAL variant_explode(t.v) AS e` or `t [CROSS | LEFT] JOIN LATERAL \
                 variant_explode(t.v) AS e [ON true]`"
            );
        }
        Ok(plan)
    }
}
