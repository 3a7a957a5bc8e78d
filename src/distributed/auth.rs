//! Who may talk to a worker, and how the talk is carried:
//! - a shared secret ([`WorkerToken`]) that every gRPC call carries (`authorization: Bearer ..`)
//!   and a worker checks in constant time ([`TokenCheck`], [`authenticated`]); a call without it
//!   or with another is refused (`Unauthenticated`), saying which;
//! - TLS for worker connections (rustls through tonic): `https://` workers, checked against the
//!   CA a coordinator is given (else the system's roots), a worker serving with its certificate
//!   and key ([`server_tls`]);
//! - where a worker may listen ([`check_listen`]): beyond loopback only with a token, or when told
//!   to accept anyone.
//!
//! [`WorkerSecurity`] is what a coordinator (and a worker, to the workers it reads from) sends
//! and trusts.
use std::fmt;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::task::{Context, Poll};

use datafusion::common::{DataFusionError, Result};
use subtle::ConstantTimeEq;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Certificate, ClientTlsConfig, Endpoint, Identity, ServerTlsConfig};
use tonic::{Request, Status};
use url::Url;

/// The environment variable that holds the cluster's token (`variant-sql worker` and
/// `variant-sql --workers` read it where no token file is given).
pub const TOKEN_ENV: &str = "VARIANT_SQL_WORKER_TOKEN";

/// The scheme a token is sent under in the `authorization` header.
const BEARER: &str = "Bearer ";

/// A cluster's shared secret. Its text never shows in `Debug` output.
#[derive(Clone)]
pub struct WorkerToken(Arc<str>);

impl fmt::Debug for WorkerToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("WorkerToken(..)")
    }
}

impl WorkerToken {
    /// The token `text` (surrounding white space left out): printable ASCII without spaces, as
    /// a header carries it.
    pub fn new(text: &str) -> Result<Self> {
        let text = text.trim();
        if text.is_empty() {
            return Err(config("the worker token is empty"));
        }
        if !text.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(config(
                "the worker token must be printable ASCII without spaces",
            ));
        }
        Ok(WorkerToken(text.into()))
    }

    /// The token in the file at `path` (its text, trimmed).
    pub fn from_file(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            config(&format!(
                "cannot read the worker token file {}: {e}",
                path.display()
            ))
        })?;
        Self::new(&text)
            .map_err(|e| config(&format!("{}: {}", path.display(), e.strip_backtrace())))
    }

    /// The token of the file at `path` where one is given, else of [`TOKEN_ENV`] where set;
    /// None where neither is.
    pub fn from_file_or_env(path: Option<&Path>) -> Result<Option<Self>> {
        if let Some(path) = path {
            return Self::from_file(path).map(Some);
        }
        match std::env::var(TOKEN_ENV) {
            Ok(text) => Self::new(&text)
                .map(Some)
                .map_err(|e| config(&format!("{TOKEN_ENV}: {}", e.strip_backtrace()))),
            Err(_) => Ok(None),
        }
    }

    /// Whether `sent` (an `authorization` header's value) carries this token: compared in
    /// constant time, whatever the two hold.
    fn admits(&self, sent: &[u8]) -> bool {
        let expected = format!("{BEARER}{}", self.0);
        let expected = expected.as_bytes();
        // a length that differs fails too, after the same comparison over the expected bytes
        let same_length = sent.len().ct_eq(&expected.len());
        let padded: Vec<u8> = (0..expected.len())
            .map(|i| sent.get(i).copied().unwrap_or(0))
            .collect();
        (same_length & padded.as_slice().ct_eq(expected)).into()
    }

    /// The header value that carries it, marked sensitive (never logged by the HTTP stack).
    fn header(&self) -> Result<http::HeaderValue> {
        let mut value = http::HeaderValue::from_str(&format!("{BEARER}{}", self.0))
            .map_err(|e| config(&format!("the worker token is no header value: {e}")))?;
        value.set_sensitive(true);
        Ok(value)
    }
}

fn config(message: &str) -> DataFusionError {
    DataFusionError::Configuration(message.to_string())
}

/// A worker's check of every call: with a token, a call must carry it; without one, any call is
/// taken (a worker on loopback, or told to accept anyone).
#[derive(Clone, Debug)]
pub struct TokenCheck {
    token: Option<WorkerToken>,
}

impl TokenCheck {
    /// Calls must carry `token` (none: every call is taken).
    pub fn new(token: Option<WorkerToken>) -> Self {
        TokenCheck { token }
    }
}

impl tonic::service::Interceptor for TokenCheck {
    fn call(&mut self, request: Request<()>) -> std::result::Result<Request<()>, Status> {
        let Some(token) = &self.token else {
            return Ok(request);
        };
        match request.metadata().get("authorization") {
            None => Err(Status::unauthenticated(
                "this worker takes calls that carry the cluster's token only, and none was sent \
                 (give the caller the token: a coordinator's --worker-token-file, a worker's \
                 --token-file, or VARIANT_SQL_WORKER_TOKEN)",
            )),
            Some(sent) if token.admits(sent.as_bytes()) => Ok(request),
            Some(_) => Err(Status::unauthenticated(
                "the token sent is not this worker's: the call was refused",
            )),
        }
    }
}

