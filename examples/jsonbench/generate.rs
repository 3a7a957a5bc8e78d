//! A JSONBench-like dataset: Bluesky firehose events (the shape of ClickHouse's JSONBench data,
//! generated here from a seed, so no download is needed).
//!
//! Each event is one JSON object: `did`, `time_us`, `kind` (`commit`, `identity`, `account`) and
//! the body of its kind. Commits carry `operation` (`create`, `update`, `delete`), a `collection`
//! and, unless deleted, a `record` whose shape depends on the collection: likes and reposts have a
//! `subject` *object* (`{cid, uri}`), follows and blocks a `subject` *string* (a did), posts have
//! text, languages, optional replies, facets and embeds (images with sizes and aspect ratios,
//! external links, quoted records). So fields are nested, optional, of mixed types across rows, and
//! arrays hold objects.
use std::fmt::Write as _;

// one SplitMix64 generator with variant-sql's sample table (its file, taken by path)
#[path = "../../variant-sql/src/rng.rs"]
#[allow(dead_code)] // (the sample uses methods the benchmark does not)
mod rng;
use rng::Rng;

/// `n` characters of base32 (as in record keys and cids).
fn base32(rng: &mut Rng, out: &mut String, n: usize) {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz234567";
    for _ in 0..n {
        out.push(ALPHABET[rng.below(32) as usize] as char);
    }
}

/// Collections of commits, with their share (per mille) of commits.
const COLLECTIONS: [(&str, u64); 9] = [
    ("app.bsky.feed.like", 480),
    ("app.bsky.graph.follow", 190),
    ("app.bsky.feed.post", 130),
    ("app.bsky.feed.repost", 120),
    ("app.bsky.graph.block", 25),
    ("app.bsky.actor.profile", 20),
    ("app.bsky.graph.listitem", 20),
    ("app.bsky.feed.threadgate", 10),
    ("chat.bsky.actor.declaration", 5),
];

const LANGS: [&str; 8] = ["en", "ja", "pt", "de", "es", "fr", "ko", "en"];

const WORDS: [&str; 24] = [
    "the", "bluesky", "today", "posting", "morning", "coffee", "art", "photo", "new", "thread",
    "why", "love", "this", "game", "music", "cat", "weather", "finally", "about", "people", "just",
    "really", "time", "week",
];

const MIME_TYPES: [&str; 3] = ["image/jpeg", "image/png", "image/webp"];

/// The first event's time (2024-11-21, as JSONBench's Bluesky files).
const FIRST_TIME_US: i64 = 1_732_206_349_000_000;
/// An event's time is its predecessor's plus less than this.
const MAX_STEP_US: i64 = 2_000;

/// Writes events as compact JSON lines.
pub struct Generator {
    rng: Rng,
    users: usize,
    time_us: i64,
}

impl Generator {
    /// A generator for a dataset with `users` distinct accounts.
    pub fn new(seed: u64, users: usize) -> Self {
        Generator {
            rng: Rng::new(seed),
            users,
            time_us: FIRST_TIME_US,
        }
    }

