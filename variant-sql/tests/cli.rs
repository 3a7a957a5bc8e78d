//! End-to-end tests of the `variant-sql` binary: every output format prints variants as JSON,
//! `-f` files, Parquet files, errors and exit codes.
use std::process::{Command, Output};

use serde_json::Value;

mod common;

/// The program, run from the repository's root (the paths the tests name are relative to it).
fn variant_sql() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_variant-sql"));
    command.current_dir(common::REPO);
    command
}

fn run(args: &[&str]) -> Output {
    variant_sql().args(args).output().expect("variant-sql runs")
}

/// Runs with `-q` and returns stdout; panics with both streams unless the exit code is 0.
fn ok(args: &[&str]) -> String {
    ok_with_env(&[], args)
}

/// [`ok`] with these environment variables set.
fn ok_with_env(vars: &[(&str, &str)], args: &[&str]) -> String {
    let mut all = vec!["-q"];
    all.extend_from_slice(args);
    let out = variant_sql()
        .envs(vars.iter().copied())
        .args(&all)
        .output()
        .expect("variant-sql runs");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        out.status.success(),
        "{args:?} failed: {}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    stdout
}

/// A fresh scratch directory for one test, removed when it ends.
fn scratch(name: &str) -> common::TempPath {
    common::TempPath::dir(&format!("variant-sql-test-{name}"))
}

const FIRST_TWO: &str = "SELECT id, kind, payload FROM events ORDER BY id LIMIT 2";

#[test]
fn table_format_prints_variants_as_json() {
    let out = ok(&["-c", "SELECT payload FROM events LIMIT 3"]);
    assert_eq!(
        out.lines().filter(|l| l.starts_with("| {\"")).count(),
        3,
        "{out}"
    );
    assert!(out.contains("\"session_id\":\"s-"), "{out}");
    assert!(!out.contains("metadata"), "{out}");

    // The README's command, and the summary lines printed without -q.
    let out = run(&[
        "-c",
        "SELECT kind, count(*) AS n FROM events GROUP BY kind ORDER BY kind",
        "-c",
        "SELECT id, payload FROM events ORDER BY id LIMIT 3",
    ]);
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("| page_view   |"), "{stdout}");
    assert!(stdout.contains("8 row(s) fetched."), "{stdout}");
    assert!(stdout.contains("| 1  | {\""), "{stdout}");
}

#[test]
fn csv_and_tsv_print_variants_as_quoted_json() {
    for (format, sep) in [("csv", ','), ("tsv", '\t')] {
        let out = ok(&["--format", format, "-c", FIRST_TWO]);
        let mut lines = out.lines();
        assert_eq!(
            lines.next(),
            Some(format!("id{sep}kind{sep}payload").as_str())
        );
        for id in ["1", "2"] {
            let line = lines.next().unwrap();
            let (prefix, json) = line.split_at(line.find("\"{").expect(line));
            assert!(prefix.starts_with(&format!("{id}{sep}")), "{line}");
            // CSV quoting: strip the outer quotes, undouble the inner ones.
            let json = json[1..json.len() - 1].replace("\"\"", "\"");
            let v: Value = serde_json::from_str(&json).expect(&json);
            assert!(v["session_id"].is_string(), "{v}");
        }
    }
}

#[test]
fn csv_and_tsv_print_every_row() {
    // `--maxrows` (40 by default) limits the table format only; 100,000 rows span many batches
    for format in ["csv", "tsv"] {
        let out = ok(&[
            "--format",
            format,
            "-c",
            "SELECT value FROM generate_series(1, 100000)",
        ]);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 100_001, "{format}");
        assert_eq!(
            (lines[0], lines[1], lines[100_000]),
            ("value", "1", "100000")
        );
    }
    // and the table format still stops at --maxrows
    let out = ok(&[
        "--maxrows",
        "5",
        "-c",
        "SELECT value FROM generate_series(1, 100000)",
    ]);
    assert!(
        out.contains("| 5     |") && !out.contains("| 6     |"),
        "{out}"
    );
}

