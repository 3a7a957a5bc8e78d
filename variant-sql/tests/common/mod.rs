//! The helpers of the library's tests that the program's tests share, taken from
//! `tests/common` by path: scratch folders and the local S3 server.
#![allow(dead_code)]

#[path = "../../../tests/common/s3.rs"]
pub mod s3;
#[path = "../../../tests/common/temp_path.rs"]
mod temp_path;

pub use temp_path::TempPath;

/// The repository's root, where the program's tests find the files they read (the slt examples,
/// the JSON and Parquet test data, the TLS test certificates).
pub const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
