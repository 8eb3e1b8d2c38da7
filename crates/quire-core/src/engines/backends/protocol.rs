//! The Open Inference Protocol v2 over HTTP, as quire speaks it to a
//! backend: `GET /v2/health/ready`, `GET /v2/models/{model}` (with
//! `/versions/{version}`) for the model's metadata, and `POST …/infer`
//! with FP32 tensors as JSON `data`, flat and row-major: the protocol's
//! base form, which every such server accepts.
//!
//! Every request holds a permit of the backend's gate while it runs. A
//! busy server or gateway (429, 502-504), a refused or reset connection
//! and a timeout are tried again, up to `max_retries` times, waiting as
//! `retry::wait` says; every other failure is final at once. Failures
//! name the backend and its URL (`backend "ppocr-rec"
//! (http://inference:8080): …`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use quire_infer::Tensor;
use serde::{Deserialize, Serialize};

use super::needs::{Fit, Need};
use super::{Backend, Stats};
use crate::engines::retry::{self, Gate};
use crate::settings::ApiKey;

/// A backend as one job (or one check) uses it.
#[derive(Debug, Clone)]
pub struct Client {
    pub name: String,
    pub backend: Backend,
    pub(crate) http: reqwest::Client,
    pub(crate) gate: Arc<Gate>,
    pub(crate) stats: Arc<Stats>,
}

/// A tensor's description in a model's metadata.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct TensorSpec {
    pub name: String,
    pub datatype: String,
    /// -1 for a dimension of any size.
    pub shape: Vec<i64>,
}

/// `GET /v2/models/{model}`'s answer (what quire reads of it).
#[derive(Debug, Clone, Deserialize)]
pub struct Metadata {
    #[serde(default)]
    pub inputs: Vec<TensorSpec>,
    #[serde(default)]
    pub outputs: Vec<TensorSpec>,
    #[serde(default)]
    pub parameters: Option<serde_json::Map<String, serde_json::Value>>,
}

#[derive(Serialize)]
struct InferRequest<'a> {
    inputs: [InputTensor<'a>; 1],
    outputs: [OutputName<'a>; 1],
}

#[derive(Serialize)]
struct InputTensor<'a> {
    name: &'a str,
    shape: &'a [usize],
    datatype: &'static str,
    data: &'a [f32],
}

#[derive(Serialize)]
struct OutputName<'a> {
    name: &'a str,
}

#[derive(Deserialize)]
struct InferResponse {
    outputs: Vec<OutputTensor>,
}

#[derive(Deserialize)]
struct OutputTensor {
    name: String,
    datatype: String,
    shape: Vec<usize>,
    data: Vec<f32>,
}

/// Why a request failed, and whether asking again may help.
struct Failed {
    why: String,
    again: bool,
    retry_after: Option<reqwest::header::HeaderValue>,
}

impl Client {
    /// `backend "NAME" (URL)`, as every failure begins.
    pub fn who(&self) -> String {
        format!("backend \"{}\" ({})", self.name, self.backend.url)
    }

    /// The base URL with `segments` added (each percent-encoded).
    fn url(&self, segments: &[&str]) -> Result<reqwest::Url, String> {
        let mut url = reqwest::Url::parse(&self.backend.url)
            .map_err(|e| format!("{}: not a URL: {e}", self.who()))?;
        url.path_segments_mut()
            .map_err(|()| format!("{}: not a base URL", self.who()))?
            .pop_if_empty()
            .extend(segments);
        Ok(url)
    }

    /// The model's own path: `v2/models/{model}[/versions/{version}]`.
    fn model_url(&self, more: &[&str]) -> Result<reqwest::Url, String> {
        let mut segments = vec!["v2", "models", &self.backend.model];
        if !self.backend.version.is_empty() {
            segments.extend(["versions", &self.backend.version]);
        }
        segments.extend(more);
        self.url(&segments)
    }

    fn timeout(&self) -> Duration {
        Duration::from_secs(self.backend.timeout_secs)
    }

    fn authorized(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.backend.api_key {
            ApiKey::Key(key) => request.bearer_auth(key),
            _ => request,
        }
    }

    /// Asks whether the server is ready and what the model takes and
    /// gives, and whether that is what `need` needs: rule 6 of spec 17.
    /// The answer is counted as the backend's readiness.
    /// Without a `need`, a model of any kind fits.
    pub async fn fit(&self, need: Option<Need>) -> Result<Fit, String> {
        let fit = self.ask_fit(need).await;
        self.stats.ready(fit.is_ok());
        fit.map_err(|why| format!("{}: {why}", self.who()))
    }

    async fn ask_fit(&self, need: Option<Need>) -> Result<Fit, String> {
        if let ApiKey::Unresolved(why) = &self.backend.api_key {
            return Err(format!("no API key: {why}"));
        }
        let ready = self.url(&["v2", "health", "ready"])?;
        let answer = self
            .authorized(self.http.get(ready).timeout(self.timeout()))
            .send()
            .await
            .map_err(|e| reason(&e))?;
        if !answer.status().is_success() {
            return Err(format!("not ready (HTTP {})", answer.status().as_u16()));
        }
        let answer = self
            .authorized(self.http.get(self.model_url(&[])?).timeout(self.timeout()))
            .send()
            .await
            .map_err(|e| reason(&e))?;
        match answer.status().as_u16() {
            200 => {}
            // KServe answers 404, MLServer 400 with "Model … not found".
            404 | 400 => {
                let version = if self.backend.version.is_empty() {
                    String::new()
                } else {
                    format!(" version \"{}\"", self.backend.version)
                };
                return Err(format!(
                    "no model \"{}\"{version} on the server",
                    self.backend.model
                ));
            }
            status => return Err(format!("the model's metadata: HTTP {status}")),
        }
        let metadata: Metadata = answer
            .json()
            .await
            .map_err(|e| format!("the model's metadata is not the protocol's: {}", reason(&e)))?;
        let dictionary = match &self.backend.dictionary {
            Some(path) => Some(
                std::fs::read_to_string(path)
                    .map_err(|e| format!("dictionary {} cannot be read: {e}", path.display()))?,
            ),
            None => None,
        };
        match need {
            Some(need) => need.fit(&metadata, dictionary),
            None => Ok(Fit {
                input: String::new(),
                output: String::new(),
                dictionary: None,
            }),
        }
    }

