//! Numeric and text conversions of variant scalars with Spark's rules: truncation toward zero
//! to integers, HALF_UP rounding to decimals, Spark's string parsing.
use crate::codec::Value;
use crate::codec::format::POW10;
use crate::codec::format::write_java_double;

/// `10^n` for n in 0..=38.
pub(crate) fn pow10(n: u32) -> i128 {
    10i128.pow(n)
}

pub(crate) use crate::codec::decimal_digits as digits;

/// Divides by `10^shift` rounding half away from zero (HALF_UP).
fn div_half_up(v: i128, shift: u32) -> i128 {
    if shift > 38 {
        return 0;
    }
    let d = pow10(shift);
    let q = v / d;
    let r = (v % d).abs();
    if r * 2 >= d { q + v.signum() } else { q }
}

/// Rescales a decimal to `scale` (HALF_UP) and checks it fits `precision`.
pub(crate) fn rescale(unscaled: i128, from: u32, precision: u8, scale: u8) -> Option<i128> {
    let to = scale as u32;
    let v = if from > to {
        div_half_up(unscaled, from - to)
    } else {
        unscaled.checked_mul(*POW10.get((to - from) as usize)?)?
    };
    (digits(v) <= precision as u32).then_some(v)
}

/// A decimal value as (unscaled, scale) when the variant holds an exact number.
pub(crate) fn exact_decimal(v: &Value<'_>) -> Option<(i128, u32)> {
    Some(match *v {
        Value::Int8(i) => (i as i128, 0),
        Value::Int16(i) => (i as i128, 0),
        Value::Int32(i) => (i as i128, 0),
        Value::Int64(i) => (i as i128, 0),
        Value::Decimal4(u, s) => (u as i128, s as u32),
        Value::Decimal8(u, s) => (u as i128, s as u32),
        Value::Decimal16(u, s) => (u, s as u32),
        _ => return None,
    })
}

/// A decimal value as a double (correctly rounded through its text when not exact in f64).
pub(crate) fn decimal_to_f64(unscaled: i128, scale: u32) -> f64 {
    if unscaled.unsigned_abs() < (1u128 << 53) && scale <= 22 {
        return unscaled as f64 / 10f64.powi(scale as i32);
    }
    format!("{unscaled}e-{scale}").parse().unwrap_or(f64::NAN)
}

/// A decimal value as a float, rounded once (as Java's `BigDecimal.floatValue`).
pub(crate) fn decimal_to_f32(unscaled: i128, scale: u32) -> f32 {
    if unscaled.unsigned_abs() < (1u128 << 24) && scale <= 10 {
        return unscaled as f32 / 10f32.powi(scale as i32);
    }
    format!("{unscaled}e-{scale}").parse().unwrap_or(f32::NAN)
}

/// Trims what Spark's `UTF8String.trim` trims: ASCII whitespace and control characters.
pub(crate) fn spark_trim(s: &str) -> &str {
    s.trim_matches(|c: char| c <= ' ')
}

/// Spark's string to integral: optional sign and digits, surrounding whitespace allowed.
pub(crate) fn parse_integral(s: &str) -> Option<i64> {
    let t = spark_trim(s);
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.strip_prefix('+').unwrap_or(t).parse().ok()
}

/// Text read as Spark reads a string cast to double or float: Java's `Double.parseDouble`
/// (`Float.parseFloat`), then Spark's special literals.
enum FloatText<'a> {
    /// A decimal literal without its `f`/`d` suffix, for Rust's correctly rounded parse.
    Decimal(&'a str),
    /// An infinity or NaN.
    Special(f64),
    /// A hexadecimal literal: `mantissa * 2^exponent`, negated when `negative`; `sticky` when
    /// non-zero digits past the mantissa's 30 were dropped.
    Hex {
        negative: bool,
        mantissa: u128,
        sticky: bool,
        exponent: i64,
    },
}

/// Spark's spellings of infinities and NaN (`processFloatingPointSpecialLiterals`, any case)
/// and Java's (`[+-]NaN`, `[+-]Infinity`).
fn special_float(t: &str) -> Option<f64> {
    let any_case = |names: &[&str]| names.iter().any(|n| t.eq_ignore_ascii_case(n));
    if any_case(&["inf", "+inf", "infinity", "+infinity"]) {
        Some(f64::INFINITY)
    } else if any_case(&["-inf", "-infinity"]) {
        Some(f64::NEG_INFINITY)
    } else if any_case(&["nan"]) || t == "+NaN" || t == "-NaN" {
        Some(f64::NAN)
    } else {
        None
    }
}

