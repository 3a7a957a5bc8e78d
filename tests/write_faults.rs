//! Every write path under injected object-store faults, as storage systems are tested: each
//! statement runs once to count the requests it makes, then once per request position and way
//! of failing (`common::faults`: refused, applied with the answer lost, applied and retried,
//! every write refused from there on), over the local file system and over S3 (a local moto
//! server). After each, readers must see either exactly the statement's rows (it succeeded) or
//! the destination as it was (it failed); where a folder's publish could not be undone, the
//! error names each file it left visible, and a single output file is never half there. A
//! Delta append is never committed twice, and no version names a file that is gone.
//!
//! The matrix (paths × positions × faults, and how many survived) is printed; docs/faults.md
//! holds it.
#![cfg(feature = "delta")]

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use common::faults::{Fault, FaultyStore, Request};
use datafusion::arrow::array::AsArray;
use datafusion::arrow::datatypes::Int64Type;
use datafusion::object_store::local::LocalFileSystem;
use datafusion::object_store::path::Path as StorePath;
use datafusion::object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use datafusion::prelude::SessionContext;
use datafusion_parquet_variant::listing::is_data_below;
use futures::TryStreamExt;
use url::Url;

/// The rows a destination holds before the statement: ids 101-110.
const OLD: &str = "SELECT 100 + n AS id, n % 4 AS p, parse_json('{\"n\": ' || n || '}') AS v \
                   FROM generate_series(1, 10) AS s(n)";
const OLD_ROWS: (i64, i64) = (10, 1055);
/// The statement's rows: ids 1-8, two per value of p.
const NEW: &str = "SELECT n AS id, n % 4 AS p, parse_json('{\"n\": ' || n || '}') AS v \
                   FROM generate_series(1, 8) AS s(n)";
const NEW_ROWS: (i64, i64) = (8, 36);

/// The write paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum WritePath {
    CopyToFile,
    CopyToFolder,
    CopyPartitioned,
    InsertParquet,
    DeltaAppend,
    DeltaPartitioned,
    DeltaColumnMapped,
}

const PATHS: [WritePath; 7] = [
    WritePath::CopyToFile,
    WritePath::CopyToFolder,
    WritePath::CopyPartitioned,
    WritePath::InsertParquet,
    WritePath::DeltaAppend,
    WritePath::DeltaPartitioned,
    WritePath::DeltaColumnMapped,
];

impl WritePath {
    fn name(self) -> &'static str {
        match self {
            WritePath::CopyToFile => "COPY to a file",
            WritePath::CopyToFolder => "COPY to a folder (4 files)",
            WritePath::CopyPartitioned => "COPY .. PARTITIONED BY (4 files)",
            WritePath::InsertParquet => "INSERT INTO a Parquet table",
            WritePath::DeltaAppend => "Delta append",
            WritePath::DeltaPartitioned => "Delta append, partitioned (4 files)",
            WritePath::DeltaColumnMapped => "Delta append, column-mapped (2 files)",
        }
    }
}

/// Where the cases write: a store (faulty) and the URL of a folder of its own.
struct Bed {
    name: &'static str,
    store: Arc<FaultyStore>,
    /// The store unfaulted, for looking.
    inner: Arc<dyn ObjectStore>,
    /// The URL the store is registered under (`file://`, `s3://faults`).
    store_url: Url,
    /// The folder URL every case writes below (ends in `/`).
    base: String,
    /// The object store path of `base`.
    base_path: StorePath,
    /// Whether writes use multipart uploads (small buffers: the local store's, whose parts
    /// have no minimum size).
    multipart: bool,
}

impl Bed {
    /// A session of ours over the faulty store.
    fn session(&self) -> SessionContext {
        let ctx = datafusion_parquet_variant::session_context().enable_url_table();
        ctx.register_object_store(&self.store_url, Arc::clone(&self.store) as _);
        ctx
    }

    fn dest(&self, path: WritePath, case: usize) -> (String, StorePath) {
        let name = format!("{path:?}-{case}");
        (
            format!("{}{name}/", self.base),
            self.base_path.clone().join(name.as_str()),
        )
    }
}

async fn run(ctx: &SessionContext, sql: &str) -> datafusion::error::Result<()> {
    ctx.sql(sql).await?.collect().await.map(|_| ())
}

