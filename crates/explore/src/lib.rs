//! cavesweep-explore: `cavesweep explore`, the generator family live in a browser.
//!
//! A local HTTP server (axum on tokio) serving one page, compiled into the binary, and a JSON
//! API over the library (`docs/explore-api.md` is the contract): a cave with its picture,
//! metrics, trajectory and per-step frames; thumbnails; downloads in the library's map formats;
//! a sweep folder's grid points (read only, through the report's model); seed search streamed
//! as it runs.
//!
//! It runs code on request, so every request is checked before any work (`guard.rs`): the
//! `Host` header must name the bound address (a DNS-rebinding page cannot reach it), `/` and
//! the API need the per-run token, cross-origin requests are refused. Every request's work is
//! bounded ([`cave::Limits`], a time limit), at most [`HEAVY_AT_ONCE`] heavy requests run at
//! once (a tab left open cannot take the machine), bodies are capped, and no request names a
//! file: the only folder read is the one given on the command line.

#![warn(missing_docs)]

pub mod cave;
mod guard;
pub mod search;
pub mod sweep;

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{DefaultBodyLimit, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use tokio::sync::Semaphore;

use cave::Limits;

/// At most this many heavy requests (caves, thumbnails, exports, searches) run at once; more
/// get `429` at once rather than a queue that grows while a tab keeps asking.
pub const HEAVY_AT_ONCE: usize = 2;

/// Time limit of one cave, thumbnails or export request.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// Time limit of one search (it streams; it is stopped, its last line says so).
pub const SEARCH_TIMEOUT: Duration = Duration::from_secs(120);

/// Largest request body.
pub const MAX_BODY: usize = 64 << 10;

/// An API error: the status and the one-line message the page shows, with the recipe key or
/// request field at fault and, for a query, the 1-based column.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// HTTP status.
    pub status: StatusCode,
    /// One line.
    pub message: String,
    /// The key or field at fault.
    pub key: Option<String>,
    /// The column of a query error.
    pub at: Option<usize>,
}

impl ApiError {
    /// A `400`.
    pub fn bad(message: impl Into<String>) -> ApiError {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
            key: None,
            at: None,
        }
    }

    /// A `500` (a picture that would not encode: a bug, said in one line).
    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            message: message.into(),
            key: None,
            at: None,
        }
    }

    /// Another status.
    pub fn status(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
            key: None,
            at: None,
        }
    }

    /// Name the key or field at fault.
    pub fn field(mut self, key: &str) -> ApiError {
        self.key = Some(key.to_string());
        self
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({"error": self.message, "key": self.key, "at": self.at});
        (self.status, axum::Json(body)).into_response()
    }
}

/// How to run the explorer.
#[derive(Debug, Clone)]
pub struct Options {
    /// Address to bind (default 127.0.0.1).
    pub bind: IpAddr,
    /// Port (0: any free port).
    pub port: u16,
    /// The sweep folder to explore, if any.
    pub sweep: Option<PathBuf>,
    /// Threads a search uses.
    pub threads: usize,
    /// Time a client has to send a request's headers, and then its body ([`HEADER_TIMEOUT`]).
    pub header_timeout: Duration,
}

