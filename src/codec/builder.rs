//! Writing variants: minimal widths, a sorted unique dictionary, buffers reused across rows.
use super::bytes::{covering_word, push_short, width_for, write_uint};
use super::error::{Result, VariantError};
use super::validate::DEFAULT_MAX_DEPTH;
use super::value::{Value, Variant, basic_type, decimal_digits, primitive};

/// Global keys kept across rows before the dictionary starts afresh (bounds memory when keys
/// never repeat, e.g. objects used as maps).
const MAX_KEPT_KEYS: usize = 4096;
/// Global key bytes kept across rows before the dictionary starts afresh.
const MAX_KEPT_BYTES: usize = 256 * 1024;

/// A key dictionary that interns strings into one buffer with an open-addressing hash table.
///
/// Keys are kept across rows (up to [`MAX_KEPT_KEYS`]), so a key seen before is found without
/// copying it or rebuilding the table; each row numbers the keys it uses from 0 in first-use
/// order (its local ids, which become the row's dictionary). Building a row allocates nothing
/// once the buffers have grown.
#[derive(Debug, Default)]
struct KeyDictionary {
    bytes: Vec<u8>,
    /// `offsets[g]..offsets[g + 1]` is global key `g` in `bytes`.
    offsets: Vec<u32>,
    /// Slots hold `global id + 1`; 0 is empty.
    table: Vec<u32>,
    /// Per global id: the row that last used it, and its local id in that row.
    seen: Vec<(u32, u32)>,
    /// The current row (a `seen` row of 0 means never).
    row: u32,
    /// The row's keys: global ids by local id.
    row_keys: Vec<u32>,
    /// Total bytes of the row's keys.
    row_bytes: usize,
    /// Per global id, its position among all global keys in byte order; valid for the first
    /// `ranked` global ids (keys added later are compared as bytes until ranks are recomputed).
    rank: Vec<u32>,
    ranked: usize,
    /// Global ids by rank (the inverse of `rank`), and a bit set of ranks (all zero between
    /// rows) that orders a row's keys without comparing them.
    by_rank: Vec<u32>,
    rank_bits: Vec<u64>,
    /// True when this row added a global key.
    added: bool,
    /// Per global id, the global id interned right after it last time, and the first one of
    /// the last row: objects of one kind repeat their key sequence, so most keys are found by
    /// one comparison with this guess, without hashing.
    next_guess: Vec<u32>,
    first_guess: u32,
    /// The global id interned last in this row.
    last: u32,
}

/// No global id.
const NO_KEY: u32 = u32::MAX;

#[inline]
fn hash_key(key: &[u8]) -> u64 {
    // FxHash-style multiplicative hash over 8-byte chunks.
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h: u64 = key.len() as u64;
    let mut chunks = key.chunks_exact(8);
    for c in &mut chunks {
        h = (h.rotate_left(5) ^ u64::from_le_bytes(c.try_into().unwrap())).wrapping_mul(K);
    }
    h = (h.rotate_left(5) ^ covering_word(chunks.remainder())).wrapping_mul(K);
    h ^ (h >> 29)
}

/// Key equality without a `memcmp` call for the short keys objects usually have.
#[inline]
fn key_eq(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n <= 8 {
        covering_word(a) == covering_word(b)
    } else if n <= 16 {
        covering_word(&a[..8]) == covering_word(&b[..8])
            && covering_word(&a[n - 8..]) == covering_word(&b[n - 8..])
    } else {
        a == b
    }
}

impl KeyDictionary {
    /// Starts a new row, keeping the keys seen so far unless there are too many; returns true when
    /// it started afresh (global ids are then renumbered).
    fn clear(&mut self) -> bool {
        self.row_keys.clear();
        self.row_bytes = 0;
        self.added = false;
        self.last = NO_KEY;
        self.row = self.row.wrapping_add(1);
        let global = self.offsets.len().saturating_sub(1);
        if self.row == 0 || global > MAX_KEPT_KEYS || self.bytes.len() > MAX_KEPT_BYTES {
            self.bytes.clear();
            self.offsets.clear();
            self.table.iter_mut().for_each(|s| *s = 0);
            self.seen.clear();
            self.rank.clear();
            self.by_rank.clear();
            self.next_guess.clear();
            self.first_guess = NO_KEY;
            self.ranked = 0;
            self.row = 1;
            self.offsets.push(0);
            return true;
        }
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        false
    }

    /// Number of keys the row uses.
    fn len(&self) -> usize {
        self.row_keys.len()
    }

    /// Total bytes of the row's keys.
    fn row_bytes(&self) -> usize {
        self.row_bytes
    }

    #[inline]
    fn global_key(&self, g: usize) -> &[u8] {
        &self.bytes[self.offsets[g] as usize..self.offsets[g + 1] as usize]
    }

    /// The length of global key `g`.
    #[inline]
    fn global_key_len(&self, g: usize) -> u32 {
        self.offsets[g + 1] - self.offsets[g]
    }

    /// The key with local id `id`.
    #[inline]
    fn key(&self, id: usize) -> &[u8] {
        self.global_key(self.row_keys[id] as usize)
    }

