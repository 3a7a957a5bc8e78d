//! A CASE with a variant branch is a VARIANT, as in Spark, also when the variant is not its first
//! branch: `CASE id WHEN 2 THEN 'two' ELSE v:s END` is the variant `"two"` on row 2.
//!
//! DataFusion types a CASE by its first branch that is not NULL while it plans the query, before
//! any rewrite can widen the others ([`crate::sql::VariantCoercion`] does that afterwards when the
//! first branch is the variant). So, on the syntax tree, [`cast_first_case_branches`] casts that
//! first branch to VARIANT when a later branch is a variant by its syntax: a `:` path, a cast to
//! VARIANT, a function whose result is always a variant, or a CASE or `coalesce` holding one. A
//! column of type VARIANT is known only by its type, which the syntax tree does not have: a CASE
//! whose first branch is not a variant and whose variant is a bare column stays
//! `VariantCoercion`'s error, which names the fix.
use std::collections::HashSet;
use std::sync::LazyLock;

use datafusion::sql::parser::Statement as DFStatement;
use datafusion::sql::sqlparser::ast::{
    CastKind, DataType, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Ident, ObjectName,
    Value,
};

use super::statement_expressions::rewrite_expressions;
use super::type_planner::is_variant_sql_type;
use crate::cast::target_type::parse_target_type;
use crate::variant_array::variant_data_type;

/// Our functions whose result is a VARIANT whatever their arguments (`variant_get` and
/// `try_variant_get` are one without a type argument, see [`is_variant_syntax`]).
static VARIANT_RESULT_FUNCTIONS: LazyLock<HashSet<String>> = LazyLock::new(|| {
    crate::functions::scalar_functions()
        .iter()
        .filter(|f| !matches!(f.name(), "variant_get" | "try_variant_get"))
        .filter(|f| f.return_type(&[]).ok() == Some(variant_data_type()))
        .map(|f| f.name().to_string())
        .collect()
});

/// Casts the first branch of each CASE in `statement` that is not NULL to VARIANT when it is not
/// a variant by its syntax and a later branch is; true if any changed.
pub fn cast_first_case_branches(statement: &mut DFStatement) -> bool {
    rewrite_expressions(statement, &mut cast_first_branch)
}

/// One node (the visit is post-order, so a CASE nested in a branch is already done).
fn cast_first_branch(expr: &mut Expr) -> bool {
    let Expr::Case {
        conditions,
        else_result,
        ..
    } = expr
    else {
        return false;
    };
    let mut results = conditions
        .iter_mut()
        .map(|when| &mut when.result)
        .chain(else_result.iter_mut().map(|e| e.as_mut()))
        .filter(|e| !is_null(e));
    let Some(first) = results.next() else {
        return false;
    };
    if is_variant_syntax(first) || !results.any(|e| is_variant_syntax(e)) {
        return false;
    }
    let value = std::mem::replace(first, Expr::Value(Value::Null.into()));
    *first = Expr::Cast {
        kind: CastKind::Cast,
        expr: Box::new(value),
        data_type: DataType::Custom(ObjectName::from(vec![Ident::new("VARIANT")]), vec![]),
        array: false,
        format: None,
    };
    true
}

fn is_null(expr: &Expr) -> bool {
    matches!(expr, Expr::Value(v) if v.value == Value::Null)
}

/// True when `expr`'s result is a VARIANT by its syntax alone.
fn is_variant_syntax(expr: &Expr) -> bool {
    match expr {
        Expr::JsonAccess { .. } => true,
        Expr::Cast { data_type, .. } => is_variant_sql_type(data_type),
        Expr::Nested(inner) => is_variant_syntax(inner),
        Expr::Case {
            conditions,
            else_result,
            ..
        } => conditions
            .iter()
            .map(|when| &when.result)
            .chain(else_result.as_deref())
            .any(is_variant_syntax),
        Expr::Function(function) => {
            let name = function.name.to_string().to_ascii_lowercase();
            let args: Vec<&Expr> = match &function.args {
                FunctionArguments::List(list) => list
                    .args
                    .iter()
                    .filter_map(|arg| match arg {
                        FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e),
                        _ => None,
                    })
                    .collect(),
                _ => vec![],
            };
            match name.as_str() {
                "variant_get" | "try_variant_get" => {
                    args.len() == 2 || args.get(2).is_some_and(|t| is_variant_type_name(t))
                }
                // our wrappers type these VARIANT when a choice is a variant
                "coalesce" | "nvl" | "ifnull" => args.iter().any(|e| is_variant_syntax(e)),
                "nvl2" => args.iter().skip(1).any(|e| is_variant_syntax(e)),
                name => VARIANT_RESULT_FUNCTIONS.contains(name),
            }
        }
        _ => false,
    }
}

