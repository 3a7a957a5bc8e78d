//! The bundled sample dataset: a few thousand web/app analytics and API-log events, generated
//! deterministically from a fixed seed (no files, no network), registered as the table `events`:
//!
//! | column    | type        | content                                                  |
//! |-----------|-------------|----------------------------------------------------------|
//! | `id`      | BIGINT      | 1, 2, 3, ...                                             |
//! | `ts`      | TIMESTAMP   | increasing, starting 2024-03-01 00:00:00 (no time zone)  |
//! | `kind`    | VARCHAR     | `page_view`, `click`, `search`, `purchase`, ...          |
//! | `payload` | VARIANT     | the event body: nested objects, arrays, strings, ints,   |
//! |           |             | decimals, doubles, booleans, nulls and missing fields    |
//!
//! The payload JSON text is generated here and turned into variants by `parse_json`, so the numbers
//! follow its rules: `19.99` becomes a decimal, `1.25e-2` a double, `3000000000` an int64.
use std::fmt::Write as _;
use std::sync::Arc;

use datafusion::arrow::array::{
    ArrayRef, Int64Array, RecordBatch, StringArray, TimestampNanosecondArray,
};
use datafusion::arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use datafusion::datasource::MemTable;
use datafusion::error::Result;
use datafusion::prelude::{SessionContext, col};

use datafusion_parquet_variant::functions::parse_json::parse_json_udf;

use crate::rng::Rng;

/// The seed of the bundled dataset.
pub const DEFAULT_SEED: u64 = 0x5EED_2024_0301;
/// The number of events in the bundled dataset.
pub const DEFAULT_EVENTS: usize = 5000;
/// The name the bundled dataset is registered under.
pub const TABLE_NAME: &str = "events";
/// Timestamp of the first event: 2024-03-01T00:00:00, in microseconds since the epoch.
const START_MICROS: i64 = 1_709_251_200_000_000;

/// Every event kind, with its weight (out of 100) in the generated data.
pub const KINDS: [(&str, u32); 8] = [
    ("page_view", 34),
    ("click", 20),
    ("api_request", 15),
    ("search", 10),
    ("purchase", 7),
    ("error", 5),
    ("experiment", 5),
    ("signup", 4),
];

/// One generated event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SampleEvent {
    /// 1-based, increasing.
    pub id: i64,
    /// Microseconds since the epoch, increasing.
    pub ts_micros: i64,
    /// One of [`KINDS`].
    pub kind: &'static str,
    /// The event body as compact JSON text.
    pub payload: String,
}

/// Generates `n` events from `seed`. The same arguments always give the same events.
pub fn generate(n: usize, seed: u64) -> Vec<SampleEvent> {
    let mut rng = Rng::new(seed);
    let users: Vec<User> = (0..400).map(|i| User::new(&mut rng, i)).collect();
    let mut ts = START_MICROS;
    let mut events = Vec::with_capacity(n);
    let mut session = String::new();
    let mut session_left = 0;
    let mut user: Option<&User> = None;
    for i in 0..n {
        // Events come in sessions of a few events by the same (possibly anonymous) visitor.
        if session_left == 0 {
            session = format!("s-{:08x}", rng.next_u64() as u32);
            session_left = 1 + rng.below(12);
            user = if rng.chance(22) {
                None
            } else {
                Some(&users[rng.below(users.len() as u64) as usize])
            };
        }
        session_left -= 1;
        ts += 200_000 + rng.below(360_000_000) as i64;
        let kind = pick_kind(&mut rng);
        let payload = event_payload(&mut rng, kind, &session, user);
        let mut text = String::with_capacity(384);
        payload.write(&mut text);
        events.push(SampleEvent {
            id: i as i64 + 1,
            ts_micros: ts,
            kind,
            payload: text,
        });
    }
    events
}

/// The events as a record batch `id BIGINT, ts TIMESTAMP, kind VARCHAR, raw VARCHAR` (raw JSON).
pub fn raw_batch(events: &[SampleEvent]) -> Result<RecordBatch> {
    let schema = Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("ts", DataType::Timestamp(TimeUnit::Nanosecond, None), false),
        Field::new("kind", DataType::Utf8, false),
        Field::new("raw", DataType::Utf8, false),
    ]);
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(events.iter().map(|e| e.id))),
        Arc::new(TimestampNanosecondArray::from_iter_values(
            events.iter().map(|e| e.ts_micros * 1000),
        )),
        Arc::new(StringArray::from_iter_values(events.iter().map(|e| e.kind))),
        Arc::new(StringArray::from_iter_values(
            events.iter().map(|e| e.payload.as_str()),
        )),
    ];
    Ok(RecordBatch::try_new(Arc::new(schema), columns)?)
}

