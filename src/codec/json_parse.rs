//! A streaming JSON parser that writes Variant directly, with Spark's rules.
//!
//! Numbers: an integer becomes the smallest of int8/16/32/64; beyond int64 a decimal of up to 38
//! digits, then a double. A fraction without exponent is a decimal when its digits and scale fit in
//! 38, else a double. Any exponent gives a double. Duplicate keys, nesting deeper than the limit,
//! and trailing content after the value are errors.
use super::builder::VariantBuilder;
use super::error::{Result, VariantError};
use super::validate::DEFAULT_MAX_DEPTH;

/// Reusable JSON-to-Variant parser (its scratch buffers survive across rows).
#[derive(Debug)]
pub struct JsonParser {
    max_depth: usize,
    in_object: Vec<bool>,
    scratch: Vec<u8>,
}

impl Default for JsonParser {
    fn default() -> Self {
        Self::new()
    }
}

#[inline]
fn err<T>(offset: usize, message: &'static str) -> Result<T> {
    Err(VariantError::MalformedJson { offset, message })
}

/// Bytes that end the fast scan of a string: quote, backslash and control characters.
const STRING_STOP: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = true;
        i += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t
};

impl JsonParser {
    /// A parser with the default depth limit (1000, like Spark).
    pub fn new() -> Self {
        Self::with_max_depth(DEFAULT_MAX_DEPTH)
    }

    /// A parser with a custom depth limit (limits above [`DEFAULT_MAX_DEPTH`] do not raise it:
    /// the builder refuses deeper values).
    pub fn with_max_depth(max_depth: usize) -> Self {
        JsonParser {
            max_depth,
            in_object: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// Parses `input` as one JSON value into `builder` (which is reset first) and finishes the row.
    pub fn parse(&mut self, input: &str, builder: &mut VariantBuilder) -> Result<()> {
        builder.reset();
        self.in_object.clear();
        let b = input.as_bytes();
        let mut pos = skip_ws(b, 0);
        'value: loop {
            let Some(&c) = b.get(pos) else {
                return err(pos, "unexpected end of input, expected a value");
            };
            match c {
                b'{' | b'[' => {
                    if self.in_object.len() >= self.max_depth {
                        return Err(VariantError::DepthLimitExceeded(self.max_depth));
                    }
                    pos = skip_ws(b, pos + 1);
                    if c == b'{' {
                        builder.begin_object();
                        if b.get(pos) == Some(&b'}') {
                            pos += 1;
                            builder.end_object()?;
                        } else {
                            self.in_object.push(true);
                            pos = self.key(b, pos, builder)?;
                            continue 'value;
                        }
                    } else {
                        builder.begin_array();
                        if b.get(pos) == Some(&b']') {
                            pos += 1;
                            builder.end_array();
                        } else {
                            self.in_object.push(false);
                            continue 'value;
                        }
                    }
                }
                b'"' => {
                    let (s, next) = self.string(b, pos + 1)?;
                    builder.string_bytes(s);
                    pos = next;
                }
                b't' => pos = literal(b, pos, b"true", || builder.boolean(true))?,
                b'f' => pos = literal(b, pos, b"false", || builder.boolean(false))?,
                b'n' => pos = literal(b, pos, b"null", || builder.null())?,
                b'-' | b'0'..=b'9' => pos = number(b, pos, builder)?,
                // Whitespace is skipped where it is met, so compact JSON (the usual kind) pays
                // no whitespace check before each value and after it.
                b' ' | b'\t' | b'\n' | b'\r' => {
                    pos = skip_ws(b, pos);
                    continue 'value;
                }
                _ => return err(pos, "unexpected character, expected a value"),
            }
            // After a value: close containers or move to the next element.
            loop {
                let Some(&is_object) = self.in_object.last() else {
                    break 'value;
                };
                match (b.get(pos), is_object) {
                    (Some(b','), true) => {
                        pos = self.key(b, pos + 1, builder)?;
                        continue 'value;
                    }
                    (Some(b','), false) => {
                        pos += 1;
                        continue 'value;
                    }
                    (Some(b'}'), true) => {
                        pos += 1;
                        self.in_object.pop();
                        builder.end_object()?;
                    }
                    (Some(b']'), false) => {
                        pos += 1;
                        self.in_object.pop();
                        builder.end_array();
                    }
                    (Some(b' ' | b'\t' | b'\n' | b'\r'), _) => pos = skip_ws(b, pos),
                    (None, _) => return err(pos, "unexpected end of input inside a container"),
                    (_, true) => return err(pos, "expected ',' or '}'"),
                    (_, false) => return err(pos, "expected ',' or ']'"),
                }
            }
        }
        let pos = skip_ws(b, pos);
        if pos != b.len() {
            return err(pos, "unexpected content after the JSON value");
        }
        builder.finish()
    }

    /// Parses `"key" :` at `pos` (whitespace before it allowed) and sets it as the builder's next
    /// key; returns the position after the ':' (the value's dispatch skips whitespace).
    fn key(&mut self, b: &[u8], pos: usize, builder: &mut VariantBuilder) -> Result<usize> {
        let pos = skip_ws(b, pos);
        if b.get(pos) != Some(&b'"') {
            return err(pos, "expected a string key");
        }
        let (key, next) = self.string(b, pos + 1)?;
        builder.key_bytes(key);
        let pos = skip_ws(b, next);
        if b.get(pos) != Some(&b':') {
            return err(pos, "expected ':' after an object key");
        }
        Ok(pos + 1)
    }

    /// Parses a string body starting after the opening quote; returns its unescaped bytes and the
    /// position after the closing quote. Unescaped strings borrow `b`; others use the scratch buffer.
    fn string<'s>(&'s mut self, b: &'s [u8], start: usize) -> Result<(&'s [u8], usize)> {
        let mut pos = scan_string(b, start);
        match b.get(pos) {
            Some(b'"') => return Ok((&b[start..pos], pos + 1)),
            None => return err(pos, "unterminated string"),
            Some(c) if *c < 0x20 => return err(pos, "unescaped control character in string"),
            _ => {}
        }
        self.scratch.clear();
        self.scratch.extend_from_slice(&b[start..pos]);
        loop {
            let Some(&c) = b.get(pos) else {
                return err(pos, "unterminated string");
            };
            match c {
                b'"' => return Ok((&self.scratch, pos + 1)),
                b'\\' => {
                    let Some(&e) = b.get(pos + 1) else {
                        return err(pos, "unterminated string");
                    };
                    pos += 2;
                    let ch = match e {
                        b'"' => b'"',
                        b'\\' => b'\\',
                        b'/' => b'/',
                        b'b' => 0x08,
                        b'f' => 0x0C,
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'u' => {
                            let (cp, next) = unicode_escape(b, pos)?;
                            pos = next;
                            let mut buf = [0u8; 4];
                            self.scratch
                                .extend_from_slice(cp.encode_utf8(&mut buf).as_bytes());
                            continue;
                        }
                        _ => return err(pos - 1, "invalid escape sequence"),
                    };
                    self.scratch.push(ch);
                }
                c if c < 0x20 => return err(pos, "unescaped control character in string"),
                _ => {
                    let run_start = pos;
                    pos = scan_string(b, pos);
                    self.scratch.extend_from_slice(&b[run_start..pos]);
                }
            }
        }
    }
}

