//! Date and timestamp conversions for casts: Spark's string formats and session-time-zone
//! shifts.
use crate::codec::SessionTimeZone;

use super::numeric::spark_trim;

pub(crate) use crate::codec::MICROS_PER_DAY;

/// Microseconds per second.
pub(crate) const MICROS_PER_SECOND: i64 = 1_000_000;

/// Days since the epoch of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
pub(crate) fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = m as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// A UTC instant in microseconds shifted to local wall-clock microseconds in `tz`.
pub(crate) fn utc_to_local(micros: i64, tz: &SessionTimeZone) -> Option<i64> {
    let offset = tz.offset_seconds_at(micros.div_euclid(MICROS_PER_SECOND)) as i64;
    micros.checked_add(offset * MICROS_PER_SECOND)
}

/// Local wall-clock microseconds in `tz` to a UTC instant, as java.time's `ZonedDateTime.of`: in
/// an overlap the earlier offset wins; a time in a gap moves later by the gap's length (it keeps
/// the offset from before the gap).
pub(crate) fn local_to_utc(local: i64, tz: &SessionTimeZone) -> Option<i64> {
    const DAY: i64 = 86_400;
    let local_secs = local.div_euclid(MICROS_PER_SECOND);
    let before = tz.offset_seconds_at(local_secs.saturating_sub(DAY)) as i64;
    let after = tz.offset_seconds_at(local_secs.saturating_add(DAY)) as i64;
    let with = |offset: i64| local.checked_sub(offset * MICROS_PER_SECOND);
    if before == after {
        return with(before);
    }
    let early = with(before)?;
    let late = with(after)?;
    let early_valid = tz.offset_seconds_at(early.div_euclid(MICROS_PER_SECOND)) as i64 == before;
    let late_valid = tz.offset_seconds_at(late.div_euclid(MICROS_PER_SECOND)) as i64 == after;
    Some(if early_valid || !late_valid {
        early
    } else {
        late
    })
}

/// Parsed pieces of a date/timestamp string.
struct Parsed {
    days: i64,
    micros_of_day: i64,
    /// Explicit zone offset in seconds, or None.
    offset: Option<Zone>,
}

enum Zone {
    Fixed(i64),
    Named(SessionTimeZone),
}

fn number(s: &[u8], pos: &mut usize, min: usize, max: usize) -> Option<i64> {
    let start = *pos;
    while *pos < s.len() && s[*pos].is_ascii_digit() && *pos - start < max {
        *pos += 1;
    }
    if *pos - start < min {
        return None;
    }
    std::str::from_utf8(&s[start..*pos]).ok()?.parse().ok()
}

/// Spark's date/timestamp string forms: `yyyy[-[m]m[-[d]d]]` optionally followed by `T` or ` `
/// and `[h]h:[m]m[:[s]s[.fraction]]`, then an optional zone (`Z`, `UTC`, `+hh[:mm]`, a region).
fn parse(s: &str, want_time: bool) -> Option<Parsed> {
    let t = spark_trim(s);
    let b = t.as_bytes();
    let mut pos = 0;
    let neg = b.first() == Some(&b'-');
    if neg || b.first() == Some(&b'+') {
        pos += 1;
    }
    let mut year = number(b, &mut pos, 4, 7)?;
    if neg {
        year = -year;
    }
    let (mut month, mut day) = (1u32, 1u32);
    if b.get(pos) == Some(&b'-') {
        pos += 1;
        month = number(b, &mut pos, 1, 2)? as u32;
        if b.get(pos) == Some(&b'-') {
            pos += 1;
            day = number(b, &mut pos, 1, 2)? as u32;
        }
    }
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let mut parsed = Parsed {
        days,
        micros_of_day: 0,
        offset: None,
    };
    if pos == b.len() {
        return Some(parsed);
    }
    if b[pos] != b' ' && b[pos] != b'T' {
        return None;
    }
    pos += 1;
    if !want_time {
        // Spark's string-to-date ignores what follows the date and a separator.
        return Some(parsed);
    }
    if pos < b.len() && b[pos].is_ascii_digit() {
        let hour = number(b, &mut pos, 1, 2)?;
        if b.get(pos) != Some(&b':') {
            return None;
        }
        pos += 1;
        let minute = number(b, &mut pos, 1, 2)?;
        let mut second = 0;
        let mut fraction = 0;
        if b.get(pos) == Some(&b':') {
            pos += 1;
            second = number(b, &mut pos, 1, 2)?;
            if b.get(pos) == Some(&b'.') {
                pos += 1;
                let start = pos;
                while pos < b.len() && b[pos].is_ascii_digit() {
                    pos += 1;
                }
                let digits = &t[start..pos];
                let six: String = digits.chars().chain("000000".chars()).take(6).collect();
                fraction = six.parse().ok()?;
            }
        }
        if hour > 23 || minute > 59 || second > 59 {
            return None;
        }
        parsed.micros_of_day = ((hour * 60 + minute) * 60 + second) * MICROS_PER_SECOND + fraction;
    }
    let zone = t[pos..].trim_start();
    if !zone.is_empty() {
        parsed.offset = Some(if zone.starts_with(['+', '-']) || zone == "Z" {
            match SessionTimeZone::parse(Some(zone)).ok()? {
                tz @ SessionTimeZone::Fixed(_) => Zone::Fixed(tz.offset_seconds_at(0) as i64),
                other => Zone::Named(other),
            }
        } else {
            Zone::Named(SessionTimeZone::parse(Some(zone)).ok()?)
        });
    }
    Some(parsed)
}