/// `service` (a worker's gRPC service) taking only calls that carry `token` (any call where
/// None).
pub fn authenticated<S>(
    service: S,
    token: Option<WorkerToken>,
) -> InterceptedService<S, TokenCheck> {
    InterceptedService::new(service, TokenCheck::new(token))
}

/// Whether a worker may listen on `address`: on loopback always; elsewhere only with a token,
/// unless `insecure` says to take calls from anyone who reaches the port.
pub fn check_listen(
    address: SocketAddr,
    token: Option<&WorkerToken>,
    insecure: bool,
) -> Result<()> {
    if address.ip().is_loopback() || token.is_some() || insecure {
        return Ok(());
    }
    Err(config(&format!(
        "refusing to listen on {address} without a token: anyone who reaches the port could run \
         any plan with this worker's credentials. Give --token-file (or {TOKEN_ENV}), listen on \
         loopback (127.0.0.1), or pass --insecure to accept that"
    )))
}

/// Whether `url`'s host is a loopback address (or `localhost`).
fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}

/// A worker's TLS: its certificate chain and private key, PEM files.
pub fn server_tls(certificate: &Path, key: &Path) -> Result<ServerTlsConfig> {
    let read = |path: &Path, what: &str| {
        std::fs::read(path).map_err(|e| {
            config(&format!(
                "cannot read the worker's {what} {}: {e}",
                path.display()
            ))
        })
    };
    let identity = Identity::from_pem(read(certificate, "certificate")?, read(key, "key")?);
    install_crypto_provider();
    Ok(ServerTlsConfig::new().identity(identity))
}

/// Makes rustls's ring provider the process's default where none is: the build may have more
/// than one provider, and rustls then picks none by itself.
fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// What a coordinator (or a worker, to its peers) sends to workers and trusts of them: the
/// cluster's token, the CA that `https://` workers' certificates must chain to (the system's
/// roots where none is given), and whether every worker must be called over TLS.
#[derive(Clone, Debug, Default)]
pub struct WorkerSecurity {
    token: Option<WorkerToken>,
    ca: Option<Arc<[u8]>>,
    tls_only: bool,
}

impl WorkerSecurity {
    /// Sends `token` with every call.
    pub fn with_token(mut self, token: Option<WorkerToken>) -> Self {
        self.token = token;
        self
    }

    /// Trusts the CA certificates of `pem` (PEM text) for `https://` workers, and calls workers
    /// over TLS only ([`WorkerSecurity::tls_only`]): a cluster given a CA is a TLS cluster.
    pub fn with_ca_pem(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.ca = Some(pem.into().into());
        self.tls_only()
    }

    /// Calls workers over TLS only: an `http://` worker (one a plan names, on a worker) is an
    /// error, not a worker the token goes to in clear. A worker that serves TLS reads from its
    /// peers so.
    pub fn tls_only(mut self) -> Self {
        self.tls_only = true;
        self
    }

    /// Trusts the CA certificates of the PEM file at `path`.
    pub fn with_ca_file(self, path: &Path) -> Result<Self> {
        let pem = std::fs::read(path)
            .map_err(|e| config(&format!("cannot read the CA file {}: {e}", path.display())))?;
        Ok(self.with_ca_pem(pem))
    }

    /// `endpoint` (to the worker at `url`) with TLS where `url` is `https://`. A token sent in
    /// clear beyond loopback is warned of; a URL of another scheme (a worker's peers come from
    /// the plans it is sent), or `http://` where TLS is required, is an error.
    pub(crate) fn secured(&self, url: &Url, endpoint: Endpoint) -> Result<Endpoint> {
        match url.scheme() {
            "https" => {}
            "http" if self.tls_only => {
                return Err(config(&format!(
                    "{url} is plain HTTP/2, but this cluster's workers are called over TLS (a CA \
                     was given, or this worker serves TLS): call it https://"
                )));
            }
            "http" => {
                if self.token.is_some() && !is_loopback(url) {
                    log::warn!(
                        "the cluster's token goes to {url} in clear (plain HTTP/2): anyone on \
                         the way can read it; serve the workers with TLS and call them https://"
                    );
                }
                return Ok(endpoint);
            }
            other => {
                return Err(config(&format!(
                    "{url}: a worker is called http:// or https://, not {other}://"
                )));
            }
        }
        install_crypto_provider();
        let mut tls = ClientTlsConfig::new();
        if let Some(host) = url.host_str() {
            tls = tls.domain_name(host.trim_start_matches('[').trim_end_matches(']'));
        }
        tls = match &self.ca {
            Some(pem) => tls.ca_certificate(Certificate::from_pem(pem.as_ref())),
            None => tls.with_native_roots(),
        };
        endpoint
            .tls_config(tls)
            .map_err(|e| DataFusionError::External(Box::new(e)))
    }

