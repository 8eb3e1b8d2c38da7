//! Checks every request passes before it reaches a route (`/mcp`
//! included): the `Host` header names this server (DNS-rebinding
//! protection), an `Origin` header is this server's own origin or an
//! allowed one (`server.allowed_origins`; the workbench's static files are
//! served whatever the origin), no token travels in the query
//! string, the bearer token is one of a user's (compared in constant time;
//! the web workbench's static files and `/healthz` need none) or a trusted
//! proxy names the user, the user's role allows the route, the body is not
//! too large, and the core has finished starting. A wrong token is
//! throttled per address and over all addresses
//! ([`crate::access::Throttle`]) and marked for the access log to write;
//! the request's [`Caller`] goes into its extensions for the route to sign
//! its changes with.

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Instant;

use axum::extract::{ConnectInfo, MatchedPath, Request};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::AppState;
use super::error::{ApiError, Refused};
use super::log::{AuthFailed, RefusedOrigin};
use crate::access::{Caller, Throttle, Users};
use crate::config::schema::{Role, ServerConfig};
use crate::oauth::{OAuth, Rejection};

/// Host names always accepted (with any port).
const LOCAL_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// What the guard enforces.
#[derive(Debug)]
pub struct GuardConfig {
    /// The host the server is bound to (accepted in `Host`).
    bound_host: String,
    /// What a reloaded config replaces whole ([`GuardConfig::reload`]).
    rules: RwLock<Arc<Rules>>,
    throttle: Throttle,
    pub max_body_bytes: u64,
}

/// The guard's settings that a reload may change.
#[derive(Debug)]
struct Rules {
    /// Lowercase host names (no port).
    allowed_hosts: Vec<String>,
    allowed_origins: Vec<String>,
    /// Who may come in; none: a loopback server open to its machine. A
    /// token that did not resolve matches nothing (fail closed).
    users: Arc<Users>,
    /// A header a trusted proxy names the user in, and those proxies.
    proxy_header: Option<String>,
    trusted_proxies: Vec<IpAddr>,
    /// `/metrics` without a token (`server.metrics_public`).
    metrics_public: bool,
    /// Bearer JWTs of an identity provider (`[server.oauth]`).
    oauth: Option<Arc<OAuth>>,
}

impl Rules {
    fn of(bound_host: &str, server: &ServerConfig) -> Rules {
        let mut allowed_hosts: Vec<String> = LOCAL_HOSTS.iter().map(|h| (*h).to_owned()).collect();
        allowed_hosts.push(bracket_ipv6(bound_host));
        allowed_hosts.extend(server.allowed_hosts.iter().map(|h| host_name(h)));
        allowed_hosts.sort();
        allowed_hosts.dedup();
        Rules {
            allowed_hosts,
            allowed_origins: server
                .allowed_origins
                .iter()
                .map(|o| normal_origin(o))
                .collect(),
            users: Arc::new(Users::from_config(server)),
            proxy_header: server.trusted_proxy_header.clone(),
            trusted_proxies: server.trusted_proxies.clone(),
            metrics_public: server.metrics_public,
            oauth: server.oauth.as_ref().map(|o| Arc::new(OAuth::new(o))),
        }
    }

    /// Whether every request must bring a credential: a token, or with
    /// `[server.oauth]` a JWT (even on a loopback server).
    fn secured(&self) -> bool {
        self.users.secured() || self.oauth.is_some()
    }

