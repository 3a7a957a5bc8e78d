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

/// Spark's string to double: decimal or exponent notation, `inf`, `infinity`, `nan` (any case,
/// optional sign), surrounding whitespace allowed.
pub(crate) fn parse_double(s: &str) -> Option<f64> {
    let t = spark_trim(s);
    let body = t.strip_prefix(['+', '-']).unwrap_or(t);
    let ok = !body.is_empty()
        && (body
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
            || ["inf", "infinity", "nan"].contains(&body.to_ascii_lowercase().as_str()));
    if !ok {
        return None;
    }
    t.parse().ok()
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