async fn must(ctx: &SessionContext, sql: &str) {
    if let Err(e) = run(ctx, sql).await {
        panic!("{sql}: {e}");
    }
}

/// The settings every write runs with: one partition, two rows a batch and a file (so the
/// folder outputs have four files), and on the local store a buffer small enough for
/// multipart uploads.
async fn settings(ctx: &SessionContext, bed: &Bed) {
    for setting in [
        "SET datafusion.execution.target_partitions = 1",
        "SET datafusion.execution.batch_size = 2",
        "SET datafusion.execution.soft_max_rows_per_output_file = 2",
    ] {
        must(ctx, setting).await;
    }
    if bed.multipart {
        must(
            ctx,
            "SET datafusion.execution.objectstore_writer_buffer_size = 1024",
        )
        .await;
    }
}

/// Makes the destination hold its old rows; the statement to run.
async fn prepare(bed: &Bed, path: WritePath, dest: &str, dest_path: &StorePath) -> String {
    let ctx = bed.session();
    settings(&ctx, bed).await;
    match path {
        WritePath::CopyToFile => {
            must(
                &ctx,
                &format!("COPY ({OLD}) TO '{dest}out.parquet' STORED AS PARQUET"),
            )
            .await;
            format!("COPY ({NEW}) TO '{dest}out.parquet' STORED AS PARQUET")
        }
        WritePath::CopyToFolder => {
            must(
                &ctx,
                &format!("COPY ({OLD}) TO '{dest}old.parquet' STORED AS PARQUET"),
            )
            .await;
            format!("COPY ({NEW}) TO '{dest}' STORED AS PARQUET")
        }
        WritePath::CopyPartitioned => {
            must(
                &ctx,
                &format!("COPY ({OLD}) TO '{dest}' STORED AS PARQUET PARTITIONED BY (p)"),
            )
            .await;
            format!("COPY ({NEW}) TO '{dest}' STORED AS PARQUET PARTITIONED BY (p)")
        }
        WritePath::InsertParquet => {
            must(&ctx, &parquet_table(dest, "t")).await;
            must(&ctx, &format!("INSERT INTO t {OLD}")).await;
            "INSERT INTO t NEW_ROWS".to_string()
        }
        WritePath::DeltaAppend | WritePath::DeltaPartitioned => {
            let partitioned = if path == WritePath::DeltaPartitioned {
                " PARTITIONED BY (p)"
            } else {
                ""
            };
            must(
                &ctx,
                &format!(
                    "CREATE EXTERNAL TABLE t (id BIGINT, p BIGINT, v VARIANT) STORED AS DELTATABLE \
                     {partitioned} LOCATION '{dest}'"
                ),
            )
            .await;
            must(&ctx, &format!("INSERT INTO t {OLD}")).await;
            "INSERT INTO t NEW_ROWS".to_string()
        }
        WritePath::DeltaColumnMapped => {
            let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/data/delta/table_with_column_mapping");
            upload(bed.inner.as_ref(), &fixture, dest_path).await;
            r#"INSERT INTO t VALUES ('BMS', 'Ada Lovelace'), ('NEW', 'Grace Hopper')"#.to_string()
        }
    }
}

/// The statement of `path` in a session (its tables created there first).
async fn statement(ctx: &SessionContext, path: WritePath, dest: &str, prepared: &str) -> String {
    match path {
        WritePath::InsertParquet => {
            must(ctx, &parquet_table(dest, "t")).await;
            prepared.replace("NEW_ROWS", NEW)
        }
        WritePath::DeltaAppend | WritePath::DeltaPartitioned | WritePath::DeltaColumnMapped => {
            must(
                ctx,
                &format!("CREATE EXTERNAL TABLE t STORED AS DELTATABLE LOCATION '{dest}'"),
            )
            .await;
            prepared.replace("NEW_ROWS", NEW)
        }
        _ => prepared.to_string(),
    }
}

fn parquet_table(dest: &str, name: &str) -> String {
    format!(
        "CREATE EXTERNAL TABLE {name} (id BIGINT, p BIGINT, v VARIANT) STORED AS PARQUET \
         LOCATION '{dest}'"
    )
}