/// A type argument of `variant_get` that names VARIANT.
fn is_variant_type_name(expr: &Expr) -> bool {
    matches!(expr, Expr::Value(v)
        if matches!(&v.value, Value::SingleQuotedString(s)
            if parse_target_type(s).ok() == Some(variant_data_type())))
}

#[cfg(test)]
mod tests {
    use datafusion::sql::parser::DFParserBuilder;
    use datafusion::sql::sqlparser::dialect::GenericDialect;

    use super::*;

    /// The statement's text after the cast, parsed with the generic dialect.
    fn cast(sql: &str) -> String {
        let mut statements: Vec<DFStatement> = DFParserBuilder::new(sql)
            .with_dialect(&GenericDialect {})
            .build()
            .unwrap()
            .parse_statements()
            .unwrap()
            .into();
        cast_first_case_branches(&mut statements[0]);
        statements[0].to_string()
    }

    #[test]
    fn the_first_branch_is_cast_when_a_later_one_is_a_variant() {
        let cases = [
            (
                "SELECT CASE id WHEN 2 THEN 'two' ELSE v:s END",
                "SELECT CASE id WHEN 2 THEN CAST('two' AS VARIANT) ELSE v:s END",
            ),
            (
                "SELECT CASE WHEN a THEN NULL WHEN b THEN 1 ELSE parse_json(j) END",
                "SELECT CASE WHEN a THEN NULL WHEN b THEN CAST(1 AS VARIANT) ELSE parse_json(j) END",
            ),
            (
                "SELECT CASE WHEN a THEN x ELSE variant_get(v, '$.a') END",
                "SELECT CASE WHEN a THEN CAST(x AS VARIANT) ELSE variant_get(v, '$.a') END",
            ),
            (
                "SELECT CASE WHEN a THEN x ELSE TRY_VARIANT_GET(v, '$.a', 'Variant') END",
                "SELECT CASE WHEN a THEN CAST(x AS VARIANT) ELSE TRY_VARIANT_GET(v, '$.a', 'Variant') END",
            ),
            (
                "SELECT CASE WHEN a THEN 'x' ELSE CASE WHEN b THEN 'y' ELSE (v:a) END END",
                "SELECT CASE WHEN a THEN CAST('x' AS VARIANT) ELSE CASE WHEN b THEN CAST('y' AS VARIANT) ELSE (v:a) END END",
            ),
            (
                "SELECT CASE WHEN a THEN 'x' ELSE coalesce(w, 'y'::variant) END",
                "SELECT CASE WHEN a THEN CAST('x' AS VARIANT) ELSE coalesce(w, 'y'::variant) END",
            ),
            (
                "SELECT f(CASE WHEN a THEN 'x' ELSE to_variant(1) END) FROM t WHERE CASE WHEN b THEN 1 ELSE v:n END IS NULL",
                "SELECT f(CASE WHEN a THEN CAST('x' AS VARIANT) ELSE to_variant(1) END) FROM t WHERE CASE WHEN b THEN CAST(1 AS VARIANT) ELSE v:n END IS NULL",
            ),
        ];
        for (sql, expected) in cases {
            assert_eq!(cast(sql), expected, "{sql}");
        }
    }

    #[test]
    fn other_cases_are_left_alone() {
        for sql in [
            // the variant comes first: DataFusion types the CASE by it
            "SELECT CASE WHEN a THEN v:s ELSE 'x' END",
            "SELECT CASE WHEN a THEN NULL WHEN b THEN v:s ELSE 'x' END",
            // no branch is a variant by its syntax
            "SELECT CASE WHEN a THEN 'x' ELSE v:s::STRING END",
            "SELECT CASE WHEN a THEN 'x' ELSE variant_get(v, '$.a', 'int') END",
            "SELECT CASE WHEN a THEN 'x' ELSE nvl2(v:a, 1, 2) END",
            "SELECT CASE WHEN a THEN 'x' ELSE v END",
            // a CASE holding a variant first: a variant itself
            "SELECT CASE WHEN a THEN CASE WHEN b THEN v:a ELSE 'x' END ELSE 'y' END",
            // a variant in a condition is not a result
            "SELECT CASE WHEN v:a IS NULL THEN 'x' ELSE 'y' END",
            "SELECT CASE WHEN a THEN NULL END",
        ] {
            assert_eq!(cast(sql), sql, "{sql}");
        }
    }

    #[test]
    fn functions_that_always_return_variants_are_known() {
        for name in [
            "parse_json",
            "try_parse_json",
            "to_variant",
            "variant_set",
            "variant_delete",
        ] {
            assert!(VARIANT_RESULT_FUNCTIONS.contains(name), "{name}");
        }
        for name in [
            "to_json",
            "variant_get",
            "schema_of_variant",
            "is_variant_null",
        ] {
            assert!(!VARIANT_RESULT_FUNCTIONS.contains(name), "{name}");
        }
    }
}
