//! The transport of `quire mcp stdio`: newline-delimited JSON-RPC on stdin
//! and stdout that answers every frame.
//!
//! rmcp's own stdio transport drops a frame it cannot use (over 16 MiB, not
//! JSON, not UTF-8) without a word, and the client waits forever for its
//! answer. Here every frame that carries an `id` gets a JSON-RPC error with
//! that id, found by [`IdScanner`] even in a frame that does not parse; a
//! frame without a readable id gets `-32700` with `id: null`. Both eras
//! of MCP are served: `initialize` first (handshake), or `server/discover`
//! and requests with per-request metadata (2026-07-28); a second
//! `initialize` is refused, and in the stateless era the methods it removed
//! are "method not found". Notifications nobody understands are ignored,
//! as JSON-RPC says (they expect no answer); `tools/list` may be answered here (see [`StdioTransport::answering_tools_list`]).

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{ClientNotification, ClientRequest, GetMeta, JsonRpcMessage, ProtocolVersion};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

/// The largest frame read; a longer one is answered, not buffered.
pub const MAX_FRAME_BYTES: usize = 16 << 20;

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;

/// The stdio transport over any reader and writer (stdin and stdout in
/// production, pipes in tests).
pub struct StdioTransport<R, W> {
    read: BufReader<R>,
    /// The frame being read; kept across cancelled reads.
    line: Vec<u8>,
    /// Set while the rest of an oversized frame is skipped.
    oversized: Option<Oversized>,
    write: Arc<Mutex<W>>,
    era: Started,
    /// Answers of our own still being written; awaited before the
    /// transport reports the end of input, so none is lost at exit.
    answering: Vec<tokio::task::JoinHandle<()>>,
    /// The `tools` array this transport answers `tools/list` with itself
    /// (see [`StdioTransport::answering_tools_list`]).
    tools_list: Option<&'static str>,
    /// Whether the client has sent `notifications/initialized`.
    initialized: bool,
}

/// What is kept of a frame too large to hold.
struct Oversized {
    len: usize,
    id: IdScanner,
}

enum Frame {
    Line,
    Oversized(Oversized),
    Eof,
}