    /// The absolute URL of the protected resource metadata of `path`, as
    /// the client reached this server: its `Host`, or a trusted proxy's
    /// `X-Forwarded-Host` and `X-Forwarded-Proto`.
    fn metadata_url(&self, peer: Option<IpAddr>, headers: &HeaderMap, path: &str) -> String {
        let forwarded = |name: &str| {
            peer.filter(|p| self.trusted_proxies.contains(p))
                .and_then(|_| headers.get(name))
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.split(',').next())
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        let scheme = forwarded("x-forwarded-proto")
            .filter(|s| s == "https" || s == "http")
            .unwrap_or_else(|| "http".to_owned());
        let host = forwarded("x-forwarded-host")
            .or_else(|| {
                headers
                    .get(header::HOST)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned)
            })
            .unwrap_or_else(|| "localhost".to_owned());
        let suffix = if path == "/mcp" { "/mcp" } else { "" };
        format!("{scheme}://{host}{}{suffix}", crate::oauth::METADATA_PATH)
    }

    /// The client's address: the peer's, or, when the peer is a trusted
    /// proxy, the last address its `X-Forwarded-For` names.
    fn client(&self, peer: Option<IpAddr>, headers: &HeaderMap) -> Option<IpAddr> {
        let peer = peer?;
        if !self.trusted_proxies.contains(&peer) {
            return Some(peer);
        }
        let forwarded = headers
            .get("x-forwarded-for")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.rsplit(',').next())
            .and_then(|a| a.trim().parse().ok());
        Some(forwarded.unwrap_or(peer))
    }

    /// The user a trusted proxy names, when the request came through one.
    fn proxied_user(&self, peer: Option<IpAddr>, headers: &HeaderMap) -> Option<String> {
        let header = self.proxy_header.as_deref()?;
        if !peer.is_some_and(|p| self.trusted_proxies.contains(&p)) {
            return None;
        }
        let name = headers.get(header)?.to_str().ok()?.trim();
        (!name.is_empty()).then(|| name.to_owned())
    }

    fn host_allowed(&self, host: &str) -> bool {
        self.allowed_hosts.contains(&host_name(host))
    }

    fn origin_allowed(&self, origin: &str) -> bool {
        self.allowed_origins.contains(&normal_origin(origin))
    }
}

impl GuardConfig {
    /// The guard of `server`'s settings.
    pub fn of(server: &ServerConfig) -> Self {
        GuardConfig {
            bound_host: server.host.clone(),
            rules: RwLock::new(Arc::new(Rules::of(&server.host, server))),
            throttle: Throttle::default(),
            max_body_bytes: server.max_body_bytes.get(),
        }
    }

    fn rules(&self) -> Arc<Rules> {
        self.rules
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The client's address, as the rules in force see it (a trusted
    /// proxy's `X-Forwarded-For`).
    pub fn client(&self, peer: Option<IpAddr>, headers: &HeaderMap) -> Option<IpAddr> {
        self.rules().client(peer, headers)
    }

    /// The users as they are now.
    pub fn users(&self) -> Arc<Users> {
        self.rules().users.clone()
    }

    /// The `[server.oauth]` verifier in force, if any.
    pub fn oauth(&self) -> Option<Arc<OAuth>> {
        self.rules().oauth.clone()
    }

    /// Whether every request must bring a credential.
    pub fn secured(&self) -> bool {
        self.rules().secured()
    }

    /// Takes what a reloaded config says of the users and their tokens,
    /// the allowed hosts and origins, the trusted proxies and whether
    /// `/metrics` is public. The bound address and the body limit stay
    /// (they need a restart); so do the throttle's counts.
    ///
    /// A user who left, whose token changed or whose role was lowered has
    /// their grant revoked first, which ends what they hold open (see
    /// `revocable`); their names are returned.
    pub fn reload(&self, server: &ServerConfig) -> Vec<Arc<str>> {
        let mut rules = Rules::of(&self.bound_host, server);
        let mut rules_lock = self.rules.write().unwrap_or_else(PoisonError::into_inner);
        let mut revoked = match Arc::get_mut(&mut rules.users) {
            Some(users) => users.carry_over(&rules_lock.users),
            None => Vec::new(),
        };
        // The same identity provider keeps its keys and its callers'
        // streams; another one (or none) ends them.
        match (&rules_lock.oauth, &rules.oauth) {
            (Some(old), Some(new)) if old.config == new.config => {
                rules.oauth = Some(old.clone());
            }
            (Some(old), _) => {
                old.grant.revoke();
                revoked.push(Arc::from("[server.oauth]'s users"));
            }
            (None, _) => {}
        }
        *rules_lock = Arc::new(rules);
        revoked
    }
}

/// The bearer token of a request, if it has one. The scheme name is
/// case-insensitive (RFC 7235 §2.1).
fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim_start().split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim())
}

