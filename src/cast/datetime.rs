//! Date and timestamp conversions for casts: Spark's string formats and session-time-zone
//! shifts.
use crate::codec::SessionTimeZone;

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

/// Spark trims bytes that are whitespace or ISO controls (`UTF8String.isWhitespaceOrISOControl`:
/// ASCII 0-32 and 127) from both ends of date and timestamp strings.
fn is_trimmed(b: u8) -> bool {
    b <= b' ' || b == 0x7f
}

/// The bounds of `b` without Spark's trimmed bytes at either end.
fn trimmed_bounds(b: &[u8]) -> (usize, usize) {
    let start = b.iter().position(|&c| !is_trimmed(c)).unwrap_or(b.len());
    let end = b
        .iter()
        .rposition(|&c| !is_trimmed(c))
        .map_or(start, |i| i + 1);
    (start, end)
}

/// Spark's string to date (`stringToDate`): `[+-]yyyy[y..]`, `[+-]yyyy-[m]m` (nothing may
/// follow these two), or `[+-]yyyy-[m]m-[d]d` followed by nothing, or by ` ` or `T` and anything.
/// Years have 4 to 7 digits, months and days 1 or 2.
pub(crate) fn parse_date(s: &str) -> Option<i32> {
    let b = s.as_bytes();
    let (mut j, end) = trimmed_bounds(b);
    if j == end {
        return None;
    }
    let mut sign = 1;
    if b[j] == b'-' || b[j] == b'+' {
        sign = if b[j] == b'-' { -1 } else { 1 };
        j += 1;
    }
    let valid = |segment: usize, digits: u32| match segment {
        0 => (4..=7).contains(&digits),
        _ => (1..=2).contains(&digits),
    };
    let mut segments = [1i64; 3];
    let (mut i, mut value, mut digits) = (0usize, 0i64, 0u32);
    while j < end && b[j] != b' ' && b[j] != b'T' {
        match b[j] {
            b'-' if i < 2 => {
                if !valid(i, digits) {
                    return None;
                }
                segments[i] = value;
                (i, value, digits) = (i + 1, 0, 0);
            }
            d @ b'0'..=b'9' if digits < 8 => {
                value = value * 10 + i64::from(d - b'0');
                digits += 1;
            }
            _ => return None,
        }
        j += 1;
    }
    if !valid(i, digits) || (i < 2 && j < end) {
        return None;
    }
    segments[i] = value;
    let days = civil_days(sign * segments[0], segments[1], segments[2])?;
    i32::try_from(days).ok()
}

/// Days since the epoch of a valid proleptic Gregorian date, or None (`LocalDate.of`'s checks).
fn civil_days(year: i64, month: i64, day: i64) -> Option<i64> {
    let month = u32::try_from(month).ok().filter(|m| (1..=12).contains(m))?;
    let day = u32::try_from(day).ok()?;
    if day < 1 || day > days_in_month(year, month) {
        return None;
    }
    Some(days_from_civil(year, month, day))
}

/// The pieces of a timestamp string as Spark's `parseTimestampString` reads them.
struct TimestampText<'a> {
    /// Year, month, day, hour, minute, second and microseconds, unchecked.
    segments: [i64; 7],
    /// The zone's text, as it follows the seconds (or their fraction), untrimmed.
    zone: Option<&'a str>,
    /// A time without a date (`[h]h:[m]m..` or `T[h]h..`): Spark puts it on the current date.
    just_time: bool,
}