    /// The local id of `key` in this row, adding it when new.
    fn intern(&mut self, key: &[u8]) -> u32 {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        let guess = match self.last {
            NO_KEY => self.first_guess,
            last => self.next_guess[last as usize],
        };
        // (`first_guess` starts at 0 in a new dictionary, hence the bound check.)
        let known = (guess as usize) < self.offsets.len() - 1;
        let g = if known && key_eq(self.global_key(guess as usize), key) {
            guess as usize
        } else {
            self.find_or_add(key)
        };
        match self.last {
            NO_KEY => self.first_guess = g as u32,
            last => self.next_guess[last as usize] = g as u32,
        }
        self.last = g as u32;
        let seen = &mut self.seen[g];
        if seen.0 != self.row {
            *seen = (self.row, self.row_keys.len() as u32);
            self.row_keys.push(g as u32);
            self.row_bytes += key.len();
        }
        seen.1
    }

    /// The global id of `key`, adding it when new.
    fn find_or_add(&mut self, key: &[u8]) -> usize {
        let global = self.offsets.len() - 1;
        if (global + 1) * 2 > self.table.len() {
            self.grow();
        }
        let mask = self.table.len() - 1;
        let mut slot = hash_key(key) as usize & mask;
        loop {
            let entry = self.table[slot];
            if entry == 0 {
                let g = self.offsets.len() - 1;
                self.bytes.extend_from_slice(key);
                self.offsets.push(self.bytes.len() as u32);
                self.seen.push((0, 0));
                self.next_guess.push(NO_KEY);
                self.added = true;
                self.table[slot] = g as u32 + 1;
                return g;
            }
            if key_eq(self.global_key((entry - 1) as usize), key) {
                return (entry - 1) as usize;
            }
            slot = (slot + 1) & mask;
        }
    }

    /// Whether the row's keys can be ordered by rank: every key ranked. Ranks are recomputed
    /// (a sort of all global keys) only after a row that added no key, so that a stream of
    /// ever-new keys does not sort the whole dictionary on every row.
    fn ranks_cover_row(&mut self) -> bool {
        let global = self.offsets.len() - 1;
        if self.ranked < global && !self.added {
            let mut by_key: Vec<u32> = (0..global as u32).collect();
            by_key.sort_unstable_by(|&a, &b| {
                self.global_key(a as usize).cmp(self.global_key(b as usize))
            });
            self.rank.resize(global, 0);
            for (position, &g) in by_key.iter().enumerate() {
                self.rank[g as usize] = position as u32;
            }
            self.by_rank = by_key;
            self.ranked = global;
            self.rank_bits.resize(global.div_ceil(64), 0);
        }
        self.row_keys.iter().all(|&g| (g as usize) < self.ranked)
    }

    /// Fills `order` with the row's local ids in key order (when
    /// [`KeyDictionary::ranks_cover_row`]): marks each key's rank in a bit set and reads the
    /// set bits back in order, so no keys are compared.
    fn order_by_rank(&mut self, order: &mut Vec<u32>) {
        order.clear();
        if self.ranked <= 64 {
            // Up to 64 global keys (the usual case): the set is one word, kept in a register.
            let mut word = 0u64;
            for &g in &self.row_keys {
                word |= 1 << self.rank[g as usize];
            }
            while word != 0 {
                let rank = word.trailing_zeros() as usize;
                order.push(self.seen[self.by_rank[rank] as usize].1);
                word &= word - 1;
            }
            return;
        }
        let (mut first, mut last) = (usize::MAX, 0);
        for &g in &self.row_keys {
            let rank = self.rank[g as usize] as usize;
            self.rank_bits[rank / 64] |= 1 << (rank % 64);
            first = first.min(rank / 64);
            last = last.max(rank / 64);
        }
        for w in first..=last {
            let mut word = std::mem::take(&mut self.rank_bits[w]);
            while word != 0 {
                let rank = w * 64 + word.trailing_zeros() as usize;
                order.push(self.seen[self.by_rank[rank] as usize].1);
                word &= word - 1;
            }
        }
    }

    fn grow(&mut self) {
        let new_len = (self.table.len() * 2).max(64);
        self.table = vec![0; new_len];
        let mask = new_len - 1;
        for g in 0..self.offsets.len() - 1 {
            let mut slot = hash_key(self.global_key(g)) as usize & mask;
            while self.table[slot] != 0 {
                slot = (slot + 1) & mask;
            }
            self.table[slot] = g as u32 + 1;
        }
    }
}

/// Slots of [`MetadataCache`] (event data with optional fields has hundreds of key sets).
const METADATA_CACHE_SLOTS: usize = 256;
/// Rows whose keys total more bytes than this are not cached (bounds the cache's memory): their
/// metadata goes to a spare slot that never hits.
const MAX_CACHED_KEY_BYTES: usize = 1024;

/// The metadata of recently seen key sets (rows of one kind share a few), so that a row whose
/// keys were seen before copies its metadata instead of writing it key by key. Direct-mapped by
/// a hash of the key set (global ids in key order).
#[derive(Debug, Default)]
struct MetadataCache {
    /// Per slot: the key set and its metadata.
    keys: Vec<Vec<u32>>,
    metadata: Vec<Vec<u8>>,
}

impl MetadataCache {
    /// Forgets every entry (global ids were renumbered).
    fn clear(&mut self) {
        self.keys.iter_mut().for_each(Vec::clear);
        self.metadata.iter_mut().for_each(Vec::clear);
    }

