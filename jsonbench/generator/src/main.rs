//! Writes JSONBench-shaped files of generated Bluesky-like events: `DIR/file_0001.json.gz`, ...,
//! one million events each by default, gzipped NDJSON as JSONBench's own files.
//!
//! ```sh
//! cargo run --release --manifest-path jsonbench/generator/Cargo.toml -- DIR FILES [ROWS_PER_FILE]
//! ```
//!
//! File `n` depends on `n` and the rows per file only (`Generator::for_file`): its own seed,
//! times after those of file `n - 1`, accounts from the first `n * rows / 10`. So the first `k`
//! files of a 100-file set are the `k`-file set, a set grows by generating more files, and files
//! already present are kept (a file is written under a temporary name and renamed when whole).
//! Files are generated on every core, one file a thread.
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

#[path = "../../../examples/jsonbench/generate.rs"]
#[allow(dead_code)] // (`Generator::new` is the query benchmark's)
mod generate;
use generate::Generator;

fn usage() -> ! {
    eprintln!("usage: jsonbench-generator DIR FILES [ROWS_PER_FILE]");
    std::process::exit(2)
}

/// Writes file `n` of `rows` events into `dir` unless it is there.
fn write_file(dir: &Path, n: usize, rows: usize) -> std::io::Result<PathBuf> {
    let path = dir.join(format!("file_{n:04}.json.gz"));
    if path.exists() {
        return Ok(path);
    }
    let partial = dir.join(format!(".file_{n:04}.json.gz.partial"));
    let file = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&partial)?);
    let mut gz = flate2::write::GzEncoder::new(file, flate2::Compression::default());
    let mut generator = Generator::for_file(n, rows);
    let mut lines = String::with_capacity(1 << 20);
    for row in 0..rows {
        generator.event(&mut lines);
        lines.push('\n');
        if lines.len() > (1 << 20) - 4096 || row + 1 == rows {
            gz.write_all(lines.as_bytes())?;
            lines.clear();
        }
    }
    gz.finish()?.into_inner()?.sync_all()?;
    std::fs::rename(&partial, &path)?;
    Ok(path)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (dir, files, rows) = match args.as_slice() {
        [dir, files] => (dir, files, "1000000"),
        [dir, files, rows] => (dir, files, rows.as_str()),
        _ => usage(),
    };
    let dir = PathBuf::from(dir);
    let (Ok(files), Ok(rows)) = (files.parse::<usize>(), rows.parse::<usize>()) else {
        usage()
    };
    if rows == 0 {
        usage()
    }
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("jsonbench-generator: {}: {e}", dir.display());
        std::process::exit(1)
    }
    let next = AtomicUsize::new(1);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let failed = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.min(files))
            .map(|_| {
                scope.spawn(|| {
                    loop {
                        let n = next.fetch_add(1, Ordering::Relaxed);
                        if n > files {
                            return false;
                        }
                        match write_file(&dir, n, rows) {
                            Ok(path) => println!("{}", path.display()),
                            Err(e) => {
                                eprintln!("jsonbench-generator: file {n}: {e}");
                                return true;
                            }
                        }
                    }
                })
            })
            .collect();
        workers.into_iter().any(|w| w.join().unwrap_or(true))
    });
    if failed {
        std::process::exit(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn times(n: usize, rows: usize) -> Vec<i64> {
        let mut g = Generator::for_file(n, rows);
        (0..rows)
            .map(|_| {
                let mut line = String::new();
                g.event(&mut line);
                let v: serde_json::Value = serde_json::from_str(&line).expect(&line);
                v["time_us"].as_i64().unwrap()
            })
            .collect()
    }

    #[test]
    fn each_file_stands_alone_and_follows_the_one_before() {
        let (first, second) = (times(1, 5000), times(2, 5000));
        assert!(first.windows(2).all(|w| w[0] <= w[1]));
        assert!(
            first.last() < second.first(),
            "file 2 starts after file 1 ends"
        );
        // the same file whatever else is generated
        assert_eq!(times(2, 5000), second);
    }

    #[test]
    fn files_hold_distinct_events() {
        let line = |n| {
            let mut g = Generator::for_file(n, 1000);
            let mut line = String::new();
            g.event(&mut line);
            line
        };
        assert_ne!(line(1), line(2));
    }
}