/// Spark's timestamp forms, read as its `parseTimestampString` does: `[+-]yyyy[yy]`,
/// `[+-]yyyy-[m]m`, `[+-]yyyy-[m]m-[d]d`, optionally followed by ` ` or `T` and `[h]h`,
/// `[h]h:[m]m` or `[h]h:[m]m:[s]s[.fraction]`; a time alone (`[h]h:[m]m..`, `T[h]h..`); a zone
/// may follow the seconds or their fraction. Years have 4 to 6 digits; fractions past six digits
/// are cut.
fn parse_timestamp_text(s: &str) -> Option<TimestampText<'_>> {
    let b = s.as_bytes();
    let (mut j, end) = trimmed_bounds(b);
    if j == end {
        return None;
    }
    let valid = |segment: usize, digits: u32| match segment {
        0 => (4..=6).contains(&digits),
        6 => true,
        _ => (1..=2).contains(&digits),
    };
    let mut segments = [1, 1, 1, 0, 0, 0, 0];
    let (mut i, mut value, mut digits) = (0usize, 0i64, 0u32);
    let mut fraction_digits = 0;
    let mut just_time = false;
    let mut zone = None;
    let mut sign = None;
    if b[j] == b'-' || b[j] == b'+' {
        sign = Some(if b[j] == b'-' { -1 } else { 1 });
        j += 1;
    }
    while j < end {
        let c = b[j];
        if c.is_ascii_digit() {
            if i == 6 && fraction_digits < 6 {
                fraction_digits += 1;
            }
            // Digits past what a segment may hold fail `valid` below; past six, a fraction is
            // cut (the digits count, the value stops growing).
            if (i != 6 || digits < 6) && digits < 8 {
                value = value * 10 + i64::from(c - b'0');
            }
            digits = digits.saturating_add(1);
            j += 1;
            continue;
        }
        // Spark's check is against the untrimmed text: only a `T` at its very start.
        let separator_ok = match i {
            _ if j == 0 && c == b'T' => {
                just_time = true;
                i += 3;
                j += 1;
                continue;
            }
            0 if c == b':' && sign.is_none() => {
                if !valid(3, digits) {
                    return None;
                }
                just_time = true;
                segments[3] = value;
                (i, value, digits) = (4, 0, 0);
                j += 1;
                continue;
            }
            0 | 1 => c == b'-',
            2 => c == b' ' || c == b'T',
            3 | 4 => c == b':',
            5 | 6 => {
                if !valid(i, digits) {
                    return None;
                }
                segments[i] = value;
                if c == b'.' && i == 5 {
                    (i, value, digits) = (6, 0, 0);
                    j += 1;
                    continue;
                }
                // Anything else after the seconds or their fraction is the zone.
                zone = Some(s.get(j..end)?);
                (i, value, digits) = (7, 0, 0);
                break;
            }
            _ => false,
        };
        if !separator_ok || !valid(i, digits) {
            return None;
        }
        segments[i] = value;
        (i, value, digits) = (i + 1, 0, 0);
        j += 1;
    }
    if i < 7 {
        if !valid(i, digits) {
            return None;
        }
        segments[i] = value;
    }
    for _ in fraction_digits..6 {
        segments[6] *= 10;
    }
    segments[0] *= sign.unwrap_or(1);
    Some(TimestampText {
        segments,
        zone,
        just_time,
    })
}

impl TimestampText<'_> {
    /// The written date in days since the epoch, if it is a date (`LocalDate.of`'s checks).
    fn written_date(&self) -> Option<i64> {
        let [year, month, day, ..] = self.segments;
        civil_days(year, month, day)
    }

    /// Local microseconds of the written time on `days`, if hours, minutes and seconds are in
    /// range (`LocalTime.of`'s checks).
    fn on_day(&self, days: i64) -> Option<i64> {
        let [_, _, _, hour, minute, second, micros] = self.segments;
        if hour > 23 || minute > 59 || second > 59 {
            return None;
        }
        let time = ((hour * 60 + minute) * 60 + second) * MICROS_PER_SECOND + micros;
        days.checked_mul(MICROS_PER_DAY)?.checked_add(time)
    }

    /// The zone written in the text as Spark resolves it, else `default`; None if the written
    /// zone is not a zone.
    fn zone_or(&self, default: &SessionTimeZone) -> Option<SessionTimeZone> {
        match self.zone {
            None => Some(default.clone()),
            Some(text) => java_zone_id(text),
        }
    }
}

/// Spark's `getZoneId` on a zone written after a timestamp: the text trimmed, `+h:` widened to
/// `+0h:` and a final `+hh:m` to `+hh:0m`, then `java.time.ZoneId.of(id, SHORT_IDS)`: `Z`; an
/// offset `+h`, `+hh`, `+hhmm`, `+hh:mm`, `+hhmmss` or `+hh:mm:ss` (at most 18 hours); `UTC`,
/// `GMT` or `UT` alone or followed by such an offset; a short id (`PST`, `EST`, `IST`, ..); or a
/// region (`Europe/Paris`, `GMT0`), case-sensitive.
fn java_zone_id(text: &str) -> Option<SessionTimeZone> {
    let id = text.trim_matches(|c: char| c <= ' ');
    let id = short_id(id).unwrap_or(id);
    if id.len() <= 1 || id.starts_with(['+', '-']) {
        return java_offset(id).map(SessionTimeZone::Fixed);
    }
    let prefix = ["UTC", "GMT", "UT"].into_iter().find(|p| id.starts_with(p));
    if let Some(prefix) = prefix {
        let rest = &id[prefix.len()..];
        if rest.is_empty() {
            return Some(SessionTimeZone::utc());
        }
        if rest.starts_with(['+', '-']) {
            return java_offset(rest).map(SessionTimeZone::Fixed);
        }
    }
    id.parse().ok().map(SessionTimeZone::Named)
}

