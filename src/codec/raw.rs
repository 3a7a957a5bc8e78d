//! Lean readers over raw variant bytes for hot loops (`variant_get`'s path lookup, `to_json`):
//! small values instead of views, inline key comparison, and one [`Unreadable`] marker instead of
//! detailed errors. Callers re-read unreadable input with the checked views for the message.

use super::value::primitive;
/// Bytes a raw reader could not read; the caller re-reads them with the checked views
/// ([`super::Variant`]) for the precise error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unreadable;

/// Byte-wise order of two (short) keys, inlined: object keys are a few bytes long, where a call
/// to `memcmp` costs more than the comparison.
#[inline]
pub(crate) fn compare_keys(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    for (x, y) in a.iter().zip(b) {
        if x != y {
            return x.cmp(y);
        }
    }
    a.len().cmp(&b.len())
}

/// A key being searched for, with its first (up to) 8 bytes as a big-endian word when it is that
/// short, so that most comparisons against dictionary keys are one integer comparison.
pub(crate) struct KeyProbe<'k> {
    bytes: &'k [u8],
    word: Option<u64>,
}

impl<'k> KeyProbe<'k> {
    #[inline]
    pub(crate) fn new(bytes: &'k [u8]) -> Self {
        let word = (bytes.len() <= 8).then(|| {
            let mut w = [0u8; 8];
            w[..bytes.len()].copy_from_slice(bytes);
            u64::from_be_bytes(w)
        });
        KeyProbe { bytes, word }
    }

    /// A probe whose word was computed before by [`KeyProbe::new`] (for keys used many times).
    #[inline]
    pub(crate) fn with_word(bytes: &'k [u8], word: Option<u64>) -> Self {
        debug_assert_eq!(word, KeyProbe::new(bytes).word);
        KeyProbe { bytes, word }
    }

    /// The word of a key of at most 8 bytes.
    pub(crate) fn word(&self) -> Option<u64> {
        self.word
    }
}

#[inline]
pub(crate) fn raw_uint(bytes: &[u8], pos: usize, width: usize) -> Result<usize, Unreadable> {
    let s = bytes.get(pos..pos + width).ok_or(Unreadable)?;
    Ok(match width {
        1 => s[0] as usize,
        2 => u16::from_le_bytes([s[0], s[1]]) as usize,
        3 => u32::from_le_bytes([s[0], s[1], s[2], 0]) as usize,
        _ => u32::from_le_bytes([s[0], s[1], s[2], s[3]]) as usize,
    })
}

/// The integer of an INT8..INT64 value (type id `id`), sign-extended from its 1, 2, 4 or 8
/// little-endian bytes; read as one 8-byte word when the slice has room after the value.
#[inline(always)]
pub(crate) fn raw_int(value: &[u8], id: u8) -> Result<i64, Unreadable> {
    let width = 1usize << (id - primitive::INT8);
    let unused = 64 - 8 * width as u32;
    let word = match value.get(1..9) {
        Some(word) => i64::from_le_bytes(word.try_into().expect("8 bytes")),
        None => {
            let bytes = value.get(1..1 + width).ok_or(Unreadable)?;
            let mut word = [0u8; 8];
            word[..width].copy_from_slice(bytes);
            i64::from_le_bytes(word)
        }
    };
    // Shift the value's bytes to the top, then back with the sign.
    Ok(word.wrapping_shl(unused).wrapping_shr(unused))
}

/// `PREFIX_MASKS[n]` keeps the first `n` bytes of a big-endian word.
const PREFIX_MASKS: [u64; 9] = [
    0,
    0xFF00_0000_0000_0000,
    0xFFFF_0000_0000_0000,
    0xFFFF_FF00_0000_0000,
    0xFFFF_FFFF_0000_0000,
    0xFFFF_FFFF_FF00_0000,
    0xFFFF_FFFF_FFFF_0000,
    0xFFFF_FFFF_FFFF_FF00,
    u64::MAX,
];