/// Reads `s` as Java's `Double.parseDouble` grammar (trimmed; `[+-]`; digits with an optional
/// fraction and exponent, or `0x` hex digits with a `p` exponent; an optional `f`/`F`/`d`/`D`),
/// or as a special literal.
fn float_text(s: &str) -> Option<FloatText<'_>> {
    let t = spark_trim(s);
    if let Some(special) = special_float(t) {
        return Some(FloatText::Special(special));
    }
    let unsigned = t.strip_prefix(['+', '-']).unwrap_or(t);
    let negative = t.starts_with('-');
    let body = unsigned
        .strip_suffix(['f', 'F', 'd', 'D'])
        .unwrap_or(unsigned);
    if let Some(hex) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        return hex_float(negative, hex);
    }
    let b = body.as_bytes();
    let digits = |from: usize| b[from..].iter().take_while(|c| c.is_ascii_digit()).count();
    let int = digits(0);
    let mut pos = int;
    let mut frac = 0;
    if b.get(pos) == Some(&b'.') {
        frac = digits(pos + 1);
        pos += 1 + frac;
    }
    if int + frac == 0 {
        return None;
    }
    if matches!(b.get(pos), Some(b'e' | b'E')) {
        pos += 1;
        if matches!(b.get(pos), Some(b'+' | b'-')) {
            pos += 1;
        }
        let exp = digits(pos);
        if exp == 0 {
            return None;
        }
        pos += exp;
    }
    if pos != b.len() {
        return None;
    }
    Some(FloatText::Decimal(
        &t[..t.len() - unsigned.len() + body.len()],
    ))
}

/// The part of a hexadecimal literal after `0x`: hex digits with an optional `.` fraction, then
/// `p` and a decimal exponent of two.
fn hex_float(negative: bool, hex: &str) -> Option<FloatText<'_>> {
    const MAX_DIGITS: u32 = 30;
    let (digits, exp_text) = hex.split_once(['p', 'P'])?;
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    if int.len() + frac.len() == 0 {
        return None;
    }
    let exp_digits = exp_text.strip_prefix(['+', '-']).unwrap_or(exp_text);
    if exp_digits.is_empty() || !exp_digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    // Exponents past any double's range saturate (the value is then 0 or infinite).
    let mut exponent = exp_digits
        .bytes()
        .fold(0i64, |e, c| (e * 10 + i64::from(c - b'0')).min(1 << 20));
    if exp_text.starts_with('-') {
        exponent = -exponent;
    }
    let (mut mantissa, mut taken, mut sticky) = (0u128, 0u32, false);
    for (c, in_fraction) in int
        .bytes()
        .map(|c| (c, false))
        .chain(frac.bytes().map(|c| (c, true)))
    {
        let d = char::from(c).to_digit(16)?;
        if taken < MAX_DIGITS && (mantissa != 0 || d != 0) {
            mantissa = mantissa * 16 + u128::from(d);
            taken += 1;
            exponent -= if in_fraction { 4 } else { 0 };
        } else if mantissa == 0 {
            // A leading zero.
            exponent -= if in_fraction { 4 } else { 0 };
        } else {
            sticky |= d != 0;
            exponent += if in_fraction { 0 } else { 4 };
        }
    }
    Some(FloatText::Hex {
        negative,
        mantissa,
        sticky,
        exponent,
    })
}

