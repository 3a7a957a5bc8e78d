//! JSON documents out of a file's bytes, into variant batches: [`DocumentReader`] takes the
//! bytes in chunks of any size (as they arrive from the store, after decompression), cuts them
//! into documents (lines, or the elements of one top-level array with `multiLine`), parses each
//! as `parse_json` does and appends it to the batch being built. A document split across chunks
//! is copied once; every other one is parsed where it lies. What it holds is bounded by the
//! batch and by the longest document allowed (a longer one is skipped to its end, not held).
use std::mem;
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, RecordBatch, RecordBatchOptions, StringBuilder};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::Result;
use memchr::memchr;

use super::options::{JsonReadOptions, Mode};
use crate::codec::{JsonParser, VariantBuilder, excerpt};
use crate::variant_array::VariantArrayBuilder;

/// A UTF-8 byte order mark, skipped at the start of a file.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// How much of a document longer than the limit is kept for its error and its corrupt-record
/// text.
const KEPT_OF_OVERSIZED: usize = 1024;

/// A document that could not be read (mode FAILFAST makes it the query's error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadRecord {
    /// Its line, counted from 1 at the first byte this reader was given.
    pub line: u64,
    /// The offset of its first byte in the (decompressed) file.
    pub offset: u64,
    /// What is wrong with it.
    pub message: String,
    /// The start of its text.
    pub excerpt: String,
}

/// Which bytes of the file are this reader's: lines whose first byte lies in `start..end` (the
/// rule DataFusion's NDJSON reader follows, so byte ranges that cover a file give each line to
/// exactly one of them).
#[derive(Debug, Clone, Copy)]
pub struct ByteRange {
    /// The file offset of the first byte the reader is given: `start - 1` when `start > 0`, so
    /// that it can tell whether a line begins at `start`.
    pub first_byte: u64,
    /// Whether the bytes given begin inside a line that belongs to the range before.
    pub skip_first_line: bool,
    /// Lines starting at or after this offset are not read.
    pub end: u64,
}

impl ByteRange {
    /// A whole file (or a whole decompressed stream).
    pub const WHOLE: ByteRange = ByteRange {
        first_byte: 0,
        skip_first_line: false,
        end: u64::MAX,
    };

    /// The lines starting in `start..end` of a file of `size` bytes.
    pub fn lines_in(start: u64, end: u64, size: u64) -> ByteRange {
        ByteRange {
            first_byte: start.saturating_sub(1),
            skip_first_line: start > 0,
            end: if end >= size { u64::MAX } else { end },
        }
    }
}

/// Where `multiLine` reading stands in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    /// NDJSON: one document a line.
    Lines,
    /// Before the first value of the file.
    Begin,
    /// The file is one document (it does not start with `[`).
    Single,
    /// Inside the top-level array, before an element (`first`: right after `[`).
    BeforeElement { first: bool },
    /// Inside an element of the top-level array.
    InElement {
        depth: u64,
        in_string: bool,
        escaped: bool,
    },
    /// After the top-level array's `]`: only whitespace may follow.
    AfterArray,
    /// The file's structure is broken; the rest is ignored.
    Broken,
}

/// Cuts bytes into JSON documents and builds variant batches from them (see the module).
pub struct DocumentReader {
    mode: Mode,
    max_document_bytes: usize,
    batch_size: usize,
    schema: SchemaRef,
    /// Whether the batch holds the variant column and the corrupt-record column.
    with_variant: bool,
    with_corrupt: bool,
    parser: JsonParser,
    builder: VariantBuilder,
    out: VariantArrayBuilder,
    corrupt: StringBuilder,
    rows: usize,
    framing: Framing,
    range: ByteRange,
    /// File offset of the next byte given.
    offset: u64,
    /// Newlines passed since the first line of the range.
    lines: u64,
    /// The current document's bytes, when it spans chunks (or in multi-line mode).
    pending: Vec<u8>,
    /// The current document is longer than the limit: its bytes past the kept start are dropped.
    oversized: bool,
    /// Where the current document began: file offset and relative line.
    doc_offset: u64,
    doc_line: u64,
    /// Whether a byte of the first document has been seen (a BOM can only come before it).
    started: bool,
    /// Where the first line of the range begins, once known.
    first_line_start: Option<u64>,
    /// Lines starting at `range.end` or later were reached.
    done: bool,
    bad_records: usize,
    /// The byte sizes of the last batch (metadata, value): the next one's capacity.
    last_bytes: (usize, usize),
}

