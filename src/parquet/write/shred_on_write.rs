//! Shredded writing: which variant columns to shred ([`ShreddingOptions`], from
//! `'variant.shred.<column>' '<type>'` options or the Rust API), and the projection that shreds
//! them just before DataFusion's Parquet sink.
use std::any::Any;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, Fields, Schema, SchemaRef};
use datafusion::catalog::Session;
use datafusion::common::config::ConfigOptions;
use datafusion::common::config::{ConfigEntry, ConfigExtension, ExtensionOptions};
use datafusion::common::{DataFusionError, Result, ScalarValue, plan_err};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr::ScalarFunctionExpr;
use datafusion::physical_expr::expressions::{Column, Literal};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::projection::ProjectionExec;

use super::sink::AutoShredding;
use crate::cast::target_type::{parse_target_type, sql_type_name};
use crate::functions::shred_variant::shred_variant_udf;
use crate::parquet::variant_columns::with_fields_changed;
use crate::shredding::{InferLimits, InferenceRule, shredded_variant_type};
use crate::variant_array::{has_unshredded_variant_shape, has_variant_shape, is_variant_field};

/// The option key prefix naming a column to shred: `'variant.shred.v' 'struct<a bigint>'`.
pub const SHRED_OPTION_PREFIX: &str = "variant.shred.";

/// True for a sink column automatic shredding may shred: a variant not shredded already.
pub(crate) fn is_unshredded_variant(field: &Field) -> bool {
    is_variant_field(field) && has_unshredded_variant_shape(field.data_type())
}

/// How variant columns are written: those named with a shredding type (a SQL type such as
/// `struct<a bigint, b string>`; see [`shredded_variant_type`](crate::shredding)) shredded as
/// it; those named `none` unshredded; the others shredded with a type inferred from each file's
/// first rows (automatic shredding), unless the session option `variant.shred_on_write` is
/// false.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShreddingOptions {
    /// `(column, shredding type)`; None: not shredded.
    columns: Vec<(String, Option<DataType>)>,
    /// The inference rule of the automatic columns (`variant.shred_inference`); None: the
    /// session's.
    inference: Option<InferenceRule>,
}

/// The key of the inference rule, as a session option and as a `COPY` option.
pub const SHRED_INFERENCE_OPTION: &str = "variant.shred_inference";

/// The shredding "type" that turns shredding off for a column.
pub const NO_SHREDDING: &str = "none";

impl ShreddingOptions {
    /// No column named: every variant column shredded automatically.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `column`, shredded as `shredding_type` (`none`: not shredded); an unparsable or
    /// unshreddable type is an error.
    pub fn with_column(self, column: &str, shredding_type: &str) -> Result<Self> {
        if shredding_type.trim().eq_ignore_ascii_case(NO_SHREDDING) {
            return Ok(self.with_entry(column, None));
        }
        match parse_target_type(shredding_type) {
            Ok(t) => self.with_column_type(column, t),
            Err(e) => plan_err!("variant.shred.{column}: {e}"),
        }
    }

    /// Infers the automatic columns' shredding by `rule`, whatever the session's option.
    pub fn with_inference(mut self, rule: InferenceRule) -> Self {
        self.inference = Some(rule);
        self
    }

    /// The inference rule these options set (None: the session's).
    pub fn inference(&self) -> Option<InferenceRule> {
        self.inference
    }

    /// Adds `column`, written unshredded.
    pub fn without_shredding(self, column: &str) -> Self {
        self.with_entry(column, None)
    }

    /// The named columns, in order, each with its shredding type (None: not shredded).
    pub fn columns(&self) -> &[(String, Option<DataType>)] {
        &self.columns
    }

    fn with_entry(mut self, column: &str, shredding: Option<DataType>) -> Self {
        self.columns.retain(|(c, _)| c != column);
        self.columns.push((column.to_string(), shredding));
        self
    }

