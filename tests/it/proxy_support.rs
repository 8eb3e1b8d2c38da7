//! The reverse proxies of `docs/operations.md` (Debian's nginx, Caddy) in
//! front of a test server, and what an agent and the web workbench need
//! through them.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::harness::Sandbox;
use crate::http_support::free_port;

/// Debian's nginx in front of a test server, configured with `docs/operations.md`'s
/// example (`Running quire for a team`): its `server` block as written,
/// but for the TLS lines (a loopback test has no certificate) and the two
/// addresses.
pub struct Nginx {
    child: Child,
    pub url: String,
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The nginx binary: on PATH, else where Debian puts it.
pub fn nginx_program() -> String {
    if Command::new("nginx").arg("-v").output().is_ok() {
        "nginx".into()
    } else {
        "/usr/sbin/nginx".into()
    }
}

impl Nginx {
    pub fn start(sandbox: &Sandbox, upstream: &str) -> Nginx {
        Nginx::start_editing(sandbox, upstream, str::to_owned)
    }

    /// [`Nginx::start`] with each line of that block edited by
    /// `edit` first (a mistake an operator makes).
    pub fn start_editing(
        sandbox: &Sandbox,
        upstream: &str,
        edit: impl Fn(&str) -> String,
    ) -> Nginx {
        let readme =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/operations.md"))
                .unwrap();
        let after = readme
            .split("<!-- nginx example")
            .nth(1)
            .expect("the nginx example of docs/operations.md");
        let block = after
            .split("```nginx\n")
            .nth(1)
            .and_then(|b| b.split("```").next())
            .expect("the nginx block");
        let port = free_port();
        let server: String = block
            .lines()
            .map(|l| l.strip_prefix("   ").unwrap_or(l))
            .filter(|l| !l.trim_start().starts_with("ssl_certificate"))
            .map(|l| {
                edit(l)
                    .replace(
                        "listen 443 ssl http2;",
                        &format!("listen 127.0.0.1:{port};"),
                    )
                    .replace("http://127.0.0.1:4096", upstream)
            })
            .collect::<Vec<_>>()
            .join("\n");
        assert!(
            server.contains(&format!("listen 127.0.0.1:{port};")),
            "{server}"
        );
        let dir = sandbox.path("nginx");
        std::fs::create_dir_all(&dir).unwrap();
        let d = dir.display();
        // As root, nginx's workers would run as `nobody`, who cannot write
        // into the sandbox; they stay root here.
        let user = if rustix::process::geteuid().is_root() {
            "user root;"
        } else {
            ""
        };
        let conf = format!(
            "daemon off;\n{user}\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
             events {{}}\nhttp {{\n  access_log {d}/access.log;\n\
             client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n\
             fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n\
             {server}\n}}\n"
        );
        std::fs::write(dir.join("nginx.conf"), conf).unwrap();
        let mut child = Command::new(nginx_program())
            .args(["-p", &dir.display().to_string(), "-c"])
            .arg(dir.join("nginx.conf"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nginx starts");
        let end = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port.parse::<u16>().unwrap())).is_err() {
            if let Some(status) = child.try_wait().unwrap() {
                let log = std::fs::read_to_string(dir.join("error.log")).unwrap_or_default();
                panic!("nginx exited ({status}):\n{log}");
            }
            assert!(Instant::now() < end, "nginx did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
        Nginx {
            child,
            url: format!("http://127.0.0.1:{port}"),
        }
    }
}

/// What a reverse proxy configured as `docs/operations.md` says must pass to quire
/// (`proxy`: its URL): a write carrying the browser's Origin (the Host it
/// passes keeps its port), an upload as large as `server.max_body_bytes`
/// answered by quire (not the proxy's 413), the event stream's first event
/// at once (unbuffered), and MCP's initialize.
pub fn check_through_proxy(proxy: &str, token: &str) {
    let http = crate::harness::blocking_client();
    let bearer = format!("Bearer {token}");
    // A write with the browser's Origin: the Host the proxy passes keeps
    // its port, so quire sees its own origin.
    let created = http
        .post(format!("{}/api/v1/projects", proxy))
        .header("Authorization", &bearer)
        .header("Origin", proxy)
        .json(&serde_json::json!({"name": "Proxied"}))
        .send()
        .unwrap();
    assert_eq!(created.status(), 200, "{}", created.text().unwrap());
    // As large a body as quire takes: quire answers it (a JSON refusal of
    // what is not an archive), not nginx.
    let big = vec![b'x'; 32 * 1024 * 1024 - 4096];
    let upload = http
        .post(format!("{}/api/v1/projects/import", proxy))
        .header("Authorization", &bearer)
        .header("Content-Type", "application/zip")
        .body(big)
        .send()
        .unwrap();
    let status = upload.status();
    let body: serde_json::Value = upload
        .json()
        .expect("quire's JSON, not the proxy's refusal");
    assert_eq!(status, 422, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not a quire archive"),
        "{body}"
    );
    // The event stream's first event arrives through nginx at once.
    let mut events = http
        .get(format!("{}/api/v1/events", proxy))
        .header("Authorization", &bearer)
        .send()
        .unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).contains("event: Snapshot") {
        use std::io::Read;
        let n = events.read(&mut buf).unwrap();
        assert!(n > 0, "the stream ended");
        seen.extend_from_slice(&buf[..n]);
    }
    drop(events);
    // MCP's initialize.
    let mcp = http
        .post(format!("{}/mcp", proxy))
        .header("Authorization", &bearer)
        .header("Accept", "application/json, text/event-stream")
        .json(
            &serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "through-nginx", "version": "1"}}}),
        )
        .send()
        .unwrap();
    assert_eq!(mcp.status(), 200);
    assert!(mcp.text().unwrap().contains("serverInfo"));
}