impl<R, W> StdioTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    pub fn new(read: R, write: W) -> Self {
        StdioTransport {
            read: BufReader::new(read),
            line: Vec::new(),
            oversized: None,
            write: Arc::new(Mutex::new(write)),
            era: Started::No,
            answering: Vec::new(),
            tools_list: None,
            initialized: false,
        }
    }

    /// Answers `tools/list` here with `tools` (a JSON array, sent as it
    /// is) once the handshake is done, instead of passing it to rmcp: the
    /// server's tool list is fixed at build time, and parsing it into
    /// rmcp's types to write it out again was a third of the instructions
    /// of a start. In the 2026-07-28 era the answer carries the cache
    /// fields the handler adds (`ttlMs`, `cacheScope`), written here too.
    pub fn answering_tools_list(mut self, tools: &'static str) -> Self {
        self.tools_list = Some(tools);
        self
    }

    /// Reads one frame into `self.line`, never holding more than
    /// [`MAX_FRAME_BYTES`]. Cancel-safe: a partial frame stays in `self`.
    async fn read_frame(&mut self) -> std::io::Result<Frame> {
        loop {
            let available = self.read.fill_buf().await?;
            if available.is_empty() {
                return Ok(Frame::Eof);
            }
            let newline = available.iter().position(|b| *b == b'\n');
            let take = newline.map_or(available.len(), |i| i + 1);
            let chunk = &available[..take];
            if let Some(big) = &mut self.oversized {
                big.len += chunk.len();
                big.id.feed(chunk);
            } else if self.line.len() + chunk.len() > MAX_FRAME_BYTES {
                let mut id = IdScanner::default();
                id.feed(&self.line);
                id.feed(chunk);
                self.oversized = Some(Oversized {
                    len: self.line.len() + chunk.len(),
                    id,
                });
                self.line.clear();
            } else {
                self.line.extend_from_slice(chunk);
            }
            self.read.consume(take);
            if newline.is_some() {
                return Ok(match self.oversized.take() {
                    Some(big) => Frame::Oversized(big),
                    None => Frame::Line,
                });
            }
        }
    }

    /// Sends an error answer (see [`StdioTransport::answer`]).
    fn answer_error(&mut self, id: Option<Value>, code: i64, message: String) {
        self.answer(json!({
            "jsonrpc": "2.0",
            "id": id.unwrap_or(Value::Null),
            "error": { "code": code, "message": message },
        }));
    }

    /// Sends a frame of our own without holding up the read loop; it is
    /// written whole even if the caller's future is dropped.
    fn answer(&mut self, frame: Value) {
        self.answer_text(frame.to_string());
    }

    /// [`StdioTransport::answer`] of a frame already written out.
    fn answer_text(&mut self, frame: String) {
        self.answering.retain(|task| !task.is_finished());
        let write = self.write.clone();
        let task = tokio::spawn(async move {
            let mut bytes = frame.into_bytes();
            bytes.push(b'\n');
            let mut w = write.lock().await;
            let _ = w.write_all(&bytes).await;
            let _ = w.flush().await;
        });
        self.answering.push(task);
    }

    /// What to do with a complete frame: a message for rmcp, or `None`
    /// once it has been answered (or is a notification to ignore).
    fn decode(&mut self, frame: &[u8]) -> Option<RxJsonRpcMessage<RoleServer>> {
        let frame = frame.strip_suffix(b"\n").unwrap_or(frame);
        let frame = frame.strip_suffix(b"\r").unwrap_or(frame);
        let frame = frame.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(frame);
        if frame.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        let id = || {
            let mut scanner = IdScanner::default();
            scanner.feed(frame);
            scanner.id()
        };
        if std::str::from_utf8(frame).is_err() {
            self.answer_error(
                id(),
                PARSE_ERROR,
                "Parse error: the message is not UTF-8".into(),
            );
            return None;
        }
        match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(frame) {
            Ok(message) => self.admit(message),
            Err(e) if e.is_syntax() || e.is_eof() => {
                self.answer_error(id(), PARSE_ERROR, format!("Parse error: {e}"));
                None
            }
            Err(e) => {
                let value: Value = serde_json::from_slice(frame).unwrap_or(Value::Null);
                let is_notification =
                    value.get("id").is_none() && value.get("method").is_some_and(Value::is_string);
                if is_notification {
                    tracing::debug!("ignoring a notification that does not decode: {e}");
                } else {
                    let id = value.get("id").cloned().filter(is_request_id);
                    self.answer_error(id, INVALID_REQUEST, format!("Invalid Request: {e}"));
                }
                None
            }
        }
    }

    /// Passes a decoded message on, except what rmcp would end the
    /// connection on, which is answered instead: before the client has
    /// chosen an era, a ping gets `{}`, and a request that is neither
    /// `initialize`, `server/discover` nor one carrying the 2026-07-28
    /// per-request metadata is refused; after it, an `initialize` that
    /// does not fit (a second one, or one in the stateless era).
    fn admit(
        &mut self,
        message: RxJsonRpcMessage<RoleServer>,
    ) -> Option<RxJsonRpcMessage<RoleServer>> {
        let JsonRpcMessage::Request(request) = &message else {
            if let JsonRpcMessage::Notification(n) = &message
                && matches!(
                    n.notification,
                    ClientNotification::InitializedNotification(_)
                )
            {
                self.initialized = true;
            }
            // Notifications before an era is chosen mean nothing yet.
            return (self.era != Started::No).then_some(message);
        };
        let id = || serde_json::to_value(&request.id).ok();
        let refuse = |this: &mut Self, why: &str| {
            this.answer_error(id(), INVALID_REQUEST, format!("Invalid Request: {why}"));
            None
        };
        let initialize = matches!(request.request, ClientRequest::InitializeRequest(_));
        let stateless = self.era == Started::Stateless
            || (self.era == Started::No
                && request
                    .request
                    .get_meta()
                    .protocol_version()
                    .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str()));
        if stateless
            && let Some(message) = super::removed_in_stateless_era(request.request.method())
        {
            self.answer_error(id(), METHOD_NOT_FOUND, message);
            return None;
        }
        match self.era {
            Started::No if initialize => self.era = Started::Handshake,
            Started::No => match &request.request {
                ClientRequest::PingRequest(_) => {
                    self.answer(json!({ "jsonrpc": "2.0", "id": id(), "result": {} }));
                    return None;
                }
                ClientRequest::DiscoverRequest(_) => {}
                other if other.get_meta().protocol_version().is_some() => {
                    self.era = Started::Stateless;
                }
                _ => {
                    return refuse(
                        self,
                        "send initialize first, or (MCP 2026-07-28) server/discover and \
                         requests that carry their _meta protocol version",
                    );
                }
            },
            Started::Handshake if initialize => {
                return refuse(self, "this connection is already initialized");
            }
            Started::Handshake | Started::Stateless => {}
        }
        if let (Some(tools), ClientRequest::ListToolsRequest(list)) =
            (self.tools_list, &request.request)
        {
            let id = serde_json::to_string(&request.id).unwrap_or_else(|_| "null".into());
            let first_page = list.params.as_ref().is_none_or(|p| p.cursor.is_none());
            if self.era == Started::Handshake && self.initialized {
                self.answer_text(format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":{tools}}}}}"#
                ));
                return None;
            }
            // The stateless era's answer carries the cache fields the
            // handler adds; only for a request whose metadata rmcp would
            // take (else rmcp answers it, with the error it words).
            let meta = request.request.get_meta();
            let v2026 = ProtocolVersion::V_2026_07_28;
            if self.era == Started::Stateless
                && first_page
                && meta.protocol_version().as_ref() == Some(&v2026)
                && meta.missing_required_keys(&v2026).is_empty()
            {
                let ttl = super::TOOLS_TTL.as_millis();
                self.answer_text(format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"result":{{"resultType":"complete","ttlMs":{ttl},"cacheScope":"public","tools":{tools}}}}}"#
                ));
                return None;
            }
        }
        Some(message)
    }
}

