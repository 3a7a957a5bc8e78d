//! Variant extraction paths with Spark's grammar: `$` followed by `.name`, `['name']`,
//! `["name"]` or `[index]` segments.
use std::fmt;

use super::error::Result as CodecResult;
use super::raw::{
    FieldTable, KeyDictionary, KeyProbe, NarrowFields, NarrowKeys, Probe, RawKeys, RawLayout,
    ShortKeyProbe, Unreadable, compare_keys,
};
use super::value::{Value, Variant, basic_type};

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PathSegment {
    /// An object field.
    Key(String),
    /// An array element (0-based).
    Index(u32),
}

/// A parsed path.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct VariantPath {
    segments: Vec<PathSegment>,
    /// For each key segment of at most 8 bytes, its bytes as a zero-padded big-endian word
    /// (see [`KeyProbe`]), computed once here rather than for every row looked up.
    probe_words: Vec<Option<u64>>,
}

/// The most segments a path may have: as many levels as a variant may nest
/// ([`super::DEFAULT_MAX_DEPTH`]); a longer path could never lead anywhere, and the mutators
/// would build values deeper than any reader accepts.
pub const MAX_PATH_SEGMENTS: usize = super::validate::DEFAULT_MAX_DEPTH;

/// A path that does not follow the grammar, or that has more than [`MAX_PATH_SEGMENTS`]
/// segments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InvalidPath {
    /// Not the path grammar (the path's text).
    Syntax(String),
    /// More than [`MAX_PATH_SEGMENTS`] segments (the path's first characters).
    TooLong(String),
}

impl fmt::Display for InvalidPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InvalidPath::Syntax(path) => write!(
                f,
                "the path `{path}` is not a valid variant extraction path"
            ),
            InvalidPath::TooLong(start) => write!(
                f,
                "the path `{start}...` has more than {MAX_PATH_SEGMENTS} segments, the deepest a \
                 variant nests"
            ),
        }
    }
}

impl VariantPath {
    /// Parses `path`: `$` then zero or more of `.name` (up to the next `.` or `[`), `['name']`,
    /// `["name"]` (no escapes: any character but the closing quote) and `[digits]` (at most
    /// 2147483647). Anything else, including leading spaces and empty names, is invalid.
    pub fn parse(path: &str) -> Result<Self, InvalidPath> {
        let invalid = || InvalidPath::Syntax(path.to_string());
        let b = path.as_bytes();
        if b.first() != Some(&b'$') {
            return Err(invalid());
        }
        let mut segments = Vec::new();
        let mut pos = 1;
        while pos < b.len() {
            if segments.len() == MAX_PATH_SEGMENTS {
                let start = path.char_indices().nth(40).map_or(path.len(), |(i, _)| i);
                return Err(InvalidPath::TooLong(path[..start].to_string()));
            }
            match b[pos] {
                b'.' => {
                    let start = pos + 1;
                    let mut end = start;
                    while end < b.len() && b[end] != b'.' && b[end] != b'[' {
                        end += 1;
                    }
                    if end == start {
                        return Err(invalid());
                    }
                    segments.push(PathSegment::Key(path[start..end].to_string()));
                    pos = end;
                }
                b'[' => match b.get(pos + 1) {
                    Some(&q @ (b'\'' | b'"')) => {
                        let start = pos + 2;
                        let Some(len) = b[start.min(b.len())..].iter().position(|&c| c == q) else {
                            return Err(invalid());
                        };
                        let end = start + len;
                        if b.get(end + 1) != Some(&b']') {
                            return Err(invalid());
                        }
                        segments.push(PathSegment::Key(path[start..end].to_string()));
                        pos = end + 2;
                    }
                    _ => {
                        let start = pos + 1;
                        let mut end = start;
                        while end < b.len() && b[end].is_ascii_digit() {
                            end += 1;
                        }
                        if end == start || b.get(end) != Some(&b']') {
                            return Err(invalid());
                        }
                        let index: u32 = path[start..end]
                            .parse()
                            .ok()
                            .filter(|&i| i <= i32::MAX as u32)
                            .ok_or_else(invalid)?;
                        segments.push(PathSegment::Index(index));
                        pos = end + 1;
                    }
                },
                _ => return Err(invalid()),
            }
        }
        Ok(Self::from_segments(segments))
    }