/// The order of the key `strings[start..end]` relative to the key `bytes` (as
/// [`compare_keys`]), whose big-endian `word` is given when it is at most 8 bytes long. Keys of
/// at most 8 bytes with 8 readable bytes after their start then compare as one masked word.
#[inline(always)]
fn compare_key_at(
    strings: &[u8],
    start: usize,
    end: usize,
    word: Option<u64>,
    bytes: &[u8],
) -> Result<std::cmp::Ordering, Unreadable> {
    let len = end.wrapping_sub(start);
    if let Some(word) = word
        && len <= 8
        && let Some(chunk) = strings.get(start..start + 8)
    {
        let raw = u64::from_be_bytes(chunk.try_into().expect("8 bytes"));
        let masked = raw & PREFIX_MASKS[len];
        return Ok(masked.cmp(&word).then(len.cmp(&bytes.len())));
    }
    let key = strings.get(start..end).ok_or(Unreadable)?;
    Ok(compare_keys(key, bytes))
}

/// A key searched for: [`KeyProbe`] for any key, [`ShortKeyProbe`] for keys of at most 8 bytes
/// (whose comparisons then need no check for the word).
pub(crate) trait Probe {
    /// The order of the key `strings[start..end]` relative to this one (as [`compare_keys`]).
    fn compare_at(
        &self,
        strings: &[u8],
        start: usize,
        end: usize,
    ) -> Result<std::cmp::Ordering, Unreadable>;
    /// The bytes searched for.
    fn bytes(&self) -> &[u8];
}

impl Probe for KeyProbe<'_> {
    #[inline(always)]
    fn compare_at(
        &self,
        strings: &[u8],
        start: usize,
        end: usize,
    ) -> Result<std::cmp::Ordering, Unreadable> {
        compare_key_at(strings, start, end, self.word, self.bytes)
    }
    #[inline(always)]
    fn bytes(&self) -> &[u8] {
        self.bytes
    }
}

/// A key of at most 8 bytes, with its word (see [`KeyProbe`]).
pub(crate) struct ShortKeyProbe<'k> {
    bytes: &'k [u8],
    word: u64,
}

impl<'k> ShortKeyProbe<'k> {
    /// The probe for `bytes` with the word [`KeyProbe::new`] computed for them.
    #[inline(always)]
    pub(crate) fn new(bytes: &'k [u8], word: u64) -> Self {
        debug_assert_eq!(Some(word), KeyProbe::new(bytes).word);
        ShortKeyProbe { bytes, word }
    }
}

impl Probe for ShortKeyProbe<'_> {
    #[inline(always)]
    fn compare_at(
        &self,
        strings: &[u8],
        start: usize,
        end: usize,
    ) -> Result<std::cmp::Ordering, Unreadable> {
        compare_key_at(strings, start, end, Some(self.word), self.bytes)
    }
    #[inline(always)]
    fn bytes(&self) -> &[u8] {
        self.bytes
    }
}

/// Reading keys by id, for searches written once over both dictionary readers ([`RawKeys`] for
/// any offset width, [`NarrowKeys`] for one-byte offsets).
pub(crate) trait KeyDictionary<'a> {
    /// Whether the dictionary is flagged sorted (then id order is key order).
    fn sorted(&self) -> bool;
    /// The order of key `id` relative to `probe` (as [`compare_keys`]).
    fn compare(&self, id: usize, probe: &impl Probe) -> Result<std::cmp::Ordering, Unreadable>;
    /// The bytes of key `id`.
    fn key(&self, id: usize) -> Result<&'a [u8], Unreadable>;
}

impl<'a> KeyDictionary<'a> for RawKeys<'a> {
    #[inline(always)]
    fn sorted(&self) -> bool {
        self.sorted
    }
    #[inline(always)]
    fn compare(&self, id: usize, probe: &impl Probe) -> Result<std::cmp::Ordering, Unreadable> {
        RawKeys::compare(self, id, probe)
    }
    #[inline(always)]
    fn key(&self, id: usize) -> Result<&'a [u8], Unreadable> {
        RawKeys::key(self, id)
    }
}

/// A dictionary whose offsets are one byte wide (up to 255 bytes of keys: the usual row-level
/// metadata), read without the width dispatch of [`RawKeys`]. It accepts exactly the headers
/// [`RawKeys::new`] accepts with that width.
pub(crate) struct NarrowKeys<'a> {
    /// `len + 1` offsets.
    offsets: &'a [u8],
    strings: &'a [u8],
    sorted: bool,
}

impl<'a> NarrowKeys<'a> {
    /// None when the metadata is not version 1 with one-byte offsets, or too short for its
    /// offset table.
    #[inline(always)]
    pub(crate) fn new(metadata: &'a [u8]) -> Option<Self> {
        let (&header, rest) = metadata.split_first()?;
        if header & 0xCF != 0x01 {
            return None;
        }
        let (&len, rest) = rest.split_first()?;
        let (offsets, strings) = rest.split_at_checked(len as usize + 1)?;
        Some(NarrowKeys {
            offsets,
            strings,
            sorted: header & 0x10 != 0,
        })
    }

