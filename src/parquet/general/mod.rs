//! Parquet beyond variants: logical types the parquet crate leaves plain (`logical_types`),
//! `INTERVAL` read and written exactly (`interval`), atomic writes through staging names
//! (`staged`), and the errors of files a scan reads, skipped where Spark's options say
//! (`file_errors`).

pub mod file_errors;
pub mod interval;
pub mod logical_types;
pub(crate) mod staged;
