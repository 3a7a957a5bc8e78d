//! A cluster of `variant-sql worker` processes (the built binary) on loopback ports, driven by
//! `variant-sql --workers`: answers equal to one process, EXPLAIN shows the stages, a worker
//! killed during a query or a COPY gives an error naming it (and no partial output), an
//! unreachable worker is named, a SIGTERM stops a worker cleanly; Variant Parquet and a Delta
//! table read through the S3 API (a local moto server) on one process and on workers.
//! Needs `--features distributed`.
#![cfg(feature = "distributed")]

mod common;

use common::s3::S3Server;

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_variant-sql");
/// How long a worker may take to start, and a failing query to fail.
const PATIENCE: Duration = Duration::from_secs(60);

/// A `variant-sql worker` process on a free loopback port, killed when dropped; its stderr is
/// collected as it comes.
struct WorkerProcess {
    child: Child,
    address: String,
    log: Arc<(Mutex<String>, Condvar)>,
}

impl WorkerProcess {
    fn start() -> Self {
        Self::start_with(&[])
    }

    /// A worker with these environment variables.
    fn start_with(env: &[(&str, String)]) -> Self {
        Self::start_args(&[], env)
    }

    /// A worker with these arguments (after `worker --listen 127.0.0.1:0`) and environment
    /// variables.
    fn start_args(args: &[&str], env: &[(&str, String)]) -> Self {
        let mut child = Command::new(BIN)
            .args(["worker", "--listen", "127.0.0.1:0"])
            .args(args)
            .env_remove("VARIANT_SQL_WORKER_TOKEN")
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("variant-sql worker starts");
        let stderr = child.stderr.take().unwrap();
        let log = Arc::new((Mutex::new(String::new()), Condvar::new()));
        let writer = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                let (text, changed) = &*writer;
                let mut text = text.lock().unwrap();
                text.push_str(&line);
                text.push('\n');
                changed.notify_all();
            }
        });
        let mut worker = WorkerProcess {
            child,
            address: String::new(),
            log,
        };
        let log = worker.wait_for("listening on ");
        let line = log.lines().find(|l| l.contains("listening on ")).unwrap();
        worker.address = line.rsplit(' ').next().unwrap().to_string();
        assert!(worker.address.starts_with("127.0.0.1:"), "{line}");
        worker
    }

    /// Waits until the worker's stderr holds `text`; returns all of it.
    fn wait_for(&self, text: &str) -> String {
        let (log, changed) = &*self.log;
        let deadline = Instant::now() + PATIENCE;
        let mut log = log.lock().unwrap();
        while !log.contains(text) {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "the worker never said {text:?}; it said:\n{log}"
            );
            log = changed.wait_timeout(log, left).unwrap().0;
        }
        log.clone()
    }

    fn url(&self) -> String {
        format!("http://{}", self.address)
    }
}

impl Drop for WorkerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// datafusion-distributed's threshold for scanning files on workers (16 MiB per partition by
/// default), lowered so that the small test files are spread over the workers.
const DISTRIBUTE_SMALL_FILES: &str = "SET distributed.file_scan_config_bytes_per_partition = 1";

/// `variant-sql -q --format csv --no-sample [--workers ..] -c ...` started (not waited for).
fn spawn_sql(workers: Option<&str>, commands: &[&str]) -> Child {
    spawn_sql_with(&[], workers, commands)
}

/// [`spawn_sql`] with these environment variables.
fn spawn_sql_with(env: &[(&str, String)], workers: Option<&str>, commands: &[&str]) -> Child {
    let mut command = Command::new(BIN);
    command.envs(env.iter().map(|(k, v)| (k, v)));
    command.args(["-q", "--format", "csv", "--no-sample"]);
    if let Some(workers) = workers {
        // the sample is small: one byte per partition makes every file a task on a worker
        command.args(["--workers", workers, "-c", DISTRIBUTE_SMALL_FILES]);
    }
    for sql in commands {
        command.args(["-c", sql]);
    }
    command
        .env_remove("VARIANT_SQL_WORKERS")
        .env_remove("VARIANT_SQL_WORKER_TOKEN")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("variant-sql runs")
}

