//! `:` bound as Spark binds it: `1 + v:a::int` is `1 + ((v:a)::int)`.
//!
//! In Spark, `v:path` is a postfix of its operand, as tight as `::`. sqlparser's default
//! dialect gives `:` a precedence below arithmetic, so `1 + v:a::int` parses as
//! `((1 + v):a)::int`, and every operator that follows binds to that. DataFusion 55 has no hook
//! into `SessionContext::sql`'s parser, and once planned the parentheses a user wrote are gone
//! (`(1 + v:a::int) * 2` and `1 + v:a::int * 2` plan alike), so the fix is made here on the
//! syntax tree: [`bind_colon_paths`] moves each `:` onto the operand it follows, moves the casts
//! written after it with it, and re-associates the tighter operators that follow by the dialect's
//! own precedences. [`run_sql`] is `SessionContext::sql` with that step; `variant-sql` (its shell
//! too), the sqllogictest engine and the Python package plan through it. A query planned by
//! `SessionContext::sql` itself gets a planning error naming the fix instead of a wrong reading
//! ([`crate::sql::ColonPathPlanner`]).
//!
//! The repair relies on one property of a precedence parser: without parentheses, an operator's
//! left operand is never an operator that binds more loosely, a `:` path's operand never a binary
//! or prefix operator, and a `::` cast's operand never either. Those shapes appear only where `:`
//! was bound too loosely, so nothing else changes.

use datafusion::common::{Result, plan_datafusion_err};
use datafusion::config::Dialect as DialectName;
use datafusion::execution::SessionState;
use datafusion::prelude::{DataFrame, SessionContext};
use datafusion::sql::parser::{DFParserBuilder, Statement as DFStatement};
use datafusion::sql::sqlparser::ast::{BinaryOperator, CastKind, Expr, UnaryOperator};
use datafusion::sql::sqlparser::dialect::{Dialect, Precedence, dialect_from_str};

use super::case_branches::cast_first_case_branches;
pub use super::statement_expressions::rewrite_expressions;

/// `SessionContext::sql` with `:` paths bound as Spark binds them (see the module docs), and a
/// CASE whose later branch is a variant typed VARIANT ([`cast_first_case_branches`]).
pub async fn run_sql(ctx: &SessionContext, sql: &str) -> Result<DataFrame> {
    let state = ctx.state();
    let mut statements = parse_sql(&state, sql)?;
    if statements.len() != 1 {
        return datafusion::common::not_impl_err!(
            "The context currently only supports a single SQL statement"
        );
    }
    let statement = statements.pop().expect("one statement");
    let plan = state.statement_to_plan(statement).await?;
    ctx.execute_logical_plan(plan).await
}

/// Parses `sql` (any number of statements) with the session's dialect and recursion limit, with
/// `:` paths bound as Spark binds them and CASE branches cast as [`run_sql`] has them.
pub fn parse_sql(state: &SessionState, sql: &str) -> Result<Vec<DFStatement>> {
    let options = &state.config().options().sql_parser;
    let (statements, _) =
        parse_rebound(sql, &options.dialect, Some(options.recursion_limit.get()))?;
    Ok(statements)
}

/// The statements of `sql`, rebound, and whether any changed (`recursion_limit`: the parser's
/// default when `None`).
fn parse_rebound(
    sql: &str,
    dialect: &DialectName,
    recursion_limit: Option<usize>,
) -> Result<(Vec<DFStatement>, bool)> {
    let dialect = session_dialect(dialect)?;
    let mut parser = DFParserBuilder::new(sql).with_dialect(dialect.as_ref());
    if let Some(limit) = recursion_limit {
        parser = parser.with_recursion_limit(limit);
    }
    let mut statements: Vec<DFStatement> = parser.build()?.parse_statements()?.into();
    let mut changed = false;
    for statement in &mut statements {
        changed |= bind_colon_paths(statement, dialect.as_ref());
        // after the paths are bound: `1 + v:a` is a variant only as the parser misbound it
        changed |= cast_first_case_branches(statement);
    }
    Ok((statements, changed))
}

