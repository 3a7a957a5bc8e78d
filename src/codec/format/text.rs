//! Text: uuids as `UUID.toString`, binary as base64, strings with Jackson's JSON escaping.

use crate::codec::bytes::{covering_word, push_framed};

const HEX_LOWER: &[u8; 16] = b"0123456789abcdef";
const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";

/// Appends a UUID (16 big-endian bytes) as lowercase hyphenated hex.
pub fn write_uuid(out: &mut Vec<u8>, bytes: &[u8; 16]) {
    let mut buf = [0u8; 36];
    let mut j = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            buf[j] = b'-';
            j += 1;
        }
        buf[j] = HEX_LOWER[usize::from(b >> 4)];
        buf[j + 1] = HEX_LOWER[usize::from(b & 0xf)];
        j += 2;
    }
    out.extend_from_slice(&buf);
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Appends standard base64 with padding (no line breaks): `[1]` -> `"AQ=="`, `[1,2]` ->
/// `"AQI="`, `[1,2,255]` -> `"AQL/"`.
pub fn write_base64(out: &mut Vec<u8>, bytes: &[u8]) {
    out.reserve(bytes.len().div_ceil(3) * 4);
    let mut chunks = bytes.chunks_exact(3);
    for c in &mut chunks {
        let n = u32::from(c[0]) << 16 | u32::from(c[1]) << 8 | u32::from(c[2]);
        out.extend_from_slice(&[
            BASE64[(n >> 18) as usize & 63],
            BASE64[(n >> 12) as usize & 63],
            BASE64[(n >> 6) as usize & 63],
            BASE64[n as usize & 63],
        ]);
    }
    match *chunks.remainder() {
        [a] => {
            let n = u32::from(a) << 16;
            out.extend_from_slice(&[
                BASE64[(n >> 18) as usize & 63],
                BASE64[(n >> 12) as usize & 63],
                b'=',
                b'=',
            ]);
        }
        [a, b] => {
            let n = u32::from(a) << 16 | u32::from(b) << 8;
            out.extend_from_slice(&[
                BASE64[(n >> 18) as usize & 63],
                BASE64[(n >> 12) as usize & 63],
                BASE64[(n >> 6) as usize & 63],
                b'=',
            ]);
        }
        _ => {}
    }
}

/// Bytes that Jackson escapes: control characters, '"' and '\\'.
#[inline]
fn needs_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// Appends `s` as a JSON string literal with quotes and Jackson's escaping: \" \\ \b \f \n \r
/// \t, other U+0000..U+001F as \u00XX with uppercase hex (\u001F), '/' and U+007F and all
/// non-ASCII raw. Runs of bytes that need no escaping are copied in one extend.
pub fn write_json_string(out: &mut Vec<u8>, s: &str) {
    write_json_bytes(out, s.as_bytes());
}

/// True when `bytes` is plain ASCII that JSON takes as is (no control characters, '"' or '\\'):
/// checked eight bytes at a time.
#[inline]
pub(crate) fn is_plain_ascii(bytes: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // A byte's high bit marks it as non-ASCII, below 0x20, '"' or '\\' (the classic SWAR
    // tests, whose borrows can only mark bytes above one already marked); one branch per word.
    let below = |x: u64, n: u64| x.wrapping_sub(ONES * n) & !x;
    let plain = |x: u64| {
        (x | below(x, 0x20)
            | below(x ^ (ONES * u64::from(b'"')), 1)
            | below(x ^ (ONES * u64::from(b'\\')), 1))
            & HIGH
            == 0
    };
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        if !plain(u64::from_le_bytes(c.try_into().expect("8 bytes"))) {
            return false;
        }
    }
    let rest = chunks.remainder();
    rest.is_empty() || plain(covering_word(rest))
}

