//! Writing variants: minimal widths, a sorted unique dictionary, buffers reused across rows.
use super::bytes::{put_uint, width_for, write_uint};
use super::error::{Result, VariantError};
use super::value::{ContainerLayout, Value, Variant, basic_type, primitive};

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
    stamp: Vec<u32>,
    local: Vec<u32>,
    /// The current row (stamps of 0 mean never).
    row: u32,
    /// The row's keys: global ids by local id.
    row_keys: Vec<u32>,
    /// Total bytes of the row's keys.
    row_bytes: usize,
    /// Per global id, its position among all global keys in byte order; valid for the first
    /// `ranked` global ids (keys added later are compared as bytes until ranks are recomputed).
    rank: Vec<u32>,
    ranked: usize,
    /// True when this row added a global key.
    added: bool,
}

#[inline]
fn hash_key(key: &[u8]) -> u64 {
    // FxHash-style multiplicative hash over 8-byte chunks.
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h: u64 = key.len() as u64;
    let mut chunks = key.chunks_exact(8);
    for c in &mut chunks {
        h = (h.rotate_left(5) ^ u64::from_le_bytes(c.try_into().unwrap())).wrapping_mul(K);
    }
    let mut tail = [0u8; 8];
    let rest = chunks.remainder();
    tail[..rest.len()].copy_from_slice(rest);
    h = (h.rotate_left(5) ^ u64::from_le_bytes(tail)).wrapping_mul(K);
    h ^ (h >> 29)
}

impl KeyDictionary {
    /// Starts a new row, keeping the keys seen so far unless there are too many; returns true when
    /// it started afresh (global ids are then renumbered).
    fn clear(&mut self) -> bool {
        self.row_keys.clear();
        self.row_bytes = 0;
        self.added = false;
        self.row = self.row.wrapping_add(1);
        let global = self.offsets.len().saturating_sub(1);
        if self.row == 0 || global > MAX_KEPT_KEYS || self.bytes.len() > MAX_KEPT_BYTES {
            self.bytes.clear();
            self.offsets.clear();
            self.table.iter_mut().for_each(|s| *s = 0);
            self.stamp.clear();
            self.local.clear();
            self.rank.clear();
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
        let global = self.offsets.len() - 1;
        if (global + 1) * 2 > self.table.len() {
            self.grow();
        }
        let mask = self.table.len() - 1;
        let mut slot = hash_key(key) as usize & mask;
        let g = loop {
            let entry = self.table[slot];
            if entry == 0 {
                let g = self.offsets.len() - 1;
                self.bytes.extend_from_slice(key);
                self.offsets.push(self.bytes.len() as u32);
                self.stamp.push(0);
                self.local.push(0);
                self.added = true;
                self.table[slot] = g as u32 + 1;
                break g;
            }
            if self.global_key((entry - 1) as usize) == key {
                break (entry - 1) as usize;
            }
            slot = (slot + 1) & mask;
        };
        if self.stamp[g] != self.row {
            self.stamp[g] = self.row;
            self.local[g] = self.row_keys.len() as u32;
            self.row_keys.push(g as u32);
            self.row_bytes += key.len();
        }
        self.local[g]
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
            self.ranked = global;
        }
        self.row_keys.iter().all(|&g| (g as usize) < self.ranked)
    }

