"""Writes the JSON files json_files.slt reads (run from this folder: python3 make.py).

Every file is small and written byte for byte here, so the expected rows in the .slt file can be
read off this script. Compressed copies use the standard tools (gzip, bzip2, xz, zstd).
"""
import gzip
import os
import subprocess

EVENTS = (
    b'{"kind":"commit","did":"a","time_us":1700000000000001,'
    b'"commit":{"operation":"create","collection":"app.bsky.feed.post"}}\n'
    b'{"kind":"identity","did":"b","time_us":1700000000000002}\n'
    b"\n"
    b'{"kind":"commit","did":"c","time_us":1700000000000003,'
    b'"commit":{"operation":"delete","collection":"app.bsky.feed.like"}}\n'
    b"   \n"
    b'{"kind":"account","did":"d","time_us":1700000000000004,"n":1.50}\n'
)


def write(name, data):
    with open(name, "wb") as f:
        f.write(data)


write("events.ndjson", EVENTS)
for tool, ext in [("gzip", "gz"), ("bzip2", "bz2"), ("xz", "xz"), ("zstd", "zst")]:
    out = subprocess.run([tool, "-c"], input=EVENTS, check=True, capture_output=True).stdout
    write(f"events.ndjson.{ext}", out)
# gzip without the extension: read with 'compression' 'gzip'
write("events_gzip.data", gzip.compress(EVENTS, mtime=0))
# a gzip stream cut short: an error naming the file
write("truncated.json.gz", gzip.compress(EVENTS * 20, mtime=0)[:120])

# a byte order mark, CRLF line ends, a blank CRLF line, no newline at the end
write("crlf_bom.json", b'\xef\xbb\xbf{"a":1}\r\n\r\n{"a":2}\r\n["x",null]')

# bad documents among good ones (lines 2, 3, 4 and 6 are bad)
write(
    "bad.ndjson",
    b'{"a":1}\n'
    b'{"a":\n'
    b'{"a":1,"a":2}\n'
    b'{"s":"\xff"}\n'
    b'{"a":3}\n'
    b'{"a":4',
)

# one document nested 1001 deep (over the limit of 1000), one 1000 deep
write("deep.ndjson", b"[" * 1001 + b"]" * 1001 + b"\n" + b"[" * 1000 + b"]" * 1000 + b"\n")

# multiLine: a pretty-printed top-level array, a single pretty-printed object, a broken array
write("array.json", b'[\n  {"a": 1,\n   "b": [1, 2]},\n  "two",\n  3.0e0\n]\n')
write("single.json", b'{\n  "a": 1,\n  "b": {"c": [true, false]}\n}\n')
write("broken_array.json", b'[\n  {"a": 1},\n  {"a":\n')

# a folder of two files, one compressed, and a file the glob leaves out
write("logs/2026-11-01.json", b'{"day":1,"n":1}\n{"day":1,"n":2}\n')
write("logs/2026-11-02.json.gz", gzip.compress(b'{"day":2,"n":3}\n', mtime=0))
write("logs/notes.txt", b'{"day":0,"n":0}\n')
