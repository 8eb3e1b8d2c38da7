//! The remote backend of `quire attach URL`: the headless server's HTTP API
//! for calls and its SSE stream for events.
//!
//! The bearer token lives in this struct only; it is sent in the
//! `Authorization` header and never shown, logged or handed to anything
//! else. When the stream drops the backend reports `Disconnected`, retries
//! with backoff, resumes with `Last-Event-ID` and reports `Connected`
//! again, so the TUI reloads its view.

use std::time::Duration;

use futures_util::StreamExt;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::backend::{Backend, BackendError, BackendEvent, CONCORDANCE, Exported, Reply};
use crate::config::secret::Secret;
use crate::wire::{Cancelled, Epoch, Started};
use quire_core::engines::EngineInfo;
use quire_core::events::{Event, JobSummary, SessionSummary};
use quire_core::export::ExportSpec;
use quire_core::glossary::{GlossaryImport, GlossaryReport};
use quire_core::import::{ImageFile, ImportResult};
use quire_core::jobs::{Approval, PipelineSpec};
use quire_core::journal::HistoryPage;
use quire_core::matches::Match;
use quire_core::session::SceneSnapshot;
use quire_core::suggestions::Action;
use quire_core::translations::{ImportReport, TranslationImport};
use quire_core::{ApplyResult, ProjectEntry, StepResult};
use quire_model::hash::BlobHash;
use quire_model::ids::{JobId, NodeId, SessionId};
use quire_model::lang::Languages;
use quire_model::op::Op;

const BACKOFF_START: Duration = Duration::from_millis(200);
const BACKOFF_MAX: Duration = Duration::from_secs(5);
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

pub struct Remote {
    base: String,
    token: Secret,
    http: reqwest::Client,
}

impl Remote {
    /// `url` is the server's base, e.g. `http://localhost:4096`.
    pub fn new(url: &str, token: Secret) -> Result<Self, BackendError> {
        if let Err(why) = token.get() {
            return Err(BackendError::new(
                "invalid_input",
                format!("cannot attach without the configured token: {why}"),
            ));
        }
        let base = url.trim_end_matches('/').to_owned();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(BackendError::new(
                "invalid_input",
                format!("`{url}` is not an http:// or https:// URL"),
            ));
        }
        quire_core::install_tls_provider();
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .build()
            .map_err(|e| BackendError::new("internal", e.to_string()))?;
        Ok(Remote { base, token, http })
    }

    fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let r = self
            .http
            .request(method, format!("{}{path}", self.base))
            .timeout(REQUEST_TIMEOUT);
        match self.token.get() {
            Ok(Some(token)) => r.bearer_auth(token),
            _ => r,
        }
    }

    async fn send(&self, r: reqwest::RequestBuilder) -> Result<reqwest::Response, BackendError> {
        let response = r.send().await.map_err(|e| {
            BackendError::disconnected(format!("cannot reach {}: {}", self.base, short(&e)))
        })?;
        if response.status().is_success() {
            return Ok(response);
        }
        let status = response.status();
        let body: Value = response.json().await.unwrap_or(Value::Null);
        let code = body["error"]["code"].as_str().unwrap_or("http_error");
        let message = body["error"]["message"]
            .as_str()
            .map_or_else(|| format!("HTTP {status}"), str::to_owned);
        let mut error = BackendError::new(code, message);
        let stale = &body["error"]["stale"];
        if stale.is_object() {
            error.theirs = Some(stale["current"].as_str().map(str::to_owned));
        }
        Err(error)
    }

    async fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, BackendError> {
        let r = self.send(self.request(reqwest::Method::GET, path)).await?;
        decode(r).await
    }

    async fn post<B: Serialize, T: DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<T, BackendError> {
        let r = self
            .send(self.request(reqwest::Method::POST, path).json(body))
            .await?;
        decode(r).await
    }

    fn session_path(id: SessionId, rest: &str) -> String {
        format!("/api/v1/sessions/{id}{rest}")
    }
}