/// The role a route needs, by its method and path template, and what it
/// does (for the refusal). Reading and following events need `read`;
/// `/mcp` carries every call, each tool checking its own; opening a
/// project (to read it) needs `read`.
fn needed(method: &Method, route: Option<&str>) -> (Role, &'static str) {
    let Some(route) = route else {
        return (Role::Read, "this");
    };
    if matches!(*method, Method::GET | Method::HEAD) || route == "/mcp" {
        return (Role::Read, "reading");
    }
    match (method.as_str(), route) {
        ("POST", "/api/v1/projects" | "/api/v1/projects/import") => {
            (Role::Admin, "creating a project")
        }
        ("DELETE", "/api/v1/projects/current" | "/api/v1/sessions/{sessionId}") => {
            (Role::Admin, "closing a project")
        }
        ("POST", "/api/v1/memory") => (Role::Admin, "changing the memory"),
        ("POST", r) if r.ends_with("/glossary/import") => (Role::Admin, "changing the glossary"),
        ("POST", r) if r.ends_with("/suggestions") => (Role::Suggest, "suggesting a translation"),
        ("POST", r) if r.ends_with("/vote") => (Role::Suggest, "voting on a suggestion"),
        ("PUT", "/api/v1/projects/current" | "/api/v1/sessions/current")
        | ("POST", "/api/v1/sessions") => (Role::Read, "opening a project"),
        _ => (Role::Edit, "changing a project"),
    }
}

/// An IPv6 literal as it appears in a Host header.
fn bracket_ipv6(host: &str) -> String {
    let host = host.to_ascii_lowercase();
    if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]")
    } else {
        host
    }
}

/// `name:port` → `name`, `[::1]:80` → `[::1]`, lowercased.
pub fn host_name(host: &str) -> String {
    let host = host.trim().to_ascii_lowercase();
    if host.starts_with('[') {
        return match host.find(']') {
            Some(end) => host[..=end].to_owned(),
            None => host,
        };
    }
    match host.rsplit_once(':') {
        Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) => name.to_owned(),
        _ => host,
    }
}

/// An origin as compared: lowercase, without a trailing `/`, and without
/// its scheme's default port (`https://a.example:443` is
/// `https://a.example`); any other port is part of it.
fn normal_origin(origin: &str) -> String {
    let origin = origin.trim().trim_end_matches('/').to_ascii_lowercase();
    for (scheme, port) in [("https://", ":443"), ("http://", ":80")] {
        if origin.starts_with(scheme)
            && let Some(bare) = origin.strip_suffix(port)
        {
            return bare.to_owned();
        }
    }
    origin
}

/// Whether a browser's `Origin` is this server's own: `http` (the scheme
/// quire serves) and exactly the authority the request was sent to, which
/// the Host check has already found to be an allowed host; its port is the
/// port the client connected to. A page served elsewhere, even on this
/// machine, differs in scheme, host or port; `null` matches nothing. Behind
/// a TLS proxy the browser's origin is `https://…`, which is not this
/// server's: the operator names it in `server.allowed_origins`.
fn same_origin(origin: &str, host: Option<&str>) -> bool {
    let Some(host) = host else { return false };
    let host = host.trim().to_ascii_lowercase();
    let host = host.strip_suffix(":80").unwrap_or(&host);
    normal_origin(origin)
        .strip_prefix("http://")
        .is_some_and(|authority| authority == host)
}

/// Routes that answer while the core is still starting.
fn open_while_starting(path: &str) -> bool {
    matches!(path, "/healthz" | "/api/v1/meta" | "/api/v1/events") || super::web::is_web_path(path)
}

