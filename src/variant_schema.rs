//! The schema of variant values with Spark's names and merge rules (`schema_of_variant`,
//! `schema_of_variant_agg`).
use std::collections::BTreeMap;
use std::fmt;

use crate::codec::{Result, Value, Variant, VariantError};

/// The type of a variant value, as `schema_of_variant` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VariantSchema {
    /// Variant null.
    Void,
    /// BOOLEAN.
    Boolean,
    /// Every integer width.
    Bigint,
    /// DECIMAL(precision, scale) with trailing fractional zeros stripped.
    Decimal(u8, u8),
    /// DOUBLE.
    Double,
    /// FLOAT.
    Float,
    /// STRING.
    String,
    /// BINARY.
    Binary,
    /// DATE.
    Date,
    /// TIMESTAMP.
    Timestamp,
    /// TIMESTAMP_NTZ.
    TimestampNtz,
    /// TIME.
    Time,
    /// TIMESTAMP_NANOS.
    TimestampNanos,
    /// TIMESTAMP_NTZ_NANOS.
    TimestampNtzNanos,
    /// UUID.
    Uuid,
    /// `ARRAY<element>`.
    Array(Box<VariantSchema>),
    /// OBJECT<key: type, ...>, keys sorted by their UTF-8 bytes.
    Object(BTreeMap<String, VariantSchema>),
    /// No common type.
    Variant,
}

const MAX_PRECISION: u32 = 38;

fn decimal_schema(unscaled: i128, scale: u8) -> VariantSchema {
    let (mut u, mut s) = (unscaled, scale as u32);
    while s > 0 && u % 10 == 0 {
        u /= 10;
        s -= 1;
    }
    let digits = u.unsigned_abs().checked_ilog10().map_or(1, |d| d + 1);
    VariantSchema::Decimal(digits.max(s) as u8, s as u8)
}

impl VariantSchema {
    /// The bytes this schema holds on the heap (an estimate, without rendering it): boxed
    /// elements, and for objects each entry's key, value and a share of the map's nodes.
    #[recursive::recursive]
    pub fn heap_size(&self) -> usize {
        const ENTRY: usize = std::mem::size_of::<String>() + std::mem::size_of::<VariantSchema>();
        match self {
            VariantSchema::Array(element) => {
                std::mem::size_of::<VariantSchema>() + element.heap_size()
            }
            VariantSchema::Object(fields) => fields
                .iter()
                .map(|(key, value)| ENTRY + key.capacity() + value.heap_size())
                .sum(),
            _ => 0,
        }
    }

    /// The schema of one value (array elements merged).
    pub fn of(v: Variant<'_>) -> Result<Self> {
        Self::of_at_depth(v, 0)
    }

    /// [`VariantSchema::of`] for a value nested `depth` levels deep in the value whose schema is
    /// being built (the depth limit counts from the top).
    #[recursive::recursive]
    pub fn of_at_depth(v: Variant<'_>, depth: usize) -> Result<Self> {
        if depth > crate::codec::DEFAULT_MAX_DEPTH {
            return Err(VariantError::DepthLimitExceeded(
                crate::codec::DEFAULT_MAX_DEPTH,
            ));
        }
        Self::of_value(v.get()?, depth)
    }