impl DocumentReader {
    /// A reader of `range` giving batches of up to `batch_size` rows with `schema`'s columns
    /// (the table's variant column and corrupt-record column, those of them `schema` holds).
    pub fn new(
        options: &JsonReadOptions,
        schema: SchemaRef,
        batch_size: usize,
        range: ByteRange,
    ) -> Self {
        let with_variant = schema.index_of(&options.variant_column).is_ok();
        let with_corrupt = options
            .corrupt_column
            .as_ref()
            .is_some_and(|c| schema.index_of(c).is_ok());
        let batch_size = batch_size.max(1);
        DocumentReader {
            mode: options.mode,
            max_document_bytes: options.max_document_bytes,
            batch_size,
            schema,
            with_variant,
            with_corrupt,
            parser: JsonParser::new(),
            builder: VariantBuilder::new(),
            out: VariantArrayBuilder::with_capacity(batch_size),
            corrupt: StringBuilder::new(),
            rows: 0,
            framing: if options.multi_line {
                Framing::Begin
            } else {
                Framing::Lines
            },
            range,
            offset: range.first_byte,
            lines: 0,
            pending: Vec::new(),
            oversized: false,
            doc_offset: range.first_byte,
            doc_line: 0,
            started: range.first_byte > 0,
            first_line_start: (!range.skip_first_line).then_some(range.first_byte),
            done: false,
            bad_records: 0,
            last_bytes: (0, 0),
        }
    }

    /// Whether a batch is ready ([`Self::flush`]).
    pub fn is_full(&self) -> bool {
        self.rows >= self.batch_size
    }

    /// Whether the range's last line has been read: later bytes are not needed.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Bad records met so far (kept as NULL or dropped).
    pub fn bad_records(&self) -> usize {
        self.bad_records
    }

    /// Where the range's first line begins in the file, once known.
    pub fn first_line_start(&self) -> Option<u64> {
        self.first_line_start
    }

    /// The bytes this reader holds: the batch being built and the pending document.
    pub fn memory_size(&self) -> usize {
        let (metadata, value) = self.out.byte_lengths();
        metadata + value + 9 * self.rows + self.pending.capacity() + self.corrupt_bytes()
    }

    fn corrupt_bytes(&self) -> usize {
        self.corrupt.values_slice().len()
    }

    /// Reads documents from `buf` (the file's next bytes) until the batch is full or the range
    /// is done; returns how many bytes it took (the caller gives the rest again after
    /// [`Self::flush`]). Mode FAILFAST returns the first bad document as the error.
    pub fn decode(&mut self, buf: &[u8]) -> std::result::Result<usize, BadRecord> {
        let taken = match self.framing {
            Framing::Lines => self.decode_lines(buf)?,
            _ => self.decode_multi_line(buf)?,
        };
        self.offset += taken as u64;
        Ok(taken)
    }

    /// The end of the input: the last document, if it has no newline after it (or, with
    /// `multiLine`, the file's one document, or the error of an unclosed array).
    pub fn finish(&mut self) -> std::result::Result<(), BadRecord> {
        if self.done {
            return Ok(());
        }
        self.done = true;
        match self.framing {
            Framing::Lines if !self.pending.is_empty() || self.oversized => {
                self.pending_document()?;
            }
            Framing::Single => self.pending_document()?,
            Framing::BeforeElement { .. } | Framing::InElement { .. } => {
                let text = mem::take(&mut self.pending);
                self.bad_record(
                    &text,
                    "the file ends inside its top-level array".to_string(),
                )?;
            }
            _ => {}
        }
        Ok(())
    }

    /// The rows built so far as a batch (None when there are none).
    pub fn flush(&mut self) -> Result<Option<RecordBatch>> {
        if self.rows == 0 {
            return Ok(None);
        }
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(2);
        if self.with_variant {
            self.last_bytes = self.out.byte_lengths();
            let (metadata, value) = self.last_bytes;
            let out = mem::replace(
                &mut self.out,
                VariantArrayBuilder::with_byte_capacity(self.batch_size, metadata, value),
            );
            columns.push(out.finish()?);
        }
        if self.with_corrupt {
            columns.push(Arc::new(self.corrupt.finish()));
        }
        let options = RecordBatchOptions::new().with_row_count(Some(self.rows));
        self.rows = 0;
        Ok(Some(RecordBatch::try_new_with_options(
            Arc::clone(&self.schema),
            columns,
            &options,
        )?))
    }

