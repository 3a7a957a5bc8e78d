//! Inferring a shredding type from variant values (what automatic shredding on write and
//! `variant_shredding_schema_agg` choose). Two rules ([`InferenceRule`]):
//!
//! **Spark's** (Spark 4.1+, `variant.shred_inference = 'spark'`):
//! - each object field, array element and value is summarised by its *kind*: a primitive type,
//!   an object or an array; kinds merge when they agree (integers of any width widen to BIGINT;
//!   decimals and integers merge into a decimal with the larger scale and the larger count of
//!   integer digits, while that fits 38 digits; a variant null goes with anything), and anything
//!   else (a string and a number, a double and a decimal) becomes VARIANT (kept in `value`, no
//!   typed column);
//! - an object field is kept when it is present in at least a tenth of the non-null values (a
//!   field inside arrays: counted per element).
//!
//! **Ours** (the default): the same kinds, but
//! - a place whose values disagree is shredded on its *dominant* kind (the one most of its values
//!   have: objects, arrays, or a primitive kind merged as above; on ties objects, then arrays,
//!   then boolean, numbers, string, binary, date, timestamps), the other values kept in its
//!   `value` column, as the specification allows;
//! - a field is kept when it is present in a tenth of the values, or at least twice and in at
//!   least one value in a hundred (so sparse fields are columns of their own: an absent field is
//!   a run of nulls, nearly free to store; map-like objects whose keys differ in each value are
//!   not). Rarer fields stay in `value`: each column costs every row some writing time.
//!
//! Both: at most [`InferLimits::max_columns`] Parquet columns (a field costs its `value` column,
//! and one more for a typed primitive) and [`InferLimits::max_depth`] nesting levels; when more
//! fields qualify than fit, the most frequent are kept (at each level, the more frequent fields
//! and what they hold first), ties broken by name, and the kept fields are written in name order,
//! so the same values always give the same type.
//!
//! Decimals are widened to 18 digits (or 38 past that) at their scale, leaving room for the
//! values that follow the sample; an integer counts as many integer digits as its width holds (3,
//! 5, 10 or 19). An array whose values are all empty gets a list of VARIANT elements. Times,
//! nanosecond timestamps and UUIDs stay in `value` (Spark and older readers do not take them as
//! typed columns). Spark's rule is checked against Spark 4.3's own inference (`spark.sql.variant.
//! inferShreddingSchema`) on the cases of the tests below.
use std::collections::BTreeMap;

use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::datatypes::{DataType, Field, Fields, TimeUnit};
use datafusion::common::{DataFusionError, Result};

use super::{codec_err, variant_column};
use crate::codec::{Value, Variant, VariantBuilder};
use crate::variant_array::variant_data_type;

/// Which fields and types an inference chooses (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InferenceRule {
    /// Dominant kinds and sparse fields, within the column budget.
    #[default]
    Default,
    /// Spark's rule: fields in a tenth of the values, places whose values disagree unshredded.
    Spark,
}

impl InferenceRule {
    /// The rule a `variant.shred_inference` value names (`default` or `spark`, any case).
    pub fn parse(name: &str) -> Result<Self> {
        match name.trim().to_ascii_lowercase().as_str() {
            "default" => Ok(InferenceRule::Default),
            "spark" => Ok(InferenceRule::Spark),
            _ => Err(DataFusionError::Plan(format!(
                "variant.shred_inference: unknown rule '{name}' (expected 'default' or 'spark')"
            ))),
        }
    }

    /// The name [`Self::parse`] reads.
    pub fn name(self) -> &'static str {
        match self {
            InferenceRule::Default => "default",
            InferenceRule::Spark => "spark",
        }
    }
}

impl std::fmt::Display for InferenceRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Bounds on an inferred shredding type, and the rule that chooses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InferLimits {
    /// Parquet columns the shredded fields of one file may use, across its variant columns.
    pub max_columns: usize,
    /// Nesting levels shredded.
    pub max_depth: usize,
    /// The rule.
    pub rule: InferenceRule,
}

impl Default for InferLimits {
    fn default() -> Self {
        InferLimits {
            max_columns: 300,
            max_depth: 50,
            rule: InferenceRule::Default,
        }
    }
}

/// What the values at one place have been, merged.
#[derive(Debug, Clone, PartialEq)]
enum Kind {
    /// Nothing seen yet, or only variant nulls.
    Unknown,
    Boolean,
    /// Integers, with the digits their widest type holds.
    Integer(u8),
    Float,
    Double,
    /// (integer digits, scale).
    Decimal(u8, u8),
    String,
    Binary,
    Date,
    Timestamp,
    TimestampNtz,
    Object,
    Array,
    /// Values that do not agree: no typed column.
    Variant,
}