    /// The schema of a decoded value nested `depth` levels deep (checked against the limit by
    /// the caller), so that a value decoded once is not decoded again for its schema.
    fn of_value(value: Value<'_>, depth: usize) -> Result<Self> {
        Ok(match value {
            Value::Null => VariantSchema::Void,
            Value::Boolean(_) => VariantSchema::Boolean,
            Value::Int8(_) | Value::Int16(_) | Value::Int32(_) | Value::Int64(_) => {
                VariantSchema::Bigint
            }
            Value::Decimal4(u, s) => decimal_schema(u as i128, s),
            Value::Decimal8(u, s) => decimal_schema(u as i128, s),
            Value::Decimal16(u, s) => decimal_schema(u, s),
            Value::Double(_) => VariantSchema::Double,
            Value::Float(_) => VariantSchema::Float,
            Value::String(_) => VariantSchema::String,
            Value::Binary(_) => VariantSchema::Binary,
            Value::Date(_) => VariantSchema::Date,
            Value::Timestamp(_) => VariantSchema::Timestamp,
            Value::TimestampNtz(_) => VariantSchema::TimestampNtz,
            Value::Time(_) => VariantSchema::Time,
            Value::TimestampNanos(_) => VariantSchema::TimestampNanos,
            Value::TimestampNtzNanos(_) => VariantSchema::TimestampNtzNanos,
            Value::Uuid(_) => VariantSchema::Uuid,
            Value::Array(arr) => {
                let mut element = VariantSchema::Void;
                for e in arr.iter() {
                    element = element.merge(Self::of_at_depth(e?, depth + 1)?);
                }
                VariantSchema::Array(Box::new(element))
            }
            Value::Object(obj) => {
                let mut fields = BTreeMap::new();
                obj.check_field_sizes()?;
                for i in 0..obj.len() {
                    fields.insert(
                        obj.key(i)?.to_string(),
                        Self::of_at_depth(obj.value(i)?, depth + 1)?,
                    );
                }
                VariantSchema::Object(fields)
            }
        })
    }

    /// Appends the text of `v`'s schema (what [`VariantSchema::of`] displays) to `out`, writing
    /// objects as it reads them: only arrays (whose element types merge) and objects whose keys
    /// are not strictly increasing (unsorted or repeated: they sort and merge) are built as a
    /// `VariantSchema` first, so a row of objects and scalars allocates nothing.
    pub fn write_of(v: Variant<'_>, out: &mut std::string::String) -> Result<()> {
        Self::write_of_at_depth(v, 0, out)
    }

    /// [`VariantSchema::write_of`] for a value nested `depth` levels deep.
    #[recursive::recursive]
    pub(crate) fn write_of_at_depth(
        v: Variant<'_>,
        depth: usize,
        out: &mut std::string::String,
    ) -> Result<()> {
        use std::fmt::Write;
        if depth > crate::codec::DEFAULT_MAX_DEPTH {
            return Err(VariantError::DepthLimitExceeded(
                crate::codec::DEFAULT_MAX_DEPTH,
            ));
        }
        let value = v.get()?;
        // the value's schema built first, then written
        let through_the_tree = |out: &mut std::string::String| {
            let schema = Self::of_value(value, depth)?;
            write!(out, "{schema}").expect("writing to a String");
            Ok(())
        };
        let Value::Object(obj) = value else {
            // a scalar's schema holds nothing on the heap; an array's elements merge
            return through_the_tree(out);
        };
        obj.check_field_sizes()?;
        // The keys are checked before any child is read, so that an object the tree must sort
        // is read once by it and never also here (the work stays linear in the value). A key
        // that cannot be read sends the object to the tree too, which reports it where it
        // meets it (as before this path existed).
        let mut previous: Option<&[u8]> = None;
        let increasing = (0..obj.len()).all(|i| match obj.key_bytes(i) {
            Ok(key) => previous.replace(key).is_none_or(|p| p < key),
            Err(_) => false,
        });
        if !increasing {
            return through_the_tree(out);
        }
        out.push_str("OBJECT<");
        for i in 0..obj.len() {
            if i > 0 {
                out.push_str(", ");
            }
            write_key(out, obj.key(i)?).expect("writing to a String");
            out.push_str(": ");
            Self::write_of_at_depth(obj.value(i)?, depth + 1, out)?;
        }
        out.push('>');
        Ok(())
    }

    /// As DECIMAL(precision, scale) for numeric merging: BIGINT counts as DECIMAL(20,0).
    fn as_decimal(&self) -> Option<(u32, u32)> {
        match self {
            VariantSchema::Bigint => Some((20, 0)),
            VariantSchema::Decimal(p, s) => Some((*p as u32, *s as u32)),
            _ => None,
        }
    }

