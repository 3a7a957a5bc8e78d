//! Target type strings of `variant_get(v, path, type)`: Spark's names (case-insensitive), plus the
//! names DataFusion users type, resolved to Arrow types at planning time.
use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, Fields, TimeUnit};

use crate::variant_array::variant_field;

/// The time zone attached to timestamp (with local time zone) results.
pub const UTC: &str = "UTC";

/// Parses a type string such as `int`, `decimal(10,2)`, `array<string>`,
/// `map<string, bigint>`, `struct<a: int, b string>` or a bare field list `a int, b string`.
/// Errors say what is wrong.
pub fn parse_target_type(text: &str) -> Result<DataType, String> {
    // As Spark: a type first, then a bare field list (`a int, b string`).
    let as_type = Parser::new(text).complete(|p| p.data_type());
    let parsed = as_type.or_else(|e| {
        Parser::new(text)
            .complete(|p| p.field_list(None).map(DataType::Struct))
            .map_err(|_| e)
    })?;
    if holds_string_view(&parsed) {
        return Err(format!(
            "'{text}': STRING_VIEW is a result type, not an element or field type"
        ));
    }
    Ok(parsed)
}

/// True when a field or element of `data_type` (at any depth) is a Utf8View.
fn holds_string_view(data_type: &DataType) -> bool {
    let view = |t: &DataType| t == &DataType::Utf8View || holds_string_view(t);
    match data_type {
        DataType::List(f) | DataType::Map(f, _) => view(f.data_type()),
        DataType::Struct(fields) => fields.iter().any(|f| view(f.data_type())),
        _ => false,
    }
}

/// The deepest a type string may nest ARRAY, MAP and STRUCT. It bounds the parser's recursion
/// and that of everything that later walks the type (Arrow's and DataFusion's equality, hashing,
/// formatting and drop of the `DataType`, our cast builders), all on the caller's stack: 1000
/// levels, the variant limit, overflow a 2 MiB thread in a debug build. No schema nests a
/// hundred levels.
pub const MAX_TYPE_DEPTH: usize = 100;

struct Parser<'a> {
    s: &'a str,
    pos: usize,
    original: &'a str,
    /// Containers open at `pos`.
    depth: usize,
}