impl Kind {
    fn of(value: &Value<'_>) -> Kind {
        match value {
            Value::Null => Kind::Unknown,
            Value::Boolean(_) => Kind::Boolean,
            Value::Int8(_) => Kind::Integer(3),
            Value::Int16(_) => Kind::Integer(5),
            Value::Int32(_) => Kind::Integer(10),
            Value::Int64(_) => Kind::Integer(19),
            Value::Float(_) => Kind::Float,
            Value::Double(_) => Kind::Double,
            Value::Decimal4(v, s) => Kind::decimal(*v as i128, *s),
            Value::Decimal8(v, s) => Kind::decimal(*v as i128, *s),
            Value::Decimal16(v, s) => Kind::decimal(*v, *s),
            Value::String(_) => Kind::String,
            Value::Binary(_) => Kind::Binary,
            Value::Date(_) => Kind::Date,
            Value::Timestamp(_) => Kind::Timestamp,
            Value::TimestampNtz(_) => Kind::TimestampNtz,
            Value::Object(_) => Kind::Object,
            Value::Array(_) => Kind::Array,
            Value::Time(_)
            | Value::TimestampNanos(_)
            | Value::TimestampNtzNanos(_)
            | Value::Uuid(_) => Kind::Variant,
        }
    }

    /// The kind of the decimal `v / 10^scale`: its integer digits and scale.
    fn decimal(v: i128, scale: u8) -> Kind {
        let digits = v.unsigned_abs().checked_ilog10().map_or(1, |l| l + 1) as u8;
        Kind::Decimal(digits.saturating_sub(scale), scale)
    }

    /// Which kind wins a tie of counts: objects, arrays, then the primitive kinds in a fixed
    /// order, not the order the values came in (partial states of the aggregate merge in the
    /// order partitions finish, which would make the choice vary from run to run).
    fn tie_rank(&self) -> u8 {
        match self {
            Kind::Object => 0,
            Kind::Array => 1,
            Kind::Boolean => 2,
            Kind::Integer(_) | Kind::Decimal(..) => 3,
            Kind::Float => 4,
            Kind::Double => 5,
            Kind::String => 6,
            Kind::Binary => 7,
            Kind::Date => 8,
            Kind::Timestamp => 9,
            Kind::TimestampNtz => 10,
            Kind::Unknown | Kind::Variant => 11,
        }
    }

    fn merge(&mut self, other: Kind) {
        *self = match (std::mem::replace(self, Kind::Unknown), other) {
            (Kind::Unknown, k) | (k, Kind::Unknown) => k,
            (Kind::Integer(a), Kind::Integer(b)) => Kind::Integer(a.max(b)),
            (Kind::Decimal(r1, s1), Kind::Decimal(r2, s2)) => decimal_kind(r1.max(r2), s1.max(s2)),
            (Kind::Integer(d), Kind::Decimal(r, s)) | (Kind::Decimal(r, s), Kind::Integer(d)) => {
                decimal_kind(r.max(d), s)
            }
            (a, b) if a == b => a,
            _ => Kind::Variant,
        };
    }
}

/// A decimal of `integer_digits` and `scale`, or VARIANT past 38 digits.
fn decimal_kind(integer_digits: u8, scale: u8) -> Kind {
    if integer_digits as u16 + scale as u16 > 38 {
        Kind::Variant
    } else {
        Kind::Decimal(integer_digits, scale)
    }
}

/// The statistics of one place in the values: the kind of its values, how often it occurs, and
/// the same for its fields (objects) and elements (arrays).
#[derive(Debug, Clone, Default)]
struct Node {
    /// Values this place has (a field: the objects that have it; inside arrays, per element).
    count: u64,
    /// How many of them are objects, arrays, and primitives of each kind (kinds merged while they
    /// agree, each with its count; variant nulls are not counted).
    objects: u64,
    arrays: u64,
    primitives: Vec<(Kind, u64)>,
    fields: BTreeMap<String, Node>,
    element: Option<Box<Node>>,
}

impl Node {
    /// Counts `n` values of `kind`.
    fn count_kind(&mut self, kind: Kind, n: u64) {
        match kind {
            Kind::Unknown => {}
            Kind::Object => self.objects += n,
            Kind::Array => self.arrays += n,
            kind => {
                for (k, count) in &mut self.primitives {
                    // (the common case: a value of the kind already counted)
                    if *k == kind {
                        *count += n;
                        return;
                    }
                    let mut merged = k.clone();
                    merged.merge(kind.clone());
                    if merged != Kind::Variant {
                        *k = merged;
                        *count += n;
                        return;
                    }
                }
                self.primitives.push((kind, n));
            }
        }
    }

    /// All its values' kinds merged (Spark's rule): the one kind counted, VARIANT when values of
    /// kinds that do not merge were counted, Unknown when only nulls.
    fn merged(&self) -> Kind {
        let objects = (self.objects > 0).then_some(Kind::Object);
        let arrays = (self.arrays > 0).then_some(Kind::Array);
        let mut kinds = objects
            .into_iter()
            .chain(arrays)
            .chain(self.primitives.iter().map(|(k, _)| k.clone()));
        match (kinds.next(), kinds.next()) {
            (None, _) => Kind::Unknown,
            (Some(kind), None) => kind,
            (Some(_), Some(_)) => Kind::Variant,
        }
    }

