"""Writes the DuckDB-made fixtures of sqllogictests/parquet_variant.slt (an independent writer).

Run by hand when they need remaking (CI reads the committed files and never needs DuckDB):
    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install duckdb==2.0.0
    /tmp/venv/bin/python sqllogictests/data/duckdb_fixtures.py

- duckdb_variant_auto.parquet: DuckDB's default COPY, which shreds every field it sees
  (its JSON -> VARIANT cast makes 12.50 a DOUBLE).
- duckdb_variant_shredded.parquet: COPY with an explicit SHREDDING type.
"""
import os

import duckdb

HERE = os.path.dirname(os.path.abspath(__file__))
QUERY = """SELECT id, (j::JSON)::VARIANT AS v FROM (VALUES
  (1, '{"user":{"id":7,"name":"ada"},"tags":["a","b"],"price":12.50,"b":1,"a":2}'),
  (2, '{"user":{"id":8},"tags":[],"price":null}'),
  (3, '[1,2,3]'),
  (4, '"s"'),
  (5, NULL),
  (6, '{"a":1.5e300,"zz":true}')) t(id, j)"""

con = duckdb.connect()
con.sql(f"COPY ({QUERY}) TO '{HERE}/duckdb_variant_auto.parquet'")
con.sql(
    f"COPY ({QUERY}) TO '{HERE}/duckdb_variant_shredded.parquet' "
    "(SHREDDING {v: 'STRUCT(user STRUCT(id BIGINT, name VARCHAR), price DECIMAL(4,2))'})"
)
