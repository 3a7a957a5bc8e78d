//! Inferring a shredding type from variant values (what automatic shredding on write and
//! `variant_shredding_schema_agg` choose), as Spark 4.1+ does:
//!
//! - each object field, array element and value is summarised by its *kind*: a primitive type,
//!   an object or an array; kinds merge when they agree (integers of any width widen to BIGINT;
//!   decimals and integers merge into a decimal with the larger scale and the larger count of
//!   integer digits, while that fits 38 digits; a variant null goes with anything), and anything
//!   else (a string and a number, a double and a decimal) becomes VARIANT (kept in `value`, no
//!   typed column);
//! - an object field is kept when it is present in at least a tenth of the non-null values (a
//!   field inside arrays: counted per element);
//! - at most [`InferLimits::max_columns`] Parquet columns (a field costs its `value` column, and one
//!   more for a typed primitive) and [`InferLimits::max_depth`] nesting levels; when more fields
//!   qualify than fit, the most frequent are kept, ties broken by name, and the kept fields are
//!   written in name order, so the same values always give the same type.
//!
//! Decimals are widened to 18 digits (or 38 past that) at their scale, leaving room for the
//! values that follow the sample; an integer counts as many integer digits as its width holds (3,
//! 5, 10 or 19). An array whose values are all empty gets a list of VARIANT elements. Times,
//! nanosecond timestamps and UUIDs stay in `value` (Spark and older readers do not take them as
//! typed columns). Checked against Spark 4.3's own inference (`spark.sql.variant.
//! inferShreddingSchema`) on the cases of the tests below.
use std::collections::BTreeMap;

use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::datatypes::{DataType, Field, Fields, TimeUnit};
use datafusion::common::{DataFusionError, Result};

use super::{codec_err, variant_column};
use crate::codec::{Value, Variant, VariantBuilder};
use crate::variant_array::variant_data_type;

/// Bounds on an inferred shredding type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InferLimits {
    /// Parquet columns the shredded fields of one file may use, across its variant columns.
    pub max_columns: usize,
    /// Nesting levels shredded.
    pub max_depth: usize,
}