    /// The path of `segments`.
    pub fn from_segments(segments: Vec<PathSegment>) -> Self {
        let probe_words = segments
            .iter()
            .map(|s| match s {
                PathSegment::Key(k) => KeyProbe::new(k.as_bytes()).word(),
                PathSegment::Index(_) => None,
            })
            .collect();
        VariantPath {
            segments,
            probe_words,
        }
    }

    /// The path of the segments from `start` on (`$` when `start` is past the end).
    pub fn suffix(&self, start: usize) -> Self {
        Self::from_segments(self.segments.get(start..).unwrap_or_default().to_vec())
    }

    /// The segments.
    pub fn segments(&self) -> &[PathSegment] {
        &self.segments
    }

    /// The first key segment, if any: every row the path finds something in has it as a key.
    pub fn first_key(&self) -> Option<&str> {
        self.segments.iter().find_map(|s| match s {
            PathSegment::Key(k) => Some(k.as_str()),
            PathSegment::Index(_) => None,
        })
    }

    /// True for `$` alone.
    pub fn is_root(&self) -> bool {
        self.segments.is_empty()
    }

    /// Follows the path from `v`; `Ok(None)` when a key is absent, an index is out of range, or a
    /// segment meets a value of the wrong kind (key on a non-object, index on a non-array).
    pub fn navigate<'a>(&self, v: Variant<'a>) -> CodecResult<Option<Variant<'a>>> {
        follow(v, &self.segments)
    }
}

impl fmt::Display for VariantPath {
    /// Writes the path back in the grammar `parse` reads (`$.a['b.c'][0]`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("$")?;
        for s in &self.segments {
            match s {
                PathSegment::Index(i) => write!(f, "[{i}]")?,
                PathSegment::Key(k) if !k.is_empty() && !k.contains(['.', '[']) => {
                    write!(f, ".{k}")?
                }
                PathSegment::Key(k) if !k.contains('\'') => write!(f, "['{k}']")?,
                PathSegment::Key(k) => write!(f, "[\"{k}\"]")?,
            }
        }
        Ok(())
    }
}