    #[inline(always)]
    fn bounds(&self, id: usize) -> Result<(usize, usize), Unreadable> {
        match self.offsets.get(id..id + 2) {
            Some(&[start, end]) => Ok((start as usize, end as usize)),
            _ => Err(Unreadable),
        }
    }
}

impl<'a> KeyDictionary<'a> for NarrowKeys<'a> {
    #[inline(always)]
    fn sorted(&self) -> bool {
        self.sorted
    }
    #[inline(always)]
    fn compare(&self, id: usize, probe: &impl Probe) -> Result<std::cmp::Ordering, Unreadable> {
        let (start, end) = self.bounds(id)?;
        probe.compare_at(self.strings, start, end)
    }
    #[inline(always)]
    fn key(&self, id: usize) -> Result<&'a [u8], Unreadable> {
        let (start, end) = self.bounds(id)?;
        self.strings.get(start..end).ok_or(Unreadable)
    }
}

/// The field table of an object, for searches written once over both readers ([`RawChildren`]
/// for any width, [`NarrowFields`] for one-byte counts, ids and offsets).
pub(crate) trait FieldTable<'a> {
    /// The number of fields.
    fn num(&self) -> usize;
    /// Field id `i`.
    fn id(&self, i: usize) -> Result<usize, Unreadable>;
    /// Whether the field ids strictly ascend.
    fn ids_ascend(&self) -> Result<bool, Unreadable>;
    /// Field `i`: its bytes from its offset to the end of the object's data.
    fn child(&self, i: usize) -> Result<&'a [u8], Unreadable>;
}

impl<'a> FieldTable<'a> for RawChildren<'a> {
    #[inline(always)]
    fn num(&self) -> usize {
        self.num
    }
    #[inline(always)]
    fn id(&self, i: usize) -> Result<usize, Unreadable> {
        RawChildren::id(self, i)
    }
    #[inline(always)]
    fn ids_ascend(&self) -> Result<bool, Unreadable> {
        RawChildren::ids_ascend(self, self.num)
    }
    #[inline(always)]
    fn child(&self, i: usize) -> Result<&'a [u8], Unreadable> {
        RawChildren::child(self, i)
    }
}

/// An object whose field count, ids and offsets are each one byte (the usual small object),
/// read without the width dispatch of [`RawLayout`] and [`RawChildren`].
pub(crate) struct NarrowFields<'a> {
    ids: &'a [u8],
    /// `num + 1` offsets.
    offsets: &'a [u8],
    data: &'a [u8],
}

impl<'a> NarrowFields<'a> {
    /// None when the object at `value[0]` has a wider layout; an error where [`RawLayout::read`]
    /// and [`RawLayout::children`] give one.
    #[inline(always)]
    pub(crate) fn new(value: &'a [u8]) -> Option<Result<Self, Unreadable>> {
        // Object, one-byte offsets and ids, one-byte count.
        if value.first()? & 0x7F != super::value::basic_type::OBJECT {
            return None;
        }
        Some((|| {
            let num = *value.get(1).ok_or(Unreadable)? as usize;
            let table = value.get(2..3 + 2 * num).ok_or(Unreadable)?;
            let (ids, offsets) = table.split_at(num);
            let end = offsets[num] as usize;
            let data = value
                .get(3 + 2 * num..3 + 2 * num + end)
                .ok_or(Unreadable)?;
            Ok(NarrowFields { ids, offsets, data })
        })())
    }
}

impl<'a> FieldTable<'a> for NarrowFields<'a> {
    #[inline(always)]
    fn num(&self) -> usize {
        self.ids.len()
    }
    #[inline(always)]
    fn id(&self, i: usize) -> Result<usize, Unreadable> {
        self.ids.get(i).map(|&b| b as usize).ok_or(Unreadable)
    }
    #[inline(always)]
    fn ids_ascend(&self) -> Result<bool, Unreadable> {
        // An index loop without early exit (a few bytes): `windows().all()` was left out of
        // line, at twice the instructions.
        let ids = self.ids;
        let mut ascend = true;
        for i in 1..ids.len() {
            ascend &= ids[i - 1] < ids[i];
        }
        Ok(ascend)
    }
    #[inline(always)]
    fn child(&self, i: usize) -> Result<&'a [u8], Unreadable> {
        child_at(self.data, *self.offsets.get(i).ok_or(Unreadable)? as usize)
    }
}

