#!/usr/bin/env bash
# A local S3-compatible server for tests/s3_object_store.rs: moto in server mode (PyPI), in a venv
# of its own under target/, on 127.0.0.1:PORT, until killed.
#   tests/s3/moto-server.sh PORT
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="${DFPV_MOTO_VENV:-$root/target/moto-venv}"
requirements="$here/requirements.txt"
if [ ! -x "$venv/bin/moto_server" ] || [ "$requirements" -nt "$venv/.installed" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements"
    touch "$venv/.installed"
fi
exec "$venv/bin/moto_server" -H 127.0.0.1 -p "$1"
