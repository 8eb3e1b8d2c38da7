//! Where a page engine's models run for one job: model files in
//! `quire-ppocr` helper processes ([`super::ppocr`]), or models on
//! inference servers ([`super::backends`]). `detect` and `ocr` ask the
//! same questions of either.

use image::RgbImage;

use super::backends::{Backend, Backends, Remote};
use super::ppocr::{Deadline, Found, Helpers, Line, Models, ReadLine};
use super::settings::ModelRef;

/// One job's models.
pub enum PageModels {
    Here(Helpers),
    Remote(Box<Remote>),
}

/// What a job needs to find its models: the configured backends and the
/// process's gates and counters for them.
pub struct Places<'a> {
    pub backends: &'a std::collections::BTreeMap<String, Backend>,
    pub process: &'a Backends,
}

impl PageModels {
    /// Starts the models a step names: a detector at `detector` (its
    /// key, for messages, and where it is) and a recogniser at
    /// `recognizer`. Both are files or both are backends; `files` makes
    /// the helpers' models from the files (for a box detector's
    /// settings).
    pub fn start(
        detector: Option<(&str, &ModelRef)>,
        recognizer: Option<(&str, &ModelRef)>,
        places: &Places<'_>,
        deadline: Deadline,
        files: impl FnOnce() -> Models,
    ) -> Result<PageModels, String> {
        let all = [detector, recognizer];
        let named: Vec<(&str, &str)> = all
            .iter()
            .flatten()
            .filter_map(|(key, r)| match r {
                ModelRef::Backend(name) => Some((*key, name.as_str())),
                ModelRef::File(_) => None,
            })
            .collect();
        if named.is_empty() {
            return Ok(PageModels::Here(Helpers::start(&files(), deadline)?));
        }
        if named.len() != all.iter().flatten().count() {
            return Err(format!(
                "{} names a backend and the other model a file: name both on backends, or both as files",
                named[0].0
            ));
        }
        let client = |model: Option<(&str, &ModelRef)>| -> Result<_, String> {
            let Some((key, ModelRef::Backend(name))) = model else {
                return Ok(None);
            };
            let backend = places.backends.get(name).ok_or_else(|| {
                let defined: Vec<&str> = places.backends.keys().map(String::as_str).collect();
                format!(
                    "{key}: no backend \"{name}\" (defined: {})",
                    defined.join(", ")
                )
            })?;
            Ok(Some(places.process.client(name, backend)))
        };
        Ok(PageModels::Remote(Box::new(Remote::new(
            client(detector)?,
            client(recognizer)?,
        )?)))
    }

    /// Waits until the models can be used: on backends, their check
    /// (once per job).
    pub async fn ready(&self) -> Result<(), String> {
        match self {
            PageModels::Here(_) => Ok(()),
            PageModels::Remote(remote) => remote.ready().await,
        }
    }

    /// The detector's lines of `image`. Blocks: call it off the runtime.
    pub fn lines(&self, image: &RgbImage, scale: Option<f32>) -> Result<Vec<Line>, String> {
        match self {
            PageModels::Here(helpers) => helpers.any().lines(image, scale),
            PageModels::Remote(remote) => Ok(remote
                .lines(image, scale)?
                .into_iter()
                .map(|l| line(&l))
                .collect()),
        }
    }

    /// A block's lines found and read. Blocks: call it off the runtime.
    pub fn read(&self, image: &RgbImage, scale: Option<f32>) -> Result<Vec<ReadLine>, String> {
        match self {
            PageModels::Here(helpers) => helpers.any().read(image, scale),
            PageModels::Remote(remote) => Ok(remote
                .read(image, scale)?
                .into_iter()
                .map(|r| ReadLine {
                    line: line(&r.line),
                    row: r.row,
                    text: r.text,
                    confidence: r.confidence,
                })
                .collect()),
        }
    }

    /// A box detector's boxes (model files only).
    pub fn boxes(&self, image: &RgbImage, min_score: f32) -> Result<Vec<Found>, String> {
        match self {
            PageModels::Here(helpers) => helpers.any().boxes(image, min_score),
            PageModels::Remote(_) => Err("a box detector runs from a model file".to_owned()),
        }
    }

    /// Ends what runs for the job now: its helpers, or its requests.
    pub fn kill(&self) {
        match self {
            PageModels::Here(helpers) => helpers.kill(),
            PageModels::Remote(remote) => remote.end(),
        }
    }

    /// How many pages to work on at once, when not one per core.
    pub fn at_once(&self) -> Option<usize> {
        match self {
            PageModels::Here(_) => None,
            PageModels::Remote(remote) => Some(remote.at_once()),
        }
    }

    /// A failure that ends the job.
    pub fn fatal(&self) -> Option<String> {
        match self {
            PageModels::Here(_) => None,
            PageModels::Remote(remote) => remote.fatal(),
        }
    }
}

fn line(l: &quire_infer::Line) -> Line {
    Line {
        x: l.x,
        y: l.y,
        width: l.width,
        height: l.height,
    }
}
