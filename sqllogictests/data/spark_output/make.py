"""Writes the folders spark_output.slt reads (run from this folder: python3 make.py
[path/to/variant-sql], default ../../../target/debug/variant-sql): folders as Spark's writers
leave them, where only some names are data (Spark's `HadoopFSUtils.shouldFilterOutPathName`).

json/: part-00000.json (ids 1-3) and part-00001.json (ids 4-5), beside what is not data: each
part's `.crc` checksum, `_SUCCESS`, a task's file under `_temporary/0/` (ids 90-91), a hidden
`.part-00002.json` (id 99) and `_spark_metadata/0`.
parquet/: part-00000.parquet (ids 1-10, v = {"n": id}), beside `.part-00000.parquet.crc`, a
hidden copy `.part-00001.parquet` (ids 1-10 again), `_SUCCESS` and
`_temporary/0/part-00002.parquet` (ids 1-10 again).
partitioned/: k=1/part-00000.parquet (ids 1-5) and k=2/part-00000.parquet (ids 6-10), beside
`_SUCCESS`, `k=1/.part-00000.parquet.crc` and `k=2/_temporary/part-00001.parquet` (ids 1-5).
"""
import os
import shutil
import subprocess
import sys

variant_sql = sys.argv[1] if len(sys.argv) > 1 else "../../../target/debug/variant-sql"
# a Hadoop checksum file's header: "crc\0", the bytes per checksum, then the checksums
CRC = b"crc\x00\x00\x00\x02\x00\x1c\x9d\x8e\x21"


def write(path, data):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def lines(ids):
    return "".join('{"id": %d, "kind": "k%d"}\n' % (i, i % 2) for i in ids).encode()


def parquet(path, first, last):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    sql = (
        "COPY (SELECT id, parse_json('{\"n\":' || id || '}') AS v "
        f"FROM generate_series({first}, {last}) AS s(id)) TO '{path}' STORED AS PARQUET"
    )
    subprocess.run([variant_sql, "-q", "--no-sample", "-c", sql], check=True, capture_output=True)


for folder in ["json", "parquet", "partitioned"]:
    shutil.rmtree(folder, ignore_errors=True)

write("json/part-00000.json", lines(range(1, 4)))
write("json/part-00001.json", lines(range(4, 6)))
write("json/.part-00000.json.crc", CRC)
write("json/.part-00001.json.crc", CRC)
write("json/_SUCCESS", b"")
write("json/_temporary/0/task_0/part-00003.json", lines(range(90, 92)))
write("json/.part-00002.json", lines([99]))
write("json/_spark_metadata/0", b'v1\n{"path":"part-00000.json","size":1}\n')

parquet("parquet/part-00000.parquet", 1, 10)
shutil.copy("parquet/part-00000.parquet", "parquet/.part-00001.parquet")
os.makedirs("parquet/_temporary/0", exist_ok=True)
shutil.copy("parquet/part-00000.parquet", "parquet/_temporary/0/part-00002.parquet")
write("parquet/.part-00000.parquet.crc", CRC)
write("parquet/_SUCCESS", b"")

parquet("partitioned/k=1/part-00000.parquet", 1, 5)
parquet("partitioned/k=2/part-00000.parquet", 6, 10)
os.makedirs("partitioned/k=2/_temporary", exist_ok=True)
shutil.copy("partitioned/k=1/part-00000.parquet", "partitioned/k=2/_temporary/part-00001.parquet")
write("partitioned/k=1/.part-00000.parquet.crc", CRC)
write("partitioned/_SUCCESS", b"")