/// Why the explorer could not run.
#[derive(Debug, thiserror::Error)]
pub enum ExploreError {
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The runtime or the server failed.
    #[error("explore: {0}")]
    Io(#[from] std::io::Error),
    /// The sweep folder cannot be read.
    #[error("{0}")]
    Sweep(String),
    /// No randomness for the token.
    #[error("cannot draw a token: {0}")]
    Token(String),
}

/// Shared by every request.
struct App {
    token: String,
    /// `Host` values accepted.
    hosts: Vec<String>,
    /// Origins accepted in an `Origin` header.
    origins: Vec<String>,
    sweep: Option<PathBuf>,
    header_timeout: Duration,
    limits: Limits,
    heavy: Arc<Semaphore>,
    threads: usize,
}

/// A server bound and ready: its URL (with the token) is known before it serves.
pub struct Server {
    listener: tokio::net::TcpListener,
    runtime: tokio::runtime::Runtime,
    app: Arc<App>,
    url: String,
}

impl Server {
    /// Bind the address and draw the token. A sweep folder is read once here, so a folder
    /// that is not a sweep is refused before anything is served.
    pub fn bind(opts: &Options) -> Result<Server, ExploreError> {
        if let Some(dir) = &opts.sweep {
            cavesweep_report::model::load(dir).map_err(|e| ExploreError::Sweep(e.to_string()))?;
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .max_blocking_threads(HEAVY_AT_ONCE + 2)
            .enable_all()
            .build()?;
        let addr = SocketAddr::new(opts.bind, opts.port);
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind(addr))
            .map_err(|source| ExploreError::Bind { addr, source })?;
        let local = listener.local_addr()?;
        let mut raw = [0u8; 16];
        getrandom::fill(&mut raw).map_err(|e| ExploreError::Token(e.to_string()))?;
        let token: String = raw.iter().map(|b| format!("{b:02x}")).collect();
        let port = local.port();
        let host = match local.ip() {
            IpAddr::V6(ip) => format!("[{ip}]"),
            IpAddr::V4(ip) => ip.to_string(),
        };
        let mut hosts = vec![format!("{host}:{port}")];
        if local.ip().is_loopback() {
            for h in ["127.0.0.1", "localhost", "[::1]"] {
                let h = format!("{h}:{port}");
                if !hosts.contains(&h) {
                    hosts.push(h);
                }
            }
        }
        let origins = hosts.iter().map(|h| format!("http://{h}")).collect();
        let url = format!("http://{host}:{port}/?token={token}");
        Ok(Server {
            listener,
            runtime,
            app: Arc::new(App {
                token,
                hosts,
                origins,
                sweep: opts.sweep.clone(),
                header_timeout: opts.header_timeout,
                limits: Limits::DEFAULT,
                heavy: Arc::new(Semaphore::new(HEAVY_AT_ONCE)),
                threads: opts.threads.max(1),
            }),
            url,
        })
    }

    /// The page's URL, token included.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Serve until `stop` is raised (checked ten times a second: Ctrl-C's handler raises it).
    ///
    /// The accept loop is ours rather than `axum::serve`'s for two limits it does not set: a
    /// request's headers must arrive within [`Options::header_timeout`] (a connection that sends nothing
    /// is closed, not kept forever), and at most [`MAX_CONNECTIONS`] connections are open (the
    /// others wait in the kernel's backlog).
    pub fn serve(self, stop: Arc<AtomicBool>) -> Result<(), ExploreError> {
        let header_timeout = self.app.header_timeout;
        let router = router(self.app);
        let listener = self.listener;
        self.runtime.block_on(async move {
            let open = Arc::new(Semaphore::new(MAX_CONNECTIONS));
            loop {
                let permit = tokio::select! {
                    p = open.clone().acquire_owned() => p.expect("the semaphore is never closed"),
                    _ = stopped(&stop) => break,
                };
                let (stream, _) = tokio::select! {
                    r = listener.accept() => match r {
                        Ok(c) => c,
                        // Out of descriptors or a connection reset before accept: keep serving.
                        Err(_) => {
                            tokio::time::sleep(Duration::from_millis(50)).await;
                            continue;
                        }
                    },
                    _ = stopped(&stop) => break,
                };
                let service = hyper_util::service::TowerToHyperService::new(router.clone());
                tokio::spawn(async move {
                    let mut b = hyper::server::conn::http1::Builder::new();
                    b.timer(hyper_util::rt::TokioTimer::new())
                        .header_read_timeout(header_timeout);
                    let io = hyper_util::rt::TokioIo::new(stream);
                    // A client gone mid-request is not the server's error.
                    let _ = b.serve_connection(io, service).await;
                    drop(permit);
                });
            }
        });
        // Searches still streaming are stopped by their closed connections; do not wait.
        self.runtime.shutdown_timeout(Duration::from_millis(500));
        Ok(())
    }
}

/// Resolves once `stop` is raised.
async fn stopped(stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Time a client has to send a request's headers.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// Most connections open at once.
pub const MAX_CONNECTIONS: usize = 64;

fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/", get(page))
        .route("/app.js", get(script))
        .route("/app.css", get(style))
        .route("/api/info", get(info))
        .route("/api/cave", post(cave_handler))
        .route("/api/thumbs", post(thumbs_handler))
        .route("/api/export", post(export_handler))
        .route("/api/sweep", get(sweep_handler))
        .route("/api/sweep/picks", get(picks_handler))
        .route("/api/search", post(search_handler))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(
            app.clone(),
            guard::check,
        ))
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .with_state(app)
}