    /// The generator of file `n` (from 1) of a dataset of files of `rows_per_file` events, made
    /// without the files before it: its own seed, times after every time of file `n - 1` (an
    /// event advances the clock by less than 2 ms), and accounts drawn from the first
    /// `n * rows_per_file / 10` (so the first `k` files of any dataset are the `k`-file dataset,
    /// with ten events an account on average, as `new` gives for `users = rows / 10`).
    #[allow(dead_code)] // (jsonbench/generator's; the benchmark's one dataset uses `new`)
    pub fn for_file(n: usize, rows_per_file: usize) -> Self {
        Generator {
            rng: Rng::new(0x0B1E_5C1E ^ (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
            users: (n * rows_per_file / 10).max(1),
            time_us: FIRST_TIME_US + ((n - 1) * rows_per_file) as i64 * MAX_STEP_US,
        }
    }

    fn did(&mut self, out: &mut String) {
        // a stable pseudo-random did per user number
        let user = self.rng.below(self.users as u64);
        let mut r = Rng::new(user.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 0xD1D);
        out.push_str("did:plc:");
        base32(&mut r, out, 24);
    }

    fn cid(&mut self, out: &mut String) {
        out.push_str("bafyrei");
        base32(&mut self.rng, out, 52);
    }

    fn at_uri(&mut self, out: &mut String, collection: &str) {
        out.push_str("at://");
        self.did(out);
        out.push('/');
        out.push_str(collection);
        out.push('/');
        out.push_str("3lb");
        base32(&mut self.rng, out, 10);
    }

    fn created_at(&mut self, out: &mut String) {
        let seconds = self.time_us / 1_000_000 - self.rng.below(3) as i64;
        let millis = self.rng.below(1000);
        let day_seconds = seconds.rem_euclid(86_400);
        let day = 21 + (seconds - 1_732_147_200).div_euclid(86_400);
        let _ = write!(
            out,
            "\"2024-11-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z\"",
            day_seconds / 3600,
            day_seconds / 60 % 60,
            day_seconds % 60
        );
    }

    fn text(&mut self, out: &mut String, max_words: u64) {
        out.push('"');
        for i in 0..1 + self.rng.below(max_words) {
            if i > 0 {
                out.push(' ');
            }
            let word = self.rng.pick(&WORDS);
            out.push_str(word);
        }
        if self.rng.chance(5) {
            out.push_str(" \\u2728");
        }
        out.push('"');
    }

    fn strong_ref(&mut self, out: &mut String, collection: &str) {
        out.push_str("{\"cid\":\"");
        self.cid(out);
        out.push_str("\",\"uri\":\"");
        self.at_uri(out, collection);
        out.push_str("\"}");
    }

    fn blob(&mut self, out: &mut String) {
        out.push_str("{\"$type\":\"blob\",\"ref\":{\"$link\":\"bafkrei");
        base32(&mut self.rng, out, 52);
        let mime = *self.rng.pick(&MIME_TYPES);
        let size = 20_000 + self.rng.below(980_000);
        let _ = write!(out, "\"}},\"mimeType\":\"{mime}\",\"size\":{size}}}");
    }

    fn image(&mut self, out: &mut String) {
        out.push_str("{\"alt\":");
        if self.rng.chance(70) {
            out.push_str("\"\"");
        } else {
            self.text(out, 12);
        }
        if self.rng.chance(85) {
            let (w, h) = *self
                .rng
                .pick(&[(1080, 1350), (1920, 1080), (1000, 1000), (828, 1792)]);
            let _ = write!(out, ",\"aspectRatio\":{{\"height\":{h},\"width\":{w}}}");
        }
        out.push_str(",\"image\":");
        self.blob(out);
        out.push('}');
    }

    fn embed(&mut self, out: &mut String) {
        match self.rng.weighted(&[(0, 55), (1, 25), (2, 15), (3, 5)]) {
            0 => {
                out.push_str("{\"$type\":\"app.bsky.embed.images\",\"images\":[");
                for i in 0..1 + self.rng.weighted(&[(0, 70), (1, 15), (2, 8), (3, 7)]) {
                    if i > 0 {
                        out.push(',');
                    }
                    self.image(out);
                }
                out.push_str("]}");
            }
            1 => {
                out.push_str(
                    "{\"$type\":\"app.bsky.embed.external\",\"external\":{\"description\":",
                );
                self.text(out, 20);
                out.push_str(",\"title\":");
                self.text(out, 8);
                out.push_str(",\"uri\":\"https://example.com/");
                base32(&mut self.rng, out, 16);
                out.push('"');
                if self.rng.chance(60) {
                    out.push_str(",\"thumb\":");
                    self.blob(out);
                }
                out.push_str("}}");
            }
            2 => {
                out.push_str("{\"$type\":\"app.bsky.embed.record\",\"record\":");
                self.strong_ref(out, "app.bsky.feed.post");
                out.push('}');
            }
            _ => {
                out.push_str("{\"$type\":\"app.bsky.embed.video\",\"video\":");
                self.blob(out);
                let _ = write!(out, ",\"aspectRatio\":{{\"height\":1920,\"width\":1080}}}}");
            }
        }
    }

    fn post(&mut self, out: &mut String) {
        out.push_str("{\"$type\":\"app.bsky.feed.post\",\"createdAt\":");
        self.created_at(out);
        if self.rng.chance(30) {
            out.push_str(",\"embed\":");
            self.embed(out);
        }
        if self.rng.chance(15) {
            out.push_str(
                ",\"facets\":[{\"features\":[{\"$type\":\"app.bsky.richtext.facet#tag\",\"tag\":\"",
            );
            let word = self.rng.pick(&WORDS);
            out.push_str(word);
            let start = self.rng.below(40);
            let _ = write!(
                out,
                "\"}}],\"index\":{{\"byteEnd\":{},\"byteStart\":{start}}}}}]",
                start + 6
            );
        }
        if self.rng.chance(92) {
            out.push_str(",\"langs\":[\"");
            let lang = self.rng.pick(&LANGS);
            out.push_str(lang);
            out.push_str("\"]");
        }
        if self.rng.chance(40) {
            out.push_str(",\"reply\":{\"parent\":");
            self.strong_ref(out, "app.bsky.feed.post");
            out.push_str(",\"root\":");
            self.strong_ref(out, "app.bsky.feed.post");
            out.push('}');
        }
        out.push_str(",\"text\":");
        self.text(out, 30);
        out.push('}');
    }

    fn record(&mut self, out: &mut String, collection: &str) {
        match collection {
            "app.bsky.feed.post" => self.post(out),
            "app.bsky.feed.like" | "app.bsky.feed.repost" => {
                let _ = write!(out, "{{\"$type\":\"{collection}\",\"createdAt\":");
                self.created_at(out);
                out.push_str(",\"subject\":");
                self.strong_ref(out, "app.bsky.feed.post");
                out.push('}');
            }
            "app.bsky.graph.follow" | "app.bsky.graph.block" => {
                let _ = write!(out, "{{\"$type\":\"{collection}\",\"createdAt\":");
                self.created_at(out);
                out.push_str(",\"subject\":\"");
                self.did(out);
                out.push_str("\"}");
            }
            "app.bsky.graph.listitem" => {
                out.push_str("{\"$type\":\"app.bsky.graph.listitem\",\"createdAt\":");
                self.created_at(out);
                out.push_str(",\"list\":\"");
                self.at_uri(out, "app.bsky.graph.list");
                out.push_str("\",\"subject\":\"");
                self.did(out);
                out.push_str("\"}");
            }
            "app.bsky.actor.profile" => {
                out.push_str("{\"$type\":\"app.bsky.actor.profile\",\"avatar\":");
                self.blob(out);
                out.push_str(",\"description\":");
                self.text(out, 25);
                out.push_str(",\"displayName\":");
                self.text(out, 3);
                out.push('}');
            }
            _ => {
                let _ = write!(out, "{{\"$type\":\"{collection}\",\"createdAt\":");
                self.created_at(out);
                out.push_str(",\"allow\":[{\"$type\":\"app.bsky.feed.threadgate#mentionRule\"}]}");
            }
        }
    }

    /// Appends the next event to `out` (no newline).
    pub fn event(&mut self, out: &mut String) {
        self.time_us += self.rng.below(MAX_STEP_US as u64) as i64;
        out.push_str("{\"did\":\"");
        self.did(out);
        let _ = write!(out, "\",\"time_us\":{}", self.time_us);
        let kind = self
            .rng
            .weighted(&[("commit", 985), ("identity", 10), ("account", 5)]);
        let _ = write!(out, ",\"kind\":\"{kind}\"");
        match kind {
            "commit" => {
                let collection = self.rng.weighted(&COLLECTIONS);
                let operation = if collection == "app.bsky.actor.profile" {
                    "update"
                } else {
                    self.rng
                        .weighted(&[("create", 900), ("delete", 95), ("update", 5)])
                };
                out.push_str(",\"commit\":{");
                if operation != "delete" {
                    out.push_str("\"cid\":\"");
                    self.cid(out);
                    out.push_str("\",");
                }
                let _ = write!(
                    out,
                    "\"collection\":\"{collection}\",\"operation\":\"{operation}\""
                );
                if operation != "delete" {
                    out.push_str(",\"record\":");
                    self.record(out, collection);
                }
                out.push_str(",\"rev\":\"3lb");
                base32(&mut self.rng, out, 10);
                out.push_str("\",\"rkey\":\"3lb");
                base32(&mut self.rng, out, 10);
                out.push_str("\"}");
            }
            "identity" => {
                out.push_str(",\"identity\":{\"did\":\"");
                self.did(out);
                out.push_str("\",\"handle\":\"");
                base32(&mut self.rng, out, 8);
                let seq = self.rng.below(4_000_000_000);
                let _ = write!(out, ".bsky.social\",\"seq\":{seq},\"time\":");
                self.created_at(out);
                out.push('}');
            }
            _ => {
                let active = self.rng.chance(80);
                out.push_str(",\"account\":{\"active\":");
                out.push_str(if active { "true" } else { "false" });
                out.push_str(",\"did\":\"");
                self.did(out);
                let seq = self.rng.below(4_000_000_000);
                let _ = write!(out, "\",\"seq\":{seq}");
                if !active {
                    out.push_str(",\"status\":\"deactivated\"");
                }
                out.push_str(",\"time\":");
                self.created_at(out);
                out.push('}');
            }
        }
        out.push('}');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_json_objects_of_the_expected_kinds() {
        let mut g = Generator::new(7, 100);
        let mut kinds = std::collections::BTreeMap::new();
        for _ in 0..5000 {
            let mut line = String::new();
            g.event(&mut line);
            let v: serde_json::Value = serde_json::from_str(&line).expect(&line);
            let kind = v["kind"].as_str().unwrap().to_string();
            assert!(v[kind.as_str()].is_object(), "{line}");
            *kinds.entry(kind).or_insert(0) += 1;
        }
        assert!(kinds["commit"] > 4800, "{kinds:?}");
    }
}
