//! One-call registration of everything this crate provides.
use std::collections::HashMap;
use std::sync::Arc;

use datafusion::catalog::Session;
use datafusion::catalog::TableFunction;
use datafusion::common::config::TableOptions;
use datafusion::datasource::provider::DefaultTableFactory;
use datafusion::error::Result;
use datafusion::execution::{SessionState, SessionStateBuilder};
use datafusion::logical_expr::planner::{ExprPlanner, RelationPlanner};
use datafusion::logical_expr::registry::MemoryExtensionTypeRegistry;
use datafusion::optimizer::{Analyzer, AnalyzerRule};
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
    ParquetWritesAsVariant, SampleUnderSort, VariantConfig, VariantParquetFormatFactory,
    VariantTableFactory, VariantTableOptions, WholeValueFiltersIntoScan,
};
use crate::sql::{
    ColonPathPlanner, CountsBesideDistinct, LateralExplodeRule, UnionToVariant,
    VariantAccessPlanner, VariantCastRewrite, VariantCoercion, VariantComparisonPlanner,
    VariantExplodePlanner, VariantOrderingCheck, VariantTypePlanner, WholeValueReadsIntoScan,
    variant_choice_functions,
};

/// Registers every function of this crate with `ctx`, the `v:path` operator, paths in
/// DataFusion's own syntax (`v['a'][0]`, `v->'a'`, `v->>'a'`), casts of variants (`CAST(v AS
/// INT)`, `v::int`, `TRY_CAST`, `CAST(x AS VARIANT)`), the `VARIANT` type name, `variant_explode`
/// in FROM (also `LATERAL`), JSON display of variants, the `parquet` file format reading
/// variant columns as variants, and `CREATE EXTERNAL TABLE .. STORED AS PARQUET` making tables
/// that logical plans can carry (around the session's own factory; [`crate::parquet`]), and JSON
/// files as variants (`read_json_variant(..)`, `STORED AS JSON_VARIANT`; [`crate::json_files`]):
/// everything [`register_all_with_state`] adds to a builder.
///
/// DataFusion 55 takes some of these only when a state is built (a type planner, physical
/// optimizer rules) or only at the end of its lists (expression planners, analyzer rules, which
/// must come before DataFusion's own), so the context's state is built again from itself with
/// them: its catalogs, tables, settings, runtime, rules, planners (its type planner plans what
/// is not `VARIANT`) and the functions it had stay, each name naming the function it named
/// (where an application's function took a name from another, under an alias of the other),
/// but where one of ours has that name (`parse_json`, `coalesce`, ...: ours are registered
/// last, as `register_udf` would). Statements prepared before (`PREPARE`) are not kept: call it
/// when the session is set up. A second call changes nothing.
pub fn register_all(ctx: &SessionContext) -> Result<()> {
    let state = ctx.state_ref();
    let mut state = state.write();
    // (a second call changes nothing)
    let installed = VariantOrderingCheck.name();
    if state.analyzer().rules.iter().any(|r| r.name() == installed) {
        return Ok(());
    }
    // the registry of extension types the session has, with ours (the builder's own would
    // leave out the session's)
    let registry = Arc::clone(state.extension_type_registry());
    registry.add_extension_type_registration(variant_extension_registration())?;
    let default_catalog = state
        .config()
        .options()
        .catalog
        .create_default_catalog_and_schema;
    *state = register_all_with_state(from_existing(&state))
        .with_extension_type_registry(registry)
        .build();
    // (the builder turns it off when the catalog exists already)
    state
        .config_mut()
        .options_mut()
        .catalog
        .create_default_catalog_and_schema = default_catalog;
    Ok(())
}

/// A builder of `state` as it is: its session id, and its functions in an order whose
/// registration gives every name the function it has now.
fn from_existing(state: &SessionState) -> SessionStateBuilder {
    let scalar = same_names(state.scalar_functions(), |f| (f.name(), f.aliases()));
    let aggregate = same_names(state.aggregate_functions(), |f| (f.name(), f.aliases()));
    let window = same_names(state.window_functions(), |f| (f.name(), f.aliases()));
    let higher_order = same_names(state.higher_order_functions(), |f| (f.name(), f.aliases()));
    SessionStateBuilder::new_from_existing(state.clone())
        .with_session_id(state.session_id().to_string())
        .with_scalar_functions(scalar)
        .with_aggregate_functions(aggregate)
        .with_window_functions(window)
        .with_higher_order_functions(higher_order)
}

