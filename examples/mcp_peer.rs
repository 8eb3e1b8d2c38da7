//! A bare rmcp server, the yardstick of `benches/mcp.rs`: what the MCP
//! library alone costs, so the bench can say what quire adds on top.
//!
//! Two cheap tools: `quire_list_sessions`, answering an empty list, so the
//! bench sends both servers the same request, and `quire_list_engines`,
//! answering `PEER_RESULT_BYTES` bytes of text (default 4,600: about the
//! size of quire's own answer, whose reply is ~4.9 kB), served as an rmcp example
//! would be: `#[tokio::main]`, rmcp's stdio transport, or its streamable
//! HTTP service under axum with stateful sessions (and `TCP_NODELAY`, as
//! quire sets it).
//!
//! `mcp_peer stdio` serves stdin/stdout; `mcp_peer http` binds 127.0.0.1
//! port 0 and prints `serving http://ADDR` on stderr.
//!
//! Build it with `cargo build --release --example mcp_peer`.

#![allow(clippy::print_stderr, clippy::unwrap_used)]

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};

#[derive(Clone)]
struct Peer {
    #[allow(dead_code, reason = "read by the tool_handler macro")]
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Peer {
    fn new() -> Self {
        Self {
            tool_router: Self::tool_router(),
        }
    }

    #[tool(description = "The open sessions (always none here).")]
    async fn quire_list_sessions(&self) -> String {
        r#"{"sessions":[]}"#.to_owned()
    }

    #[tool(description = "A result of about 5 kB, as quire's engine list is.")]
    async fn quire_list_engines(&self) -> String {
        let bytes = std::env::var("PEER_RESULT_BYTES")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(4_600);
        "e".repeat(bytes)
    }
}

#[tool_handler]
impl ServerHandler for Peer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

#[tokio::main]
async fn main() {
    match std::env::args().nth(1).as_deref() {
        Some("stdio") => {
            let running = Peer::new().serve(rmcp::transport::stdio()).await.unwrap();
            running.waiting().await.unwrap();
        }
        Some("http") => {
            let service = StreamableHttpService::new(
                || Ok(Peer::new()),
                Arc::new(LocalSessionManager::default()),
                StreamableHttpServerConfig::default(),
            );
            let router = axum::Router::new().nest_service("/mcp", service);
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            eprintln!("serving http://{}", listener.local_addr().unwrap());
            // As quire does: small replies must not wait for delayed ACKs.
            use axum::serve::ListenerExt;
            let listener = listener.tap_io(|tcp| {
                let _ = tcp.set_nodelay(true);
            });
            axum::serve(listener, router).await.unwrap();
        }
        _ => {
            eprintln!("usage: mcp_peer stdio|http");
            std::process::exit(2);
        }
    }
}