    /// The slot for `keys` (whose names total `key_bytes`), and whether it already holds them.
    fn lookup(&mut self, keys: &[u32], key_bytes: usize) -> (usize, bool) {
        if self.keys.is_empty() {
            self.keys.resize(METADATA_CACHE_SLOTS + 1, Vec::new());
            self.metadata.resize(METADATA_CACHE_SLOTS + 1, Vec::new());
        }
        if key_bytes > MAX_CACHED_KEY_BYTES {
            return (METADATA_CACHE_SLOTS, false);
        }
        let mut h = keys.len() as u64;
        for &k in keys {
            h = (h.rotate_left(5) ^ k as u64).wrapping_mul(0x517c_c1b7_2722_0a95);
        }
        // The high bits are the best mixed.
        let slot = (h >> 40) as usize % METADATA_CACHE_SLOTS;
        let hit = self.keys[slot] == keys && !self.metadata[slot].is_empty();
        (slot, hit)
    }
}

/// `Child::container` of a child that is not a container.
const SCALAR: u32 = u32::MAX;

/// One element or field of a container, recorded while the row is built.
#[derive(Debug, Clone, Copy)]
struct Child {
    /// The field's local key id (objects only).
    key: u32,
    /// Where the child's bytes start in `scalars` (for a container: where its data starts).
    scalar_pos: u32,
    /// The child's index in `containers`, or [`SCALAR`].
    container: u32,
    /// The child's offset in its parent's data (computed by `finish`).
    offset: u32,
}

/// One object or array of the row, in the order they were opened (pre-order).
#[derive(Debug, Clone, Copy, Default)]
struct Container {
    is_object: bool,
    /// The container's data is `scalars[scalar_start..scalar_end]` with the headers of the
    /// containers inside it inserted.
    scalar_start: u32,
    scalar_end: u32,
    /// The container's children are `children[children_start..children_start + len]`.
    children_start: u32,
    len: u32,
    /// Computed by `finish`: header bytes, data bytes (headers inside included), field id and
    /// offset widths.
    header_size: u32,
    data_size: u32,
    id_width: u8,
    offset_width: u8,
}

/// An open container: its index and where its children start in `open_children`.
#[derive(Debug, Clone, Copy)]
struct Frame {
    container: u32,
    children_start: usize,
    is_object: bool,
}

/// Builds one variant at a time (call [`VariantBuilder::finish`] after each top-level value, then
/// read [`VariantBuilder::metadata`] and [`VariantBuilder::value`]). Buffers are reused across rows.
///
/// While a row is built, scalar values are encoded into one buffer in document order and each
/// container only records its children; `finish` sorts the row's dictionary, computes every
/// container's size bottom-up (so offsets and field ids get the smallest widths), and writes the
/// value in one pass, each header followed by its data, every object's fields in key order
/// (duplicate keys are an error then). Nothing is moved or re-encoded.
#[derive(Debug)]
pub struct VariantBuilder {
    /// The finished value.
    value: Vec<u8>,
    /// The last row's metadata is `metadata.metadata[metadata_slot]`.
    metadata: MetadataCache,
    metadata_slot: usize,
    /// Scratch: the row's global key ids in key order.
    sorted_keys: Vec<u32>,
    dict: KeyDictionary,
    /// Encoded scalars of the row, in document order.
    scalars: Vec<u8>,
    containers: Vec<Container>,
    /// Children of the closed containers, grouped by container.
    children: Vec<Child>,
    /// Containers in the order they were closed (children before parents).
    closed: Vec<u32>,
    stack: Vec<Frame>,
    /// Children of the open containers.
    open_children: Vec<Child>,
    /// Key of the next value inside an object.
    pending_key: Option<u32>,
    /// Scratch for sorting the dictionary and objects' fields.
    order: Vec<u32>,
    remap: Vec<u32>,
    pairs: Vec<(u32, u32)>,
    /// The previous row's keys (global ids by local id), whether they were out of order, and
    /// whether `order`, `remap` and `metadata` still hold that row's results: a row with the
    /// same key sequence (typical of event data) reuses them instead of sorting again.
    previous_keys: Vec<u32>,
    previous_unsorted: bool,
    previous_valid: bool,
    /// Whether the row opened containers deeper than [`DEFAULT_MAX_DEPTH`] (then `finish` fails:
    /// no reader would accept the value).
    too_deep: bool,
}

impl Default for VariantBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl VariantBuilder {
    /// A new, empty builder.
    pub fn new() -> Self {
        let mut b = VariantBuilder {
            value: Vec::new(),
            metadata: MetadataCache::default(),
            metadata_slot: 0,
            sorted_keys: Vec::new(),
            dict: KeyDictionary::default(),
            scalars: Vec::new(),
            containers: Vec::new(),
            children: Vec::new(),
            closed: Vec::new(),
            stack: Vec::new(),
            open_children: Vec::new(),
            pending_key: None,
            order: Vec::new(),
            remap: Vec::new(),
            pairs: Vec::new(),
            previous_keys: Vec::new(),
            previous_unsorted: false,
            previous_valid: false,
            too_deep: false,
        };
        b.reset();
        b
    }

    /// Clears all state for the next row (capacity is kept).
    pub fn reset(&mut self) {
        // `metadata` is kept: a row with keys seen before reuses it.
        if self.dict.clear() {
            self.previous_valid = false;
            self.metadata.clear();
        }
        self.value.clear();
        self.scalars.clear();
        self.containers.clear();
        self.children.clear();
        self.closed.clear();
        self.stack.clear();
        self.open_children.clear();
        self.pending_key = None;
        self.too_deep = false;
    }