/// The key dictionary of raw metadata bytes.
#[derive(Clone, Copy)]
pub(crate) struct RawKeys<'a> {
    pub(crate) bytes: &'a [u8],
    pub(crate) offset_size: usize,
    pub(crate) len: usize,
    pub(crate) sorted: bool,
    pub(crate) strings_start: usize,
    /// The offset table (`len + 1` offsets) and the key bytes after it.
    offsets: &'a [u8],
    strings: &'a [u8],
    /// Where the last key ends in `strings`.
    region_end: usize,
}

impl<'a> RawKeys<'a> {
    #[inline]
    pub(crate) fn new(bytes: &'a [u8]) -> Result<Self, Unreadable> {
        let header = *bytes.first().ok_or(Unreadable)?;
        if super::metadata::metadata_version(header) != 1 {
            return Err(Unreadable);
        }
        let offset_size = ((header >> 6) & 0x03) as usize + 1;
        let len = raw_uint(bytes, 1, offset_size)?;
        let strings_start = 1 + (len + 2) * offset_size;
        let offsets = bytes
            .get(1 + offset_size..strings_start)
            .ok_or(Unreadable)?;
        // The end of the last key (0 when unreadable: then no key is in the checked region).
        let region_end = raw_uint(offsets, len * offset_size, offset_size).unwrap_or(0);
        Ok(RawKeys {
            bytes,
            offset_size,
            len,
            sorted: header & 0x10 != 0,
            strings_start,
            offsets,
            strings: &bytes[strings_start..],
            region_end,
        })
    }

    /// The bytes of all keys (the dictionary's string region).
    pub(crate) fn strings(&self) -> Result<&'a [u8], Unreadable> {
        self.strings.get(..self.region_end).ok_or(Unreadable)
    }

    /// Checks that every key is UTF-8 (the whole strings region at once, and every key boundary
    /// on a character boundary), so that keys can then be used as text without checks.
    pub(crate) fn check_utf8(&self) -> Result<(), Unreadable> {
        let end = raw_uint(
            self.bytes,
            1 + (self.len + 1) * self.offset_size,
            self.offset_size,
        )?;
        let region = self
            .bytes
            .get(self.strings_start..self.strings_start + end)
            .ok_or(Unreadable)?;
        let text = std::str::from_utf8(region).map_err(|_| Unreadable)?;
        for id in 0..self.len {
            let at = raw_uint(
                self.bytes,
                1 + (id + 1) * self.offset_size,
                self.offset_size,
            )?;
            if !text.is_char_boundary(at) {
                return Err(Unreadable);
            }
        }
        Ok(())
    }

    /// The order of key `id` relative to `probe` (as [`compare_keys`]).
    #[inline]
    pub(crate) fn compare(
        &self,
        id: usize,
        probe: &impl Probe,
    ) -> Result<std::cmp::Ordering, Unreadable> {
        let (start, end) = self.bounds(id)?;
        probe.compare_at(self.strings, start, end)
    }

    #[inline]
    fn bounds(&self, id: usize) -> Result<(usize, usize), Unreadable> {
        Ok(match self.offset_size {
            1 => match self.offsets.get(id..id + 2) {
                Some(&[start, end]) => (start as usize, end as usize),
                _ => return Err(Unreadable),
            },
            n => (
                raw_uint(self.offsets, id * n, n)?,
                raw_uint(self.offsets, (id + 1) * n, n)?,
            ),
        })
    }

    /// Key `id` when it lies within [`RawKeys::strings`], the region that checks over the whole
    /// dictionary (plain ASCII, UTF-8) cover; corrupt offsets can point past it.
    #[inline(always)]
    pub(crate) fn checked_region_key(&self, id: usize) -> Result<&'a [u8], Unreadable> {
        let (start, end) = self.bounds(id)?;
        if end > self.region_end {
            return Err(Unreadable);
        }
        self.strings.get(start..end).ok_or(Unreadable)
    }

    #[inline(always)]
    pub(crate) fn key(&self, id: usize) -> Result<&'a [u8], Unreadable> {
        let (start, end) = match self.offset_size {
            1 => match self.offsets.get(id..id + 2) {
                Some(&[start, end]) => (start as usize, end as usize),
                _ => return Err(Unreadable),
            },
            n => (
                raw_uint(self.offsets, id * n, n)?,
                raw_uint(self.offsets, (id + 1) * n, n)?,
            ),
        };
        self.strings.get(start..end).ok_or(Unreadable)
    }
}

