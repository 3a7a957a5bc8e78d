//! The progress line of long statements: after two seconds, the rows the statement's scans have
//! read, the files done (of how many), the bytes read and the time it has run, rewritten in place
//! on stderr once a second and cleared before the results print. Shown where a person watches:
//! stderr a terminal (or `--progress always`), table output, not `-q`; never with CSV or JSON.
//!
//! [`VariantCliContext`](crate::context::VariantCliContext) arms it for the statement it is
//! about to hand datafusion-cli (a query, `COPY` or `INSERT`; not `EXPLAIN` or DDL), and
//! [`ProgressRule`], the session's last physical optimizer rule, puts a [`ProgressExec`] at the
//! root of the plan it optimizes next. The node's streams draw the line from the live metrics of
//! the plan below and clear it when the last of them ends (or is dropped), which is before
//! datafusion-cli prints the rows.
use std::fmt;
use std::io::{IsTerminal, Write};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use clap::ValueEnum;
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{Result, exec_err};
use datafusion::config::ConfigOptions;
use datafusion::datasource::physical_plan::FileScanConfig;
use datafusion::datasource::source::DataSourceExec;
use datafusion::execution::TaskContext;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties, RecordBatchStream,
    SendableRecordBatchStream,
};
use datafusion_cli::print_format::PrintFormat;
use futures::Stream;

/// When the progress line shows (`--progress`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProgressMode {
    /// When stderr is a terminal.
    Auto,
    /// Also when stderr is not a terminal (a log).
    Always,
    /// Never.
    Never,
}

/// Whether statements show progress under `mode`, printing as `format` (`quiet`: `-q`).
pub fn progress_shown(mode: ProgressMode, format: PrintFormat, quiet: bool) -> bool {
    let table = matches!(format, PrintFormat::Table | PrintFormat::Automatic);
    match mode {
        ProgressMode::Never => false,
        ProgressMode::Always => table && !quiet,
        ProgressMode::Auto => table && !quiet && std::io::stderr().is_terminal(),
    }
}

/// Set for the statement about to be planned when its progress is to show.
static ARMED: AtomicBool = AtomicBool::new(false);

/// Whether the next physical plan the session makes gets the progress line.
pub fn arm(on: bool) {
    ARMED.store(on, Ordering::SeqCst);
}

/// How long a statement runs before its progress shows: two seconds, or the milliseconds of
/// `VARIANT_SQL_PROGRESS_AFTER_MS` (for tests).
fn first_after() -> Duration {
    std::env::var("VARIANT_SQL_PROGRESS_AFTER_MS")
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map_or(Duration::from_secs(2), Duration::from_millis)
}
/// How often the line is rewritten.
const EVERY: Duration = Duration::from_secs(1);

/// The session's last physical optimizer rule: a [`ProgressExec`] over the plan of an armed
/// statement.
#[derive(Debug, Default)]
pub struct ProgressRule;

impl PhysicalOptimizerRule for ProgressRule {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if ARMED.swap(false, Ordering::SeqCst) {
            return Ok(Arc::new(ProgressExec::new(plan)));
        }
        Ok(plan)
    }

    fn name(&self) -> &str {
        "variant_sql_progress"
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// Passes its input through and draws the progress line while its streams run.
#[derive(Debug)]
pub struct ProgressExec {
    input: Arc<dyn ExecutionPlan>,
    properties: Arc<PlanProperties>,
    line: Arc<Line>,
}

impl ProgressExec {
    /// `input` with the progress line.
    pub fn new(input: Arc<dyn ExecutionPlan>) -> Self {
        ProgressExec {
            properties: Arc::clone(input.properties()),
            input,
            line: Arc::new(Line::default()),
        }
    }
}

impl DisplayAs for ProgressExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ProgressExec")
    }
}

impl ExecutionPlan for ProgressExec {
    fn name(&self) -> &str {
        "ProgressExec"
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
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let (Some(input), true) = (children.pop(), children.is_empty()) else {
            return exec_err!("ProgressExec has one child");
        };
        Ok(Arc::new(ProgressExec::new(input)))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let inner = self.input.execute(partition, context)?;
        self.line.open(&self.input);
        Ok(Box::pin(ProgressStream {
            inner,
            line: Some(Arc::clone(&self.line)),
        }))
    }
}

/// The line's state, shared by a plan's streams and its ticker.
#[derive(Debug, Default)]
struct Line {
    /// Streams running.
    streams: AtomicUsize,
    state: Mutex<LineState>,
}

#[derive(Debug, Default)]
struct LineState {
    ticker: Option<tokio::task::JoinHandle<()>>,
    drawn: bool,
    done: bool,
}

impl Line {
    /// A stream of the plan starts: the first starts the ticker.
    fn open(self: &Arc<Self>, plan: &Arc<dyn ExecutionPlan>) {
        self.streams.fetch_add(1, Ordering::SeqCst);
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.ticker.is_none() && !state.done {
            let line = Arc::clone(self);
            let plan = Arc::clone(plan);
            state.ticker = Some(tokio::spawn(async move { line.tick(plan).await }));
        }
    }

