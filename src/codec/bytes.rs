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