/// Generates the bundled dataset and registers it in `ctx` as the in-memory table `name` with the
/// columns `id, ts, kind, payload VARIANT` (the payload built by `parse_json`). Returns the number
/// of rows.
pub async fn register_sample(ctx: &SessionContext, name: &str) -> Result<usize> {
    let events = generate(DEFAULT_EVENTS, DEFAULT_SEED);
    let batch = raw_batch(&events)?;
    let df = ctx.read_batch(batch)?.select(vec![
        col("id"),
        col("ts"),
        col("kind"),
        parse_json_udf().call(vec![col("raw")]).alias("payload"),
    ])?;
    let schema = Arc::clone(df.schema().inner());
    let batches = df.collect().await?;
    let table = MemTable::try_new(schema, vec![batches])?;
    ctx.register_table(name, Arc::new(table))?;
    Ok(events.len())
}

fn pick_kind(rng: &mut Rng) -> &'static str {
    let total: u32 = KINDS.iter().map(|(_, w)| w).sum();
    let mut r = rng.below(total as u64) as u32;
    for (kind, weight) in KINDS {
        if r < weight {
            return kind;
        }
        r -= weight;
    }
    KINDS[0].0
}

/// A JSON value under construction; written compactly by [`Json::write`].
enum Json {
    Null,
    Bool(bool),
    Int(i64),
    /// A decimal number written with exactly `scale` fraction digits: (unscaled, scale).
    Decimal(i64, u32),
    /// A double written in exponent notation (so `parse_json` makes it a double).
    Double(f64),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(&'static str, Json)>),
}

impl Json {
    fn str(s: impl Into<String>) -> Json {
        Json::Str(s.into())
    }

    fn write(&self, out: &mut String) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Json::Decimal(unscaled, scale) => {
                let p = 10i64.pow(*scale);
                let sign = if *unscaled < 0 { "-" } else { "" };
                let u = unscaled.unsigned_abs();
                let (int, frac) = (u / p as u64, u % p as u64);
                let _ = write!(out, "{sign}{int}.{frac:0width$}", width = *scale as usize);
            }
            Json::Double(d) => {
                let _ = write!(out, "{d:e}");
            }
            Json::Str(s) => write_string(out, s),
            Json::Arr(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write(out);
                }
                out.push(']');
            }
            Json::Obj(fields) => {
                out.push('{');
                for (i, (key, value)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_string(out, key);
                    out.push(':');
                    value.write(out);
                }
                out.push('}');
            }
        }
    }
}

fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A registered user; anonymous visitors have none.
struct User {
    id: i64,
    plan: &'static str,
    country: &'static str,
    city: &'static str,
    os: &'static str,
    browser: &'static str,
    mobile: bool,
    email_verified: Option<bool>,
}

const PLANS: [&str; 6] = ["free", "free", "free", "pro", "pro", "enterprise"];
const PLACES: [(&str, &str); 12] = [
    ("DE", "Berlin"),
    ("DE", "München"),
    ("FR", "Paris"),
    ("US", "New York"),
    ("US", "San Francisco"),
    ("GB", "London"),
    ("JP", "東京"),
    ("BR", "São Paulo"),
    ("IN", "Bengaluru"),
    ("NL", "Amsterdam"),
    ("ES", "Málaga"),
    ("CA", "Montréal"),
];
const DEVICES: [(&str, &str, bool); 7] = [
    ("iOS", "Safari", true),
    ("Android", "Chrome", true),
    ("macOS", "Safari", false),
    ("macOS", "Firefox", false),
    ("Windows", "Edge", false),
    ("Windows", "Chrome", false),
    ("Linux", "Firefox", false),
];

