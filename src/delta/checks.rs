//! What a Delta table asks of every row an append adds, checked on the rows before they are
//! written, so that a failing row fails the append (nothing is committed, its files are
//! removed) instead of making the table unreadable:
//! - **NOT NULL**: a column the table declares non-nullable holds no NULL, nor does a
//!   non-nullable field inside a column where what holds it (a struct, a list, a map) is not
//!   NULL;
//! - **column invariants** (`delta.invariants` in a column's metadata) and **CHECK constraints**
//!   (`delta.constraints.<name>` in the table's configuration): SQL expressions that must be
//!   true for every row; false or NULL fails, as Delta's protocol says and Spark's writer does.
//!
//! The expressions are planned with the session's SQL dialect and functions when the append is
//! planned; one that does not plan (a function we lack, a column that is not there) refuses the
//! append before anything is written. Errors name the table and the rule and show the values of
//! the failing row's columns the rule reads.
use std::fmt;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, BooleanArray, RecordBatch};
use datafusion::arrow::buffer::BooleanBuffer;
use datafusion::arrow::datatypes::{DataType, Field, SchemaRef};
use datafusion::catalog::Session;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DFSchema, Result, ScalarValue, exec_datafusion_err, exec_err, plan_err};
use datafusion::execution::{SessionState, TaskContext};
use datafusion::optimizer::simplify_expressions::{ExprSimplifier, SimplifyContext};
use datafusion::physical_expr::utils::collect_columns;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, PhysicalExpr, PlanProperties,
    SendableRecordBatchStream,
};
use futures::StreamExt;
use url::Url;

use crate::codec::{SessionTimeZone, excerpt, write_json};
use crate::variant_array::{VariantColumn, is_variant_like};

/// What kind of rule a [`Rule`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleKind {
    /// A column invariant (`delta.invariants`); its name is the column's path.
    Invariant,
    /// A CHECK constraint (`delta.constraints.<name>`).
    Check,
}

impl RuleKind {
    /// Its name in plans that travel.
    pub fn as_str(&self) -> &'static str {
        match self {
            RuleKind::Invariant => "invariant",
            RuleKind::Check => "check",
        }
    }

    /// The kind [`Self::as_str`] names.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "invariant" => Some(RuleKind::Invariant),
            "check" => Some(RuleKind::Check),
            _ => None,
        }
    }
}

/// A rule every appended row must satisfy: its SQL text, planned over the appended rows.
#[derive(Debug, Clone)]
pub struct Rule {
    /// An invariant or a CHECK constraint.
    pub kind: RuleKind,
    /// The constraint's name, or the path of the invariant's column.
    pub name: String,
    /// The expression as the table states it.
    pub sql: String,
    /// The expression, planned.
    pub expr: Arc<dyn PhysicalExpr>,
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            RuleKind::Invariant => write!(f, "invariant of column {} ({})", self.name, self.sql),
            RuleKind::Check => write!(f, "CHECK constraint {} ({})", self.name, self.sql),
        }
    }
}

/// The rules of a table as its log states them: (kind, name, SQL text).
pub(crate) type StatedRules = Vec<(RuleKind, String, String)>;

/// `rules` planned over rows of `schema` (the append's input, named as the table names its
/// columns), with `state`'s dialect and functions. A rule that does not plan, or that is not a
/// boolean, is an error naming it.
pub(crate) fn plan_rules(
    state: &dyn Session,
    root: &Url,
    schema: &SchemaRef,
    rules: StatedRules,
) -> Result<Vec<Rule>> {
    if rules.is_empty() {
        return Ok(vec![]);
    }
    let Some(session) = state.as_any().downcast_ref::<SessionState>() else {
        return plan_err!(
            "Delta table at {root}: its invariants and CHECK constraints are planned with a \
             DataFusion SessionState, which this session is not; nothing was appended"
        );
    };
    let df_schema = DFSchema::try_from(Arc::clone(schema))?;
    let simplifier = ExprSimplifier::new(
        SimplifyContext::builder()
            .with_schema(Arc::new(df_schema.clone()))
            .with_config_options(Arc::clone(session.config_options()))
            .build(),
    );
    rules
        .into_iter()
        .map(|(kind, name, sql)| {
            let refuse = |why: String| {
                let rule = match kind {
                    RuleKind::Invariant => format!("invariant of column {name} ({sql})"),
                    RuleKind::Check => format!("CHECK constraint {name} ({sql})"),
                };
                plan_err!(
                    "Delta table at {root}: the {rule} cannot be checked here ({why}); nothing \
                     was appended"
                )
            };
            // simplified as a query's expressions are (`coalesce` and others are rewritten there)
            let expr = match session
                .create_logical_expr(&sql, &df_schema)
                .and_then(|e| simplifier.coerce(e, &df_schema))
                .and_then(|e| simplifier.simplify(e))
                .and_then(|e| session.create_physical_expr(e, &df_schema))
            {
                Ok(expr) => expr,
                Err(e) => return refuse(e.strip_backtrace()),
            };
            match expr.data_type(schema)? {
                DataType::Boolean => Ok(Rule {
                    kind,
                    name,
                    sql,
                    expr,
                }),
                other => refuse(format!("it is {other}, not a boolean")),
            }
        })
        .collect()
}

