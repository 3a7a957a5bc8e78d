//! Running the SQL of `-c` and `-f`.
//!
//! In the `table`, `csv` and `tsv` formats this is datafusion-cli's own execution loop over
//! [`VariantCliContext`]. In `json` and `nd-json`, queries are executed here and printed by
//! [`JsonPrinter`], which embeds variants as JSON values (datafusion-cli's JSON printing cannot be
//! configured to do that); every other statement (DDL, `COPY`, `SET`, `SHOW`, `EXPLAIN`, ...) still
//! goes through datafusion-cli, which also registers object stores for `CREATE EXTERNAL TABLE` and
//! `COPY` locations.
use std::io::{BufWriter, Write};

use datafusion::common::exec_datafusion_err;
use datafusion::common::instant::Instant;
use datafusion::config::Dialect;
use datafusion::error::Result;
use datafusion::sql::parser::Statement as DFStatement;
use datafusion::sql::sqlparser::ast::Statement as SqlStatement;
use datafusion_cli::cli_context::CliSessionContext;
use datafusion_cli::exec::exec_from_commands;
use datafusion_cli::print_format::PrintFormat;
use datafusion_cli::print_options::PrintOptions;

use datafusion_parquet_variant::sql::colon_precedence::{parse_sql, rewrite_sql_text};

use crate::context::VariantCliContext;
use crate::json_output::JsonPrinter;

/// Whether `format` is printed by our JSON printer: `Some(line_delimited)` for `json` / `nd-json`.
fn json_mode(format: PrintFormat) -> Option<bool> {
    match format {
        PrintFormat::Json => Some(false),
        PrintFormat::NdJson => Some(true),
        _ => None,
    }
}

/// Runs each of `commands` (each may hold several `;`-separated statements); stops at the first
/// error.
pub async fn exec_commands(
    ctx: &VariantCliContext,
    commands: Vec<String>,
    options: &PrintOptions,
) -> Result<()> {
    for sql in commands {
        exec_sql(ctx, &sql, options).await?;
    }
    Ok(())
}

/// Runs the statements of each file, like datafusion-cli (whose file loop this is, so that the
/// `:` paths can be rebound before its parser reads them): lines starting with `--` or `#!` are
/// skipped, a line ending with `;` ends a statement; an error in a `;`-terminated statement is
/// printed and execution goes on, an error in a final unterminated statement is returned.
pub async fn exec_files(
    ctx: &VariantCliContext,
    files: Vec<String>,
    options: &PrintOptions,
) -> Result<()> {
    for file in files {
        let text = std::fs::read_to_string(&file)
            .map_err(|e| exec_datafusion_err!("cannot read {file}: {e}"))?;
        let mut query = String::new();
        for line in text.lines() {
            if line.starts_with("#!") || line.starts_with("--") {
                continue;
            }
            let line = line.trim_end();
            query.push_str(line);
            if line.ends_with(';') {
                if let Err(e) = exec_sql(ctx, &query, options).await {
                    eprintln!("{e}");
                }
                query.clear();
            } else {
                query.push('\n');
            }
        }
        if query.contains(|c| c != '\n') {
            exec_sql(ctx, &query, options).await?;
        }
    }
    Ok(())
}

/// Runs the statements of `sql`: in the JSON formats through our JSON printer, in the others
/// through datafusion-cli's loop with the `:` paths rebound first.
pub async fn exec_sql(ctx: &VariantCliContext, sql: &str, options: &PrintOptions) -> Result<()> {
    if let Some(line_delimited) = json_mode(options.format) {
        return exec_sql_json(ctx, sql, options, line_delimited).await;
    }
    let dialect = ctx.task_ctx().session_config().options().sql_parser.dialect;
    if !may_have_options_of_our_tables(sql) {
        return exec_from_commands(ctx, vec![spark_colons(sql.to_string(), &dialect)], options)
            .await;
    }
    for statement_sql in split_statements(sql) {
        if !ran_here(ctx, &statement_sql).await? {
            let statement_sql = spark_colons(statement_sql, &dialect);
            exec_from_commands(ctx, vec![statement_sql], options).await?;
        }
    }
    Ok(())
}

/// The table types whose `OPTIONS` datafusion-cli cannot take: it reads every option of a
/// `CREATE EXTERNAL TABLE` as one of its own formats' ("Specify a format for TableOptions").
const OUR_TABLE_TYPES: &[&str] = &[
    datafusion_parquet_variant::json_files::JSON_VARIANT,
    datafusion_parquet_variant::delta::DELTATABLE,
];

/// Whether `sql` may hold a `CREATE EXTERNAL TABLE` of ours with options (a look at the text;
/// [`ran_here`] parses each statement).
fn may_have_options_of_our_tables(sql: &str) -> bool {
    let upper = sql.to_ascii_uppercase();
    upper.contains("OPTIONS") && OUR_TABLE_TYPES.iter().any(|t| upper.contains(t))
}