    fn decode_lines(&mut self, buf: &[u8]) -> std::result::Result<usize, BadRecord> {
        let mut i = 0;
        if self.first_line_start.is_none() {
            // the bytes before the range's first newline belong to the range before
            match memchr(b'\n', buf) {
                Some(p) => {
                    i = p + 1;
                    self.first_line_start = Some(self.offset + i as u64);
                }
                None => return Ok(buf.len()),
            }
        }
        while i < buf.len() && !self.is_full() {
            let in_document = !self.pending.is_empty() || self.oversized;
            if !in_document {
                let start = self.offset + i as u64;
                if start >= self.range.end {
                    self.done = true;
                    return Ok(i);
                }
                self.doc_offset = start;
                self.doc_line = self.lines;
            }
            match memchr(b'\n', &buf[i..]) {
                Some(p) => {
                    let line = &buf[i..i + p];
                    if in_document || line.len() > self.max_document_bytes {
                        self.keep(line);
                        self.pending_document()?;
                    } else {
                        self.document(line)?;
                    }
                    self.lines += 1;
                    i += p + 1;
                }
                None => {
                    self.keep(&buf[i..]);
                    i = buf.len();
                }
            }
        }
        Ok(i)
    }

    /// The pending document, read and cleared (its buffer kept for the next one).
    fn pending_document(&mut self) -> std::result::Result<(), BadRecord> {
        let text = mem::take(&mut self.pending);
        let result = self.document(&text);
        self.pending = text;
        self.pending.clear();
        result
    }

    /// Appends `bytes` to the pending document, up to the limit (past it, only the start is
    /// kept, for the error).
    fn keep(&mut self, bytes: &[u8]) {
        if self.oversized {
            return;
        }
        if self.pending.len() + bytes.len() > self.max_document_bytes {
            self.oversized = true;
            let room = KEPT_OF_OVERSIZED.saturating_sub(self.pending.len());
            self.pending
                .extend_from_slice(&bytes[..room.min(bytes.len())]);
            self.pending.truncate(KEPT_OF_OVERSIZED);
            self.pending.shrink_to(KEPT_OF_OVERSIZED);
        } else {
            self.pending.extend_from_slice(bytes);
        }
    }

    fn decode_multi_line(&mut self, buf: &[u8]) -> std::result::Result<usize, BadRecord> {
        let mut i = 0;
        // where the current element's bytes in `buf` begin (copied to `pending` at its end)
        let mut segment = 0;
        while i < buf.len() {
            let b = buf[i];
            match &mut self.framing {
                Framing::Begin => {
                    let at = self.offset + i as u64;
                    if at < 3 && !self.started && b == BOM[at as usize] {
                        // a byte order mark
                    } else if is_json_whitespace(b) {
                        self.started = true;
                    } else {
                        self.started = true;
                        self.doc_offset = at;
                        self.doc_line = self.lines;
                        if b == b'[' {
                            self.framing = Framing::BeforeElement { first: true };
                        } else {
                            self.framing = Framing::Single;
                            segment = i;
                            continue;
                        }
                    }
                }
                Framing::Single => {
                    // the whole file is the document: copied below, at the end of `buf`
                }
                Framing::BeforeElement { first } => {
                    if b == b']' && *first {
                        self.framing = Framing::AfterArray;
                    } else if !is_json_whitespace(b) {
                        if b == b']' || b == b',' {
                            self.framing = Framing::Broken;
                            return self.structure_error(buf, i, "a value is missing in the array");
                        }
                        self.doc_offset = self.offset + i as u64;
                        self.doc_line = self.lines;
                        self.framing = Framing::InElement {
                            depth: 0,
                            in_string: false,
                            escaped: false,
                        };
                        segment = i;
                        continue;
                    }
                }
                Framing::InElement {
                    depth,
                    in_string,
                    escaped,
                } => {
                    if *in_string {
                        if *escaped {
                            *escaped = false;
                        } else if b == b'\\' {
                            *escaped = true;
                        } else if b == b'"' {
                            *in_string = false;
                        }
                    } else {
                        match b {
                            b'"' => *in_string = true,
                            b'{' | b'[' => *depth += 1,
                            b'}' | b']' if *depth > 0 => *depth -= 1,
                            b',' | b']' if *depth == 0 => {
                                self.framing = if b == b',' {
                                    Framing::BeforeElement { first: false }
                                } else {
                                    Framing::AfterArray
                                };
                                self.keep(&buf[segment..i]);
                                self.pending_document()?;
                                i += 1;
                                if self.is_full() {
                                    return Ok(i);
                                }
                                continue;
                            }
                            _ => {}
                        }
                    }
                }
                Framing::AfterArray => {
                    if !is_json_whitespace(b) {
                        self.framing = Framing::Broken;
                        self.doc_offset = self.offset + i as u64;
                        self.doc_line = self.lines;
                        return self.structure_error(buf, i, "content after the top-level array");
                    }
                }
                Framing::Broken | Framing::Lines => return Ok(buf.len()),
            }
            if b == b'\n' {
                self.lines += 1;
            }
            i += 1;
        }
        if matches!(self.framing, Framing::Single | Framing::InElement { .. }) {
            self.keep(&buf[segment..]);
        }
        Ok(buf.len())
    }