    /// Automatic shredding for the variant columns of `output_schema` (the sink's, after
    /// [`Self::apply`]) that are neither named nor shredded already, unless the session option
    /// `variant.shred_on_write` is false; with the session's sampling bounds.
    pub(crate) fn automatic(&self, state: &dyn Session, output_schema: &Schema) -> AutoShredding {
        let config = state
            .config_options()
            .extensions
            .get::<VariantConfig>()
            .cloned()
            .unwrap_or_default();
        let named = |name: &str| {
            self.columns
                .iter()
                .any(|(c, _)| c == name || c.eq_ignore_ascii_case(name))
        };
        let columns = output_schema
            .fields()
            .iter()
            .enumerate()
            .filter(|(_, f)| config.shred_on_write && is_unshredded_variant(f) && !named(f.name()))
            .map(|(i, _)| i)
            .collect();
        AutoShredding {
            columns,
            sample_rows: config.shred_sample_rows.max(1),
            sample_bytes: config.shred_sample_bytes.max(1),
            limits: InferLimits {
                rule: self.inference.unwrap_or(config.shred_inference),
                ..InferLimits::default()
            },
            sample: None,
        }
    }

    /// Adds `column`, shredded as the Arrow type `shredding`: the types of
    /// [`with_column`](Self::with_column), plus some SQL has no name for (`Time64(µs)`,
    /// nanosecond timestamps, `FixedSizeBinary(16)` for uuids).
    pub fn with_column_type(self, column: &str, shredding: DataType) -> Result<Self> {
        match shredded_variant_type(&shredding) {
            Err(DataFusionError::Plan(e)) => return plan_err!("variant.shred.{column}: {e}"),
            Err(e) => return Err(e),
            Ok(_) => {}
        }
        Ok(self.with_entry(column, Some(shredding)))
    }

    /// These columns, then `other`'s (which win for a column named in both).
    pub fn merged(mut self, other: ShreddingOptions) -> Self {
        for (column, shredding) in other.columns {
            self.columns.retain(|(c, _)| *c != column);
            self.columns.push((column, shredding));
        }
        self.inference = other.inference.or(self.inference);
        self
    }

    /// True when no column is named (every variant column is shredded automatically).
    pub fn is_empty(&self) -> bool {
        self.columns.is_empty()
    }

    /// Takes the `variant.shred.<column>` keys (also with DataFusion's `format.` prefix) out of
    /// `options`, which then hold only DataFusion's own Parquet options.
    pub fn take_from(options: &mut HashMap<String, String>) -> Result<Self> {
        let mut keys: Vec<String> = options
            .keys()
            .filter(|k| shredded_column_name(k).is_some())
            .cloned()
            .collect();
        keys.sort();
        let mut shredding = ShreddingOptions::new();
        let inference_keys = [
            SHRED_INFERENCE_OPTION.to_string(),
            format!("format.{SHRED_INFERENCE_OPTION}"),
        ];
        for key in inference_keys {
            if let Some(rule) = options.remove(&key) {
                shredding = shredding.with_inference(InferenceRule::parse(&rule)?);
            }
        }
        for key in keys {
            let value = options.remove(&key).expect("listed");
            let column = shredded_column_name(&key).expect("filtered");
            if column.is_empty() {
                return plan_err!("option '{key}' names no column");
            }
            shredding = shredding.with_column(column, &value)?;
        }
        Ok(shredding)
    }

