//! Checks every request passes before it reaches a route (`/mcp`
//! included): the `Host` header names this server (DNS-rebinding
//! protection), an `Origin` header is this server's own origin or an
//! allowed one (`server.allowed_origins`), no token travels in the query
//! string, the bearer token matches (compared in constant time; the web
//! workbench's static files and `/healthz` need none), the body is not too
//! large, and the core has finished starting.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::AppState;
use super::error::ApiError;
use crate::config::secret::Secret;

/// Host names always accepted (with any port).
const LOCAL_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// What the guard enforces.
#[derive(Debug, Clone)]
pub struct GuardConfig {
    /// Lowercase host names (no port).
    pub allowed_hosts: Vec<String>,
    pub allowed_origins: Vec<String>,
    /// Empty when no token is set. One that did not resolve cannot reach
    /// here through `http::bind`; should it, no request matches (fail
    /// closed).
    pub token: Secret,
    pub max_body_bytes: u64,
}

impl GuardConfig {
    pub fn new(
        bound_host: &str,
        extra_hosts: &[String],
        origins: &[String],
        token: Secret,
        max_body_bytes: u64,
    ) -> Self {
        let mut allowed_hosts: Vec<String> = LOCAL_HOSTS.iter().map(|h| (*h).to_owned()).collect();
        allowed_hosts.push(bracket_ipv6(bound_host));
        allowed_hosts.extend(extra_hosts.iter().map(|h| host_name(h)));
        allowed_hosts.sort();
        allowed_hosts.dedup();
        GuardConfig {
            allowed_hosts,
            allowed_origins: origins
                .iter()
                .map(|o| o.trim_end_matches('/').to_ascii_lowercase())
                .collect(),
            token,
            max_body_bytes,
        }
    }

    pub fn host_allowed(&self, host: &str) -> bool {
        let name = host_name(host);
        self.allowed_hosts.contains(&name)
    }

    pub fn origin_allowed(&self, origin: &str) -> bool {
        let origin = origin.trim_end_matches('/').to_ascii_lowercase();
        self.allowed_origins.contains(&origin)
    }

    pub fn token_ok(&self, headers: &HeaderMap) -> bool {
        match self.token.get() {
            Ok(None) => return true,
            Ok(Some(_)) => {}
            Err(_) => return false,
        }
        // The scheme name is case-insensitive (RFC 7235 §2.1).
        let Some(given) = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim_start().split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim())
        else {
            return false;
        };
        self.token.matches(given)
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

/// Whether a browser's `Origin` is this server's own: `http` (the scheme
/// quire serves) and exactly the authority the request was sent to, which
/// the Host check has already found to be an allowed host; its port is the
/// port the client connected to. A page served elsewhere, even on this
/// machine, differs in scheme, host or port; `null` matches nothing. Behind
/// a TLS proxy the browser's origin is `https://…`, which is not this
/// server's: the operator names it in `server.allowed_origins`.
fn same_origin(origin: &str, host: Option<&str>) -> bool {
    let Some(host) = host else { return false };
    let origin = origin.trim().to_ascii_lowercase();
    origin
        .strip_prefix("http://")
        .is_some_and(|authority| authority == host.trim().to_ascii_lowercase())
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

pub async fn guard(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let guard = &state.guard;
    let headers = request.headers();
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or_else(|| request.uri().authority().map(|a| a.to_string()));
    match &host {
        Some(h) if guard.host_allowed(h) => {}
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
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or_default();
        if !(same_origin(origin, host.as_deref()) || guard.origin_allowed(origin)) {
            return ApiError::new(
                StatusCode::FORBIDDEN,
                "forbidden_origin",
                format!("Origin `{origin}` is not allowed (add it to server.allowed_origins)"),
            )
            .into_response();
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
    let open = (path == "/healthz" || super::web::is_web_path(path))
        && matches!(*request.method(), Method::GET | Method::HEAD);
    if !open && !guard.token_ok(headers) {
        let mut response = ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "missing or wrong bearer token",
        )
        .into_response();
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            header::HeaderValue::from_static("Bearer"),
        );
        return response;
    }
    let too_long = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .is_some_and(|len| len > guard.max_body_bytes);
    if too_long {
        return too_large(guard.max_body_bytes).into_response();
    }
    if !state.is_ready() && !open_while_starting(path) {
        return ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "starting",
            "quire is still starting; retry in a moment",
        )
        .into_response();
    }
    next.run(request).await
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
        let g = GuardConfig::new(
            "::1",
            &["quire.lan".into()],
            &["https://app.example".into()],
            Secret::default(),
            10,
        );
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
    }
}