    /// Runs the model on `input` (its tensor `fit.input`), giving its
    /// output `fit.output`; retried as the module says.
    pub async fn infer(&self, fit: &Fit, input: &Tensor) -> Result<Tensor, String> {
        let url = self.model_url(&["infer"])?;
        let body = serde_json::to_vec(&InferRequest {
            inputs: [InputTensor {
                name: &fit.input,
                shape: &input.shape,
                datatype: "FP32",
                data: &input.data,
            }],
            outputs: [OutputName { name: &fit.output }],
        })
        .map_err(|e| format!("{}: the request cannot be written: {e}", self.who()))?;
        let _permit = self
            .gate
            .permits
            .acquire()
            .await
            .map_err(|_| format!("{}: closed", self.who()))?;
        let _counted = InFlight::count(&self.stats);
        let result = self.infer_with_retries(url, body, fit).await;
        result.map_err(|why| format!("{}: {why}", self.who()))
    }

    async fn infer_with_retries(
        &self,
        url: reqwest::Url,
        body: Vec<u8>,
        fit: &Fit,
    ) -> Result<Tensor, String> {
        let mut attempt = 0;
        loop {
            let failed = match self.infer_once(url.clone(), body.clone(), fit).await {
                Ok(tensor) => return Ok(tensor),
                Err(failed) => failed,
            };
            if !failed.again {
                return Err(failed.why);
            }
            if attempt >= self.backend.max_retries {
                let tries = attempt + 1;
                return Err(format!(
                    "{} after {tries} attempt{}",
                    failed.why,
                    if tries == 1 { "" } else { "s" }
                ));
            }
            self.stats.retried();
            tracing::debug!("{}: {}; retrying", self.who(), failed.why);
            tokio::time::sleep(retry::wait(attempt, failed.retry_after.as_ref())).await;
            attempt += 1;
        }
    }

    async fn infer_once(
        &self,
        url: reqwest::Url,
        body: Vec<u8>,
        fit: &Fit,
    ) -> Result<Tensor, Failed> {
        let started = Instant::now();
        let request = self
            .http
            .post(url)
            .timeout(self.timeout())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body);
        let sent = self.authorized(request).send().await;
        let answer = match sent {
            Ok(answer) => answer,
            Err(e) => {
                self.stats
                    .answered("error", started.elapsed().as_secs_f64());
                return Err(Failed {
                    // Connection failures and timeouts are the network's
                    // or a restarting server's: worth another try.
                    again: e.is_connect() || e.is_timeout() || e.is_request(),
                    why: reason(&e),
                    retry_after: None,
                });
            }
        };
        let status = answer.status().as_u16();
        let retry_after = answer.headers().get(reqwest::header::RETRY_AFTER).cloned();
        let body = answer.bytes().await;
        self.stats
            .answered(&status.to_string(), started.elapsed().as_secs_f64());
        let body = body.map_err(|e| Failed {
            again: true,
            why: reason(&e),
            retry_after: None,
        })?;
        if status != 200 {
            return Err(Failed {
                again: retry::retryable(status),
                why: format!("HTTP {status}: {}", clip(&String::from_utf8_lossy(&body))),
                retry_after,
            });
        }
        let final_ = |why: String| Failed {
            again: false,
            why,
            retry_after: None,
        };
        let answer: InferResponse = serde_json::from_slice(&body).map_err(|e| {
            final_(format!(
                "the answer is not the protocol's (a flat FP32 `data` array): {e}"
            ))
        })?;
        let output = answer
            .outputs
            .into_iter()
            .find(|o| o.name == fit.output)
            .ok_or_else(|| final_(format!("the answer has no output \"{}\"", fit.output)))?;
        let values: usize = output.shape.iter().product();
        if output.datatype != "FP32" || values != output.data.len() {
            return Err(final_(format!(
                "output \"{}\" is {} {:?} with {} values, not the FP32 the metadata said",
                output.name,
                output.datatype,
                output.shape,
                output.data.len()
            )));
        }
        Ok(Tensor {
            shape: output.shape,
            data: output.data,
        })
    }
}

/// A request counted in flight for as long as it lives, also when the
/// future making it is dropped.
struct InFlight<'a>(&'a Stats);

impl<'a> InFlight<'a> {
    fn count(stats: &'a Stats) -> InFlight<'a> {
        stats.in_flight(1);
        InFlight(stats)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight(-1);
    }
}

/// A request's failure in a few words: `connection refused`, `timed
/// out`, the innermost cause.
fn reason(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        return "no answer in time (timeout_secs)".to_owned();
    }
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    let mut last = e.to_string();
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            let kind = io.kind().to_string();
            return if e.is_connect() {
                format!("unreachable: {kind}")
            } else {
                kind
            };
        }
        last = s.to_string();
        source = s.source();
    }
    if e.is_connect() {
        format!("unreachable: {last}")
    } else {
        last
    }
}

fn clip(text: &str) -> String {
    let text = text.trim();
    let mut s: String = text.chars().take(200).collect();
    if text.chars().count() > 200 {
        s.push('…');
    }
    s
}