    /// Merges two schemas with Spark's rules.
    pub fn merge(self, other: VariantSchema) -> VariantSchema {
        use VariantSchema::*;
        match (self, other) {
            (Void, x) | (x, Void) => x,
            (a, b) if a == b => a,
            (Double, Bigint | Decimal(..) | Float) | (Bigint | Decimal(..) | Float, Double) => {
                Double
            }
            (Float, Bigint) | (Bigint, Float) => Float,
            (Float, Decimal(..)) | (Decimal(..), Float) => Double,
            (a @ (Bigint | Decimal(..)), b @ (Bigint | Decimal(..))) => {
                let (p1, s1) = a.as_decimal().expect("numeric");
                let (p2, s2) = b.as_decimal().expect("numeric");
                let scale = s1.max(s2);
                let precision = (p1 - s1).max(p2 - s2) + scale;
                if precision > MAX_PRECISION {
                    Double
                } else {
                    Decimal(precision as u8, scale as u8)
                }
            }
            (Date, Timestamp) | (Timestamp, Date) => Timestamp,
            (Date, TimestampNtz) | (TimestampNtz, Date) => TimestampNtz,
            (Timestamp, TimestampNtz) | (TimestampNtz, Timestamp) => Timestamp,
            (Array(a), Array(b)) => Array(Box::new(a.merge(*b))),
            (Object(mut a), Object(b)) => {
                for (k, t) in b {
                    let merged = match a.remove(&k) {
                        Some(existing) => existing.merge(t),
                        None => t,
                    };
                    a.insert(k, merged);
                }
                Object(a)
            }
            _ => Variant,
        }
    }

    /// Parses the text `Display` produces (used as the aggregate's state).
    pub fn parse(text: &str) -> Option<VariantSchema> {
        let mut p = SchemaParser { s: text, pos: 0 };
        let t = p.schema()?;
        (p.pos == text.len()).then_some(t)
    }
}

/// Writes an object key as the schema text names it: as it is when it is an identifier,
/// otherwise between backquotes (a backquote doubled).
pub(crate) fn write_key(f: &mut impl fmt::Write, key: &str) -> fmt::Result {
    let mut chars = key.chars();
    let plain = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        f.write_str(key)
    } else {
        write!(f, "`{}`", key.replace('`', "``"))
    }
}

impl fmt::Display for VariantSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use VariantSchema::*;
        match self {
            Void => f.write_str("VOID"),
            Boolean => f.write_str("BOOLEAN"),
            Bigint => f.write_str("BIGINT"),
            Decimal(p, s) => write!(f, "DECIMAL({p},{s})"),
            Double => f.write_str("DOUBLE"),
            Float => f.write_str("FLOAT"),
            String => f.write_str("STRING"),
            Binary => f.write_str("BINARY"),
            Date => f.write_str("DATE"),
            Timestamp => f.write_str("TIMESTAMP"),
            TimestampNtz => f.write_str("TIMESTAMP_NTZ"),
            Time => f.write_str("TIME"),
            TimestampNanos => f.write_str("TIMESTAMP_NANOS"),
            TimestampNtzNanos => f.write_str("TIMESTAMP_NTZ_NANOS"),
            Uuid => f.write_str("UUID"),
            Variant => f.write_str("VARIANT"),
            Array(e) => write!(f, "ARRAY<{e}>"),
            Object(fields) => {
                f.write_str("OBJECT<")?;
                for (i, (k, t)) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write_key(f, k)?;
                    write!(f, ": {t}")?;
                }
                f.write_str(">")
            }
        }
    }
}

struct SchemaParser<'a> {
    s: &'a str,
    pos: usize,
}