impl User {
    fn new(rng: &mut Rng, i: i64) -> User {
        let (country, city) = *rng.pick(&PLACES);
        let (os, browser, mobile) = *rng.pick(&DEVICES);
        User {
            id: 10_000 + i * 7 + rng.range(0, 6),
            plan: PLANS[rng.below(PLANS.len() as u64) as usize],
            country,
            city,
            os,
            browser,
            mobile,
            email_verified: match rng.below(10) {
                0 => None,
                1..=2 => Some(false),
                _ => Some(true),
            },
        }
    }

    fn json(&self) -> Json {
        let mut fields = vec![
            ("id", Json::Int(self.id)),
            ("plan", Json::str(self.plan)),
            (
                "geo",
                Json::Obj(vec![
                    ("country", Json::str(self.country)),
                    ("city", Json::str(self.city)),
                ]),
            ),
        ];
        if let Some(v) = self.email_verified {
            fields.push(("email_verified", Json::Bool(v)));
        }
        Json::Obj(fields)
    }
}

const PAGES: [(&str, &str); 8] = [
    ("/", "Home"),
    ("/products", "All products"),
    ("/products/{id}", "Product details"),
    ("/cart", "Your cart"),
    ("/checkout", "Checkout"),
    ("/blog/variant-type", "The VARIANT type, explained"),
    ("/docs/sql", "SQL reference"),
    ("/pricing", "Pricing — plans & \"fair use\""),
];
const REFERRERS: [&str; 4] = [
    "https://www.google.com/",
    "https://news.ycombinator.com/",
    "https://duckduckgo.com/",
    "https://t.co/x9k2",
];
const QUERIES: [&str; 10] = [
    "running shoes",
    "red \"trail\" shoes",
    "winterjacke damen",
    "usb-c hub",
    "café au lait mug",
    "ノートパソコン",
    "gift card",
    "standing desk 160x80",
    "back\\slash",
    "",
];
const API_PATHS: [&str; 6] = [
    "/v1/items",
    "/v1/items/{id}",
    "/v1/orders",
    "/v1/users/me",
    "/v2/search",
    "/healthz",
];
const ERRORS: [(&str, &str); 5] = [
    ("E_TIMEOUT", "upstream timed out after 30s"),
    (
        "E_NULL_REF",
        "Cannot read properties of undefined (reading 'price')",
    ),
    ("E_RATE_LIMIT", "too many requests"),
    ("E_PAYMENT_DECLINED", "card declined: insufficient funds"),
    ("E_VALIDATION", "field \"email\" is invalid"),
];

fn product_path(rng: &mut Rng, template: &str) -> String {
    template.replace("{id}", &rng.range(100, 999).to_string())
}

fn device(rng: &mut Rng, user: Option<&User>) -> Json {
    let (os, browser, mobile) = match user {
        Some(u) => (u.os, u.browser, u.mobile),
        None => *rng.pick(&DEVICES),
    };
    let mut fields = vec![
        ("os", Json::str(os)),
        ("browser", Json::str(browser)),
        ("mobile", Json::Bool(mobile)),
    ];
    if rng.chance(80) {
        let (w, h) = if mobile {
            *rng.pick(&[(390, 844), (412, 915), (360, 800)])
        } else {
            *rng.pick(&[(1920, 1080), (2560, 1440), (1440, 900)])
        };
        fields.push((
            "screen",
            Json::Obj(vec![("w", Json::Int(w)), ("h", Json::Int(h))]),
        ));
    }
    Json::Obj(fields)
}