/// The page, its script and style, compiled in: no file is read to serve them.
const INDEX_HTML: &str = include_str!("../static/index.html");
const APP_JS: &str = include_str!("../static/app.js");
const APP_CSS: &str = include_str!("../static/app.css");

fn asset(body: &'static str, mime: &'static str) -> Response {
    let mut r = Response::new(Body::from(body));
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(mime));
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

async fn page() -> Response {
    asset(INDEX_HTML, "text/html; charset=utf-8")
}

async fn script() -> Response {
    asset(APP_JS, "text/javascript; charset=utf-8")
}

async fn style() -> Response {
    asset(APP_CSS, "text/css; charset=utf-8")
}

/// A known path asked with a method it does not take: `405` with the JSON error body every
/// other error has (axum's own answer had an empty body).
async fn method_not_allowed(method: axum::http::Method) -> ApiError {
    ApiError::status(
        StatusCode::METHOD_NOT_ALLOWED,
        format!("this path does not take {method}"),
    )
}

async fn not_found() -> ApiError {
    ApiError::status(StatusCode::NOT_FOUND, "no such page or API endpoint")
}

async fn info(State(app): State<Arc<App>>) -> axum::Json<Value> {
    let presets: Vec<Value> = cavesweep_core::presets::NAMES
        .iter()
        .map(|n| {
            let r = cavesweep_core::presets::preset(n).expect("presets load");
            let values: serde_json::Map<String, Value> = cavesweep_core::recipe::KEYS
                .iter()
                .filter_map(|k| r.value(k).map(|v| (k.to_string(), Value::from(v))))
                .collect();
            json!({"name": n, "about": r.about, "values": values})
        })
        .collect();
    let sweep = app.sweep.as_ref().map(|d| {
        json!({"dir": d.file_name().map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| d.display().to_string())})
    });
    axum::Json(json!({
        "version": env!("CARGO_PKG_VERSION"),
        "keys": cavesweep_core::recipe::KEYS,
        "metrics": cavesweep_core::measure::Metric::ALL.iter().map(|m| m.name()).collect::<Vec<_>>(),
        "presets": presets,
        "limits": app.limits.json(TIMEOUT.as_millis() as u64, SEARCH_TIMEOUT.as_millis() as u64, HEAVY_AT_ONCE),
        "sweep": sweep,
    }))
}

/// A JSON body, with serde's message as the one-line error.
/// A request's body as received, or the body-limit or read error said in JSON like every other
/// error of the API (axum's own rejection is plain text).
/// A request's body, read within [`Options::header_timeout`] of its headers: a client that
/// sends headers and then part of a body was waited on forever, holding one of the
/// [`MAX_CONNECTIONS`] (64 such clients stopped the server). Late: `408`, and the connection
/// is closed (its body was not read to the end).
struct RawBody(Result<axum::body::Bytes, ApiError>);

impl axum::extract::FromRequest<Arc<App>> for RawBody {
    type Rejection = std::convert::Infallible;

    async fn from_request(
        req: axum::extract::Request,
        app: &Arc<App>,
    ) -> Result<RawBody, std::convert::Infallible> {
        let limit = app.header_timeout;
        let read = axum::body::Bytes::from_request(req, app);
        Ok(RawBody(match tokio::time::timeout(limit, read).await {
            Ok(Ok(b)) => Ok(b),
            Ok(Err(r)) => Err(ApiError::status(
                r.status(),
                format!("request body: {}", r.body_text()),
            )),
            Err(_) => Err(ApiError::status(
                StatusCode::REQUEST_TIMEOUT,
                format!(
                    "request body: not all of it arrived within {} s",
                    limit.as_secs_f64()
                ),
            )),
        }))
    }
}

fn parse<T: serde::de::DeserializeOwned>(body: RawBody) -> Result<T, ApiError> {
    let body = body.0?;
    serde_json::from_slice(&body).map_err(|e| ApiError::bad(format!("request body: {e}")))
}

/// Run heavy, bounded work off the async threads: a permit (or `429`), then the time limit
/// (`503`; the work itself is bounded by the limits, so it ends soon after).
async fn heavy<T: Send + 'static>(
    app: &Arc<App>,
    work: impl FnOnce(&Limits) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let permit = app.heavy.clone().try_acquire_owned().map_err(|_| busy())?;
    let limits = app.limits;
    let job = tokio::task::spawn_blocking(move || {
        let out = work(&limits);
        drop(permit);
        out
    });
    match tokio::time::timeout(TIMEOUT, job).await {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => Err(ApiError::internal(format!(
            "the request's work failed: {e}"
        ))),
        Err(_) => Err(ApiError::status(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("the request took over {} s", TIMEOUT.as_secs()),
        )),
    }
}