    /// Wraps `input` in a projection that shreds the named columns, and returns it with the sink
    /// schema `output_schema` updated to the shredded types. Columns are matched by name, exactly
    /// or else ignoring case (option keys are lower-cased by the SQL parser); a name that is no
    /// variant column of the output is an error. A variant inside a column is named by its path:
    /// `s.v` for field `v` of struct `s`, `a.element` for the elements of list `a`, `m.value`
    /// for the values of map `m` (when no column has the whole name).
    pub fn apply(
        &self,
        input: Arc<dyn ExecutionPlan>,
        output_schema: &SchemaRef,
    ) -> Result<(Arc<dyn ExecutionPlan>, SchemaRef)> {
        let input_schema = input.schema();
        // per column, the variants in it to shred: (path, shredding type)
        let mut shredded: BTreeMap<usize, Vec<(Vec<String>, &DataType)>> = BTreeMap::new();
        for (column, shredding) in &self.columns {
            let (index, path) = find_variant(&input_schema, column)?;
            if let Some(shredding) = shredding {
                shredded.entry(index).or_default().push((path, shredding));
            }
        }
        // the shredding reads no option; one configuration serves every call
        let config = Arc::new(ConfigOptions::default());
        let mut exprs: Vec<(Arc<dyn PhysicalExpr>, String)> = Vec::new();
        for (index, field) in input_schema.fields().iter().enumerate() {
            let mut expr: Arc<dyn PhysicalExpr> = Arc::new(Column::new(field.name(), index));
            // a call of the hidden function, which travels in plans by name (see its module),
            // per variant of the column
            for (path, shredding) in shredded.get(&index).into_iter().flatten() {
                let mut args = vec![
                    expr,
                    Arc::new(Literal::new(ScalarValue::try_from(*shredding)?)) as _,
                ];
                args.extend(path.iter().map(|segment| {
                    Arc::new(Literal::new(ScalarValue::Utf8(Some(segment.clone())))) as _
                }));
                expr = Arc::new(ScalarFunctionExpr::try_new(
                    shred_variant_udf(),
                    args,
                    &input_schema,
                    Arc::clone(&config),
                )?);
            }
            exprs.push((expr, field.name().clone()));
        }
        let projection = ProjectionExec::try_new(exprs, input)?;
        // the sink's schema takes the shredded columns' fields from the projection
        let projected = projection.schema();
        let output_schema = with_fields_changed(output_schema, |f| {
            let index = input_schema.index_of(f.name()).ok()?;
            shredded
                .contains_key(&index)
                .then(|| Arc::clone(&projected.fields()[index]))
        });
        Ok((Arc::new(projection), output_schema))
    }
}