impl Default for InferLimits {
    fn default() -> Self {
        InferLimits {
            max_columns: 300,
            max_depth: 50,
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
#[derive(Debug, Clone)]
struct Node {
    kind: Kind,
    /// Values this place has (a field: the objects that have it; inside arrays, per element).
    count: u64,
    fields: BTreeMap<String, Node>,
    element: Option<Box<Node>>,
}

impl Default for Node {
    fn default() -> Self {
        Node {
            kind: Kind::Unknown,
            count: 0,
            fields: BTreeMap::new(),
            element: None,
        }
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
        let bad = || DataFusionError::Internal("bad shredding inference state".into());
        let Value::Object(obj) = v.get().map_err(codec_err)? else {
            return Err(bad());
        };
        let values = match obj.get("values").map_err(codec_err)?.map(|v| v.get()) {
            Some(Ok(Value::Int64(n))) => n as u64,
            Some(Ok(v)) => int_of(&v).ok_or_else(bad)? as u64,
            _ => return Err(bad()),
        };
        let mut nodes = 0;
        let root = match obj.get("tree").map_err(codec_err)? {
            Some(tree) => decode_node(tree, &mut nodes)?,
            None => return Err(bad()),
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
        let min_count = self.values.div_ceil(10).max(1);
        shredding_type(&self.root, min_count, columns)
    }
}

/// Records `v` at `node` and below, down to `depth` more levels (counting new places in
/// `nodes`).
#[recursive::recursive]
fn add_to(node: &mut Node, v: Variant<'_>, depth: usize, nodes: &mut usize) -> Result<()> {
    node.count += 1;
    if depth == 0 {
        node.kind.merge(Kind::Variant);
        return Ok(());
    }
    let value = v.get().map_err(codec_err)?;
    node.kind.merge(Kind::of(&value));
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
    into.kind.merge(from.kind.clone());
    into.count += from.count;
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

#[recursive::recursive]
fn encode_node(b: &mut VariantBuilder, node: &Node) {
    b.begin_object();
    let code = KINDS
        .iter()
        .position(|k| std::mem::discriminant(k) == std::mem::discriminant(&node.kind))
        .unwrap_or(0);
    b.key("k");
    b.int(code as i64);
    if let Kind::Integer(d) | Kind::Decimal(d, _) = node.kind {
        b.key("p");
        b.int(d as i64);
    }
    if let Kind::Decimal(_, s) = node.kind {
        b.key("s");
        b.int(s as i64);
    }
    b.key("n");
    b.int(node.count as i64);
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

#[recursive::recursive]
fn decode_node(v: Variant<'_>, nodes: &mut usize) -> Result<Node> {
    let bad = || DataFusionError::Internal("bad shredding inference state".into());
    let Value::Object(obj) = v.get().map_err(codec_err)? else {
        return Err(bad());
    };
    let int = |key: &str| -> Result<Option<i64>> {
        Ok(match obj.get(key).map_err(codec_err)? {
            Some(v) => Some(int_of(&v.get().map_err(codec_err)?).ok_or_else(bad)?),
            None => None,
        })
    };
    let code = int("k")?.ok_or_else(bad)?;
    let mut kind = KINDS.get(code as usize).cloned().ok_or_else(bad)?;
    let byte = |key: &str| -> Result<u8> {
        let n = int(key)?.ok_or_else(bad)?;
        u8::try_from(n).ok().filter(|&n| n <= 38).ok_or_else(bad)
    };
    match kind {
        Kind::Integer(_) => kind = Kind::Integer(byte("p")?),
        Kind::Decimal(..) => kind = Kind::Decimal(byte("p")?, byte("s")?),
        _ => {}
    }
    let mut node = Node {
        kind,
        count: int("n")?.ok_or_else(bad)? as u64,
        fields: BTreeMap::new(),
        element: None,
    };
    *nodes += 1;
    if let Some(fields) = obj.get("f").map_err(codec_err)? {
        let Value::Object(fields) = fields.get().map_err(codec_err)? else {
            return Err(bad());
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

/// The shredding type of the values at `node`, with fields occurring at least `min_count` times.
#[recursive::recursive]
fn shredding_type(node: &Node, min_count: u64, columns: &mut usize) -> DataType {
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
    match &node.kind {
        Kind::Object => {
            // the most frequent fields first (ties by name), then in name order
            let mut candidates: Vec<(&String, &Node)> = node
                .fields
                .iter()
                .filter(|(_, child)| child.count >= min_count)
                .collect();
            candidates.sort_by(|a, b| b.1.count.cmp(&a.1.count).then_with(|| a.0.cmp(b.0)));
            let mut kept: Vec<(String, DataType)> = vec![];
            for (name, child) in candidates {
                if *columns == 0 {
                    break;
                }
                kept.push((name.clone(), shredding_type(child, min_count, columns)));
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
            let element = shredding_type(element, min_count, columns);
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

    /// The chosen type of `rows`, as `variant_shredding_schema_agg` prints it.
    fn infer(rows: &[&str]) -> String {
        let mut columns = 300;
        sql_type_name(&inference(rows, InferLimits::default()).finish(&mut columns))
    }

    // The expectations below are what Spark 4.3 writes for the same rows with
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
            max_columns: 300,
            max_depth: 2,
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
        // a state that is not one is an error, not a panic
        let mut bad = VariantBuilder::new();
        JsonParser::new()
            .parse(r#"{"values":1,"tree":{"k":2,"p":500,"n":1}}"#, &mut bad)
            .unwrap();
        let bad = Variant::try_new(bad.metadata(), bad.value()).unwrap();
        assert!(ShreddingInference::decode(bad, InferLimits::default()).is_err());
    }
}