    /// Current nesting depth (open objects and arrays).
    pub fn depth(&self) -> usize {
        self.stack.len()
    }

    /// Records the next value (`container` is its container index, or [`SCALAR`]) as a child of
    /// the open container, if any.
    #[inline]
    fn before_value(&mut self, container: u32) {
        if let Some(frame) = self.stack.last() {
            let key = if frame.is_object {
                self.pending_key.take().expect("object value without a key")
            } else {
                0
            };
            self.open_children.push(Child {
                key,
                scalar_pos: self.scalars.len() as u32,
                container,
                offset: 0,
            });
        }
    }

    /// Sets the key of the next value written inside the current object.
    #[inline]
    pub fn key(&mut self, key: &str) {
        self.key_bytes(key.as_bytes());
    }

    /// Like [`VariantBuilder::key`] for bytes already known to be UTF-8.
    #[inline]
    pub(crate) fn key_bytes(&mut self, key: &[u8]) {
        self.pending_key = Some(self.dict.intern(key));
    }

    #[inline]
    fn primitive<const N: usize>(&mut self, type_id: u8, data: [u8; N]) {
        self.before_value(SCALAR);
        self.scalars.push(type_id << 2);
        self.scalars.extend_from_slice(&data);
    }

    /// Appends variant null.
    pub fn null(&mut self) {
        self.primitive(primitive::NULL, []);
    }

    /// Appends a boolean.
    pub fn boolean(&mut self, v: bool) {
        self.primitive(if v { primitive::TRUE } else { primitive::FALSE }, []);
    }

    /// Appends an integer with the smallest of int8/16/32/64 that holds it.
    pub fn int(&mut self, v: i64) {
        if let Ok(v) = i8::try_from(v) {
            self.primitive(primitive::INT8, v.to_le_bytes());
        } else if let Ok(v) = i16::try_from(v) {
            self.primitive(primitive::INT16, v.to_le_bytes());
        } else if let Ok(v) = i32::try_from(v) {
            self.primitive(primitive::INT32, v.to_le_bytes());
        } else {
            self.primitive(primitive::INT64, v.to_le_bytes());
        }
    }

    /// Appends an int8.
    pub fn int8(&mut self, v: i8) {
        self.primitive(primitive::INT8, v.to_le_bytes());
    }
    /// Appends an int16.
    pub fn int16(&mut self, v: i16) {
        self.primitive(primitive::INT16, v.to_le_bytes());
    }
    /// Appends an int32.
    pub fn int32(&mut self, v: i32) {
        self.primitive(primitive::INT32, v.to_le_bytes());
    }
    /// Appends an int64.
    pub fn int64(&mut self, v: i64) {
        self.primitive(primitive::INT64, v.to_le_bytes());
    }
    /// Appends a double.
    pub fn double(&mut self, v: f64) {
        self.primitive(primitive::DOUBLE, v.to_le_bytes());
    }
    /// Appends a float.
    pub fn float(&mut self, v: f32) {
        self.primitive(primitive::FLOAT, v.to_le_bytes());
    }

    /// Appends a decimal4 (caller guarantees at most 9 digits and scale <= 38).
    pub fn decimal4(&mut self, unscaled: i32, scale: u8) {
        let mut d = [0u8; 5];
        d[0] = scale;
        d[1..].copy_from_slice(&unscaled.to_le_bytes());
        self.primitive(primitive::DECIMAL4, d);
    }
    /// Appends a decimal8.
    pub fn decimal8(&mut self, unscaled: i64, scale: u8) {
        let mut d = [0u8; 9];
        d[0] = scale;
        d[1..].copy_from_slice(&unscaled.to_le_bytes());
        self.primitive(primitive::DECIMAL8, d);
    }
    /// Appends a decimal16.
    pub fn decimal16(&mut self, unscaled: i128, scale: u8) {
        let mut d = [0u8; 17];
        d[0] = scale;
        d[1..].copy_from_slice(&unscaled.to_le_bytes());
        self.primitive(primitive::DECIMAL16, d);
    }

    /// Appends a decimal in the smallest width whose precision holds both its digits and its
    /// scale (Spark's rule): decimal4 up to 9, decimal8 up to 18, else decimal16.
    pub fn decimal(&mut self, unscaled: i128, scale: u8) {
        let digits = decimal_digits(unscaled).max(scale as u32);
        if digits <= 9 {
            self.decimal4(unscaled as i32, scale);
        } else if digits <= 18 {
            self.decimal8(unscaled as i64, scale);
        } else {
            self.decimal16(unscaled, scale);
        }
    }

    /// Appends a date (days since the epoch).
    pub fn date(&mut self, days: i32) {
        self.primitive(primitive::DATE, days.to_le_bytes());
    }
    /// Appends a UTC timestamp in microseconds.
    pub fn timestamp_micros(&mut self, v: i64) {
        self.primitive(primitive::TIMESTAMP, v.to_le_bytes());
    }
    /// Appends a timestamp without time zone in microseconds.
    pub fn timestamp_ntz_micros(&mut self, v: i64) {
        self.primitive(primitive::TIMESTAMP_NTZ, v.to_le_bytes());
    }
    /// Appends a UTC timestamp in nanoseconds.
    pub fn timestamp_nanos(&mut self, v: i64) {
        self.primitive(primitive::TIMESTAMP_NANOS, v.to_le_bytes());
    }
    /// Appends a timestamp without time zone in nanoseconds.
    pub fn timestamp_ntz_nanos(&mut self, v: i64) {
        self.primitive(primitive::TIMESTAMP_NTZ_NANOS, v.to_le_bytes());
    }
    /// Appends a time of day in microseconds.
    pub fn time_micros(&mut self, v: i64) {
        self.primitive(primitive::TIME, v.to_le_bytes());
    }
    /// Appends a UUID (16 big-endian bytes).
    pub fn uuid(&mut self, v: [u8; 16]) {
        self.primitive(primitive::UUID, v);
    }

