"""Writes the Spark-made fixtures of sqllogictests/parquet_spark.slt (Spark's own writer).

Run by hand when they need remaking (CI reads the committed files and never needs Spark):
    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install pyspark==4.3.0   # Java 17
    /tmp/venv/bin/python sqllogictests/data/spark_fixtures.py

Each file holds the rows of ROWS, `v` parsed by Spark's parse_json, written by Spark 4.3:
- spark_variant.parquet: unshredded (Spark's default: spark.sql.variant.writeShredding.enabled
  is false);
- spark_variant_forced.parquet: shredded with a forced schema
  (spark.sql.variant.forceShreddingSchemaForTest = FORCED);
- spark_variant_inferred.parquet: shredded with the schema Spark infers from the data
  (spark.sql.variant.inferShreddingSchema), here from OBJECT_ROWS (Spark shreds nothing when
  the top-level values are of several kinds, as in ROWS);
- spark_variant_nested.parquet: variants inside a struct, an array and a map (NESTED), which
  Spark writes unshredded, as VARIANT groups with `value` before `metadata` (its forced
  shredding fails on nested variants: ArrayIndexOutOfBoundsException, tried).
"""
import glob
import os
import shutil
import tempfile

from pyspark.sql import SparkSession

HERE = os.path.dirname(os.path.abspath(__file__))
ROWS = [
    (1, '{"user":{"id":7,"name":"ada"},"tags":["a","b"],"price":12.50,"b":1,"a":2}'),
    (2, '{"user":{"id":8},"tags":[],"price":null}'),
    (3, "[1,2,3]"),
    (4, '"s"'),
    (5, None),
    (6, '{"a":1.5e300,"zz":true}'),
    (7, '{"user":{"id":"nine","name":"eve"},"tags":["c",1],"price":3}'),
]
OBJECT_ROWS = [
    (i, '{"user":{"id":%d,"name":"u%d"},"tags":["t%d"],"price":%d.25%s}'
     % (i, i, i % 3, i, ',"extra":true' if i % 4 == 0 else ""))
    for i in range(1, 9)
] + [(9, '{"user":{"id":"nine"},"tags":[9],"price":"free"}'), (10, None)]
NESTED = (
    "id",
    "named_struct('a', id, 'v', parse_json(j)) AS s",
    "array(parse_json(j), parse_json('[1]')) AS arr",
    "map('k', parse_json(j)) AS m",
)
FORCED = "struct<user: struct<id: bigint, name: string>, price: decimal(4,2), tags: array<string>>"

spark = (
    SparkSession.builder.master("local[1]")
    .config("spark.ui.enabled", "false")
    .config("spark.sql.session.timeZone", "UTC")
    .getOrCreate()
)


def write(name, settings, rows=ROWS, columns=("id", "parse_json(j) AS v")):
    for key, value in settings.items():
        spark.conf.set(key, value)
    df = spark.createDataFrame(rows, "id int, j string").selectExpr(*columns)
    out = tempfile.mkdtemp()
    df.coalesce(1).write.mode("overwrite").parquet(out + "/t")
    (part,) = glob.glob(out + "/t/part-*.parquet")
    shutil.copy(part, os.path.join(HERE, name))
    shutil.rmtree(out)
    for key in settings:
        spark.conf.unset(key)


write("spark_variant.parquet", {"spark.sql.variant.writeShredding.enabled": "false"})
write(
    "spark_variant_forced.parquet",
    {
        "spark.sql.variant.writeShredding.enabled": "true",
        "spark.sql.variant.forceShreddingSchemaForTest": FORCED,
    },
)
write(
    "spark_variant_inferred.parquet",
    {
        "spark.sql.variant.writeShredding.enabled": "true",
        "spark.sql.variant.inferShreddingSchema": "true",
    },
    OBJECT_ROWS,
)
write(
    "spark_variant_nested.parquet",
    {"spark.sql.variant.writeShredding.enabled": "true"},
    ROWS,
    NESTED,
)
for name in ["spark_variant.parquet", "spark_variant_forced.parquet", "spark_variant_inferred.parquet"]:
    back = spark.read.parquet(os.path.join(HERE, name)).orderBy("id")
    print(name, [(r.id, None if r.v is None else r.v.toJson()) for r in back.collect()])
back = spark.read.parquet(os.path.join(HERE, "spark_variant_nested.parquet")).orderBy("id")
print(
    "spark_variant_nested.parquet",
    back.selectExpr(
        "id", "to_json(s.v)", "to_json(arr[0])", "to_json(arr[1])", "to_json(m['k'])"
    ).collect(),
)