impl VariantPath {
    /// The value bytes at the path, starting at the target's header (they may extend past its
    /// end), or None where [`VariantPath::navigate`] gives None. A lean version of `navigate` for
    /// hot loops: it works on raw bytes and small values, and gives [`Unreadable`] instead of a
    /// detailed error for corrupt bytes. Loops over many rows should resolve the path's shape
    /// once with `VariantPath::raw_lookup`.
    #[inline(always)]
    pub fn lookup_raw<'a>(
        &self,
        metadata: &'a [u8],
        value: &'a [u8],
    ) -> Result<Option<&'a [u8]>, Unreadable> {
        self.raw_lookup().find(metadata, value)
    }

    /// [`VariantPath::lookup_raw`] with the shape of the path (one or two short keys, the
    /// commonest, or any other) resolved here rather than for every row.
    #[inline]
    pub(crate) fn raw_lookup(&self) -> RawLookup<'_> {
        fn probe(key: &str, word: u64) -> ShortKeyProbe<'_> {
            ShortKeyProbe::new(key.as_bytes(), word)
        }
        let shape = match (self.segments.as_slice(), self.probe_words.as_slice()) {
            ([PathSegment::Key(k)], &[Some(word)]) => Shape::OneShortKey(probe(k, word)),
            ([PathSegment::Key(k1), PathSegment::Key(k2)], &[Some(w1), Some(w2)]) => {
                Shape::TwoShortKeys(probe(k1, w1), probe(k2, w2))
            }
            _ => Shape::Other,
        };
        RawLookup { path: self, shape }
    }

    /// [`VariantPath::lookup_raw`] for the usual small rows: keys only, through objects whose
    /// field count, ids and offsets are one byte, with a dictionary of one-byte offsets. None
    /// when the path or some value on the way is anything else (the general lookup then starts
    /// over), so that this loop stays small enough to run from registers.
    #[inline(always)]
    fn lookup_narrow<'a>(
        &self,
        keys: &NarrowKeys<'_>,
        mut value: &'a [u8],
    ) -> Option<Result<Option<&'a [u8]>, Unreadable>> {
        for (segment, &word) in self.segments.iter().zip(&self.probe_words) {
            let PathSegment::Key(k) = segment else {
                return None;
            };
            match narrow_field(keys, value, &KeyProbe::with_word(k.as_bytes(), word))? {
                Ok(Some(child)) => value = child,
                other => return Some(other),
            }
        }
        Some(Ok(Some(value)))
    }

    /// [`VariantPath::lookup_raw`] over every layout.
    #[inline(never)]
    fn lookup_any_width<'a>(
        &self,
        metadata: &'a [u8],
        value: &'a [u8],
    ) -> Result<Option<&'a [u8]>, Unreadable> {
        let keys = match NarrowKeys::new(metadata) {
            Some(k) => RowKeys::Narrow(k),
            None => RowKeys::Wide(RawKeys::new(metadata)?),
        };
        let mut value = value;
        for (segment, &word) in self.segments.iter().zip(&self.probe_words) {
            let header = *value.first().ok_or(Unreadable)?;
            let next = match (segment, header & 0x03) {
                (PathSegment::Key(k), basic_type::OBJECT) => {
                    let probe = KeyProbe::with_word(k.as_bytes(), word);
                    raw_field(&keys, value, &probe)?
                }
                (PathSegment::Index(i), basic_type::ARRAY) => {
                    let layout = RawLayout::read(value, false)?;
                    let i = *i as usize;
                    if i < layout.num {
                        Some(layout.child(value, i)?)
                    } else {
                        None
                    }
                }
                _ => None,
            };
            match next {
                Some(n) => value = n,
                None => return Ok(None),
            }
        }
        Ok(Some(value))
    }
}

/// A path ready for [`VariantPath::lookup_raw`] over many rows (see
/// [`VariantPath::raw_lookup`]).
pub(crate) struct RawLookup<'p> {
    path: &'p VariantPath,
    shape: Shape<'p>,
}

/// The paths looked up without the loop over segments: keys of at most 8 bytes, one (the
/// commonest path) or two (`$.user.id`).
enum Shape<'p> {
    OneShortKey(ShortKeyProbe<'p>),
    TwoShortKeys(ShortKeyProbe<'p>, ShortKeyProbe<'p>),
    Other,
}

impl RawLookup<'_> {
    /// What [`VariantPath::lookup_raw`] gives for the row `(metadata, value)`.
    #[inline(always)]
    pub(crate) fn find<'a>(
        &self,
        metadata: &'a [u8],
        value: &'a [u8],
    ) -> Result<Option<&'a [u8]>, Unreadable> {
        if let Some(keys) = NarrowKeys::new(metadata) {
            let found = match &self.shape {
                Shape::OneShortKey(probe) => narrow_field(&keys, value, probe),
                Shape::TwoShortKeys(first, second) => match narrow_field(&keys, value, first) {
                    Some(Ok(Some(child))) => narrow_field(&keys, child, second),
                    other => other,
                },
                Shape::Other => self.path.lookup_narrow(&keys, value),
            };
            if let Some(found) = found {
                return found;
            }
        }
        self.path.lookup_any_width(metadata, value)
    }
}

/// The field `probe` of the object at `value[0]` when the object's field count, ids and offsets
/// are one byte; None for any other value.
#[inline(always)]
fn narrow_field<'a>(
    keys: &NarrowKeys<'_>,
    value: &'a [u8],
    probe: &impl Probe,
) -> Option<Result<Option<&'a [u8]>, Unreadable>> {
    Some(NarrowFields::new(value)?.and_then(|fields| search_fields(keys, &fields, probe)))
}