/// `mantissa * 2^exponent` rounded (to nearest, ties to even; `sticky` breaks ties upward) to a
/// binary float of `precision` bits and exponents from `min_exponent` to `max_exponent`, as f64.
fn round_binary(mantissa: u128, sticky: bool, exponent: i64, format: (u32, i64, i64)) -> f64 {
    let (precision, min_exponent, max_exponent) = format;
    if mantissa == 0 {
        return 0.0;
    }
    let bits = i64::from(128 - mantissa.leading_zeros());
    let top = bits - 1 + exponent;
    if top > max_exponent {
        return f64::INFINITY;
    }
    // Subnormal results keep fewer bits.
    let keep = i64::from(precision) - (min_exponent - top).max(0);
    let shift = bits - keep;
    let (q, scale) = if shift <= 0 {
        (mantissa, exponent)
    } else if shift > 128 {
        (0, exponent + shift)
    } else {
        let q = mantissa.checked_shr(shift as u32).unwrap_or(0);
        let rest = mantissa & (u128::MAX >> (128 - shift));
        let half = 1u128 << (shift - 1);
        let up = rest > half || (rest == half && (sticky || q & 1 == 1));
        (q + u128::from(up), exponent + shift)
    };
    // `q` has at most `precision` + 1 bits and the scaling is by a power of two: exact, or
    // infinite past the largest value.
    let mut value = q as f64;
    let mut n = scale;
    while n > 1000 && value.is_finite() {
        value *= 2f64.powi(1000);
        n -= 1000;
    }
    while n < -1000 {
        value *= 2f64.powi(-1000);
        n += 1000;
    }
    value * 2f64.powi(n as i32)
}

impl FloatText<'_> {
    /// The value as a `T` of `format` (bits of precision, least and greatest exponent):
    /// decimals by Rust's correctly rounded parse, hex rounded once to the format, so that
    /// `narrow` from f64 is exact.
    fn value<T: std::str::FromStr>(
        self,
        format: (u32, i64, i64),
        narrow: fn(f64) -> T,
    ) -> Option<T> {
        let v = match self {
            FloatText::Decimal(text) => return text.parse().ok(),
            FloatText::Special(v) => v,
            FloatText::Hex {
                negative,
                mantissa,
                sticky,
                exponent,
            } => {
                let v = round_binary(mantissa, sticky, exponent, format);
                if negative { -v } else { v }
            }
        };
        Some(narrow(v))
    }
}

/// Spark's string to double (Java's `Double.parseDouble`, then `inf`/`infinity`/`nan` in any
/// case): `1.5`, `.5`, `1.`, `1e3`, `1d`, `1.5f`, `0x1.8p1`; surrounding whitespace allowed.
pub(crate) fn parse_double(s: &str) -> Option<f64> {
    float_text(s)?.value((53, -1022, 1023), |v| v)
}

/// Spark's string to float (Java's `Float.parseFloat`, rounded once to a float), in the forms
/// of [`parse_double`].
pub(crate) fn parse_float(s: &str) -> Option<f32> {
    float_text(s)?.value((24, -126, 127), |v| v as f32)
}

/// Parses decimal text (`-12.5`, `1e3`, `.5`) to (negative, significant digits, exponent) so
/// that the value is `digits * 10^exponent`.
fn decimal_text(s: &str) -> Option<(bool, Vec<u8>, i64)> {
    let t = spark_trim(s);
    let (neg, body) = match t.as_bytes().first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    let (mantissa, exp) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], body[i + 1..].parse::<i64>().ok()?),
        None => (body, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    if !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let digits: Vec<u8> = int.bytes().chain(frac.bytes()).map(|b| b - b'0').collect();
    Some((neg, digits, exp - frac.len() as i64))
}

/// Rounds `digits * 10^exponent` HALF_UP to `scale` and checks `precision`.
fn round_digits(neg: bool, digits: &[u8], exponent: i64, precision: u8, scale: u8) -> Option<i128> {
    // unscaled = digits * 10^(exponent + scale)
    let shift = exponent + scale as i64;
    let first = digits.iter().position(|&d| d != 0).unwrap_or(digits.len());
    let ds = &digits[first..];
    let cut = ds.len() as i64 + shift.min(0);
    let mut v: i128 = 0;
    if cut > 0 {
        let keep = cut as usize;
        for &d in &ds[..keep] {
            v = v.checked_mul(10)?.checked_add(d as i128)?;
        }
        if shift > 0 {
            v = v.checked_mul(*POW10.get(shift as usize)?)?;
        } else if keep < ds.len() && ds[keep] >= 5 {
            v += 1;
        }
    } else if cut == 0 && ds.first().is_some_and(|&d| d >= 5) {
        v = 1;
    }
    if self::digits(v) > precision as u32 {
        return None;
    }
    Some(if neg { -v } else { v })
}

/// Spark's string to decimal(p, s) with HALF_UP rounding.
pub(crate) fn parse_decimal(s: &str, precision: u8, scale: u8) -> Option<i128> {
    let (neg, digits, exp) = decimal_text(s)?;
    round_digits(neg, &digits, exp, precision, scale)
}

