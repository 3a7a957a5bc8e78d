//! One-call registration of everything this crate provides.
use std::sync::Arc;

use datafusion::catalog::Session;
use datafusion::catalog::TableFunction;
use datafusion::common::config::TableOptions;
use datafusion::datasource::provider::DefaultTableFactory;
use datafusion::error::Result;
use datafusion::execution::{FunctionRegistry, SessionStateBuilder};
use datafusion::logical_expr::planner::{ExprPlanner, RelationPlanner};
use datafusion::logical_expr::registry::MemoryExtensionTypeRegistry;
use datafusion::optimizer::Analyzer;
use datafusion::prelude::SessionConfig;
use datafusion::prelude::SessionContext;

use crate::display::variant_extension_registration;
use crate::functions::common::KernelMemory;
use crate::functions::{aggregate_functions, scalar_functions};
use crate::json_files::{
    JSON_VARIANT, READ_JSON_VARIANT, ReadJsonVariant, ReadJsonVariantPlanner,
    VariantJsonTableFactory,
};
use crate::parquet::{
    SampleUnderSort, VariantConfig, VariantParquetFormatFactory, VariantTableFactory,
    VariantTableOptions, WholeValueFiltersIntoScan,
};
use crate::sql::{
    ColonPathPlanner, LateralExplodeRule, UnionToVariant, VariantCastRewrite, VariantCoercion,
    VariantComparisonPlanner, VariantExplodePlanner, VariantOrderingCheck, VariantTypePlanner,
    WholeValueReadsIntoScan, variant_choice_functions,
};

/// Registers every function of this crate with `ctx`, the `v:path` operator, casts of variants
/// (`CAST(v AS INT)`, `v::int`, `TRY_CAST`, `CAST(x AS VARIANT)`), `variant_explode` in FROM
/// (also `LATERAL`), JSON display of variants, the `parquet` file format reading variant
/// columns as variants, and `CREATE EXTERNAL TABLE .. STORED AS PARQUET` making tables that
/// logical plans can carry (around the session's own factory; [`crate::parquet`]), and JSON
/// files as variants (`read_json_variant(..)`, `STORED AS JSON_VARIANT`; [`crate::json_files`]).
///
/// The `VARIANT` type name needs a type planner, and computing whole-value reads of a filter in
/// the scan ([`crate::parquet::WholeValueFiltersIntoScan`]) a physical optimizer rule; DataFusion
/// 55 accepts both only when the session state is built: use [`register_all_with_state`] (or
/// [`session_context`]) for them. (Rebuilding the context's state from itself would not do: it
/// registers the functions again in no fixed order, so where two claim a name, e.g. an
/// application's `date_trunc` over DataFusion's, either may win.)
pub fn register_all(ctx: &SessionContext) -> Result<()> {
    for udf in scalar_functions()
        .into_iter()
        .chain(variant_choice_functions())
    {
        ctx.register_udf(udf.as_ref().clone());
    }
    for udaf in aggregate_functions() {
        ctx.register_udaf(udaf.as_ref().clone());
    }
    ctx.register_table_options_extension(VariantTableOptions::default());
    ctx.register_udtf(READ_JSON_VARIANT, Arc::new(ReadJsonVariant));
    ctx.add_optimizer_rule(Arc::new(WholeValueReadsIntoScan));
    let state = ctx.state_ref();
    let mut state = state.write();
    let pool = Arc::clone(&state.runtime_env().memory_pool);
    let extensions = &mut state.config_mut().options_mut().extensions;
    // kept when the configuration has them already (a session's copy, its `SET`s included)
    if extensions.get::<VariantConfig>().is_none() {
        extensions.insert(VariantConfig::default());
    }
    extensions.insert(KernelMemory::new(pool));
    state.register_expr_planner(Arc::new(ColonPathPlanner))?;
    state.register_expr_planner(Arc::new(VariantComparisonPlanner))?;
    state.register_function_rewrite(Arc::new(VariantCastRewrite))?;
    state.register_function_rewrite(Arc::new(VariantCoercion))?;
    state.register_relation_planner(Arc::new(VariantExplodePlanner))?;
    state.register_relation_planner(Arc::new(ReadJsonVariantPlanner))?;
    state.add_analyzer_rule(Arc::new(LateralExplodeRule));
    state.add_analyzer_rule(Arc::new(VariantOrderingCheck));
    state.register_file_format(Arc::new(VariantParquetFormatFactory::new()), true)?;
    let parquet_tables = state
        .table_factories()
        .get("PARQUET")
        .cloned()
        .unwrap_or_else(|| Arc::new(DefaultTableFactory::new()));
    state.table_factories_mut().insert(
        "PARQUET".to_string(),
        Arc::new(VariantTableFactory::wrapping(parquet_tables)),
    );
    state
        .table_factories_mut()
        .insert(JSON_VARIANT.to_string(), Arc::new(VariantJsonTableFactory));
    #[cfg(feature = "delta")]
    state.table_factories_mut().insert(
        crate::delta::DELTATABLE.to_string(),
        Arc::new(crate::delta::DeltaTableFactory),
    );
    state
        .extension_type_registry()
        .add_extension_type_registration(variant_extension_registration())?;
    Ok(())
}