    /// Appends binary bytes.
    pub fn binary(&mut self, v: &[u8]) {
        self.before_value(SCALAR);
        self.scalars.push(primitive::BINARY << 2);
        self.scalars
            .extend_from_slice(&(v.len() as u32).to_le_bytes());
        self.scalars.extend_from_slice(v);
    }

    /// Appends a string (short string when shorter than 64 bytes).
    pub fn string(&mut self, v: &str) {
        self.string_bytes(v.as_bytes());
    }

    /// Like [`VariantBuilder::string`] for bytes already known to be UTF-8.
    #[inline]
    pub(crate) fn string_bytes(&mut self, v: &[u8]) {
        self.before_value(SCALAR);
        if v.len() < 64 {
            self.scalars
                .push(((v.len() as u8) << 2) | basic_type::SHORT_STRING);
        } else {
            self.scalars.push(primitive::STRING << 2);
            self.scalars
                .extend_from_slice(&(v.len() as u32).to_le_bytes());
        }
        push_short(&mut self.scalars, v);
    }

    /// Appends an already encoded value that is not a container.
    fn encoded_scalar(&mut self, bytes: &[u8]) {
        self.before_value(SCALAR);
        self.scalars.extend_from_slice(bytes);
    }

    fn begin_container(&mut self, is_object: bool) {
        let index = self.containers.len() as u32;
        self.before_value(index);
        self.containers.push(Container {
            is_object,
            scalar_start: self.scalars.len() as u32,
            ..Container::default()
        });
        self.stack.push(Frame {
            container: index,
            children_start: self.open_children.len(),
            is_object,
        });
        self.too_deep |= self.stack.len() > DEFAULT_MAX_DEPTH;
    }

    fn end_container(&mut self, is_object: bool) {
        let frame = match self.stack.pop() {
            Some(frame) if frame.is_object == is_object => frame,
            _ if is_object => panic!("end_object without begin_object"),
            _ => panic!("end_array without begin_array"),
        };
        let container = &mut self.containers[frame.container as usize];
        container.scalar_end = self.scalars.len() as u32;
        container.children_start = self.children.len() as u32;
        container.len = (self.open_children.len() - frame.children_start) as u32;
        self.children
            .extend_from_slice(&self.open_children[frame.children_start..]);
        self.open_children.truncate(frame.children_start);
        self.closed.push(frame.container);
    }

    /// Starts an object; set each field with [`VariantBuilder::key`] then a value.
    pub fn begin_object(&mut self) {
        self.begin_container(true);
    }

    /// Starts an array.
    pub fn begin_array(&mut self) {
        self.begin_container(false);
    }

    /// Ends the current object (its fields are put in key order, and duplicate keys reported,
    /// by [`VariantBuilder::finish`]).
    pub fn end_object(&mut self) -> Result<()> {
        self.end_container(true);
        Ok(())
    }

    /// Ends the current array.
    pub fn end_array(&mut self) {
        self.end_container(false);
    }

    /// Finishes the row: sorts the dictionary, lays out and writes the value, and writes the
    /// metadata. Afterwards [`VariantBuilder::metadata`] and [`VariantBuilder::value`] hold the
    /// result.
    ///
    /// Measured and dropped: building the sorted keys, the remap and the unsorted flag in one
    /// pass, and remapping field keys inside `layout`, ran 90 fewer instructions per row of the
    /// parse_json bench but was no faster.
    pub fn finish(&mut self) -> Result<()> {
        debug_assert!(self.stack.is_empty(), "finish with open containers");
        if self.scalars.len() > u32::MAX as usize {
            return Err(too_large());
        }
        if self.too_deep {
            return Err(VariantError::DepthLimitExceeded(DEFAULT_MAX_DEPTH));
        }
        let n = self.dict.len();
        let same_keys = self.previous_valid && self.dict.row_keys == self.previous_keys;
        self.previous_valid = false;
        let ranked = !same_keys && n > 1 && self.dict.ranks_cover_row();
        let dict_unsorted = if same_keys {
            self.previous_unsorted
        } else if ranked {
            self.dict.order_by_rank(&mut self.order);
            self.order.iter().enumerate().any(|(i, &o)| o as usize != i)
        } else {
            (1..n).any(|i| self.dict.key(i - 1) >= self.dict.key(i))
        };
        if dict_unsorted && !same_keys {
            if !ranked {
                let dict = &self.dict;
                self.order.clear();
                self.order.extend(0..n as u32);
                self.order
                    .sort_unstable_by(|&a, &b| dict.key(a as usize).cmp(dict.key(b as usize)));
            }
            self.remap.clear();
            self.remap.resize(n, 0);
            for (new_id, &old_id) in self.order.iter().enumerate() {
                self.remap[old_id as usize] = new_id as u32;
            }
        }
        if dict_unsorted {
            for child in &mut self.children {
                child.key = self.remap[child.key as usize];
            }
        }
        self.layout()?;
        self.write_value(dict_unsorted)?;
        if !same_keys {
            self.sorted_keys.clear();
            if dict_unsorted {
                let row_keys = &self.dict.row_keys;
                (self.sorted_keys).extend(self.order.iter().map(|&local| row_keys[local as usize]));
            } else {
                self.sorted_keys.extend_from_slice(&self.dict.row_keys);
            }
            let (slot, hit) = self
                .metadata
                .lookup(&self.sorted_keys, self.dict.row_bytes());
            self.metadata_slot = slot;
            if !hit {
                self.write_metadata(slot);
            }
        }
        self.previous_keys.clear();
        self.previous_keys.extend_from_slice(&self.dict.row_keys);
        self.previous_unsorted = dict_unsorted;
        self.previous_valid = true;
        Ok(())
    }