/// Query parameters that look like a credential. A token in a URL ends up
/// in logs, browser history and `Referer` headers, so a request carrying
/// one is refused outright, whether or not the token is right.
const TOKEN_PARAMS: [&str; 4] = ["token", "access_token", "bearer", "auth"];

fn token_in_query(query: Option<&str>) -> bool {
    query.is_some_and(|q| {
        q.split('&').any(|pair| {
            let name = pair.split_once('=').map_or(pair, |(n, _)| n);
            TOKEN_PARAMS.iter().any(|t| name.eq_ignore_ascii_case(t))
        })
    })
}

/// The checks, then `next`. Not a layer of its own: the access log, which
/// must see every refusal, calls it (one middleware instead of two on
/// every request). `/mcp`'s clients read JSON-RPC, so a refusal there (a
/// host, origin or token refused, a body too large, still starting) is
/// sent as a JSON-RPC error, with its status and headers.
pub async fn guard(state: &AppState, request: Request, next: Next) -> Response {
    if request.uri().path() == "/mcp" {
        as_json_rpc(checks(state, request, next).await)
    } else {
        checks(state, request, next).await
    }
}

/// A refusal made by [`ApiError`] as a JSON-RPC error: no id, invalid
/// request (-32600), quire's code as `data.code`. Any other response as it is.
fn as_json_rpc(response: Response) -> Response {
    let Some(refused) = response.extensions().get::<Refused>().cloned() else {
        return response;
    };
    let (mut parts, _) = response.into_parts();
    parts.headers.remove(header::CONTENT_LENGTH);
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": { "code": -32600, "message": refused.message, "data": { "code": refused.code } },
    });
    Response::from_parts(parts, axum::body::Body::from(body.to_string()))
}

async fn checks(state: &AppState, request: Request, next: Next) -> Response {
    let guard = &state.guard;
    let rules = guard.rules();
    let headers = request.headers();
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or_else(|| request.uri().authority().map(|a| a.to_string()));
    match &host {
        Some(h) if rules.host_allowed(h) => {}
        Some(h) => {
            return ApiError::new(
                StatusCode::FORBIDDEN,
                "forbidden_host",
                format!("Host `{h}` is not allowed (add it to server.allowed_hosts)"),
            )
            .into_response();
        }
        None => {
            return ApiError::new(StatusCode::FORBIDDEN, "forbidden_host", "no Host header")
                .into_response();
        }
    }
    // The workbench's own files hold no data, and a browser asks for its
    // module scripts with an `Origin`: refusing them would leave the page
    // blank, unable to say why its requests are refused.
    let static_file = super::web::is_web_path(request.uri().path())
        && matches!(*request.method(), Method::GET | Method::HEAD);
    if !static_file && let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or_default();
        if !(same_origin(origin, host.as_deref()) || rules.origin_allowed(origin)) {
            let mut refused = ApiError::new(
                StatusCode::FORBIDDEN,
                "forbidden_origin",
                format!("Origin `{origin}` is not allowed (add it to server.allowed_origins)"),
            )
            .into_response();
            // The access log says so at warn: the page's user may never
            // see this body.
            refused.extensions_mut().insert(RefusedOrigin {
                origin: origin.to_owned(),
                host: host.clone().unwrap_or_default(),
            });
            return refused;
        }
    }
    if token_in_query(request.uri().query()) {
        return ApiError::bad_request(
            "token_in_query",
            "a token is never accepted in the URL; send it as `Authorization: Bearer <token>`",
        )
        .into_response();
    }
    let path = request.uri().path();
    // The workbench's files hold no data; the page asks for the token.
    let open = (path == "/healthz"
        || super::web::is_web_path(path)
        || path.starts_with(crate::oauth::METADATA_PATH)
        || (path == "/metrics" && rules.metrics_public))
        && matches!(*request.method(), Method::GET | Method::HEAD);
    let open_now = open_while_starting(path);
    let mut request = request;
    if !open {
        let peer = request
            .extensions()
            .get::<ConnectInfo<SocketAddr>>()
            .map(|c| c.0.ip());
        let is_mcp = request.uri().path() == "/mcp";
        let path = if is_mcp { "/mcp" } else { "" };
        let caller = match authenticate(guard, &rules, peer, request.headers(), path).await {
            Ok(caller) => caller,
            Err(refused) => return refused,
        };
        let route = request
            .extensions()
            .get::<MatchedPath>()
            .map(MatchedPath::as_str);
        let (role, what) = needed(request.method(), route);
        if let Err(why) = caller.may(role, what) {
            let mut refused =
                ApiError::new(StatusCode::FORBIDDEN, "forbidden_role", why).into_response();
            refused.extensions_mut().insert(caller);
            return refused;
        }
        request.extensions_mut().insert(caller);
    }
    let caller = request.extensions().get::<Caller>().cloned();
    let headers = request.headers();
    let too_long = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .is_some_and(|len| len > guard.max_body_bytes);
    if too_long {
        return too_large(guard.max_body_bytes).into_response();
    }
    if !state.is_ready() && !open_now {
        return ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "starting",
            "quire is still starting; retry in a moment",
        )
        .into_response();
    }
    let mut response = next.run(request).await;
    // For the access log, which wraps this guard.
    if let Some(caller) = caller {
        if is_stream(&response) {
            response = revocable(response, &caller.grant);
        }
        response.extensions_mut().insert(caller);
    }
    response
}