/// An object or array header.
pub(crate) struct RawLayout {
    pub(crate) num: usize,
    id_size: usize,
    offset_size: usize,
    ids_start: usize,
    offsets_start: usize,
    /// Where the children's data starts.
    pub(crate) data_start: usize,
}

impl RawLayout {
    #[inline]
    pub(crate) fn read(value: &[u8], is_object: bool) -> Result<Self, Unreadable> {
        let header = value[0] >> 2;
        let offset_size = (header & 0x03) as usize + 1;
        let (id_size, is_large) = if is_object {
            (((header >> 2) & 0x03) as usize + 1, header & 0x10 != 0)
        } else {
            (0, header & 0x04 != 0)
        };
        let count_size = if is_large { 4 } else { 1 };
        let num = raw_uint(value, 1, count_size)?;
        let ids_start = 1 + count_size;
        let offsets_start = ids_start + num * id_size;
        let data_start = offsets_start + (num + 1) * offset_size;
        if data_start > value.len() {
            return Err(Unreadable);
        }
        Ok(RawLayout {
            num,
            id_size,
            offset_size,
            ids_start,
            offsets_start,
            data_start,
        })
    }

    /// The field ids, the offsets (`num + 1`) and the data of this container in `value`, for
    /// loops over all children (see [`RawChildren`]).
    #[inline]
    pub(crate) fn children<'a>(&self, value: &'a [u8]) -> Result<RawChildren<'a>, Unreadable> {
        // `read` checked that `data_start` is within `value`.
        let ids = &value[self.ids_start..self.offsets_start];
        let offsets = &value[self.offsets_start..self.data_start];
        let end = raw_uint(offsets, self.num * self.offset_size, self.offset_size)?;
        let data = value
            .get(self.data_start..self.data_start + end)
            .ok_or(Unreadable)?;
        Ok(RawChildren {
            num: self.num,
            ids,
            offsets,
            data,
            id_size: self.id_size,
            offset_size: self.offset_size,
        })
    }

    /// Array element `i`: its bytes from its offset to the next element's (one lookup; loops
    /// over every element use [`RawChildren::element`]).
    #[inline]
    pub(crate) fn child<'a>(&self, value: &'a [u8], i: usize) -> Result<&'a [u8], Unreadable> {
        let start = self.data_start
            + raw_uint(
                value,
                self.offsets_start + i * self.offset_size,
                self.offset_size,
            )?;
        // Up to the next element's offset, as every array read (see `RawChildren::element`).
        let end = self.data_start
            + raw_uint(
                value,
                self.offsets_start + (i + 1) * self.offset_size,
                self.offset_size,
            )?;
        if start >= end {
            return Err(Unreadable);
        }
        value.get(start..end).ok_or(Unreadable)
    }
}

/// The children of one container, with its data end read once: for loops over every child.
pub(crate) struct RawChildren<'a> {
    num: usize,
    ids: &'a [u8],
    offsets: &'a [u8],
    data: &'a [u8],
    id_size: usize,
    offset_size: usize,
}