    /// A bad record for the file's broken structure at `buf[i..]`; the rest of the file is
    /// ignored.
    fn structure_error(
        &mut self,
        buf: &[u8],
        i: usize,
        message: &str,
    ) -> std::result::Result<usize, BadRecord> {
        let end = buf.len().min(i + KEPT_OF_OVERSIZED);
        self.bad_record(&buf[i..end], message.to_string())?;
        Ok(buf.len())
    }

    /// One document's text: parsed into the batch, or a bad record. Blank text is no document.
    fn document(&mut self, text: &[u8]) -> std::result::Result<(), BadRecord> {
        let mut text = text;
        if !self.started {
            self.started = true;
            text = text.strip_prefix(BOM).unwrap_or(text);
        }
        if text.iter().all(|b| is_json_whitespace(*b)) && !self.oversized {
            return Ok(());
        }
        if mem::take(&mut self.oversized) {
            return self.bad_record(
                text,
                format!(
                    "the document is longer than maxDocumentBytes ({} bytes)",
                    self.max_document_bytes
                ),
            );
        }
        let s = match std::str::from_utf8(text) {
            Ok(s) => s,
            Err(e) => {
                return self.bad_record(text, format!("invalid UTF-8 at byte {}", e.valid_up_to()));
            }
        };
        match self.parser.parse(s, &mut self.builder) {
            Ok(()) => {
                if self.with_variant {
                    self.out.append_built(&self.builder);
                }
                if self.with_corrupt {
                    self.corrupt.append_null();
                }
                self.rows += 1;
                Ok(())
            }
            Err(e) => self.bad_record(text, e.to_string()),
        }
    }

    fn bad_record(&mut self, text: &[u8], message: String) -> std::result::Result<(), BadRecord> {
        self.bad_records += 1;
        let text = String::from_utf8_lossy(text);
        let text = text.trim_end_matches(['\r', '\n']);
        match self.mode {
            Mode::FailFast => Err(BadRecord {
                line: self.doc_line + 1,
                offset: self.doc_offset,
                message,
                excerpt: excerpt(text.trim_start()),
            }),
            Mode::DropMalformed => Ok(()),
            Mode::Permissive => {
                if self.with_variant {
                    self.out.append_null();
                }
                if self.with_corrupt {
                    self.corrupt.append_value(text);
                }
                self.rows += 1;
                Ok(())
            }
        }
    }
}