/// java.time's `ZoneId.SHORT_IDS`: three-letter ids Spark accepts as zones.
fn short_id(id: &str) -> Option<&'static str> {
    Some(match id {
        "ACT" => "Australia/Darwin",
        "AET" => "Australia/Sydney",
        "AGT" => "America/Argentina/Buenos_Aires",
        "ART" => "Africa/Cairo",
        "AST" => "America/Anchorage",
        "BET" => "America/Sao_Paulo",
        "BST" => "Asia/Dhaka",
        "CAT" => "Africa/Harare",
        "CNT" => "America/St_Johns",
        "CST" => "America/Chicago",
        "CTT" => "Asia/Shanghai",
        "EAT" => "Africa/Addis_Ababa",
        "ECT" => "Europe/Paris",
        "IET" => "America/Indiana/Indianapolis",
        "IST" => "Asia/Kolkata",
        "JST" => "Asia/Tokyo",
        "MIT" => "Pacific/Apia",
        "NET" => "Asia/Yerevan",
        "NST" => "Pacific/Auckland",
        "PLT" => "Asia/Karachi",
        "PNT" => "America/Phoenix",
        "PRT" => "America/Puerto_Rico",
        "PST" => "America/Los_Angeles",
        "SST" => "Pacific/Guadalcanal",
        "VST" => "Asia/Ho_Chi_Minh",
        "EST" => "-05:00",
        "MST" => "-07:00",
        "HST" => "-10:00",
        _ => return None,
    })
}

/// java.time's `ZoneOffset.of` after Spark's widening of one-digit hours (`+h:`) and minutes
/// (a final `+hh:m`): seconds east of UTC.
fn java_offset(id: &str) -> Option<i32> {
    if id == "Z" {
        return Some(0);
    }
    let b = id.as_bytes();
    let (sign, rest) = match b.split_first()? {
        (b'+', rest) => (1, rest),
        (b'-', rest) => (-1, rest),
        _ => return None,
    };
    let digit = |c: u8| c.is_ascii_digit().then(|| i32::from(c - b'0'));
    // Spark's `(\+|\-)(\d):` -> `$10$2:`, then `(\+|\-)(\d\d):(\d)$` -> `$1$2:0$3`.
    let mut widened = [0u8; 9];
    let mut n = 0;
    let mut push = |c: u8| -> Option<()> {
        *widened.get_mut(n)? = c;
        n += 1;
        Some(())
    };
    let rest: &[u8] = match rest {
        [h, b':', tail @ ..] if h.is_ascii_digit() => {
            push(b'0')?;
            push(*h)?;
            push(b':')?;
            tail
        }
        _ => rest,
    };
    for &c in rest {
        push(c)?;
    }
    if let [h1, h2, b':', m] = widened[..n]
        && h1.is_ascii_digit()
        && h2.is_ascii_digit()
        && m.is_ascii_digit()
    {
        widened = [h1, h2, b':', b'0', m, 0, 0, 0, 0];
        n = 5;
    }
    let w = &widened[..n];
    let two = |at: usize| Some(digit(*w.get(at)?)? * 10 + digit(*w.get(at + 1)?)?);
    let colon = |at: usize| (w.get(at) == Some(&b':')).then_some(());
    let (hours, minutes, seconds) = match w.len() {
        1 => (digit(w[0])?, 0, 0),
        2 => (two(0)?, 0, 0),
        4 => (two(0)?, two(2)?, 0),
        5 => (two(0)?, colon(2).and(two(3))?, 0),
        6 => (two(0)?, two(2)?, two(4)?),
        8 => (two(0)?, colon(2).and(two(3))?, colon(5).and(two(6))?),
        _ => return None,
    };
    let total = hours * 3600 + minutes * 60 + seconds;
    if hours > 18 || minutes > 59 || seconds > 59 || total > 18 * 3600 {
        return None;
    }
    Some(sign * total)
}