/// Caddy in front of a test server with the example of `docs/operations.md`: its site
/// block as written, but served over plain HTTP on a loopback port (no
/// certificate to get) with the admin endpoint off.
pub struct Caddy {
    child: Child,
    pub url: String,
}

impl Drop for Caddy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Caddy {
    pub fn start(sandbox: &Sandbox, upstream: &str) -> Caddy {
        let readme =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/operations.md"))
                .unwrap();
        let block = readme
            .split("```caddy\n")
            .nth(1)
            .and_then(|b| b.split("```").next())
            .expect("the Caddy example of docs/operations.md");
        let port = free_port();
        let upstream = upstream.trim_start_matches("http://");
        let site: String = block
            .lines()
            .map(|l| l.strip_prefix("   ").unwrap_or(l))
            .map(|l| {
                l.replace(
                    "quire.example.org {",
                    &format!("http://127.0.0.1:{port} {{"),
                )
                .replace("127.0.0.1:4096", upstream)
            })
            .collect::<Vec<_>>()
            .join("\n");
        assert!(
            site.contains(&format!("http://127.0.0.1:{port} {{")),
            "{site}"
        );
        Caddy::run(sandbox, &site, &port)
    }

    /// The fleet example of `docs/operations.md` (the Caddyfile routing
    /// `team-a.` and `team-b.quire.example.org` to two servers) on a free
    /// port, the two hosts sent to `a` and `b`.
    pub fn start_fleet(sandbox: &Sandbox, a: &str, b: &str) -> Caddy {
        let readme =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/operations.md"))
                .unwrap();
        let block = readme
            .split("```caddy\n")
            .find(|b| b.contains("team-a.quire.example.org {"))
            .and_then(|b| b.split("```").next())
            .expect("the fleet example of docs/operations.md");
        let port = free_port();
        let site = block
            .replace(
                "team-a.quire.example.org {",
                &format!("http://team-a.quire.example.org:{port} {{"),
            )
            .replace(
                "team-b.quire.example.org {",
                &format!("http://team-b.quire.example.org:{port} {{"),
            )
            .replace("10.0.0.11:4096", a.trim_start_matches("http://"))
            .replace("10.0.0.12:4096", b.trim_start_matches("http://"));
        Caddy::run(sandbox, &site, &port)
    }

    /// Caddy serving `site` (its sites on `port`), listening.
    fn run(sandbox: &Sandbox, site: &str, port: &str) -> Caddy {
        let dir = sandbox.path("caddy");
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("Caddyfile");
        std::fs::write(
            &file,
            format!("{{\n\tadmin off\n\tauto_https off\n}}\n\n{site}\n"),
        )
        .unwrap();
        let mut child = Command::new("caddy")
            .args(["run", "--adapter", "caddyfile", "--config"])
            .arg(&file)
            .env("HOME", &dir)
            .env("XDG_CONFIG_HOME", dir.join("config"))
            .env("XDG_DATA_HOME", dir.join("data"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("caddy starts");
        let end = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port.parse::<u16>().unwrap())).is_err() {
            if let Some(status) = child.try_wait().unwrap() {
                panic!("caddy exited ({status})");
            }
            assert!(Instant::now() < end, "caddy did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
        Caddy {
            child,
            url: format!("http://127.0.0.1:{port}"),
        }
    }
}
