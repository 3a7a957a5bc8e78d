//! Bounds-checked little-endian reads shared by the metadata and value views.
use super::error::{Result, malformed};

/// Reads an unsigned little-endian integer of `width` (1..=4) bytes at `pos`.
#[inline]
pub(crate) fn read_uint(bytes: &[u8], pos: usize, width: usize) -> Result<u32> {
    let Some(s) = bytes.get(pos..pos.wrapping_add(width)) else {
        return out_of_bounds(pos, width);
    };
    Ok(match width {
        1 => s[0] as u32,
        2 => u16::from_le_bytes([s[0], s[1]]) as u32,
        3 => u32::from_le_bytes([s[0], s[1], s[2], 0]),
        _ => u32::from_le_bytes([s[0], s[1], s[2], s[3]]),
    })
}

#[cold]
#[inline(never)]
fn out_of_bounds(pos: usize, width: usize) -> Result<u32> {
    malformed(format!("{width}-byte integer at {pos} is out of bounds"))
}

/// Reads `N` bytes at `pos`.
#[inline]
pub(crate) fn read_array<const N: usize>(bytes: &[u8], pos: usize) -> Result<[u8; N]> {
    match bytes.get(pos..pos.wrapping_add(N)) {
        Some(s) => Ok(s.try_into().expect("slice has length N")),
        None => malformed(format!("{N}-byte value at {pos} is out of bounds")),
    }
}

/// Returns `bytes[start..start + len]` or a malformed error.
#[inline]
pub(crate) fn slice(bytes: &[u8], start: usize, len: usize) -> Result<&[u8]> {
    match start.checked_add(len).and_then(|end| bytes.get(start..end)) {
        Some(s) => Ok(s),
        None => malformed(format!("{len} bytes at {start} are out of bounds")),
    }
}

/// The number of bytes (1..=4) needed to store `max` as an unsigned integer.
#[inline]
pub(crate) fn width_for(max: usize) -> usize {
    if max <= 0xFF {
        1
    } else if max <= 0xFFFF {
        2
    } else if max <= 0xFF_FFFF {
        3
    } else {
        4
    }
}

/// Appends `v` as a little-endian integer of `width` bytes.
#[inline]
pub(crate) fn write_uint(out: &mut Vec<u8>, v: u32, width: usize) {
    // A fixed four-byte copy then a truncate: no variable-length copy on this hot path.
    let end = out.len() + width;
    out.extend_from_slice(&v.to_le_bytes());
    out.truncate(end);
}

/// A word made of the bytes of `b` (1 to 8 bytes) that covers every one of them, read without a
/// variable-length copy: overlapping loads of the first and last bytes. For a given length the
/// word determines the bytes, so it serves for equality and hashing; and a check that holds for
/// each byte of the word holds for each byte of `b`. Empty input gives 0.
#[inline]
pub(crate) fn covering_word(b: &[u8]) -> u64 {
    let n = b.len();
    if n >= 4 {
        let lo = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64;
        let hi = u32::from_le_bytes([b[n - 4], b[n - 3], b[n - 2], b[n - 1]]) as u64;
        lo | (hi << 32)
    } else if n > 0 {
        let (first, middle, last) = (b[0] as u64, b[n / 2] as u64, b[n - 1] as u64);
        (first * 0x0101_0101_0101_0000) | (middle << 8) | last
    } else {
        0
    }
}

/// Rows written before an output buffer is sized for the whole batch, by
/// [`reserve_at_sample_rate`].
const SIZE_SAMPLE_ROWS: usize = 64;

/// Called after each row of a batch of `rows`, `written` of them done: once the first
/// [`SIZE_SAMPLE_ROWS`] are written, reserves room in `out` for the rest at their rate (plus an
/// eighth, at most 256 MiB), so that the buffer rarely grows and copies what it holds.
#[inline]
pub(crate) fn reserve_at_sample_rate(out: &mut Vec<u8>, written: usize, rows: usize) {
    if written == SIZE_SAMPLE_ROWS && rows > SIZE_SAMPLE_ROWS {
        let rest = out.len() / SIZE_SAMPLE_ROWS * (rows - SIZE_SAMPLE_ROWS);
        out.reserve((rest + rest / 8).min(256 << 20));
    }
}

/// Appends `b` to `out`. Up to 16 bytes are copied inline as two overlapping loads and stores
/// (the short keys, strings and numbers of JSON output), where a call to `memcpy` would cost
/// more than the copy itself; longer input is appended with `extend_from_slice`.
#[inline(always)]
pub(crate) fn push_short(out: &mut Vec<u8>, b: &[u8]) {
    push_framed(out, b"", b, b"");
}

/// Appends `lead`, `b` and `tail` with one capacity check and one length update (`lead` and
/// `tail` are short constants such as `"` or `":`); `b` is copied as by [`push_short`].
#[inline(always)]
pub(crate) fn push_framed(out: &mut Vec<u8>, lead: &[u8], b: &[u8], tail: &[u8]) {
    let n = b.len();
    if n > 16 {
        out.reserve(lead.len() + n + tail.len());
        out.extend_from_slice(lead);
        out.extend_from_slice(b);
        out.extend_from_slice(tail);
        return;
    }
    out.reserve(lead.len() + 16 + tail.len());
    let len = out.len();
    let src = b.as_ptr();
    // SAFETY: `reserve` leaves `lead.len() + 16 + tail.len()` writable bytes after `len`; `b` is
    // written at `lead.len()` by stores that end within 16 bytes of it, and `tail` right after
    // its `n` bytes. Loads read bytes of `b` only (offsets `0..n`). All bytes up to the new
    // length are written before `set_len` makes them part of the vector.
    unsafe {
        let base = out.as_mut_ptr().add(len);
        std::ptr::copy_nonoverlapping(lead.as_ptr(), base, lead.len());
        let dst = base.add(lead.len());
        if n >= 8 {
            let lo = std::ptr::read_unaligned(src as *const u64);
            let hi = std::ptr::read_unaligned(src.add(n - 8) as *const u64);
            std::ptr::write_unaligned(dst as *mut u64, lo);
            std::ptr::write_unaligned(dst.add(n - 8) as *mut u64, hi);
        } else if n >= 4 {
            let lo = std::ptr::read_unaligned(src as *const u32);
            let hi = std::ptr::read_unaligned(src.add(n - 4) as *const u32);
            std::ptr::write_unaligned(dst as *mut u32, lo);
            std::ptr::write_unaligned(dst.add(n - 4) as *mut u32, hi);
        } else if n > 0 {
            *dst = *src;
            *dst.add(n / 2) = *src.add(n / 2);
            *dst.add(n - 1) = *src.add(n - 1);
        }
        std::ptr::copy_nonoverlapping(tail.as_ptr(), dst.add(n), tail.len());
        out.set_len(len + lead.len() + n + tail.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_short_copies_every_length() {
        let src: Vec<u8> = (b'a'..=b'z').chain(b'A'..=b'Z').collect();
        for len in 0..=src.len() {
            // A fresh vector (no spare capacity) and one with room, after existing bytes.
            for mut out in [Vec::new(), Vec::with_capacity(64)] {
                out.extend_from_slice(b"<>");
                push_short(&mut out, &src[..len]);
                assert_eq!(&out[..2], b"<>");
                assert_eq!(&out[2..], &src[..len], "length {len}");
                push_framed(&mut out, b",\"", &src[..len], b"\":");
                let framed = [&b",\""[..], &src[..len], b"\":"].concat();
                assert_eq!(&out[2 + len..], &framed[..], "length {len}");
            }
        }
    }
}