#[test]
fn json_embeds_variants_as_values() {
    let out = ok(&["--format", "json", "-c", FIRST_TWO]);
    let rows: Value = serde_json::from_str(&out).expect(&out);
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["id"], 1);
    assert!(rows[0]["payload"].is_object(), "{out}");
    assert!(rows[1]["payload"]["session_id"].is_string(), "{out}");

    // No rows: an empty array.
    let out = ok(&[
        "--format",
        "json",
        "-c",
        "SELECT payload FROM events WHERE id < 0",
    ]);
    assert_eq!(out.trim(), "[]");
}

#[test]
fn nd_json_embeds_variants_as_values() {
    let out = ok(&[
        "--format",
        "nd-json",
        "-c",
        "SELECT id, payload, to_json(payload) AS text, kind FROM events \
         WHERE kind = 'purchase' ORDER BY id LIMIT 5",
    ]);
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect(l))
        .collect();
    assert_eq!(lines.len(), 5);
    for row in &lines {
        assert_eq!(row["kind"], "purchase");
        let payload = &row["payload"];
        assert!(payload["items"].is_array(), "{row}");
        assert!(payload["items"][0]["qty"].is_i64(), "{row}");
        assert!(payload["total"].is_number(), "{row}");
        // to_json returns text: a JSON string holding the same document.
        let text: Value = serde_json::from_str(row["text"].as_str().unwrap()).unwrap();
        assert_eq!(&text, payload);
    }

    // Variants nested in lists and structs are embedded too; SQL NULL fields are left out.
    let out = ok(&[
        "--format",
        "nd-json",
        "-c",
        "SELECT array_agg(payload ORDER BY id) AS ps FROM events WHERE id <= 2",
        "-c",
        "SELECT named_struct('p', payload) AS s, CAST(NULL AS VARCHAR) AS n \
         FROM events WHERE id <= 2",
    ]);
    let rows: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect(l))
        .collect();
    assert_eq!(rows.len(), 3, "{out}");
    assert_eq!(rows[0]["ps"].as_array().unwrap().len(), 2, "{out}");
    assert!(rows[0]["ps"][1]["session_id"].is_string(), "{out}");
    for row in &rows[1..] {
        assert!(row["s"]["p"]["session_id"].is_string(), "{row}");
        assert!(row.get("n").is_none(), "{row}");
    }
}