/// The position of the first quote, backslash or control character at or after `pos` (or the
/// end of `b`). Eight bytes at a time: most strings (keys, short values) end within one word.
#[inline]
fn scan_string(b: &[u8], mut pos: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    while let Some(chunk) = b.get(pos..pos + 8) {
        let w = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        // Classic SWAR: a byte's high bit is set in `x.wrapping_sub(ONES * n) & !x & HIGH` when
        // that byte of `x` is below `n`; the lowest such byte is always exact.
        let quote = w ^ (ONES * b'"' as u64);
        let backslash = w ^ (ONES * b'\\' as u64);
        let stops = (quote.wrapping_sub(ONES) & !quote)
            | (backslash.wrapping_sub(ONES) & !backslash)
            | (w.wrapping_sub(ONES * 0x20) & !w);
        let stops = stops & HIGH;
        if stops != 0 {
            return pos + (stops.trailing_zeros() / 8) as usize;
        }
        pos += 8;
    }
    while pos < b.len() && !STRING_STOP[b[pos] as usize] {
        pos += 1;
    }
    pos
}

#[inline]
fn skip_ws(b: &[u8], mut pos: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = b.get(pos) {
        pos += 1;
    }
    pos
}

#[inline]
fn literal(b: &[u8], pos: usize, word: &[u8], emit: impl FnOnce()) -> Result<usize> {
    if b.get(pos..pos + word.len()) == Some(word) {
        emit();
        Ok(pos + word.len())
    } else {
        err(pos, "invalid literal")
    }
}

fn hex4(b: &[u8], pos: usize) -> Result<u32> {
    let Some(digits) = b.get(pos..pos + 4) else {
        return err(pos, "incomplete \\u escape");
    };
    let mut v = 0u32;
    for &d in digits {
        let n = match d {
            b'0'..=b'9' => d - b'0',
            b'a'..=b'f' => d - b'a' + 10,
            b'A'..=b'F' => d - b'A' + 10,
            _ => return err(pos, "invalid \\u escape"),
        };
        v = v * 16 + n as u32;
    }
    Ok(v)
}

