//! The Python package (`python/`): `python/run-tests.sh` builds the extension into a venv of its
//! own (pip installs maturin, pyarrow, polars, pytest and datafusion-python 55) and runs its
//! pytest suite, so that `cargo test` runs the Python tests too. It needs `python3` with `venv`
//! and pip's registry.
use std::path::Path;
use std::process::Command;

#[test]
fn the_python_package_passes_its_tests() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../python/run-tests.sh");
    let mut command = Command::new("bash");
    command.arg(&script);
    // the workers of test_workers_run_the_queries
    if cfg!(feature = "distributed")
        && let Some(binary) = option_env!("CARGO_BIN_EXE_variant-sql")
    {
        command.env("DFPV_VARIANT_SQL", binary);
    }
    let status = command.status().expect("bash runs python/run-tests.sh");
    assert!(status.success(), "python/run-tests.sh: {status}");
}