/// A row's key dictionary as [`VariantPath::lookup_raw`] reads it.
enum RowKeys<'a> {
    /// One-byte offsets (the usual row-level metadata), read without width dispatch.
    Narrow(NarrowKeys<'a>),
    /// Any other offset width.
    Wide(RawKeys<'a>),
}

/// The field `probe` of the object at `value[0]`, exactly like `ObjectView::get`, for any
/// widths.
#[inline]
fn raw_field<'a>(
    keys: &RowKeys<'_>,
    value: &'a [u8],
    probe: &KeyProbe<'_>,
) -> Result<Option<&'a [u8]>, Unreadable> {
    let wide = |value| RawLayout::read(value, true)?.children(value);
    match (keys, NarrowFields::new(value).transpose()?) {
        (RowKeys::Narrow(k), Some(f)) => search_fields(k, &f, probe),
        (RowKeys::Narrow(k), None) => search_fields(k, &wide(value)?, probe),
        (RowKeys::Wide(k), Some(f)) => search_fields(k, &f, probe),
        (RowKeys::Wide(k), None) => search_fields(k, &wide(value)?, probe),
    }
}

/// The search of [`raw_field`] over one pair of readers: a binary search over the object's
/// keys; a miss is certain when the object's fields are sorted (by id when the dictionary says
/// it is sorted); objects whose fields are not (DuckDB writes them) are scanned.
///
/// Alternatives measured on the `variant_get` bench and not kept: a branch-free lower bound and
/// a scan with early exit (both slower in timed runs); a branch-free comparison of every
/// field's key (615-678 instructions per row under callgrind against 484, and no faster); the
/// same over the row's metadata copied into a fixed array to drop bounds checks (fewer
/// instructions but slower, probably because loads of just-copied bytes miss store forwarding).
/// What did pay: reading one-byte layouts without width dispatch ([`NarrowKeys`],
/// [`NarrowFields`]) in a small inlined loop, 484 -> 365 instructions per row.
///
/// Measured again on a Zen 5 machine (2026-11-24), whose predictor handles this search well, so
/// instructions count more than simulated mispredictions there: a branch-free compare of every
/// field's key (as the word ending where the key ends, hits as a bit mask) halved callgrind's
/// mispredictions but was 20-34% slower on hits; a dictionary-first search (the key's id by a
/// binary search over the sorted one-byte dictionary, then its field by comparing up to 16 ids
/// as one word; a key absent from the dictionary is a certain miss) made the missing path 28%
/// faster and double (half misses) 10% faster, but hits 18-21% slower; the same with a
/// branch-free dictionary search was slower everywhere; a branch-free check that the ids
/// ascend (on a miss) left the missing path unchanged (double 10% faster, string within noise
/// but possibly slower, so not kept alone). Hits favour this search, misses the dictionary's.
/// Also measured there: an SSE2 scan of the key bytes 16 at a time for the key's first and last
/// byte, then its id among the offsets and its field among the ids: as many instructions per
/// row as this search (about 330), so no faster. Absent keys are now skipped before any search
/// (`KeyPrefilter`). Later the same day: starting the search at the field index (or distance
/// from the end) where the key was in the last row made BIGINT 5-15% and STRING 6-8% faster
/// but double (a key present in half the rows, at varying places) 4-11% and the nested path
/// 6-8% slower, also when the guess was used only after it had held; not kept. Reading the
/// last keys of a dictionary as one word (instead of byte by byte, when fewer than 8 bytes
/// follow the key's start) cut instructions but not time.
#[inline(always)]
fn search_fields<'a, 'k>(
    keys: &impl KeyDictionary<'k>,
    fields: &impl FieldTable<'a>,
    probe: &impl Probe,
) -> Result<Option<&'a [u8]>, Unreadable> {
    let num = fields.num();
    let (mut lo, mut hi) = (0, num);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match keys.compare(fields.id(mid)?, probe)? {
            std::cmp::Ordering::Less => lo = mid + 1,
            std::cmp::Ordering::Greater => hi = mid,
            std::cmp::Ordering::Equal => return fields.child(mid).map(Some),
        }
    }
    // A miss. It is certain when the fields are in key order: with a sorted dictionary, when
    // their ids ascend (one pass over the id bytes).
    let in_order = if keys.sorted() {
        fields.ids_ascend()?
    } else {
        let mut in_order = true;
        for i in 1..num {
            let (a, b) = (fields.id(i - 1)?, fields.id(i)?);
            if !compare_keys(keys.key(a)?, keys.key(b)?).is_lt() {
                in_order = false;
                break;
            }
        }
        in_order
    };
    if !in_order {
        for j in 0..num {
            if keys.key(fields.id(j)?)? == probe.bytes() {
                return fields.child(j).map(Some);
            }
        }
    }
    Ok(None)
}