/// Checks the rows of its input against a Delta table's rules (see the module); passes them on
/// unchanged, or fails at the first row that breaks one.
#[derive(Debug)]
pub struct DeltaChecksExec {
    input: Arc<dyn ExecutionPlan>,
    /// The table's root (for errors).
    root: Url,
    /// The table's columns as the log declares them (nullability at any depth), each checked
    /// against the input's column of its name.
    table: SchemaRef,
    rules: Vec<Rule>,
    properties: Arc<PlanProperties>,
}

impl DeltaChecksExec {
    /// `input`'s rows checked against the NOT NULL columns and fields of `table` and `rules`.
    pub fn new(
        input: Arc<dyn ExecutionPlan>,
        root: Url,
        table: SchemaRef,
        rules: Vec<Rule>,
    ) -> Self {
        let properties = Arc::clone(input.properties());
        DeltaChecksExec {
            input,
            root,
            table,
            rules,
            properties,
        }
    }

    /// `input` checked, where the table has anything to check.
    pub(crate) fn wrap(
        input: Arc<dyn ExecutionPlan>,
        root: &Url,
        table: &SchemaRef,
        rules: Vec<Rule>,
    ) -> Arc<dyn ExecutionPlan> {
        if rules.is_empty() && !table.fields().iter().any(|f| has_not_null(f)) {
            return input;
        }
        Arc::new(Self::new(input, root.clone(), Arc::clone(table), rules))
    }

    /// What travels of it: the table's root, its columns and its rules.
    pub fn parts(&self) -> (&Url, &SchemaRef, &[Rule]) {
        (&self.root, &self.table, &self.rules)
    }
}

/// Whether `field`, or a field inside it, is declared non-nullable (variants are leaves).
fn has_not_null(field: &Field) -> bool {
    if !field.is_nullable() {
        return true;
    }
    if is_variant_like(field) {
        return false;
    }
    match field.data_type() {
        DataType::Struct(fields) => fields.iter().any(|f| has_not_null(f)),
        DataType::List(f) | DataType::LargeList(f) | DataType::Map(f, _) => has_not_null(f),
        _ => false,
    }
}

impl DisplayAs for DeltaChecksExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let not_null: Vec<&str> = (self.table.fields().iter())
            .filter(|f| has_not_null(f))
            .map(|f| f.name().as_str())
            .collect();
        write!(f, "DeltaChecksExec: table={}", self.root)?;
        if !not_null.is_empty() {
            write!(f, ", not_null=[{}]", not_null.join(", "))?;
        }
        for rule in &self.rules {
            write!(f, ", {rule}")?;
        }
        Ok(())
    }
}

impl ExecutionPlan for DeltaChecksExec {
    fn name(&self) -> &str {
        "DeltaChecksExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        vec![true]
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        for rule in &self.rules {
            if f(&rule.expr)? == TreeNodeRecursion::Stop {
                return Ok(TreeNodeRecursion::Stop);
            }
        }
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let (Some(input), true) = (children.pop(), children.is_empty()) else {
            return exec_err!("DeltaChecksExec has one child");
        };
        Ok(Arc::new(DeltaChecksExec::new(
            input,
            self.root.clone(),
            Arc::clone(&self.table),
            self.rules.clone(),
        )))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let input = self.input.execute(partition, context)?;
        let schema = input.schema();
        let checks = Checks {
            root: self.root.clone(),
            table: Arc::clone(&self.table),
            rules: self.rules.clone(),
        };
        let checked = input.map(move |batch| {
            let batch = batch?;
            checks.check(&batch)?;
            Ok(batch)
        });
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, checked)))
    }
}

/// What one partition checks each batch against.
struct Checks {
    root: Url,
    table: SchemaRef,
    rules: Vec<Rule>,
}

