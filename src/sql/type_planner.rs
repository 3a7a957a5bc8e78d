//! The `VARIANT` SQL type name (`CREATE TABLE t (v VARIANT)`, `CAST(x AS VARIANT)`).
use std::sync::Arc;

use datafusion::arrow::datatypes::FieldRef;
use datafusion::common::Result;
use datafusion::logical_expr::planner::TypePlanner;
use datafusion::sql::sqlparser::ast::DataType as SqlDataType;

use crate::variant_array::variant_field;

/// Plans the `VARIANT` type name as the variant extension struct, and hands every other type
/// to the planner the session had (a session has one type planner: an application's, or the
/// one a test harness gives for `UUID`, keeps working).
#[derive(Debug, Default)]
pub struct VariantTypePlanner {
    others: Option<Arc<dyn TypePlanner>>,
}

impl VariantTypePlanner {
    /// `VARIANT`, then `others` for the rest.
    pub fn around(others: Option<Arc<dyn TypePlanner>>) -> Self {
        VariantTypePlanner { others }
    }
}

impl TypePlanner for VariantTypePlanner {
    fn plan_type_field(&self, sql_type: &SqlDataType) -> Result<Option<FieldRef>> {
        if is_variant_sql_type(sql_type) {
            return Ok(Some(Arc::new(variant_field("variant", true))));
        }
        match &self.others {
            Some(others) => others.plan_type_field(sql_type),
            None => Ok(None),
        }
    }
}

/// True for the SQL type name `VARIANT` (any case, no modifiers).
pub fn is_variant_sql_type(sql_type: &SqlDataType) -> bool {
    matches!(sql_type, SqlDataType::Custom(name, modifiers)
        if modifiers.is_empty() && name.to_string().eq_ignore_ascii_case("variant"))
}