/// Spark's string to date.
pub(crate) fn parse_date(s: &str) -> Option<i32> {
    i32::try_from(parse(s, false)?.days).ok()
}

/// Spark's string to timestamp (UTC microseconds); strings without a zone are in `tz`.
pub(crate) fn parse_timestamp(s: &str, tz: &SessionTimeZone) -> Option<i64> {
    let p = parse(s, true)?;
    let local = p
        .days
        .checked_mul(MICROS_PER_DAY)?
        .checked_add(p.micros_of_day)?;
    match p.offset {
        Some(Zone::Fixed(off)) => local.checked_sub(off * MICROS_PER_SECOND),
        Some(Zone::Named(zone)) => local_to_utc(local, &zone),
        None => local_to_utc(local, tz),
    }
}

/// Spark's string to timestamp_ntz (local microseconds; a zone in the text is ignored).
pub(crate) fn parse_timestamp_ntz(s: &str) -> Option<i64> {
    let p = parse(s, true)?;
    p.days
        .checked_mul(MICROS_PER_DAY)?
        .checked_add(p.micros_of_day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(parse_date("1970-01-01"), Some(0));
        assert_eq!(parse_date("2025-04-16"), Some(20194));
        assert_eq!(parse_date(" 2025-04-16 12:34:56 "), Some(20194));
        assert_eq!(parse_date("2025-4-6"), Some(20184));
        assert_eq!(parse_date("2000-02-29"), Some(11016));
        assert_eq!(parse_date("2001-02-29"), None);
        assert_eq!(parse_date("2025-13-01"), None);
        assert_eq!(parse_date("abc"), None);
    }

    #[test]
    fn timestamps() {
        let utc = SessionTimeZone::utc();
        // 2025-04-16 12:34:56 UTC = 1744806896 s
        assert_eq!(
            parse_timestamp("2025-04-16 12:34:56", &utc),
            Some(1_744_806_896_000_000)
        );
        assert_eq!(
            parse_timestamp("2025-04-16T12:34:56Z", &utc),
            Some(1_744_806_896_000_000)
        );
        assert_eq!(
            parse_timestamp("2025-04-16 12:34:56+02:00", &utc),
            Some(1_744_806_896_000_000 - 7_200_000_000)
        );
        assert_eq!(
            parse_timestamp("2025-04-16 12:34:56.78", &utc),
            Some(1_744_806_896_780_000)
        );
        assert_eq!(
            parse_timestamp("2025-04-16", &utc),
            Some(1_744_761_600_000_000)
        );
        // 2026-04-05 05:16:07 UTC
        assert_eq!(
            parse_timestamp("2026-04-05 5:16:07", &utc),
            Some((days_from_civil(2026, 4, 5) * 86_400 + 5 * 3600 + 16 * 60 + 7) * 1_000_000)
        );
        let la = SessionTimeZone::parse(Some("America/Los_Angeles")).unwrap();
        // Summer: UTC-7.
        assert_eq!(
            parse_timestamp("2025-04-16 12:34:56", &la),
            Some(1_744_806_896_000_000 + 7 * 3_600_000_000)
        );
        assert_eq!(parse_timestamp("2025-04-16 25:00:00", &utc), None);
        assert_eq!(
            parse_timestamp_ntz("2025-04-16 12:34:56+02:00"),
            Some(1_744_806_896_000_000)
        );
    }

    #[test]
    fn zone_shifts() {
        let la = SessionTimeZone::parse(Some("America/Los_Angeles")).unwrap();
        assert_eq!(utc_to_local(0, &la), Some(-8 * 3_600_000_000));
        assert_eq!(local_to_utc(-8 * 3_600_000_000, &la), Some(0));
        // 2025-03-09 02:30 does not exist in Los Angeles: java.time moves it to 03:30 PDT,
        // i.e. 10:30 UTC (the offset from before the gap, -8h).
        let gap = (days_from_civil(2025, 3, 9) * 86_400 + 2 * 3600 + 30 * 60) * 1_000_000;
        assert_eq!(local_to_utc(gap, &la), Some(gap + 8 * 3_600_000_000));
        // 2025-11-02 01:30 happens twice: the earlier offset (PDT, -7h) wins.
        let overlap = (days_from_civil(2025, 11, 2) * 86_400 + 3600 + 30 * 60) * 1_000_000;
        assert_eq!(
            local_to_utc(overlap, &la),
            Some(overlap + 7 * 3_600_000_000)
        );
    }
}