/// Today's date in `zone` (days since the epoch): where Spark puts a time written alone.
fn today_in(zone: &SessionTimeZone) -> Option<i64> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    let micros = i64::try_from(now.as_micros()).ok()?;
    Some(utc_to_local(micros, zone)?.div_euclid(MICROS_PER_DAY))
}

/// Spark's string to timestamp (`stringToTimestamp`; UTC microseconds). Strings without a zone
/// are in `tz`; a time alone is on today's date in its zone.
pub(crate) fn parse_timestamp(s: &str, tz: &SessionTimeZone) -> Option<i64> {
    let text = parse_timestamp_text(s)?;
    let zone = text.zone_or(tz)?;
    let days = if text.just_time {
        today_in(&zone)?
    } else {
        text.written_date()?
    };
    local_to_utc(text.on_day(days)?, &zone)
}

/// Spark's string to timestamp_ntz (`stringToTimestampWithoutTimeZone`; local microseconds): a
/// zone in the text must be a zone and is then ignored; a time alone has no date and is None.
pub(crate) fn parse_timestamp_ntz(s: &str) -> Option<i64> {
    let text = parse_timestamp_text(s)?;
    text.zone_or(&SessionTimeZone::utc())?;
    if text.just_time {
        return None;
    }
    text.on_day(text.written_date()?)
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

    /// UTC microseconds of a wall-clock time in UTC.
    fn at(y: i64, mo: u32, d: u32, h: i64, mi: i64, s: i64) -> i64 {
        (days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s) * MICROS_PER_SECOND
    }

    // The expectations below are what Spark 4.3 gave for `try_variant_get(parse_json(..), '$',
    // 'timestamp' | 'timestamp_ntz' | 'date')` and `try_cast(.. AS timestamp)` in a UTC session.

    #[test]
    fn timestamp_forms_as_spark_reads_them() {
        let utc = SessionTimeZone::utc();
        let ts = |s: &str| parse_timestamp(s, &utc);
        assert_eq!(ts("2025-04-16 12"), Some(at(2025, 4, 16, 12, 0, 0)));
        assert_eq!(ts("2025-04-16T12"), Some(at(2025, 4, 16, 12, 0, 0)));
        assert_eq!(ts("2025-04-16 12:34"), Some(at(2025, 4, 16, 12, 34, 0)));
        assert_eq!(ts("2025-04-16 1:2:3"), Some(at(2025, 4, 16, 1, 2, 3)));
        assert_eq!(ts("2025-4-6 1:02"), Some(at(2025, 4, 6, 1, 2, 0)));
        assert_eq!(ts("2025"), Some(at(2025, 1, 1, 0, 0, 0)));
        assert_eq!(ts("2025-04"), Some(at(2025, 4, 1, 0, 0, 0)));
        assert_eq!(ts("2025-04-16 "), Some(at(2025, 4, 16, 0, 0, 0)));
        assert_eq!(ts("20250-01-01"), Some(at(20250, 1, 1, 0, 0, 0)));
        assert_eq!(
            ts("+2025-04-16 12:34:56"),
            Some(at(2025, 4, 16, 12, 34, 56))
        );
        assert_eq!(ts("-0001-01-01 00:00:00"), Some(at(-1, 1, 1, 0, 0, 0)));
        let noon = at(2025, 4, 16, 12, 34, 56);
        assert_eq!(ts("2025-04-16T12:34:56.123456789Z"), Some(noon + 123_456));
        assert_eq!(ts("2025-04-16 12:34:56.1234567"), Some(noon + 123_456));
        assert_eq!(ts("2025-04-16 12:34:56."), Some(noon));
        assert_eq!(ts("2025-04-16 12:34:56.Z"), Some(noon));
        for s in [
            "2025-04-16T12:34Z",
            "2025-04-16 12:34+02:00",
            "2025-04-16 Z",
            "2025-04-16Z",
            "2025-04-16T",
            "2025-04T",
            "2025-04 x",
            "2025-04-16x",
            "2025-04-16Tfoo",
            "2025-4-16 anything",
            "2025-04-16 123:00",
            "2025-04-16 24:00:00",
            "2025-04-16 23:60:00",
            "2025-04-16 12:34:60",
            "2025-02-29 00:00:00",
            "1234567-01-01 00:00:00",
            "12",
            "+12:34",
            " T12:34:56",
            "",
            " ",
        ] {
            assert_eq!(ts(s), None, "{s:?}");
        }
    }

    #[test]
    fn zones_as_java_time_reads_them() {
        let utc = SessionTimeZone::utc();
        let noon = at(2025, 4, 16, 12, 34, 56);
        let (h, m) = (3_600 * MICROS_PER_SECOND, 60 * MICROS_PER_SECOND);
        for (zone, offset) in [
            ("Z", 0),
            (" Z", 0),
            ("UTC", 0),
            (" UTC", 0),
            (" GMT", 0),
            (" UT", 0),
            (" GMT0", 0),
            (" GMT+1", h),
            (" GMT+01:30", h + 30 * m),
            (" UTC+2", 2 * h),
            (" UT+3", 3 * h),
            (" UTC+02:00:30", 2 * h + 30 * MICROS_PER_SECOND),
            ("+02:00:30", 2 * h + 30 * MICROS_PER_SECOND),
            ("+2:00", 2 * h),
            ("+02:3", 2 * h + 3 * m),
            ("+02", 2 * h),
            ("+0230", 2 * h + 30 * m),
            ("+023000", 2 * h + 30 * m),
            ("-08", -8 * h),
            (" -0800", -8 * h),
            (" +2", 2 * h),
            (" +1:5", h + 5 * m),
            ("+14:00", 14 * h),
            ("+18:00", 18 * h),
            (" PST", -7 * h),
            (" EST", -5 * h),
            (" MST", -7 * h),
            (" HST", -10 * h),
            (" CET", 2 * h),
            (" IST", 5 * h + 30 * m),
            (" America/Los_Angeles", -7 * h),
            (" Europe/Paris", 2 * h),
            (" Etc/GMT+5", -5 * h),
        ] {
            let text = format!("2025-04-16 12:34:56{zone}");
            assert_eq!(parse_timestamp(&text, &utc), Some(noon - offset), "{text}");
            // timestamp_ntz checks the zone and ignores it.
            assert_eq!(parse_timestamp_ntz(&text), Some(noon), "{text}");
        }
        for zone in [
            "z",
            " utc",
            " gmt",
            " foo",
            " europe/paris",
            "+19:00",
            "+18:30",
            "+123",
        ] {
            let text = format!("2025-04-16 12:34:56{zone}");
            assert_eq!(parse_timestamp(&text, &utc), None, "{text}");
            assert_eq!(parse_timestamp_ntz(&text), None, "{text}");
        }
    }

    #[test]
    fn a_time_alone_is_today_for_a_timestamp_and_nothing_for_ntz() {
        let utc = SessionTimeZone::utc();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_micros() as i64;
        for (text, time_of_day) in [
            ("12:34:56", at(1970, 1, 1, 12, 34, 56)),
            ("T12:34:56", at(1970, 1, 1, 12, 34, 56)),
            (" 12:34", at(1970, 1, 1, 12, 34, 0)),
            ("T12", at(1970, 1, 1, 12, 0, 0)),
        ] {
            let t = parse_timestamp(text, &utc).unwrap();
            assert_eq!(t.rem_euclid(MICROS_PER_DAY), time_of_day, "{text}");
            assert!((t - now).abs() < MICROS_PER_DAY, "{text}");
            assert_eq!(parse_timestamp_ntz(text), None, "{text}");
        }
    }

    #[test]
    fn date_forms_as_spark_reads_them() {
        let d = |y, m, day| Some(days_from_civil(y, m, day) as i32);
        assert_eq!(parse_date("2025-04-16T12:34Z"), d(2025, 4, 16));
        assert_eq!(parse_date("2025-04-16Tfoo"), d(2025, 4, 16));
        assert_eq!(parse_date("2025-4-16 anything"), d(2025, 4, 16));
        assert_eq!(parse_date("2025-04"), d(2025, 4, 1));
        assert_eq!(parse_date("-0001-01-01"), d(-1, 1, 1));
        assert_eq!(parse_date("1234567-01-01 00:00:00"), d(1_234_567, 1, 1));
        for s in [
            "2025-04 x",
            "2025-04T",
            "2025-04-16x",
            "2025-04-16Z",
            "2025-04-",
            "12345678-01-01",
            "12:34:56",
            "",
        ] {
            assert_eq!(parse_date(s), None, "{s:?}");
        }
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
