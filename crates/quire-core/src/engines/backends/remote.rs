//! A page engine's PP-OCR models on backends: `quire-ppocr`'s detector
//! and recogniser, each given a model whose `infer` is a request.
//!
//! The engines call the models from a blocking thread (`spawn_blocking`),
//! as they call the helper process; a request is made there on the
//! runtime the job runs on (`Handle::block_on`), so pages in flight
//! overlap their requests up to each backend's gate.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use image::RgbImage;
use quire_infer::{Detector, Infer, Line, ReadLine, Recognizer, Tensor};

use super::Client;
use super::needs::{Fit, Need};

/// The models of one job's step, on backends.
pub struct Remote {
    detector: Option<Client>,
    recognizer: Option<Client>,
    handle: tokio::runtime::Handle,
    loaded: tokio::sync::OnceCell<Result<Loaded, String>>,
    /// The first failure of a backend: the job fails with it (spec 17,
    /// rule 9), the pages before it kept.
    fatal: Arc<Mutex<Option<String>>>,
    /// The job ended: a page still being read sends nothing more.
    ended: Arc<AtomicBool>,
}

struct Loaded {
    detector: Option<Detector>,
    recognizer: Option<Recognizer>,
}

/// One backend's model as `quire-ppocr` runs it.
struct Run {
    client: Client,
    fit: Fit,
    handle: tokio::runtime::Handle,
    fatal: Arc<Mutex<Option<String>>>,
    ended: Arc<AtomicBool>,
}

impl Infer for Run {
    fn infer(&self, input: Tensor) -> Result<Tensor, String> {
        if self.ended.load(Ordering::Relaxed) {
            return Err("the job ended".to_owned());
        }
        let result = self.handle.block_on(self.client.infer(&self.fit, &input));
        if let Err(e) = &result {
            self.fatal
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get_or_insert_with(|| e.clone());
        }
        result
    }

    fn batches(&self) -> bool {
        true
    }
}

impl Remote {
    /// The models on `detector` and `recognizer` (either may be left
    /// out); made on the job's runtime, and asked nothing until
    /// [`Remote::ready`].
    pub fn new(detector: Option<Client>, recognizer: Option<Client>) -> Result<Remote, String> {
        let handle = tokio::runtime::Handle::try_current()
            .map_err(|_| "backends are used from a job only".to_owned())?;
        Ok(Remote {
            detector,
            recognizer,
            handle,
            loaded: tokio::sync::OnceCell::new(),
            fatal: Arc::new(Mutex::new(None)),
            ended: Arc::new(AtomicBool::new(false)),
        })
    }

    /// Asks each backend, once per job, whether it is ready and serves a
    /// model that fits; every page waits for the answer, and a problem
    /// fails the job before its first page changes anything.
    pub async fn ready(&self) -> Result<(), String> {
        let loaded = self
            .loaded
            .get_or_init(|| async {
                let run = |client: &Client, fit: Fit| Run {
                    client: client.clone(),
                    fit,
                    handle: self.handle.clone(),
                    fatal: self.fatal.clone(),
                    ended: self.ended.clone(),
                };
                let detector = match &self.detector {
                    Some(client) => {
                        let fit = client.fit(Some(Need::Detector)).await?;
                        Some(Detector::new(Box::new(run(client, fit))))
                    }
                    None => None,
                };
                let recognizer = match &self.recognizer {
                    Some(client) => {
                        let fit = client.fit(Some(Need::Recognizer)).await?;
                        let dictionary = fit.dictionary.clone().unwrap_or_default();
                        Some(Recognizer::new(Box::new(run(client, fit)), &dictionary))
                    }
                    None => None,
                };
                Ok(Loaded {
                    detector,
                    recognizer,
                })
            })
            .await;
        match loaded {
            Ok(_) => Ok(()),
            Err(e) => {
                self.fatal
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .get_or_insert_with(|| e.clone());
                Err(e.clone())
            }
        }
    }

    fn loaded(&self) -> Result<&Loaded, String> {
        match self.loaded.get() {
            Some(Ok(loaded)) => Ok(loaded),
            Some(Err(e)) => Err(e.clone()),
            None => Err("the backends were not asked whether they are ready".to_owned()),
        }
    }

    /// The detector's lines of `image` (see `quire_infer::Detector`).
    pub fn lines(&self, image: &RgbImage, scale: Option<f32>) -> Result<Vec<Line>, String> {
        let detector = self.loaded()?.detector.as_ref();
        detector
            .ok_or_else(|| "no detector backend".to_owned())?
            .lines(image, scale)
    }

    /// A block's lines found and read (see `quire_infer::read`).
    pub fn read(&self, image: &RgbImage, scale: Option<f32>) -> Result<Vec<ReadLine>, String> {
        let loaded = self.loaded()?;
        match (&loaded.detector, &loaded.recognizer) {
            (Some(detector), Some(recognizer)) => {
                quire_infer::read(detector, recognizer, image, scale)
            }
            _ => Err("reading needs a detector and a recogniser backend".to_owned()),
        }
    }

    /// The job ended (done, failed or cancelled): pages still being read
    /// on blocking threads send no more requests.
    pub fn end(&self) {
        self.ended.store(true, Ordering::Relaxed);
    }

    /// A backend's failure that ends the job, once there is one.
    pub fn fatal(&self) -> Option<String> {
        self.fatal
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// How many pages to work on at once: enough to keep every backend's
    /// gate full.
    pub fn at_once(&self) -> usize {
        [&self.detector, &self.recognizer]
            .into_iter()
            .flatten()
            .map(|c| c.backend.max_in_flight)
            .max()
            .unwrap_or(1)
    }
}