    /// The rank of the key with local id `id` (when [`KeyDictionary::ranks_cover_row`]).
    #[inline]
    fn rank_of(&self, id: usize) -> u32 {
        self.rank[self.row_keys[id] as usize]
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

#[derive(Debug, Clone, Copy)]
enum Frame {
    Object { start: usize, fields_start: usize },
    Array { start: usize, elements_start: usize },
}

/// Builds one variant at a time (call [`VariantBuilder::finish`] after each top-level value, then
/// read [`VariantBuilder::metadata`] and [`VariantBuilder::value`]). Buffers are reused across rows.
///
/// At `finish` the dictionary is sorted, field ids are rewritten in place and every object's fields
/// are put in key order by sorting integer ids (duplicate keys are an error then), so the output
/// always has a sorted, unique dictionary; offsets and counts use the smallest width, field ids the smallest width
/// for the row's dictionary.
#[derive(Debug)]
pub struct VariantBuilder {
    value: Vec<u8>,
    metadata: Vec<u8>,
    dict: KeyDictionary,
    stack: Vec<Frame>,
    /// Pending `(field id, offset)` pairs of the open objects.
    fields: Vec<(u32, u32)>,
    /// Pending element offsets of the open arrays.
    elements: Vec<u32>,
    /// Key of the next value inside an object.
    pending_key: Option<u32>,
    /// Id width of the smallest object header written so far (for the in-place id rewrite).
    min_id_width: usize,
    /// True when some object's fields were not written in ascending id order.
    objects_unordered: bool,
    /// Scratch for sorting and remapping.
    order: Vec<u32>,
    remap: Vec<u32>,
    positions: Vec<usize>,
    pairs: Vec<(u32, u32)>,
    header: Vec<u8>,
    /// The previous row's keys (global ids by local id), whether they were out of order, and
    /// whether `order`, `remap` and `metadata` still hold that row's results: a row with the
    /// same key sequence (typical of event data) reuses them instead of sorting again.
    previous_keys: Vec<u32>,
    previous_unsorted: bool,
    previous_valid: bool,
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
            metadata: Vec::new(),
            dict: KeyDictionary::default(),
            stack: Vec::new(),
            fields: Vec::new(),
            elements: Vec::new(),
            pending_key: None,
            min_id_width: 4,
            objects_unordered: false,
            order: Vec::new(),
            remap: Vec::new(),
            positions: Vec::new(),
            pairs: Vec::new(),
            header: Vec::new(),
            previous_keys: Vec::new(),
            previous_unsorted: false,
            previous_valid: false,
        };
        b.reset();
        b
    }

    /// Clears all state for the next row (capacity is kept).
    pub fn reset(&mut self) {
        self.value.clear();
        // `metadata` is kept: a row with the previous row's keys reuses it.
        if self.dict.clear() {
            self.previous_valid = false;
        }
        self.stack.clear();
        self.fields.clear();
        self.elements.clear();
        self.pending_key = None;
        self.min_id_width = 4;
        self.objects_unordered = false;
    }

    /// Current nesting depth (open objects and arrays).
    pub fn depth(&self) -> usize {
        self.stack.len()
    }

