"""Fixtures of the Python package's tests: a fresh session, and a shredded Parquet file written
by our own COPY."""

import pytest

import datafusion_parquet_variant as dfpv


@pytest.fixture
def ctx():
    return dfpv.SessionContext(target_partitions=2)


#: Six events in three row groups of two; `v` shredded on `a` (a bigint) and `b` (a string;
#: event 3 holds the number 7 there, which stays in the residual).
EVENTS = [
    (1, '{"a": 1, "b": "x", "c": {"d": true}}'),
    (2, '{"a": 2, "b": "y"}'),
    (3, '{"a": 3, "b": 7}'),
    (4, '{"a": 4, "b": "z", "e": [1, 2.50]}'),
    (5, '{"a": 5, "b": "x"}'),
    (6, '{"a": 6}'),
]


@pytest.fixture
def shredded_file(tmp_path):
    path = tmp_path / "events.parquet"
    values = ", ".join(f"({i}, '{j}')" for i, j in EVENTS)
    writer = dfpv.SessionContext()
    result = writer.sql(
        f"COPY (SELECT id, parse_json(j) AS v FROM (VALUES {values}) AS t(id, j) ORDER BY id) "
        f"TO '{path}' STORED AS PARQUET "
        "OPTIONS ('variant.shred.v' 'struct<a bigint, b string>', "
        "'format.max_row_group_size' '2')"
    )
    # COPY runs when sql() is called: the file is there, the result is its row count
    assert path.exists()
    assert result.to_pylist() == [{"count": 6}]
    return path
