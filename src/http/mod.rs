//! The headless HTTP frontend (axum): the `/api/v1` routes, the SSE event
//! stream, and the listener that `/mcp` shares.
//!
//! - `api.rs` registers routes and writes the OpenAPI document as it goes;
//!   `routes.rs` holds the handlers, `events.rs` the SSE stream.
//! - `web.rs` serves the web workbench's embedded files at `/` (outside
//!   the API and its document: the page is a client of the API).
//! - `guard.rs` is the one middleware every request passes (Host, Origin,
//!   the caller's token and role, body size, readiness); `log.rs` writes
//!   the access log around it; `extract.rs` and `error.rs` keep the error
//!   contract.

pub mod api;
pub mod error;
pub mod events;
pub mod extract;
pub mod guard;
pub mod log;
pub mod metrics;
pub mod routes;
pub mod web;

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::response::IntoResponse;
use tokio::net::TcpListener;
use tokio::sync::watch;

use self::error::ApiError;
use self::guard::GuardConfig;
use crate::config::Config;
use quire_core::Core;

/// What every handler can reach.
#[derive(Clone)]
pub struct AppState {
    pub core: Core,
    /// The configuration in effect; a reload replaces it.
    config: Arc<RwLock<Arc<Config>>>,
    /// The mode's name (`Arc`: the state is cloned for every request).
    pub mode: Arc<str>,
    pub guard: Arc<GuardConfig>,
    pub openapi: Arc<api::OpenApi>,
    /// What `/metrics` reports.
    pub metrics: Arc<metrics::Metrics>,
    /// Refused requests held back from the access log, per address.
    pub refusals: Arc<log::Refusals>,
    ready: Arc<AtomicBool>,
    /// Turns true when the server is shutting down; ends event streams.
    pub shutdown: watch::Receiver<bool>,
}

impl AppState {
    /// The configuration in effect.
    pub fn config(&self) -> Arc<Config> {
        self.config
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Puts a reloaded configuration in effect for what reads it on each
    /// request: the guard's users, hosts, origins and proxies (the caller
    /// has made the rest of `config` what is running). Returns the users
    /// it revoked (whose open streams end now).
    pub fn reload(&self, config: Config) -> Vec<Arc<str>> {
        let revoked = self.guard.reload(&config.server);
        *self.config.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(config);
        revoked
    }

    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::SeqCst)
    }

    pub fn set_ready(&self) {
        self.ready.store(true, Ordering::SeqCst);
    }
}

/// A built application: the router plus handles to drive it.
pub struct App {
    pub router: Router,
    pub state: AppState,
    /// Send `true` to end event streams (graceful shutdown).
    pub shutdown: watch::Sender<bool>,
}

/// Builds the application over `core`. `extra` (e.g. `/mcp`) is merged in
/// and passes the same guard.
pub fn app(core: Core, config: Arc<Config>, mode: &str, extra: Option<Router>) -> App {
    let server = &config.server;
    let guard = GuardConfig::of(server);
    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    let (router, openapi) = routes::api().finish(env!("CARGO_PKG_VERSION"));
    let state = AppState {
        core,
        mode: Arc::from(mode),
        guard: Arc::new(guard),
        openapi: Arc::new(openapi),
        metrics: Arc::new(metrics::Metrics::default()),
        refusals: Arc::new(log::Refusals::default()),
        ready: Arc::new(AtomicBool::new(false)),
        shutdown: shutdown_rx,
        config: Arc::new(RwLock::new(config)),
    };
    state
        .metrics
        .clone()
        .follow(&state.core, state.shutdown.clone());
    summarise_refusals(state.refusals.clone(), state.shutdown.clone());
    let limit = usize::try_from(state.guard.max_body_bytes).unwrap_or(usize::MAX);
    let mut router = router
        .route("/", axum::routing::get(web::index))
        .route("/assets/{*path}", axum::routing::get(web::asset))
        .route("/metrics", axum::routing::get(metrics::metrics))
        .route(
            crate::oauth::METADATA_PATH,
            axum::routing::get(protected_resource),
        )
        .route(
            crate::oauth::MCP_METADATA_PATH,
            axum::routing::get(protected_resource),
        )
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(state.clone())
        // The REST routes only: `/mcp` names its sessions in its calls,
        // and each layer costs every request it wraps.
        .layer(axum::middleware::from_fn(extract::name_the_session));
    if let Some(extra) = extra {
        router = router.merge(extra);
    }
    let router = router
        .layer(DefaultBodyLimit::max(limit))
        // The access log runs the guard's checks inside it.
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            log::access_log,
        ))
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(panicked))
        // No answer is ever read as another type than it says (a blob
        // served as `application/octet-stream` is never run as a script).
        .layer(tower_http::set_header::SetResponseHeaderLayer::overriding(
            axum::http::header::X_CONTENT_TYPE_OPTIONS,
            axum::http::HeaderValue::from_static("nosniff"),
        ));
    App {
        router,
        state,
        shutdown: shutdown_tx,
    }
}

/// Writes the access log's summaries of held refusals as their intervals
/// end, until the server stops; then what is still held.
fn summarise_refusals(refusals: Arc<log::Refusals>, mut stop: watch::Receiver<bool>) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    runtime.spawn(async move {
        let mut every = tokio::time::interval(log::INTERVAL / 4);
        loop {
            tokio::select! {
                _ = every.tick() => refusals.flush(std::time::Instant::now(), false),
                _ = stop.wait_for(|stop| *stop) => break,
            }
        }
        refusals.flush(std::time::Instant::now(), true);
    });
}