fn is_ours_with_options(ctx: &VariantCliContext, sql: &str) -> bool {
    let Ok(statements) = parse_sql(&ctx.session_state(), sql) else {
        return false;
    };
    matches!(
        statements.as_slice(),
        [DFStatement::CreateExternalTable(create)]
            if !create.options.is_empty()
                && OUR_TABLE_TYPES.iter().any(|t| create.file_type.eq_ignore_ascii_case(t))
    )
}

/// Runs `sql` in the session itself when it is a `CREATE EXTERNAL TABLE` of ours with options
/// (which datafusion-cli's loop refuses); false for any other statement, left to that loop.
/// (Object stores for its location come from the runtime's registry, as for every query.)
async fn ran_here(ctx: &VariantCliContext, sql: &str) -> Result<bool> {
    if !is_ours_with_options(ctx, sql) {
        return Ok(false);
    }
    ctx.session().sql(sql).await?.collect().await?;
    Ok(true)
}

/// Runs the statements of `sql` in a JSON format: queries through [`JsonPrinter`], the rest
/// through datafusion-cli.
async fn exec_sql_json(
    ctx: &VariantCliContext,
    sql: &str,
    options: &PrintOptions,
    line_delimited: bool,
) -> Result<()> {
    let dialect = ctx.task_ctx().session_config().options().sql_parser.dialect;
    for statement_sql in split_statements(sql) {
        let mut statements = parse_sql(&ctx.session_state(), &statement_sql)?;
        let is_query = matches!(
            statements.as_slice(),
            [DFStatement::Statement(s)] if matches!(**s, SqlStatement::Query(_))
        );
        match statements.pop() {
            Some(statement) if is_query => {
                run_query_json(ctx, statement, options, line_delimited).await?
            }
            _ if ran_here(ctx, &statement_sql).await? => {}
            _ => {
                let statement_sql = spark_colons(statement_sql, &dialect);
                exec_from_commands(ctx, vec![statement_sql], options).await?
            }
        }
    }
    Ok(())
}

/// `sql` with its `:` paths bound as Spark binds them, for datafusion-cli's own parser; as it is
/// when nothing changes or it does not parse (datafusion-cli then reports the error).
fn spark_colons(sql: String, dialect: &Dialect) -> String {
    match rewrite_sql_text(&sql, dialect) {
        Ok(Some(rewritten)) => rewritten,
        _ => sql,
    }
}

async fn run_query_json(
    ctx: &VariantCliContext,
    statement: DFStatement,
    options: &PrintOptions,
    line_delimited: bool,
) -> Result<()> {
    let start = Instant::now();
    let plan = ctx.session_state().statement_to_plan(statement).await?;
    let batches = ctx.execute_logical_plan(plan).await?.collect().await?;
    let mut printer = JsonPrinter::new(BufWriter::new(std::io::stdout()), line_delimited);
    for batch in &batches {
        printer.write(batch)?;
    }
    let rows = printer.rows();
    let mut out = printer.finish()?;
    if !options.quiet {
        // The same summary datafusion-cli prints.
        writeln!(
            out,
            "{rows} row(s) fetched. \nElapsed {:.3} seconds.\n",
            start.elapsed().as_secs_f64()
        )?;
    }
    out.flush()?;
    Ok(())
}

/// Splits `sql` into statements at the semicolons outside quotes and comments; each statement
/// keeps its `;`. Empty statements are dropped.
pub fn split_statements(sql: &str) -> Vec<String> {
    #[derive(PartialEq)]
    enum State {
        Code,
        Single,
        Double,
        LineComment,
        BlockComment,
    }
    let mut statements = Vec::new();
    let mut current = String::new();
    let mut state = State::Code;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        current.push(c);
        state = match (state, c) {
            (State::Code, '\'') => State::Single,
            (State::Code, '"') => State::Double,
            (State::Code, '-') if chars.peek() == Some(&'-') => State::LineComment,
            (State::Code, '/') if chars.peek() == Some(&'*') => {
                current.push(chars.next().expect("peeked"));
                State::BlockComment
            }
            (State::Code, ';') => {
                if current.trim() != ";" {
                    statements.push(current.trim().to_string());
                }
                current.clear();
                State::Code
            }
            (State::Single, '\'') | (State::Double, '"') | (State::LineComment, '\n') => {
                State::Code
            }
            (State::BlockComment, '*') if chars.peek() == Some(&'/') => {
                current.push(chars.next().expect("peeked"));
                State::Code
            }
            (state, _) => state,
        };
    }
    if !current.trim().is_empty() {
        statements.push(current.trim().to_string());
    }
    statements
}

#[cfg(test)]
mod tests {
    use super::split_statements;

    #[test]
    fn splits_outside_quotes_and_comments() {
        assert_eq!(
            split_statements("SELECT 1; SELECT ';' AS \"a;b\" -- x;y\n; ;/* ; */ SELECT 2"),
            vec![
                "SELECT 1;",
                "SELECT ';' AS \"a;b\" -- x;y\n;",
                "/* ; */ SELECT 2"
            ]
        );
        assert_eq!(split_statements("  "), Vec::<String>::new());
        assert_eq!(split_statements("SELECT 'it''s;'"), vec!["SELECT 'it''s;'"]);
    }
}