/// The desk's answers: `{ "matches": [...] }`.
#[derive(serde::Deserialize)]
struct Found {
    matches: Vec<Match>,
}

fn short(e: &reqwest::Error) -> String {
    if e.is_connect() {
        "connection refused".into()
    } else if e.is_timeout() {
        "timed out".into()
    } else {
        "connection failed".into()
    }
}

async fn decode<T: DeserializeOwned>(r: reqwest::Response) -> Result<T, BackendError> {
    r.json().await.map_err(|e| {
        BackendError::new(
            "bad_response",
            format!("unexpected answer from the server: {e}"),
        )
    })
}

impl Backend for Remote {
    fn describe(&self) -> String {
        self.base.clone()
    }

    fn sessions(&self) -> Reply<'_, Vec<SessionSummary>> {
        Box::pin(self.get("/api/v1/sessions"))
    }

    fn projects(&self) -> Reply<'_, Vec<ProjectEntry>> {
        Box::pin(self.get("/api/v1/projects"))
    }

    fn engines(&self) -> Reply<'_, Vec<EngineInfo>> {
        Box::pin(self.get("/api/v1/engines"))
    }

    fn jobs(&self) -> Reply<'_, Vec<JobSummary>> {
        Box::pin(self.get("/api/v1/operations"))
    }

    fn create_project(&self, name: String, languages: Languages) -> Reply<'_, SessionSummary> {
        Box::pin(async move {
            let body = json!({
                "name": name,
                "sourceLanguage": languages.source_language,
                "targetLanguage": languages.target_language,
            });
            self.post("/api/v1/projects", &body).await
        })
    }

    fn open_project(&self, target: String) -> Reply<'_, SessionSummary> {
        Box::pin(async move {
            let projects: Vec<ProjectEntry> = self.get("/api/v1/projects").await?;
            let id = quire_core::ProjectEntry::find(&projects, &target).ok_or_else(|| {
                BackendError::new(
                    "not_found",
                    format!("the server has no project `{target}` (attached TUIs open projects by name or id)"),
                )
            })?;
            let r = self
                .send(
                    self.request(reqwest::Method::PUT, "/api/v1/projects/current")
                        .json(&json!({ "id": id })),
                )
                .await?;
            decode(r).await
        })
    }

    fn close_session(&self, id: SessionId) -> Reply<'_, ()> {
        Box::pin(async move {
            self.send(self.request(reqwest::Method::DELETE, &Self::session_path(id, "")))
                .await
                .map(|_| ())
        })
    }

    fn scene(&self, id: SessionId) -> Reply<'_, SceneSnapshot> {
        Box::pin(async move { self.get(&Self::session_path(id, "/scene.json")).await })
    }

    fn matches(&self, id: SessionId, node: NodeId) -> Reply<'_, Vec<Match>> {
        Box::pin(async move {
            let found: Found = self
                .get(&Self::session_path(id, &format!("/nodes/{node}/matches")))
                .await?;
            Ok(found.matches)
        })
    }

    fn history(&self, id: SessionId, query: String) -> Reply<'_, HistoryPage> {
        Box::pin(async move {
            let session: SessionSummary = self.get(&format!("/api/v1/sessions/{id}")).await?;
            let project = session.project_id;
            self.get(&format!("/api/v1/projects/{project}/history?{query}"))
                .await
        })
    }

    fn concordance(&self, id: SessionId, query: String) -> Reply<'_, Vec<Match>> {
        Box::pin(async move {
            // Every byte but letters and digits percent-encoded.
            let q: String = query
                .bytes()
                .map(|b| match b {
                    b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' => char::from(b).to_string(),
                    _ => format!("%{b:02X}"),
                })
                .collect();
            let path = format!("/concordance?q={q}&limit={CONCORDANCE}");
            let found: Found = self.get(&Self::session_path(id, &path)).await?;
            Ok(found.matches)
        })
    }

    fn suggest(&self, id: SessionId, node: NodeId, action: Action) -> Reply<'_, ()> {
        Box::pin(async move {
            let list = Self::session_path(id, &format!("/nodes/{node}/suggestions"));
            let (path, body) = match action {
                Action::Add { text } => (list, json!({ "text": text })),
                Action::Vote { id, value } => {
                    (format!("{list}/{id}/vote"), json!({ "value": value }))
                }
                Action::Accept { id } => (format!("{list}/{id}/accept"), json!({})),
                Action::Reject { id } => (format!("{list}/{id}/reject"), json!({})),
            };
            self.post::<_, Value>(&path, &body).await.map(|_| ())
        })
    }

    fn apply(&self, id: SessionId, op: Op) -> Reply<'_, ApplyResult> {
        Box::pin(async move {
            self.post(&Self::session_path(id, "/history/apply"), &op)
                .await
        })
    }

    fn undo(&self, id: SessionId) -> Reply<'_, Option<StepResult>> {
        Box::pin(async move {
            let e: Epoch = self
                .post(&Self::session_path(id, "/history/undo"), &json!({}))
                .await?;
            Ok(e.into_step())
        })
    }

    fn redo(&self, id: SessionId) -> Reply<'_, Option<StepResult>> {
        Box::pin(async move {
            let e: Epoch = self
                .post(&Self::session_path(id, "/history/redo"), &json!({}))
                .await?;
            Ok(e.into_step())
        })
    }

    fn start_pipeline(
        &self,
        id: SessionId,
        spec: PipelineSpec,
        _approval: Approval,
    ) -> Reply<'_, JobId> {
        // The server decides about engines needing approval (its
        // engines.allow_unattended): an HTTP client cannot vouch for a person.
        Box::pin(async move {
            let started: Started = self
                .post(&Self::session_path(id, "/pipelines"), &spec)
                .await?;
            Ok(started.job_id)
        })
    }

    fn cancel_job(&self, id: JobId) -> Reply<'_, bool> {
        Box::pin(async move {
            let r = self
                .send(self.request(reqwest::Method::DELETE, &format!("/api/v1/operations/{id}")))
                .await?;
            let c: Cancelled = decode(r).await?;
            Ok(c.cancelled)
        })
    }

    fn import_text(&self, id: SessionId, name: String, text: String) -> Reply<'_, ApplyResult> {
        Box::pin(async move {
            self.post(
                &Self::session_path(id, "/pages"),
                &json!({ "name": name, "text": text }),
            )
            .await
        })
    }

    fn import_files(&self, id: SessionId, files: Vec<ImageFile>) -> Reply<'_, ImportResult> {
        Box::pin(async move {
            let mut form = reqwest::multipart::Form::new();
            for file in files {
                form = form.part(
                    "file",
                    reqwest::multipart::Part::bytes(file.bytes).file_name(file.name),
                );
            }
            let r = self
                .send(
                    self.request(reqwest::Method::POST, &Self::session_path(id, "/pages"))
                        .multipart(form),
                )
                .await?;
            decode(r).await
        })
    }

    fn create_project_from(
        &self,
        name: Option<String>,
        languages: Languages,
        file: ImageFile,
    ) -> Reply<'_, SessionSummary> {
        Box::pin(async move {
            let mut form = reqwest::multipart::Form::new().part(
                "file",
                reqwest::multipart::Part::bytes(file.bytes).file_name(file.name),
            );
            for (field, value) in [
                ("name", name),
                ("sourceLanguage", languages.source_language),
                ("targetLanguage", languages.target_language),
            ] {
                if let Some(value) = value {
                    form = form.text(field, value);
                }
            }
            let r = self
                .send(
                    self.request(reqwest::Method::POST, "/api/v1/projects/import")
                        .multipart(form),
                )
                .await?;
            decode(r).await
        })
    }

    fn import_translations(
        &self,
        id: SessionId,
        import: TranslationImport,
    ) -> Reply<'_, ImportReport> {
        Box::pin(async move { self.post(&Self::session_path(id, "/import"), &import).await })
    }

    fn import_glossary(&self, id: SessionId, import: GlossaryImport) -> Reply<'_, GlossaryReport> {
        Box::pin(async move {
            self.post(&Self::session_path(id, "/glossary/import"), &import)
                .await
        })
    }

    fn import_archive(&self, bytes: Vec<u8>) -> Reply<'_, SessionSummary> {
        Box::pin(async move {
            let r = self
                .send(
                    self.request(reqwest::Method::POST, "/api/v1/projects/import")
                        .header(reqwest::header::CONTENT_TYPE, "application/zip")
                        .body(bytes),
                )
                .await?;
            decode(r).await
        })
    }

    fn picture(&self, id: SessionId, hash: BlobHash, max_side: u32) -> Reply<'_, Vec<u8>> {
        Box::pin(async move {
            let path =
                Self::session_path(id, &format!("/blobs/{}?maxSide={max_side}", hash.to_hex()));
            let r = self.send(self.request(reqwest::Method::GET, &path)).await?;
            r.bytes()
                .await
                .map(|b| b.to_vec())
                .map_err(|e| BackendError::disconnected(e.to_string()))
        })
    }

    fn export(&self, id: SessionId, spec: ExportSpec) -> Reply<'_, Exported> {
        Box::pin(async move {
            let r = self
                .send(
                    self.request(reqwest::Method::POST, &Self::session_path(id, "/export"))
                        .json(&spec),
                )
                .await?;
            let untranslated = r
                .headers()
                .get(crate::wire::UNTRANSLATED_HEADER)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let bytes = r
                .bytes()
                .await
                .map(|b| b.to_vec())
                .map_err(|e| BackendError::disconnected(e.to_string()))?;
            Ok(Exported {
                bytes,
                untranslated,
            })
        })
    }

    fn events(&self) -> mpsc::UnboundedReceiver<BackendEvent> {
        let (tx, rx) = mpsc::unbounded_channel();
        let url = format!("{}/api/v1/events", self.base);
        let http = self.http.clone();
        let token = self.token.clone();
        tokio::spawn(async move {
            let mut last: Option<u64> = None;
            let mut backoff = BACKOFF_START;
            let mut reported_down = false;
            loop {
                let mut request = http.get(&url);
                if let Ok(Some(token)) = token.get() {
                    request = request.bearer_auth(token);
                }
                if let Some(id) = last {
                    request = request.header("Last-Event-ID", id.to_string());
                }
                let why = match request.send().await {
                    Ok(r) if r.status().is_success() => {
                        backoff = BACKOFF_START;
                        reported_down = false;
                        if tx.send(BackendEvent::Connected).is_err() {
                            return;
                        }
                        match pump(r, &tx, &mut last).await {
                            Pump::Closed => return,
                            Pump::Ended(why) => why,
                        }
                    }
                    Ok(r) => format!("the server answered HTTP {}", r.status()),
                    Err(e) => short(&e),
                };
                if !reported_down {
                    reported_down = true;
                    if tx.send(BackendEvent::Disconnected(why)).is_err() {
                        return;
                    }
                }
                if tx.is_closed() {
                    return;
                }
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(BACKOFF_MAX);
            }
        });
        rx
    }
}

