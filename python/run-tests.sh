#!/usr/bin/env bash
# The Python package's tests: builds the extension (the dev profile, in the workspace's target
# directory, shared with `cargo test`) into a venv of its own and runs pytest on python/tests.
# `cargo test` runs this script (variant-sql/tests/python_package.rs); arguments go to pytest.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
venv="${DFPV_PYTHON_VENV:-$root/target/python-venv}"
if [ ! -x "$venv/bin/pytest" ] || [ "$here/requirements-test.txt" -nt "$venv/.installed" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements-test.txt"
    touch "$venv/.installed"
fi
cd "$here"
VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" "$venv/bin/maturin" develop --quiet
exec "$venv/bin/python" -m pytest -q tests "$@"