impl Checks {
    fn check(&self, batch: &RecordBatch) -> Result<()> {
        let schema = batch.schema();
        for declared in self.table.fields() {
            let Ok(index) = schema.index_of(declared.name()) else {
                return exec_err!(
                    "Delta table at {}: the appended rows have no column {}",
                    self.root,
                    declared.name()
                );
            };
            let column = batch.column(index);
            if let Some(path) = null_in(declared, column, None, declared.name().clone())? {
                return exec_err!(
                    "Delta table at {}: NOT NULL constraint violated for column {path}: an \
                     appended row holds NULL there; nothing was appended",
                    self.root
                );
            }
        }
        for rule in &self.rules {
            let value = rule.expr.evaluate(batch)?.into_array(batch.num_rows())?;
            let Some(result) = value.as_boolean_opt() else {
                return exec_err!("Delta table at {}: the {rule} is not a boolean", self.root);
            };
            if let Some(row) = first_not_true(result) {
                return exec_err!(
                    "Delta table at {}: {rule} violated by row with values: {}; nothing was \
                     appended",
                    self.root,
                    row_values(rule, batch, row)
                );
            }
        }
        Ok(())
    }
}

/// The first row where `result` is false or NULL.
fn first_not_true(result: &BooleanArray) -> Option<usize> {
    if result.null_count() == 0 && result.true_count() == result.len() {
        return None;
    }
    (0..result.len()).find(|&i| result.is_null(i) || !result.value(i))
}

/// The columns `rule` reads, with their values in row `row` of `batch` (variants as JSON).
fn row_values(rule: &Rule, batch: &RecordBatch, row: usize) -> String {
    let mut columns: Vec<_> = collect_columns(&rule.expr).into_iter().collect();
    columns.sort_by_key(|c| c.index());
    let values: Vec<String> = columns
        .iter()
        .filter_map(|c| {
            let array = batch.columns().get(c.index())?;
            let field = batch.schema_ref().field(c.index()).clone();
            Some(format!("{}: {}", c.name(), value_text(&field, array, row)))
        })
        .collect();
    values.join(", ")
}

/// Row `row` of `array` as text: a variant as JSON, others as DataFusion shows them.
fn value_text(field: &Field, array: &ArrayRef, row: usize) -> String {
    if array.is_null(row) {
        return "NULL".to_string();
    }
    if is_variant_like(field)
        && let Ok(column) = VariantColumn::try_new(array)
        && let Ok(rows) = column.rows()
        && let Ok(Some(variant)) = rows.get(row)
    {
        let mut json = Vec::new();
        if write_json(&mut json, variant, &SessionTimeZone::utc()).is_ok() {
            return excerpt(&String::from_utf8_lossy(&json));
        }
    }
    ScalarValue::try_from_array(array, row).map_or_else(|e| e.to_string(), |v| v.to_string())
}

/// The path of the first non-nullable field of `declared` (itself or a field inside it) that
/// `array` holds a NULL in where its holders are not NULL (`holders`: None where every row
/// counts). Variants are leaves. An array not of the declared shape is an error.
fn null_in(
    declared: &Field,
    array: &ArrayRef,
    holders: Option<&BooleanBuffer>,
    path: String,
) -> Result<Option<String>> {
    let nulls = array.logical_nulls();
    // the rows of `array` that count, and are not NULL
    let present = match (holders, &nulls) {
        (Some(h), Some(n)) => Some(h & n.inner()),
        (Some(h), None) => Some(h.clone()),
        (None, Some(n)) => Some(n.inner().clone()),
        (None, None) => None,
    };
    if !declared.is_nullable() && nulls.is_some() {
        let counted = holders.map_or(array.len(), BooleanBuffer::count_set_bits);
        let present_count = present.as_ref().map_or(array.len(), |p| p.count_set_bits());
        if present_count < counted {
            return Ok(Some(path));
        }
    }
    if is_variant_like(declared) {
        return Ok(None);
    }
    let shape = || {
        exec_datafusion_err!(
            "the appended column {path} is {}, not {}",
            array.data_type(),
            declared.data_type()
        )
    };
    match declared.data_type() {
        DataType::Struct(fields) => {
            let array = array.as_struct_opt().ok_or_else(shape)?;
            for field in fields {
                let child = array.column_by_name(field.name()).ok_or_else(shape)?;
                let inner = format!("{path}.{}", field.name());
                if let Some(found) = null_in(field, child, present.as_ref(), inner)? {
                    return Ok(Some(found));
                }
            }
            Ok(None)
        }
        DataType::List(element) => {
            let list = array.as_list_opt::<i32>().ok_or_else(shape)?;
            let offsets: Vec<usize> = list.offsets().iter().map(|&o| o as usize).collect();
            let inner = elements_of(&offsets, present.as_ref(), list.values().len());
            null_in(
                element,
                list.values(),
                Some(&inner),
                format!("{path}.element"),
            )
        }
        DataType::LargeList(element) => {
            let list = array.as_list_opt::<i64>().ok_or_else(shape)?;
            let offsets: Vec<usize> = list.offsets().iter().map(|&o| o as usize).collect();
            let inner = elements_of(&offsets, present.as_ref(), list.values().len());
            null_in(
                element,
                list.values(),
                Some(&inner),
                format!("{path}.element"),
            )
        }
        DataType::Map(entries, _) => {
            let map = array.as_map_opt().ok_or_else(shape)?;
            let offsets: Vec<usize> = map.offsets().iter().map(|&o| o as usize).collect();
            let inner = elements_of(&offsets, present.as_ref(), map.entries().len());
            let DataType::Struct(fields) = entries.data_type() else {
                return Err(shape());
            };
            let names = ["key", "value"];
            for ((field, child), name) in fields.iter().zip(map.entries().columns()).zip(names) {
                let found = null_in(field, child, Some(&inner), format!("{path}.{name}"))?;
                if found.is_some() {
                    return Ok(found);
                }
            }
            Ok(None)
        }
        _ => Ok(None),
    }
}