    async fn tick(&self, plan: Arc<dyn ExecutionPlan>) {
        let started = Instant::now();
        tokio::time::sleep(first_after()).await;
        loop {
            {
                let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
                if state.done {
                    return;
                }
                let text = describe(&read_so_far(&plan), started.elapsed());
                let mut err = std::io::stderr().lock();
                let _ = write!(err, "\r\x1b[2K{text}");
                let _ = err.flush();
                state.drawn = true;
            }
            tokio::time::sleep(EVERY).await;
        }
    }

    /// A stream ended or was dropped: after the last, the line is cleared.
    fn close(&self) {
        if self.streams.fetch_sub(1, Ordering::SeqCst) != 1 {
            return;
        }
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.done = true;
        if let Some(ticker) = state.ticker.take() {
            ticker.abort();
        }
        if state.drawn {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
        }
    }
}

/// A stream of [`ProgressExec`]: its input's, closing its part of the line at the end.
struct ProgressStream {
    inner: SendableRecordBatchStream,
    /// Taken when closed.
    line: Option<Arc<Line>>,
}

impl Stream for ProgressStream {
    type Item = Result<RecordBatch>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let next = self.inner.as_mut().poll_next(cx);
        if let Poll::Ready(None | Some(Err(_))) = &next
            && let Some(line) = self.line.take()
        {
            line.close();
        }
        next
    }
}

impl RecordBatchStream for ProgressStream {
    fn schema(&self) -> SchemaRef {
        self.inner.schema()
    }
}

impl Drop for ProgressStream {
    fn drop(&mut self) {
        if let Some(line) = self.line.take() {
            line.close();
        }
    }
}

/// What a plan's scans have done so far.
#[derive(Debug, Default, PartialEq)]
struct Read {
    rows: usize,
    bytes: usize,
    files_done: usize,
    files: usize,
}

/// Sums the metrics of `plan`'s scans (its leaves): rows out, `bytes_scanned`, files processed,
/// and the files their configurations list.
fn read_so_far(plan: &Arc<dyn ExecutionPlan>) -> Read {
    let mut read = Read::default();
    let mut stack = vec![Arc::clone(plan)];
    while let Some(node) = stack.pop() {
        let children = node.children();
        if children.is_empty() {
            if let Some(metrics) = node.metrics() {
                read.rows += metrics.output_rows().unwrap_or(0);
                read.bytes += metrics
                    .sum_by_name("bytes_scanned")
                    .map_or(0, |m| m.as_usize());
                read.files_done += metrics
                    .sum_by_name("files_processed")
                    .map_or(0, |m| m.as_usize());
            }
            if let Some(scan) = node.downcast_ref::<DataSourceExec>()
                && let Some(config) = scan.data_source().downcast_ref::<FileScanConfig>()
            {
                read.files += config.file_groups.iter().map(|g| g.len()).sum::<usize>();
            }
        }
        stack.extend(children.into_iter().cloned());
    }
    read
}

/// The line: `12,345,678 rows, 3/100 files, 1.2 GiB read, 42s` (files and bytes where scans
/// report them).
fn describe(read: &Read, elapsed: Duration) -> String {
    let mut text = grouped(read.rows) + " rows";
    if read.files > 0 {
        text += &format!(", {}/{} files", read.files_done, read.files);
    }
    if read.bytes > 0 {
        let (value, unit) = match read.bytes {
            b if b >= 1 << 30 => (b as f64 / (1u64 << 30) as f64, "GiB"),
            b if b >= 1 << 20 => (b as f64 / (1u64 << 20) as f64, "MiB"),
            b => (b as f64 / 1024.0, "KiB"),
        };
        text += &format!(", {value:.1} {unit} read");
    }
    text + &format!(", {}s", elapsed.as_secs())
}

/// `n` with its thousands separated by commas.
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_groups_digits_and_scales_bytes() {
        let read = Read {
            rows: 12_345_678,
            bytes: 3 << 29,
            files_done: 3,
            files: 100,
        };
        assert_eq!(
            describe(&read, Duration::from_millis(42_500)),
            "12,345,678 rows, 3/100 files, 1.5 GiB read, 42s"
        );
        let read = Read {
            rows: 999,
            ..Read::default()
        };
        assert_eq!(describe(&read, Duration::from_secs(2)), "999 rows, 2s");
        let read = Read {
            rows: 1_000,
            bytes: 5 << 20,
            ..Read::default()
        };
        assert_eq!(
            describe(&read, Duration::from_secs(3)),
            "1,000 rows, 5.0 MiB read, 3s"
        );
    }

    #[test]
    fn shown_for_tables_only_and_never_when_quiet() {
        assert!(progress_shown(
            ProgressMode::Always,
            PrintFormat::Table,
            false
        ));
        assert!(!progress_shown(
            ProgressMode::Always,
            PrintFormat::Table,
            true
        ));
        assert!(!progress_shown(
            ProgressMode::Always,
            PrintFormat::Csv,
            false
        ));
        assert!(!progress_shown(
            ProgressMode::Always,
            PrintFormat::Json,
            false
        ));
        assert!(!progress_shown(
            ProgressMode::Never,
            PrintFormat::Table,
            false
        ));
        assert!(!progress_shown(ProgressMode::Auto, PrintFormat::Csv, false));
    }
}