    #[inline]
    fn before_value(&mut self) {
        match self.stack.last() {
            Some(Frame::Object { start, .. }) => {
                let id = self.pending_key.take().expect("object value without a key");
                self.fields.push((id, (self.value.len() - start) as u32));
            }
            Some(Frame::Array { start, .. }) => {
                self.elements.push((self.value.len() - start) as u32);
            }
            None => {}
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
    fn primitive(&mut self, type_id: u8, data: &[u8]) {
        self.before_value();
        self.value.push(type_id << 2);
        self.value.extend_from_slice(data);
    }

    /// Appends variant null.
    pub fn null(&mut self) {
        self.primitive(primitive::NULL, &[]);
    }

    /// Appends a boolean.
    pub fn boolean(&mut self, v: bool) {
        self.primitive(if v { primitive::TRUE } else { primitive::FALSE }, &[]);
    }

    /// Appends an integer with the smallest of int8/16/32/64 that holds it.
    pub fn int(&mut self, v: i64) {
        if let Ok(v) = i8::try_from(v) {
            self.primitive(primitive::INT8, &v.to_le_bytes());
        } else if let Ok(v) = i16::try_from(v) {
            self.primitive(primitive::INT16, &v.to_le_bytes());
        } else if let Ok(v) = i32::try_from(v) {
            self.primitive(primitive::INT32, &v.to_le_bytes());
        } else {
            self.primitive(primitive::INT64, &v.to_le_bytes());
        }
    }

    /// Appends an int8.
    pub fn int8(&mut self, v: i8) {
        self.primitive(primitive::INT8, &v.to_le_bytes());
    }
    /// Appends an int16.
    pub fn int16(&mut self, v: i16) {
        self.primitive(primitive::INT16, &v.to_le_bytes());
    }
    /// Appends an int32.
    pub fn int32(&mut self, v: i32) {
        self.primitive(primitive::INT32, &v.to_le_bytes());
    }
    /// Appends an int64.
    pub fn int64(&mut self, v: i64) {
        self.primitive(primitive::INT64, &v.to_le_bytes());
    }
    /// Appends a double.
    pub fn double(&mut self, v: f64) {
        self.primitive(primitive::DOUBLE, &v.to_le_bytes());
    }
    /// Appends a float.
    pub fn float(&mut self, v: f32) {
        self.primitive(primitive::FLOAT, &v.to_le_bytes());
    }

    /// Appends a decimal4 (caller guarantees at most 9 digits and scale <= 38).
    pub fn decimal4(&mut self, unscaled: i32, scale: u8) {
        let mut d = [0u8; 5];
        d[0] = scale;
        d[1..].copy_from_slice(&unscaled.to_le_bytes());
        self.primitive(primitive::DECIMAL4, &d);
    }
    /// Appends a decimal8.
    pub fn decimal8(&mut self, unscaled: i64, scale: u8) {
        let mut d = [0u8; 9];
        d[0] = scale;
        d[1..].copy_from_slice(&unscaled.to_le_bytes());
        self.primitive(primitive::DECIMAL8, &d);
    }
    /// Appends a decimal16.
    pub fn decimal16(&mut self, unscaled: i128, scale: u8) {
        let mut d = [0u8; 17];
        d[0] = scale;
        d[1..].copy_from_slice(&unscaled.to_le_bytes());
        self.primitive(primitive::DECIMAL16, &d);
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
        self.primitive(primitive::DATE, &days.to_le_bytes());
    }
    /// Appends a UTC timestamp in microseconds.
    pub fn timestamp_micros(&mut self, v: i64) {
        self.primitive(primitive::TIMESTAMP, &v.to_le_bytes());
    }
    /// Appends a timestamp without time zone in microseconds.
    pub fn timestamp_ntz_micros(&mut self, v: i64) {
        self.primitive(primitive::TIMESTAMP_NTZ, &v.to_le_bytes());
    }
    /// Appends a UTC timestamp in nanoseconds.
    pub fn timestamp_nanos(&mut self, v: i64) {
        self.primitive(primitive::TIMESTAMP_NANOS, &v.to_le_bytes());
    }
    /// Appends a timestamp without time zone in nanoseconds.
    pub fn timestamp_ntz_nanos(&mut self, v: i64) {
        self.primitive(primitive::TIMESTAMP_NTZ_NANOS, &v.to_le_bytes());
    }
    /// Appends a time of day in microseconds.
    pub fn time_micros(&mut self, v: i64) {
        self.primitive(primitive::TIME, &v.to_le_bytes());
    }
    /// Appends a UUID (16 big-endian bytes).
    pub fn uuid(&mut self, v: [u8; 16]) {
        self.primitive(primitive::UUID, &v);
    }

    /// Appends binary bytes.
    pub fn binary(&mut self, v: &[u8]) {
        self.before_value();
        self.value.push(primitive::BINARY << 2);
        self.value
            .extend_from_slice(&(v.len() as u32).to_le_bytes());
        self.value.extend_from_slice(v);
    }

    /// Appends a string (short string when shorter than 64 bytes).
    pub fn string(&mut self, v: &str) {
        self.string_bytes(v.as_bytes());
    }

    /// Like [`VariantBuilder::string`] for bytes already known to be UTF-8.
    #[inline]
    pub(crate) fn string_bytes(&mut self, v: &[u8]) {
        self.before_value();
        if v.len() < 64 {
            self.value
                .push(((v.len() as u8) << 2) | basic_type::SHORT_STRING);
        } else {
            self.value.push(primitive::STRING << 2);
            self.value
                .extend_from_slice(&(v.len() as u32).to_le_bytes());
        }
        self.value.extend_from_slice(v);
    }

    /// Starts an object; set each field with [`VariantBuilder::key`] then a value.
    pub fn begin_object(&mut self) {
        self.before_value();
        self.stack.push(Frame::Object {
            start: self.value.len(),
            fields_start: self.fields.len(),
        });
    }

    /// Starts an array.
    pub fn begin_array(&mut self) {
        self.before_value();
        self.stack.push(Frame::Array {
            start: self.value.len(),
            elements_start: self.elements.len(),
        });
    }

    /// Ends the current object and writes its header (fields are put in key order, and
    /// duplicate keys reported, by [`VariantBuilder::finish`]).
    pub fn end_object(&mut self) -> Result<()> {
        let Some(Frame::Object {
            start,
            fields_start,
        }) = self.stack.pop()
        else {
            panic!("end_object without begin_object");
        };
        // Fields are written in insertion order; `finish` sorts them by (sorted) dictionary id,
        // comparing integers instead of strings, and rejects duplicate keys.
        let fields = &self.fields[fields_start..];
        if fields.windows(2).any(|w| w[0].0 >= w[1].0) {
            self.objects_unordered = true;
        }
        let n = fields.len();
        let data_size = self.value.len() - start;
        let id_width = width_for(self.dict.len().saturating_sub(1));
        self.min_id_width = self.min_id_width.min(id_width);
        let offset_width = width_for(data_size);
        let is_large = n > 255;
        let header = &mut self.header;
        header.clear();
        header.push(
            basic_type::OBJECT
                | ((is_large as u8) << 6)
                | (((id_width - 1) as u8) << 4)
                | (((offset_width - 1) as u8) << 2),
        );
        write_uint(header, n as u32, if is_large { 4 } else { 1 });
        for f in fields.iter() {
            write_uint(header, f.0, id_width);
        }
        for f in fields.iter() {
            write_uint(header, f.1, offset_width);
        }
        write_uint(header, data_size as u32, offset_width);
        self.fields.truncate(fields_start);
        insert_header(&mut self.value, start, &self.header);
        Ok(())
    }

    /// Ends the current array and writes its header.
    pub fn end_array(&mut self) {
        let Some(Frame::Array {
            start,
            elements_start,
        }) = self.stack.pop()
        else {
            panic!("end_array without begin_array");
        };
        let n = self.elements.len() - elements_start;
        let data_size = self.value.len() - start;
        let offset_width = width_for(data_size);
        let is_large = n > 255;
        let header = &mut self.header;
        header.clear();
        header
            .push(basic_type::ARRAY | ((is_large as u8) << 4) | (((offset_width - 1) as u8) << 2));
        write_uint(header, n as u32, if is_large { 4 } else { 1 });
        for &o in &self.elements[elements_start..] {
            write_uint(header, o, offset_width);
        }
        write_uint(header, data_size as u32, offset_width);
        self.elements.truncate(elements_start);
        insert_header(&mut self.value, start, &self.header);
    }

    /// Finishes the row: sorts the dictionary, rewrites field ids, and writes the metadata.
    /// Afterwards [`VariantBuilder::metadata`] and [`VariantBuilder::value`] hold the result.
    pub fn finish(&mut self) -> Result<()> {
        debug_assert!(self.stack.is_empty(), "finish with open containers");
        let n = self.dict.len();
        let same_keys = self.previous_valid && self.dict.row_keys == self.previous_keys;
        self.previous_valid = false;
        let ranked = !same_keys && n > 1 && self.dict.ranks_cover_row();
        let dict_unsorted = if same_keys {
            self.previous_unsorted
        } else if ranked {
            (1..n).any(|i| self.dict.rank_of(i - 1) >= self.dict.rank_of(i))
        } else {
            (1..n).any(|i| self.dict.key(i - 1) >= self.dict.key(i))
        };
        let mut metadata_current = same_keys;
        if dict_unsorted {
            if !same_keys {
                let dict = &self.dict;
                self.order.clear();
                self.order.extend(0..n as u32);
                if ranked {
                    self.order
                        .sort_unstable_by_key(|&a| dict.rank_of(a as usize));
                } else {
                    self.order
                        .sort_unstable_by(|&a, &b| dict.key(a as usize).cmp(dict.key(b as usize)));
                }
                self.remap.clear();
                self.remap.resize(n, 0);
                for (new_id, &old_id) in self.order.iter().enumerate() {
                    self.remap[old_id as usize] = new_id as u32;
                }
            }
            if width_for(n - 1) > self.min_id_width {
                // An object was closed with ids narrower than the final dictionary needs:
                // re-encode the whole value with the sorted dictionary (this overwrites
                // `metadata`).
                self.reencode_sorted()?;
                metadata_current = false;
            } else {
                self.sort_objects(true)?;
            }
        } else if self.objects_unordered {
            self.sort_objects(false)?;
        }
        if !metadata_current {
            self.write_metadata(dict_unsorted);
        }
        self.previous_keys.clear();
        self.previous_keys.extend_from_slice(&self.dict.row_keys);
        self.previous_unsorted = dict_unsorted;
        self.previous_valid = true;
        Ok(())
    }

    /// Walks the value (iteratively) and, in every object, maps field ids through `remap` (when
    /// `remapped`) and sorts the fields by id, which is key order for a sorted dictionary.
    /// Equal ids are duplicate keys.
    fn sort_objects(&mut self, remapped: bool) -> Result<()> {
        let value = &mut self.value;
        let positions = &mut self.positions;
        let pairs = &mut self.pairs;
        positions.clear();
        positions.push(0);
        while let Some(pos) = positions.pop() {
            let header = value[pos];
            let basic = header & 0x03;
            if basic != basic_type::OBJECT && basic != basic_type::ARRAY {
                continue;
            }
            let is_object = basic == basic_type::OBJECT;
            let layout = ContainerLayout::read(&value[pos..], is_object)?;
            if !is_object {
                for i in 0..layout.num {
                    positions.push(pos + layout.data_start + layout.offset(&value[pos..], i)?);
                }
                continue;
            }
            pairs.clear();
            for i in 0..layout.num {
                let id = layout.field_id(&value[pos..], i)?;
                let id = if remapped { self.remap[id] } else { id as u32 };
                pairs.push((id, layout.offset(&value[pos..], i)? as u32));
            }
            if pairs.windows(2).any(|w| w[0].0 >= w[1].0) {
                pairs.sort_unstable_by_key(|p| p.0);
                if let Some(w) = pairs.windows(2).find(|w| w[0].0 == w[1].0) {
                    let old = if remapped {
                        self.order[w[0].0 as usize]
                    } else {
                        w[0].0
                    };
                    let key = String::from_utf8_lossy(self.dict.key(old as usize)).into_owned();
                    return Err(VariantError::DuplicateKey(key));
                }
            }
            for (i, &(id, offset)) in pairs.iter().enumerate() {
                put_uint(
                    value,
                    pos + layout.ids_start + i * layout.id_size,
                    id,
                    layout.id_size,
                );
                put_uint(
                    value,
                    pos + layout.offsets_start + i * layout.offset_size,
                    offset,
                    layout.offset_size,
                );
                positions.push(pos + layout.data_start + offset as usize);
            }
        }
        Ok(())
    }

    fn write_metadata(&mut self, sorted_by_order: bool) {
        let n = self.dict.len();
        let total = self.dict.row_bytes();
        let width = width_for(total.max(n));
        let m = &mut self.metadata;
        m.clear();
        m.push(0x01 | 0x10 | (((width - 1) as u8) << 6));
        write_uint(m, n as u32, width);
        let dict = &self.dict;
        let mut pos = 0u32;
        write_uint(m, 0, width);
        let key_at = |i: usize| {
            if sorted_by_order {
                dict.key(self.order[i] as usize)
            } else {
                dict.key(i)
            }
        };
        for i in 0..n {
            pos += key_at(i).len() as u32;
            write_uint(m, pos, width);
        }
        for i in 0..n {
            m.extend_from_slice(key_at(i));
        }
    }

    /// Slow path of [`VariantBuilder::finish`]: copies the value into a fresh builder whose
    /// dictionary is pre-seeded in sorted order.
    fn reencode_sorted(&mut self) -> Result<()> {
        let mut sorted = VariantBuilder::new();
        for &old in &self.order {
            sorted.dict.intern(self.dict.key(old as usize));
        }
        // Build metadata in insertion order to read the current value.
        self.write_metadata(false);
        let current = Variant::try_new(&self.metadata, &self.value)?;
        sorted.append_variant(current)?;
        // Its dictionary is seeded in sorted order: this only sorts the objects' fields.
        sorted.finish()?;
        std::mem::swap(&mut self.value, &mut sorted.value);
        Ok(())
    }

    /// Appends a copy of `v` (and its children), re-interning keys in this builder's dictionary.
    pub fn append_variant(&mut self, v: Variant<'_>) -> Result<()> {
        self.append_variant_depth(v, 0)
    }

    #[recursive::recursive]
    fn append_variant_depth(&mut self, v: Variant<'_>, depth: usize) -> Result<()> {
        if depth > super::validate::DEFAULT_MAX_DEPTH {
            return Err(VariantError::DepthLimitExceeded(
                super::validate::DEFAULT_MAX_DEPTH,
            ));
        }
        match v.get()? {
            Value::Object(obj) => {
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
            _ => {
                let bytes = v.exact_value_bytes()?;
                self.before_value();
                self.value.extend_from_slice(bytes);
            }
        }
        Ok(())
    }

    /// The metadata bytes of the last finished row.
    pub fn metadata(&self) -> &[u8] {
        &self.metadata
    }

    /// The value bytes of the last finished row.
    pub fn value(&self) -> &[u8] {
        &self.value
    }
}

/// Inserts `header` at `start`, moving the container's data (already written) right with one
/// `memmove`.
#[inline]
fn insert_header(value: &mut Vec<u8>, start: usize, header: &[u8]) {
    let end = value.len();
    value.resize(end + header.len(), 0);
    value.copy_within(start..end, start + header.len());
    value[start..start + header.len()].copy_from_slice(header);
}

/// Number of decimal digits of `|v|` (1 for 0).
pub(crate) fn decimal_digits(v: i128) -> u32 {
    let mut u = v.unsigned_abs();
    let mut d = 1;
    while u >= 10 {
        u /= 10;
        d += 1;
    }
    d
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