    /// The kind most of its values have (on ties the first in [`Kind::tie_rank`]'s order);
    /// Unknown when it has only nulls.
    fn dominant(&self) -> Kind {
        let mut best = (Kind::Unknown, 0);
        for (kind, n) in [(Kind::Object, self.objects), (Kind::Array, self.arrays)]
            .into_iter()
            .chain(self.primitives.iter().cloned())
        {
            if n > best.1 || (n > 0 && n == best.1 && kind.tie_rank() < best.0.tie_rank()) {
                best = (kind, n);
            }
        }
        best.0
    }
}

/// The statistics of a variant column's values, from which [`ShreddingInference::finish`]
/// chooses a shredding type.
#[derive(Debug, Clone, Default)]
pub struct ShreddingInference {
    root: Node,
    /// Non-null values seen.
    values: u64,
    /// Places recorded (for the memory estimate).
    nodes: usize,
    limits: InferLimits,
}

impl ShreddingInference {
    /// An inference with `limits`.
    pub fn new(limits: InferLimits) -> Self {
        ShreddingInference {
            limits,
            ..Default::default()
        }
    }

    /// Adds one value (a SQL NULL is not added).
    pub fn add(&mut self, v: Variant<'_>) -> Result<()> {
        self.values += 1;
        let depth = self.limits.max_depth;
        add_to(&mut self.root, v, depth, &mut self.nodes)
    }

    /// Adds every non-null value of a variant column (any layout).
    pub fn add_column(&mut self, column: &ArrayRef) -> Result<()> {
        let column = variant_column(column)?;
        let rows = column.rows()?;
        for i in 0..column.len() {
            if let Some(v) = rows.get(i)? {
                self.add(v)?;
            }
        }
        Ok(())
    }

    /// Adds what `other` saw.
    pub fn merge(&mut self, other: &ShreddingInference) {
        self.values += other.values;
        merge_nodes(&mut self.root, &other.root, &mut self.nodes);
    }

    /// An estimate of the memory the statistics take, in bytes.
    pub fn size(&self) -> usize {
        std::mem::size_of::<Self>() + self.nodes * (std::mem::size_of::<Node>() + 32)
    }

    /// The statistics as a variant value (`(metadata, value)`), which [`Self::decode`] reads
    /// back: the partial state of `variant_shredding_schema_agg`.
    pub fn encode(&self) -> Result<(Vec<u8>, Vec<u8>)> {
        let mut b = VariantBuilder::new();
        b.begin_object();
        b.key("values");
        b.int(self.values as i64);
        b.key("tree");
        encode_node(&mut b, &self.root);
        b.end_object().map_err(codec_err)?;
        b.finish().map_err(codec_err)?;
        Ok((b.metadata().to_vec(), b.value().to_vec()))
    }

    /// Statistics [`Self::encode`] wrote, with `limits`.
    pub fn decode(v: Variant<'_>, limits: InferLimits) -> Result<Self> {
        let Value::Object(obj) = v.get().map_err(codec_err)? else {
            return Err(bad_state());
        };
        let values = count_field(&obj, "values")?;
        let mut nodes = 0;
        let root = match obj.get("tree").map_err(codec_err)? {
            Some(tree) => decode_node(tree, &mut nodes)?,
            None => return Err(bad_state()),
        };
        Ok(ShreddingInference {
            root,
            values,
            nodes,
            limits,
        })
    }

    /// The shredding type for the values seen (VARIANT: none), using at most `columns` Parquet
    /// columns (decremented by what it uses).
    pub fn finish(&self, columns: &mut usize) -> DataType {
        let tenth = self.values.div_ceil(10).max(1);
        let choice = match self.limits.rule {
            InferenceRule::Spark => Choice {
                tenth,
                sparse: None,
                dominant: false,
            },
            InferenceRule::Default => Choice {
                tenth,
                sparse: Some(self.values.div_ceil(100).max(2)),
                dominant: true,
            },
        };
        shredding_type(&self.root, &choice, columns)
    }
}

/// Records `v` at `node` and below, down to `depth` more levels (counting new places in
/// `nodes`).
#[recursive::recursive]
fn add_to(node: &mut Node, v: Variant<'_>, depth: usize, nodes: &mut usize) -> Result<()> {
    node.count += 1;
    if depth == 0 {
        node.count_kind(Kind::Variant, 1);
        return Ok(());
    }
    let value = v.get().map_err(codec_err)?;
    let kind = Kind::of(&value);
    node.count_kind(kind, 1);
    match value {
        Value::Object(obj) => {
            obj.check_field_sizes().map_err(codec_err)?;
            for i in 0..obj.len() {
                let key = obj.key(i).map_err(codec_err)?;
                let child = match node.fields.get_mut(key) {
                    Some(child) => child,
                    None => {
                        *nodes += 1;
                        node.fields.entry(key.to_string()).or_default()
                    }
                };
                add_to(child, obj.value(i).map_err(codec_err)?, depth - 1, nodes)?;
            }
        }
        Value::Array(array) => {
            let element = node.element.get_or_insert_with(|| {
                *nodes += 1;
                Default::default()
            });
            for item in array.iter() {
                add_to(element, item.map_err(codec_err)?, depth - 1, nodes)?;
            }
        }
        _ => {}
    }
    Ok(())
}