    /// Computes every container's header and data size and its children's offsets, children
    /// before parents (the order they were closed in). Field keys are final ids by now.
    fn layout(&mut self) -> Result<()> {
        for &index in &self.closed {
            let c = self.containers[index as usize];
            let children =
                &mut self.children[c.children_start as usize..(c.children_start + c.len) as usize];
            // Bytes of the headers of earlier children's containers, which sit in this
            // container's data before the next child.
            // (Sizes in u64: offsets are checked to fit in 32 bits once the data size is known.)
            let mut headers = 0u64;
            let mut max_id = 0u32;
            for child in children.iter_mut() {
                child.offset = (u64::from(child.scalar_pos - c.scalar_start) + headers) as u32;
                if child.container != SCALAR {
                    let inner = &self.containers[child.container as usize];
                    headers += u64::from(inner.header_size) + u64::from(inner.data_size)
                        - u64::from(inner.scalar_end - inner.scalar_start);
                }
                max_id = max_id.max(child.key);
            }
            let data_size = u64::from(c.scalar_end - c.scalar_start) + headers;
            let Ok(data_size) = u32::try_from(data_size) else {
                return Err(too_large());
            };
            let offset_width = width_for(data_size as usize);
            let count_width = if c.len > 255 { 4 } else { 1 };
            let id_width = if c.is_object {
                width_for(max_id as usize)
            } else {
                0
            };
            let header_size =
                1 + count_width + c.len as usize * id_width + (c.len as usize + 1) * offset_width;
            let c = &mut self.containers[index as usize];
            c.data_size = data_size;
            c.header_size = header_size as u32;
            c.id_width = id_width as u8;
            c.offset_width = offset_width as u8;
        }
        Ok(())
    }

    /// Writes the value: the scalars with every container's header inserted where its data
    /// starts, objects' fields sorted by key (equal ids are duplicate keys).
    fn write_value(&mut self, remapped: bool) -> Result<()> {
        let out = &mut self.value;
        out.clear();
        let headers: usize = self.containers.iter().map(|c| c.header_size as usize).sum();
        out.reserve(self.scalars.len() + headers);
        let mut copied = 0usize;
        for c in &self.containers {
            let start = c.scalar_start as usize;
            push_short(out, &self.scalars[copied..start]);
            copied = start;
            let children =
                &self.children[c.children_start as usize..(c.children_start + c.len) as usize];
            let is_large = c.len > 255;
            let offset_width = c.offset_width as usize;
            if c.is_object {
                let id_width = c.id_width as usize;
                out.push(
                    basic_type::OBJECT
                        | ((is_large as u8) << 6)
                        | (((id_width - 1) as u8) << 4)
                        | (((offset_width - 1) as u8) << 2),
                );
                write_uint(out, c.len, if is_large { 4 } else { 1 });
                let pairs = &mut self.pairs;
                pairs.clear();
                pairs.extend(children.iter().map(|f| (f.key, f.offset)));
                if pairs.windows(2).any(|w| w[0].0 >= w[1].0)
                    && let Err(duplicate) = sort_fields(pairs)
                {
                    let local = if remapped {
                        self.order[duplicate as usize]
                    } else {
                        duplicate
                    };
                    let key = String::from_utf8_lossy(self.dict.key(local as usize));
                    return Err(VariantError::DuplicateKey(key.into_owned()));
                }
                write_uints(out, pairs.iter().map(|p| p.0), id_width);
                write_uints(out, pairs.iter().map(|p| p.1), offset_width);
            } else {
                out.push(
                    basic_type::ARRAY | ((is_large as u8) << 4) | (((offset_width - 1) as u8) << 2),
                );
                write_uint(out, c.len, if is_large { 4 } else { 1 });
                write_uints(out, children.iter().map(|e| e.offset), offset_width);
            }
            write_uint(out, c.data_size, offset_width);
        }
        push_short(out, &self.scalars[copied..]);
        Ok(())
    }

    /// Writes the metadata of the row's keys (`sorted_keys`) into cache slot `slot`.
    fn write_metadata(&mut self, slot: usize) {
        let keys = &self.sorted_keys;
        let n = keys.len();
        let total = self.dict.row_bytes();
        let width = width_for(total.max(n));
        let m = &mut self.metadata.metadata[slot];
        m.clear();
        m.reserve(1 + (n + 2) * width + total);
        m.push(0x01 | 0x10 | (((width - 1) as u8) << 6));
        write_uint(m, n as u32, width);
        write_uint(m, 0, width);
        let dict = &self.dict;
        let mut end = 0u32;
        let ends = keys.iter().map(|&g| {
            end += dict.global_key_len(g as usize);
            end
        });
        write_uints(m, ends, width);
        for &g in keys {
            push_short(m, dict.global_key(g as usize));
        }
        let cached = &mut self.metadata.keys[slot];
        cached.clear();
        cached.extend_from_slice(keys);
    }