/// Adds everything [`register_all`] does, plus the `VARIANT` type name, to a
/// `SessionStateBuilder`:
/// `register_all_with_state(SessionStateBuilder::new().with_default_features()).build()`.
///
/// Set the runtime (`with_runtime_env`) before this call: the functions' outputs are checked
/// against its memory pool. It installs an extension-type registry holding the variant type
/// (DataFusion 55 registers no extension types by default), so that `DataFrame::show` prints
/// variants as JSON.
pub fn register_all_with_state(mut builder: SessionStateBuilder) -> SessionStateBuilder {
    builder
        .scalar_functions()
        .get_or_insert_with(Vec::new)
        .extend(
            scalar_functions()
                .into_iter()
                .chain(variant_choice_functions()),
        );
    builder
        .aggregate_functions()
        .get_or_insert_with(Vec::new)
        .extend(aggregate_functions());
    builder.expr_planners().get_or_insert_with(Vec::new).splice(
        0..0,
        [
            Arc::new(ColonPathPlanner) as Arc<dyn ExprPlanner>,
            Arc::new(VariantComparisonPlanner),
        ],
    );
    builder
        .analyzer()
        .get_or_insert_with(Analyzer::new)
        .add_function_rewrite(Arc::new(VariantCastRewrite));
    let analyzer = builder.analyzer().get_or_insert_with(Analyzer::new);
    analyzer.add_function_rewrite(Arc::new(VariantCoercion));
    // before DataFusion's type coercion, which refuses a union of a variant with another type
    analyzer.rules.insert(0, Arc::new(UnionToVariant));
    analyzer.rules.push(Arc::new(LateralExplodeRule));
    analyzer.rules.push(Arc::new(VariantOrderingCheck));
    builder
        .relation_planners()
        .get_or_insert_with(Vec::new)
        .splice(
            0..0,
            [
                Arc::new(VariantExplodePlanner) as Arc<dyn RelationPlanner>,
                Arc::new(ReadJsonVariantPlanner),
            ],
        );
    builder
        .table_functions()
        .get_or_insert_with(Default::default)
        .insert(
            READ_JSON_VARIANT.to_string(),
            Arc::new(TableFunction::new(
                READ_JSON_VARIANT.to_string(),
                Arc::new(ReadJsonVariant),
            )),
        );
    builder
        .table_options()
        .get_or_insert_with(TableOptions::default)
        .extensions
        .insert(VariantTableOptions::default());
    // The kernels check their outputs against the pool of the runtime set on the builder: one
    // set after this call is not seen (none: the default runtime's pool, which has no limit).
    let pool = builder
        .runtime_env()
        .as_ref()
        .map(|runtime| Arc::clone(&runtime.memory_pool));
    let extensions = &mut builder
        .config()
        .get_or_insert_with(SessionConfig::new)
        .options_mut()
        .extensions;
    // kept when the configuration has them already (a session's copy, its `SET`s included)
    if extensions.get::<VariantConfig>().is_none() {
        extensions.insert(VariantConfig::default());
    }
    if let Some(pool) = pool {
        extensions.insert(KernelMemory::new(pool));
    }
    // first wins when the state is built, so this replaces DataFusion's `parquet` format
    builder
        .file_formats()
        .get_or_insert_with(Vec::new)
        .insert(0, Arc::new(VariantParquetFormatFactory::new()));
    let table_factories = builder
        .table_factories()
        .get_or_insert_with(Default::default);
    let parquet_tables = table_factories
        .get("PARQUET")
        .cloned()
        .unwrap_or_else(|| Arc::new(DefaultTableFactory::new()));
    table_factories.insert(
        "PARQUET".to_string(),
        Arc::new(VariantTableFactory::wrapping(parquet_tables)),
    );
    table_factories.insert(JSON_VARIANT.to_string(), Arc::new(VariantJsonTableFactory));
    #[cfg(feature = "delta")]
    table_factories.insert(
        crate::delta::DELTATABLE.to_string(),
        Arc::new(crate::delta::DeltaTableFactory),
    );
    let registry = MemoryExtensionTypeRegistry::new_with_types([variant_extension_registration()])
        .expect("variant is not a native type");
    builder
        .with_optimizer_rule(Arc::new(WholeValueReadsIntoScan))
        .with_physical_optimizer_rule(Arc::new(WholeValueFiltersIntoScan))
        .with_physical_optimizer_rule(Arc::new(SampleUnderSort))
        .with_extension_type_registry(Arc::new(registry))
        .with_type_planner(Arc::new(VariantTypePlanner))
}

/// A `SessionContext` with DataFusion's defaults and everything this crate provides.
pub fn session_context() -> SessionContext {
    let state = register_all_with_state(SessionStateBuilder::new().with_default_features()).build();
    SessionContext::new_with_state(state)
}
