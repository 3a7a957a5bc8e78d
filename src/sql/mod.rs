//! SQL planning extensions: the `v:path` operator (bound as Spark binds it by [`run_sql`]), casts of variants as typed extractions, and
//! the `VARIANT` type name, `variant_explode` in FROM (also `LATERAL`), whole-value reads
//! (`to_json`) moved into the scan, and grouped distinct counts beside counts planned to spill.

pub mod case_branches;
pub mod cast_rewrite;
pub mod colon_path;
pub mod colon_precedence;
pub mod counts_beside_distinct;
pub mod explode;
pub mod statement_expressions;
pub mod type_planner;
pub mod union_to_variant;
pub mod variant_access;
pub mod variant_choice;
pub mod variant_coercion;
pub mod variant_ordering;
pub mod whole_value_reads;

pub use cast_rewrite::VariantCastRewrite;
pub use colon_path::ColonPathPlanner;
pub use colon_precedence::{parse_sql, run_sql};
pub use counts_beside_distinct::CountsBesideDistinct;
pub use explode::{LateralExplodeRule, VariantExplodePlanner};
pub use type_planner::VariantTypePlanner;
pub use union_to_variant::UnionToVariant;
pub use variant_access::VariantAccessPlanner;
pub use variant_choice::variant_choice_functions;
pub use variant_coercion::{VariantCoercion, VariantComparisonPlanner};
pub use variant_ordering::VariantOrderingCheck;
pub use whole_value_reads::WholeValueReadsIntoScan;