/// Waits for `child` at most [`PATIENCE`] (a hang is a failure).
fn finish(mut child: Child) -> Output {
    let deadline = Instant::now() + PATIENCE;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("variant-sql did not finish within {PATIENCE:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn sql(workers: Option<&str>, commands: &[&str]) -> String {
    sql_with(&[], workers, commands)
}

/// [`sql`] with these environment variables.
fn sql_with(env: &[(&str, String)], workers: Option<&str>, commands: &[&str]) -> String {
    let out = finish(spawn_sql_with(env, workers, commands));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        out.status.success(),
        "{commands:?} on {workers:?} failed:\n{stdout}\n{stderr}"
    );
    stdout
}

fn failed(out: Output) -> String {
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(!out.status.success(), "succeeded; stderr:\n{stderr}");
    stderr
}

/// The bundled sample events (5,000 rows), written as eight Variant Parquet files under `dir`.
fn write_events(dir: &Path) {
    let copies: Vec<String> = (0..8)
        .map(|part| {
            format!(
                "COPY (SELECT * FROM events WHERE id % 8 = {part}) TO '{}/part-{part}.parquet' \
                 STORED AS PARQUET",
                dir.display()
            )
        })
        .collect();
    let copies: Vec<&str> = copies.iter().map(String::as_str).collect();
    with_sample(&[], &copies);
}