/// Copies the local folder `from` into the store under `to`.
async fn upload(store: &dyn ObjectStore, from: &Path, to: &StorePath) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        let target = to.clone().join(name.as_str());
        if entry.file_type().unwrap().is_dir() {
            Box::pin(upload(store, &entry.path(), &target)).await;
        } else {
            let bytes = std::fs::read(entry.path()).unwrap();
            store.put(&target, PutPayload::from(bytes)).await.unwrap();
        }
    }
}

/// What readers see of a destination: its rows (count, sum of ids, or of the column-mapped
/// table's rows), its visible data files and, for a Delta table, its number of versions.
#[derive(Debug, Clone, PartialEq)]
struct Seen {
    rows: (i64, i64),
    files: BTreeSet<String>,
    versions: usize,
}

/// (An error where readers cannot read the destination.)
async fn seen(
    bed: &Bed,
    path: WritePath,
    dest: &str,
    dest_path: &StorePath,
) -> Result<Seen, String> {
    bed.store.arm(None);
    let ctx = bed.session();
    let query = match path {
        WritePath::CopyToFile => format!("SELECT count(*), sum(id) FROM '{dest}out.parquet'"),
        WritePath::CopyToFolder => {
            must(
                &ctx,
                &format!("CREATE EXTERNAL TABLE r STORED AS PARQUET LOCATION '{dest}'"),
            )
            .await;
            "SELECT count(*), sum(id) FROM r".to_string()
        }
        WritePath::CopyPartitioned => {
            must(
                &ctx,
                &format!(
                    "CREATE EXTERNAL TABLE r (id BIGINT, v VARIANT, p BIGINT) STORED AS PARQUET \
                     PARTITIONED BY (p) LOCATION '{dest}'"
                ),
            )
            .await;
            "SELECT count(*), sum(id) FROM r".to_string()
        }
        WritePath::InsertParquet => {
            must(&ctx, &parquet_table(dest, "r")).await;
            "SELECT count(*), sum(id) FROM r".to_string()
        }
        WritePath::DeltaAppend | WritePath::DeltaPartitioned => {
            must(
                &ctx,
                &format!("CREATE EXTERNAL TABLE r STORED AS DELTATABLE LOCATION '{dest}'"),
            )
            .await;
            "SELECT count(*), sum(id) FROM r".to_string()
        }
        WritePath::DeltaColumnMapped => {
            must(
                &ctx,
                &format!("CREATE EXTERNAL TABLE r STORED AS DELTATABLE LOCATION '{dest}'"),
            )
            .await;
            "SELECT count(*), CAST(count(*) FILTER (WHERE \"Super Name\" = 'Grace Hopper') AS BIGINT) FROM r"
                .to_string()
        }
    };
    let batches = match ctx.sql(&query).await.unwrap().collect().await {
        Ok(batches) => batches,
        Err(e) => return Err(format!("readers cannot read {dest}: {e}")),
    };
    let rows = (
        batches[0].column(0).as_primitive::<Int64Type>().value(0),
        batches[0].column(1).as_primitive::<Int64Type>().value(0),
    );
    let listed: Vec<_> = bed.inner.list(Some(dest_path)).try_collect().await.unwrap();
    let mut files = BTreeSet::new();
    let mut versions = 0;
    for meta in listed {
        let location = meta.location.as_ref();
        if location.contains("/_delta_log/") && location.ends_with(".json") {
            versions += 1;
        } else if location.ends_with(".parquet") && is_data_below(dest_path, &meta.location) {
            let relative = location
                .strip_prefix(dest_path.as_ref())
                .unwrap_or(location);
            files.insert(relative.trim_start_matches('/').to_string());
        }
    }
    Ok(Seen {
        rows,
        files,
        versions,
    })
}