    /// Appends a copy of `v` (and its children), re-interning keys in this builder's dictionary.
    pub fn append_variant(&mut self, v: Variant<'_>) -> Result<()> {
        self.append_variant_depth(v, 0)
    }

    #[recursive::recursive]
    fn append_variant_depth(&mut self, v: Variant<'_>, depth: usize) -> Result<()> {
        if depth > DEFAULT_MAX_DEPTH {
            return Err(VariantError::DepthLimitExceeded(DEFAULT_MAX_DEPTH));
        }
        match v.get()? {
            Value::Object(obj) => {
                obj.check_field_sizes()?;
                self.begin_object();
                for i in 0..obj.len() {
                    self.key(obj.key(i)?);
                    self.append_variant_depth(obj.value(i)?, depth + 1)?;
                }
                self.end_object()?;
            }
            Value::Array(arr) => {
                self.begin_array();
                for e in arr.iter() {
                    self.append_variant_depth(e?, depth + 1)?;
                }
                self.end_array();
            }
            Value::String(s) => self.string(s),
            _ => self.encoded_scalar(v.exact_value_bytes()?),
        }
        Ok(())
    }

    /// The metadata bytes of the last finished row.
    pub fn metadata(&self) -> &[u8] {
        self.metadata
            .metadata
            .get(self.metadata_slot)
            .map_or(&[], Vec::as_slice)
    }

    /// The value bytes of the last finished row.
    pub fn value(&self) -> &[u8] {
        &self.value
    }
}

/// The error for a value whose containers' offsets would not fit in 32 bits.
#[cold]
fn too_large() -> VariantError {
    VariantError::TooLarge
}

/// Appends `values` as little-endian integers of `width` bytes; one-byte values (the common
/// case: small objects and arrays) go in as one bulk extend.
#[inline]
fn write_uints(out: &mut Vec<u8>, values: impl ExactSizeIterator<Item = u32>, width: usize) {
    if width == 1 {
        out.extend(values.map(|v| v as u8));
    } else {
        out.reserve(values.len() * width);
        for v in values {
            write_uint(out, v, width);
        }
    }
}

/// Sorts an object's `(field id, offset)` pairs by id, or returns an id that occurs twice. Ids
/// below 64 (most objects) are ordered through a bit set, without comparisons.
fn sort_fields(pairs: &mut [(u32, u32)]) -> std::result::Result<(), u32> {
    if pairs.iter().all(|p| p.0 < 64) {
        let mut ids = 0u64;
        let mut offsets = [0u32; 64];
        for &(id, offset) in pairs.iter() {
            if ids & (1 << id) != 0 {
                return Err(id);
            }
            ids |= 1 << id;
            offsets[id as usize] = offset;
        }
        for pair in pairs.iter_mut() {
            let id = ids.trailing_zeros();
            ids &= ids - 1;
            *pair = (id, offsets[id as usize]);
        }
        return Ok(());
    }
    pairs.sort_unstable_by_key(|p| p.0);
    match pairs.windows(2).find(|w| w[0].0 == w[1].0) {
        Some(w) => Err(w[0].0),
        None => Ok(()),
    }
}

/// Writes an object whose field values are already encoded against some metadata: `fields` are
/// `(field id, range of base)` pairs, the value bytes being `base[range]`, in the order they are
/// stored (the caller keeps them sorted by key name, as the encoding requires). Widths are the
/// smallest that fit; the values are copied unchanged. Used to write the residual `value` of a
/// partially shredded object.
pub fn write_object(out: &mut Vec<u8>, base: &[u8], fields: &[(u32, std::ops::Range<usize>)]) {
    let n = fields.len();
    let max_id = fields.iter().map(|f| f.0).max().unwrap_or(0) as usize;
    let data_size: usize = fields.iter().map(|f| f.1.len()).sum();
    let id_width = width_for(max_id);
    let offset_width = width_for(data_size);
    let is_large = n > 255;
    out.push(
        basic_type::OBJECT
            | ((is_large as u8) << 6)
            | (((id_width - 1) as u8) << 4)
            | (((offset_width - 1) as u8) << 2),
    );
    write_uint(out, n as u32, if is_large { 4 } else { 1 });
    for f in fields {
        write_uint(out, f.0, id_width);
    }
    let mut offset = 0;
    for f in fields {
        write_uint(out, offset as u32, offset_width);
        offset += f.1.len();
    }
    write_uint(out, data_size as u32, offset_width);
    for f in fields {
        out.extend_from_slice(&base[f.1.clone()]);
    }
}

