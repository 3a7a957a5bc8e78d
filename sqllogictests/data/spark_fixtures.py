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
  the top-level values are of several kinds, as in ROWS).
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
FORCED = "struct<user: struct<id: bigint, name: string>, price: decimal(4,2), tags: array<string>>"

spark = (
    SparkSession.builder.master("local[1]")
    .config("spark.ui.enabled", "false")
    .config("spark.sql.session.timeZone", "UTC")
    .getOrCreate()
)


def write(name, settings, rows=ROWS):
    for key, value in settings.items():
        spark.conf.set(key, value)
    df = spark.createDataFrame(rows, "id int, j string").selectExpr("id", "parse_json(j) AS v")
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
for name in ["spark_variant.parquet", "spark_variant_forced.parquet", "spark_variant_inferred.parquet"]:
    back = spark.read.parquet(os.path.join(HERE, name)).orderBy("id")
    print(name, [(r.id, None if r.v is None else r.v.toJson()) for r in back.collect()])
