//! Scalar formatting rules of Spark's `to_json` for Variant values.
//!
//! Every writer appends UTF-8 bytes to a `Vec<u8>` and uses only stack buffers, so the JSON
//! writer can call them per value without heap allocations (apart from growing `out`).
//!
//! The rules follow what Spark 4.3 prints through Java:
//! - doubles and floats as `Double.toString` / `Float.toString` with the shortest round-trip
//!   digits as the JDK 19+ specification defines them (checked against JDK 25 on 400,000
//!   random values; JDK 17 sometimes prints more digits, or for the tiniest subnormals others);
//! - decimals as `BigDecimal.stripTrailingZeros().toPlainString()`;
//! - dates and timestamps as `java.time`'s `ISO_LOCAL_DATE`, `' '`, `ISO_LOCAL_TIME` and
//!   `appendOffset("+HH:MM", "+00:00")`;
//! - strings with Jackson's escaping.

use std::fmt::{self, Write as _};

use super::bytes::{covering_word, push_framed, push_short};
use chrono::{DateTime, NaiveDateTime, Offset, TimeZone};
use chrono_tz::Tz;

/// A fixed-size stack buffer that implements [`fmt::Write`]; writing past its end is an error.
struct StackBuf<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> StackBuf<N> {
    fn new() -> Self {
        Self {
            buf: [0; N],
            len: 0,
        }
    }

    fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl<const N: usize> fmt::Write for StackBuf<N> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let bytes = s.as_bytes();
        let end = self.len + bytes.len();
        if end > N {
            return Err(fmt::Error);
        }
        self.buf[self.len..end].copy_from_slice(bytes);
        self.len = end;
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Floating point
// ---------------------------------------------------------------------------------------------

/// The significant decimal digits (ASCII, no leading or trailing zeros) and the decimal exponent
/// of a positive finite number: value = d0.d1d2... * 10^exp.
struct SciDigits {
    digits: [u8; 24],
    len: usize,
    exp: i32,
}

/// Parses the text of a positive finite number as printed by `zmij` ("1.234e+33", "5e-324",
/// "12340000000.0", "0.001234") or Rust's `{:e}` ("1.2345e-7", "1.0e7") into its significant
/// digits and decimal exponent.
fn parse_sci(text: &[u8]) -> SciDigits {
    let mut out = SciDigits {
        digits: [0; 24],
        len: 0,
        exp: 0,
    };
    // `seen` counts the mantissa's digits, `point` how many come before its '.' (when it has
    // one). First the zeros (and point) before the first significant digit ("0.00123")...
    let (mut seen, mut point) = (0i32, None);
    let mut i = 0;
    while let Some(&b) = text.get(i) {
        match b {
            b'0' => seen += 1,
            b'.' => point = Some(seen),
            _ => break,
        }
        i += 1;
    }
    let first = seen;
    // ...then the digits from it on, up to the exponent.
    while let Some(&b) = text.get(i) {
        if b.is_ascii_digit() {
            if out.len < out.digits.len() {
                out.digits[out.len] = b;
                out.len += 1;
            }
            seen += 1;
        } else if b == b'.' {
            point = Some(seen);
        } else {
            break;
        }
        i += 1;
    }
    if out.len == 0 {
        out.digits[0] = b'0';
        out.len = 1;
        return out;
    }
    let exp = text.get(i + 1..).map_or(0, parse_exponent);
    // The mantissa digit at index `first` has the place value 10^(point - 1 - first).
    out.exp = point.unwrap_or(seen) - 1 - first + exp;
    // Strip trailing zeros ("12340000000.0", "1.0e-323" from the two-digit path), keeping one.
    while out.len > 1 && out.digits[out.len - 1] == b'0' {
        out.len -= 1;
    }
    out
}

/// The exponent after the 'e' of a printed number: an optional sign and decimal digits.
fn parse_exponent(text: &[u8]) -> i32 {
    let (negative, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, text),
    };
    let magnitude = digits.iter().fold(0i32, |acc, &b| {
        acc.saturating_mul(10)
            .saturating_add(i32::from(b.wrapping_sub(b'0') % 10))
    });
    if negative { -magnitude } else { magnitude }
}

/// Shortest round-trip digits of a positive finite number `abs = m * 2^q`, chosen the way
/// Java (JDK 19+ specification) chooses them:
/// - a one-digit result is replaced by the closest two-digit decimal (`4.9E-324`, not
///   `5.0E-324`), since the format prints at least two digits anyway;
/// - when two shortest candidates are equally close to the exact value, the one with the even
///   last digit wins (`441700.62f`, where Rust's formatter picks `441700.63`).
fn java_digits<T: fmt::LowerExp + Copy + std::str::FromStr + PartialEq + zmij::Float>(
    abs: T,
    m: u64,
    q: i32,
) -> SciDigits {
    // zmij prints the shortest correctly rounded digits, several times faster than `{:e}`.
    let sci = parse_sci(zmij::Buffer::new().format_finite(abs).as_bytes());
    if sci.len == 1 {
        // For all but the tiniest subnormals the closest two-digit decimal is `d.0`.
        let mut buf = StackBuf::<48>::new();
        let _ = write!(buf, "{abs:.1e}");
        return parse_sci(buf.as_bytes());
    }
    match even_tie_candidate(&sci, m, q) {
        Some(candidate) if round_trips(&candidate, abs) => candidate,
        _ => sci,
    }
}

/// If the exact value `m * 2^q` lies exactly halfway between two decimals with as many digits
/// as `sci`, returns the one whose last digit is even.
fn even_tie_candidate(sci: &SciDigits, m: u64, q: i32) -> Option<SciDigits> {
    if m == 0 {
        return None;
    }
    // Digits after the decimal point of the n-digit grid: candidates are C * 10^-s.
    let s = sci.len as i32 - 1 - sci.exp;
    let t = m.trailing_zeros() as i32;
    let odd = m >> t;
    // A tie means 2 * m * 2^q * 10^s = odd * 5^s * 2^(t + q + 1 + s) is an odd integer X = 2C + 1.
    if t + q + 1 + s != 0 {
        return None;
    }
    let x = if s >= 0 {
        odd.checked_mul(5u64.checked_pow(s as u32)?)?
    } else {
        let p = 5u64.checked_pow((-s) as u32)?;
        if !odd.is_multiple_of(p) {
            return None;
        }
        odd / p
    };
    let low = (x - 1) / 2;
    let chosen = if low % 2 == 0 { low } else { low + 1 };
    let mut digits = [0u8; 20];
    let start = u64_digits(chosen, &mut digits);
    let count = digits.len() - start;
    let mut out = SciDigits {
        digits: [0; 24],
        len: count,
        exp: count as i32 - 1 - s,
    };
    out.digits[..count].copy_from_slice(&digits[start..]);
    while out.len > 1 && out.digits[out.len - 1] == b'0' {
        out.len -= 1;
    }
    Some(out)
}

/// Whether the decimal `sci` parses back to `value`.
fn round_trips<T: std::str::FromStr + PartialEq>(sci: &SciDigits, value: T) -> bool {
    let mut buf = StackBuf::<48>::new();
    let digits = &sci.digits[..sci.len];
    // Digits are ASCII by construction.
    let text = std::str::from_utf8(digits).unwrap_or("0");
    // `text` is an integer: shift the exponent by the digits after the first one.
    if write!(buf, "{text}e{}", sci.exp - (sci.len as i32 - 1)).is_err() {
        return false;
    }
    std::str::from_utf8(buf.as_bytes())
        .ok()
        .and_then(|s| s.parse::<T>().ok())
        .is_some_and(|parsed| parsed == value)
}