#[test]
fn bad_queries_exit_non_zero_with_a_clear_error() {
    let out = run(&["-q", "-c", "SELECT no_such_column FROM events"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.starts_with("Error: "), "{stderr}");
    assert!(stderr.contains("no_such_column"), "{stderr}");
    assert!(out.stdout.is_empty());

    // The same in a JSON format, and a later -c does not run.
    let out = run(&[
        "-q",
        "--format",
        "nd-json",
        "-c",
        "SELECT to_json(1)",
        "-c",
        "SELECT 42 AS answer",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8(out.stderr).unwrap().contains("to_json"));
    assert!(!String::from_utf8(out.stdout).unwrap().contains("answer"));

    // A parse error, and a missing table without the sample.
    let out = run(&["-q", "-c", "SELEC 1"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8(out.stderr).unwrap().contains("SQL error"));
    let out = run(&["-q", "--no-sample", "-c", "SELECT * FROM events"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8(out.stderr).unwrap().contains("events"));

    // Bad arguments are usage errors (exit code 2).
    let out = run(&["-f", "/no/such/file.sql"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .contains("no such file")
    );
}

#[test]
fn file_scripts_run_in_every_format() {
    let dir = scratch("file");
    let script = dir.join("script.sql");
    std::fs::write(
        &script,
        "-- a comment line\n\
         CREATE VIEW purchases AS\n  SELECT id, payload FROM events WHERE kind = 'purchase';\n\
         SELECT count(*) AS n FROM purchases;\n\
         SELECT id, payload FROM purchases ORDER BY id LIMIT 1;\n",
    )
    .unwrap();
    let script = script.to_str().unwrap();
    let expected = ok(&[
        "--format",
        "csv",
        "-c",
        "SELECT count(*) AS n FROM events WHERE kind = 'purchase'",
    ]);
    let purchases: i64 = expected.lines().nth(1).unwrap().parse().unwrap();
    assert!(purchases > 100, "{expected}");

    let out = ok(&["-f", script]);
    assert!(out.contains(&format!("| {purchases} |")), "{out}");
    assert!(out.contains("{\"currency\":"), "{out}");

    let out = ok(&["--format", "nd-json", "-f", script]);
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect(l))
        .collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert_eq!(lines[0]["n"], purchases);
    assert!(lines[1]["payload"]["currency"].is_string(), "{out}");

    // -f runs before -c, in the same session.
    let out = ok(&[
        "-f",
        script,
        "--format",
        "csv",
        "-c",
        "SELECT count(*) AS m FROM purchases",
    ]);
    assert!(out.ends_with(&format!("m\n{purchases}\n")), "{out}");
}

#[test]
fn parquet_files_and_external_tables() {
    let dir = scratch("parquet");
    let file = dir.join("events.parquet");
    let file = file.to_str().unwrap();
    ok(&[
        "-c",
        &format!("COPY (SELECT * FROM events ORDER BY id LIMIT 50) TO '{file}' STORED AS PARQUET"),
    ]);

    let out = ok(&[
        "--format",
        "nd-json",
        "-c",
        &format!("SELECT id, payload FROM '{file}' ORDER BY id LIMIT 2"),
    ]);
    let first: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(first["id"], 1);
    assert!(first["payload"]["session_id"].is_string(), "{out}");

    let out = ok(&[
        "-c",
        &format!("CREATE EXTERNAL TABLE ev STORED AS PARQUET LOCATION '{file}'"),
        "-c",
        "SELECT count(*) AS n, count(payload) AS p FROM ev",
        "-c",
        "SELECT payload FROM ev ORDER BY id LIMIT 1",
    ]);
    assert!(out.contains("| 50 | 50 |"), "{out}");
    assert!(out.contains("{\"currency\":"), "{out}");
}

/// Delta tables: one made and appended to by one process, read with time travel by another
/// (the Spark-written fixtures are in sqllogictests/delta_tables.slt).
#[test]
fn delta_tables_are_created_appended_and_read() {
    let dir = scratch("delta");
    let table = dir.join("events_delta");
    let table = table.to_str().unwrap();
    ok(&[
        "-c",
        &format!(
            "CREATE EXTERNAL TABLE d (id BIGINT, kind VARCHAR, payload VARIANT) \
             STORED AS DELTATABLE LOCATION '{table}'"
        ),
        "-c",
        "INSERT INTO d SELECT id, kind, payload FROM events WHERE id <= 100",
        "-c",
        "INSERT INTO d SELECT id, kind, payload FROM events WHERE id > 100 AND id <= 150",
    ]);
    let out = ok(&[
        "--format",
        "csv",
        "-c",
        &format!("CREATE EXTERNAL TABLE d STORED AS DELTATABLE LOCATION '{table}'"),
        "-c",
        "SELECT count(*) AS n, max(id) AS top FROM d",
        "-c",
        &format!(
            "CREATE EXTERNAL TABLE d1 STORED AS DELTATABLE LOCATION '{table}' \
             OPTIONS ('version' '1')"
        ),
        "-c",
        "SELECT count(*) AS n FROM d1",
        "-c",
        "SELECT count(*) AS same FROM d JOIN events e USING (id) WHERE to_json(d.payload) = to_json(e.payload)",
    ]);
    assert_eq!(out, "n,top\n150,150\nn\n100\nsame\n150\n", "{out}");
}

/// A process killed (SIGKILL) in the middle of an append leaves the table as it was: no
/// version, and only files no version names (under the append's hidden folder).
#[test]
fn a_killed_append_leaves_only_unreferenced_files() {
    let dir = scratch("delta-killed");
    let table = dir.join("t");
    let table = table.to_str().unwrap();
    let create = format!(
        "CREATE EXTERNAL TABLE d (id BIGINT, v VARIANT) STORED AS DELTATABLE LOCATION '{table}'"
    );
    ok(&[
        "--no-sample",
        "-c",
        &create,
        "-c",
        "INSERT INTO d SELECT n, parse_json('{\"n\": ' || n || '}') FROM generate_series(1, 10) AS s(n)",
    ]);
    let mut child = variant_sql()
        .args([
            "-q",
            "--no-sample",
            "-c",
            "SET datafusion.execution.soft_max_rows_per_output_file = 1000",
            "-c",
            "SET datafusion.execution.batch_size = 1000",
            "-c",
            &create,
            "-c",
            "INSERT INTO d SELECT n, parse_json('{\"n\": ' || n || '}') \
             FROM generate_series(1, 100000000) AS s(n)",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // until it has staged files (in its hidden write folder)
    let hidden = |dir: &std::path::Path| -> usize {
        let mut count = 0;
        let mut folders = vec![dir.to_path_buf()];
        while let Some(folder) = folders.pop() {
            for entry in std::fs::read_dir(folder).into_iter().flatten().flatten() {
                if entry.path().is_dir() {
                    folders.push(entry.path());
                } else if entry.path().to_string_lossy().contains("/.variant-write-") {
                    count += 1;
                }
            }
        }
        count
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while hidden(std::path::Path::new(table)) < 3 {
        assert!(std::time::Instant::now() < deadline, "nothing was staged");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // readers see version 1 as it was; what the killed append wrote is named by no version
    let out = ok(&[
        "--no-sample",
        "--format",
        "csv",
        "-c",
        &format!("CREATE EXTERNAL TABLE d STORED AS DELTATABLE LOCATION '{table}'"),
        "-c",
        "SELECT count(*) AS n, sum(v:n::bigint) AS s FROM d",
    ]);
    assert_eq!(out, "n,s\n10,55\n");
    let log: Vec<_> = std::fs::read_dir(std::path::Path::new(table).join("_delta_log"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    assert_eq!(log.len(), 2, "{log:?}");
    assert!(hidden(std::path::Path::new(table)) > 0);
}

#[test]
fn parquet_intervals_print_exactly() {
    let dir = scratch("interval");
    let file = dir.join("spans.parquet");
    let file = file.to_str().unwrap();
    ok(&[
        "-c",
        &format!(
            "COPY (SELECT INTERVAL '14 months 3 days 4.5 seconds' AS iv) TO '{file}' \
             STORED AS PARQUET"
        ),
    ]);
    let out = ok(&["--format", "csv", "-c", &format!("SELECT iv FROM '{file}'")]);
    assert_eq!(out, "iv\n14 mons 3 days 4.500000000 secs\n");
}

#[test]
fn session_has_the_variant_sql_extensions() {
    let out = ok(&[
        "--format",
        "csv",
        "-c",
        "CREATE TABLE v (id INT, x VARIANT)",
        "-c",
        "INSERT INTO v VALUES (1, parse_json('{\"a\":[1,2]}'))",
        "-c",
        "SELECT id, x:a[1]::int AS a1, x FROM v",
    ]);
    assert!(
        out.ends_with("id,a1,x\n1,2,\"{\"\"a\"\":[1,2]}\"\n"),
        "{out}"
    );
}

/// Runs the interactive shell in `dir` (where it keeps `.history`) on `input`, piped.
fn run_repl(dir: &std::path::Path, input: &str) -> Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = variant_sql()
        .args(["-q", "--format", "csv"])
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn repl_reads_piped_sql() {
    // The REPL keeps its history in `.history` in the working directory.
    let dir = scratch("repl");
    let out = run_repl(
        &dir,
        "SELECT id, payload FROM events ORDER BY id LIMIT 1;\n\\q\n",
    );
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("id,payload\n1,\"{\"\""), "{stdout}");
}

/// Table functions and constructors work in the program's session: `LATERAL variant_explode` over
/// the sample events' item arrays agrees with the arrays' lengths, and `CAST(.. AS VARIANT)` plans.
#[test]
fn lateral_explode_and_constructors() {
    let out = ok(&[
        "--format",
        "nd-json",
        "-c",
        "SELECT e.id, count(*) AS n, max(variant_array_length(e.payload:items)) AS len, \
                to_json(CAST(e.id AS VARIANT)) AS v \
         FROM events e, LATERAL variant_explode(e.payload:items) AS i \
         WHERE e.kind = 'purchase' GROUP BY e.id ORDER BY e.id LIMIT 5",
    ]);
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect(l))
        .collect();
    assert_eq!(lines.len(), 5, "{out}");
    for row in &lines {
        assert!(row["n"].as_i64().unwrap() > 0, "{row}");
        assert_eq!(row["n"], row["len"], "{row}");
        assert_eq!(row["v"].as_str().unwrap(), row["id"].to_string(), "{row}");
    }
}

/// Without -q, `-c` output in csv and json is still only data and the closing summary: no banner
/// line before the header (the banner belongs to the interactive shell).
#[test]
fn no_banner_in_command_output() {
    let out = run(&["--format", "csv", "-c", "SELECT 1 AS a"]);
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.starts_with("a\n1\n"), "{stdout}");
    assert!(!stdout.contains("variant-sql"), "{stdout}");
    let out = run(&["--format", "json", "-c", "SELECT 1 AS a"]);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.starts_with("[{\"a\":1}]"), "{stdout}");
}

/// `-m` bounds the memory pool: a hash join whose build side (a million rows, which cannot spill)
/// needs more than 1 MiB fails with DataFusion's resources-exhausted error and a non-zero exit,
/// not an abort; the same query runs without the limit.
#[test]
fn memory_limit_bounds_a_query() {
    let join = "SELECT count(*) FROM generate_series(1, 1000000) a(x) \
                JOIN generate_series(1, 1000000) b(y) ON x = y";
    let out = run(&["-q", "--no-sample", "-m", "1m", "-c", join]);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(!out.status.success());
    assert!(stderr.contains("Resources exhausted"), "{stderr}");
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let out = ok(&["--no-sample", "--format", "csv", "-c", join]);
    assert_eq!(out, "count(*)\n1000000\n");
}

/// A sorted `COPY` of variant rows larger than `-m` completes with the program's defaults (the
/// fair pool, batches and the sorts' merge headroom fitted to the pool, spills compressed) in a
/// few MiB a partition: the sort spills, and the file holds exactly the rows, in order. 8 MiB for
/// two partitions gives batches of 512 rows (some 0.25 MB) and 1 MiB of merge headroom; with
/// DataFusion's 8,192 rows and 10 MiB each sort needs some 28 MiB before it can spill, and the
/// statement failed below 64 MiB. (Under datafusion-cli's greedy pool it fails at 256 MiB: the
/// two sorters take the whole pool and `parse_json`'s next batch is refused.)
#[test]
fn a_sorted_copy_larger_than_the_memory_limit_spills() {
    let dir = scratch("sorted-copy");
    let file = dir.join("sorted.parquet");
    let file = file.to_str().unwrap();
    // 200,000 events of about 450 bytes: some 90 MB of variants, which the sorts (each taking
    // twice its batches) cannot hold within their shares of an 8 MiB pool. Each text holds four
    // digests (64 bytes that do not compress), so the file, over 12 MB, passes the pool and the
    // object store's 10 MiB buffer: the writer must upload before it holds more than its share.
    let events = "SELECT parse_json('{\"id\":' || i || ',\"kind\":\"' || \
                  (CASE WHEN i % 3 = 0 THEN 'commit' ELSE 'identity' END) || \
                  '\",\"did\":\"did:plc:' || (i * 7919 % 100003) || '\",\"time_us\":' || \
                  (1700000000000000 + i * 13 % 1000000) || ',\"text\":\"' || repeat('x', 222) || \
                  md5('a' || i) || md5('b' || i) || md5('c' || i) || md5('d' || i) || \
                  '\"}') AS v FROM generate_series(1, 200000) t(i)";
    let copy = format!(
        "EXPLAIN ANALYZE COPY (SELECT v FROM ({events}) ORDER BY v:kind::string, \
         v:did::string, v:time_us::bigint) TO '{file}' STORED AS PARQUET"
    );
    let out = ok_with_env(&[TWO_PARTITIONS], &["--no-sample", "-m", "8m", "-c", &copy]);
    let spills: Vec<u64> = out
        .split("spill_count=")
        .skip(1)
        .map(|rest| {
            rest.split(|c: char| !c.is_ascii_digit())
                .next()
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect();
    assert!(
        spills.iter().any(|&n| n > 0),
        "the sort did not spill:\n{out}"
    );
    let written = std::fs::metadata(file).unwrap().len();
    assert!(written > 10 << 20, "the file took {written} bytes");

    // read back in file order (one partition): every row once, each key not below the last
    let check = format!(
        "SELECT count(*) AS n, sum(id) AS ids, \
           sum(CASE WHEN pk > k OR (pk = k AND (pd > d OR (pd = d AND pt > t))) THEN 1 ELSE 0 END) \
             AS out_of_order \
         FROM (SELECT id, k, d, t, lag(k) OVER () AS pk, lag(d) OVER () AS pd, lag(t) OVER () AS pt \
               FROM (SELECT v:id::bigint AS id, v:kind::string AS k, v:did::string AS d, \
                            v:time_us::bigint AS t FROM '{file}'))"
    );
    let out = ok(&[
        "--no-sample",
        "--format",
        "csv",
        "-c",
        "SET datafusion.execution.target_partitions = 1",
        "-c",
        &check,
        "-c",
        "SHOW datafusion.execution.spill_compression",
    ]);
    // 200,000 rows; ids 1..=200,000 sum to 200,000 * 200,001 / 2
    assert_eq!(
        out,
        "n,ids,out_of_order\n200000,20000100000,0\n\
         name,value\ndatafusion.execution.spill_compression,lz4_frame\n"
    );
}

/// Two partitions from the start, whatever the machine's cores: what `-m` fits to the pool
/// depends on them.
const TWO_PARTITIONS: (&str, &str) = ("DATAFUSION_EXECUTION_TARGET_PARTITIONS", "2");

/// Under `-m`, batches and the sorts' merge headroom are fitted to each partition's share of the
/// pool unless set: 8 MiB for two partitions is 4 MiB a partition, an eighth of it in rows of
/// 1 KiB (512) and a quarter as headroom (1 MiB); 256 MiB keeps DataFusion's 8,192 rows and
/// 10 MiB. `-b` and the environment's settings stay as given.
#[test]
fn a_memory_limit_fits_batches_and_merge_headroom_to_the_pool() {
    let settings = |vars: &[(&str, &str)], args: &[&str]| {
        let mut all = vec!["--format", "csv"];
        all.extend_from_slice(args);
        all.extend([
            "-c",
            "SELECT value FROM information_schema.df_settings \
             WHERE name IN ('datafusion.execution.batch_size', \
                            'datafusion.execution.sort_spill_reservation_bytes') ORDER BY name",
        ]);
        ok_with_env(vars, &all)
    };
    assert_eq!(
        settings(&[TWO_PARTITIONS], &["-m", "8m"]),
        "value\n512\n1048576\n"
    );
    assert_eq!(
        settings(&[TWO_PARTITIONS], &["-m", "256m"]),
        "value\n8192\n10485760\n"
    );
    assert_eq!(
        settings(&[TWO_PARTITIONS], &["-m", "8m", "-b", "4000"]),
        "value\n4000\n1048576\n"
    );
    let set = [
        TWO_PARTITIONS,
        (
            "DATAFUSION_EXECUTION_SORT_SPILL_RESERVATION_BYTES",
            "5000000",
        ),
    ];
    assert_eq!(settings(&set, &["-m", "8m"]), "value\n512\n5000000\n");
    assert_eq!(settings(&[TWO_PARTITIONS], &[]), "value\n8192\n10485760\n");
}

/// A statement that runs long shows its progress on stderr (here from the start, and on a pipe:
/// `--progress always`), cleared before the results print; stdout holds only the results, and
/// without the option a pipe gets no progress at all.
#[test]
fn progress_shows_on_stderr_and_is_cleared_before_the_results() {
    let query = "SELECT count(DISTINCT to_json(parse_json('{\"a\":' || i || '}'))) AS n \
                 FROM generate_series(1, 1000000) t(i)";
    let run_with = |args: &[&str]| {
        let out = variant_sql()
            .args(args)
            .env("VARIANT_SQL_PROGRESS_AFTER_MS", "0")
            .output()
            .expect("variant-sql runs");
        assert!(out.status.success(), "{out:?}");
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let table = "+---------+\n| n       |\n+---------+\n| 1000000 |\n+---------+\n";
    let (stdout, stderr) = run_with(&["--no-sample", "--progress", "always", "-c", query]);
    assert!(stdout.starts_with(table), "{stdout}");
    // drawn in place (carriage return, erase line), counting the rows read, and erased last
    assert!(stderr.starts_with("\r\x1b[2K"), "{stderr:?}");
    assert!(stderr.contains(" rows, 0s"), "{stderr:?}");
    assert!(stderr.ends_with("\r\x1b[2K"), "{stderr:?}");
    // the default on a pipe, and -q, CSV even when asked: nothing on stderr
    for args in [
        &["--no-sample", "-c", query][..],
        &["--no-sample", "--progress", "always", "-q", "-c", query],
        &[
            "--no-sample",
            "--progress",
            "always",
            "--format",
            "csv",
            "-c",
            query,
        ],
    ] {
        let (_, stderr) = run_with(args);
        assert_eq!(stderr, "", "{args:?}");
    }
    // EXPLAIN does not show the node that draws it
    let (stdout, _) = run_with(&[
        "--no-sample",
        "--progress",
        "always",
        "-c",
        &format!("EXPLAIN {query}"),
    ]);
    assert!(!stdout.contains("Progress"), "{stdout}");
}

/// `-b` sets the session's batch size; `-p` the directory relative file names resolve against.
#[test]
fn batch_size_and_data_path() {
    let out = ok(&[
        "--no-sample",
        "--format",
        "csv",
        "-b",
        "123",
        "-c",
        "SHOW datafusion.execution.batch_size",
    ]);
    assert_eq!(out, "name,value\ndatafusion.execution.batch_size,123\n");
    let dir = scratch("data-path");
    std::fs::write(dir.join("t.csv"), "a\n1\n2\n").unwrap();
    let out = ok(&[
        "--no-sample",
        "--format",
        "csv",
        "-p",
        dir.to_str().unwrap(),
        "-c",
        "SELECT sum(a) AS s FROM 't.csv'",
    ]);
    assert_eq!(out, "s\n3\n");
}

/// `--slt` runs a user's sqllogictest files (the example suite here) in sessions with the
/// plugin; a file whose expectation is wrong fails with a non-zero exit; FILE:LINE runs one query;
/// `--complete` rewrites the expectation.
#[test]
fn slt_runs_user_suites() {
    let out = run(&["--slt", "examples/slt/"]);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("examples/slt/events.slt ... ok"),
        "{stdout}"
    );
    assert!(stdout.ends_with("1 passed, 0 failed\n"), "{stdout}");

    let dir = scratch("slt");
    let file = dir.join("wrong.slt");
    std::fs::write(
        &file,
        "query I\nSELECT 1 + 1\n----\n3\n\nquery T\nSELECT to_json(parse_json('[1, 2]'))\n----\n[1,2]\n",
    )
    .unwrap();
    let path = file.to_str().unwrap();
    let out = run(&["--slt", path]);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(!out.status.success());
    assert!(stdout.contains("wrong.slt ... FAILED"), "{stdout}");
    assert!(stdout.contains("0 passed, 1 failed"), "{stdout}");
    // Only the query at line 7, which is right.
    let out = run(&["--slt", &format!("{path}:7")]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // --complete writes the actual answer; then the file passes.
    assert!(run(&["--slt", path, "--complete"]).status.success());
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains("----\n2\n")
    );
    assert!(run(&["--slt", path]).status.success());
    // Nothing to run is an error, not a pass.
    assert!(
        !run(&["--slt", dir.join("none").to_str().unwrap()])
            .status
            .success()
    );
}

/// `:` binds as in Spark in every way the program reads SQL: `-c`, `-f` and the interactive shell,
/// in the table, CSV and JSON formats.
#[test]
fn colon_paths_bind_as_in_spark() {
    let query = "SELECT 1 + parse_json('{\"a\": 5}'):a::int * 2 AS x";
    assert_eq!(ok(&["--format", "csv", "-c", query]), "x\n11\n");
    assert_eq!(ok(&["--format", "json", "-c", query]), "[{\"x\":11}]\n");

    let dir = scratch("colon");
    let script = dir.join("script.sql");
    std::fs::write(&script, format!("SELECT 0 AS first;\n{query};\n")).unwrap();
    let out = ok(&["-f", script.to_str().unwrap()]);
    assert!(out.contains("| 11 |"), "{out}");
    let out = ok(&["--format", "nd-json", "-f", script.to_str().unwrap()]);
    assert_eq!(out, "{\"first\":0}\n{\"x\":11}\n");

    let out = run_repl(
        &dir,
        &format!("{query};\nSELECT 1 + (parse_json('5'))::int AS y;\n\\q\n"),
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("x\n11\n"), "{stdout}\n{stderr}");
    assert!(stdout.contains("y\n6\n"), "{stdout}\n{stderr}");
}

/// JSON files in from the command line: `read_json_variant` over a gzipped file, the
/// `JSON_VARIANT` table over the same lines uncompressed, and one sorted COPY of it into Parquet,
/// read back (4 events; blank and whitespace-only lines are no documents).
#[test]
fn json_files_come_in_from_the_command_line() {
    let dir = scratch("json-in");
    let by_kind = "SELECT v:kind::string AS kind, count(*) AS n FROM {} GROUP BY 1 ORDER BY 1";
    let gz = "read_json_variant('sqllogictests/data/json/events.ndjson.gz')";
    let out = ok(&[
        "--no-sample",
        "--format",
        "csv",
        "-c",
        &by_kind.replace("{}", gz),
    ]);
    assert_eq!(out, "kind,n\naccount,1\ncommit,2\nidentity,1\n");
    let parquet = dir.join("events.parquet");
    let out = ok(&[
        "--no-sample",
        "--format",
        "csv",
        "-c",
        "CREATE EXTERNAL TABLE logs STORED AS JSON_VARIANT \
         LOCATION 'sqllogictests/data/json/events.ndjson'",
        "-c",
        &format!(
            "COPY (SELECT v FROM logs ORDER BY v:did::string DESC) TO '{}' STORED AS PARQUET",
            parquet.display()
        ),
        "-c",
        &format!(
            "CREATE EXTERNAL TABLE events STORED AS PARQUET LOCATION '{}'",
            parquet.display()
        ),
        "-c",
        "SELECT v:did::string AS did, v:kind::string AS kind FROM events",
    ]);
    assert_eq!(
        out,
        "count\n4\ndid,kind\nd,account\nc,commit\nb,identity\na,commit\n"
    );
}