/// The column of `schema` that the option name `name` gives, and the path to the variant it
/// names inside that column (empty: the column itself), each segment as the schema spells it;
/// an error when it names nothing, or something other than a variant.
fn find_variant(schema: &Schema, name: &str) -> Result<(usize, Vec<String>)> {
    let whole = find_column(schema, name).map(|i| (i, vec![]));
    let (index, segments) = match whole {
        Some(found) => found,
        None => {
            let mut segments = name.split('.');
            let column = segments.next().unwrap_or_default();
            let Some(index) = find_column(schema, column) else {
                return plan_err!("variant.shred.{name}: the output has no column {column}");
            };
            (index, segments.map(String::from).collect())
        }
    };
    let mut field = schema.field(index);
    let mut path = Vec::with_capacity(segments.len());
    for segment in segments {
        let child = match field.data_type() {
            DataType::Struct(children) => {
                find_field(children, &segment).map(|i| children[i].as_ref())
            }
            DataType::List(element) | DataType::LargeList(element)
                if segment.eq_ignore_ascii_case("element") =>
            {
                Some(element.as_ref())
            }
            DataType::Map(entries, _) if segment.eq_ignore_ascii_case("value") => {
                match entries.data_type() {
                    DataType::Struct(key_value) if key_value.len() == 2 => {
                        Some(key_value[1].as_ref())
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        let Some(child) = child else {
            return plan_err!(
                "variant.shred.{name}: {} ({}) has no {segment} (a struct field, a list's \
                 element or a map's value)",
                field.name(),
                sql_type_name(field.data_type())
            );
        };
        path.push(match field.data_type() {
            DataType::Struct(_) => child.name().clone(),
            DataType::Map(..) => "value".to_string(),
            _ => "element".to_string(),
        });
        field = child;
    }
    if !(is_variant_field(field) || has_variant_shape(field.data_type())) {
        let what = if path.is_empty() { "column" } else { "field" };
        return plan_err!(
            "variant.shred.{name}: {what} {} is {}, not a VARIANT",
            field.name(),
            sql_type_name(field.data_type())
        );
    }
    Ok((index, path))
}

/// The index of the field of `fields` named `name`, exactly or else ignoring case (when only one
/// matches).
fn find_field(fields: &Fields, name: &str) -> Option<usize> {
    if let Some((i, _)) = fields.find(name) {
        return Some(i);
    }
    let mut matches =
        (fields.iter().enumerate()).filter(|(_, f)| f.name().eq_ignore_ascii_case(name));
    let first = matches.next()?;
    matches.next().is_none().then_some(first.0)
}

datafusion::common::extensions_options! {
    /// Session options of this crate, set with `SET variant.<option> = <value>`.
    pub struct VariantConfig {
        /// Whether variant columns written to Parquet without a shredding type of their own
        /// (`'variant.shred.<column>'`) are shredded with a type inferred from a sample of the
        /// rows written (see `variant_shredding_schema_agg`).
        pub shred_on_write: bool, default = true
        /// How many rows the inference samples: of a sorted write's whole input (those of
        /// smallest hash), else the first rows of each of the input's partitions (this many in
        /// all), or, where neither can be taken, of each file's first rows.
        pub shred_sample_rows: usize, default = 4096
        /// How many bytes of variant values the inference samples at most.
        pub shred_sample_bytes: usize, default = 64 * 1024 * 1024
        /// The inference rule: `default` (each place shredded on its dominant type, sparse
        /// fields kept within the column budget) or `spark` (Spark's rule).
        pub shred_inference: InferenceRule, default = InferenceRule::Default
        /// Whether Parquet scans skip files they cannot decode (a bad footer, a corrupt page,
        /// a truncated file), as Spark's `spark.sql.files.ignoreCorruptFiles`, instead of failing
        /// with an error naming the file. Skipped files are counted in the scan's
        /// `corrupt_files_skipped` metric and logged once each.
        pub ignore_corrupt_files: bool, default = false
        /// Whether Parquet scans skip files that are gone when they are read (listed when the
        /// query was planned), as Spark's `spark.sql.files.ignoreMissingFiles`; counted in
        /// `missing_files_skipped`.
        pub ignore_missing_files: bool, default = false
    }
}

// `SET variant.shred_inference = '<rule>'`: an unknown rule fails the `SET`
datafusion::common::config_field!(InferenceRule, value => InferenceRule::parse(value)?);

impl ConfigExtension for VariantConfig {
    const PREFIX: &'static str = "variant";
}

/// The `variant` namespace of table options, so that DataFusion's option checks (the CLI
/// validates `COPY` and `CREATE EXTERNAL TABLE` options against the session's table options)
/// accept `'variant.shred.<column>' '<type>'` and `'variant.shred_inference' '<rule>'`. The
/// formats read the keys themselves, from the statement's options; this only checks them (an
/// invalid type or rule fails when it is set).
#[derive(Debug, Clone, Default)]
pub struct VariantTableOptions {
    shred: BTreeMap<String, String>,
    inference: Option<InferenceRule>,
}

impl ConfigExtension for VariantTableOptions {
    const PREFIX: &'static str = "variant";
}

impl ExtensionOptions for VariantTableOptions {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn cloned(&self) -> Box<dyn ExtensionOptions> {
        Box::new(self.clone())
    }

    fn set(&mut self, key: &str, value: &str) -> Result<()> {
        // DataFusion passes the whole key, prefix included
        let key = key.strip_prefix("variant.").unwrap_or(key);
        if key == "shred_inference" {
            self.inference = Some(InferenceRule::parse(value)?);
            return Ok(());
        }
        let Some(column) = key.strip_prefix("shred.").filter(|c| !c.is_empty()) else {
            return plan_err!(
                "unknown option 'variant.{key}' (expected 'variant.shred.<column>' or \
                 '{SHRED_INFERENCE_OPTION}')"
            );
        };
        ShreddingOptions::new().with_column(column, value)?;
        self.shred.insert(column.to_string(), value.to_string());
        Ok(())
    }

    fn entries(&self) -> Vec<ConfigEntry> {
        let mut entries: Vec<ConfigEntry> = self
            .shred
            .iter()
            .map(|(column, value)| ConfigEntry {
                key: format!("variant.shred.{column}"),
                value: Some(value.clone()),
                description: "shred this variant column as the given type when writing Parquet",
            })
            .collect();
        if let Some(rule) = self.inference {
            entries.push(ConfigEntry {
                key: SHRED_INFERENCE_OPTION.to_string(),
                value: Some(rule.name().to_string()),
                description: "the rule that infers the automatic columns' shredding",
            });
        }
        entries
    }
}

/// The column a `variant.shred.<column>` key names, None for other keys.
fn shredded_column_name(key: &str) -> Option<&str> {
    key.strip_prefix("format.")
        .unwrap_or(key)
        .strip_prefix(SHRED_OPTION_PREFIX)
}

fn find_column(schema: &Schema, name: &str) -> Option<usize> {
    find_field(schema.fields(), name)
}