/// Our expression planners, which must come before DataFusion's: its field access planner
/// plans every `x['a']` as a struct's field, a variant's too.
fn expr_planners() -> Vec<Arc<dyn ExprPlanner>> {
    vec![
        Arc::new(VariantAccessPlanner),
        Arc::new(ColonPathPlanner),
        Arc::new(VariantComparisonPlanner),
    ]
}

/// The functions of a registry's `map` (each under its name and aliases, but where a later one
/// took a name) in an order whose registration gives the same map: a function before every
/// function that took one of its names.
fn same_names<T>(
    map: &HashMap<String, Arc<T>>,
    names: impl Fn(&T) -> (&str, &[String]),
) -> Vec<Arc<T>> {
    let mut functions: Vec<Arc<T>> = vec![];
    for function in map.values() {
        if !functions.iter().any(|f| Arc::ptr_eq(f, function)) {
            functions.push(Arc::clone(function));
        }
    }
    // takers[i]: the functions that took a name of function i
    let index = |f: &Arc<T>| functions.iter().position(|g| Arc::ptr_eq(g, f));
    let takers: Vec<Vec<usize>> = (functions.iter())
        .map(|function| {
            let (name, aliases) = names(function);
            std::iter::once(name)
                .chain(aliases.iter().map(String::as_str))
                .filter_map(|n| map.get(n))
                .filter(|owner| !Arc::ptr_eq(owner, function))
                .filter_map(index)
                .collect()
        })
        .collect();
    // registered after all it took names from: Kahn's order over "i before its takers"
    let mut waiting = vec![0usize; functions.len()];
    for taken in &takers {
        for &t in taken {
            waiting[t] += 1;
        }
    }
    let mut ready: Vec<usize> = (0..functions.len()).filter(|&i| waiting[i] == 0).collect();
    let mut order = vec![];
    while let Some(i) = ready.pop() {
        order.push(Arc::clone(&functions[i]));
        for &t in &takers[i] {
            waiting[t] -= 1;
            if waiting[t] == 0 {
                ready.push(t);
            }
        }
    }
    if order.len() < functions.len() {
        // (no sequence of registrations makes a cycle: the map as it is, in any order)
        return functions;
    }
    order
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
    builder
        .expr_planners()
        .get_or_insert_with(Vec::new)
        .splice(0..0, expr_planners());
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
    analyzer.rules.push(Arc::new(ParquetWritesAsVariant));
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
    let others = builder.type_planner().take();
    builder
        .with_optimizer_rule(Arc::new(WholeValueReadsIntoScan))
        .with_optimizer_rule(Arc::new(CountsBesideDistinct))
        .with_physical_optimizer_rule(Arc::new(WholeValueFiltersIntoScan))
        .with_physical_optimizer_rule(Arc::new(SampleUnderSort))
        .with_extension_type_registry(Arc::new(registry))
        .with_type_planner(Arc::new(VariantTypePlanner::around(others)))
}

/// A `SessionContext` with DataFusion's defaults and everything this crate provides.
pub fn session_context() -> SessionContext {
    let state = register_all_with_state(SessionStateBuilder::new().with_default_features()).build();
    SessionContext::new_with_state(state)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Named(&'static str, Vec<String>);

    /// Registering in the order `same_names` gives makes the same map, whatever order the map
    /// iterates in: a function registered before the one that took its name.
    #[test]
    fn registration_keeps_every_name_on_its_function() {
        // `theirs` claims t and its alias t2; `mine` took t; `other` owns o
        let theirs = Arc::new(Named("t", vec!["t2".to_string()]));
        let mine = Arc::new(Named("t", vec![]));
        let other = Arc::new(Named("o", vec![]));
        let map: HashMap<String, Arc<Named>> = [
            ("t".to_string(), Arc::clone(&mine)),
            ("t2".to_string(), Arc::clone(&theirs)),
            ("o".to_string(), Arc::clone(&other)),
        ]
        .into();
        let order = same_names(&map, |f| (f.0, f.1.as_slice()));
        assert_eq!(order.len(), 3);
        let mut rebuilt: HashMap<String, Arc<Named>> = HashMap::new();
        for function in &order {
            for name in std::iter::once(function.0.to_string()).chain(function.1.clone()) {
                rebuilt.insert(name, Arc::clone(function));
            }
        }
        for (name, function) in &map {
            assert!(Arc::ptr_eq(&rebuilt[name], function), "{name}");
        }
    }
}