/// `sql` written again with `:` paths bound as Spark binds them and parenthesized, so that any
/// parser of the dialect reads them so; `None` when no statement changes. For programs that hand
/// SQL text to a parser of their own (datafusion-cli's execution of a statement).
pub fn rewrite_sql_text(sql: &str, dialect: &DialectName) -> Result<Option<String>> {
    // the parser's default recursion limit, as datafusion-cli's parser has it
    let (statements, changed) = parse_rebound(sql, dialect, None)?;
    Ok(changed.then(|| {
        statements
            .iter()
            .map(|s| format!("{s};"))
            .collect::<Vec<_>>()
            .join("\n")
    }))
}

fn session_dialect(name: &DialectName) -> Result<Box<dyn Dialect>> {
    dialect_from_str(name).ok_or_else(|| {
        plan_datafusion_err!(
            "Unsupported SQL dialect: {name}. Available dialects: {}.",
            DialectName::available()
        )
    })
}

/// Rebinds the `:` paths of `statement` that `dialect` bound more loosely than Spark does;
/// true if anything changed. Each moved path is parenthesized, so the statement's text reads the
/// same way in any dialect.
pub fn bind_colon_paths(statement: &mut DFStatement, dialect: &dyn Dialect) -> bool {
    rewrite_expressions(statement, &mut |expr| rebind(expr, dialect))
}

/// One node, its children already rebound (the visit is post-order).
fn rebind(expr: &mut Expr, dialect: &dyn Dialect) -> bool {
    match expr {
        // `(1 + v):a` as the parser left it: the path belongs to `v`.
        Expr::JsonAccess { value, .. } if is_operator(value) => {
            let Expr::JsonAccess { value, path } = std::mem::replace(expr, placeholder()) else {
                unreachable!("matched above")
            };
            *expr = push_to_last_operand(*value, &mut |operand| {
                Expr::Nested(Box::new(Expr::JsonAccess {
                    value: Box::new(operand),
                    path: path.clone(),
                }))
            });
            true
        }
        // `(1 + (v:a))::int`: the cast was written after the path, and binds to it.
        Expr::Cast {
            kind: CastKind::DoubleColon,
            expr: inner,
            ..
        } if is_operator(inner) && holds_moved_path(inner) => {
            let Expr::Cast {
                kind,
                expr: inner,
                data_type,
                array,
                format,
            } = std::mem::replace(expr, placeholder())
            else {
                unreachable!("matched above")
            };
            *expr = push_to_last_operand(*inner, &mut |operand| Expr::Cast {
                kind: kind.clone(),
                expr: Box::new(operand),
                data_type: data_type.clone(),
                array,
                format: format.clone(),
            });
            true
        }
        // `(1 + (v:a)::int) * 2`: `*` binds tighter than the `+` the path was moved under.
        Expr::BinaryOp { left, op, .. }
            if binds_looser(left, op, dialect) && holds_moved_path(left) =>
        {
            let Expr::BinaryOp { left, op, right } = std::mem::replace(expr, placeholder()) else {
                unreachable!("matched above")
            };
            *expr = insert_right(*left, op, *right, dialect);
            true
        }
        _ => false,
    }
}

fn placeholder() -> Expr {
    Expr::Value(datafusion::sql::sqlparser::ast::Value::Null.into())
}

/// A binary operator or a prefix sign, as the parser builds them without parentheses.
fn is_operator(expr: &Expr) -> bool {
    matches!(
        expr,
        Expr::BinaryOp { .. }
            | Expr::UnaryOp {
                op: UnaryOperator::Minus | UnaryOperator::Plus,
                ..
            }
    )
}

