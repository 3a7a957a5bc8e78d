//! Our functions whose planning leaves state in the function itself: `variant_get` and
//! `try_variant_get` hold their path parsed at planning, and a typed `variant_get` of a column
//! is planned as `variant_get_checked(variant_get_deferred(..))`, and `variant_explode` as a
//! hidden list function: names no registry holds.
//! Every other function of ours travels by name alone.
use std::sync::Arc;

use datafusion::common::Result;
use datafusion::execution::FunctionRegistry;
use datafusion::logical_expr::ScalarUDF;
use prost::Message;

use super::corrupt;
use crate::codec::{MAX_PATH_SEGMENTS, PathSegment, VariantPath};
use crate::functions::shred_variant::{SHRED_VARIANT_NAME, shred_variant_udf};
use crate::functions::try_variant_get::TryVariantGet;
use crate::functions::variant_explode::{EXPLODE_LIST_NAME, variant_explode_list_udf};
use crate::functions::variant_get::VariantGet;
use crate::functions::variant_get_checked::variant_get_checked_udf;

/// The planned path of a `variant_get` / `try_variant_get`; empty when it had none.
#[derive(Clone, PartialEq, prost::Message)]
struct PlannedGetNode {
    #[prost(bool, tag = "1")]
    has_path: bool,
    #[prost(message, repeated, tag = "2")]
    segments: Vec<SegmentNode>,
}

/// One segment of a path.
#[derive(Clone, PartialEq, prost::Message)]
struct SegmentNode {
    #[prost(oneof = "Segment", tags = "1, 2")]
    segment: Option<Segment>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
enum Segment {
    #[prost(string, tag = "1")]
    Key(String),
    #[prost(uint32, tag = "2")]
    Index(u32),
}

/// Registers in `registry` the functions plans hold that `register_all` leaves out (hidden from
/// SQL), without planned state: for engines whose codec asks the registry before ours, as
/// datafusion-distributed's does (its composed codec never gives function bytes to a user
/// codec). Paths are then parsed at execution, once per batch.
pub fn register_plan_functions(registry: &mut dyn FunctionRegistry) -> Result<()> {
    registry.register_udf(Arc::new(ScalarUDF::from(VariantGet::planned(None, true))))?;
    registry.register_udf(variant_get_checked_udf())?;
    registry.register_udf(variant_explode_list_udf())?;
    registry.register_udf(shred_variant_udf())?;
    Ok(())
}

/// Writes the planned state of `udf` into `buf`; false (nothing written) for a function that
/// is not ours. (The state of ours may be empty bytes: a `variant_get` without a path.)
pub(crate) fn encode_udf(udf: &ScalarUDF, buf: &mut Vec<u8>) -> Result<bool> {
    let inner = udf.inner();
    let path = if let Some(get) = inner.downcast_ref::<VariantGet>() {
        get.path()
    } else if let Some(get) = inner.downcast_ref::<TryVariantGet>() {
        get.path()
    } else {
        return Ok(false);
    };
    let segments = path.map_or(&[][..], |p| p.segments());
    PlannedGetNode {
        has_path: path.is_some(),
        segments: segments
            .iter()
            .map(|s| SegmentNode {
                segment: Some(match s {
                    PathSegment::Key(k) => Segment::Key(k.clone()),
                    PathSegment::Index(i) => Segment::Index(*i),
                }),
            })
            .collect(),
    }
    .encode(buf)
    .map_err(|e| corrupt("a function", e))?;
    Ok(true)
}

/// The function `name` with the state [`encode_udf`] wrote, or None for a function that has
/// none (the registry's is the one).
pub(crate) fn decode_udf(name: &str, buf: &[u8]) -> Result<Option<Arc<ScalarUDF>>> {
    let path = || -> Result<Option<VariantPath>> {
        let node = PlannedGetNode::decode(buf).map_err(|e| corrupt("a function", e))?;
        if !node.has_path {
            return Ok(None);
        }
        if node.segments.len() > MAX_PATH_SEGMENTS {
            return Err(corrupt("a path", "too many segments"));
        }
        let segments = node
            .segments
            .into_iter()
            .map(|s| match s.segment {
                Some(Segment::Key(k)) => Ok(PathSegment::Key(k)),
                Some(Segment::Index(i)) => Ok(PathSegment::Index(i)),
                None => Err(corrupt("a path", "a segment is empty")),
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Some(VariantPath::from_segments(segments)))
    };
    Ok(Some(Arc::new(match name {
        "variant_get" => ScalarUDF::from(VariantGet::planned(path()?, false)),
        "variant_get_deferred" => ScalarUDF::from(VariantGet::planned(path()?, true)),
        "try_variant_get" => ScalarUDF::from(TryVariantGet::planned(path()?)),
        "variant_get_checked" => return Ok(Some(variant_get_checked_udf())),
        EXPLODE_LIST_NAME => return Ok(Some(variant_explode_list_udf())),
        SHRED_VARIANT_NAME => return Ok(Some(shred_variant_udf())),
        _ => return Ok(None),
    })))
}
