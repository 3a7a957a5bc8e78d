//! Every expression of a parsed statement, for the rewrites made before planning
//! (`colon_precedence`, `case_branches`).
use std::ops::ControlFlow;

use datafusion::sql::parser::{CopyToSource, Statement as DFStatement};
use datafusion::sql::sqlparser::ast::{Expr, visit_expressions_mut};

/// Calls `rewrite` on every expression of `statement` (post-order: children first, also in
/// subqueries, the query of a `COPY` and the statement an `EXPLAIN` explains); true if any call
/// returned true.
pub fn rewrite_expressions(
    statement: &mut DFStatement,
    rewrite: &mut dyn FnMut(&mut Expr) -> bool,
) -> bool {
    let mut changed = false;
    let mut visit = |expr: &mut Expr| {
        changed |= rewrite(expr);
        ControlFlow::<()>::Continue(())
    };
    match statement {
        DFStatement::Statement(s) => {
            let _ = visit_expressions_mut(s.as_mut(), &mut visit);
        }
        DFStatement::CopyTo(copy) => {
            if let CopyToSource::Query(query) = &mut copy.source {
                let _ = visit_expressions_mut(query.as_mut(), &mut visit);
            }
        }
        DFStatement::Explain(explain) => {
            changed |= rewrite_expressions(&mut explain.statement, rewrite);
        }
        DFStatement::CreateExternalTable(_) | DFStatement::Reset(_) => {}
    }
    changed
}