/// Replaces the last operand of an operator chain (right operands and prefix signs down) with
/// `wrap(operand)`.
fn push_to_last_operand(expr: Expr, wrap: &mut dyn FnMut(Expr) -> Expr) -> Expr {
    match expr {
        Expr::BinaryOp { left, op, right } => Expr::BinaryOp {
            left,
            op,
            right: Box::new(push_to_last_operand(*right, wrap)),
        },
        Expr::UnaryOp {
            op: op @ (UnaryOperator::Minus | UnaryOperator::Plus),
            expr,
        } => Expr::UnaryOp {
            op,
            expr: Box::new(push_to_last_operand(*expr, wrap)),
        },
        operand => wrap(operand),
    }
}

/// Whether the operator chain of `expr` (not crossing parentheses a user wrote) holds a path
/// this module moved: a guard, so that nothing without a `:` is ever re-associated.
fn holds_moved_path(expr: &Expr) -> bool {
    match expr {
        Expr::BinaryOp { left, right, .. } => holds_moved_path(left) || holds_moved_path(right),
        Expr::UnaryOp { expr, .. } => holds_moved_path(expr),
        Expr::Cast {
            kind: CastKind::DoubleColon,
            expr,
            ..
        } => holds_moved_path(expr),
        Expr::Nested(inner) => matches!(**inner, Expr::JsonAccess { .. }),
        _ => false,
    }
}

/// Whether `left` is a binary operator that binds more loosely than `op`: a shape the parser
/// never builds without parentheses.
fn binds_looser(left: &Expr, op: &BinaryOperator, dialect: &dyn Dialect) -> bool {
    let Expr::BinaryOp { op: left_op, .. } = left else {
        return false;
    };
    match (precedence(left_op, dialect), precedence(op, dialect)) {
        (Some(l), Some(o)) => l < o,
        _ => false,
    }
}

/// `left op right` with `op` placed as deep in `left`'s right spine as its precedence takes it.
fn insert_right(left: Expr, op: BinaryOperator, right: Expr, dialect: &dyn Dialect) -> Expr {
    if binds_looser(&left, &op, dialect) {
        let Expr::BinaryOp {
            left: l,
            op: left_op,
            right: r,
        } = left
        else {
            unreachable!("binds_looser matched a binary operator")
        };
        Expr::BinaryOp {
            left: l,
            op: left_op,
            right: Box::new(insert_right(*r, op, right, dialect)),
        }
    } else {
        Expr::BinaryOp {
            left: Box::new(left),
            op,
            right: Box::new(right),
        }
    }
}

/// The dialect's precedence of the binary operators that can meet a `:` path; `None` for the
/// others, which are then left where the parser put them.
fn precedence(op: &BinaryOperator, dialect: &dyn Dialect) -> Option<u8> {
    use BinaryOperator::*;
    let class = match op {
        Plus | Minus => Precedence::PlusMinus,
        Multiply | Divide | Modulo | StringConcat | DuckIntegerDivide | MyIntegerDivide => {
            Precedence::MulDivModOp
        }
        BitwiseXor | PGExp | PGBitwiseShiftLeft | PGBitwiseShiftRight => Precedence::Caret,
        BitwiseAnd => Precedence::Ampersand,
        BitwiseOr => Precedence::Pipe,
        Xor => Precedence::Xor,
        Eq | NotEq | Lt | Gt | LtEq | GtEq | Spaceship => Precedence::Eq,
        And => Precedence::And,
        Or => Precedence::Or,
        _ => return None,
    };
    Some(dialect.prec_value(class))
}

#[cfg(test)]
mod tests {
    use datafusion::sql::sqlparser::dialect::{GenericDialect, SnowflakeDialect};

    use super::*;

    /// The statement's text after rebinding, parsed with `dialect`.
    fn rebound(sql: &str, dialect: &dyn Dialect) -> String {
        let mut statements: Vec<DFStatement> = DFParserBuilder::new(sql)
            .with_dialect(dialect)
            .build()
            .unwrap()
            .parse_statements()
            .unwrap()
            .into();
        bind_colon_paths(&mut statements[0], dialect);
        statements[0].to_string()
    }

