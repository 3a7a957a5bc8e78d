//! An object store that fails on purpose, as storage systems are tested: it counts the requests a
//! statement makes (puts, multipart uploads and their parts, copies, renames, deletes, lists)
//! and fails the one at a chosen position, in one of the ways a real store fails.
use std::fmt;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use bytes::Bytes;
use datafusion::object_store::path::Path;
use datafusion::object_store::{
    CopyOptions, Error, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta,
    ObjectStore, ObjectStoreExt, PutMode, PutMultipartOptions, PutOptions, PutPayload, PutResult,
    RenameOptions, Result, UploadPart,
};
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};

/// The kinds of request counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Request {
    /// A put that overwrites.
    Put,
    /// A put only if absent (a Delta commit).
    PutIfAbsent,
    /// The start of a multipart upload.
    Multipart,
    /// A part of one.
    Part,
    /// Its completion (the object appears).
    Complete,
    Copy,
    Rename,
    Delete,
    List,
}

impl Request {
    /// Whether the request changes the store.
    pub fn writes(self) -> bool {
        self != Request::List
    }
}

/// How the request at a position (counting from 1) fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fault {
    /// The store never sees it: an error (a refused request, a dropped connection before it
    /// arrived).
    Refused(usize),
    /// The store applies it, and its answer is lost: an error (a 503 after the work was done,
    /// a connection dropped on the way back).
    AnswerLost(usize),
    /// The store applies it, its answer is lost and the client retries: a put only if absent
    /// then finds its own object ("already exists"); other requests succeed on the retry.
    Retried(usize),
    /// Every write from this position on is refused (the store, or the permission, is gone);
    /// reads and lists still answer.
    WritesGone(usize),
    /// The store applies it, its answer is lost, and from then on every request fails, reads
    /// too (the network gone): the client cannot even look at what happened.
    Partitioned(usize),
}

impl Fault {
    /// Its name in reports.
    pub fn name(&self) -> &'static str {
        match self {
            Fault::Refused(_) => "refused",
            Fault::AnswerLost(_) => "applied, answer lost",
            Fault::Retried(_) => "applied, retried",
            Fault::WritesGone(_) => "every write refused from here on",
            Fault::Partitioned(_) => "applied, answer lost, then nothing answers",
        }
    }

    /// Its position.
    pub fn at(&self) -> usize {
        match *self {
            Fault::Refused(n)
            | Fault::AnswerLost(n)
            | Fault::Retried(n)
            | Fault::WritesGone(n)
            | Fault::Partitioned(n) => n,
        }
    }
}

/// What a request meets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    /// Goes through.
    Pass,
    /// Fails before reaching the store.
    Refuse,
    /// Is applied, then fails (`retried`: as a retry of it would).
    Lose { retried: bool },
}

#[derive(Debug, Default)]
struct State {
    fault: Option<Fault>,
    /// The requests counted since the store was armed, in order.
    requests: Vec<Request>,
    /// Whether the fault was met.
    met: bool,
}

/// The store: `inner`, failing as armed.
#[derive(Debug, Clone)]
pub struct FaultyStore {
    inner: Arc<dyn ObjectStore>,
    /// Renames made as a copy and a delete, each counted (as object stores make them); else
    /// the inner store's rename, one request (the local file system's).
    renames_by_copy: bool,
    state: Arc<Mutex<State>>,
}

impl fmt::Display for FaultyStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Faulty({})", self.inner)
    }
}

fn injected(what: &str) -> Error {
    Error::Generic {
        store: "faults",
        source: format!("injected fault: {what}").into(),
    }
}

impl FaultyStore {
    /// `inner`, counting and failing nothing until armed.
    pub fn new(inner: Arc<dyn ObjectStore>, renames_by_copy: bool) -> Self {
        FaultyStore {
            inner,
            renames_by_copy,
            state: Arc::default(),
        }
    }

    /// Starts counting from zero, with `fault` (none: count only).
    pub fn arm(&self, fault: Option<Fault>) {
        let mut state = self.state.lock().unwrap();
        *state = State {
            fault,
            ..State::default()
        };
    }

    /// The requests counted since armed.
    pub fn requests(&self) -> Vec<Request> {
        self.state.lock().unwrap().requests.clone()
    }

    /// Whether the fault was met since armed.
    pub fn met(&self) -> bool {
        self.state.lock().unwrap().met
    }

    /// Whether reads fail now: after a [`Fault::Partitioned`] was met.
    fn reads_fail(&self) -> bool {
        let state = self.state.lock().unwrap();
        matches!(state.fault, Some(Fault::Partitioned(n)) if state.requests.len() >= n)
    }

    /// Counts `request`: what it meets.
    fn count(&self, request: Request) -> Fate {
        let mut state = self.state.lock().unwrap();
        state.requests.push(request);
        let position = state.requests.len();
        let fate = match state.fault {
            Some(Fault::Refused(n)) if n == position => Fate::Refuse,
            Some(Fault::AnswerLost(n)) if n == position => Fate::Lose { retried: false },
            Some(Fault::Retried(n)) if n == position => Fate::Lose { retried: true },
            Some(Fault::WritesGone(n)) if position >= n && request.writes() => Fate::Refuse,
            Some(Fault::Partitioned(n)) if n == position => Fate::Lose { retried: false },
            Some(Fault::Partitioned(n)) if position > n => Fate::Refuse,
            _ => Fate::Pass,
        };
        if fate != Fate::Pass {
            state.met = true;
        }
        fate
    }