/// Whether `response` is a stream a client holds open (server-sent
/// events: `/api/v1/events`, `/mcp`'s streams).
fn is_stream(response: &Response) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"))
}

/// `response` with a body that ends as soon as `grant` is revoked: an
/// event stream stops at the reload that took its caller's access away,
/// before anything published after it is sent.
fn revocable(response: Response, grant: &crate::access::Grant) -> Response {
    let (parts, body) = response.into_parts();
    let body = Revocable {
        inner: body,
        revoked: Box::pin(grant.revoked()),
    };
    Response::from_parts(parts, axum::body::Body::new(body))
}

/// A body that ends when its future (a revoked grant) resolves.
struct Revocable {
    inner: axum::body::Body,
    revoked: std::pin::Pin<Box<tokio_util::sync::WaitForCancellationFutureOwned>>,
}

impl http_body::Body for Revocable {
    type Data = bytes::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        // Revocation first: nothing more is sent once it has happened.
        if self.revoked.as_mut().poll(cx).is_ready() {
            return std::task::Poll::Ready(None);
        }
        std::pin::Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn size_hint(&self) -> http_body::SizeHint {
        http_body::SizeHint::default()
    }
}

/// Who the request is from, or the answer refusing it: 401 for a missing
/// or wrong token, 429 for a wrong token from an address that has failed
/// too often (or while every address together has), 403 for a name a
/// trusted proxy gave that the server does not know.
///
/// A right token is looked at first and answered at once, whatever its
/// address has done. A request without an `Authorization` header is not a
/// guess (a browser's first request, a health probe): it gets 401 but is
/// neither counted nor logged as a failed authentication. A wrong token
/// is counted against its address and held back more with each failure;
/// the access log writes its `authentication failed` line
/// ([`AuthFailed`]).
async fn authenticate(
    guard: &GuardConfig,
    rules: &Rules,
    peer: Option<IpAddr>,
    headers: &HeaderMap,
    path: &str,
) -> Result<Caller, Response> {
    let users = &rules.users;
    if let Some(name) = rules.proxied_user(peer, headers) {
        return users.by_name(&name).ok_or_else(|| {
            tracing::warn!(target: "quire::access", "the proxy named an unknown user `{name}`");
            ApiError::new(
                StatusCode::FORBIDDEN,
                "unknown_user",
                format!("the proxy named `{name}`, who is not in server.users"),
            )
            .into_response()
        });
    }
    if !rules.secured() {
        return Ok(users.local());
    }
    let token = bearer(headers);
    if let Some(caller) = token.and_then(|token| users.by_token(token)) {
        return Ok(caller);
    }
    // A JWT is verified; a refused one is a failed sign-in like a wrong
    // token, told by its reason.
    let mut reason = None;
    if let (Some(oauth), Some(token)) = (&rules.oauth, token)
        && OAuth::looks_like_jwt(token)
    {
        match oauth.verify(token).await {
            Ok(caller) => return Ok(caller),
            Err(Rejection::NoRole(why)) => {
                tracing::warn!(target: "quire::access", "an OAuth token refused: {why}");
                return Err(
                    ApiError::new(StatusCode::FORBIDDEN, "forbidden_role", why).into_response()
                );
            }
            Err(Rejection::Invalid(why)) => reason = Some(why),
        }
    }
    // With `[server.oauth]`, every 401 says where to sign in.
    let metadata = rules
        .oauth
        .as_ref()
        .map(|_| rules.metadata_url(peer, headers, path));
    if !headers.contains_key(header::AUTHORIZATION) {
        return Err(unauthorized(
            "no bearer token (send `Authorization: Bearer <token>`)",
            metadata.as_deref(),
            false,
        ));
    }
    let sent = match (&reason, token) {
        (Some(why), _) => format!("an OAuth token refused: {why}"),
        (None, Some(_)) => "a wrong token".to_owned(),
        (None, None) => "an Authorization header that is not `Bearer <token>`".to_owned(),
    };
    let refused = |message: &str| unauthorized(message, metadata.as_deref(), token.is_some());
    let message = match &reason {
        Some(why) => format!("the bearer token was refused: {why}"),
        None => "missing or wrong bearer token".to_owned(),
    };
    let Some(address) = rules.client(peer, headers) else {
        let mut response = refused(&message);
        response
            .extensions_mut()
            .insert(AuthFailed { detail: sent });
        return Err(response);
    };
    let failure = guard.throttle.failed(address, Instant::now());
    if let Some(too_many) = failure.refused {
        let why = if too_many.everywhere {
            "too many failed authentications from every address; try again later"
        } else {
            "too many failed authentications from this address; try again later"
        };
        let mut response =
            ApiError::new(StatusCode::TOO_MANY_REQUESTS, "too_many_failures", why).into_response();
        let seconds = too_many.retry_after.as_secs().max(1);
        if let Ok(value) = header::HeaderValue::from_str(&seconds.to_string()) {
            response.headers_mut().insert(header::RETRY_AFTER, value);
        }
        let whose = if too_many.everywhere {
            "every address's failures"
        } else {
            "its failures"
        };
        response.extensions_mut().insert(AuthFailed {
            detail: format!(
                "{sent} (failure {}; {whose} refused for {seconds} s)",
                failure.count
            ),
        });
        return Err(response);
    }
    if !failure.delay.is_zero() {
        tokio::time::sleep(failure.delay).await;
    }
    let mut response = refused(&message);
    let next = if failure.count == crate::access::BLOCK_AFTER {
        format!(
            "; its next failures are refused for {} s",
            crate::access::BLOCK_FOR.as_secs()
        )
    } else {
        String::new()
    };
    response.extensions_mut().insert(AuthFailed {
        detail: format!(
            "{sent} (failure {}, answered after {} ms{next})",
            failure.count,
            failure.delay.as_millis()
        ),
    });
    Err(response)
}