    #[test]
    fn paths_bind_to_their_operand() {
        let g = &GenericDialect {};
        let cases = [
            ("SELECT 1 + v:a::INT", "SELECT 1 + (v:a)::INT"),
            (
                "SELECT v:s[0]::INT + v:s[1]::INT",
                "SELECT v:s[0]::INT + (v:s[1])::INT",
            ),
            ("SELECT -v:a::INT", "SELECT -(v:a)::INT"),
            ("SELECT 2 - -v:a::INT", "SELECT 2 - -(v:a)::INT"),
            ("SELECT 'x' || v:s::STRING", "SELECT 'x' || (v:s)::STRING"),
            ("SELECT 1 + v:a::INT * 2", "SELECT 1 + (v:a)::INT * 2"),
            ("SELECT 1 + 2 * v:a::INT", "SELECT 1 + 2 * (v:a)::INT"),
            (
                "SELECT 1 + v:a::INT * 2 * 3 - 4",
                "SELECT 1 + (v:a)::INT * 2 * 3 - 4",
            ),
            ("SELECT 10 - v:a::INT - 1", "SELECT 10 - (v:a)::INT - 1"),
            (
                "SELECT x FROM t WHERE 1 + v:a::INT > 6 AND v:b::INT * 2 = 4",
                "SELECT x FROM t WHERE 1 + (v:a)::INT > 6 AND v:b::INT * 2 = 4",
            ),
            ("SELECT 1 + v:a", "SELECT 1 + (v:a)"),
            (
                "SELECT 1 + v:a::INT::STRING",
                "SELECT 1 + (v:a)::INT::STRING",
            ),
        ];
        for (sql, expected) in cases {
            assert_eq!(rebound(sql, g), expected, "{sql}");
        }
    }

    #[test]
    fn parentheses_and_correct_parses_are_kept() {
        let g = &GenericDialect {};
        for sql in [
            "SELECT (1 + (v:a)::INT) * 2",
            "SELECT v:a::INT * 2 > 10",
            "SELECT (1 + v):a",
            "SELECT 1 + 2 * 3 - 4 / 5",
            "SELECT a * (b + c) - d",
            "SELECT f(v:a) + 1",
        ] {
            assert_eq!(rebound(sql, g), sql, "{sql}");
        }
        // a user's parentheses around the sum close it: `* 2` applies to the whole
        assert_eq!(
            rebound("SELECT (1 + v:a::INT) * 2", g),
            "SELECT (1 + (v:a)::INT) * 2"
        );
    }

    #[test]
    fn a_dialect_that_binds_colon_tightly_is_left_alone() {
        let s = &SnowflakeDialect {};
        assert_eq!(rebound("SELECT 1 + v:a::INT", s), "SELECT 1 + v:a::INT");
    }

    #[test]
    fn rewritten_text_parses_back_the_same() {
        let text = rewrite_sql_text("SELECT 1 + v:a::int * 2 FROM t", &DialectName::Generic)
            .unwrap()
            .unwrap();
        assert_eq!(text, "SELECT 1 + (v:a)::INT * 2 FROM t;");
        assert_eq!(
            rewrite_sql_text(&text, &DialectName::Generic).unwrap(),
            None
        );
        assert_eq!(
            rewrite_sql_text("SELECT v:a FROM t", &DialectName::Generic).unwrap(),
            None
        );
        // the CASE branches too: the text is what `run_sql` plans
        assert_eq!(
            rewrite_sql_text(
                "SELECT CASE WHEN c THEN 'x' ELSE v:a END FROM t",
                &DialectName::Generic
            )
            .unwrap()
            .as_deref(),
            Some("SELECT CASE WHEN c THEN CAST('x' AS VARIANT) ELSE v:a END FROM t;")
        );
    }
}