/// Decodes `XXXX` (after `\u`) at `pos`, joining surrogate pairs; lone surrogates are errors.
fn unicode_escape(b: &[u8], pos: usize) -> Result<(char, usize)> {
    let hi = hex4(b, pos)?;
    let mut next = pos + 4;
    let cp = if (0xD800..0xDC00).contains(&hi) {
        if b.get(next..next + 2) != Some(b"\\u") {
            return err(pos, "lone high surrogate in \\u escape");
        }
        let lo = hex4(b, next + 2)?;
        if !(0xDC00..0xE000).contains(&lo) {
            return err(next, "invalid low surrogate in \\u escape");
        }
        next += 6;
        0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
    } else if (0xDC00..0xE000).contains(&hi) {
        return err(pos, "lone low surrogate in \\u escape");
    } else {
        hi
    };
    match char::from_u32(cp) {
        Some(c) => Ok((c, next)),
        None => err(pos, "invalid \\u escape"),
    }
}

/// Parses a JSON number at `start` with Spark's typing rules; returns the position after it.
fn number(b: &[u8], start: usize, builder: &mut VariantBuilder) -> Result<usize> {
    let mut pos = start;
    let negative = b[pos] == b'-';
    if negative {
        pos += 1;
    }
    let int_start = pos;
    // The integer part's value, exact while it has at most 18 digits (read in the same pass).
    let mut int_value: u64 = 0;
    match b.get(pos) {
        Some(b'0') => {
            pos += 1;
            if matches!(b.get(pos), Some(b'0'..=b'9')) {
                return err(pos, "leading zeros are not allowed in numbers");
            }
        }
        Some(b'1'..=b'9') => {
            while let Some(&d @ b'0'..=b'9') = b.get(pos) {
                int_value = int_value.wrapping_mul(10).wrapping_add(u64::from(d - b'0'));
                pos += 1;
            }
        }
        _ => return err(pos, "invalid number"),
    }
    let int_end = pos;
    let mut frac_end = pos;
    if b.get(pos) == Some(&b'.') {
        pos += 1;
        if !matches!(b.get(pos), Some(b'0'..=b'9')) {
            return err(pos, "expected a digit after the decimal point");
        }
        while matches!(b.get(pos), Some(b'0'..=b'9')) {
            pos += 1;
        }
        frac_end = pos;
    }
    let has_exponent = matches!(b.get(pos), Some(b'e' | b'E'));
    if has_exponent {
        pos += 1;
        if matches!(b.get(pos), Some(b'+' | b'-')) {
            pos += 1;
        }
        if !matches!(b.get(pos), Some(b'0'..=b'9')) {
            return err(pos, "expected a digit in the exponent");
        }
        while matches!(b.get(pos), Some(b'0'..=b'9')) {
            pos += 1;
        }
    }
    let token = &b[start..pos];
    if has_exponent {
        builder.double(parse_double(token));
        return Ok(pos);
    }
    let int_digits = &b[int_start..int_end];
    let frac_digits = if frac_end > int_end {
        &b[int_end + 1..frac_end]
    } else {
        &b[int_end..int_end]
    };
    if frac_digits.is_empty() && int_digits.len() <= 18 {
        // At most 18 digits: below 10^18, so neither the value nor its negation overflows.
        let v = int_value as i64;
        builder.int(if negative { -v } else { v });
        return Ok(pos);
    }
    // Decimal candidate: the significant digits of integer and fraction parts together.
    let scale = frac_digits.len();
    let mut significant = 0usize;
    let mut unscaled: i128 = 0;
    for &d in int_digits.iter().chain(frac_digits) {
        if significant == 0 && d == b'0' {
            continue;
        }
        significant += 1;
        if significant > 38 {
            break;
        }
        unscaled = unscaled * 10 + (d - b'0') as i128;
    }
    if significant > 38 || scale > 38 {
        builder.double(parse_double(token));
        return Ok(pos);
    }
    if negative {
        unscaled = -unscaled;
    }
    if scale == 0
        && let Ok(v) = i64::try_from(unscaled)
    {
        builder.int(v);
        return Ok(pos);
    }
    builder.decimal(unscaled, scale as u8);
    Ok(pos)
}

fn parse_double(token: &[u8]) -> f64 {
    // The token matched the JSON number grammar, which Rust's float parser accepts.
    std::str::from_utf8(token)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(f64::NAN)
}