/// Follows `segments` from `v`, looking keys up by name.
fn follow<'a>(v: Variant<'a>, segments: &[PathSegment]) -> CodecResult<Option<Variant<'a>>> {
    let mut current = v;
    for segment in segments {
        let next = match (segment, current.get()?) {
            (PathSegment::Key(k), Value::Object(obj)) => obj.get(k)?,
            (PathSegment::Index(i), Value::Array(arr)) => arr.get(*i as usize)?,
            _ => None,
        };
        match next {
            Some(n) => current = n,
            None => return Ok(None),
        }
    }
    Ok(Some(current))
}

#[cfg(test)]
mod tests {
    use super::PathSegment::{Index, Key};
    use super::*;

    fn key(s: &str) -> PathSegment {
        Key(s.to_string())
    }

    #[test]
    fn display_reads_back() {
        for (text, shown) in [
            ("$", "$"),
            ("$.a[0].b", "$.a[0].b"),
            ("$['a.b']", "$['a.b']"),
            ("$['x[1]']", "$['x[1]']"),
            ("$['']", "$['']"),
            ("$[\"it's.x\"]", "$[\"it's.x\"]"),
            ("$['sp ace']", "$.sp ace"),
        ] {
            let path = VariantPath::parse(text).unwrap();
            assert_eq!(path.to_string(), shown);
            assert_eq!(VariantPath::parse(shown).unwrap(), path);
        }
    }

    #[test]
    fn valid_paths() {
        let cases: Vec<(&str, Vec<PathSegment>)> = vec![
            ("$", vec![]),
            ("$.a", vec![key("a")]),
            ("$.a.b[0]", vec![key("a"), key("b"), Index(0)]),
            ("$.sp ace", vec![key("sp ace")]),
            ("$.zip code", vec![key("zip code")]),
            ("$.fb:testid", vec![key("fb:testid")]),
            ("$.$", vec![key("$")]),
            ("$.*", vec![key("*")]),
            ("$.a .b", vec![key("a "), key("b")]),
            ("$.bs\\x", vec![key("bs\\x")]),
            ("$.0", vec![key("0")]),
            ("$.é", vec![key("é")]),
            ("$['']", vec![key("")]),
            ("$[\"\"]", vec![key("")]),
            ("$['k.e']", vec![key("k.e")]),
            ("$['[x]']", vec![key("[x]")]),
            ("$[\"ap'os\"]", vec![key("ap'os")]),
            ("$['q\"u']", vec![key("q\"u")]),
            ("$['bs\\x']", vec![key("bs\\x")]),
            ("$['你好'][\"世界\"]", vec![key("你好"), key("世界")]),
            ("$[01]", vec![Index(1)]),
            ("$[2147483647]", vec![Index(2147483647)]),
            ("$.a ", vec![key("a ")]),
            ("$[\" \"]", vec![key(" ")]),
        ];
        for (path, expected) in cases {
            assert_eq!(
                VariantPath::parse(path).map(|p| p.segments),
                Ok(expected),
                "{path}"
            );
        }
    }

