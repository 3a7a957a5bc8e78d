//! The benchmark's queries and the shredding type of its `shredded` layout (shared with the
//! distributed test, tests/distributed.rs).

/// The shredding type of the `shredded` layout: the paths the queries read.
pub const SHREDDED_PATHS: &str = "struct<did string, time_us bigint, kind string, commit struct<\
    collection string, operation string, record struct<`$type` string, subject struct<uri string>, \
    embed struct<images array<struct<image struct<size bigint>, aspectRatio struct<width bigint>>>>>>>";

/// A query: its name, its SQL over the variant column `v` of table `t`, and over the plain
/// columns (None: a whole-value query, compared between the variant layouts only).
pub struct Query {
    pub name: &'static str,
    pub what: &'static str,
    pub variant: &'static str,
    pub plain: Option<&'static str>,
    /// Some(q): the variant side is query q's, timed again against another plain reference
    /// (left out of the geomeans, and of tests that run each query once).
    pub again_of: Option<&'static str>,
}

/// q4 over the variant layouts (q4 and q4n).
const Q4_VARIANT: &str = "SELECT variant_get(v, '$.commit.record[\"$type\"]', 'string') AS type, \
    sum(v:commit.record.embed.images[0].image.size::bigint) AS bytes, \
    max(v:commit.record.embed.images[0].aspectRatio.width::bigint) AS widest \
    FROM t GROUP BY type ORDER BY type";

pub const QUERIES: &[Query] = &[
    Query {
        name: "q1",
        what: "count by $.commit.collection",
        variant: "SELECT v:commit.collection::string AS event, count(*) AS n FROM t \
                  GROUP BY event ORDER BY n DESC, event",
        plain: Some(
            "SELECT collection AS event, count(*) AS n FROM t GROUP BY event ORDER BY n DESC, event",
        ),
        again_of: None,
    },
    Query {
        name: "q2",
        what: "count + distinct users, two string filters",
        variant: "SELECT v:commit.collection::string AS event, count(*) AS n, \
                  count(DISTINCT v:did::string) AS users FROM t \
                  WHERE v:kind::string = 'commit' AND v:commit.operation::string = 'create' \
                  GROUP BY event ORDER BY n DESC, event",
        plain: Some(
            "SELECT collection AS event, count(*) AS n, count(DISTINCT did) AS users FROM t \
             WHERE kind = 'commit' AND operation = 'create' GROUP BY event ORDER BY n DESC, event",
        ),
        again_of: None,
    },
    Query {
        name: "q3",
        what: "per-user min/max of $.time_us after three filters",
        variant: "SELECT v:did::string AS user_id, min(v:time_us::bigint) AS first, \
                  max(v:time_us::bigint) AS last FROM t \
                  WHERE v:kind::string = 'commit' AND v:commit.operation::string = 'create' \
                  AND v:commit.collection::string = 'app.bsky.feed.post' \
                  GROUP BY user_id ORDER BY last - first DESC, user_id LIMIT 3",
        plain: Some(
            "SELECT did AS user_id, min(time_us) AS first, max(time_us) AS last FROM t \
             WHERE kind = 'commit' AND operation = 'create' AND collection = 'app.bsky.feed.post' \
             GROUP BY user_id ORDER BY last - first DESC, user_id LIMIT 3",
        ),
        again_of: None,
    },
    Query {
        name: "q4",
        what: "sum/max of embed.images[0] size / width per $type",
        variant: Q4_VARIANT,
        plain: Some(
            "SELECT record_type AS type, sum(image_size) AS bytes, max(image_width) AS widest \
             FROM t GROUP BY type ORDER BY type",
        ),
        again_of: None,
    },
    Query {
        name: "q4n",
        what: "q4, plain keeping the images as a typed list of structs",
        variant: Q4_VARIANT,
        plain: Some(
            "SELECT record_type AS type, sum(images[1]['image']['size']) AS bytes, \
             max(images[1]['aspectRatio']['width']) AS widest FROM t GROUP BY type ORDER BY type",
        ),
        again_of: Some("q4"),
    },
    Query {
        name: "q5",
        what: "selective filter on $.commit.record.subject.uri",
        variant: "SELECT v:did::string AS did, v:time_us::bigint AS time_us FROM t \
                  WHERE v:commit.record.subject.uri::string LIKE 'at://did:plc:aa%' \
                  ORDER BY time_us, did",
        plain: Some(
            "SELECT did, time_us FROM t WHERE subject_uri LIKE 'at://did:plc:aa%' \
             ORDER BY time_us, did",
        ),
        again_of: None,
    },
    Query {
        name: "q6",
        what: "sum(length(to_json(v))) (whole values)",
        variant: "SELECT sum(length(to_json(v))) AS chars FROM t",
        plain: None,
        again_of: None,
    },
    Query {
        name: "q7",
        what: "distinct schemas (schema_of_variant, whole values)",
        variant: "SELECT count(*) AS n, count(DISTINCT schema_of_variant(v)) AS schemas FROM t",
        plain: None,
        again_of: None,
    },
    Query {
        name: "q8",
        what: "count of valid values (is_valid_variant, whole values)",
        variant: "SELECT count(*) AS valid FROM t WHERE is_valid_variant(v)",
        plain: None,
        again_of: None,
    },
    Query {
        name: "q9",
        what: "top-level keys (variant_object_keys, whole values)",
        variant: "SELECT sum(cardinality(variant_object_keys(v))) AS keys FROM t",
        plain: None,
        again_of: None,
    },
    Query {
        name: "q10",
        what: "strip nulls (variant_strip_nulls, on the reassembled values)",
        variant: "SELECT sum(length(to_json(variant_strip_nulls(v)))) AS chars FROM t",
        plain: None,
        again_of: None,
    },
];