impl<'a> Parser<'a> {
    fn skip_ws(&mut self) {
        while self.s[self.pos..].starts_with(|c: char| c.is_whitespace()) {
            self.pos += self.s[self.pos..].chars().next().map_or(1, char::len_utf8);
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_ws();
        self.s[self.pos..].chars().next()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: char) -> Result<(), String> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(format!("expected '{c}' in type '{}'", self.original))
        }
    }

    fn word(&mut self) -> Option<&'a str> {
        self.skip_ws();
        let rest = &self.s[self.pos..];
        let len = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if len == 0 {
            return None;
        }
        self.pos += len;
        Some(&rest[..len])
    }

    fn number(&mut self) -> Result<u32, String> {
        self.skip_ws();
        let rest = &self.s[self.pos..];
        let len = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let n = rest[..len]
            .parse()
            .map_err(|_| format!("expected a number in type '{}'", self.original))?;
        self.pos += len;
        Ok(n)
    }

    fn new(s: &'a str) -> Self {
        Parser {
            s,
            pos: 0,
            original: s,
            depth: 0,
        }
    }

    /// Runs `f` (the inside of an ARRAY, MAP or STRUCT) one nesting level deeper, or says that
    /// the type nests too deeply.
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T, String>) -> Result<T, String> {
        if self.depth == MAX_TYPE_DEPTH {
            let end = self.original.char_indices().nth(40);
            return Err(format!(
                "type '{}...' nests deeper than {MAX_TYPE_DEPTH} levels",
                &self.original[..end.map_or(self.original.len(), |(i, _)| i)]
            ));
        }
        self.depth += 1;
        let inside = f(self);
        self.depth -= 1;
        inside
    }

    /// Runs `f` and requires that it consumed the whole text.
    fn complete(
        mut self,
        f: impl FnOnce(&mut Self) -> Result<DataType, String>,
    ) -> Result<DataType, String> {
        let ty = f(&mut self)?;
        self.skip_ws();
        if self.pos != self.s.len() {
            return Err(format!(
                "unexpected '{}' in type '{}'",
                &self.s[self.pos..],
                self.original
            ));
        }
        Ok(ty)
    }

    fn field_name(&mut self) -> Result<String, String> {
        self.skip_ws();
        if self.s[self.pos..].starts_with('`') {
            let mut name = String::new();
            let mut i = self.pos + 1;
            let b = self.s.as_bytes();
            loop {
                match b.get(i) {
                    None => return Err(format!("unterminated `name` in type '{}'", self.original)),
                    Some(b'`') if b.get(i + 1) == Some(&b'`') => {
                        name.push('`');
                        i += 2;
                    }
                    Some(b'`') => {
                        self.pos = i + 1;
                        return Ok(name);
                    }
                    Some(_) => {
                        let c = self.s[i..].chars().next().expect("in bounds");
                        name.push(c);
                        i += c.len_utf8();
                    }
                }
            }
        }
        self.word()
            .map(str::to_string)
            .ok_or_else(|| format!("expected a field name in type '{}'", self.original))
    }

    fn field_list(&mut self, close: Option<char>) -> Result<Fields, String> {
        let mut fields: Vec<Field> = Vec::new();
        if close.is_some_and(|c| self.eat(c)) {
            return Ok(Fields::empty());
        }
        loop {
            let name = self.field_name()?;
            self.eat(':');
            let ty = self.data_type()?;
            if fields.iter().any(|f| f.name() == &name) {
                return Err(format!(
                    "duplicate field `{name}` in type '{}'",
                    self.original
                ));
            }
            fields.push(nullable_field(&name, ty));
            if self.eat(',') {
                continue;
            }
            if let Some(c) = close {
                self.expect(c)?;
            }
            return Ok(Fields::from(fields));
        }
    }

    fn data_type(&mut self) -> Result<DataType, String> {
        let Some(word) = self.word() else {
            return Err(format!("expected a type name in '{}'", self.original));
        };
        let lower = word.to_ascii_lowercase();
        Ok(match lower.as_str() {
            "boolean" | "bool" => DataType::Boolean,
            "tinyint" | "byte" => DataType::Int8,
            "smallint" | "short" | "int2" => DataType::Int16,
            "int" | "integer" | "int4" => DataType::Int32,
            "bigint" | "long" | "int8" => DataType::Int64,
            "float" | "real" | "float4" => DataType::Float32,
            "double" | "float8" => {
                // DataFusion users write DOUBLE PRECISION.
                let save = self.pos;
                if self.word().map(str::to_ascii_lowercase).as_deref() != Some("precision") {
                    self.pos = save;
                }
                DataType::Float64
            }
            "decimal" | "dec" | "numeric" => {
                let (mut precision, mut scale) = (10u32, 0u32);
                if self.eat('(') {
                    precision = self.number()?;
                    if self.eat(',') {
                        scale = self.number()?;
                    }
                    self.expect(')')?;
                }
                if !(1..=38).contains(&precision) || scale > precision {
                    return Err(format!(
                        "decimal precision must be 1..38 and scale 0..precision, got ({precision},{scale})"
                    ));
                }
                DataType::Decimal128(precision as u8, scale as i8)
            }
            "string" | "varchar" | "text" => {
                if self.peek() == Some('(') {
                    return Err(format!(
                        "'{}': use STRING instead of a length-limited {word}",
                        self.original
                    ));
                }
                DataType::Utf8
            }
            // Arrow's view layout of strings (DataFusion's VARCHAR): the same values as STRING
            "string_view" => DataType::Utf8View,
            "char" | "character" => {
                return Err(format!("'{}': use STRING instead of {word}", self.original));
            }
            "binary" | "bytea" | "varbinary" => DataType::Binary,
            "date" => DataType::Date32,
            "timestamp" | "timestamp_ltz" | "timestamptz" => {
                DataType::Timestamp(TimeUnit::Microsecond, Some(Arc::from(UTC)))
            }
            "timestamp_ntz" => DataType::Timestamp(TimeUnit::Microsecond, None),
            "variant" => variant_field("variant", true).data_type().clone(),
            "array" => self.nested(|p| {
                p.expect('<')?;
                let element = p.data_type()?;
                p.expect('>')?;
                Ok(DataType::List(Arc::new(nullable_field("element", element))))
            })?,
            "map" => self.nested(|p| {
                p.expect('<')?;
                let key = p.data_type()?;
                if key != DataType::Utf8 {
                    return Err(format!(
                        "'{}': map keys must be STRING, got {key}",
                        p.original
                    ));
                }
                p.expect(',')?;
                let value = p.data_type()?;
                p.expect('>')?;
                Ok(map_type(value))
            })?,
            "struct" => self.nested(|p| {
                p.expect('<')?;
                Ok(DataType::Struct(p.field_list(Some('>'))?))
            })?,
            "void" | "interval" => {
                return Err(format!(
                    "cannot cast a variant to {}",
                    word.to_ascii_uppercase()
                ));
            }
            _ => return Err(format!("unsupported data type '{word}'")),
        })
    }
}

/// A nullable field; variant-typed fields carry the extension metadata.
fn nullable_field(name: &str, ty: DataType) -> Field {
    if ty == variant_field("v", true).data_type().clone() {
        variant_field(name, true)
    } else {
        Field::new(name, ty, true)
    }
}

/// `Map<Utf8, value>` with the usual `entries{key, value}` layout.
pub fn map_type(value: DataType) -> DataType {
    let entries = Field::new(
        "entries",
        DataType::Struct(Fields::from(vec![
            Field::new("key", DataType::Utf8, false),
            nullable_field("value", value),
        ])),
        false,
    );
    DataType::Map(Arc::new(entries), false)
}