#[recursive::recursive]
fn merge_nodes(into: &mut Node, from: &Node, nodes: &mut usize) {
    into.count += from.count;
    into.objects += from.objects;
    into.arrays += from.arrays;
    for (kind, n) in &from.primitives {
        into.count_kind(kind.clone(), *n);
    }
    for (key, child) in &from.fields {
        let into_child = into.fields.entry(key.clone()).or_insert_with(|| {
            *nodes += 1;
            Node::default()
        });
        merge_nodes(into_child, child, nodes);
    }
    if let Some(element) = &from.element {
        let into_element = into.element.get_or_insert_with(|| {
            *nodes += 1;
            Default::default()
        });
        merge_nodes(into_element, element, nodes);
    }
}

/// The codes of the kinds in the encoded state.
const KINDS: [Kind; 14] = [
    Kind::Unknown,
    Kind::Boolean,
    Kind::Integer(0),
    Kind::Float,
    Kind::Double,
    Kind::Decimal(0, 0),
    Kind::String,
    Kind::Binary,
    Kind::Date,
    Kind::Timestamp,
    Kind::TimestampNtz,
    Kind::Object,
    Kind::Array,
    Kind::Variant,
];

/// Writes `kind` as the fields `k` (its code), `p` and `s` (digits and scale) of the open object.
fn encode_kind(b: &mut VariantBuilder, kind: &Kind) {
    let code = KINDS
        .iter()
        .position(|k| std::mem::discriminant(k) == std::mem::discriminant(kind))
        .unwrap_or(0);
    b.key("k");
    b.int(code as i64);
    if let Kind::Integer(d) | Kind::Decimal(d, _) = kind {
        b.key("p");
        b.int(*d as i64);
    }
    if let Kind::Decimal(_, s) = kind {
        b.key("s");
        b.int(*s as i64);
    }
}

#[recursive::recursive]
fn encode_node(b: &mut VariantBuilder, node: &Node) {
    b.begin_object();
    b.key("n");
    b.int(node.count as i64);
    b.key("o");
    b.int(node.objects as i64);
    b.key("a");
    b.int(node.arrays as i64);
    if !node.primitives.is_empty() {
        b.key("t");
        b.begin_array();
        for (kind, n) in &node.primitives {
            b.begin_object();
            encode_kind(b, kind);
            b.key("n");
            b.int(*n as i64);
            let _ = b.end_object();
        }
        b.end_array();
    }
    if !node.fields.is_empty() {
        b.key("f");
        b.begin_object();
        for (key, child) in &node.fields {
            b.key(key);
            encode_node(b, child);
        }
        let _ = b.end_object();
    }
    if let Some(element) = &node.element {
        b.key("e");
        encode_node(b, element);
    }
    let _ = b.end_object();
}

fn int_of(v: &Value<'_>) -> Option<i64> {
    match v {
        Value::Int8(n) => Some(*n as i64),
        Value::Int16(n) => Some(*n as i64),
        Value::Int32(n) => Some(*n as i64),
        Value::Int64(n) => Some(*n),
        _ => None,
    }
}

fn bad_state() -> DataFusionError {
    DataFusionError::Internal("bad shredding inference state".into())
}

/// The integer field `key` of `obj` (None when absent).
fn int_field(obj: &crate::codec::ObjectView<'_>, key: &str) -> Result<Option<i64>> {
    Ok(match obj.get(key).map_err(codec_err)? {
        Some(v) => Some(int_of(&v.get().map_err(codec_err)?).ok_or_else(bad_state)?),
        None => None,
    })
}

/// The count field `key` of `obj` (an error when absent or negative).
fn count_field(obj: &crate::codec::ObjectView<'_>, key: &str) -> Result<u64> {
    let n = int_field(obj, key)?.ok_or_else(bad_state)?;
    u64::try_from(n).map_err(|_| bad_state())
}

/// The primitive kind [`encode_kind`] wrote into `obj` (objects and arrays are counted apart,
/// so their codes are refused).
fn decode_kind(obj: &crate::codec::ObjectView<'_>) -> Result<Kind> {
    let code = int_field(obj, "k")?.ok_or_else(bad_state)?;
    let kind = (usize::try_from(code).ok())
        .and_then(|code| KINDS.get(code).cloned())
        .filter(|k| !matches!(k, Kind::Unknown | Kind::Object | Kind::Array))
        .ok_or_else(bad_state)?;
    let byte = |key: &str| -> Result<u8> {
        let n = int_field(obj, key)?.ok_or_else(bad_state)?;
        u8::try_from(n)
            .ok()
            .filter(|&n| n <= 38)
            .ok_or_else(bad_state)
    };
    Ok(match kind {
        Kind::Integer(_) => Kind::Integer(byte("p")?),
        Kind::Decimal(..) => Kind::Decimal(byte("p")?, byte("s")?),
        kind => kind,
    })
}