/// Runs `commands` with the sample table `events` (and these environment variables); panics
/// unless they succeed.
fn with_sample(env: &[(&str, String)], commands: &[&str]) {
    let mut command = Command::new(BIN);
    command.envs(env.iter().map(|(k, v)| (k, v))).arg("-q");
    for sql in commands {
        command.args(["-c", sql]);
    }
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn table(dir: &Path) -> String {
    format!(
        "CREATE EXTERNAL TABLE t STORED AS PARQUET LOCATION '{}/'",
        dir.display()
    )
}

const QUERIES: [&str; 3] = [
    "SELECT kind, count(*) AS n, count(payload:user.geo.country::string) AS located \
     FROM t GROUP BY kind ORDER BY kind",
    "SELECT payload:user.geo.country::string AS country, count(*) AS n FROM t \
     GROUP BY country ORDER BY n DESC, country LIMIT 5",
    "SELECT id, payload:user.id::int AS user_id, to_json(payload:user) AS user FROM t \
     WHERE payload:user.geo.country::string = 'DE' ORDER BY id LIMIT 3",
];

/// A worker under `-m` fits its tasks' batches and sorts' merge headroom to its pool, as the
/// program fits its own session (a task's session starts from DataFusion's defaults: 8,192 rows
/// and 10 MiB, which a sort of wide variant rows cannot spill within an 8 MiB pool), says so when
/// it starts, and answers as one process does.
#[test]
fn a_worker_under_a_memory_limit_fits_its_tasks_to_it() {
    let data = common::TempPath::dir("variant-cluster-memory");
    write_events(&data);
    let create = table(&data);
    let first = WorkerProcess::start_args(&["-m", "8m"], &[]);
    let second = WorkerProcess::start_args(&["-m", "8m"], &[]);
    // a task's partitions are the worker's cores (DataFusion's default); its share of 8 MiB
    // holds a batch of 1 KiB rows in an eighth (at least 128 rows) and the headroom in a quarter
    let cores = std::thread::available_parallelism().unwrap().get();
    let share = (8 << 20) / cores;
    let said = first.wait_for("memory limit");
    let expected = format!(
        "memory limit 8388608 bytes: batches of {} rows, {} bytes kept for a sort's merge",
        (share / 8 / 1024).max(128),
        share / 4
    );
    assert!(said.contains(&expected), "{expected}\n{said}");

    let both = format!("{},{}", first.address, second.address);
    for query in QUERIES {
        let alone = sql(None, &[&create, query]);
        let cluster = sql(Some(&both), &[&create, query]);
        assert_eq!(cluster, alone, "{query}");
    }
    for worker in [&first, &second] {
        worker.wait_for(" started");
    }
}

/// Per-row work that keeps a worker busy for seconds (some 150 KB of regex work per row), so a
/// worker can be killed while its task runs.
const SLOW: &str =
    "SELECT kind, length(regexp_replace(repeat(kind || id, 20000), 'a', 'b', 'g')) AS n FROM t";

/// Workers that take calls carrying the cluster's token only: a coordinator without it, or
/// with another, is refused, saying so; with it, the answers are one process's. Over TLS too
/// (the test CA of tests/data/tls), worker to worker included; a coordinator that trusts
/// another CA is refused the connection. A worker listens beyond loopback only with a token or
/// when told `--insecure`.
#[test]
fn workers_admit_only_their_coordinator() {
    let data = common::TempPath::dir("variant-cluster-token");
    write_events(&data);
    let create = table(&data);
    let secrets = common::TempPath::dir("variant-cluster-secrets");
    let token = secrets.join("cluster.token");
    std::fs::write(&token, "a-long-random-secret\n").unwrap();
    let other = secrets.join("other.token");
    std::fs::write(&other, "another-secret").unwrap();
    let token_arg = token.to_str().unwrap();
    let other_arg = other.to_str().unwrap();
    let alone = sql(None, &[&create, QUERIES[0]]);

    let first = WorkerProcess::start_args(&["--token-file", token_arg], &[]);
    let second =
        WorkerProcess::start_with(&[("VARIANT_SQL_WORKER_TOKEN", "a-long-random-secret".into())]);
    let both = format!("{},{}", first.address, second.address);
    fn with<'a>(workers: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
        let mut args = vec!["--workers", workers];
        args.extend(extra);
        args
    }
    // no token, a wrong one (file or environment): refused, saying why
    let run = |args: Vec<&str>, env: &[(&str, String)]| {
        let mut command = Command::new(BIN);
        command
            .args(["-q", "--format", "csv", "--no-sample"])
            .args(args)
            .args([
                "-c",
                DISTRIBUTE_SMALL_FILES,
                "-c",
                &create,
                "-c",
                QUERIES[0],
            ])
            .env_remove("VARIANT_SQL_WORKERS")
            .env_remove("VARIANT_SQL_WORKER_TOKEN")
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        finish(command.spawn().unwrap())
    };
    let error = failed(run(with(&both, &[]), &[]));
    assert!(error.contains("none was sent"), "{error}");
    assert!(
        error.contains("does not have valid authentication credentials"),
        "{error}"
    );
    let error = failed(run(with(&both, &["--worker-token-file", other_arg]), &[]));
    assert!(
        error.contains("the token sent is not this worker's"),
        "{error}"
    );
    let error = failed(run(
        with(&both, &[]),
        &[("VARIANT_SQL_WORKER_TOKEN", "a-long-random-secreT".into())],
    ));
    assert!(
        error.contains("the token sent is not this worker's"),
        "{error}"
    );
    // the token: one process's answers
    let out = run(with(&both, &["--worker-token-file", token_arg]), &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap(), alone);
    let out = run(
        with(&both, &[]),
        &[("VARIANT_SQL_WORKER_TOKEN", "a-long-random-secret".into())],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    drop((first, second));

    // TLS: workers with the test CA's certificate (for localhost), reading from each other
    let tls = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data/tls");
    let (cert, key, ca, other_ca) = (
        format!("{tls}/worker.pem"),
        format!("{tls}/worker.key"),
        format!("{tls}/ca.pem"),
        format!("{tls}/other-ca.pem"),
    );
    let tls_args = [
        "--token-file",
        token_arg,
        "--tls-cert",
        &cert,
        "--tls-key",
        &key,
        "--tls-ca",
        &ca,
    ];
    let first = WorkerProcess::start_args(&tls_args, &[]);
    let second = WorkerProcess::start_args(&tls_args, &[]);
    first.wait_for(": TLS, calls must carry the cluster's token");
    let https = |worker: &WorkerProcess| {
        let port = worker.address.rsplit(':').next().unwrap().to_string();
        format!("https://localhost:{port}")
    };
    let both_tls = format!("{},{}", https(&first), https(&second));
    let over_tls = |ca: &str| {
        run(
            vec![
                "--workers",
                &both_tls,
                "--worker-token-file",
                token_arg,
                "--worker-ca",
                ca,
            ],
            &[],
        )
    };
    let out = over_tls(&ca);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap(), alone);
    // a CA that did not sign the workers' certificates: no connection
    let error = failed(over_tls(&other_ca));
    assert!(error.contains("worker https://localhost:"), "{error}");
    assert!(error.to_lowercase().contains("certificate"), "{error}");
    // the same workers called http://, with the given arguments beside
    let plain_workers = format!("{},{}", first.address, second.address);
    let over_plain = |extra: &[&str]| {
        let mut args = vec![
            "--workers",
            &plain_workers,
            "--worker-token-file",
            token_arg,
        ];
        args.extend(extra);
        failed(run(args, &[]))
    };
    // plain HTTP/2 to a TLS worker: no answer either
    let error = over_plain(&[]);
    assert!(error.contains("worker http://127.0.0.1:"), "{error}");
    // a coordinator given a CA calls its workers over TLS only: an http:// worker is an error,
    // not a worker the token goes to in clear
    let error = over_plain(&["--worker-ca", &ca]);
    assert!(
        error.contains("is plain HTTP/2, but this cluster's workers are called over TLS"),
        "{error}"
    );
    drop((first, second));

    // beyond loopback: only with a token, or told --insecure
    let refused = Command::new(BIN)
        .args(["worker", "--listen", "0.0.0.0:0"])
        .env_remove("VARIANT_SQL_WORKER_TOKEN")
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("refusing to listen on 0.0.0.0:0 without a token"),
        "{stderr}"
    );
    for args in [vec!["--insecure"], vec!["--token-file", token_arg]] {
        let mut child = Command::new(BIN)
            .args(["worker", "--listen", "0.0.0.0:0"])
            .args(&args)
            .env_remove("VARIANT_SQL_WORKER_TOKEN")
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stderr.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let _ = child.kill();
        let _ = child.wait();
        assert!(line.contains("listening on 0.0.0.0:"), "{args:?}: {line}");
    }
}

