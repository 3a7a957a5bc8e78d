"""Writes the Parquet files parquet_unreadable_files.slt reads (run from this folder:
python3 make.py [path/to/variant-sql], default ../../../target/debug/variant-sql).

good_0.parquet and good_1.parquet hold ids 1-100 and 101-200 with a variant v = {"n": id,
"tag": "t<id % 7>"}. Each folder holds both, plus one file made from good_0.parquet:
- truncated/truncated.parquet: its first half (no footer);
- bad_page/bad_page.parquet: bytes 20-159 inverted, inside the first column chunk (the `id`
  column's dictionary page, at offset 4), so the footer reads but the page does not.
Two more folders hold both good files and a file whose bytes are sound:
- cast_error/text.parquet: ids 201-210 with v = {"n": "x<id>", "tag": "t<id % 7>"}, a valid
  file whose `n` no integer cast takes (the query's error, never a corrupt file);
- bad_variant/bad_variant.parquet: ids 201-203 whose v is not a variant (value byte 0xFC, an
  unknown primitive type), written unshredded.
Two folders hold both good files and a file on which the parquet and arrow-ipc crates (59.3)
panic, which the scan turns into an error naming the file:
- panic_page/bad_page_header.parquet: ids 201-203, v written first, unshredded and
  uncompressed, byte 12 (in the page header of `v.metadata`) set to 0: the reader divides by it;
- panic_schema/bad_arrow_schema.parquet: ids 301-303, character 37 of the footer's base64
  ARROW:schema set to 'A': arrow-ipc panics decoding the schema.
text_column/ holds numbers.parquet (ids 1-100, s = the id as text) and words.parquet (ids
101-110, s = "w<id>"): plain text whose cast to INT fails, in a filter the reader evaluates.
"""
import os
import shutil
import subprocess
import sys

variant_sql = sys.argv[1] if len(sys.argv) > 1 else "../../../target/debug/variant-sql"


def copy(first, last, name, n="id", v=None, settings=()):
    v = v or f"parse_json('{{\"n\":' || {n} || ',\"tag\":\"t' || (id % 7) || '\"}}')"
    sql = (
        f"COPY (SELECT id, {v} AS v "
        f"FROM generate_series({first}, {last}) AS s(id)) TO '{name}' STORED AS PARQUET"
    )
    commands = [arg for setting in settings for arg in ("-c", setting)] + ["-c", sql]
    subprocess.run([variant_sql, "-q", "--no-sample", *commands], check=True, capture_output=True)


copy(1, 100, "good_0.parquet")
copy(101, 200, "good_1.parquet")
good = open("good_0.parquet", "rb").read()
for folder, name, data in [
    ("truncated", "truncated.parquet", good[: len(good) // 2]),
    ("bad_page", "bad_page.parquet", good[:20] + bytes(b ^ 0xFF for b in good[20:160]) + good[160:]),
]:
    os.makedirs(folder, exist_ok=True)
    for g in ["good_0.parquet", "good_1.parquet"]:
        shutil.copy(g, os.path.join(folder, g))
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)
for folder, name, first, last, kwargs in [
    ("cast_error", "text.parquet", 201, 210, {"n": "'\"x' || id || '\"'"}),
    (
        "bad_variant",
        "bad_variant.parquet",
        201,
        203,
        {
            "v": "named_struct('metadata', X'010000', 'value', X'FC')",
            "settings": ["SET variant.shred_on_write = false"],
        },
    ),
]:
    os.makedirs(folder, exist_ok=True)
    for g in ["good_0.parquet", "good_1.parquet"]:
        shutil.copy(g, os.path.join(folder, g))
    copy(first, last, os.path.join(folder, name), **kwargs)

def with_panic(folder, name, first, last, damage, v_first=False, settings=""):
    os.makedirs(folder, exist_ok=True)
    for g in ["good_0.parquet", "good_1.parquet"]:
        shutil.copy(g, os.path.join(folder, g))
    columns = "v, id" if v_first else "id, v"
    v = "parse_json('{\"n\":' || id || ',\"tag\":\"t' || (id % 7) || '\"}')"
    sql = (
        f"COPY (SELECT {columns} FROM (SELECT id, {v} AS v FROM generate_series({first}, {last}) "
        f"AS s(id))) TO '{name}' STORED AS PARQUET {settings}"
    )
    subprocess.run([variant_sql, "-q", "--no-sample", "-c", sql], check=True, capture_output=True)
    data = bytearray(open(name, "rb").read())
    damage(data)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)
    os.remove(name)


def zero_byte_12(data):
    data[12] = 0


def arrow_schema_char_37(data):
    key = b"ARROW:schema"
    start = data.index(key) + len(key) + 3  # the key, then the value's type and length
    data[start + 37] = ord("A")


with_panic(
    "panic_page", "bad_page_header.parquet", 201, 203, zero_byte_12, v_first=True,
    settings="OPTIONS ('variant.shred.v' 'none', 'format.compression' 'uncompressed')",
)
with_panic("panic_schema", "bad_arrow_schema.parquet", 301, 303, arrow_schema_char_37)

for g in ["good_0.parquet", "good_1.parquet"]:
    os.remove(g)

os.makedirs("text_column", exist_ok=True)
for name, first, last, text in [
    ("numbers.parquet", 1, 100, "CAST(id AS VARCHAR)"),
    ("words.parquet", 101, 110, "'w' || id"),
]:
    sql = (
        f"COPY (SELECT id, {text} AS s FROM generate_series({first}, {last}) AS t(id)) "
        f"TO 'text_column/{name}' STORED AS PARQUET"
    )
    subprocess.run([variant_sql, "-q", "--no-sample", "-c", sql], check=True, capture_output=True)