/// Writes an array whose element values are already encoded: `elements` are ranges of `base`,
/// in order. Widths are the smallest that fit; the values are copied unchanged.
pub fn write_array(out: &mut Vec<u8>, base: &[u8], elements: &[std::ops::Range<usize>]) {
    let n = elements.len();
    let data_size: usize = elements.iter().map(|e| e.len()).sum();
    let offset_width = width_for(data_size);
    let is_large = n > 255;
    out.push(basic_type::ARRAY | ((is_large as u8) << 4) | (((offset_width - 1) as u8) << 2));
    write_uint(out, n as u32, if is_large { 4 } else { 1 });
    let mut offset = 0;
    for e in elements {
        write_uint(out, offset as u32, offset_width);
        offset += e.len();
    }
    write_uint(out, data_size as u32, offset_width);
    for e in elements {
        out.extend_from_slice(&base[e.clone()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds `{key: i, ...}` over `keys` in the given order and finishes the row.
    fn build_object(b: &mut VariantBuilder, keys: &[String]) -> Result<()> {
        b.reset();
        b.begin_object();
        for (i, k) in keys.iter().enumerate() {
            b.key(k);
            b.int(i as i64);
        }
        b.end_object()?;
        b.finish()
    }

    /// Builds the object of `keys` in `reused` and checks its metadata is those keys, sorted,
    /// and its value what a fresh builder writes.
    fn check_row(reused: &mut VariantBuilder, keys: &[String], what: &str) {
        build_object(reused, keys).unwrap();
        let mut sorted = keys.to_vec();
        sorted.sort();
        let metadata = crate::codec::Metadata::try_new(reused.metadata()).unwrap();
        let got: Vec<&str> = (0..metadata.len())
            .map(|k| metadata.key(k).unwrap())
            .collect();
        assert_eq!(got, sorted, "{what}");
        let mut fresh = VariantBuilder::new();
        build_object(&mut fresh, keys).unwrap();
        assert_eq!(reused.value(), fresh.value(), "{what}");
    }

    #[test]
    fn duplicate_keys_are_reported_in_small_and_wide_objects() {
        let mut b = VariantBuilder::new();
        let small: Vec<String> = ["b", "a", "b"].map(String::from).to_vec();
        match build_object(&mut b, &small) {
            Err(VariantError::DuplicateKey(k)) => assert_eq!(k, "b"),
            other => panic!("expected a duplicate key, got {other:?}"),
        }
        // Field ids past 64 take the comparison sort instead of the bit set.
        let mut wide: Vec<String> = (0..100).rev().map(|i| format!("k{i:03}")).collect();
        wide.push("k070".to_string());
        match build_object(&mut b, &wide) {
            Err(VariantError::DuplicateKey(k)) => assert_eq!(k, "k070"),
            other => panic!("expected a duplicate key, got {other:?}"),
        }
        // The builder is usable afterwards.
        build_object(&mut b, &small[..2]).unwrap();
        assert_eq!(b.value()[1], 2, "two fields");
        // The duplicate is named right when the row's keys are known and ordered by rank, and
        // when the row repeats the previous row's key sequence (whose order it reuses): "b" has
        // local id 0 but sorted id 1 in both.
        let ab: Vec<String> = ["a", "b"].map(String::from).to_vec();
        for previous in [&ab, &small[..2].to_vec()] {
            build_object(&mut b, previous).unwrap();
            match build_object(&mut b, &small) {
                Err(VariantError::DuplicateKey(k)) => assert_eq!(k, "b", "after {previous:?}"),
                other => panic!("expected a duplicate key, got {other:?}"),
            }
        }
    }

    /// Rows whose keys were all seen before are ordered by rank: in one word up to 64 keys seen,
    /// in a bit set beyond. Both give the sorted dictionary and the value a fresh builder gives.
    #[test]
    fn rows_of_known_keys_are_ordered_by_rank() {
        for seen in [40, 100] {
            let all: Vec<String> = (0..seen).rev().map(|i| format!("k{i:03}")).collect();
            let mut reused = VariantBuilder::new();
            // The first row adds the keys; the later ones add none.
            let rows: [Vec<String>; 4] = [
                all.clone(),
                all.iter().rev().cloned().collect(),
                all.iter().step_by(3).cloned().collect(),
                all[seen / 2..].to_vec(),
            ];
            for (r, keys) in rows.iter().enumerate() {
                check_row(&mut reused, keys, &format!("{seen} keys seen, row {r}"));
            }
        }
    }

    #[test]
    fn rows_with_many_key_sets_get_their_own_metadata() {
        // 1024 key sets (more than the metadata cache has slots), in a shuffled order and
        // repeated, with rows whose keys are too long to be cached (more than
        // MAX_CACHED_KEY_BYTES) in between: every row's metadata is its own keys, sorted.
        let mut names: Vec<String> = [
            "id", "user", "ts", "price", "a", "zz", "type", "ok", "é", "",
        ]
        .map(String::from)
        .to_vec();
        names.push("k".repeat(MAX_CACHED_KEY_BYTES));
        names.push("j".repeat(MAX_CACHED_KEY_BYTES / 2 + 1));
        let mut reused = VariantBuilder::new();
        let mut check = |keys: &[String], what: &str| check_row(&mut reused, keys, what);
        for round in 0..3u32 {
            for i in 0..1024u32 {
                let set = (i.wrapping_mul(397) + round * 31) % 1024;
                let mut keys: Vec<String> = (0..10)
                    .filter(|bit| set & (1 << bit) != 0)
                    .map(|bit| names[bit].clone())
                    .collect();
                check(&keys, &format!("key set {set:#012b}"));
                if i % 7 == 0 {
                    // Too long to cache, alone and with one of two long keys (the spare slot is
                    // overwritten by each), and the same row twice in a row.
                    keys.push(names[10 + (i as usize / 7) % 2].clone());
                    check(&keys, &format!("key set {set:#012b} with a long key"));
                    check(
                        &keys,
                        &format!("key set {set:#012b} with a long key, again"),
                    );
                }
            }
        }
    }
}