#[recursive::recursive]
fn decode_node(v: Variant<'_>, nodes: &mut usize) -> Result<Node> {
    let Value::Object(obj) = v.get().map_err(codec_err)? else {
        return Err(bad_state());
    };
    let mut node = Node {
        count: count_field(&obj, "n")?,
        objects: count_field(&obj, "o")?,
        arrays: count_field(&obj, "a")?,
        primitives: vec![],
        fields: BTreeMap::new(),
        element: None,
    };
    if let Some(kinds) = obj.get("t").map_err(codec_err)? {
        let Value::Array(kinds) = kinds.get().map_err(codec_err)? else {
            return Err(bad_state());
        };
        for kind in kinds.iter() {
            let Value::Object(kind) = kind.map_err(codec_err)?.get().map_err(codec_err)? else {
                return Err(bad_state());
            };
            node.primitives
                .push((decode_kind(&kind)?, count_field(&kind, "n")?));
        }
    }
    *nodes += 1;
    if let Some(fields) = obj.get("f").map_err(codec_err)? {
        let Value::Object(fields) = fields.get().map_err(codec_err)? else {
            return Err(bad_state());
        };
        fields.check_field_sizes().map_err(codec_err)?;
        for i in 0..fields.len() {
            let key = fields.key(i).map_err(codec_err)?.to_string();
            node.fields.insert(
                key,
                decode_node(fields.value(i).map_err(codec_err)?, nodes)?,
            );
        }
    }
    if let Some(element) = obj.get("e").map_err(codec_err)? {
        node.element = Some(Box::new(decode_node(element, nodes)?));
    }
    Ok(node)
}

/// What a rule keeps: fields occurring at least `tenth` times (a tenth of the values), or at
/// least `sparse` times; each place shredded on its dominant kind (else on all its values' kinds
/// merged).
struct Choice {
    tenth: u64,
    sparse: Option<u64>,
    dominant: bool,
}

impl Choice {
    fn keeps(&self, count: u64) -> bool {
        count >= self.tenth || self.sparse.is_some_and(|min| count >= min)
    }
}

