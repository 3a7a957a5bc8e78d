//! The interactive shell: datafusion-cli's loop (its line editor, helper and backslash commands)
//! with each statement run by [`crate::exec`], so that its `:` paths are bound as Spark binds
//! them (datafusion-cli's own loop hands the line to its parser with no hook) and the JSON formats
//! print variants as JSON values, as `-c` and `-f` do.
use datafusion_cli::cli_context::CliSessionContext;
use datafusion_cli::command::{Command, OutputFormat};
use datafusion_cli::helper::CliHelper;
use datafusion_cli::print_options::PrintOptions;
use rustyline::Editor;
use rustyline::error::ReadlineError;
use rustyline::history::DefaultHistory;

use crate::context::VariantCliContext;
use crate::exec::{exec_sql, split_statements};

/// Reads statements and backslash commands until `\q` or end of input; history in `.history`.
pub async fn exec_from_repl(
    ctx: &VariantCliContext,
    print_options: &mut PrintOptions,
) -> rustyline::Result<()> {
    let dialect = || ctx.task_ctx().session_config().options().sql_parser.dialect;
    let mut rl: Editor<CliHelper, DefaultHistory> = Editor::new()?;
    rl.set_helper(Some(CliHelper::new(&dialect(), print_options.color)));
    rl.load_history(".history").ok();
    loop {
        match rl.readline("> ") {
            Ok(line) if line.starts_with('\\') => {
                rl.add_history_entry(line.trim_end())?;
                if run_command(ctx, &line, print_options).await {
                    break;
                }
            }
            Ok(line) => {
                for statement in split_statements(&line) {
                    rl.add_history_entry(statement.trim_end())?;
                    tokio::select! {
                        result = exec_sql(ctx, &statement, print_options) => {
                            if let Err(e) = result {
                                eprintln!("{e}");
                            }
                        }
                        _ = tokio::signal::ctrl_c() => {
                            println!("^C");
                            continue;
                        }
                    }
                    // a statement may have changed the dialect
                    if let Some(helper) = rl.helper_mut() {
                        helper.set_dialect(&dialect());
                    }
                }
            }
            Err(ReadlineError::Interrupted) => {
                println!("^C");
                if let Some(helper) = rl.helper() {
                    helper.reset_hint();
                }
            }
            Err(ReadlineError::Eof) => {
                println!("\\q");
                break;
            }
            Err(err) => {
                eprintln!("Unknown error happened {err:?}");
                break;
            }
        }
    }
    rl.save_history(".history")
}

/// Runs a backslash command as datafusion-cli does; true for `\q`.
async fn run_command(
    ctx: &VariantCliContext,
    line: &str,
    print_options: &mut PrintOptions,
) -> bool {
    let command = line.split_whitespace().collect::<Vec<_>>().join(" ");
    let not_valid = || {
        eprintln!(
            "'\\{}' is not a valid command, you can use '\\?' to see all commands",
            &line[1..]
        )
    };
    let Ok(cmd) = command[1..].parse::<Command>() else {
        not_valid();
        return false;
    };
    match cmd {
        Command::Quit => return true,
        Command::OutputFormat(Some(subcommand)) => match subcommand.parse::<OutputFormat>() {
            Ok(format) => {
                if let Err(e) = format.execute(print_options) {
                    eprintln!("{e}");
                }
            }
            Err(_) => not_valid(),
        },
        Command::OutputFormat(None) => println!("Output format is {:?}.", print_options.format),
        cmd => {
            if let Err(e) = cmd.execute(ctx, print_options).await {
                eprintln!("{e}");
            }
        }
    }
    false
}
