//! One-call registration of everything this crate provides.
use datafusion::error::Result;
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::SessionContext;

use std::sync::Arc;

use datafusion::catalog::Session;
use datafusion::logical_expr::registry::MemoryExtensionTypeRegistry;

use crate::display::variant_extension_registration;
use crate::functions::{aggregate_functions, scalar_functions};

/// Registers every function of this crate with `ctx`.
pub fn register_all(ctx: &SessionContext) -> Result<()> {
    for udf in scalar_functions() {
        ctx.register_udf(udf.as_ref().clone());
    }
    for udaf in aggregate_functions() {
        ctx.register_udaf(udaf.as_ref().clone());
    }
    ctx.state_ref()
        .read()
        .extension_type_registry()
        .add_extension_type_registration(variant_extension_registration())?;
    Ok(())
}

/// Adds every function of this crate to a `SessionStateBuilder`:
/// `register_all_with_state(SessionStateBuilder::new().with_default_features()).build()`.
///
/// It installs an extension-type registry holding the variant type (DataFusion 55 registers no
/// extension types by default), so that `DataFrame::show` prints variants as JSON.
pub fn register_all_with_state(mut builder: SessionStateBuilder) -> SessionStateBuilder {
    let functions = builder.scalar_functions().get_or_insert_with(Vec::new);
    functions.extend(scalar_functions());
    let aggregates = builder.aggregate_functions().get_or_insert_with(Vec::new);
    aggregates.extend(aggregate_functions());
    let registry = MemoryExtensionTypeRegistry::new_with_types([variant_extension_registration()])
        .expect("variant is not a native type");
    builder.with_extension_type_registry(Arc::new(registry))
}
