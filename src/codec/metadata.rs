//! The metadata (key dictionary) of a variant.
use super::bytes::{read_uint, slice};
use super::error::{Result, VariantError, malformed};

/// Metadata with an empty dictionary (version 1, one-byte offsets): enough for any value without
/// objects.
pub const EMPTY_METADATA: &[u8] = &[0x01, 0x00, 0x00];

/// A view over variant metadata bytes.
///
/// [`Metadata::try_new`] checks the header and that the offset table lies within the bytes;
/// [`Metadata::validate`] checks the rest (offsets in order, UTF-8, sorted flag honest).
/// Every accessor is bounds-checked, so corrupt bytes give errors, never panics.
#[derive(Debug, Clone, Copy)]
pub struct Metadata<'a> {
    bytes: &'a [u8],
    offset_size: usize,
    len: usize,
    sorted: bool,
    strings_start: usize,
}

/// The format version in a metadata header byte (1 is the only one defined).
#[inline(always)]
pub(crate) const fn metadata_version(header: u8) -> u8 {
    header & 0x0F
}

impl<'a> Metadata<'a> {
    /// Reads the header of `bytes`: version 1, offset size, dictionary size, and the offset table bounds.
    pub fn try_new(bytes: &'a [u8]) -> Result<Self> {
        let Some(&header) = bytes.first() else {
            return malformed("empty metadata");
        };
        let version = metadata_version(header);
        if version != 1 {
            return Err(VariantError::UnsupportedVersion(version));
        }
        let sorted = header & 0x10 != 0;
        let offset_size = ((header >> 6) & 0x03) as usize + 1;
        let len = read_uint(bytes, 1, offset_size)? as usize;
        let strings_start = (len + 2)
            .checked_mul(offset_size)
            .and_then(|n| n.checked_add(1))
            .filter(|&n| n <= bytes.len());
        let Some(strings_start) = strings_start else {
            return malformed(format!(
                "metadata dictionary of {len} keys does not fit in {} bytes",
                bytes.len()
            ));
        };
        Ok(Metadata {
            bytes,
            offset_size,
            len,
            sorted,
            strings_start,
        })
    }

    /// The raw bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Number of keys in the dictionary.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the dictionary has no keys.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The `sorted_strings` header flag.
    pub fn is_sorted(&self) -> bool {
        self.sorted
    }

    #[inline]
    fn offset(&self, i: usize) -> Result<usize> {
        Ok(read_uint(self.bytes, 1 + (i + 1) * self.offset_size, self.offset_size)? as usize)
    }

    /// The raw bytes of key `id`.
    #[inline]
    pub fn key_bytes(&self, id: usize) -> Result<&'a [u8]> {
        if id >= self.len {
            return malformed(format!(
                "field id {id} is out of range for a dictionary of {} keys",
                self.len
            ));
        }
        let start = self.offset(id)?;
        let end = self.offset(id + 1)?;
        if end < start {
            return malformed(format!("metadata offsets of key {id} decrease"));
        }
        slice(self.bytes, self.strings_start + start, end - start)
    }

    /// Key `id` as a string.
    #[inline]
    pub fn key(&self, id: usize) -> Result<&'a str> {
        let b = self.key_bytes(id)?;
        std::str::from_utf8(b).or_else(|_| malformed(format!("key {id} is not valid UTF-8")))
    }

    /// The id of `name` in the dictionary, if present (binary search when sorted).
    pub fn find(&self, name: &str) -> Result<Option<usize>> {
        let target = name.as_bytes();
        if self.sorted {
            let (mut lo, mut hi) = (0, self.len);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                match self.key_bytes(mid)?.cmp(target) {
                    std::cmp::Ordering::Less => lo = mid + 1,
                    std::cmp::Ordering::Greater => hi = mid,
                    std::cmp::Ordering::Equal => return Ok(Some(mid)),
                }
            }
            Ok(None)
        } else {
            for id in 0..self.len {
                if self.key_bytes(id)? == target {
                    return Ok(Some(id));
                }
            }
            Ok(None)
        }
    }

    /// Checks every offset, that every key is UTF-8, and, when the sorted flag is set, that keys are
    /// strictly increasing.
    pub fn validate(&self) -> Result<()> {
        let mut prev_end = 0;
        if self.len > 0 && self.offset(0)? != 0 {
            return malformed("the first metadata offset is not 0");
        }
        let mut prev: Option<&[u8]> = None;
        for id in 0..self.len {
            let end = self.offset(id + 1)?;
            if end < prev_end {
                return malformed(format!("metadata offsets of key {id} decrease"));
            }
            prev_end = end;
            let key = self.key_bytes(id)?;
            if std::str::from_utf8(key).is_err() {
                return malformed(format!("key {id} is not valid UTF-8"));
            }
            if self.sorted {
                if let Some(p) = prev
                    && p >= key
                {
                    return malformed(
                        "metadata is flagged sorted but its keys are not sorted and unique",
                    );
                }
                prev = Some(key);
            }
        }
        Ok(())
    }
}