/// RFC 9728 protected resource metadata, without a token; 404 on a server
/// without `[server.oauth]`.
async fn protected_resource(
    axum::extract::State(state): axum::extract::State<AppState>,
    uri: axum::http::Uri,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    match state.guard.oauth() {
        Some(oauth) => axum::Json(oauth.metadata()).into_response(),
        None => not_found(uri).await.into_response(),
    }
}

async fn not_found(uri: axum::http::Uri) -> ApiError {
    ApiError::new(
        axum::http::StatusCode::NOT_FOUND,
        "not_found",
        format!("no route {}", uri.path()),
    )
}

async fn method_not_allowed(method: axum::http::Method, uri: axum::http::Uri) -> ApiError {
    ApiError::new(
        axum::http::StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        format!("{} does not answer {method}", uri.path()),
    )
}

/// A handler that panicked: log it, answer 500 with the usual body.
fn panicked(panic: Box<dyn std::any::Any + Send + 'static>) -> axum::response::Response {
    let detail = panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "unknown panic".to_owned());
    tracing::error!("request handler panicked: {detail}");
    ApiError::new(
        axum::http::StatusCode::INTERNAL_SERVER_ERROR,
        "internal",
        "internal error (the server logged the details)",
    )
    .into_response()
}

/// Whether the request's `If-None-Match` names `etag` (the client's copy
/// is current: answer 304).
pub fn etag_matches(request: &axum::http::HeaderMap, etag: &str) -> bool {
    request
        .get(axum::http::header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|tags| tags.split(',').any(|t| t.trim() == etag))
}

/// Whether `host` names only this machine.
pub fn is_loopback(host: &str) -> bool {
    let h = host.trim_start_matches('[').trim_end_matches(']');
    h.eq_ignore_ascii_case("localhost") || h.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Binds `server.host:server.port`; refuses, without a token, a
/// non-loopback host, trusted proxies or a non-loopback allowed host (the
/// caller reports that as a configuration error).
pub async fn bind(config: &Config) -> Result<TcpListener, BindError> {
    let server = &config.server;
    let token = server
        .token
        .get()
        .map_err(|why| BindError::Secret(why.to_owned()))?;
    if !is_loopback(&server.host) && token.is_none() && server.users.is_empty() {
        return Err(BindError::NeedsToken(server.host.clone()));
    }
    if token.is_none()
        && let Some(why) = crate::config::reload::exposed_without_tokens(server)
    {
        return Err(BindError::Exposed(why));
    }
    let host = server.host.trim_start_matches('[').trim_end_matches(']');
    let addr = match host.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, server.port)],
        Err(_) => tokio::net::lookup_host((host, server.port))
            .await
            .map_err(|e| BindError::Io(format!("cannot resolve {host}: {e}")))?
            .collect(),
    };
    TcpListener::bind(&addr[..]).await.map_err(|e| {
        BindError::Io(format!(
            "cannot listen on {}:{}: {e}",
            server.host, server.port
        ))
    })
}

#[derive(Debug, thiserror::Error)]
pub enum BindError {
    #[error(
        "refusing to serve on {0} without a token: set server.token (or server.token_env / server.token_file), or bind 127.0.0.1"
    )]
    NeedsToken(String),
    /// No token, but a proxy or an allowed host would let others in.
    #[error("refusing to serve without a token: {0}")]
    Exposed(String),
    /// `server.token_env` or `server.token_file` did not resolve.
    #[error("cannot serve without the configured token: {0}")]
    Secret(String),
    #[error("{0}")]
    Io(String),
}

/// Serves `router` on `listener` until `stop` resolves; then stops
/// accepting and lets requests in flight finish for up to `grace`. A
/// connection whose peer takes none of the data sent to it for
/// `send_timeout` is closed by the kernel (`TCP_USER_TIMEOUT`, Linux), so
/// a client that stops reading an event stream costs at most what hyper
/// and the socket buffer for it, for that long.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    shutdown: watch::Sender<bool>,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
    grace: std::time::Duration,
    send_timeout: std::time::Duration,
) -> std::io::Result<()> {
    use axum::serve::ListenerExt;
    let listener = listener.tap_io(move |tcp| {
        // Small MCP/API replies must not wait for delayed ACKs.
        let _ = tcp.set_nodelay(true);
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            let millis = u32::try_from(send_timeout.as_millis()).unwrap_or(u32::MAX);
            let _ = rustix::net::sockopt::set_tcp_user_timeout(&*tcp, millis);
        }
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        let _ = send_timeout;
    });
    let (stopped_tx, stopped_rx) = tokio::sync::oneshot::channel::<()>();
    let signal = async move {
        stop.await;
        let _ = shutdown.send(true);
        let _ = stopped_tx.send(());
    };
    let server = tokio::spawn(async move {
        // Each request knows its peer's address: failed authentications
        // are logged and throttled by it.
        axum::serve(
            listener,
            router.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .with_graceful_shutdown(signal)
        .await
    });
    let abort = server.abort_handle();
    tokio::pin!(server);
    tokio::select! {
        result = &mut server => return result.map_err(std::io::Error::other)?,
        _ = stopped_rx => {}
    }
    match tokio::time::timeout(grace, &mut server).await {
        Ok(result) => result.map_err(std::io::Error::other)?,
        Err(_) => {
            tracing::warn!(
                "requests still running after {}s; closing them",
                grace.as_secs()
            );
            abort.abort();
            Ok(())
        }
    }
}