    /// `channel` sending the token (where there is one) with every call.
    pub(crate) fn channel(
        &self,
        channel: tonic::transport::Channel,
    ) -> Result<datafusion_distributed::grpc::BoxCloneSyncChannel> {
        use datafusion_distributed::grpc::BoxCloneSyncChannel;
        Ok(match &self.token {
            Some(token) => BoxCloneSyncChannel::new(WithToken {
                inner: channel,
                header: token.header()?,
            }),
            None => BoxCloneSyncChannel::new(channel),
        })
    }
}

/// A channel that puts the token's header on every request.
#[derive(Clone)]
struct WithToken<S> {
    inner: S,
    header: http::HeaderValue,
}

impl<S, B> tower::Service<http::Request<B>> for WithToken<S>
where
    S: tower::Service<http::Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<std::result::Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: http::Request<B>) -> Self::Future {
        (request.headers_mut()).insert(http::header::AUTHORIZATION, self.header.clone());
        self.inner.call(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tonic::service::Interceptor;

    fn call_with(header: Option<&str>) -> Request<()> {
        let mut request = Request::new(());
        if let Some(header) = header {
            request
                .metadata_mut()
                .insert("authorization", header.parse().unwrap());
        }
        request
    }

    #[test]
    fn a_worker_with_a_token_takes_only_calls_that_carry_it() {
        let token = WorkerToken::new(" s3cret-token\n").unwrap();
        let mut check = TokenCheck::new(Some(token));
        assert!(check.call(call_with(Some("Bearer s3cret-token"))).is_ok());
        let none = check.call(call_with(None)).unwrap_err();
        assert_eq!(none.code(), tonic::Code::Unauthenticated);
        assert!(none.message().contains("none was sent"), "{none}");
        for wrong in [
            "Bearer s3cret-tokeN",
            "Bearer s3cret-token2",
            "Bearer s3cret",
            "s3cret-token",
            "",
        ] {
            let refused = check.call(call_with(Some(wrong))).unwrap_err();
            assert_eq!(refused.code(), tonic::Code::Unauthenticated);
            assert!(refused.message().contains("not this worker's"), "{refused}");
        }
        // a worker without a token takes every call
        let mut open = TokenCheck::new(None);
        assert!(open.call(call_with(None)).is_ok());
    }

    #[test]
    fn tokens_are_header_text_and_never_shown() {
        for bad in ["", "  \n", "with space", "ünïcode"] {
            assert!(WorkerToken::new(bad).is_err(), "{bad:?}");
        }
        let token = WorkerToken::new("abc").unwrap();
        assert_eq!(format!("{token:?}"), "WorkerToken(..)");
        assert!(token.header().unwrap().is_sensitive());
    }

    #[test]
    fn workers_are_called_http_or_https_and_https_only_in_a_tls_cluster() {
        let plain: Url = "http://10.0.0.1:50051".parse().unwrap();
        let tls: Url = "https://10.0.0.1:50051".parse().unwrap();
        let calls = |security: &WorkerSecurity, url: &Url| {
            let endpoint = Endpoint::from_shared(url.to_string()).unwrap();
            security.secured(url, endpoint).map_err(|e| e.to_string())
        };
        let open = WorkerSecurity::default().with_token(WorkerToken::new("t").ok());
        assert!(calls(&open, &plain).is_ok());
        assert!(calls(&open, &tls).is_ok());
        for other in ["unix:///tmp/worker.sock", "ftp://10.0.0.1:50051"] {
            let error = calls(&open, &other.parse().unwrap()).unwrap_err();
            assert!(
                error.contains("a worker is called http:// or https://, not"),
                "{error}"
            );
        }
        let ca = Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/tls/ca.pem"
        ));
        for tls_cluster in [
            open.clone().tls_only(),
            WorkerSecurity::default().with_ca_file(ca).unwrap(),
        ] {
            let error = calls(&tls_cluster, &plain).unwrap_err();
            assert!(
                error.contains("http://10.0.0.1:50051/ is plain HTTP/2, but this cluster's"),
                "{error}"
            );
            assert!(calls(&tls_cluster, &tls).is_ok());
        }
    }

    #[test]
    fn only_loopback_is_open_without_a_token() {
        let token = WorkerToken::new("t").unwrap();
        let loopback: SocketAddr = "127.0.0.1:50051".parse().unwrap();
        let v6_loopback: SocketAddr = "[::1]:50051".parse().unwrap();
        let any: SocketAddr = "0.0.0.0:50051".parse().unwrap();
        assert!(check_listen(loopback, None, false).is_ok());
        assert!(check_listen(v6_loopback, None, false).is_ok());
        let refused = check_listen(any, None, false).unwrap_err().to_string();
        assert!(
            refused.contains("refusing to listen on 0.0.0.0:50051 without a token"),
            "{refused}"
        );
        assert!(check_listen(any, Some(&token), false).is_ok());
        assert!(check_listen(any, None, true).is_ok());
    }
}