/// The shredding type of the values at `node`.
#[recursive::recursive]
fn shredding_type(node: &Node, choice: &Choice, columns: &mut usize) -> DataType {
    // the value column every shredded place has
    if *columns == 0 {
        return variant_data_type();
    }
    *columns -= 1;
    let typed = |columns: &mut usize, t: DataType| {
        if *columns == 0 {
            return variant_data_type();
        }
        *columns -= 1;
        t
    };
    let kind = if choice.dominant {
        node.dominant()
    } else {
        node.merged()
    };
    match &kind {
        Kind::Object => {
            // the most frequent fields first (ties by name), then in name order
            let mut candidates: Vec<(&String, &Node)> = node
                .fields
                .iter()
                .filter(|(_, child)| choice.keeps(child.count))
                .collect();
            candidates.sort_by(|a, b| b.1.count.cmp(&a.1.count).then_with(|| a.0.cmp(b.0)));
            let mut kept: Vec<(String, DataType)> = vec![];
            for (name, child) in candidates {
                if *columns == 0 {
                    break;
                }
                kept.push((name.clone(), shredding_type(child, choice, columns)));
            }
            if kept.is_empty() {
                return variant_data_type();
            }
            kept.sort_by(|a, b| a.0.cmp(&b.0));
            DataType::Struct(Fields::from(
                kept.into_iter()
                    .map(|(name, t)| Field::new(name, t, true))
                    .collect::<Vec<_>>(),
            ))
        }
        Kind::Array => {
            // (only empty arrays: elements of VARIANT, as Spark chooses)
            let empty = Node::default();
            let element = node.element.as_deref().unwrap_or(&empty);
            let element = shredding_type(element, choice, columns);
            DataType::List(std::sync::Arc::new(Field::new("element", element, true)))
        }
        Kind::Unknown | Kind::Variant => variant_data_type(),
        Kind::Boolean => typed(columns, DataType::Boolean),
        Kind::Integer(_) => typed(columns, DataType::Int64),
        Kind::Float => typed(columns, DataType::Float32),
        Kind::Double => typed(columns, DataType::Float64),
        Kind::Decimal(integer_digits, s) => {
            let precision = if integer_digits + s <= 18 { 18 } else { 38 };
            typed(columns, DataType::Decimal128(precision, *s as i8))
        }
        Kind::String => typed(columns, DataType::Utf8),
        Kind::Binary => typed(columns, DataType::Binary),
        Kind::Date => typed(columns, DataType::Date32),
        Kind::Timestamp => typed(
            columns,
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        ),
        Kind::TimestampNtz => typed(columns, DataType::Timestamp(TimeUnit::Microsecond, None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cast::target_type::sql_type_name;
    use crate::codec::JsonParser;

    fn inference(rows: &[&str], limits: InferLimits) -> ShreddingInference {
        let mut inference = ShreddingInference::new(limits);
        for row in rows {
            let mut b = VariantBuilder::new();
            JsonParser::new().parse(row, &mut b).unwrap();
            inference
                .add(Variant::try_new(b.metadata(), b.value()).unwrap())
                .unwrap();
        }
        inference
    }

    const SPARK: InferLimits = InferLimits {
        max_columns: 300,
        max_depth: 50,
        rule: InferenceRule::Spark,
    };

    /// The type Spark's rule chooses for `rows`, as `variant_shredding_schema_agg` prints it.
    fn infer(rows: &[&str]) -> String {
        let mut columns = 300;
        sql_type_name(&inference(rows, SPARK).finish(&mut columns))
    }

    /// The type the default rule chooses for `rows`.
    fn infer_default(rows: &[&str]) -> String {
        let mut columns = 300;
        sql_type_name(&inference(rows, InferLimits::default()).finish(&mut columns))
    }

    #[test]
    fn the_default_rule_shreds_each_place_on_its_dominant_kind() {
        // an integer field with one string among them: BIGINT (the string stays in `value`)
        let ints = [r#"{"a":1}"#, r#"{"a":2}"#, r#"{"a":"x"}"#, r#"{"a":3}"#];
        assert_eq!(infer_default(&ints), "STRUCT<a: BIGINT>");
        assert_eq!(infer(&ints), "STRUCT<a: VARIANT>");
        // an object in most values, a string in the others (Bluesky's `subject`)
        let subjects = [
            r#"{"s":{"uri":"at://1","cid":"b1"}}"#,
            r#"{"s":"did:plc:x"}"#,
            r#"{"s":{"uri":"at://2","cid":"b2"}}"#,
        ];
        assert_eq!(
            infer_default(&subjects),
            "STRUCT<s: STRUCT<cid: STRING, uri: STRING>>"
        );
        assert_eq!(infer(&subjects), "STRUCT<s: VARIANT>");
        // more strings than objects: the strings
        assert_eq!(
            infer_default(&[r#"{"s":"a"}"#, r#"{"s":"b"}"#, r#"{"s":{"x":1}}"#]),
            "STRUCT<s: STRING>"
        );
        // kinds that merge count together: two integers and a decimal beat two strings
        assert_eq!(
            infer_default(&[
                r#"{"n":1}"#,
                r#"{"n":"p"}"#,
                r#"{"n":2.5}"#,
                r#"{"n":"q"}"#,
                r#"{"n":7}"#
            ]),
            "STRUCT<n: DECIMAL(18,1)>"
        );
        // arrays against numbers; ties go to objects, then arrays, then primitive kinds in a
        // fixed order, whichever came first
        assert_eq!(infer_default(&["[1]", "2", "[3,4]"]), "ARRAY<BIGINT>");
        assert_eq!(
            infer_default(&[r#"{"a":1}"#, r#""str""#]),
            "STRUCT<a: BIGINT>"
        );
        assert_eq!(infer_default(&["true", "1"]), "BOOLEAN");
        assert_eq!(infer_default(&["1", "true"]), "BOOLEAN");
        assert_eq!(infer_default(&[r#""s""#, "2.5"]), "DECIMAL(18,1)");
        // only nulls, or values that have no typed column: VARIANT
        assert_eq!(infer_default(&["null", "null"]), "VARIANT");
        assert_eq!(infer_default(&[]), "VARIANT");
    }

    #[test]
    fn a_tie_gives_the_same_type_whatever_order_partial_states_merge_in() {
        // two strings in one partition, two integers in another: the aggregate merges their
        // states in whichever order the partitions finish
        let strings = [r#"{"a":"x"}"#, r#"{"a":"y"}"#];
        let integers = [r#"{"a":1}"#, r#"{"a":2}"#];
        let merged = |first: &[&str], second: &[&str]| {
            let mut state = inference(first, InferLimits::default());
            state.merge(&inference(second, InferLimits::default()));
            let mut columns = 300;
            sql_type_name(&state.finish(&mut columns))
        };
        assert_eq!(merged(&strings, &integers), "STRUCT<a: BIGINT>");
        assert_eq!(merged(&integers, &strings), "STRUCT<a: BIGINT>");
    }

    #[test]
    fn the_default_rule_keeps_sparse_fields_but_not_map_keys() {
        // `b` in 2 values of 30: under a tenth (Spark drops it), but at least twice
        let mut rows = vec![r#"{"a":1,"b":"x"}"#, r#"{"a":2,"b":"y"}"#];
        rows.extend([r#"{"a":3}"#; 28]);
        assert_eq!(infer_default(&rows), "STRUCT<a: BIGINT, b: STRING>");
        assert_eq!(infer(&rows), "STRUCT<a: BIGINT>");
        // once is not enough (a key of a map-like object, different in every value)
        rows[1] = r#"{"a":2}"#;
        assert_eq!(infer_default(&rows), "STRUCT<a: BIGINT>");
        let maps: Vec<String> = (0..20)
            .map(|i| format!(r#"{{"m":{{"k{i}":1}}}}"#))
            .collect();
        let maps: Vec<&str> = maps.iter().map(String::as_str).collect();
        assert_eq!(infer_default(&maps), "STRUCT<m: VARIANT>");
        // and at least one value in a hundred: 2 of 300 is not, 3 is
        let mut rows = vec![r#"{"a":1,"b":1}"#; 2];
        rows.extend([r#"{"a":1}"#; 298]);
        assert_eq!(infer_default(&rows), "STRUCT<a: BIGINT>");
        rows[2] = r#"{"a":1,"b":1}"#;
        assert_eq!(infer_default(&rows), "STRUCT<a: BIGINT, b: BIGINT>");
        // a field present once in few values is still kept when it is in a tenth of them
        assert_eq!(
            infer_default(&[r#"{"a":1,"b":"x"}"#, r#"{"a":7}"#]),
            "STRUCT<a: BIGINT, b: STRING>"
        );
    }

    #[test]
    fn rules_parse_by_name() {
        assert_eq!(InferenceRule::parse("Spark").unwrap(), InferenceRule::Spark);
        assert_eq!(
            InferenceRule::parse(" default ").unwrap(),
            InferenceRule::Default
        );
        let err = InferenceRule::parse("clickhouse").unwrap_err().to_string();
        assert!(err.contains("unknown rule 'clickhouse'"), "{err}");
    }

    // The expectations of `infer` below are what Spark 4.3 writes for the same rows with
    // `spark.sql.variant.inferShreddingSchema` (read from its files' Parquet schema).

    #[test]
    fn numbers_merge_as_spark_merges_them() {
        assert_eq!(
            infer(&[r#"{"a":1}"#, r#"{"a":300000000000}"#]),
            "STRUCT<a: BIGINT>"
        );
        // an integer and a decimal: a decimal of the larger scale
        assert_eq!(
            infer(&[r#"{"a":1}"#, r#"{"a":1.5}"#]),
            "STRUCT<a: DECIMAL(18,1)>"
        );
        // decimals of different scales: the larger scale
        assert_eq!(
            infer(&[r#"{"a":1.5}"#, r#"{"a":2.25}"#, r#"{"a":3.75}"#]),
            "STRUCT<a: DECIMAL(18,2)>"
        );
        // past 18 digits: 38
        assert_eq!(
            infer(&[r#"{"a":12345678901234567890.5}"#, r#"{"a":1.25}"#]),
            "STRUCT<a: DECIMAL(38,2)>"
        );
        assert_eq!(
            infer(&[
                r#"{"a":1234567890123456789012345678901234.5}"#,
                r#"{"a":1.25}"#
            ]),
            "STRUCT<a: DECIMAL(38,2)>"
        );
        assert_eq!(
            infer(&[r#"{"a":12345678901234567890}"#, r#"{"a":1}"#]),
            "STRUCT<a: DECIMAL(38,0)>"
        );
        // (and past 38 digits nothing fits: 36 integer digits and a scale of 3)
        assert_eq!(
            infer(&[
                r#"{"a":123456789012345678901234567890123456}"#,
                r#"{"a":1.125}"#
            ]),
            "STRUCT<a: VARIANT>"
        );
        // a double and an integer, a string and a number: no typed column
        assert_eq!(
            infer(&[r#"{"a":1}"#, r#"{"a":1.5e0}"#]),
            "STRUCT<a: VARIANT>"
        );
        assert_eq!(infer(&[r#"{"a":"1"}"#, r#"{"a":1}"#]), "STRUCT<a: VARIANT>");
        // a variant null goes with anything
        assert_eq!(
            infer(&[r#"{"a":true}"#, r#"{"a":null}"#, r#"{"a":false}"#]),
            "STRUCT<a: BOOLEAN>"
        );
        assert_eq!(infer(&[r#"{"a":null}"#]), "STRUCT<a: VARIANT>");
    }

    #[test]
    fn fields_present_in_a_tenth_of_the_values_are_kept() {
        let mut rows = vec![r#"{"a":1,"b":1}"#];
        rows.extend([r#"{"a":1}"#; 9]);
        assert_eq!(infer(&rows), "STRUCT<a: BIGINT, b: BIGINT>");
        rows.push(r#"{"a":1}"#);
        assert_eq!(infer(&rows), "STRUCT<a: BIGINT>");
        // fields inside arrays count per element: `z` is in one row of 20, but in 30 elements
        let many_z = format!(r#"{{"k":[{}]}}"#, vec![r#"{"z":1}"#; 30].join(","));
        let mut rows = vec![many_z.as_str()];
        rows.extend([r#"{"k":[{"w":1}]}"#; 19]);
        assert_eq!(
            infer(&rows),
            "STRUCT<k: ARRAY<STRUCT<w: BIGINT, z: BIGINT>>>"
        );
    }

    #[test]
    fn nested_objects_arrays_and_top_level_values() {
        assert_eq!(
            infer(&[
                r#"{"a": 1, "b": [{"x":1.5},{"x":2.25, "y":true}], "c":"2024-01-01", "s":"hello"}"#,
                r#"{"a": 300000000000, "b":[], "d":null, "s":"world"}"#,
                r#"{"a": 2, "b":[{"x":3.75}], "s": 5}"#,
                r#"{"a": 3, "nested": {"deep": {"k": "v"}}, "s": "x"}"#,
                r#"{"a": 4, "s": "y", "m": 1.5}"#,
            ]),
            "STRUCT<a: BIGINT, b: ARRAY<STRUCT<x: DECIMAL(18,2), y: BOOLEAN>>, c: STRING, \
             d: VARIANT, m: DECIMAL(18,1), nested: STRUCT<deep: STRUCT<k: STRING>>, s: VARIANT>"
        );
        // empty objects: nothing to shred; empty arrays: a list of VARIANT
        assert_eq!(
            infer(&[r#"{"e":{},"l":[]}"#, r#"{"e":{},"l":[]}"#]),
            "STRUCT<e: VARIANT, l: ARRAY<VARIANT>>"
        );
        assert_eq!(infer(&["[1,2]", "[3]"]), "ARRAY<BIGINT>");
        assert_eq!(infer(&["1", "2"]), "BIGINT");
        // an object and a string at the top: nothing
        assert_eq!(infer(&[r#"{"a":1}"#, r#""str""#]), "VARIANT");
        assert_eq!(infer(&[]), "VARIANT");
    }

    #[test]
    fn column_and_depth_limits_keep_the_most_frequent_fields() {
        let rows = [r#"{"a":1,"b":1,"c":1}"#, r#"{"b":1,"c":1}"#, r#"{"c":1}"#];
        let inference = inference(&rows, InferLimits::default());
        // the top-level value column, then two columns for each typed field
        for (budget, expected) in [
            (1, "VARIANT"),
            (3, "STRUCT<c: BIGINT>"),
            (5, "STRUCT<b: BIGINT, c: BIGINT>"),
            (7, "STRUCT<a: BIGINT, b: BIGINT, c: BIGINT>"),
        ] {
            let mut columns = budget;
            assert_eq!(sql_type_name(&inference.finish(&mut columns)), expected);
        }
        // ties go by name
        let mut columns = 3;
        let tie = super::tests::inference(&[r#"{"y":1,"x":1}"#], InferLimits::default());
        assert_eq!(
            sql_type_name(&tie.finish(&mut columns)),
            "STRUCT<x: BIGINT>"
        );
        // depth: two levels shredded, the third kept as VARIANT
        let limits = InferLimits {
            max_depth: 2,
            ..SPARK
        };
        let deep = super::tests::inference(&[r#"{"a":{"b":{"c":1}}}"#], limits);
        let mut columns = 300;
        assert_eq!(
            sql_type_name(&deep.finish(&mut columns)),
            "STRUCT<a: STRUCT<b: VARIANT>>"
        );
    }

    #[test]
    fn state_survives_encoding_and_merging() {
        let a = inference(&[r#"{"a":1,"b":[1.5]}"#], InferLimits::default());
        let b = inference(&[r#"{"a":2.25,"c":"x"}"#], InferLimits::default());
        let (metadata, value) = a.encode().unwrap();
        let mut decoded =
            ShreddingInference::decode(Variant::try_new(&metadata, &value).unwrap(), a.limits)
                .unwrap();
        decoded.merge(&b);
        let mut columns = 300;
        assert_eq!(
            sql_type_name(&decoded.finish(&mut columns)),
            "STRUCT<a: DECIMAL(18,2), b: ARRAY<DECIMAL(18,1)>, c: STRING>"
        );
        // the counts of each kind travel too: the objects of one state against the strings of
        // another, whichever has more
        let objects = inference(&[r#"{"s":{"u":1}}"#, r#"{"s":{"u":2}}"#], a.limits);
        let (metadata, value) = objects.encode().unwrap();
        for (strings, expected) in [
            (&[r#"{"s":"x"}"#][..], "STRUCT<s: STRUCT<u: BIGINT>>"),
            (
                &[r#"{"s":"x"}"#, r#"{"s":"y"}"#, r#"{"s":"z"}"#],
                "STRUCT<s: STRING>",
            ),
        ] {
            let mut decoded =
                ShreddingInference::decode(Variant::try_new(&metadata, &value).unwrap(), a.limits)
                    .unwrap();
            decoded.merge(&inference(strings, a.limits));
            let mut columns = 300;
            assert_eq!(sql_type_name(&decoded.finish(&mut columns)), expected);
        }
        // a state that is not one is an error, not a panic: digits out of range, a kind that is
        // counted apart, a negative count (each beside a well-formed rest)
        for state in [
            r#"{"values":1,"tree":{"n":1,"o":0,"a":0,"t":[{"k":2,"p":500,"n":1}]}}"#,
            r#"{"values":1,"tree":{"n":1,"o":0,"a":0,"t":[{"k":11,"n":1}]}}"#,
            r#"{"values":1,"tree":{"n":1,"o":0,"a":-1}}"#,
            r#"{"values":-1,"tree":{"n":1,"o":0,"a":0}}"#,
        ] {
            let mut bad = VariantBuilder::new();
            JsonParser::new().parse(state, &mut bad).unwrap();
            let bad = Variant::try_new(bad.metadata(), bad.value()).unwrap();
            assert!(
                ShreddingInference::decode(bad, InferLimits::default()).is_err(),
                "{state}"
            );
        }
        let mut good = VariantBuilder::new();
        JsonParser::new()
            .parse(
                r#"{"values":1,"tree":{"n":1,"o":0,"a":0,"t":[{"k":2,"p":5,"n":1}]}}"#,
                &mut good,
            )
            .unwrap();
        let good = Variant::try_new(good.metadata(), good.value()).unwrap();
        assert!(ShreddingInference::decode(good, InferLimits::default()).is_ok());
    }
}
