//! Reading variants from Parquet: the scan (`source`), the per-file expression adapter
//! (`expr_adapter`) and the paths it reads from shredded leaves (`shredded_get`), the footer's
//! facts (`facts`), row-group and page pruning on shredded leaves (`pruning`), and whole-value
//! reads moved out of filters into the scan (`whole_value_filters`).

pub(crate) mod expr_adapter;
pub(crate) mod facts;
pub(crate) mod pruning;
pub(crate) mod shredded_get;
pub(crate) mod source;
pub(crate) mod whole_value_filters;