#[test]
fn a_cluster_of_worker_processes() {
    let data = common::TempPath::dir("variant-cluster-processes");
    write_events(&data);
    let create = table(&data);

    let first = WorkerProcess::start();
    let second = WorkerProcess::start();
    let both = format!("{},{}", first.address, second.address);

    // the same answers as one process, every query through the workers
    for query in QUERIES {
        let alone = sql(None, &[&create, query]);
        let cluster = sql(Some(&both), &[&create, query]);
        assert_eq!(cluster, alone, "{query}");
        assert!(alone.lines().count() > 1, "{query}: {alone}");
    }
    for worker in [&first, &second] {
        worker.wait_for(" started");
    }

    // EXPLAIN shows the stages and the workers that run them
    let explain = sql(
        Some(&both),
        &[&create, &format!("EXPLAIN FORMAT INDENT {}", QUERIES[0])],
    );
    assert!(explain.contains("DistributedExec"), "{explain}");
    assert!(explain.contains("Stage"), "{explain}");
    assert!(explain.contains(&first.url()), "{explain}");

    // a worker that answers with an error: it and the file are named
    // (the repository's root without `..`: errors name the file by its normalized URL)
    let bad = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .join("sqllogictests/data/unreadable/bad_page");
    let bad = bad.display();
    let create_bad = format!("CREATE EXTERNAL TABLE bad STORED AS PARQUET LOCATION '{bad}/'");
    let error = failed(finish(spawn_sql(
        Some(&both),
        &[&create_bad, "SELECT sum(id) FROM bad"],
    )));
    assert!(error.contains("Error: worker http://127.0.0.1:"), "{error}");
    assert!(
        error.contains(&format!("reading file file://{bad}/bad_page.parquet")),
        "{error}"
    );
    // skipped on the workers too
    let skipped = sql(
        Some(&both),
        &[
            "SET variant.ignore_corrupt_files = true",
            &create_bad,
            "SELECT sum(id) FROM bad",
        ],
    );
    assert_eq!(skipped, "sum(bad.id)\n20100\n");
}