/// [`write_json_string`] for bytes already known to be UTF-8 (keys of a checked dictionary).
pub(crate) fn write_json_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    if is_plain_ascii(bytes) {
        push_framed(out, b"\"", bytes, b"\"");
        return;
    }
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut run_start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if !needs_escape(b) {
            continue;
        }
        out.extend_from_slice(&bytes[run_start..i]);
        run_start = i + 1;
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            _ => out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX_UPPER[usize::from(b >> 4)],
                HEX_UPPER[usize::from(b & 0xf)],
            ]),
        }
    }
    out.extend_from_slice(&bytes[run_start..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::format::written;

    fn json(s: &str) -> String {
        written(|out| write_json_string(out, s))
    }

    fn base64(bytes: &[u8]) -> String {
        written(|out| write_base64(out, bytes))
    }

    #[test]
    fn uuids() {
        let mut out = Vec::new();
        write_uuid(
            &mut out,
            &[
                0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD,
                0xEE, 0xFF,
            ],
        );
        assert_eq!(out, b"00112233-4455-6677-8899-aabbccddeeff");
        out.clear();
        write_uuid(&mut out, &[0; 16]);
        assert_eq!(out, b"00000000-0000-0000-0000-000000000000");
    }

    #[test]
    fn base64_padding() {
        assert_eq!(base64(&[]), "");
        assert_eq!(base64(&[1]), "AQ==");
        assert_eq!(base64(&[1, 2]), "AQI=");
        assert_eq!(base64(&[1, 2, 255]), "AQL/");
        assert_eq!(base64(&[0xfb, 0xff, 0xbf, 0]), "+/+/AA==");
        assert_eq!(base64(b"Hello, World"), "SGVsbG8sIFdvcmxk");
        assert_eq!(base64(b"Hello, World!"), "SGVsbG8sIFdvcmxkIQ==");
    }

    #[test]
    fn json_string_escapes() {
        assert_eq!(json(""), r#""""#);
        assert_eq!(json("abc"), r#""abc""#);
        assert_eq!(json("a\"b"), r#""a\"b""#);
        assert_eq!(json("a\\b"), r#""a\\b""#);
        assert_eq!(json("/"), r#""/""#);
        assert_eq!(json("\u{7f}"), "\"\u{7f}\"");
        assert_eq!(json("\u{2028}é😅"), "\"\u{2028}é😅\"");
        assert_eq!(json("x\ny"), r#""x\ny""#);
        assert_eq!(json("\"\""), r#""\"\"""#);
        let expected = [
            r"\u0000", r"\u0001", r"\u0002", r"\u0003", r"\u0004", r"\u0005", r"\u0006", r"\u0007",
            r"\b", r"\t", r"\n", r"\u000B", r"\f", r"\r", r"\u000E", r"\u000F", r"\u0010",
            r"\u0011", r"\u0012", r"\u0013", r"\u0014", r"\u0015", r"\u0016", r"\u0017", r"\u0018",
            r"\u0019", r"\u001A", r"\u001B", r"\u001C", r"\u001D", r"\u001E", r"\u001F",
        ];
        for (c, esc) in (0u8..0x20).zip(expected) {
            let s = format!("a{}b", char::from(c));
            assert_eq!(json(&s), format!("\"a{esc}b\""), "control char {c:#x}");
        }
    }

    #[test]
    fn plain_ascii_detects_every_byte_that_needs_care_at_every_position() {
        for len in [0usize, 1, 7, 8, 9, 16, 17, 23] {
            let plain = vec![b'a'; len];
            assert!(is_plain_ascii(&plain));
            for pos in 0..len {
                for bad in [0x00u8, 0x1f, b'"', b'\\', 0x80, 0xff] {
                    let mut s = plain.clone();
                    s[pos] = bad;
                    assert!(!is_plain_ascii(&s), "byte {bad:#x} at {pos} of {len}");
                }
                for good in [0x20u8, b'!', b'#', b'[', b']', 0x7f, b'~'] {
                    let mut s = plain.clone();
                    s[pos] = good;
                    assert!(is_plain_ascii(&s), "byte {good:#x} at {pos} of {len}");
                }
            }
        }
    }
}