/// Lays out digits the way `Double.toString` does (plain for 1e-3 <= |v| < 1e7).
fn write_java_layout(out: &mut Vec<u8>, negative: bool, sci: &SciDigits) {
    // At most a sign, "0.00", the digits, ".0" and "E-324": one reservation, then short copies.
    out.reserve(sci.len + 12);
    if negative {
        out.push(b'-');
    }
    let digits = &sci.digits[..sci.len];
    let e = sci.exp;
    if (0..7).contains(&e) {
        let int_len = e as usize + 1;
        if digits.len() <= int_len {
            push_short(out, digits);
            push_short(out, &b"000000"[..int_len - digits.len()]);
            push_short(out, b".0");
        } else {
            push_short(out, &digits[..int_len]);
            out.push(b'.');
            push_short(out, &digits[int_len..]);
        }
    } else if (-3..0).contains(&e) {
        push_short(out, &b"0.00"[..(1 - e) as usize]);
        push_short(out, digits);
    } else {
        push_short(out, &digits[..1]);
        out.push(b'.');
        if digits.len() > 1 {
            push_short(out, &digits[1..]);
        } else {
            out.push(b'0');
        }
        out.push(b'E');
        write_i64(out, i64::from(e));
    }
}

/// Appends `v` as Java's `Double.toString` prints it, using the shortest round-trip digits:
/// "1.0", "1500.0", "1.0E7", "1.23456789E7", "1.0E-5", "0.0025", "-0.0", "4.9E-324",
/// "1.7976931348623157E308". Plain form for 1e-3 <= |v| < 1e7, otherwise d.dddE[-]n.
/// Non-finite values print as NaN, Infinity, -Infinity (no quotes; the caller quotes them).
pub fn write_java_double(out: &mut Vec<u8>, v: f64) {
    if v.is_nan() {
        out.extend_from_slice(b"NaN");
    } else if v.is_infinite() {
        out.extend_from_slice(if v > 0.0 { b"Infinity" } else { b"-Infinity" });
    } else if v == 0.0 {
        out.extend_from_slice(if v.is_sign_negative() {
            b"-0.0"
        } else {
            b"0.0"
        });
    } else {
        let bits = v.to_bits();
        let exp_bits = ((bits >> 52) & 0x7ff) as i32;
        let frac = bits & ((1 << 52) - 1);
        let (m, q) = if exp_bits == 0 {
            (frac, -1074)
        } else {
            (frac | (1 << 52), exp_bits - 1075)
        };
        let sci = java_digits(v.abs(), m, q);
        write_java_layout(out, v.is_sign_negative(), &sci);
    }
}

/// The same for `float` (Java `Float.toString`, shortest f32 digits): 1.5, 1.1, -0.0,
/// 1.4E-45. JDK 17 prints some floats with extra digits (1.23456794E9, where this and JDK 19+
/// print 1.234568E9).
pub fn write_java_float(out: &mut Vec<u8>, v: f32) {
    if v.is_nan() {
        out.extend_from_slice(b"NaN");
    } else if v.is_infinite() {
        out.extend_from_slice(if v > 0.0 { b"Infinity" } else { b"-Infinity" });
    } else if v == 0.0 {
        out.extend_from_slice(if v.is_sign_negative() {
            b"-0.0"
        } else {
            b"0.0"
        });
    } else {
        let bits = v.to_bits();
        let exp_bits = ((bits >> 23) & 0xff) as i32;
        let frac = u64::from(bits & ((1 << 23) - 1));
        let (m, q) = if exp_bits == 0 {
            (frac, -149)
        } else {
            (frac | (1 << 23), exp_bits - 150)
        };
        let sci = java_digits(v.abs(), m, q);
        write_java_layout(out, v.is_sign_negative(), &sci);
    }
}

// ---------------------------------------------------------------------------------------------
// Integers and decimals
// ---------------------------------------------------------------------------------------------

/// Writes the decimal digits of `v` right-aligned into `buf` and returns the start index.
fn u64_digits(mut v: u64, buf: &mut [u8; 20]) -> usize {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            return i;
        }
    }
}

/// "00", "01", ..., "99": two digits per table lookup.
const DIGIT_PAIRS: &[u8; 200] = b"\
    0001020304050607080910111213141516171819\
    2021222324252627282930313233343536373839\
    4041424344454647484950515253545556575859\
    6061626364656667686970717273747576777879\
    8081828384858687888990919293949596979899";

/// Appends the decimal digits of `v`, written straight into `out`'s spare capacity (a digit
/// buffer copied afterwards would be read back before its stores complete). Eight-digit groups
/// split into four independent pairs, so long numbers (epoch millis, ids) take few serial steps.
/// One digit (exponents, fraction digits, small counts) is a single push.
#[inline]
pub(crate) fn write_u64(out: &mut Vec<u8>, v: u64) {
    if v < 10 {
        out.push(b'0' + v as u8);
    } else {
        write_u64_digits(out, v);
    }
}

/// The powers of ten a 38-digit decimal needs: `POW10[n]` is 10^n.
pub(crate) const POW10: [i128; 39] = {
    let mut t = [1i128; 39];
    let mut i = 1;
    while i < 39 {
        t[i] = t[i - 1] * 10;
        i += 1;
    }
    t
};

/// The number of decimal digits of `v` (1 for 0), from its bit length: log10(2) ~ 1233/4096
/// gives the count or one less, and one comparison decides (cheaper than `ilog10`).
#[inline]
fn decimal_len(v: u64) -> usize {
    let bits = 64 - (v | 1).leading_zeros();
    let guess = (bits * 1233) >> 12;
    // `guess` is at most 19, and 10^19 fits 64 bits.
    guess as usize + usize::from((v | 1) >= POW10[guess as usize] as u64)
}

/// [`write_u64`] for `v` >= 10.
///
/// Measured and dropped: converting eight digits at once in one word (SWAR, no loop) ran as
/// many instructions as these digit pairs and was no faster.
fn write_u64_digits(out: &mut Vec<u8>, v: u64) {
    let len = decimal_len(v);
    out.reserve(len);
    // SAFETY: `reserve` leaves `len` writable bytes at `start`. Every store is a digit pair at
    // `end - 2` or `end - 8 .. end` with `end` moving down from `start + len`; the number of
    // digits left always equals `end - start` (`len` counts all of them), so the stores stay in
    // `start..start + len`, and the last step writes the one or two digits at `start`. All
    // `len` bytes are written before `set_len`.
    unsafe {
        let start = out.as_mut_ptr().add(out.len());
        let mut end = start.add(len);
        let mut head = v;
        while head >= 100_000_000 {
            let group = (head % 100_000_000) as u32;
            head /= 100_000_000;
            let (high, low) = (group / 10_000, group % 10_000);
            end = end.sub(8);
            write_digit_pair(end, high / 100);
            write_digit_pair(end.add(2), high % 100);
            write_digit_pair(end.add(4), low / 100);
            write_digit_pair(end.add(6), low % 100);
        }
        // `head` < 10^8 has exactly `end - start` digits.
        let mut head = head as u32;
        while head >= 100 {
            end = end.sub(2);
            write_digit_pair(end, head % 100);
            head /= 100;
        }
        if head >= 10 {
            write_digit_pair(start, head);
        } else {
            *start = b'0' + head as u8;
        }
        out.set_len(out.len() + len);
    }
}