/// Whether what readers see after a statement that ended `outcome` under `fault` is allowed;
/// why not.
fn judge(
    path: WritePath,
    fault: Option<Fault>,
    before: &Seen,
    after: &Seen,
    outcome: &Result<(), String>,
) -> Result<(), String> {
    let new = match path {
        WritePath::DeltaColumnMapped => (2, 1),
        _ => NEW_ROWS,
    };
    let plus = (before.rows.0 + new.0, before.rows.1 + new.1);
    let added: BTreeSet<_> = after.files.difference(&before.files).cloned().collect();
    let removed: BTreeSet<_> = before.files.difference(&after.files).cloned().collect();
    let fail = |why: &str| {
        Err(format!(
            "{why}: before {before:?}, after {after:?}, outcome {outcome:?}"
        ))
    };
    // whether the store refused the clean-up's deletes
    let no_clean_up = matches!(fault, Some(Fault::WritesGone(_) | Fault::Partitioned(_)));
    let unknown = |error: &str| error.contains("is unknown");
    match path {
        WritePath::CopyToFile => match outcome {
            Ok(()) if after.rows == NEW_ROWS => Ok(()),
            Err(_) if after.rows == before.rows => Ok(()),
            // the store could not be asked whether the file was replaced: it is whole either way
            Err(error) if unknown(error) && after.rows == NEW_ROWS => Ok(()),
            _ => fail(
                "the file is neither the old one after a failure nor the new one after success",
            ),
        },
        WritePath::CopyToFolder | WritePath::CopyPartitioned | WritePath::InsertParquet => {
            if !removed.is_empty() {
                return fail("files that were there are gone");
            }
            match outcome {
                Ok(()) if after.rows == plus && added.len() == 4 => Ok(()),
                Ok(()) => fail("succeeded without exactly its rows"),
                Err(_) if added.is_empty() && after.rows == before.rows => Ok(()),
                // nothing could be undone: each visible file is named
                Err(error)
                    if !added.is_empty() && added.iter().all(|f| error.contains(f.as_str())) =>
                {
                    Ok(())
                }
                Err(_) => fail("failed and left files readers see, unnamed"),
            }
        }
        WritePath::DeltaAppend | WritePath::DeltaPartitioned | WritePath::DeltaColumnMapped => {
            match outcome {
                Ok(()) if after.rows == plus && after.versions == before.versions + 1 => Ok(()),
                Ok(()) => fail("succeeded without exactly one version holding exactly its rows"),
                Err(error) if unknown(error) => {
                    // files kept: the version holds them, or none names them
                    let committed = after.versions == before.versions + 1 && after.rows == plus;
                    let not = after.versions == before.versions && after.rows == before.rows;
                    if committed || not {
                        Ok(())
                    } else {
                        fail("an unknown outcome that is neither")
                    }
                }
                Err(_) if after.rows == before.rows && after.versions == before.versions => {
                    if added.is_empty() || no_clean_up {
                        Ok(())
                    } else {
                        fail("failed, and left the files it moved")
                    }
                }
                Err(_) => fail("failed, and readers see a change"),
            }
        }
    }
}

/// The faults tried at each position of `requests` (a statement's requests, in order).
fn faults(requests: &[Request]) -> Vec<Fault> {
    let mut faults = vec![];
    for (i, request) in requests.iter().enumerate() {
        let at = i + 1;
        faults.push(Fault::Refused(at));
        if request.writes() {
            faults.push(Fault::AnswerLost(at));
            faults.push(Fault::WritesGone(at));
            faults.push(Fault::Partitioned(at));
        }
        if *request == Request::PutIfAbsent {
            faults.push(Fault::Retried(at));
        }
    }
    faults
}