#[test]
fn a_worker_killed_during_a_query_is_named_and_the_rest_work_on() {
    let data = common::TempPath::dir("variant-cluster-kill");
    write_events(&data);
    let create = table(&data);
    let mut victim = WorkerProcess::start();
    let survivor = WorkerProcess::start();
    let both = format!("{},{}", victim.address, survivor.address);

    // one coordinator process, a script of statements (-f goes on after an error): the slow
    // query loses its worker, the next one runs on the worker that is left
    let script = data.join("statements.sql");
    std::fs::write(
        &script,
        format!(
            "{DISTRIBUTE_SMALL_FILES};\n{create};\nSELECT max(n) FROM ({SLOW});\n{};\n",
            QUERIES[0]
        ),
    )
    .unwrap();
    let coordinator = Command::new(BIN)
        .args([
            "-q",
            "--format",
            "csv",
            "--no-sample",
            "--workers",
            &both,
            "-f",
        ])
        .arg(&script)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    victim.wait_for("started");
    victim.child.kill().unwrap();
    let out = finish(coordinator);
    let (stdout, stderr) = (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    );
    assert!(
        stderr.contains(&format!("worker {}", victim.url())),
        "{stderr}"
    );
    let alone = sql(None, &[&create, QUERIES[0]]);
    assert!(stdout.ends_with(&alone), "{stdout}\n{stderr}");

    // a coordinator of the workers that are left answers too
    assert_eq!(sql(Some(&survivor.address), &[&create, QUERIES[0]]), alone);

    // a worker that cannot be reached is named, at once
    let started = Instant::now();
    let error = failed(finish(spawn_sql(Some(&both), &[&create, QUERIES[0]])));
    assert!(
        error.contains(&format!("worker {}", victim.url())),
        "{error}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_worker_killed_during_a_copy_leaves_no_output() {
    let data = common::TempPath::dir("variant-cluster-copy");
    write_events(&data);
    let out = common::TempPath::dir("variant-cluster-copy-out");
    let target = out.join("slow");
    let create = table(&data);
    let mut victim = WorkerProcess::start();
    let survivor = WorkerProcess::start();
    let both = format!("{},{}", victim.address, survivor.address);

    let copy = spawn_sql(
        Some(&both),
        &[
            &create,
            &format!("COPY ({SLOW}) TO '{}/' STORED AS PARQUET", target.display()),
        ],
    );
    victim.wait_for("started");
    victim.child.kill().unwrap();
    let error = failed(finish(copy));
    assert!(
        error.contains(&format!("worker {}", victim.url())),
        "{error}"
    );
    let written: Vec<_> = walk(&out);
    assert!(written.is_empty(), "a failed COPY left {written:?}");
}

/// Every file under `dir`, at any depth.
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = vec![];
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

#[test]
fn sigterm_stops_a_worker_and_frees_its_port() {
    let mut worker = WorkerProcess::start();
    let pid = worker.child.id().to_string();
    let status = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(status.success());
    let deadline = Instant::now() + PATIENCE;
    let exit = loop {
        if let Some(exit) = worker.child.try_wait().unwrap() {
            break exit;
        }
        assert!(Instant::now() < deadline, "the worker did not stop");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(exit.success(), "{exit}");
    worker.wait_for("SIGTERM, stopping");
    TcpListener::bind(&worker.address).expect("the port is free again");
}

#[test]
fn bad_worker_lists_are_refused() {
    for list in ["", "not a host:port", "ftp://x:1"] {
        let out = Command::new(BIN)
            .args(["--workers", list, "-c", "SELECT 1"])
            .output()
            .unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(!out.status.success(), "{list:?}");
        assert!(stderr.contains("worker"), "{list:?}: {stderr}");
    }
    let out = Command::new(BIN)
        .args(["worker", "--listen", "127.0.0.1:0", "-c", "SELECT 1"])
        .output()
        .unwrap();
    assert!(!out.status.success());
}

/// The sample events written as Parquet files under `dir`, and the statement making them the
/// table `t`.
fn table_of_events(dir: &Path) -> String {
    write_events(dir);
    table(dir)
}

/// Each of [`QUERIES`] over the table `create` makes (with `env`), on one process and on the
/// workers `workers`, answers as over the local copy `create_local` makes.
fn answers_as_local(env: &[(&str, String)], create: &str, create_local: &str, workers: &str) {
    for query in QUERIES {
        let expected = sql(None, &[create_local, query]);
        assert_eq!(sql_with(env, None, &[create, query]), expected, "{query}");
        assert_eq!(
            sql_with(env, Some(workers), &[create, query]),
            expected,
            "{query}"
        );
    }
}

#[test]
fn variant_parquet_through_the_s3_api_on_one_process_and_on_workers() {
    let s3 = S3Server::start();
    let env = s3.env();
    s3.create_bucket("lake");
    // written through the S3 API by one process
    with_sample(
        &env,
        &[
            "COPY (SELECT * FROM events WHERE id % 2 = 0) TO 's3://lake/events/even.parquet' STORED AS PARQUET",
            "COPY (SELECT * FROM events WHERE id % 2 = 1) TO 's3://lake/events/odd.parquet' STORED AS PARQUET",
        ],
    );

    let create = "CREATE EXTERNAL TABLE t STORED AS PARQUET LOCATION 's3://lake/events/'";
    let local = common::TempPath::dir("variant-cluster-s3-local");
    let create_local = table_of_events(&local);
    let first = WorkerProcess::start_with(&env);
    let second = WorkerProcess::start_with(&env);
    let both = format!("{},{}", first.address, second.address);
    answers_as_local(&env, create, &create_local, &both);
    // the workers read the files themselves
    for worker in [&first, &second] {
        worker.wait_for(" started");
    }

    // JSON documents in the bucket (DataFusion's NDJSON writer), read by read_json_variant,
    // whose location registers no store: it is made from the environment
    with_sample(
        &env,
        &[
            "COPY (SELECT kind, count(*) AS n FROM events GROUP BY kind) \
           TO 's3://lake/logs/kinds.json' STORED AS JSON",
        ],
    );
    let read = "SELECT v:kind::string AS kind, v:n::int AS n \
                FROM read_json_variant('s3://lake/logs/') ORDER BY kind";
    // the same counts as the Parquet copy of the events gives
    let expected = sql(
        None,
        &[
            &create_local,
            "SELECT kind, count(*) AS n FROM t GROUP BY kind ORDER BY kind",
        ],
    );
    assert_eq!(expected.lines().count(), 9, "{expected}");
    assert_eq!(sql_with(&env, None, &[read]), expected);
    assert_eq!(sql_with(&env, Some(&both), &[read]), expected);
}

/// A Delta table in the bucket: created and appended to through the S3 API (its commits put only
/// if absent), read on one process and on workers with the answers of the same events in
/// Parquet files.
#[test]
fn a_delta_table_through_the_s3_api_on_one_process_and_on_workers() {
    let s3 = S3Server::start();
    let env = s3.env();
    s3.create_bucket("lake");
    with_sample(
        &env,
        &[
            "CREATE EXTERNAL TABLE d (id BIGINT, ts TIMESTAMP, kind VARCHAR, payload VARIANT) \
             STORED AS DELTATABLE LOCATION 's3://lake/delta/events/'",
            "INSERT INTO d SELECT * FROM events WHERE id % 2 = 0",
            "INSERT INTO d SELECT * FROM events WHERE id % 2 = 1",
        ],
    );
    let create = "CREATE EXTERNAL TABLE t STORED AS DELTATABLE LOCATION 's3://lake/delta/events/'";
    let local = common::TempPath::dir("variant-cluster-s3-delta-local");
    let create_local = table_of_events(&local);
    let first = WorkerProcess::start_with(&env);
    let second = WorkerProcess::start_with(&env);
    let both = format!("{},{}", first.address, second.address);
    answers_as_local(&env, create, &create_local, &both);
    // version 1 holds the even ids alone
    let first_append = "CREATE EXTERNAL TABLE t STORED AS DELTATABLE \
                        LOCATION 's3://lake/delta/events/' OPTIONS ('version' '1')";
    let out = sql_with(
        &env,
        None,
        &[
            first_append,
            "SELECT count(*) AS n, sum(id % 2) AS odd FROM t",
        ],
    );
    assert_eq!(out, "n,odd\n2500,0\n");
}