/// 401 with `WWW-Authenticate: Bearer`; with `[server.oauth]` it names
/// the protected resource `metadata` (RFC 9728 §5.1), and a token that was
/// sent and refused is `invalid_token` (RFC 6750 §3.1).
fn unauthorized(message: &str, metadata: Option<&str>, token_sent: bool) -> Response {
    let invalid = metadata.is_some() && token_sent;
    let code = if invalid {
        "invalid_token"
    } else {
        "unauthorized"
    };
    let mut response = ApiError::new(StatusCode::UNAUTHORIZED, code, message).into_response();
    let challenge = match metadata {
        Some(url) if invalid => {
            format!(r#"Bearer resource_metadata="{url}", error="invalid_token""#)
        }
        Some(url) => format!(r#"Bearer resource_metadata="{url}""#),
        None => "Bearer".to_owned(),
    };
    if let Ok(value) = header::HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

pub fn too_large(limit: u64) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "too_large",
        format!("the request body is larger than server.max_body_bytes ({limit} bytes)"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names_lose_their_port() {
        assert_eq!(host_name("LocalHost:4096"), "localhost");
        assert_eq!(host_name("[::1]:80"), "[::1]");
        assert_eq!(host_name("example.org"), "example.org");
    }

    #[test]
    fn allowed_hosts_and_origins() {
        let dirs = crate::config::dirs::Dirs {
            system: "/nonexistent/quire".into(),
            user_config: None,
            user_data: Some("/nonexistent/quire-data".into()),
        };
        let config = crate::config::load_with(&crate::config::LoadRequest::default(), dirs);
        let mut server = config.unwrap().config.server;
        server.allowed_hosts = vec!["quire.lan".into()];
        server.allowed_origins = vec!["https://app.example".into()];
        let g = Rules::of("::1", &server);
        for ok in ["localhost:1", "127.0.0.1", "[::1]:4096", "QUIRE.LAN:80"] {
            assert!(g.host_allowed(ok), "{ok}");
        }
        assert!(!g.host_allowed("evil.example:4096"));
        assert!(g.origin_allowed("https://app.example/"));
        assert!(!g.origin_allowed("https://evil.example"));
    }

    #[test]
    fn a_credential_in_the_query_is_seen_by_its_name() {
        for q in ["token=x", "a=1&access_token=x", "Bearer", "auth=&b=2"] {
            assert!(token_in_query(Some(q)), "{q}");
        }
        for q in ["maxSide=256", "tokens=1", "a=token"] {
            assert!(!token_in_query(Some(q)), "{q}");
        }
        assert!(!token_in_query(None));
    }

    #[test]
    fn the_own_origin_is_the_authority_the_request_was_sent_to() {
        assert!(same_origin("http://127.0.0.1:4096", Some("127.0.0.1:4096")));
        assert!(same_origin("http://LOCALHOST:4096", Some("localhost:4096")));
        assert!(same_origin("http://[::1]:80", Some("[::1]:80")));
        for (origin, host) in [
            ("http://127.0.0.1:8080", "127.0.0.1:4096"),
            ("http://localhost:4096", "127.0.0.1:4096"),
            ("null", "127.0.0.1:4096"),
            ("http://127.0.0.1:4096/path", "127.0.0.1:4096"),
            ("file://127.0.0.1:4096", "127.0.0.1:4096"),
            ("http://127.0.0.1:4096.evil.example", "127.0.0.1:4096"),
            ("https://127.0.0.1:4096", "127.0.0.1:4096"),
        ] {
            assert!(!same_origin(origin, Some(host)), "{origin} for {host}");
        }
        assert!(!same_origin("http://127.0.0.1:4096", None));
        // A default port is no port; any other is part of the origin.
        assert!(same_origin("http://example.org:80", Some("example.org")));
        assert!(same_origin("http://example.org", Some("example.org:80")));
        assert!(!same_origin("http://example.org:8080", Some("example.org")));
    }

    #[test]
    fn origins_are_compared_with_their_port_but_not_a_default_one() {
        assert_eq!(
            normal_origin("HTTPS://Quire.Example.org:443/"),
            "https://quire.example.org"
        );
        assert_eq!(normal_origin("http://a.example:80"), "http://a.example");
        assert_eq!(
            normal_origin("https://a.example:8443"),
            "https://a.example:8443"
        );
        assert_eq!(
            normal_origin("https://a.example:80"),
            "https://a.example:80"
        );
    }
}
