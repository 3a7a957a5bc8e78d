//! Writing variants to Parquet: the sink (`sink`) and the memory its batches hold on their way to
//! the writer (`in_flight`), the shredding options and the projection that
//! shreds before it (`shred_on_write`), the sample automatic shredding infers from
//! (`input_sample`), the leaves written without a dictionary (`unique_leaves`), and `DataFrame::write_parquet` given our format (`dataframe_writes`).

pub(crate) mod dataframe_writes;
mod in_flight;
pub mod input_sample;
pub(crate) mod shred_on_write;
pub(crate) mod sink;
mod unique_leaves;