/// Which of `len` elements belong to a present row of a list whose row `i` holds elements
/// `offsets[i]..offsets[i + 1]` (`present`: None where every row is).
fn elements_of(offsets: &[usize], present: Option<&BooleanBuffer>, len: usize) -> BooleanBuffer {
    let mut counted = vec![false; len];
    for (row, range) in offsets.windows(2).enumerate() {
        if present.is_none_or(|p| p.value(row)) {
            for slot in &mut counted[range[0].min(len)..range[1].min(len)] {
                *slot = true;
            }
        }
    }
    BooleanBuffer::from(counted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Int64Array, ListArray, StructArray};
    use datafusion::arrow::buffer::NullBuffer;
    use datafusion::arrow::datatypes::{Fields, Int64Type};

    #[test]
    fn nulls_count_only_where_their_holder_is_present() {
        let a = Field::new("a", DataType::Int64, false);
        let declared = Field::new("s", DataType::Struct(Fields::from(vec![a])), true);
        // the rows as SQL gives them: every field inside nullable
        let a = Field::new("a", DataType::Int64, true);
        // row 1: the struct is NULL (its field's NULL there does not count); row 2: a NULL field
        let values: ArrayRef = Arc::new(Int64Array::from(vec![Some(1), None, Some(3)]));
        let ok = StructArray::new(
            Fields::from(vec![a.clone()]),
            vec![Arc::clone(&values)],
            Some(NullBuffer::from(vec![true, false, true])),
        );
        let ok: ArrayRef = Arc::new(ok);
        assert_eq!(null_in(&declared, &ok, None, "s".into()).unwrap(), None);
        let values: ArrayRef = Arc::new(Int64Array::from(vec![Some(1), None, None]));
        let bad = StructArray::new(
            Fields::from(vec![a]),
            vec![values],
            Some(NullBuffer::from(vec![true, false, true])),
        );
        let bad: ArrayRef = Arc::new(bad);
        assert_eq!(
            null_in(&declared, &bad, None, "s".into())
                .unwrap()
                .as_deref(),
            Some("s.a")
        );
        // a nullable column's NULL is fine, a non-nullable one's is not
        let plain: ArrayRef = Arc::new(Int64Array::from(vec![Some(1), None]));
        let nullable = Field::new("n", DataType::Int64, true);
        assert_eq!(null_in(&nullable, &plain, None, "n".into()).unwrap(), None);
        let required = Field::new("n", DataType::Int64, false);
        assert_eq!(
            null_in(&required, &plain, None, "n".into())
                .unwrap()
                .as_deref(),
            Some("n")
        );
        // an array not of the declared shape is an error, not a pass
        let not_a_struct = null_in(&declared, &plain, None, "s".into()).unwrap_err();
        assert!(
            not_a_struct
                .to_string()
                .contains("the appended column s is Int64"),
            "{not_a_struct}"
        );
    }

    #[test]
    fn list_elements_count_only_in_present_lists() {
        let declared = Field::new(
            "l",
            DataType::List(Arc::new(Field::new("element", DataType::Int64, false))),
            true,
        );
        let element = Arc::new(Field::new("element", DataType::Int64, true));
        // [1], NULL (whose one element slot holds NULL), [3]
        let list = ListArray::new(
            Arc::clone(&element),
            datafusion::arrow::buffer::OffsetBuffer::from_lengths([1, 1, 1]),
            Arc::new(Int64Array::from(vec![Some(1), None, Some(3)])),
            Some(NullBuffer::from(vec![true, false, true])),
        );
        let list: ArrayRef = Arc::new(list);
        assert_eq!(null_in(&declared, &list, None, "l".into()).unwrap(), None);
        let bad = ListArray::from_iter_primitive::<Int64Type, _, _>(vec![
            Some(vec![Some(1)]),
            Some(vec![None]),
        ]);
        let bad: ArrayRef = Arc::new(bad);
        assert_eq!(
            null_in(&declared, &bad, None, "l".into())
                .unwrap()
                .as_deref(),
            Some("l.element")
        );
    }
}