    /// `done` (the inner store's answer to a request that met `fate`) as the client sees it.
    fn answer<T>(
        fate: Fate,
        what: &str,
        done: Result<T>,
        retry: impl FnOnce() -> Result<T>,
    ) -> Result<T> {
        match (fate, done) {
            (Fate::Lose { retried: false }, Ok(_)) => {
                Err(injected(&format!("{what}: answer lost")))
            }
            (Fate::Lose { retried: true }, Ok(_)) => retry(),
            (_, done) => done,
        }
    }
}

#[async_trait]
impl ObjectStore for FaultyStore {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> Result<PutResult> {
        let create = matches!(opts.mode, PutMode::Create);
        let request = if create {
            Request::PutIfAbsent
        } else {
            Request::Put
        };
        let fate = self.count(request);
        if fate == Fate::Refuse {
            return Err(injected("put refused"));
        }
        let done = self.inner.put_opts(location, payload, opts).await;
        Self::answer(fate, "put", done, || {
            if create {
                // the retry of a put only if absent finds the object it made
                Err(Error::AlreadyExists {
                    path: location.to_string(),
                    source: "injected fault: the retry found the object".into(),
                })
            } else {
                Ok(PutResult {
                    e_tag: None,
                    version: None,
                })
            }
        })
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> Result<Box<dyn MultipartUpload>> {
        let fate = self.count(Request::Multipart);
        if fate == Fate::Refuse {
            return Err(injected("multipart upload refused"));
        }
        let upload = self.inner.put_multipart_opts(location, opts).await;
        let upload = Self::answer(fate, "multipart upload", upload, || {
            Err(injected("multipart upload: answer lost"))
        })?;
        Ok(Box::new(FaultyUpload {
            inner: upload,
            store: self.clone(),
        }))
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        if self.reads_fail() {
            return Err(injected("read refused"));
        }
        self.inner.get_opts(location, options).await
    }

    async fn get_ranges(&self, location: &Path, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
        if self.reads_fail() {
            return Err(injected("read refused"));
        }
        self.inner.get_ranges(location, ranges).await
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, Result<Path>>,
    ) -> BoxStream<'static, Result<Path>> {
        let store = self.clone();
        locations
            .then(move |location| {
                let store = store.clone();
                async move {
                    let location = location?;
                    let fate = store.count(Request::Delete);
                    if fate == Fate::Refuse {
                        return Err(injected("delete refused"));
                    }
                    let done = store.inner.delete(&location).await;
                    Self::answer(fate, "delete", done, || Ok(())).map(|()| location)
                }
            })
            .boxed()
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        match self.count(Request::List) {
            Fate::Pass => self.inner.list(prefix),
            _ => futures::stream::once(async { Err(injected("list refused")) }).boxed(),
        }
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, Result<ObjectMeta>> {
        match self.count(Request::List) {
            Fate::Pass => self.inner.list_with_offset(prefix, offset),
            _ => futures::stream::once(async { Err(injected("list refused")) }).boxed(),
        }
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        match self.count(Request::List) {
            Fate::Pass => self.inner.list_with_delimiter(prefix).await,
            _ => Err(injected("list refused")),
        }
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        let fate = self.count(Request::Copy);
        if fate == Fate::Refuse {
            return Err(injected("copy refused"));
        }
        let done = self.inner.copy_opts(from, to, options).await;
        Self::answer(fate, "copy", done, || Ok(()))
    }

    async fn rename_opts(&self, from: &Path, to: &Path, options: RenameOptions) -> Result<()> {
        if self.renames_by_copy {
            // as object stores rename: a copy, then a delete, each a request of its own
            self.copy_opts(from, to, CopyOptions::default()).await?;
            return self.delete(from).await;
        }
        let fate = self.count(Request::Rename);
        if fate == Fate::Refuse {
            return Err(injected("rename refused"));
        }
        let done = self.inner.rename_opts(from, to, options).await;
        Self::answer(fate, "rename", done, || Ok(()))
    }
}

/// A multipart upload whose parts and completion are counted by its store.
#[derive(Debug)]
struct FaultyUpload {
    inner: Box<dyn MultipartUpload>,
    store: FaultyStore,
}

#[async_trait]
impl MultipartUpload for FaultyUpload {
    fn put_part(&mut self, data: PutPayload) -> UploadPart {
        let fate = self.store.count(Request::Part);
        if fate == Fate::Refuse {
            return futures::future::ready(Err(injected("part refused"))).boxed();
        }
        let part = self.inner.put_part(data);
        async move { FaultyStore::answer(fate, "part", part.await, || Ok(())) }.boxed()
    }

    async fn complete(&mut self) -> Result<PutResult> {
        let fate = self.store.count(Request::Complete);
        if fate == Fate::Refuse {
            return Err(injected("complete refused"));
        }
        let done = self.inner.complete().await;
        FaultyStore::answer(fate, "complete", done, || {
            Ok(PutResult {
                e_tag: None,
                version: None,
            })
        })
    }

    async fn abort(&mut self) -> Result<()> {
        self.inner.abort().await
    }
}