/// Which era the client chose on this connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Started {
    /// Nothing yet but pings and `server/discover`.
    No,
    /// `initialize` came first.
    Handshake,
    /// A request with 2026-07-28 metadata came first.
    Stateless,
}

fn is_request_id(v: &Value) -> bool {
    v.is_string() || v.is_i64() || v.is_u64()
}

impl<R, W> Transport<RoleServer> for StdioTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = self.write.clone();
        async move {
            let mut bytes = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            bytes.push(b'\n');
            let mut w = write.lock().await;
            w.write_all(&bytes).await?;
            w.flush().await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            match self.read_frame().await {
                Ok(Frame::Eof) => {
                    for task in self.answering.drain(..) {
                        let _ = task.await;
                    }
                    return None;
                }
                Ok(Frame::Oversized(big)) => {
                    let id = big.id.id();
                    let code = if id.is_some() {
                        INVALID_REQUEST
                    } else {
                        PARSE_ERROR
                    };
                    self.answer_error(
                        id,
                        code,
                        format!(
                            "the message is {} bytes; at most {MAX_FRAME_BYTES} (16 MiB) are read",
                            big.len
                        ),
                    );
                }
                Ok(Frame::Line) => {
                    let line = std::mem::take(&mut self.line);
                    let decoded = self.decode(&line);
                    // Keep the allocation for the next frame.
                    self.line = line;
                    self.line.clear();
                    if let Some(message) = decoded {
                        return Some(message);
                    }
                }
                Err(e) => {
                    tracing::error!("cannot read stdin: {e}");
                    return None;
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.write.lock().await.flush().await
    }
}

/// Finds the top-level `"id"` of a JSON object fed to it in pieces,
/// without parsing (or holding) the whole: enough to answer a frame that
/// is too large, not UTF-8 or not valid JSON.
#[derive(Debug, Default)]
pub struct IdScanner {
    state: Scan,
    depth: u32,
    in_string: bool,
    escaped: bool,
    /// At depth 1, the next string is a key.
    want_key: bool,
    found: Option<Value>,
}

#[derive(Debug, Default)]
enum Scan {
    #[default]
    Structure,
    /// Inside a top-level key; only its first bytes matter.
    Key(Vec<u8>),
    /// After the key `"id"`, before its `:`.
    AfterId,
    /// After `"id":`, before the value.
    BeforeValue,
    /// Inside the id's string value (raw JSON bytes).
    StringValue(Vec<u8>),
    /// Inside a bare value (a number, `null`).
    BareValue(Vec<u8>),
    Done,
}

/// Longest id value kept; a longer one is not an id anyone uses.
const MAX_ID_BYTES: usize = 256;

impl IdScanner {
    pub fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if matches!(self.state, Scan::Done) {
                return;
            }
            self.step(b);
        }
    }

    /// The id, if one was found.
    pub fn id(&self) -> Option<Value> {
        self.found.clone()
    }

    fn step(&mut self, b: u8) {
        match &mut self.state {
            Scan::Done => {}
            Scan::Key(key) => {
                if self.escaped {
                    self.escaped = false;
                    key.push(b);
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.state = if key == b"id" {
                        Scan::AfterId
                    } else {
                        Scan::Structure
                    };
                } else if key.len() < 8 {
                    key.push(b);
                }
            }
            Scan::AfterId => {
                if b == b':' {
                    self.state = Scan::BeforeValue;
                } else if !b.is_ascii_whitespace() {
                    self.state = Scan::Structure;
                }
            }
            Scan::BeforeValue => {
                if b == b'"' {
                    self.state = Scan::StringValue(Vec::new());
                } else if !b.is_ascii_whitespace() {
                    self.state = Scan::BareValue(vec![b]);
                }
            }
            Scan::StringValue(raw) => {
                if self.escaped {
                    self.escaped = false;
                    raw.push(b);
                } else if b == b'\\' {
                    self.escaped = true;
                    raw.push(b);
                } else if b == b'"' {
                    let mut quoted = Vec::with_capacity(raw.len() + 2);
                    quoted.push(b'"');
                    quoted.extend_from_slice(raw);
                    quoted.push(b'"');
                    self.found = serde_json::from_slice(&quoted).ok();
                    self.state = Scan::Done;
                } else if raw.len() < MAX_ID_BYTES {
                    raw.push(b);
                } else {
                    self.state = Scan::Done;
                }
            }
            Scan::BareValue(raw) => {
                if b == b',' || b == b'}' || b.is_ascii_whitespace() {
                    self.found = serde_json::from_slice::<Value>(raw)
                        .ok()
                        .filter(is_request_id);
                    self.state = Scan::Done;
                } else if raw.len() < MAX_ID_BYTES {
                    raw.push(b);
                } else {
                    self.state = Scan::Done;
                }
            }
            Scan::Structure => self.structure(b),
        }
    }

    fn structure(&mut self, b: u8) {
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
            }
            return;
        }
        match b {
            b'"' if self.depth == 1 && self.want_key => {
                self.want_key = false;
                self.state = Scan::Key(Vec::new());
            }
            b'"' => self.in_string = true,
            b'{' => {
                self.depth += 1;
                if self.depth == 1 {
                    self.want_key = true;
                }
            }
            b'[' => self.depth += 1,
            b'}' | b']' => self.depth = self.depth.saturating_sub(1),
            b',' if self.depth == 1 => self.want_key = true,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(parts: &[&[u8]]) -> Option<Value> {
        let mut s = IdScanner::default();
        for p in parts {
            s.feed(p);
        }
        s.id()
    }

    #[test]
    fn finds_the_top_level_id_anywhere() {
        assert_eq!(
            scan(&[br#"{"jsonrpc":"2.0","id":7,"method":"x"}"#]),
            Some(json!(7))
        );
        assert_eq!(
            scan(&[br#"{"params":{"id":"inner","a":[{"id":1}]},"id":"ab\"c"}"#]),
            Some(json!("ab\"c"))
        );
        // Split anywhere, broken after the id, not UTF-8 elsewhere.
        assert_eq!(
            scan(&[br#"{"i"#, br#"d" :  4"#, b"2, \xff\xfe oops"]),
            Some(json!(42))
        );
        assert_eq!(scan(&[br#"{"method":"x","params":{"#]), None);
        assert_eq!(scan(&[br#"{"id":{"nested":1}}"#]), None);
        assert_eq!(scan(&[br#"{"key\"id":1,"id":null}"#]), None);
    }
}
