//! A local S3-compatible server for tests (moto in server mode, `tests/s3/moto-server.sh`).
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A local S3-compatible server (moto, `tests/s3/moto-server.sh`: a venv of its own under
/// target/), killed when dropped.
pub struct S3Server {
    child: Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
}

impl S3Server {
    /// Starts one on a free port (the first start installs moto in its venv).
    pub fn start() -> Self {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let script = moto_script();
        let child = Command::new("bash")
            .arg(&script)
            .arg(port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("bash runs tests/s3/moto-server.sh");
        let mut server = S3Server { child, port };
        // the first start installs moto: minutes at most
        let deadline = Instant::now() + Duration::from_secs(600);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Some(exit) = server.child.try_wait().unwrap() {
                panic!("tests/s3/moto-server.sh ended: {exit}");
            }
            assert!(Instant::now() < deadline, "moto did not start");
            std::thread::sleep(Duration::from_millis(100));
        }
        server
    }

    /// What variant-sql (coordinator and workers) needs to reach the server.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ACCESS_KEY_ID", "test".into()),
            ("AWS_SECRET_ACCESS_KEY", "test".into()),
            ("AWS_REGION", "us-east-1".into()),
            ("AWS_ENDPOINT", format!("http://127.0.0.1:{}", self.port)),
            ("AWS_ALLOW_HTTP", "true".into()),
        ]
    }

    /// Creates `bucket` (S3's CreateBucket: a PUT of the bucket; moto takes it unsigned).
    pub fn create_bucket(&self, bucket: &str) {
        use std::io::{Read, Write};
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        write!(
            stream,
            "PUT /{bucket} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            self.port
        )
        .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl S3Server {
    /// The object store of `bucket` on this server (object_store's S3 client, as the
    /// environment would configure it; a dev-dependency brings object_store's `aws` feature).
    pub fn store(&self, bucket: &str) -> datafusion::object_store::aws::AmazonS3 {
        datafusion::object_store::aws::AmazonS3Builder::new()
            .with_bucket_name(bucket)
            .with_region("us-east-1")
            .with_access_key_id("test")
            .with_secret_access_key("test")
            .with_endpoint(format!("http://127.0.0.1:{}", self.port))
            .with_allow_http(true)
            .build()
            .unwrap()
    }
}

/// `tests/s3/moto-server.sh` of the repository, found from the testing package's folder (the
/// library's, or the program's inside it).
fn moto_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|dir| dir.join("tests/s3/moto-server.sh"))
        .find(|script| script.is_file())
        .expect("tests/s3/moto-server.sh in the repository")
}
