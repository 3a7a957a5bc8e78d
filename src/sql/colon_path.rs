//! `v:a.b[0]` (Databricks' colon path syntax) planned as `variant_get(v, '$.a.b[0]')`.
use datafusion::common::{DFSchema, Result, ScalarValue, plan_err};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::planner::{ExprPlanner, PlannerResult, RawBinaryExpr};
use datafusion::logical_expr::{Expr, Operator, lit};
use datafusion::sql::sqlparser::ast::BinaryOperator;

use crate::functions::variant_get::variant_get_udf;

/// Plans the `:` operator on variants.
#[derive(Debug, Default)]
pub struct ColonPathPlanner;

impl ExprPlanner for ColonPathPlanner {
    fn plan_binary_op(
        &self,
        expr: RawBinaryExpr,
        _schema: &DFSchema,
    ) -> Result<PlannerResult<RawBinaryExpr>> {
        let is_colon = matches!(&expr.op, BinaryOperator::Custom(op) if op == ":");
        let Expr::Literal(ScalarValue::Utf8(Some(path)), _) = &expr.right else {
            return Ok(PlannerResult::Original(expr));
        };
        if !is_colon {
            return Ok(PlannerResult::Original(expr));
        }
        if let Some(operator) = loosely_bound_operator(&expr.left) {
            return plan_err!(
                "DataFusion's parser binds `:` more loosely than `{operator}` and read \
                 `x {operator} y:{path}` as `(x {operator} y):{path}`; Spark binds the path to `y`. \
                 Write `x {operator} (y:{path})`, or plan the query with \
                 datafusion_parquet_variant::sql::run_sql (as variant-sql, its sqllogictest engine \
                 and the Python package do), which binds `:` as Spark does"
            );
        }
        let path = colon_path_to_variant_path(path)?;
        Ok(PlannerResult::Planned(Expr::ScalarFunction(
            ScalarFunction::new_udf(variant_get_udf(), vec![expr.left, lit(path)]),
        )))
    }
}

/// The operator of `left` when `left` is one that a `:` path cannot follow as a whole in Spark:
/// the sign of a parse that bound `:` too loosely (`1 + v:a` read as `(1 + v):a`).
fn loosely_bound_operator(left: &Expr) -> Option<String> {
    match left {
        Expr::BinaryExpr(b)
            if b.op.is_numerical_operators()
                || matches!(
                    b.op,
                    Operator::StringConcat
                        | Operator::BitwiseAnd
                        | Operator::BitwiseOr
                        | Operator::BitwiseXor
                        | Operator::BitwiseShiftLeft
                        | Operator::BitwiseShiftRight
                ) =>
        {
            Some(b.op.to_string())
        }
        Expr::Negative(_) => Some("-".to_string()),
        _ => None,
    }
}

/// Turns the path text sqlparser gives for `v:...` (`a.b[0]`, `"x y".z`, `['k'][1]`) into a
/// `variant_get` path (`$.a.b[0]`). A quoted name is path text, as Spark reads a backquoted one.
pub fn colon_path_to_variant_path(text: &str) -> Result<String> {
    let mut out = String::from("$");
    let mut rest = text;
    let mut first = true;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('[') {
            let Some(end) = bracket_end(r) else {
                return plan_err!("invalid variant path `{text}`");
            };
            let inner = r[..end].trim();
            if let Some(q) = inner.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')) {
                push_key(&mut out, &q.replace("''", "'"), text)?;
            } else if !inner.is_empty() && inner.bytes().all(|b| b.is_ascii_digit()) {
                out.push('[');
                out.push_str(inner);
                out.push(']');
            } else {
                return plan_err!("unsupported subscript [{inner}] in variant path `{text}`");
            }
            rest = &r[end + 1..];
        } else {
            if !first {
                let Some(r) = rest.strip_prefix('.') else {
                    return plan_err!("invalid variant path `{text}`");
                };
                rest = r;
            }
            if let Some(r) = rest.strip_prefix('"') {
                let mut key = String::new();
                let mut chars = r.char_indices();
                let mut end = None;
                while let Some((i, c)) = chars.next() {
                    if c == '"' {
                        if r[i + 1..].starts_with('"') {
                            key.push('"');
                            chars.next();
                        } else {
                            end = Some(i + 1);
                            break;
                        }
                    } else {
                        key.push(c);
                    }
                }
                let Some(end) = end else {
                    return plan_err!("unterminated quoted key in variant path `{text}`");
                };
                if key.is_empty() {
                    return plan_err!("empty key in variant path `{text}`");
                }
                // Spark reads a backquoted name as path text: `field.name` is `field`, then
                // `name`, and `a[0]` an element of `a` (sqlparser shows backquotes as double
                // quotes). The key `field.name` itself is `['field.name']`.
                out.push_str(&colon_path_to_variant_path(&key)?[1..]);
                rest = &r[end..];
            } else {
                let end = rest.find(['.', '[']).unwrap_or(rest.len());
                if end == 0 {
                    return plan_err!("empty key in variant path `{text}`");
                }
                push_key(&mut out, &rest[..end], text)?;
                rest = &rest[end..];
            }
        }
        first = false;
    }
    Ok(out)
}

/// Index of the `]` closing a bracket whose content starts at `r` (quotes respected).
fn bracket_end(r: &str) -> Option<usize> {
    let mut in_quote = false;
    for (i, c) in r.char_indices() {
        match c {
            '\'' => in_quote = !in_quote,
            ']' if !in_quote => return Some(i),
            _ => {}
        }
    }
    None
}

/// Appends the path segment of object key `key` to `out` (`.key`, or `['key']` where it holds
/// `.` or `[`); `text` is the path written, for errors.
pub(super) fn push_key(out: &mut String, key: &str, text: &str) -> Result<()> {
    if !key.is_empty() && !key.contains(['.', '[']) {
        out.push('.');
        out.push_str(key);
        return Ok(());
    }
    let quote = if !key.contains('\'') {
        '\''
    } else if !key.contains('"') {
        '"'
    } else {
        return plan_err!("a key with both quote characters cannot be addressed: `{text}`");
    };
    out.push('[');
    out.push(quote);
    out.push_str(key);
    out.push(quote);
    out.push(']');
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts() {
        assert_eq!(colon_path_to_variant_path("a").unwrap(), "$.a");
        assert_eq!(colon_path_to_variant_path("a.b[0]").unwrap(), "$.a.b[0]");
        assert_eq!(colon_path_to_variant_path("\"x y\".z").unwrap(), "$.x y.z");
        assert_eq!(colon_path_to_variant_path("\"x.y\"").unwrap(), "$.x.y");
        assert_eq!(
            colon_path_to_variant_path("\"a[0]\".b").unwrap(),
            "$.a[0].b"
        );
        assert_eq!(colon_path_to_variant_path("['x.y']").unwrap(), "$['x.y']");
        assert!(colon_path_to_variant_path("\"\"").is_err());
        assert_eq!(colon_path_to_variant_path("['k'][1]").unwrap(), "$.k[1]");
        assert_eq!(colon_path_to_variant_path("[0]").unwrap(), "$[0]");
        assert_eq!(
            colon_path_to_variant_path("['it''s.x']").unwrap(),
            "$[\"it's.x\"]"
        );
        assert!(colon_path_to_variant_path("a[x]").is_err());
        assert!(colon_path_to_variant_path("a..b").is_err());
    }
}