/// One row of the matrix: cases run and survived, by path and fault.
type Matrix = BTreeMap<(WritePath, &'static str), (usize, usize)>;

/// Runs every path under every fault on `bed`; the matrix, and the failures (which must be
/// none).
async fn run_bed(bed: &Bed, matrix: &mut Matrix) -> Vec<String> {
    let mut failures = vec![];
    let mut case = 0;
    // the cases whose outcome the writer could not know (the store could not be asked)
    let mut unknown: BTreeMap<WritePath, usize> = BTreeMap::new();
    for path in PATHS {
        // the clean run: how many requests, of which kinds
        case += 1;
        let (dest, dest_path) = bed.dest(path, case);
        let prepared = prepare(bed, path, &dest, &dest_path).await;
        let before = seen(bed, path, &dest, &dest_path).await.unwrap();
        if path != WritePath::DeltaColumnMapped {
            assert_eq!(before.rows, OLD_ROWS, "{path:?}");
        }
        let ctx = bed.session();
        settings(&ctx, bed).await;
        let sql = statement(&ctx, path, &dest, &prepared).await;
        bed.store.arm(None);
        let clean = run(&ctx, &sql).await.map_err(|e| e.to_string());
        let requests = bed.store.requests();
        let after = seen(bed, path, &dest, &dest_path).await.unwrap();
        assert!(
            clean.is_ok(),
            "{}: {path:?} without faults: {clean:?}",
            bed.name
        );
        judge(path, None, &before, &after, &clean).unwrap();
        let kinds: BTreeSet<_> = requests.iter().collect();
        eprintln!(
            "{} / {}: {} requests ({kinds:?})",
            bed.name,
            path.name(),
            requests.len()
        );
        for fault in faults(&requests) {
            case += 1;
            let (dest, dest_path) = bed.dest(path, case);
            let prepared = prepare(bed, path, &dest, &dest_path).await;
            let before = seen(bed, path, &dest, &dest_path).await.unwrap();
            let ctx = bed.session();
            settings(&ctx, bed).await;
            let sql = statement(&ctx, path, &dest, &prepared).await;
            bed.store.arm(Some(fault));
            let outcome = run(&ctx, &sql).await.map_err(|e| e.to_string());
            let met = bed.store.met();
            if outcome.as_ref().is_err_and(|e| e.contains("is unknown")) {
                *unknown.entry(path).or_default() += 1;
            }
            let after = seen(bed, path, &dest, &dest_path).await;
            let cell = matrix.entry((path, fault.name())).or_default();
            cell.0 += 1;
            let judged = after
                .and_then(|after| judge(path, Some(fault), &before, &after, &outcome))
                .and_then(|()| {
                    met.then_some(())
                        .ok_or_else(|| "the fault was never met".to_string())
                });
            match judged {
                Ok(()) => cell.1 += 1,
                Err(why) => failures.push(format!(
                    "{} / {} / {fault:?} (met: {met}, request {:?}): {why}",
                    bed.name,
                    path.name(),
                    requests.get(fault.at() - 1)
                )),
            }
        }
    }
    eprintln!("{}: outcomes reported unknown: {unknown:?}", bed.name);
    // the single file's replacement and the Delta commit, cut off with the store, are unknown
    for path in [WritePath::CopyToFile, WritePath::DeltaAppend] {
        if !unknown.contains_key(&path) {
            failures.push(format!("{}: no case of {path:?} was unknown", bed.name));
        }
    }
    failures
}

fn print(matrix: &Matrix, bed: &str) {
    eprintln!("\n{bed}: | path | fault | cases | survived |");
    for ((path, fault), (cases, survived)) in matrix {
        eprintln!("| {} | {fault} | {cases} | {survived} |", path.name());
    }
}

/// Runs every case on `bed`, prints its matrix, and fails naming each case that did not survive.
async fn survives_every_fault(bed: &Bed) {
    let mut matrix = Matrix::new();
    let failures = run_bed(bed, &mut matrix).await;
    print(&matrix, bed.name);
    assert!(
        failures.is_empty(),
        "{} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_write_path_survives_every_fault_on_the_local_store() {
    let dir = common::TempPath::dir("variant-write-faults");
    let inner: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new());
    let bed = Bed {
        name: "local",
        store: Arc::new(FaultyStore::new(Arc::clone(&inner), false)),
        inner,
        store_url: Url::parse("file://").unwrap(),
        base: format!(
            "{}/",
            Url::from_directory_path(&*dir)
                .unwrap()
                .as_str()
                .trim_end_matches('/')
        ),
        base_path: StorePath::from_filesystem_path(&*dir).unwrap(),
        multipart: true,
    };
    survives_every_fault(&bed).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_write_path_survives_every_fault_on_s3() {
    let server = common::s3::S3Server::start();
    server.create_bucket("faults");
    let inner: Arc<dyn ObjectStore> = Arc::new(server.store("faults"));
    let bed = Bed {
        name: "S3 (moto)",
        store: Arc::new(FaultyStore::new(Arc::clone(&inner), true)),
        inner,
        store_url: Url::parse("s3://faults").unwrap(),
        base: "s3://faults/cases/".to_string(),
        base_path: StorePath::from("cases"),
        multipart: false,
    };
    survives_every_fault(&bed).await;
}