/// A double to decimal(p, s) through its text as Java's `Double.toString` writes it (Spark's
/// `BigDecimal(d)` is `new BigDecimal(Double.toString(d))`), HALF_UP. Where two shortest texts
/// are equally near the double, Java's is not always the one Rust's formatting picks:
/// 123456789012345.625 is `1.2345678901234562E14` in Java, so decimal(20, 3) is ..345.620.
pub(crate) fn double_to_decimal(d: f64, precision: u8, scale: u8) -> Option<i128> {
    if !d.is_finite() {
        return None;
    }
    let mut text = Vec::with_capacity(24);
    write_java_double(&mut text, d.abs());
    let text = std::str::from_utf8(&text).ok()?;
    let unscaled = parse_decimal(text, precision, scale)?;
    Some(if d < 0.0 { -unscaled } else { unscaled })
}

/// Spark's string to boolean: t/true/y/yes/1 and f/false/n/no/0, any case, trimmed.
pub(crate) fn parse_boolean(s: &str) -> Option<bool> {
    match spark_trim(s).to_ascii_lowercase().as_str() {
        "t" | "true" | "y" | "yes" | "1" => Some(true),
        "f" | "false" | "n" | "no" | "0" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rescale_rounds_half_up() {
        assert_eq!(rescale(15, 1, 10, 0), Some(2)); // 1.5 -> 2
        assert_eq!(rescale(299, 2, 10, 0), Some(3)); // 2.99 -> 3
        assert_eq!(rescale(-25, 1, 10, 0), Some(-3)); // -2.5 -> -3
        assert_eq!(rescale(115, 2, 2, 1), Some(12)); // 1.15 -> 1.2
        assert_eq!(rescale(1235, 3, 3, 2), Some(124)); // 1.235 -> 1.24
        assert_eq!(rescale(-1235, 3, 3, 2), Some(-124));
        assert_eq!(rescale(95, 1, 1, 0), None); // 9.5 -> 10 does not fit decimal(1,0)
        assert_eq!(rescale(12345, 0, 6, 3), None); // 12345.000 needs 8 digits
        assert_eq!(rescale(100000000, 0, 38, 30), None);
        assert_eq!(rescale(1, 0, 18, 17), Some(100000000000000000));
        assert_eq!(rescale(1, 0, 18, 18), None);
    }

    #[test]
    fn strings() {
        assert_eq!(parse_integral(" 12 "), Some(12));
        assert_eq!(parse_integral("-7"), Some(-7));
        assert_eq!(parse_integral("+7"), Some(7));
        for bad in ["1.5", "1e3", "0x10", "", " ", "- 1", "9223372036854775808"] {
            assert_eq!(parse_integral(bad), None, "{bad:?}");
        }
        assert_eq!(parse_double("1e3"), Some(1000.0));
        assert_eq!(parse_double(" 1.5 "), Some(1.5));
        assert_eq!(parse_double("-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_double("Infinity"), Some(f64::INFINITY));
        assert!(parse_double("NaN").unwrap().is_nan());
        assert_eq!(parse_double("abc"), None);
        // Java's `Double.parseDouble` forms and Spark's special literals; each expectation is
        // what Spark 4.3 gave for `try_variant_get(parse_json('"<text>"'), '$', 'double')`.
        for (text, value) in [
            ("1d", 1.0),
            ("1.5f", 1.5),
            ("1D", 1.0),
            ("1F", 1.0),
            ("1e3d", 1000.0),
            (" 1d ", 1.0),
            ("1.", 1.0),
            (".5", 0.5),
            ("0x1p3", 8.0),
            ("0X1P3", 8.0),
            ("0x1.8p1", 3.0),
            ("-0x1p-2", -0.25),
            ("1e400", f64::INFINITY),
            ("4.9e-325", 0.0),
            ("INF", f64::INFINITY),
            ("+inf", f64::INFINITY),
            ("-Infinity", f64::NEG_INFINITY),
            ("-INFINITY", f64::NEG_INFINITY),
        ] {
            assert_eq!(parse_double(text), Some(value), "{text:?}");
            assert_eq!(parse_float(text), Some(value as f32), "{text:?}");
        }
        for text in ["-NaN", "+NaN", "NaN", "nan"] {
            assert!(parse_double(text).unwrap().is_nan(), "{text:?}");
        }
        for text in [
            "0x10",
            "0x1p",
            "+nan",
            "-nan",
            "infinityd",
            "1_0",
            ".",
            "e3",
            "1e",
            "1.5dd",
            "1 d",
            "\u{663}",
            "0x",
            "0xp1",
            "0x1p+",
            "d",
            "-",
            "",
        ] {
            assert_eq!(parse_double(text), None, "{text:?}");
            assert_eq!(parse_float(text), None, "{text:?}");
        }
        // Hexadecimal literals round once, to nearest and ties to even (hand-computed): 2^53 + 1
        // is a tie between 2^53 and 2^53 + 2, 2^53 + 3 rounds up, and a non-zero digit past the
        // kept ones breaks a tie upward.
        assert_eq!(parse_double("0x20000000000001p0"), Some(9007199254740992.0));
        assert_eq!(parse_double("0x20000000000003p0"), Some(9007199254740996.0));
        assert_eq!(
            parse_double("0x20000000000001000000000000000001p-72"),
            Some(9007199254740994.0)
        );
        // The smallest subnormal and half of it (a tie, to the even zero); the largest double
        // and past it.
        assert_eq!(parse_double("0x1p-1074"), Some(f64::from_bits(1)));
        assert_eq!(parse_double("0x1p-1075"), Some(0.0));
        assert_eq!(parse_double("0x1.8p-1075"), Some(f64::from_bits(1)));
        assert_eq!(parse_double("0x1.fffffffffffffp1023"), Some(f64::MAX));
        assert_eq!(parse_double("0x1p1024"), Some(f64::INFINITY));
        assert_eq!(
            parse_double("0x1p99999999999999999999"),
            Some(f64::INFINITY)
        );
        assert_eq!(parse_double("0x1p-99999999999999999999"), Some(0.0));
        assert_eq!(parse_float("0x1p-149"), Some(f32::from_bits(1)));
        assert_eq!(parse_float("0x1.000001p0"), Some(1.0));
        assert_eq!(parse_float("0x1.000003p0"), Some(1.0 + 2.0 * f32::EPSILON));
        assert_eq!(parse_decimal("1.5", 10, 0), Some(2));
        assert_eq!(parse_decimal("-1.235", 3, 2), Some(-124));
        assert_eq!(parse_decimal("1e3", 10, 0), Some(1000));
        assert_eq!(parse_decimal(".5", 3, 1), Some(5));
        assert_eq!(parse_decimal("12345", 4, 0), None);
        assert_eq!(parse_decimal("x", 4, 0), None);
        assert_eq!(parse_decimal("0.05", 3, 0), Some(0));
        assert_eq!(parse_decimal("0.5", 3, 0), Some(1));
        assert_eq!(parse_decimal("0.0049", 3, 2), Some(0));
        assert_eq!(parse_boolean(" t "), Some(true));
        assert_eq!(parse_boolean("YES"), Some(true));
        assert_eq!(parse_boolean("false"), Some(false));
        assert_eq!(parse_boolean("abc"), None);
    }

    #[test]
    fn doubles_to_decimals() {
        assert_eq!(double_to_decimal(1.2345, 5, 2), Some(123));
        assert_eq!(double_to_decimal(-0.0, 5, 2), Some(0));
        assert_eq!(double_to_decimal(1e20, 38, 0), Some(100000000000000000000));
        assert_eq!(double_to_decimal(f64::NAN, 5, 2), None);
        // halfway at the 17th digit: Java's text (..345.62), not the other shortest one (..63)
        assert_eq!(
            double_to_decimal(123456789012345.0 + 0.625, 20, 3),
            Some(123456789012345620)
        );
        assert_eq!(
            double_to_decimal(-(263166374340585.0 + 0.125), 38, 10),
            Some(-2631663743405851200000000)
        );
        assert_eq!(decimal_to_f64(15, 1), 1.5);
        // Just above the midpoint of 1 and 1 + 2^-23: rounds up once, not to even twice.
        assert_eq!(decimal_to_f32(10000000596046447753906251, 25), 1.0000001);
        assert_eq!(
            decimal_to_f64(12345678901234567890123456789, 10),
            1234567890123456789.0123456789
        );
    }
}