fn event_payload(rng: &mut Rng, kind: &str, session: &str, user: Option<&User>) -> Json {
    let mut fields: Vec<(&'static str, Json)> = vec![("session_id", Json::str(session))];
    match user {
        Some(u) => fields.push(("user", u.json())),
        // Anonymous visitors: mostly no `user` field at all, sometimes an explicit null.
        None if rng.chance(25) => fields.push(("user", Json::Null)),
        None => {}
    }
    match kind {
        "page_view" => {
            let (path, title) = *rng.pick(&PAGES);
            let mut page = vec![
                ("path", Json::str(product_path(rng, path))),
                ("title", Json::str(title)),
            ];
            match rng.below(4) {
                0 => page.push(("referrer", Json::Null)),
                1 => {}
                _ => page.push(("referrer", Json::str(*rng.pick(&REFERRERS)))),
            }
            fields.push(("page", Json::Obj(page)));
            fields.push(("device", device(rng, user)));
            fields.push(("duration_ms", Json::Int(rng.range(50, 120_000))));
            fields.push(("scroll_depth", Json::Decimal(rng.range(0, 100), 2)));
        }
        "click" => {
            let (id, text) = *rng.pick(&[
                ("btn-add-to-cart", "Add to cart"),
                ("btn-buy-now", "Buy now"),
                ("nav-pricing", "Pricing"),
                ("link-docs", "Docs"),
            ]);
            fields.push((
                "target",
                Json::Obj(vec![("id", Json::str(id)), ("text", Json::str(text))]),
            ));
            fields.push((
                "position",
                Json::Arr(vec![
                    Json::Int(rng.range(0, 1920)),
                    Json::Int(rng.range(0, 1080)),
                ]),
            ));
            if rng.chance(30) {
                fields.push(("modifiers", Json::Arr(vec![Json::str("shift")])));
            }
            fields.push(("device", device(rng, user)));
        }
        "search" => {
            fields.push(("query", Json::str(*rng.pick(&QUERIES))));
            fields.push(("results", Json::Int(rng.range(0, 480))));
            let mut filters = Vec::new();
            if rng.chance(50) {
                filters.push((
                    "category",
                    Json::str(*rng.pick(&["shoes", "outdoor", "office"])),
                ));
            }
            if rng.chance(30) {
                filters.push(("price_max", Json::Decimal(rng.range(1000, 30000), 2)));
            }
            if rng.chance(20) {
                filters.push(("in_stock", Json::Bool(true)));
            }
            fields.push(("filters", Json::Obj(filters)));
            fields.push((
                "latency_s",
                Json::Double(rng.range(800, 90_000) as f64 / 1e6),
            ));
        }
        "purchase" => {
            let currency = *rng.pick(&["EUR", "EUR", "USD", "GBP", "JPY"]);
            let count = 1 + rng.below(4) as usize;
            let mut total = 0i64;
            let items = (0..count)
                .map(|_| {
                    let qty = rng.range(1, 3);
                    let cents = rng.range(199, 24_999);
                    total += qty * cents;
                    let mut item = vec![
                        ("sku", Json::str(format!("SKU-{:05}", rng.below(100_000)))),
                        ("qty", Json::Int(qty)),
                        ("price", Json::Decimal(cents, 2)),
                    ];
                    if rng.chance(15) {
                        item.push(("gift_wrap", Json::Bool(true)));
                    }
                    Json::Obj(item)
                })
                .collect();
            fields.push((
                "order_id",
                Json::str(format!("ORD-{}", 700_000 + rng.below(300_000))),
            ));
            fields.push(("currency", Json::str(currency)));
            fields.push(("items", Json::Arr(items)));
            fields.push(("total", Json::Decimal(total, 2)));
            fields.push(("tax_rate", Json::Decimal(*rng.pick(&[19, 20, 7, 0]), 2)));
            match rng.below(5) {
                0 => fields.push(("coupon", Json::str("SPRING10"))),
                1 => fields.push(("coupon", Json::Null)),
                _ => {}
            }
            let method = *rng.pick(&["card", "card", "paypal", "invoice"]);
            let mut payment = vec![("method", Json::str(method))];
            if method == "card" {
                payment.push((
                    "brand",
                    Json::str(*rng.pick(&["visa", "mastercard", "amex"])),
                ));
                payment.push(("3ds", Json::Bool(rng.chance(70))));
            }
            fields.push(("payment", Json::Obj(payment)));
        }
        "signup" => {
            fields.push((
                "method",
                Json::str(*rng.pick(&["email", "google", "github"])),
            ));
            fields.push(("marketing_opt_in", Json::Bool(rng.chance(35))));
            if rng.chance(25) {
                fields.push((
                    "referral_code",
                    Json::str(format!("REF{}", rng.range(1000, 9999))),
                ));
            }
            fields.push(("device", device(rng, user)));
        }
        "api_request" => {
            let method = *rng.pick(&["GET", "GET", "GET", "POST", "PUT", "DELETE"]);
            let status = *rng.pick(&[
                200, 200, 200, 200, 201, 204, 304, 400, 401, 404, 429, 500, 503,
            ]);
            let template = *rng.pick(&API_PATHS);
            let path = product_path(rng, template);
            let mut http = vec![
                ("method", Json::str(method)),
                ("path", Json::str(path)),
                ("status", Json::Int(status)),
                (
                    "latency_s",
                    Json::Double(rng.range(300, 2_500_000) as f64 / 1e6),
                ),
            ];
            if method != "GET" && method != "DELETE" {
                http.push(("request_bytes", Json::Int(rng.range(40, 64_000))));
            }
            http.push(("response_bytes", Json::Int(rng.range(0, 4_000_000_000))));
            fields.push(("request_id", Json::str(format!("{:016x}", rng.next_u64()))));
            fields.push(("http", Json::Obj(http)));
            fields.push((
                "client",
                Json::Obj(vec![
                    (
                        "ip",
                        Json::str(format!(
                            "10.{}.{}.{}",
                            rng.below(256),
                            rng.below(256),
                            rng.below(256)
                        )),
                    ),
                    (
                        "sdk",
                        Json::str(*rng.pick(&["python/2.31.0", "node/18.3.1", "go/1.4.0"])),
                    ),
                ]),
            ));
            if status == 429 {
                fields.push((
                    "rate_limit",
                    Json::Obj(vec![
                        ("limit", Json::Int(1000)),
                        ("remaining", Json::Int(0)),
                        ("reset_s", Json::Int(rng.range(1, 60))),
                    ]),
                ));
            }
        }
        "error" => {
            let (code, message) = *rng.pick(&ERRORS);
            let depth = rng.below(4) as usize;
            let stack = (0..depth)
                .map(|i| {
                    Json::str(format!(
                        "at fn{} (app.js:{}:{})",
                        i,
                        rng.range(1, 900),
                        rng.range(1, 80)
                    ))
                })
                .collect();
            fields.push((
                "error",
                Json::Obj(vec![
                    ("code", Json::str(code)),
                    ("message", Json::str(message)),
                    (
                        "retryable",
                        Json::Bool(code == "E_TIMEOUT" || code == "E_RATE_LIMIT"),
                    ),
                    ("stack", Json::Arr(stack)),
                ]),
            ));
            fields.push((
                "severity",
                Json::str(*rng.pick(&["warning", "error", "error", "fatal"])),
            ));
            // A heterogeneous array: what a logging SDK's free-form context often looks like.
            fields.push((
                "context",
                Json::Arr(vec![
                    Json::str("attempt"),
                    Json::Int(rng.range(1, 5)),
                    Json::Bool(rng.chance(50)),
                    Json::Null,
                ]),
            ));
            if rng.chance(40) {
                fields.push((
                    "release",
                    Json::str(format!("v3.{}.{}", rng.below(20), rng.below(10))),
                ));
            }
        }
        _ => {
            // experiment: feature flags and a score.
            fields.push((
                "experiment",
                Json::str(*rng.pick(&["new_checkout", "search_ranking_v2"])),
            ));
            fields.push(("variant", Json::str(*rng.pick(&["control", "A", "B"]))));
            fields.push((
                "flags",
                Json::Obj(vec![
                    ("dark_mode", Json::Bool(rng.chance(40))),
                    ("beta", Json::Bool(rng.chance(10))),
                    ("max_items", Json::Int(rng.range(10, 100))),
                ]),
            ));
            fields.push(("score", Json::Double(rng.range(-5_000, 5_000) as f64 / 1e4)));
            fields.push(("exposures", Json::Int(rng.range(1, 3_000_000_000_000))));
        }
    }
    if user.is_some() && rng.chance(15) {
        fields.push((
            "tags",
            Json::Arr(vec![Json::str("returning"), Json::str("newsletter")]),
        ));
    }
    Json::Obj(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic() {
        assert_eq!(generate(300, DEFAULT_SEED), generate(300, DEFAULT_SEED));
        assert_ne!(generate(50, DEFAULT_SEED), generate(50, DEFAULT_SEED + 1));
        // A prefix of a longer run is the shorter run.
        assert_eq!(generate(100, 7)[..], generate(200, 7)[..100]);
    }

    #[test]
    fn count_ids_and_timestamps() {
        let events = generate(DEFAULT_EVENTS, DEFAULT_SEED);
        assert_eq!(events.len(), DEFAULT_EVENTS);
        for (i, e) in events.iter().enumerate() {
            assert_eq!(e.id, i as i64 + 1);
            if i > 0 {
                assert!(e.ts_micros > events[i - 1].ts_micros);
            }
        }
        for (kind, _) in KINDS {
            assert!(events.iter().any(|e| e.kind == kind), "no {kind} event");
        }
        let bytes: usize = events.iter().map(|e| e.payload.len()).sum();
        assert!(bytes < 2_000_000, "{bytes} bytes of JSON");
    }

    #[test]
    fn every_payload_is_json_with_varied_shapes() {
        let events = generate(DEFAULT_EVENTS, DEFAULT_SEED);
        let mut missing_user = 0;
        let mut null_user = 0;
        let mut decimals = 0;
        let mut doubles = 0;
        for e in &events {
            let v: serde_json::Value = serde_json::from_str(&e.payload)
                .unwrap_or_else(|err| panic!("event {}: {err}: {}", e.id, e.payload));
            let obj = v.as_object().expect("an object");
            assert!(obj["session_id"].is_string());
            match obj.get("user") {
                None => missing_user += 1,
                Some(serde_json::Value::Null) => null_user += 1,
                Some(u) => assert!(u["id"].is_i64()),
            }
            decimals += usize::from(e.payload.contains(".") && !e.payload.contains("e-"));
            doubles += usize::from(e.payload.contains("e-"));
        }
        assert!(
            missing_user > 100 && null_user > 20,
            "{missing_user} {null_user}"
        );
        assert!(decimals > 100 && doubles > 100, "{decimals} {doubles}");
        // Strings with escapes and non-ASCII text survive.
        assert!(events.iter().any(|e| e.payload.contains(r#"\"trail\""#)));
        assert!(events.iter().any(|e| e.payload.contains("東京")));
    }

    #[test]
    fn json_writer_formats_numbers() {
        let mut s = String::new();
        Json::Arr(vec![
            Json::Decimal(5, 2),
            Json::Decimal(-1999, 2),
            Json::Double(0.0125),
            Json::Int(-3),
            Json::str("a\"b\\c\u{1}"),
        ])
        .write(&mut s);
        assert_eq!(s, r#"[0.05,-19.99,1.25e-2,-3,"a\"b\\c\u0001"]"#);
    }

    /// JSON equality with numbers compared by value (`1.00` and `1` are the same decimal).
    fn same(a: &serde_json::Value, b: &serde_json::Value) -> bool {
        use serde_json::Value;
        match (a, b) {
            (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
            (Value::Array(x), Value::Array(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
            }
            (Value::Object(x), Value::Object(y)) => {
                x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
            }
            _ => a == b,
        }
    }

    #[tokio::test]
    async fn registers_a_variant_table() -> Result<()> {
        let ctx = SessionContext::new();
        datafusion_parquet_variant::register_all(&ctx)?;
        let n = register_sample(&ctx, TABLE_NAME).await?;
        let schema = ctx.table(TABLE_NAME).await?.schema().as_arrow().clone();
        assert!(datafusion_parquet_variant::variant_array::is_variant_field(
            schema.field_with_name("payload")?
        ));
        let batches = ctx
            .sql("SELECT count(*) AS n, count(DISTINCT kind) AS k FROM events")
            .await?
            .collect()
            .await?;
        let formatted =
            datafusion::arrow::util::pretty::pretty_format_batches(&batches)?.to_string();
        assert!(formatted.contains(&format!("| {n} | 8 |")), "{formatted}");
        // Every payload renders back to the same JSON value.
        let batches = ctx
            .sql("SELECT to_json(payload) AS j FROM events ORDER BY id")
            .await?
            .collect()
            .await?;
        let events = generate(DEFAULT_EVENTS, DEFAULT_SEED);
        let mut i = 0;
        for batch in &batches {
            let column = batch
                .column(0)
                .as_any()
                .downcast_ref::<StringArray>()
                .unwrap();
            for text in column.iter() {
                let ours: serde_json::Value = serde_json::from_str(text.unwrap()).unwrap();
                let expected: serde_json::Value = serde_json::from_str(&events[i].payload).unwrap();
                assert!(
                    same(&ours, &expected),
                    "event {}: {ours} vs {expected}",
                    i + 1
                );
                i += 1;
            }
        }
        assert_eq!(i, n);
        Ok(())
    }
}
