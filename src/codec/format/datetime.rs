//! Dates, times and timestamps as `java.time` prints them (`ISO_LOCAL_DATE`, `' '`,
//! `ISO_LOCAL_TIME`, `appendOffset("+HH:MM", "+00:00")`): the proleptic Gregorian calendar, and
//! the session time zone with its offsets.

use chrono::{DateTime, NaiveDateTime, Offset, TimeZone};
use chrono_tz::Tz;

use super::number::{write_padded, write_u64};

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
/// trimmed of trailing zeros ("12:34:56.123456", "12:34:56.78", "00:00:00"). Decoding refuses
/// a variant TIME outside one day; other values outside it are wrapped into it.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::format::written;

    fn date(days: i32) -> String {
        written(|out| write_date(out, days))
    }

    fn time(micros: i64) -> String {
        written(|out| write_time_micros(out, micros))
    }

    fn ts(value: i64, units: i64, tz: Option<&str>) -> String {
        let zone = tz.map(|name| SessionTimeZone::parse(Some(name)).unwrap());
        written(|out| write_timestamp(out, value, units, zone.as_ref()))
    }

    const MICROS: i64 = 1_000_000;
    const NANOS: i64 = 1_000_000_000;
    const LA: Option<&str> = Some("America/Los_Angeles");

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
}