/// JSON's whitespace (a form feed is not).
fn is_json_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::array::{Array, AsArray};

    use super::*;
    use crate::codec::{SessionTimeZone, Variant, write_json};

    fn reader(options: &JsonReadOptions, batch_size: usize, range: ByteRange) -> DocumentReader {
        DocumentReader::new(options, options.schema(), batch_size, range)
    }

    /// Every row of `batches` as (JSON or None, corrupt text or None).
    fn rows(batches: &[RecordBatch]) -> Vec<(Option<String>, Option<String>)> {
        let mut out = Vec::new();
        for batch in batches {
            let v = batch.column(0).as_struct();
            let corrupt = (batch.num_columns() > 1).then(|| batch.column(1).as_string::<i32>());
            for i in 0..batch.num_rows() {
                let json = v.is_valid(i).then(|| {
                    let m = v.column(0).as_binary::<i32>().value(i);
                    let val = v.column(1).as_binary::<i32>().value(i);
                    let mut s = Vec::new();
                    let v = Variant::try_new(m, val).unwrap();
                    write_json(&mut s, v, &SessionTimeZone::utc()).unwrap();
                    String::from_utf8(s).unwrap()
                });
                let text = corrupt.and_then(|c| c.is_valid(i).then(|| c.value(i).to_string()));
                out.push((json, text));
            }
        }
        out
    }

    /// Reads `chunks` whole, flushing when full; FAILFAST errors are returned.
    fn read_chunks(
        r: &mut DocumentReader,
        chunks: &[&[u8]],
    ) -> std::result::Result<Vec<RecordBatch>, BadRecord> {
        let mut batches = Vec::new();
        for chunk in chunks {
            let mut rest = *chunk;
            while !rest.is_empty() && !r.is_done() {
                let n = r.decode(rest)?;
                rest = &rest[n..];
                if r.is_full() {
                    batches.extend(r.flush().unwrap());
                }
            }
        }
        r.finish()?;
        batches.extend(r.flush().unwrap());
        Ok(batches)
    }

    /// `text` given in two chunks, cut at every offset, reads as `whole` does.
    fn assert_every_cut_reads(o: &JsonReadOptions, text: &[u8], whole: &[String]) {
        for cut in 0..=text.len() {
            let mut r = reader(o, 2, ByteRange::WHOLE);
            let got: Vec<String> =
                rows(&read_chunks(&mut r, &[&text[..cut], &text[cut..]]).unwrap())
                    .into_iter()
                    .map(|(j, _)| j.unwrap())
                    .collect();
            assert_eq!(got, whole, "cut at {cut}");
        }
    }

    fn json_rows(text: &[u8], options: &JsonReadOptions) -> Vec<String> {
        let mut r = reader(options, 3, ByteRange::WHOLE);
        rows(&read_chunks(&mut r, &[text]).unwrap())
            .into_iter()
            .map(|(j, _)| j.unwrap_or_else(|| "NULL".to_string()))
            .collect()
    }

    #[test]
    fn lines_blank_lines_crlf_and_a_bom() {
        let o = JsonReadOptions::default();
        let text = b"\xEF\xBB\xBF{\"a\":1}\r\n\r\n   \n\t\n[1, 2]\r\n\"s\"\nnull\n{\"b\":2.50}";
        assert_eq!(
            json_rows(text, &o),
            ["{\"a\":1}", "[1,2]", "\"s\"", "null", "{\"b\":2.5}"]
        );
    }

    #[test]
    fn documents_split_across_every_chunk_boundary() {
        let o = JsonReadOptions::default();
        let text: &[u8] = b"{\"a\":1}\n\n{\"b\":[true,null]}\r\n\"x\"\n";
        let whole = json_rows(text, &o);
        assert_every_cut_reads(&o, text, &whole);
    }

    #[test]
    fn failfast_names_the_line_and_an_excerpt() {
        let o = JsonReadOptions::default();
        let mut r = reader(&o, 10, ByteRange::WHOLE);
        let e = read_chunks(&mut r, &[b"{\"a\":1}\n\n{\"a\":\n{}\n"]).unwrap_err();
        assert_eq!(e.line, 3);
        assert_eq!(e.offset, 9);
        assert_eq!(e.excerpt, "{\"a\":");
    }

    #[test]
    fn permissive_keeps_the_text_and_dropmalformed_counts() {
        let text: &[u8] = b"{\"a\":1}\n{\"a\":\r\n{\"a\":1,\"a\":2}\n\xFF\n[1]";
        let o = JsonReadOptions::from_pairs([
            ("mode", "PERMISSIVE"),
            ("columnNameOfCorruptRecord", "_corrupt_record"),
        ])
        .unwrap();
        let mut r = reader(&o, 10, ByteRange::WHOLE);
        let got = rows(&read_chunks(&mut r, &[text]).unwrap());
        assert_eq!(
            got,
            [
                (Some("{\"a\":1}".to_string()), None),
                (None, Some("{\"a\":".to_string())),
                (None, Some("{\"a\":1,\"a\":2}".to_string())),
                (None, Some("\u{FFFD}".to_string())),
                (Some("[1]".to_string()), None),
            ]
        );
        assert_eq!(r.bad_records(), 3);
        let o = JsonReadOptions::from_pairs([("mode", "DROPMALFORMED")]).unwrap();
        let mut r = reader(&o, 10, ByteRange::WHOLE);
        assert_eq!(rows(&read_chunks(&mut r, &[text]).unwrap()).len(), 2);
        assert_eq!(r.bad_records(), 3);
    }

    #[test]
    fn a_document_over_the_limit_is_a_bad_record_and_is_not_held() {
        let o = JsonReadOptions::from_pairs([("maxDocumentBytes", "100")]).unwrap();
        let long = format!("[{}1]", "1,".repeat(500));
        let text = format!("{{\"a\":1}}\n{long}\n{{\"b\":2}}\n");
        // in one chunk, and in chunks of 7 bytes (the pending copy stops at the kept start)
        for size in [text.len(), 7] {
            let chunks: Vec<&[u8]> = text.as_bytes().chunks(size).collect();
            let mut r = reader(&o, 10, ByteRange::WHOLE);
            let e = read_chunks(&mut r, &chunks).unwrap_err();
            assert_eq!(e.line, 2);
            assert!(e.excerpt.starts_with("[1,1,1,"), "{e:?}");
            assert!(
                e.message
                    .contains("longer than maxDocumentBytes (100 bytes)"),
                "{e:?}"
            );
            assert!(r.memory_size() < 4096, "held {} bytes", r.memory_size());
        }
        let o =
            JsonReadOptions::from_pairs([("maxDocumentBytes", "100"), ("mode", "DROPMALFORMED")])
                .unwrap();
        assert_eq!(json_rows(text.as_bytes(), &o), ["{\"a\":1}", "{\"b\":2}"]);
    }

    #[test]
    fn a_deep_document_is_a_bad_record() {
        let o = JsonReadOptions::default();
        let deep = format!("{}{}", "[".repeat(1001), "]".repeat(1001));
        let mut r = reader(&o, 10, ByteRange::WHOLE);
        let e = read_chunks(&mut r, &[deep.as_bytes()]).unwrap_err();
        assert!(e.message.contains("1000"), "{e:?}");
        let ok = format!("{}{}", "[".repeat(1000), "]".repeat(1000));
        assert_eq!(json_rows(ok.as_bytes(), &o).len(), 1);
    }

    #[test]
    fn multi_line_arrays_and_single_documents() {
        let o = JsonReadOptions::from_pairs([("multiLine", "true")]).unwrap();
        let text = b"\xEF\xBB\xBF [\n {\"a\": [1, {\"b\": \"],\\\"\"}]},\n 2 ,\"x\", [] ,{}\n]\n";
        let whole = json_rows(text, &o);
        assert_eq!(
            whole,
            ["{\"a\":[1,{\"b\":\"],\\\"\"}]}", "2", "\"x\"", "[]", "{}"]
        );
        assert_every_cut_reads(&o, text, &whole);
        assert_eq!(json_rows(b"{\n \"a\": 1\n}\n", &o), ["{\"a\":1}"]);
        assert_eq!(json_rows(b"[]", &o), Vec::<String>::new());
        assert_eq!(json_rows(b" \n", &o), Vec::<String>::new());
    }

    #[test]
    fn broken_multi_line_files() {
        let o = JsonReadOptions::from_pairs([("multiLine", "true")]).unwrap();
        let cases: [(&[u8], &str, u64); 5] = [
            (
                b"[{\"a\":1},\n{\"a\":",
                "the file ends inside its top-level array",
                2,
            ),
            (b"[1,,2]", "a value is missing", 1),
            (b"[1]\n x", "content after the top-level array", 2),
            (b"{\"a\":1}\n{\"a\":2}", "", 1),
            (b"[1, {\"a\" 2}]", "", 1),
        ];
        for (text, message, line) in cases {
            let mut r = reader(&o, 10, ByteRange::WHOLE);
            let e = read_chunks(&mut r, &[text]).unwrap_err();
            assert!(e.message.contains(message), "{e:?}");
            assert_eq!(e.line, line, "{e:?}");
        }
        let o =
            JsonReadOptions::from_pairs([("multiLine", "true"), ("mode", "PERMISSIVE")]).unwrap();
        assert_eq!(json_rows(b"[1, {\"a\" 2}, 3]", &o), ["1", "NULL", "3"]);
    }

    #[test]
    fn byte_ranges_give_each_line_once() {
        let o = JsonReadOptions::default();
        let text: &[u8] = b"{\"a\":1}\n\n{\"a\":22}\r\n[3]\n\"4\"\n{\"a\":5}";
        let expected = json_rows(text, &o);
        let size = text.len() as u64;
        for a in 0..=size {
            for b in a..=size {
                let mut got = Vec::new();
                for (start, end) in [(0, a), (a, b), (b, size)] {
                    if start == end {
                        continue;
                    }
                    let range = ByteRange::lines_in(start, end, size);
                    let mut r = reader(&o, 2, range);
                    let bytes = &text[range.first_byte as usize..];
                    for (j, _) in rows(&read_chunks(&mut r, &[bytes]).unwrap()) {
                        got.push(j.unwrap());
                    }
                }
                assert_eq!(got, expected, "ranges cut at {a} and {b}");
            }
        }
    }
}