/// Writes the two digits of `pair` (< 100) at `at`.
///
/// # Safety
/// `at..at + 2` must be writable.
#[inline(always)]
unsafe fn write_digit_pair(at: *mut u8, pair: u32) {
    let digits = &DIGIT_PAIRS[pair as usize * 2..pair as usize * 2 + 2];
    // SAFETY: the caller guarantees the destination; the source is two bytes of the table.
    unsafe { std::ptr::copy_nonoverlapping(digits.as_ptr(), at, 2) };
}

/// Appends `v` in decimal, with a leading '-' when negative.
#[inline]
pub(crate) fn write_i64(out: &mut Vec<u8>, v: i64) {
    if v < 0 {
        out.push(b'-');
    }
    write_u64(out, v.unsigned_abs());
}

/// Writes `v` as exactly `width` digits (zero padded; `v` must fit).
fn write_padded(out: &mut Vec<u8>, v: u64, width: usize) {
    let mut buf = [0u8; 20];
    let start = u64_digits(v, &mut buf);
    let len = buf.len() - start;
    if len < width {
        out.extend(std::iter::repeat_n(b'0', width - len));
    }
    out.extend_from_slice(&buf[start..]);
}

/// Writes the decimal digits of `v` right-aligned into `buf` and returns the start index.
fn u128_digits(mut v: u128, buf: &mut [u8; 40]) -> usize {
    const CHUNK: u128 = 10_000_000_000_000_000_000; // 10^19
    let mut i = buf.len();
    // Peel off 19-digit chunks with u128 division, then finish with cheap u64 arithmetic.
    while v > u128::from(u64::MAX) {
        let mut rest = (v % CHUNK) as u64;
        v /= CHUNK;
        for _ in 0..19 {
            i -= 1;
            buf[i] = b'0' + (rest % 10) as u8;
            rest /= 10;
        }
    }
    let mut small = v as u64;
    loop {
        i -= 1;
        buf[i] = b'0' + (small % 10) as u8;
        small /= 10;
        if small == 0 {
            return i;
        }
    }
}

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

// ---------------------------------------------------------------------------------------------
// Dates and times
// ---------------------------------------------------------------------------------------------

const SECONDS_PER_DAY: i64 = 86_400;
const NANOS_PER_SECOND: i64 = 1_000_000_000;

/// Howard Hinnant's `civil_from_days`: (year, month, day) of a day count since 1970-01-01 in
/// the proleptic Gregorian calendar. Exact for |days| up to about 2^61.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097; // [0, 146096]
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
    let mp = (5 * doy + 2) / 153; // [0, 11]
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Howard Hinnant's `days_from_civil`, the inverse of [`civil_from_days`].
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = year - i64::from(month <= 2);
    let era = y.div_euclid(400);
    let yoe = y - era * 400; // [0, 399]
    let m = i64::from(month);
    let mp = if m > 2 { m - 3 } else { m + 9 }; // [0, 11]
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1; // [0, 365]
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy; // [0, 146096]
    era * 146_097 + doe - 719_468
}

fn is_leap_year(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

/// Java's `ISO_LOCAL_DATE` year: at least 4 digits, '+' above 9999, '-' below 0.
fn write_year(out: &mut Vec<u8>, year: i64) {
    if year > 9999 {
        out.push(b'+');
        write_u64(out, year as u64);
    } else if year >= 0 {
        write_padded(out, year as u64, 4);
    } else {
        out.push(b'-');
        write_padded(out, year.unsigned_abs(), 4);
    }
}

fn write_date_i64(out: &mut Vec<u8>, days: i64) {
    let (year, month, day) = civil_from_days(days);
    write_year(out, year);
    out.push(b'-');
    write_padded(out, u64::from(month), 2);
    out.push(b'-');
    write_padded(out, u64::from(day), 2);
}

/// Appends a date given as days since 1970-01-01 (proleptic Gregorian, full i32 range) as
/// yyyy-MM-dd; years > 9999 get a '+' sign ("+5881580-07-11"), years < 0 print with '-' and
/// 4+ digits ("-5877641-06-23", "-0002-12-31"), year 0 as "0000".
pub fn write_date(out: &mut Vec<u8>, days: i32) {
    write_date_i64(out, i64::from(days));
}

/// Writes `HH:mm:ss` and the fraction of a second trimmed of trailing zeros (`ISO_LOCAL_TIME`).
fn write_time_of_day(out: &mut Vec<u8>, second_of_day: u32, nanos: u32) {
    write_padded(out, u64::from(second_of_day / 3600), 2);
    out.push(b':');
    write_padded(out, u64::from(second_of_day / 60 % 60), 2);
    out.push(b':');
    write_padded(out, u64::from(second_of_day % 60), 2);
    if nanos != 0 {
        let mut digits = [0u8; 9];
        let mut n = nanos;
        for d in digits.iter_mut().rev() {
            *d = b'0' + (n % 10) as u8;
            n /= 10;
        }
        let mut len = digits.len();
        while digits[len - 1] == b'0' {
            len -= 1;
        }
        out.push(b'.');
        out.extend_from_slice(&digits[..len]);
    }
}

/// Appends a time of day given in microseconds since midnight as HH:mm:ss with the fraction
/// trimmed of trailing zeros ("12:34:56.123456", "12:34:56.78", "00:00:00"). Values outside
/// one day (invalid data) are wrapped into it rather than rejected.
pub fn write_time_micros(out: &mut Vec<u8>, micros: i64) {
    let micros = micros.rem_euclid(SECONDS_PER_DAY * 1_000_000);
    let second_of_day = (micros / 1_000_000) as u32;
    let nanos = (micros % 1_000_000) as u32 * 1_000;
    write_time_of_day(out, second_of_day, nanos);
}

/// Java's `appendOffset("+HH:MM", "+00:00")`: seconds are truncated, and an offset whose hours
/// and minutes are both zero prints as "+00:00".
fn write_offset(out: &mut Vec<u8>, total_seconds: i32) {
    let hours = (total_seconds / 3600 % 100).unsigned_abs();
    let minutes = (total_seconds / 60 % 60).unsigned_abs();
    if hours == 0 && minutes == 0 {
        out.extend_from_slice(b"+00:00");
        return;
    }
    out.push(if total_seconds < 0 { b'-' } else { b'+' });
    write_padded(out, u64::from(hours), 2);
    out.push(b':');
    write_padded(out, u64::from(minutes), 2);
}

/// Appends a timestamp. `units_per_second` is 1_000_000 (micros) or 1_000_000_000 (nanos).
/// With `tz: None` it is a timestamp without time zone: "2025-04-16 12:34:56.78",
/// "+294247-01-10 04:00:54.775807". With `Some(tz)` the instant is shifted into that zone and
/// the offset is appended as +HH:MM (never "Z"; seconds of historical LMT offsets are truncated
/// like Java's: "-0002-12-31 16:07:02-07:52" for America/Los_Angeles):
/// "2025-04-16 12:34:56.78+00:00", "1969-12-31 16:00:00-08:00" for 0 in America/Los_Angeles.
/// Fraction trimmed of trailing zeros, up to 6 or 9 digits. Works for the whole i64 range;
/// after 2099 a named zone's final recurring rules apply (as in Java), and before chrono's
/// range its first offset (local mean time).
pub fn write_timestamp(
    out: &mut Vec<u8>,
    value: i64,
    units_per_second: i64,
    tz: Option<&SessionTimeZone>,
) {
    let ups = units_per_second.max(1);
    let seconds = value.div_euclid(ups);
    let frac = value.rem_euclid(ups);
    let nanos = if ups <= NANOS_PER_SECOND && NANOS_PER_SECOND % ups == 0 {
        frac * (NANOS_PER_SECOND / ups)
    } else {
        (i128::from(frac) * i128::from(NANOS_PER_SECOND) / i128::from(ups)) as i64
    };
    let offset = tz.map_or(0, |tz| tz.offset_seconds_at(seconds));
    let local = seconds.saturating_add(i64::from(offset));
    write_date_i64(out, local.div_euclid(SECONDS_PER_DAY));
    out.push(b' ');
    write_time_of_day(out, local.rem_euclid(SECONDS_PER_DAY) as u32, nanos as u32);
    if tz.is_some() {
        write_offset(out, offset);
    }
}

// ---------------------------------------------------------------------------------------------
// Time zones
// ---------------------------------------------------------------------------------------------

/// A session time zone for rendering timestamps: UTC, a fixed offset, or an IANA zone.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionTimeZone {
    /// A fixed offset in seconds east of UTC (UTC itself is `Fixed(0)`).
    Fixed(i32),
    /// A named IANA zone with historical and daylight-saving rules.
    Named(Tz),
}

