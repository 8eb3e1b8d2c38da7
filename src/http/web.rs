//! The web workbench's static files (`web/` in the repository), embedded
//! in the binary: `GET /` is the page, `GET /assets/...` its scripts,
//! styles and icons. The page talks to the server only through the public
//! `/api/v1` routes and the event stream, like any other client.
//!
//! These files hold no project data, so they are served without the
//! bearer token (the page asks for it and sends it on every API call);
//! they still pass the guard's Host and Origin checks. Each answer carries
//! an `ETag` (the file's SHA-256, from the embedding) and `no-cache`, so
//! a browser revalidates and gets `304` until the binary changes, and a
//! strict Content-Security-Policy: scripts, styles and connections only
//! from this origin, images also from `blob:` URLs, no framing.

use axum::extract::Path;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use rust_embed::Embed;

use super::error::ApiError;

/// Debug builds read the files from disk (edits show on reload); release
/// builds embed them.
#[derive(Embed)]
#[folder = "web/"]
struct Files;

const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
     img-src 'self' blob: data:; connect-src 'self'; object-src 'none'; \
     base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// Whether `path` is one of the workbench's (served without the token).
pub fn is_web_path(path: &str) -> bool {
    path == "/" || path.starts_with("/assets/")
}

pub async fn index(headers: HeaderMap) -> Response {
    file("index.html", &headers)
}

/// A file under `assets/`. A path with a `..`, `.` or empty segment is
/// not one of them, whatever the embedding would make of it.
pub async fn asset(Path(path): Path<String>, headers: HeaderMap) -> Response {
    if path
        .split(['/', '\\'])
        .any(|s| matches!(s, "" | "." | ".."))
    {
        return not_found(&path);
    }
    file(&format!("assets/{path}"), &headers)
}

fn not_found(path: &str) -> Response {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "not_found",
        format!("no file /{path}"),
    )
    .into_response()
}

fn file(path: &str, request: &HeaderMap) -> Response {
    let Some(found) = Files::get(path) else {
        return not_found(path);
    };
    let etag = format!("\"{}\"", hex(&found.metadata.sha256_hash()));
    let mut response = if super::etag_matches(request, &etag) {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        found.data.into_owned().into_response()
    };
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(media_type(path)),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if let Ok(value) = HeaderValue::from_str(&etag) {
        headers.insert(header::ETAG, value);
    }
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    // `X-Content-Type-Options` is set on every answer by `http::app`.
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

fn media_type(path: &str) -> &'static str {
    match path.rsplit_once('.').map(|(_, ext)| ext) {
        Some("html") => "text/html; charset=utf-8",
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        // The vendored modules' LICENSE files.
        _ => "text/plain; charset=utf-8",
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_file_has_a_known_media_type() {
        let files: Vec<_> = Files::iter().collect();
        assert!(files.iter().any(|f| f == "index.html"), "{files:?}");
        for f in files.iter().filter(|f| !f.contains("LICENSE")) {
            assert!(!media_type(f).starts_with("text/plain"), "{f}");
        }
    }
}
