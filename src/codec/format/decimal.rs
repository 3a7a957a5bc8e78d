//! Decimals as `BigDecimal.stripTrailingZeros().toPlainString()` prints them.

use super::number::{decimal_len, u128_digits, write_u64};

/// Appends a decimal given its unscaled value and scale (0..=38) with trailing fractional zeros
/// stripped and never an exponent: (100,2)->"1", (110,2)->"1.1", (0,1)->"0", (-5,2)->"-0.05",
/// (100,0)->"100", i128::MIN/MAX handled.
pub fn write_decimal(out: &mut Vec<u8>, unscaled: i128, scale: u8) {
    if unscaled == 0 {
        out.push(b'0');
        return;
    }
    if let Ok(magnitude) = u64::try_from(unscaled.unsigned_abs())
        && scale <= 19
    {
        return write_small_decimal(out, unscaled < 0, magnitude, u32::from(scale));
    }
    let mut buf = [0u8; 40];
    let start = u128_digits(unscaled.unsigned_abs(), &mut buf);
    let mut digits = &buf[start..];
    let mut scale = usize::from(scale);
    while scale > 0 && digits[digits.len() - 1] == b'0' {
        digits = &digits[..digits.len() - 1];
        scale -= 1;
    }
    if unscaled < 0 {
        out.push(b'-');
    }
    if scale == 0 {
        out.extend_from_slice(digits);
    } else if digits.len() > scale {
        let int_len = digits.len() - scale;
        out.extend_from_slice(&digits[..int_len]);
        out.push(b'.');
        out.extend_from_slice(&digits[int_len..]);
    } else {
        out.extend_from_slice(b"0.");
        out.extend(std::iter::repeat_n(b'0', scale - digits.len()));
        out.extend_from_slice(digits);
    }
}

/// [`write_decimal`] for a nonzero magnitude that fits 64 bits and a scale of at most 19:
/// trailing zeros stripped arithmetically, both parts written by [`write_u64`].
fn write_small_decimal(out: &mut Vec<u8>, negative: bool, mut magnitude: u64, mut scale: u32) {
    while scale > 0 && magnitude.is_multiple_of(10) {
        magnitude /= 10;
        scale -= 1;
    }
    if negative {
        out.push(b'-');
    }
    if scale == 0 {
        return write_u64(out, magnitude);
    }
    let unit = 10u64.pow(scale);
    write_u64(out, magnitude / unit);
    out.push(b'.');
    let fraction = magnitude % unit;
    let digits = decimal_len(fraction);
    out.extend(std::iter::repeat_n(b'0', scale as usize - digits));
    write_u64(out, fraction);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::format::written;

    fn decimal(unscaled: i128, scale: u8) -> String {
        written(|out| write_decimal(out, unscaled, scale))
    }

    #[test]
    fn decimals() {
        assert_eq!(decimal(100, 2), "1");
        assert_eq!(decimal(110, 2), "1.1");
        assert_eq!(decimal(123, 2), "1.23");
        assert_eq!(decimal(0, 1), "0");
        assert_eq!(decimal(0, 5), "0");
        assert_eq!(decimal(0, 0), "0");
        assert_eq!(decimal(-5, 2), "-0.05");
        assert_eq!(decimal(-100, 2), "-1");
        assert_eq!(decimal(100, 0), "100");
        assert_eq!(decimal(1200, 0), "1200");
        assert_eq!(decimal(-123456789, 4), "-12345.6789");
        assert_eq!(decimal(250, 2), "2.5");
        // The 64-bit path's edges: leading zeros of the fraction, scale 19, u64::MAX.
        assert_eq!(decimal(1005, 3), "1.005");
        assert_eq!(decimal(1050, 3), "1.05");
        assert_eq!(decimal(7, 1), "0.7");
        assert_eq!(decimal(999, 3), "0.999");
        assert_eq!(decimal(-1000001, 6), "-1.000001");
        assert_eq!(decimal(-1, 19), "-0.0000000000000000001");
        assert_eq!(decimal(10_000_000_000_000_000_000, 19), "1");
        assert_eq!(decimal(u64::MAX as i128, 19), "1.8446744073709551615");
        assert_eq!(decimal(-(u64::MAX as i128), 0), "-18446744073709551615");
        assert_eq!(decimal(u64::MAX as i128 + 1, 19), "1.8446744073709551616");
        assert_eq!(decimal(5, 20), "0.00000000000000000005");
        assert_eq!(decimal(1, 38), "0.00000000000000000000000000000000000001");
        assert_eq!(
            decimal(12345678901234567890123456789, 9),
            "12345678901234567890.123456789"
        );
        assert_eq!(
            decimal(99999999999999999999999999999999999999, 19),
            "9999999999999999999.9999999999999999999"
        );
        assert_eq!(
            decimal(i128::MAX, 0),
            "170141183460469231731687303715884105727"
        );
        assert_eq!(
            decimal(i128::MAX, 20),
            "1701411834604692317.31687303715884105727"
        );
        assert_eq!(
            decimal(i128::MIN, 38),
            "-1.70141183460469231731687303715884105728"
        );
        assert_eq!(
            decimal(i128::MIN, 0),
            "-170141183460469231731687303715884105728"
        );
        assert_eq!(decimal(10i128.pow(38), 38), "1");
        assert_eq!(decimal(u64::MAX as i128 + 1, 0), "18446744073709551616");
        assert_eq!(
            decimal(10_000_000_000_000_000_000, 0),
            "10000000000000000000"
        );
        assert_eq!(decimal(10_000_000_000_000_000_000, 19), "1");
    }
}