type Answer = Result<axum::Json<Value>, ApiError>;

async fn cave_handler(State(app): State<Arc<App>>, body: RawBody) -> Answer {
    let req: cave::CaveReq = parse(body)?;
    heavy(&app, move |l| cave::cave(&req, l))
        .await
        .map(axum::Json)
}

async fn thumbs_handler(State(app): State<Arc<App>>, body: RawBody) -> Answer {
    let req: cave::ThumbsReq = parse(body)?;
    heavy(&app, move |l| cave::thumbs(&req, l))
        .await
        .map(axum::Json)
}

impl IntoResponse for cave::Download {
    fn into_response(self) -> Response {
        let mut resp = Response::new(Body::from(self.bytes));
        let h = resp.headers_mut();
        h.insert(header::CONTENT_TYPE, HeaderValue::from_static(self.mime));
        // The name is letters, digits, '-', '_' and '.' only (cave::sanitize).
        if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{}\"", self.name)) {
            h.insert(header::CONTENT_DISPOSITION, v);
        }
        resp
    }
}

async fn export_handler(
    State(app): State<Arc<App>>,
    body: RawBody,
) -> Result<cave::Download, ApiError> {
    let req: cave::ExportReq = parse(body)?;
    heavy(&app, move |l| cave::export(&req, l)).await
}

fn sweep_dir(app: &App) -> Result<PathBuf, ApiError> {
    app.sweep.clone().ok_or_else(|| {
        ApiError::status(
            StatusCode::NOT_FOUND,
            "no sweep folder: start `cavesweep explore SWEEP_DIR`",
        )
    })
}

async fn sweep_handler(State(app): State<Arc<App>>) -> Answer {
    let dir = sweep_dir(&app)?;
    heavy(&app, move |_| sweep::sweep(&dir))
        .await
        .map(axum::Json)
}

#[derive(serde::Deserialize)]
struct PicksQuery {
    point: usize,
}

async fn picks_handler(
    State(app): State<Arc<App>>,
    q: Result<Query<PicksQuery>, axum::extract::rejection::QueryRejection>,
) -> Answer {
    let Query(q) = q.map_err(|e| ApiError::bad(e.body_text()).field("point"))?;
    let dir = sweep_dir(&app)?;
    heavy(&app, move |_| sweep::picks(&dir, q.point))
        .await
        .map(axum::Json)
}

/// The `429` of a heavy request when [`HEAVY_AT_ONCE`] are running.
fn busy() -> ApiError {
    ApiError::status(
        StatusCode::TOO_MANY_REQUESTS,
        format!("{HEAVY_AT_ONCE} requests are already running; try again when one ends"),
    )
}

async fn search_handler(State(app): State<Arc<App>>, body: RawBody) -> Response {
    let prepared = async {
        let req: search::SearchReq = parse(body)?;
        let limits = app.limits;
        let p = search::prepare(&req, &limits)?;
        let permit = app.heavy.clone().try_acquire_owned().map_err(|_| busy())?;
        Ok::<_, ApiError>((p, permit))
    };
    let (p, permit) = match prepared.await {
        Ok(x) => x,
        Err(e) => return e.into_response(),
    };
    let (tx, rx) = tokio::sync::mpsc::channel::<String>(256);
    let stop = Arc::new(AtomicBool::new(false));
    let threads = app.threads;
    {
        let stop = stop.clone();
        tokio::task::spawn_blocking(move || {
            search::run(p, tx, stop, threads);
            drop(permit);
        });
    }
    {
        // The time limit: the search stops at its next chunk and says so in its last line.
        let stop = stop.clone();
        tokio::spawn(async move {
            tokio::time::sleep(SEARCH_TIMEOUT).await;
            stop.store(true, Ordering::Relaxed);
        });
    }
    let stream = tokio_stream::wrappers::ReceiverStream::new(rx);
    let body = Body::from_stream(tokio_stream::StreamExt::map(stream, |s| {
        Ok::<_, std::convert::Infallible>(s)
    }));
    let mut resp = Response::new(body);
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/x-ndjson"),
    );
    resp
}

#[cfg(test)]
mod tests;