impl<'a> RawChildren<'a> {
    /// The number of children.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.num
    }

    /// Field id `i` (objects).
    #[inline]
    pub(crate) fn id(&self, i: usize) -> Result<usize, Unreadable> {
        uint_at(self.ids, i, self.id_size)
    }

    /// Whether the first `num` field ids strictly ascend.
    #[inline]
    pub(crate) fn ids_ascend(&self, num: usize) -> Result<bool, Unreadable> {
        if self.id_size == 1 {
            let ids = self.ids.get(..num).ok_or(Unreadable)?;
            return Ok(ids.windows(2).all(|w| w[0] < w[1]));
        }
        for i in 1..num {
            if self.id(i - 1)? >= self.id(i)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Child `i`: its bytes from its offset to the end of the container's data.
    #[inline]
    pub(crate) fn child(&self, i: usize) -> Result<&'a [u8], Unreadable> {
        child_at(self.data, uint_at(self.offsets, i, self.offset_size)?)
    }

    /// Array element `i`: its bytes from its offset to the next one's, which must be greater (as
    /// [`super::value::ContainerLayout::element`]: elements never share bytes).
    #[inline]
    pub(crate) fn element(&self, i: usize) -> Result<&'a [u8], Unreadable> {
        let start = uint_at(self.offsets, i, self.offset_size)?;
        let end = uint_at(self.offsets, i + 1, self.offset_size)?;
        match self.data.get(start..end) {
            Some(element) if !element.is_empty() => Ok(element),
            _ => Err(Unreadable),
        }
    }

    /// Child `i` within `left` bytes: its bytes from its offset, at most `left` of them (an
    /// object walk passes what its earlier fields left of the data, so that fields sharing bytes
    /// cannot make it longer than the object).
    #[inline]
    pub(crate) fn child_within(&self, i: usize, left: usize) -> Result<&'a [u8], Unreadable> {
        let start = uint_at(self.offsets, i, self.offset_size)?;
        let end = self.data.len().min(start.saturating_add(left));
        match self.data.get(start..end) {
            Some(child) if !child.is_empty() => Ok(child),
            _ => Err(Unreadable),
        }
    }

    /// The length of the container's data (its children's bytes).
    #[inline]
    pub(crate) fn data_len(&self) -> usize {
        self.data.len()
    }
}

/// The child starting at `start` in a container's `data`: its bytes to the end of the data (a
/// child has at least its header byte).
#[inline(always)]
fn child_at(data: &[u8], start: usize) -> Result<&[u8], Unreadable> {
    match data.get(start..) {
        Some(child) if !child.is_empty() => Ok(child),
        _ => Err(Unreadable),
    }
}

/// The `i`-th unsigned integer of `width` bytes in `bytes` (one-byte widths, the usual case,
/// without the width dispatch).
#[inline]
fn uint_at(bytes: &[u8], i: usize, width: usize) -> Result<usize, Unreadable> {
    if width == 1 {
        bytes.get(i).map(|&b| b as usize).ok_or(Unreadable)
    } else {
        raw_uint(bytes, i * width, width)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A probe's word comparison orders every key as the byte-wise comparison does: keys
    /// shorter and longer than 8 bytes, prefixes, NUL and 0xFF bytes, keys at the start, the
    /// middle and the end of the dictionary's bytes, and dictionaries under 8 bytes.
    #[test]
    fn word_comparison_orders_like_bytes() {
        let keys: [&[u8]; 14] = [
            b"",
            b"a",
            b"ab",
            b"ab\0",
            b"ab\0\0",
            b"abc",
            b"user",
            b"users",
            b"abcdefgh",
            b"abcdefgh\0",
            b"abcdefghi",
            b"abcdefgg\xFF\xFF",
            b"\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF",
            b"b",
        ];
        let probes = keys.iter().filter(|k| k.len() <= 8);
        for probe in probes {
            let long = KeyProbe::new(probe);
            let short = ShortKeyProbe::new(probe, long.word().expect("short"));
            // Each key alone (short dictionaries), and each key after every other one.
            for before in std::iter::once(&b""[..]).chain(keys.iter().copied()) {
                for key in keys {
                    let strings = [before, key].concat();
                    let (start, end) = (before.len(), strings.len());
                    // Slices order byte by byte, then by length: the order keys have.
                    let expected = key.cmp(probe);
                    assert_eq!(long.compare_at(&strings, start, end), Ok(expected));
                    assert_eq!(short.compare_at(&strings, start, end), Ok(expected));
                    // The same key with more bytes after it.
                    let padded = [strings.as_slice(), b"zzzzzzzz"].concat();
                    assert_eq!(short.compare_at(&padded, start, end), Ok(expected));
                }
            }
        }
    }

    /// Key bounds outside the dictionary's bytes are unreadable, not ordered.
    #[test]
    fn word_comparison_rejects_bad_bounds() {
        let strings = b"currencyuser";
        let probe = KeyProbe::new(b"user");
        assert_eq!(probe.compare_at(strings, 8, 13), Err(Unreadable));
        assert_eq!(probe.compare_at(strings, 9, 8), Err(Unreadable));
        assert_eq!(
            probe.compare_at(strings, 8, 12),
            Ok(std::cmp::Ordering::Equal)
        );
        assert_eq!(
            probe.compare_at(strings, 0, 8),
            Ok(std::cmp::Ordering::Less)
        );
    }
}