/// 2100-01-01T00:00:00Z. chrono-tz lists explicit transitions only up to the end of 2099; Java
/// keeps applying the zone's final (recurring) rules forever.
const RULES_TABLE_END_SECONDS: i64 = 4_102_444_800;

/// Weekday of a day count since 1970-01-01 (a Thursday), 0 = Sunday.
fn weekday(days: i64) -> i64 {
    (days + 4).rem_euclid(7)
}

/// Maps an instant at or after 2100 to the same UTC month, day and time in one of the common
/// years 2089..=2099, where chrono-tz still lists the transitions of the zone's final recurring
/// rules (and no longer the irregular predicted ones, such as Casablanca's and Gaza's around
/// Ramadan, which end in 2087). The target year is chosen so that the weekdays agree: for
/// January and February with the weekday of January 1, from March on with the weekday of
/// March 1. Rules such as "second Sunday of March" then fall on the same dates in both years,
/// so the offset is the one Java computes from its final rules. (The common years 2089..=2099
/// start on all seven weekdays.)
fn map_to_rules_window(utc_seconds: i64) -> i64 {
    let days = utc_seconds.div_euclid(SECONDS_PER_DAY);
    let second_of_day = utc_seconds.rem_euclid(SECONDS_PER_DAY);
    let (year, month, day) = civil_from_days(days);
    let (anchor_month, month, day) = if month <= 2 {
        // February 29 becomes March 1 of the common year: the same weekday.
        if month == 2 && day == 29 {
            (1, 3, 1)
        } else {
            (1, month, day)
        }
    } else {
        (3, month, day)
    };
    let wanted = weekday(days_from_civil(year, anchor_month, 1));
    let target = (2089..=2099)
        .filter(|&y| !is_leap_year(y))
        .find(|&y| weekday(days_from_civil(y, anchor_month, 1)) == wanted)
        .unwrap_or(2099);
    days_from_civil(target, month, day) * SECONDS_PER_DAY + second_of_day
}

fn named_offset_at(tz: &Tz, utc_seconds: i64) -> i32 {
    let seconds = if utc_seconds >= RULES_TABLE_END_SECONDS {
        map_to_rules_window(utc_seconds)
    } else {
        utc_seconds
    };
    // Before chrono's range the zone's first offset (local mean time) applies, as in Java.
    let naive =
        DateTime::from_timestamp(seconds, 0).map_or(NaiveDateTime::MIN, |dt| dt.naive_utc());
    tz.offset_from_utc_datetime(&naive).fix().local_minus_utc()
}

/// Parses "+HH", "+HHMM", "+HH:MM", "+HH:MM:SS" (or '-') into seconds east of UTC.
fn parse_fixed_offset(s: &str) -> Option<i32> {
    let bytes = s.as_bytes();
    let sign = match bytes.first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let rest = &bytes[1..];
    let two = |b: &[u8]| -> Option<i32> {
        if b.len() == 2 && b.iter().all(u8::is_ascii_digit) {
            Some(i32::from(b[0] - b'0') * 10 + i32::from(b[1] - b'0'))
        } else {
            None
        }
    };
    let (h, m, s) = match rest.len() {
        2 => (two(rest)?, 0, 0),
        4 => (two(&rest[..2])?, two(&rest[2..])?, 0),
        5 if rest[2] == b':' => (two(&rest[..2])?, two(&rest[3..])?, 0),
        8 if rest[2] == b':' && rest[5] == b':' => {
            (two(&rest[..2])?, two(&rest[3..5])?, two(&rest[6..])?)
        }
        _ => return None,
    };
    if h > 23 || m > 59 || s > 59 {
        return None;
    }
    Some(sign * (h * 3600 + m * 60 + s))
}

impl SessionTimeZone {
    /// UTC.
    pub fn utc() -> Self {
        SessionTimeZone::Fixed(0)
    }

    /// Parses DataFusion's `datafusion.execution.time_zone` value: None -> UTC;
    /// "+05:30"/"-08:00"/"+0530"/"UTC"/"Z" -> fixed; "America/Los_Angeles" -> named. Unknown
    /// names are an Err(String) with a clear message.
    pub fn parse(name: Option<&str>) -> Result<Self, String> {
        let Some(raw) = name else {
            return Ok(Self::utc());
        };
        let s = raw.trim();
        if s.eq_ignore_ascii_case("UTC") || s.eq_ignore_ascii_case("Z") {
            return Ok(Self::utc());
        }
        if s.starts_with('+') || s.starts_with('-') {
            return parse_fixed_offset(s)
                .map(SessionTimeZone::Fixed)
                .ok_or_else(|| {
                    format!(
                        "invalid time zone offset '{raw}': expected +HH:MM, +HHMM or +HH \
                     (hours 00-23, minutes 00-59)"
                    )
                });
        }
        s.parse::<Tz>().map(SessionTimeZone::Named).map_err(|_| {
            format!(
                "unknown time zone '{raw}': expected UTC, an offset such as +05:30, or an IANA \
                 time zone name such as America/Los_Angeles"
            )
        })
    }