    #[test]
    fn invalid_paths() {
        for path in [
            "",
            "a",
            ".a",
            "$a",
            "$1",
            "$.",
            "$.a.",
            "$..a",
            " $.a",
            "$ .a",
            "$['a'",
            "$['a\"]",
            "$['\"]",
            "$[\"\"\"]",
            "$[\"\\\"\"]",
            "$['ap\\'os']",
            "$['ap''os']",
            "$[-1]",
            "$[*]",
            "$[ 0 ]",
            "$[+1]",
            "$[1.5]",
            "$[a]",
            "$[2147483648]",
            "$[99999999999999999999]",
            "$[",
            "$[]",
            "$['a']x",
        ] {
            assert!(
                VariantPath::parse(path).is_err(),
                "{path:?} should be invalid"
            );
        }
    }

    /// The byte-level lookup finds what `navigate` finds, on rows with shared and with changing
    /// metadata.
    #[test]
    fn lookup_raw_matches_navigate() {
        use crate::codec::{JsonParser, VariantBuilder};
        let docs = [
            r#"{"a": {"b": [1, 2]}, "c": 3}"#,
            r#"{"a": {"b": [4, 5]}, "c": 6}"#,
            r#"{"c": {"a": 1}}"#,
            r#"{"a": 1}"#,
            r#"[{"a": {"b": [7]}}]"#,
            r#"{"a": {"b": [8, 9]}, "c": 6}"#,
        ];
        // Wider layouts, which the one-byte fast path hands to the general lookup: 300 keys
        // (two-byte dictionary offsets, a large object), a long string before a small nested
        // object (two-byte field offsets), and a long key (no one-word comparison).
        let many_keys = format!(
            "{{{}, \"a\": {{\"b\": [10, 11]}}}}",
            (0..300)
                .map(|i| format!("\"k{i:03}\": {i}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let long_value = format!(
            r#"{{"a": {{"b": [12, 13]}}, "c": "{}", "k150": 1}}"#,
            "x".repeat(400)
        );
        let long_key = r#"{"a_rather_long_key": 1, "c": {"a_rather_long_key": 2}}"#;
        // Keys that are prefixes of each other, one with a NUL byte (equal words, lengths
        // differ), the last ones too near the end of the metadata for a one-word read.
        let prefixes = r#"{"a": 1, "ab": 2, "abc": 3, "ab\u0000": 4}"#;
        let mut docs: Vec<&str> = docs.to_vec();
        docs.extend([many_keys.as_str(), long_value.as_str(), long_key, prefixes]);
        let paths = [
            "$.a.b[1]",
            "$.a.b",
            "$.c.a",
            "$.c.b",
            "$.c",
            "$.a",
            "$[0].a.b[0]",
            "$.nope",
            "$",
            "$.k150",
            "$.k299",
            "$.k000",
            "$.a_rather_long_key",
            "$.c.a_rather_long_key",
            "$.c.a_rather_long_kez",
            "$.ab",
            "$.abc",
            "$['ab\u{0}']",
        ];
        let mut found = 0;
        let encoded: Vec<_> = docs
            .iter()
            .map(|d| {
                let mut b = VariantBuilder::new();
                JsonParser::new().parse(d, &mut b).unwrap();
                (b.metadata().to_vec(), b.value().to_vec())
            })
            .collect();
        for p in paths {
            let path = VariantPath::parse(p).unwrap();
            for (m, v) in &encoded {
                let a = path
                    .navigate(Variant::try_new(m, v).unwrap())
                    .unwrap()
                    .map(|x| x.value_bytes().as_ptr());
                let b = path.lookup_raw(m, v).unwrap().map(|x| x.as_ptr());
                assert_eq!(a, b, "{p}");
                found += usize::from(b.is_some());
            }
        }
        // Hits in every kind of layout, not only misses.
        assert_eq!(found, 44);
    }

    #[test]
    fn error_names_the_path() {
        let e = VariantPath::parse("abc").unwrap_err();
        assert_eq!(
            e.to_string(),
            "the path `abc` is not a valid variant extraction path"
        );
    }
}