enum Pump {
    /// The TUI is gone.
    Closed,
    /// The stream ended; why.
    Ended(String),
}

/// Largest event the TUI holds while it arrives (the biggest the server
/// sends is a `snapshot`, well under this); a stream that sends more
/// without completing an event is dropped and reconnected.
const MAX_EVENT_BYTES: usize = 16 << 20;

/// Reads one SSE response until it ends, forwarding events.
async fn pump(
    response: reqwest::Response,
    tx: &mpsc::UnboundedSender<BackendEvent>,
    last: &mut Option<u64>,
) -> Pump {
    let stream = response.bytes_stream().map(|r| r.map_err(|e| short(&e)));
    pump_events(stream, MAX_EVENT_BYTES, tx, last).await
}

/// The SSE decoding of [`pump`] (`eventsource-stream`: UTF-8 across chunk
/// boundaries, multi-line `data:`, `id:`), over any stream of chunks.
async fn pump_events<S>(
    chunks: S,
    max_event: usize,
    tx: &mpsc::UnboundedSender<BackendEvent>,
    last: &mut Option<u64>,
) -> Pump
where
    S: futures_util::Stream<Item = Result<bytes::Bytes, String>> + Unpin,
{
    use eventsource_stream::Eventsource;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    // Bytes received since the last complete event: bounds the decoder's
    // buffer to about one event.
    let pending = Arc::new(AtomicUsize::new(0));
    let counted = {
        let pending = pending.clone();
        chunks.map(move |chunk| {
            let chunk = chunk?;
            if pending.fetch_add(chunk.len(), Ordering::Relaxed) + chunk.len() > max_event {
                return Err(format!("an event over {max_event} bytes"));
            }
            Ok(chunk)
        })
    };
    let mut events = counted.eventsource();
    loop {
        let sse = match events.next().await {
            Some(Ok(sse)) => sse,
            Some(Err(eventsource_stream::EventStreamError::Transport(e))) => return Pump::Ended(e),
            Some(Err(e)) => return Pump::Ended(format!("the event stream is malformed ({e})")),
            None => return Pump::Ended("the server closed the event stream".into()),
        };
        pending.store(0, Ordering::Relaxed);
        if sse.data.is_empty() {
            continue;
        }
        if let Ok(id) = sse.id.trim().parse::<u64>() {
            *last = Some(id);
        }
        match serde_json::from_str::<Event>(&sse.data) {
            Ok(event) => {
                if tx.send(BackendEvent::Event(event)).is_err() {
                    return Pump::Closed;
                }
            }
            Err(e) => tracing::debug!("ignoring an event this TUI does not know: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunks(
        parts: Vec<Vec<u8>>,
    ) -> impl futures_util::Stream<Item = Result<bytes::Bytes, String>> + Unpin {
        futures_util::stream::iter(parts.into_iter().map(|p| Ok(bytes::Bytes::from(p))))
    }

    #[tokio::test]
    async fn a_name_split_inside_a_character_arrives_whole() {
        let event = Event::SceneAdvanced {
            session_id: SessionId::new(),
            epoch: 3,
            name: "第一話 夜".into(),
            pages: None,
        };
        // The JSON over two `data:` lines, joined by the decoder with "\n".
        let json = serde_json::to_string(&event).unwrap();
        let (head, tail) = json.split_at(json.find(",").unwrap() + 1);
        let body = format!("id: 7\nevent: message\ndata: {head}\ndata: {tail}\n\n");
        let bytes = body.into_bytes();
        // Cut inside the three bytes of 一, then inside 夜.
        let first = bytes.iter().position(|b| *b == 0xe4).unwrap() + 1;
        let second = bytes.len() - 6;
        let parts = vec![
            bytes[..first].to_vec(),
            bytes[first..second].to_vec(),
            bytes[second..].to_vec(),
        ];
        let (tx, mut rx) = mpsc::unbounded_channel();
        let mut last = None;
        let end = pump_events(chunks(parts), MAX_EVENT_BYTES, &tx, &mut last).await;
        assert!(matches!(end, Pump::Ended(_)));
        assert_eq!(last, Some(7));
        match rx.try_recv().unwrap() {
            BackendEvent::Event(got) => assert_eq!(got, event),
            other => panic!("unexpected {other:?}"),
        }
        assert!(rx.try_recv().is_err());
    }

    #[tokio::test]
    async fn an_endless_event_is_refused_not_buffered() {
        let limit = 64 << 10;
        let mut parts = vec![b"data: ".to_vec()];
        parts.extend(std::iter::repeat_n(vec![b'x'; 4096], limit / 4096 + 1));
        parts.push(b"\n\n".to_vec());
        let (tx, mut rx) = mpsc::unbounded_channel();
        let mut last = None;
        match pump_events(chunks(parts), limit, &tx, &mut last).await {
            Pump::Ended(why) => assert!(why.contains("bytes"), "{why}"),
            Pump::Closed => panic!("the receiver is open"),
        }
        assert!(rx.try_recv().is_err());
    }
}