    /// Offset from UTC in seconds at the given UTC instant (seconds since epoch).
    pub fn offset_seconds_at(&self, utc_seconds: i64) -> i32 {
        match self {
            SessionTimeZone::Fixed(seconds) => *seconds,
            SessionTimeZone::Named(tz) => named_offset_at(tz, utc_seconds),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// UUID, binary, strings
// ---------------------------------------------------------------------------------------------

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

/// Appends standard base64 with padding (no line breaks): [1]->"AQ==", [1,2]->"AQI=",
/// [1,2,255]->"AQL/".
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
    //! Expected values were printed by OpenJDK 17 and, for floating point, also OpenJDK 25
    //! (`Double.toString`, `Float.toString`,
    //! `LocalDate.toString`, Spark's `ISO_LOCAL_DATE ' ' ISO_LOCAL_TIME appendOffset("+HH:MM",
    //! "+00:00")` formatter, `BigDecimal.stripTrailingZeros().toPlainString()`, `Base64`,
    //! `UUID.toString`). Where a comment says JDK 17 deviates from the shortest digits, the
    //! expected value is what JDK 25 prints.

    use super::*;

    fn double(v: f64) -> String {
        let mut out = Vec::new();
        write_java_double(&mut out, v);
        String::from_utf8(out).unwrap()
    }

    fn float(v: f32) -> String {
        let mut out = Vec::new();
        write_java_float(&mut out, v);
        String::from_utf8(out).unwrap()
    }

    fn decimal(unscaled: i128, scale: u8) -> String {
        let mut out = Vec::new();
        write_decimal(&mut out, unscaled, scale);
        String::from_utf8(out).unwrap()
    }

    fn date(days: i32) -> String {
        let mut out = Vec::new();
        write_date(&mut out, days);
        String::from_utf8(out).unwrap()
    }

    fn time(micros: i64) -> String {
        let mut out = Vec::new();
        write_time_micros(&mut out, micros);
        String::from_utf8(out).unwrap()
    }

    fn ts(value: i64, units: i64, tz: Option<&str>) -> String {
        let zone = tz.map(|name| SessionTimeZone::parse(Some(name)).unwrap());
        let mut out = Vec::new();
        write_timestamp(&mut out, value, units, zone.as_ref());
        String::from_utf8(out).unwrap()
    }

    fn json(s: &str) -> String {
        let mut out = Vec::new();
        write_json_string(&mut out, s);
        String::from_utf8(out).unwrap()
    }

    fn base64(bytes: &[u8]) -> String {
        let mut out = Vec::new();
        write_base64(&mut out, bytes);
        String::from_utf8(out).unwrap()
    }

    const MICROS: i64 = 1_000_000;
    const NANOS: i64 = 1_000_000_000;
    const LA: Option<&str> = Some("America/Los_Angeles");

    #[test]
    fn double_examples() {
        assert_eq!(double(1.0), "1.0");
        assert_eq!(double(1500.0), "1500.0");
        assert_eq!(double(1e7), "1.0E7");
        assert_eq!(double(1.23456789e7), "1.23456789E7");
        assert_eq!(double(1e-5), "1.0E-5");
        assert_eq!(double(0.0025), "0.0025");
        assert_eq!(double(100.0), "100.0");
        assert_eq!(double(1_000_000.0), "1000000.0");
        assert_eq!(double(0.5), "0.5");
        assert_eq!(double(12345.678), "12345.678");
        assert_eq!(double(-123.456), "-123.456");
        assert_eq!(double(1234567.0), "1234567.0");
        assert_eq!(double(0.00123), "0.00123");
        assert_eq!(double(2.5e-5), "2.5E-5");
        assert_eq!(double(1e-7), "1.0E-7");
        assert_eq!(double(1e10), "1.0E10");
        assert_eq!(double(1e16), "1.0E16");
        assert_eq!(double(1e20), "1.0E20");
        assert_eq!(double(1e21), "1.0E21");
        assert_eq!(double(1e22), "1.0E22");
        assert_eq!(double(1e308), "1.0E308");
        assert_eq!(double(1e39), "1.0E39");
        assert_eq!(
            double(123456789012345678901234567890123456789.0),
            "1.2345678901234568E38"
        );
        assert_eq!(double(-1e7), "-1.0E7");
        assert_eq!(double(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(double(1.0 / 3.0), "0.3333333333333333");
        assert_eq!(double(1.2345678901234567), "1.2345678901234567");
        assert_eq!(double(9007199254740993.0), "9.007199254740992E15");
    }

    #[test]
    fn double_layout_boundaries() {
        assert_eq!(double(1e-3), "0.001");
        assert_eq!(double(0.001), "0.001");
        assert_eq!(
            double(f64::from_bits(0x3f50624dd2f1a9fb)),
            "9.999999999999998E-4"
        );
        assert_eq!(
            double(f64::from_bits(0x3f50624dd2f1a9fd)),
            "0.0010000000000000002"
        );
        assert_eq!(double(0.0009999), "9.999E-4");
        assert_eq!(double(0.00099999), "9.9999E-4");
        assert_eq!(double(9999999.0), "9999999.0");
        assert_eq!(double(9999999.999), "9999999.999");
        assert_eq!(
            double(f64::from_bits(0x416312cfffffffff)),
            "9999999.999999998"
        );
        assert_eq!(
            double(f64::from_bits(0x416312d000000001)),
            "1.0000000000000002E7"
        );
        assert_eq!(double(1e7), "1.0E7");
    }

    #[test]
    fn double_special_values() {
        assert_eq!(double(0.0), "0.0");
        assert_eq!(double(-0.0), "-0.0");
        assert_eq!(double(f64::NAN), "NaN");
        assert_eq!(double(f64::INFINITY), "Infinity");
        assert_eq!(double(f64::NEG_INFINITY), "-Infinity");
        assert_eq!(double(f64::MAX), "1.7976931348623157E308");
        assert_eq!(double(f64::MIN), "-1.7976931348623157E308");
        assert_eq!(double(f64::MIN_POSITIVE), "2.2250738585072014E-308");
        // Largest subnormal.
        assert_eq!(
            double(f64::from_bits(0x000f_ffff_ffff_ffff)),
            "2.225073858507201E-308"
        );
        // Smallest subnormals: Java prints two digits, the pair closest to the exact value.
        assert_eq!(double(f64::from_bits(1)), "4.9E-324");
        assert_eq!(double(5e-324), "4.9E-324");
        assert_eq!(double(-f64::from_bits(1)), "-4.9E-324");
        assert_eq!(double(f64::from_bits(3)), "1.5E-323");
        assert_eq!(double(f64::from_bits(9)), "4.4E-323");
    }

    #[test]
    fn double_ties_pick_even_digit() {
        // Exactly halfway between ...862E14 and ...863E14: Java picks the even digit.
        assert_eq!(
            double(f64::from_bits(0xc2e6aa5728179794)),
            "-1.9936689997330862E14"
        );
    }

    /// zmij's shortest digits against the standard library's `{:e}` (an independent shortest
    /// round-trip formatter) on random bit patterns: same digits, except where the value is an
    /// exact tie between two shortest candidates (the even-digit rule decides those).
    #[test]
    fn shortest_digits_match_std() {
        fn same<T: fmt::LowerExp + Copy + zmij::Float>(v: T, m: u64, q: i32) -> bool {
            let ours = parse_sci(zmij::Buffer::new().format_finite(v).as_bytes());
            let std = parse_sci(format!("{v:e}").as_bytes());
            let digits = |s: &SciDigits| (s.digits[..s.len].to_vec(), s.exp);
            digits(&ours) == digits(&std)
                || (ours.len == std.len && even_tie_candidate(&std, m, q).is_some())
        }
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let d = f64::from_bits(x & !(1 << 63));
            if d.is_finite() && d != 0.0 {
                let exp_bits = ((x >> 52) & 0x7ff) as i32;
                let frac = x & ((1 << 52) - 1);
                let (m, q) = if exp_bits == 0 {
                    (frac, -1074)
                } else {
                    (frac | (1 << 52), exp_bits - 1075)
                };
                assert!(same(d, m, q), "{d:e}");
            }
            let bits = (x >> 32) as u32 & !(1 << 31);
            let f = f32::from_bits(bits);
            if f.is_finite() && f != 0.0 {
                let exp_bits = ((bits >> 23) & 0xff) as i32;
                let frac = u64::from(bits & ((1 << 23) - 1));
                let (m, q) = if exp_bits == 0 {
                    (frac, -149)
                } else {
                    (frac | (1 << 23), exp_bits - 150)
                };
                assert!(same(f, m, q), "{f:e}");
            }
        }
        // Every layout zmij uses parses to the same digits and exponent.
        for (text, digits, exp) in [
            ("1.234e+33", "1234", 33),
            ("5e-324", "5", -324),
            ("12340000000.0", "1234", 10),
            ("0.001234", "1234", -3),
            ("12.34", "1234", 1),
            ("1.2345e-7", "12345", -7),
        ] {
            let sci = parse_sci(text.as_bytes());
            assert_eq!(
                (&sci.digits[..sci.len], sci.exp),
                (digits.as_bytes(), exp),
                "{text}"
            );
        }
    }
    #[test]
    fn double_shortest_where_jdk17_is_not() {
        // JDK 17 prints non-shortest digits here (JDK-4511638, fixed in JDK 19); we print the
        // shortest, as JDK 19+ does.
        assert_eq!(double(1e23), "1.0E23"); // JDK 17: 9.999999999999999E22
        assert_eq!(double(2e23), "2.0E23"); // JDK 17: 1.9999999999999998E23
        assert_eq!(double(2.82879384806159E17), "2.82879384806159E17"); // JDK 17: ...59008E17
        // Two-digit subnormals closest to the exact value (JDK 19+ rule); JDK 17: 1.0E-323 and
        // 1.0E-322.
        assert_eq!(double(f64::from_bits(2)), "9.9E-324");
        assert_eq!(double(f64::from_bits(20)), "9.9E-323");
    }

    #[test]
    fn float_values() {
        assert_eq!(float(1.5), "1.5");
        assert_eq!(float(1.1), "1.1");
        assert_eq!(float(-0.0), "-0.0");
        assert_eq!(float(0.0), "0.0");
        assert_eq!(float(1.23), "1.23");
        assert_eq!(float(0.1), "0.1");
        assert_eq!(float(0.3), "0.3");
        assert_eq!(float(98765.43), "98765.43");
        assert_eq!(float(100.0), "100.0");
        assert_eq!(float(123456.7), "123456.7");
        assert_eq!(float(1e7), "1.0E7");
        assert_eq!(float(9999999.0), "9999999.0");
        assert_eq!(float(1e-3), "0.001");
        assert_eq!(float(f32::from_bits(0x3a83126e)), "9.999999E-4");
        assert_eq!(float(1e-4), "1.0E-4");
        assert_eq!(float(1e-10), "1.0E-10");
        assert_eq!(float(1e10), "1.0E10");
        assert_eq!(float(16777216.0), "1.6777216E7");
        assert_eq!(float(f32::MAX), "3.4028235E38");
        assert_eq!(float(f32::from_bits(1)), "1.4E-45");
        assert_eq!(float(-f32::from_bits(1)), "-1.4E-45");
        assert_eq!(float(f32::from_bits(2)), "2.8E-45");
        assert_eq!(float(f32::from_bits(3)), "4.2E-45");
        assert_eq!(float(f32::from_bits(7)), "9.8E-45");
        assert_eq!(float(f32::from_bits(0x007f_ffff)), "1.1754942E-38");
        assert_eq!(float(f32::NAN), "NaN");
        assert_eq!(float(f32::INFINITY), "Infinity");
        assert_eq!(float(f32::NEG_INFINITY), "-Infinity");
        // Ties between two shortest candidates: the even last digit wins.
        assert_eq!(float(f32::from_bits(0x48d7ac94)), "441700.62");
        assert_eq!(float(f32::from_bits(0x47712f90)), "61743.562");
        assert_eq!(float(f32::from_bits(0x4a7ef4e5)), "4177209.2");
        // Shortest digits where JDK 17 prints more (JDK 17: 1.23456794E9, 1.17549435E-38,
        // 2.50661312E8, 5.4355143E25, the last one not even the closest 8-digit decimal).
        assert_eq!(float(1_234_567_936.0), "1.234568E9");
        assert_eq!(float(f32::from_bits(0x6a33d899)), "5.4355144E25");
        assert_eq!(float(f32::MIN_POSITIVE), "1.1754944E-38");
        assert_eq!(float(f32::from_bits(0x4d6f0c9c)), "2.5066131E8");
    }

    #[test]
    fn decimal_len_counts_digits() {
        // Both sides of every power of ten, and the ends of the range.
        assert_eq!(decimal_len(0), 1);
        assert_eq!(decimal_len(u64::MAX), 20);
        for n in 1..20 {
            let p = 10u64.pow(n);
            assert_eq!(decimal_len(p - 1), n as usize, "{}", p - 1);
            assert_eq!(decimal_len(p), n as usize + 1, "{p}");
        }
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

    #[test]
    fn dates() {
        assert_eq!(date(0), "1970-01-01");
        assert_eq!(date(-1), "1969-12-31");
        assert_eq!(date(20194), "2025-04-16");
        assert_eq!(date(11016), "2000-02-29");
        assert_eq!(date(-25508), "1900-03-01");
        assert_eq!(date(-141714), "1582-01-01");
        assert_eq!(date(-719162), "0001-01-01");
        assert_eq!(date(-719528), "0000-01-01");
        assert_eq!(date(-719529), "-0001-12-31");
        assert_eq!(date(-719893), "-0001-01-01");
        assert_eq!(date(2932896), "9999-12-31");
        assert_eq!(date(2932897), "+10000-01-01");
        assert_eq!(date(i32::MAX), "+5881580-07-11");
        assert_eq!(date(i32::MIN), "-5877641-06-23");
    }

    #[test]
    fn civil_round_trip() {
        for days in (-800_000i64..800_000)
            .step_by(7)
            .chain([i64::from(i32::MIN), 0])
        {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
    }

    #[test]
    fn times() {
        assert_eq!(time(0), "00:00:00");
        assert_eq!(time(1), "00:00:00.000001");
        assert_eq!(time(45_296_123_456), "12:34:56.123456");
        assert_eq!(time(45_296_780_000), "12:34:56.78");
        assert_eq!(time(45_296_000_000), "12:34:56");
        assert_eq!(time(86_399_999_999), "23:59:59.999999");
        // Out-of-range input does not panic.
        assert_eq!(time(-1), "23:59:59.999999");
        assert_eq!(time(i64::MIN).len(), "00:00:00".len() + 7);
    }

    #[test]
    fn timestamps_without_time_zone() {
        assert_eq!(ts(0, MICROS, None), "1970-01-01 00:00:00");
        assert_eq!(
            ts(1_744_806_896_780_000, MICROS, None),
            "2025-04-16 12:34:56.78"
        );
        assert_eq!(ts(-1, MICROS, None), "1969-12-31 23:59:59.999999");
        assert_eq!(ts(-999_999, MICROS, None), "1969-12-31 23:59:59.000001");
        assert_eq!(ts(-1_000_000, MICROS, None), "1969-12-31 23:59:59");
        assert_eq!(ts(123_456, MICROS, None), "1970-01-01 00:00:00.123456");
        assert_eq!(ts(951_782_400_000_000, MICROS, None), "2000-02-29 00:00:00");
        assert_eq!(
            ts(253_402_300_799_999_999, MICROS, None),
            "9999-12-31 23:59:59.999999"
        );
        assert_eq!(
            ts(253_402_300_800_000_000, MICROS, None),
            "+10000-01-01 00:00:00"
        );
        assert_eq!(
            ts(-62_198_755_200_000_000, MICROS, None),
            "-0001-01-01 00:00:00"
        );
        assert_eq!(ts(i64::MAX, MICROS, None), "+294247-01-10 04:00:54.775807");
        assert_eq!(ts(i64::MIN, MICROS, None), "-290308-12-21 19:59:05.224192");
        // Nanoseconds.
        assert_eq!(ts(0, NANOS, None), "1970-01-01 00:00:00");
        assert_eq!(ts(-1, NANOS, None), "1969-12-31 23:59:59.999999999");
        assert_eq!(
            ts(123_456_789, NANOS, None),
            "1970-01-01 00:00:00.123456789"
        );
        assert_eq!(ts(100_000_000, NANOS, None), "1970-01-01 00:00:00.1");
        assert_eq!(ts(1_000, NANOS, None), "1970-01-01 00:00:00.000001");
        assert_eq!(ts(i64::MAX, NANOS, None), "2262-04-11 23:47:16.854775807");
        assert_eq!(ts(i64::MIN, NANOS, None), "1677-09-21 00:12:43.145224192");
    }

    #[test]
    fn timestamps_in_utc_and_fixed_offsets() {
        let utc = Some("UTC");
        assert_eq!(ts(0, MICROS, utc), "1970-01-01 00:00:00+00:00");
        assert_eq!(
            ts(1_744_806_896_780_000, MICROS, utc),
            "2025-04-16 12:34:56.78+00:00"
        );
        assert_eq!(ts(-1, MICROS, utc), "1969-12-31 23:59:59.999999+00:00");
        assert_eq!(
            ts(i64::MAX, MICROS, utc),
            "+294247-01-10 04:00:54.775807+00:00"
        );
        assert_eq!(
            ts(i64::MIN, MICROS, utc),
            "-290308-12-21 19:59:05.224192+00:00"
        );
        let mut out = Vec::new();
        write_timestamp(&mut out, 0, MICROS, Some(&SessionTimeZone::utc()));
        assert_eq!(out, b"1970-01-01 00:00:00+00:00");

        let plus = Some("+05:30");
        assert_eq!(ts(0, MICROS, plus), "1970-01-01 05:30:00+05:30");
        assert_eq!(
            ts(253_402_300_799_999_999, MICROS, plus),
            "+10000-01-01 05:29:59.999999+05:30"
        );
        assert_eq!(
            ts(i64::MIN, MICROS, plus),
            "-290308-12-22 01:29:05.224192+05:30"
        );
        assert_eq!(ts(0, MICROS, Some("-08:00")), "1969-12-31 16:00:00-08:00");
        assert_eq!(ts(0, MICROS, Some("+0530")), "1970-01-01 05:30:00+05:30");
        // An offset under one minute prints as +00:00 but still shifts the clock.
        assert_eq!(
            ts(0, MICROS, Some("-00:00:30")),
            "1969-12-31 23:59:30+00:00"
        );
        assert_eq!(
            ts(i64::MAX, MICROS, Some("-00:00:30")),
            "+294247-01-10 04:00:24.775807+00:00"
        );
        assert_eq!(
            ts(1_734_373_425_000_000_000, NANOS, plus),
            "2024-12-16 23:53:45+05:30"
        );
    }

    #[test]
    fn timestamps_in_named_zones() {
        assert_eq!(ts(0, MICROS, LA), "1969-12-31 16:00:00-08:00");
        assert_eq!(ts(-1, MICROS, LA), "1969-12-31 15:59:59.999999-08:00");
        // Daylight saving time.
        assert_eq!(
            ts(1_744_806_896_780_000, MICROS, LA),
            "2025-04-16 05:34:56.78-07:00"
        );
        assert_eq!(
            ts(1_741_514_399 * MICROS, MICROS, LA),
            "2025-03-09 01:59:59-08:00"
        );
        assert_eq!(
            ts(1_741_514_400 * MICROS, MICROS, LA),
            "2025-03-09 03:00:00-07:00"
        );
        assert_eq!(
            ts(1_762_073_999 * MICROS, MICROS, LA),
            "2025-11-02 01:59:59-07:00"
        );
        assert_eq!(
            ts(1_762_074_000 * MICROS, MICROS, LA),
            "2025-11-02 01:00:00-08:00"
        );
        assert_eq!(
            ts(951_782_400_000_000, MICROS, LA),
            "2000-02-28 16:00:00-08:00"
        );
        // Local mean time before 1883: -07:52:58, seconds truncated.
        assert_eq!(
            ts(-62_198_755_200_000_000, MICROS, LA),
            "-0002-12-31 16:07:02-07:52"
        );
        assert_eq!(
            ts(-62_135_596_800_000_000, MICROS, LA),
            "0000-12-31 16:07:02-07:52"
        );
        assert_eq!(
            ts(-2_717_640_001 * MICROS, MICROS, LA),
            "1883-11-18 12:07:01-07:52"
        );
        assert_eq!(
            ts(-2_717_640_000 * MICROS, MICROS, LA),
            "1883-11-18 12:00:00-08:00"
        );
        assert_eq!(
            ts(i64::MIN, MICROS, LA),
            "-290308-12-21 12:06:07.224192-07:52"
        );
        assert_eq!(
            ts(i64::MIN, MICROS, Some("Europe/London")),
            "-290308-12-21 19:57:50.224192-00:01"
        );
        assert_eq!(
            ts(i64::MIN, MICROS, Some("Asia/Kolkata")),
            "-290308-12-22 01:52:33.224192+05:53"
        );
        assert_eq!(
            ts(-62_135_596_800_000_000, MICROS, Some("Australia/Sydney")),
            "0001-01-01 10:04:52+10:04"
        );
        // Far future: Java keeps applying the recurring daylight-saving rules.
        assert_eq!(
            ts(i64::MAX, MICROS, LA),
            "+294247-01-09 20:00:54.775807-08:00"
        );
        assert_eq!(
            ts(i64::MAX, MICROS, Some("Australia/Sydney")),
            "+294247-01-10 15:00:54.775807+11:00"
        );
        assert_eq!(
            ts(i64::MAX, MICROS, Some("Europe/London")),
            "+294247-01-10 04:00:54.775807+00:00"
        );
        assert_eq!(
            ts(253_402_300_799_999_999, MICROS, Some("Australia/Sydney")),
            "+10000-01-01 10:59:59.999999+11:00"
        );
        assert_eq!(
            ts(253_402_300_800_000_000, MICROS, LA),
            "9999-12-31 16:00:00-08:00"
        );
        assert_eq!(
            ts(i64::MAX, NANOS, LA),
            "2262-04-11 16:47:16.854775807-07:00"
        );
        assert_eq!(
            ts(i64::MIN, NANOS, LA),
            "1677-09-20 16:19:45.145224192-07:52"
        );
        assert_eq!(
            ts(1_734_373_425_000_000_000, NANOS, LA),
            "2024-12-16 10:23:45-08:00"
        );
        assert_eq!(
            ts(123_456_789, NANOS, Some("Europe/London")),
            "1970-01-01 01:00:00.123456789+01:00"
        );
    }

    #[test]
    fn far_future_offsets_follow_recurring_rules() {
        let la = SessionTimeZone::parse(LA).unwrap();
        let sydney = SessionTimeZone::parse(Some("Australia/Sydney")).unwrap();
        let london = SessionTimeZone::parse(Some("Europe/London")).unwrap();
        // Offsets Java reports (ZoneRules), including its computed transitions.
        assert_eq!(la.offset_seconds_at(4_102_441_200), -8 * 3600); // 2099-12-31T23:00Z
        assert_eq!(la.offset_seconds_at(4_118_342_400), -7 * 3600); // 2100-07-04
        assert_eq!(la.offset_seconds_at(5_686_019_999), -8 * 3600); // 2150-03-08 gap
        assert_eq!(la.offset_seconds_at(5_686_020_000), -7 * 3600);
        assert_eq!(la.offset_seconds_at(5_706_579_599), -7 * 3600); // 2150-11-01 overlap
        assert_eq!(la.offset_seconds_at(5_706_579_600), -8 * 3600);
        assert_eq!(la.offset_seconds_at(32_519_361_600), -7 * 3600); // 3000-07-01
        assert_eq!(la.offset_seconds_at(32_503_723_200), -8 * 3600); // 3000-01-01
        assert_eq!(la.offset_seconds_at(3_093_534_151_199), -8 * 3600); // +100000-03-12
        assert_eq!(la.offset_seconds_at(3_093_534_151_200), -7 * 3600);
        assert_eq!(la.offset_seconds_at(8_237_325_456_000), -7 * 3600); // +263000-06-15
        assert_eq!(sydney.offset_seconds_at(3_093_535_900_799), 11 * 3600);
        assert_eq!(sydney.offset_seconds_at(3_093_535_900_800), 10 * 3600);
        assert_eq!(sydney.offset_seconds_at(5_688_374_400), 10 * 3600); // 2150-04-05
        assert_eq!(sydney.offset_seconds_at(5_704_099_200), 11 * 3600); // 2150-10-04
        assert_eq!(london.offset_seconds_at(6_249_237_523_200), 3600); // +200000-06-15
        assert_eq!(la.offset_seconds_at(i64::MAX), -8 * 3600);
        assert_eq!(la.offset_seconds_at(i64::MIN), -28378);
        assert_eq!(la.offset_seconds_at(-93_709_872_000), -28378); // -1000-06-15
        assert_eq!(
            ts(327_417_638_400 * MICROS, MICROS, LA),
            "+12345-06-14 17:00:00-07:00"
        );
    }

    #[test]
    fn unusual_zones() {
        // Sampled from a 60,000-case comparison against Java (Spark's formatter, JDK 17 tzdb).
        let cases = [
            (
                "Africa/Casablanca",
                6_279_702_774_524_515,
                "2168-12-29 18:52:54.524515+01:00",
            ),
            (
                "Africa/Casablanca",
                5_310_388_795_586_368,
                "2138-04-12 20:59:55.586368+01:00",
            ),
            (
                "Africa/Casablanca",
                3_628_849_767_129_789,
                "2084-12-28 14:49:27.129789+01:00",
            ),
            (
                "Asia/Gaza",
                6_065_945_212_931_025,
                "2162-03-22 18:46:52.931025+02:00",
            ),
            (
                "Asia/Gaza",
                8_477_268_086_950_209,
                "2238-08-20 15:41:26.950209+03:00",
            ),
            (
                "Asia/Gaza",
                3_928_486_567_793_414,
                "2094-06-27 17:16:07.793414+03:00",
            ),
            (
                "Europe/Dublin",
                16_206_148_995_409_488,
                "2483-07-21 05:03:15.409488+01:00",
            ),
            (
                "Europe/Dublin",
                4_235_438_186_527_679,
                "2104-03-20 06:36:26.527679+00:00",
            ),
            (
                "Pacific/Chatham",
                5_636_958_054_871_178,
                "2148-08-18 02:25:54.871178+12:45",
            ),
            (
                "Pacific/Chatham",
                1_425_944_813_486_372,
                "2015-03-10 13:31:53.486372+13:45",
            ),
            (
                "Antarctica/Troll",
                8_938_062_189_853_428,
                "2253-03-27 21:03:09.853428+02:00",
            ),
            (
                "America/St_Johns",
                12_716_307_610_821_406,
                "2372-12-18 08:10:10.821406-03:30",
            ),
            (
                "America/St_Johns",
                3_423_241_682_904_627,
                "2078-06-23 17:58:02.904627-02:30",
            ),
        ];
        for (zone, micros, expected) in cases {
            assert_eq!(ts(micros, MICROS, Some(zone)), expected, "{zone} {micros}");
        }
    }

    #[test]
    fn odd_units_per_second_do_not_panic() {
        assert_eq!(ts(1_500, 1_000, None), "1970-01-01 00:00:01.5");
        assert!(!ts(i64::MAX, 1, LA).is_empty());
        assert!(!ts(i64::MIN, 1, LA).is_empty());
        assert_eq!(ts(5, 0, None), "1970-01-01 00:00:05");
        assert!(!ts(i64::MAX, 3, Some("+05:30")).is_empty());
    }

    #[test]
    fn time_zone_parsing() {
        assert_eq!(SessionTimeZone::parse(None), Ok(SessionTimeZone::Fixed(0)));
        assert_eq!(SessionTimeZone::utc(), SessionTimeZone::Fixed(0));
        assert_eq!(
            SessionTimeZone::parse(Some("UTC")),
            Ok(SessionTimeZone::Fixed(0))
        );
        assert_eq!(
            SessionTimeZone::parse(Some("utc")),
            Ok(SessionTimeZone::Fixed(0))
        );
        assert_eq!(
            SessionTimeZone::parse(Some("Z")),
            Ok(SessionTimeZone::Fixed(0))
        );
        assert_eq!(
            SessionTimeZone::parse(Some("+00:00")),
            Ok(SessionTimeZone::Fixed(0))
        );
        assert_eq!(
            SessionTimeZone::parse(Some("+05:30")),
            Ok(SessionTimeZone::Fixed(19800))
        );
        assert_eq!(
            SessionTimeZone::parse(Some("+0530")),
            Ok(SessionTimeZone::Fixed(19800))
        );
        assert_eq!(
            SessionTimeZone::parse(Some("-08:00")),
            Ok(SessionTimeZone::Fixed(-28800))
        );
        assert_eq!(
            SessionTimeZone::parse(Some("-08")),
            Ok(SessionTimeZone::Fixed(-28800))
        );
        assert_eq!(
            SessionTimeZone::parse(Some("America/Los_Angeles")),
            Ok(SessionTimeZone::Named(chrono_tz::America::Los_Angeles))
        );
        assert_eq!(
            SessionTimeZone::parse(Some("Etc/UTC")),
            Ok(SessionTimeZone::Named(chrono_tz::Etc::UTC))
        );
        for bad in [
            "Mars/Olympus",
            "",
            "+25:00",
            "+05:60",
            "+5:30",
            "+05:3",
            "PST8PDT8",
            "+",
        ] {
            let err = SessionTimeZone::parse(Some(bad)).unwrap_err();
            assert!(err.contains(bad), "{err}");
        }
        assert!(
            SessionTimeZone::parse(Some("Mars/Olympus"))
                .unwrap_err()
                .contains("America/Los_Angeles")
        );
        assert_eq!(
            SessionTimeZone::Fixed(-3600).offset_seconds_at(i64::MIN),
            -3600
        );
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
    fn integers_at_every_digit_count() {
        let mut cases = vec![0i64, 9, 10, 99, 100, i64::MAX, i64::MIN, -1, -10, -100];
        let mut p = 1i64;
        for _ in 0..18 {
            p *= 10;
            cases.extend([p - 1, p, p + 1, -p, 7 * p + 3]);
        }
        for v in cases {
            let mut out = b"x".to_vec();
            write_i64(&mut out, v);
            assert_eq!(out, format!("x{v}").into_bytes(), "{v}");
        }
    }

    #[test]
    fn unsigned_integers_of_every_magnitude() {
        let mut cases = vec![
            10u64,
            99,
            u64::MAX,
            u64::MAX - 1,
            10u64.pow(19),
            10u64.pow(19) - 1,
        ];
        // Random values shifted to every bit length (xorshift64), and numbers with inner zeros.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            cases.push(x >> (x % 64));
        }
        cases.extend([
            100_000_001,
            10_000_000_000_000_001,
            1_020_304_050_607_080_900,
        ]);
        for v in cases {
            let mut out = b"x".to_vec();
            write_u64(&mut out, v);
            assert_eq!(out, format!("x{v}").into_bytes(), "{v}");
        }
    }

    #[test]
    fn writers_append() {
        let mut out = b"[".to_vec();
        write_java_double(&mut out, 1.5);
        out.push(b',');
        write_decimal(&mut out, -5, 2);
        out.push(b',');
        write_json_string(&mut out, "k");
        assert_eq!(out, b"[1.5,-0.05,\"k\"");
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