impl SchemaParser<'_> {
    fn eat(&mut self, t: &str) -> bool {
        if self.s[self.pos..].starts_with(t) {
            self.pos += t.len();
            true
        } else {
            false
        }
    }

    fn number(&mut self) -> Option<u8> {
        let rest = &self.s[self.pos..];
        let len = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        self.pos += len;
        rest[..len].parse().ok()
    }

    fn key(&mut self) -> Option<String> {
        if self.eat("`") {
            let mut key = String::new();
            loop {
                let c = self.s[self.pos..].chars().next()?;
                self.pos += c.len_utf8();
                if c == '`' {
                    if self.eat("`") {
                        key.push('`');
                    } else {
                        return Some(key);
                    }
                } else {
                    key.push(c);
                }
            }
        }
        let rest = &self.s[self.pos..];
        let len = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))?;
        self.pos += len;
        Some(rest[..len].to_string())
    }

    fn schema(&mut self) -> Option<VariantSchema> {
        use VariantSchema::*;
        // Longer names first where one is a prefix of another.
        const NAMES: [(&str, VariantSchema); 15] = [
            ("VOID", Void),
            ("BOOLEAN", Boolean),
            ("BIGINT", Bigint),
            ("DOUBLE", Double),
            ("FLOAT", Float),
            ("STRING", String),
            ("BINARY", Binary),
            ("DATE", Date),
            ("TIMESTAMP_NTZ_NANOS", TimestampNtzNanos),
            ("TIMESTAMP_NANOS", TimestampNanos),
            ("TIMESTAMP_NTZ", TimestampNtz),
            ("TIMESTAMP", Timestamp),
            ("TIME", Time),
            ("UUID", Uuid),
            ("VARIANT", Variant),
        ];
        if self.eat("DECIMAL(") {
            let p = self.number()?;
            self.eat(",").then_some(())?;
            let s = self.number()?;
            self.eat(")").then_some(())?;
            return Some(Decimal(p, s));
        }
        if self.eat("ARRAY<") {
            let e = self.schema()?;
            self.eat(">").then_some(())?;
            return Some(Array(Box::new(e)));
        }
        if self.eat("OBJECT<") {
            let mut fields = BTreeMap::new();
            if self.eat(">") {
                return Some(Object(fields));
            }
            loop {
                let k = self.key()?;
                self.eat(": ").then_some(())?;
                let t = self.schema()?;
                fields.insert(k, t);
                if self.eat(">") {
                    return Some(Object(fields));
                }
                self.eat(", ").then_some(())?;
            }
        }
        for (name, t) in NAMES {
            if self.eat(name) {
                return Some(t);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::VariantSchema::*;
    use super::{BTreeMap, VariantError, VariantSchema};
    use crate::codec::{JsonParser, VariantBuilder};

    fn schema(json: &str) -> std::string::String {
        let mut b = VariantBuilder::new();
        JsonParser::new().parse(json, &mut b).unwrap();
        let v = crate::codec::Variant::try_new(b.metadata(), b.value()).unwrap();
        let s = VariantSchema::of(v).unwrap();
        let text = s.to_string();
        assert_eq!(VariantSchema::parse(&text), Some(s), "round trip of {text}");
        let mut written = std::string::String::new();
        VariantSchema::write_of(v, &mut written).unwrap();
        assert_eq!(written, text, "written straight from {json}");
        text
    }

    /// An object of one-byte ids and offsets over the metadata keys `a`, `b`, whose fields are
    /// stored in the order given, each an INT8.
    fn object(ids: &[u8]) -> Vec<u8> {
        let mut out = vec![0x02, ids.len() as u8];
        out.extend_from_slice(ids);
        out.extend((0..=ids.len()).map(|n| 2 * n as u8));
        for id in ids {
            out.extend_from_slice(&[0x0C, *id]);
        }
        out
    }

    const METADATA_AB: &[u8] = &[0x01, 2, 0, 1, 2, b'a', b'b'];

    /// Objects whose keys are out of order (DuckDB writes them) or repeated are written sorted
    /// and merged, as the tree writes them.
    #[test]
    fn unsorted_and_repeated_keys_are_written_as_the_tree_writes_them() {
        for (ids, expected) in [
            (&[1u8, 0][..], "OBJECT<a: BIGINT, b: BIGINT>"),
            (&[0, 1], "OBJECT<a: BIGINT, b: BIGINT>"),
            (&[0, 0], "OBJECT<a: BIGINT>"),
            (&[], "OBJECT<>"),
        ] {
            let value = object(ids);
            let v = crate::codec::Variant::try_new(METADATA_AB, &value).unwrap();
            let mut written = std::string::String::new();
            VariantSchema::write_of(v, &mut written).unwrap();
            assert_eq!(written, expected, "{ids:?}");
            assert_eq!(
                VariantSchema::of(v).unwrap().to_string(),
                expected,
                "{ids:?}"
            );
        }
        // a key id outside the dictionary: the same error either way
        let value = object(&[0, 7]);
        let v = crate::codec::Variant::try_new(METADATA_AB, &value).unwrap();
        let mut written = std::string::String::new();
        let direct = VariantSchema::write_of(v, &mut written)
            .unwrap_err()
            .to_string();
        assert_eq!(direct, VariantSchema::of(v).unwrap_err().to_string());
        // a key that is not UTF-8: the same error either way
        let metadata = [0x01, 2, 0, 1, 2, b'a', 0xFF];
        let value = object(&[0, 1]);
        let v = crate::codec::Variant::try_new(&metadata, &value).unwrap();
        let direct = VariantSchema::write_of(v, &mut written)
            .unwrap_err()
            .to_string();
        assert_eq!(direct, VariantSchema::of(v).unwrap_err().to_string());
    }

    /// Values nested past the depth limit are refused by both ways of writing the schema (the
    /// builder refuses to make such values, so the bytes are made here: objects of one field
    /// `a`, around an INT8).
    #[test]
    fn the_depth_limit_holds_when_written_straight() {
        let mut value = vec![0x0C, 1];
        for _ in 0..=crate::codec::DEFAULT_MAX_DEPTH {
            let len = value.len();
            let size = if len < 256 { 1 } else { 2 };
            let mut object = vec![0x02 | (((size - 1) as u8) << 2), 1, 0];
            object.extend_from_slice(&0u32.to_le_bytes()[..size]);
            object.extend_from_slice(&(len as u32).to_le_bytes()[..size]);
            object.extend_from_slice(&value);
            value = object;
        }
        let metadata = [0x01, 1, 0, 1, b'a'];
        let v = crate::codec::Variant::try_new(&metadata, &value).unwrap();
        let mut written = std::string::String::new();
        let limit = VariantError::DepthLimitExceeded(crate::codec::DEFAULT_MAX_DEPTH);
        assert_eq!(VariantSchema::write_of(v, &mut written).unwrap_err(), limit);
        assert_eq!(VariantSchema::of(v).unwrap_err(), limit);
        // one level less is within the limit
        let inner = v.get().unwrap();
        let crate::codec::Value::Object(obj) = inner else {
            panic!("an object")
        };
        written.clear();
        VariantSchema::write_of(obj.value(0).unwrap(), &mut written).unwrap();
        assert!(written.starts_with("OBJECT<a: OBJECT<"), "{written}");
    }

    /// Counted by hand: two entries (key, value and a `String` each), their key bytes, and the
    /// boxed element of the array.
    #[test]
    fn heap_size_counts_keys_and_children() {
        let entry =
            std::mem::size_of::<std::string::String>() + std::mem::size_of::<VariantSchema>();
        assert_eq!(Bigint.heap_size(), 0);
        let fields = BTreeMap::from([
            ("a".to_string(), Bigint),
            ("bc".to_string(), Array(Box::new(String))),
        ]);
        assert_eq!(
            Object(fields).heap_size(),
            2 * entry + 1 + 2 + std::mem::size_of::<VariantSchema>()
        );
    }

    #[test]
    fn names() {
        assert_eq!(schema("null"), "VOID");
        assert_eq!(schema("1"), "BIGINT");
        assert_eq!(schema("1.0"), "DECIMAL(1,0)");
        assert_eq!(schema("0.01"), "DECIMAL(2,2)");
        assert_eq!(schema("10.10"), "DECIMAL(3,1)");
        assert_eq!(schema("2147483647.999"), "DECIMAL(13,3)");
        assert_eq!(schema("-0.05"), "DECIMAL(2,2)");
        assert_eq!(schema("1e0"), "DOUBLE");
        assert_eq!(schema("\"2000-01-01\""), "STRING");
        assert_eq!(schema("[]"), "ARRAY<VOID>");
        assert_eq!(schema("{}"), "OBJECT<>");
        assert_eq!(
            schema(r#"{"b": {"c": "c"}, "a":["a"]}"#),
            "OBJECT<a: ARRAY<STRING>, b: OBJECT<c: STRING>>"
        );
        assert_eq!(
            schema(r#"{"a b":1,"c-d":2,"e_f":3,"1x":4,"`q`":5,"STRUCT":6,"":7,"é":8}"#),
            "OBJECT<``: BIGINT, `1x`: BIGINT, STRUCT: BIGINT, ```q```: BIGINT, `a b`: BIGINT, \
             `c-d`: BIGINT, e_f: BIGINT, `é`: BIGINT>"
        );
        assert_eq!(
            schema(r#"{"STRUCT": {"!special!": true}}"#),
            "OBJECT<STRUCT: OBJECT<`!special!`: BOOLEAN>>"
        );
    }

    #[test]
    fn merges() {
        assert_eq!(schema("[null,null]"), "ARRAY<VOID>");
        assert_eq!(schema(r#"[1,"1"]"#), "ARRAY<VARIANT>");
        assert_eq!(schema("[{}, true]"), "ARRAY<VARIANT>");
        assert_eq!(schema("[1,1.5]"), "ARRAY<DECIMAL(21,1)>");
        assert_eq!(schema("[null,1,1.0]"), "ARRAY<DECIMAL(20,0)>");
        assert_eq!(schema("[123456.789,123.456789]"), "ARRAY<DECIMAL(12,6)>");
        assert_eq!(
            schema("[1.1, 11111111111111111111111111111111111111]"),
            "ARRAY<DOUBLE>"
        );
        assert_eq!(
            schema("[1, 11111111111111111111111111111111111111]"),
            "ARRAY<DECIMAL(38,0)>"
        );
        assert_eq!(schema("[1, 1e0]"), "ARRAY<DOUBLE>");
        assert_eq!(
            schema(r#"[{"c": ""}, {"a": null}, {"b": 1}]"#),
            "ARRAY<OBJECT<a: VOID, b: BIGINT, c: STRING>>"
        );
        assert_eq!(
            schema(r#"[{"a": 1, "b": null}, {"b": true, "a": 1E0}]"#),
            "ARRAY<OBJECT<a: DOUBLE, b: BOOLEAN>>"
        );
        assert_eq!(Bigint.merge(Decimal(6, 3)), Decimal(23, 3));
        assert_eq!(Bigint.merge(Float), Float);
        assert_eq!(Double.merge(Float), Double);
        assert_eq!(Float.merge(Decimal(2, 1)), Double);
        assert_eq!(Date.merge(Timestamp), Timestamp);
        assert_eq!(Date.merge(TimestampNtz), TimestampNtz);
        assert_eq!(TimestampNtz.merge(Timestamp), Timestamp);
        assert_eq!(Uuid.merge(String), Variant);
        assert_eq!(TimestampNanos.merge(Timestamp), Variant);
        assert_eq!(Boolean.merge(Bigint), Variant);
        let a = Object(BTreeMap::from([("a".to_string(), String)]));
        let b = Object(BTreeMap::from([
            ("a".to_string(), Boolean),
            ("b".to_string(), Bigint),
        ]));
        assert_eq!(a.merge(b).to_string(), "OBJECT<a: VARIANT, b: BIGINT>");
    }
}