/// Spark's SQL name of a target type, for error messages: `INT`, `DECIMAL(10,2)`,
/// `ARRAY<STRING>`, `STRUCT<a: INT>`.
pub fn sql_type_name(ty: &DataType) -> String {
    match ty {
        DataType::Boolean => "BOOLEAN".into(),
        DataType::Int8 => "TINYINT".into(),
        DataType::Int16 => "SMALLINT".into(),
        DataType::Int32 => "INT".into(),
        DataType::Int64 => "BIGINT".into(),
        DataType::Float32 => "FLOAT".into(),
        DataType::Float64 => "DOUBLE".into(),
        DataType::Decimal128(p, s) => format!("DECIMAL({p},{s})"),
        DataType::Utf8 | DataType::Utf8View => "STRING".into(),
        DataType::Binary => "BINARY".into(),
        DataType::Date32 => "DATE".into(),
        DataType::Timestamp(_, Some(_)) => "TIMESTAMP".into(),
        DataType::Timestamp(_, None) => "TIMESTAMP_NTZ".into(),
        DataType::List(f) => format!("ARRAY<{}>", sql_type_name(f.data_type())),
        DataType::Map(entries, _) => match entries.data_type() {
            DataType::Struct(kv) if kv.len() == 2 => {
                format!("MAP<STRING, {}>", sql_type_name(kv[1].data_type()))
            }
            _ => "MAP".into(),
        },
        DataType::Struct(fields)
            if crate::variant_array::has_variant_shape(ty) && fields.len() == 2 =>
        {
            "VARIANT".into()
        }
        DataType::Struct(fields) => {
            let inner: Vec<String> = fields
                .iter()
                .map(|f| format!("{}: {}", quote_name(f.name()), sql_type_name(f.data_type())))
                .collect();
            format!("STRUCT<{}>", inner.join(", "))
        }
        other => other.to_string(),
    }
}

/// A struct field name as the type parser reads it back: plain identifiers as they are, others in
/// backquotes (doubled inside).
fn quote_name(name: &str) -> String {
    let mut chars = name.chars();
    let plain = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        name.to_string()
    } else {
        format!("`{}`", name.replace('`', "``"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> DataType {
        parse_target_type(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn spark_names() {
        assert_eq!(ok("boolean"), DataType::Boolean);
        assert_eq!(ok("TINYINT"), DataType::Int8);
        assert_eq!(ok("byte"), DataType::Int8);
        assert_eq!(ok("Short"), DataType::Int16);
        assert_eq!(ok(" int "), DataType::Int32);
        assert_eq!(ok("integer"), DataType::Int32);
        assert_eq!(ok("long"), DataType::Int64);
        assert_eq!(ok("real"), DataType::Float32);
        assert_eq!(ok("double"), DataType::Float64);
        assert_eq!(ok("decimal"), DataType::Decimal128(10, 0));
        assert_eq!(ok("decimal(5, 2)"), DataType::Decimal128(5, 2));
        assert_eq!(ok("numeric(38,30)"), DataType::Decimal128(38, 30));
        assert_eq!(ok("dec(3)"), DataType::Decimal128(3, 0));
        assert_eq!(ok("string"), DataType::Utf8);
        assert_eq!(ok("binary"), DataType::Binary);
        assert_eq!(ok("date"), DataType::Date32);
        assert_eq!(
            ok("timestamp_ltz"),
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
        );
        assert_eq!(
            ok("timestamp_ntz"),
            DataType::Timestamp(TimeUnit::Microsecond, None)
        );
        assert_eq!(sql_type_name(&ok("variant")), "VARIANT");
    }

    #[test]
    fn datafusion_aliases() {
        assert_eq!(ok("VARCHAR"), DataType::Utf8);
        assert_eq!(ok("TEXT"), DataType::Utf8);
        assert_eq!(ok("INTEGER"), DataType::Int32);
        assert_eq!(ok("DOUBLE PRECISION"), DataType::Float64);
        assert_eq!(ok("bytea"), DataType::Binary);
    }

    #[test]
    fn nested() {
        assert_eq!(sql_type_name(&ok("array<int>")), "ARRAY<INT>");
        assert_eq!(
            sql_type_name(&ok("map<string, array<bigint>>")),
            "MAP<STRING, ARRAY<BIGINT>>"
        );
        assert_eq!(
            sql_type_name(&ok("struct<a: int, b string>")),
            "STRUCT<a: INT, b: STRING>"
        );
        assert_eq!(
            sql_type_name(&ok("a int, b boolean")),
            "STRUCT<a: INT, b: BOOLEAN>"
        );
        assert_eq!(
            sql_type_name(&ok("struct<`x y`: int>")),
            "STRUCT<`x y`: INT>"
        );
        let odd = "struct<`a``b`: array<map<string, struct<c: date>>>>";
        assert_eq!(ok(&sql_type_name(&ok(odd))), ok(odd));
        assert_eq!(sql_type_name(&ok("struct<>")), "STRUCT<>");
    }

    #[test]
    fn rejected() {
        for s in [
            "",
            "varchar(10)",
            "char(3)",
            "void",
            "interval",
            "foo",
            "array<int",
            "map<int,int>",
            "decimal(39,0)",
            "decimal(5,6)",
            "int int int",
            "struct<a int, a int>",
            "array<>",
        ] {
            assert!(parse_target_type(s).is_err(), "{s:?} should be rejected");
        }
    }
}
