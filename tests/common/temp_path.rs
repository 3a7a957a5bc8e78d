//! Scratch paths of tests, removed when dropped.
use std::path::{Path, PathBuf};

/// A path under the system temp directory, a scratch folder or a file, removed with what the
/// test wrote there when dropped; kept when the test fails (the thread is panicking), to be
/// looked at.
pub struct TempPath(PathBuf);

impl TempPath {
    /// A fresh, empty folder named `name` (the process id in it, so that test binaries running
    /// at once do not share one).
    pub fn dir(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    /// A fresh path for a Parquet file named after `name` (the process id and a number of its
    /// own in it), not yet written.
    pub fn parquet_file(name: &str) -> Self {
        static FILES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = FILES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let pid = std::process::id();
        Self(std::env::temp_dir().join(format!("{name}-{pid}-{n}.parquet")))
    }
}

impl std::ops::Deref for TempPath {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for TempPath {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = if self.0.is_dir() {
                std::fs::remove_dir_all(&self.0)
            } else {
                std::fs::remove_file(&self.0)
            };
        }
    }
}
