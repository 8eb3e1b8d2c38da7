//! The `quire-ppocr` helper's side of its pipe to quire.
//!
//! quire writes requests on the helper's stdin and reads one answer line
//! per request on its stdout. A request is a line of JSON, followed, for
//! an image, by its pixels (`width × height × 3` bytes of RGB):
//!
//! - `{"load":{"detector":PATH,"recognizer":PATH,"boxes":{…},"inpainter":{…}}}`
//!   (any may be left out) loads the models; answer
//!   `{"ok":{"characters":N}}` (the recogniser's dictionary size, `null`
//!   without one). `boxes` is `{"path","format","size","classes"}` (a box
//!   detector, [`crate::boxes`]), `inpainter` `{"path","size","unit_output"}`
//!   ([`crate::inpaint`]);
//! - `{"lines":{"width":W,"height":H,"scale":S}}` + pixels: the
//!   detector's lines, `{"lines":[{x,y,width,height,score}…]}`;
//! - `{"read":{"width":W,"height":H,"scale":S}}` + pixels: a block's
//!   lines found and read, `{"read":[{line,row,text,confidence}…]}`;
//! - `{"boxes":{"width":W,"height":H,"min_score":S}}` + pixels: the box
//!   detector's boxes, `{"boxes":[{x,y,width,height,label,score}…]}`;
//! - `{"inpaint":{"width":W,"height":H}}` + pixels + the mask (`width ×
//!   height` bytes, non-zero to fill): answer `{"inpainted":{"bytes":N}}`
//!   followed by the N bytes of the filled image's RGB.
//!
//! Any refusal or failure is `{"error":"…"}` and the helper keeps
//! serving; it ends when its stdin closes. `scale` may be `null` (see
//! [`Detector::lines`]).

use std::io::{BufRead, Read, Write};
use std::path::PathBuf;

use image::{GrayImage, RgbImage};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::boxes::{BoxDetector, Format};
use crate::inpaint::Inpainter;
use quire_infer::{Detector, Recognizer};

/// The most pixels one image may have (a 100-megapixel page's limit in
/// quire, with room): a corrupt header never allocates more.
const MAX_PIXELS: u64 = 128_000_000;

/// The longest request line read (a request is a few hundred bytes).
const MAX_HEADER: u64 = 64 << 10;

#[derive(Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
enum Request {
    Load {
        #[serde(default)]
        detector: Option<PathBuf>,
        #[serde(default)]
        recognizer: Option<PathBuf>,
        #[serde(default)]
        boxes: Option<BoxesModel>,
        #[serde(default)]
        inpainter: Option<InpaintModel>,
    },
    Lines(Size),
    Read(Size),
    Boxes {
        width: u32,
        height: u32,
        min_score: f32,
    },
    Inpaint {
        width: u32,
        height: u32,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BoxesModel {
    path: PathBuf,
    format: Format,
    size: u32,
    classes: usize,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InpaintModel {
    path: PathBuf,
    size: u32,
    #[serde(default)]
    unit_output: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Size {
    width: u32,
    height: u32,
    #[serde(default)]
    scale: Option<f32>,
}

#[derive(Default)]
struct Models {
    detector: Option<Detector>,
    recognizer: Option<Recognizer>,
    boxes: Option<BoxDetector>,
    inpainter: Option<Inpainter>,
}

/// Serves requests from `input` until it ends, answering on `output`.
/// Fails only when a pipe does (quire went away); a bad request gets an
/// error answer.
pub fn serve(input: impl Read, mut output: impl Write) -> std::io::Result<()> {
    let mut input = std::io::BufReader::new(input);
    let mut models = Models::default();
    let mut header = String::new();
    loop {
        header.clear();
        if (&mut input).take(MAX_HEADER).read_line(&mut header)? == 0 {
            return Ok(());
        }
        let answer = match serde_json::from_str::<Request>(&header) {
            Ok(Request::Inpaint { width, height }) => {
                let size = Size {
                    width,
                    height,
                    scale: None,
                };
                let image = pixels(&size, &mut input)?;
                let mask = mask(&size, &mut input)?;
                match inpaint(&models, image, mask) {
                    Ok(filled) => {
                        let bytes = filled.as_raw();
                        writeln!(
                            output,
                            "{}",
                            json!({ "inpainted": { "bytes": bytes.len() } })
                        )?;
                        output.write_all(bytes)?;
                        output.flush()?;
                        continue;
                    }
                    Err(e) => json!({ "error": e }),
                }
            }
            Ok(request) => answer(&mut models, request, &mut input)?,
            // The pixels that may follow cannot be told from the next
            // request: nothing more can be read in step.
            Err(e) => {
                let refusal = json!({ "error": format!("not a request: {e}") });
                writeln!(output, "{refusal}")?;
                output.flush()?;
                return Ok(());
            }
        };
        writeln!(output, "{answer}")?;
        output.flush()?;
    }
}

/// One request's answer; its pixels are read from `input` first.
fn answer(models: &mut Models, request: Request, input: &mut impl Read) -> std::io::Result<Value> {
    let refused = |e: String| json!({ "error": e });
    Ok(match request {
        Request::Load {
            detector,
            recognizer,
            boxes,
            inpainter,
        } => {
            let loaded = (|| {
                let detector = detector.as_deref().map(crate::detector).transpose()?;
                let recognizer = recognizer.as_deref().map(crate::recognizer).transpose()?;
                let boxes = boxes
                    .map(|b| BoxDetector::load(&b.path, b.format, b.size, b.classes))
                    .transpose()?;
                let inpainter = inpainter
                    .map(|i| Inpainter::load(&i.path, i.size, i.unit_output))
                    .transpose()?;
                Ok::<_, String>(Models {
                    detector,
                    recognizer,
                    boxes,
                    inpainter,
                })
            })();
            match loaded {
                Ok(loaded) => {
                    *models = loaded;
                    let characters = models.recognizer.as_ref().map(Recognizer::dictionary_len);
                    json!({ "ok": { "characters": characters } })
                }
                Err(e) => refused(e),
            }
        }
        Request::Lines(size) => {
            let image = pixels(&size, input)?;
            match (&models.detector, image) {
                (_, Err(e)) => refused(e),
                (None, _) => refused("no detector is loaded".into()),
                (Some(detector), Ok(image)) => match detector.lines(&image, size.scale) {
                    Ok(lines) => json!({ "lines": lines }),
                    Err(e) => refused(e),
                },
            }
        }
        Request::Read(size) => {
            let image = pixels(&size, input)?;
            match (&models.detector, &models.recognizer, image) {
                (_, _, Err(e)) => refused(e),
                (Some(detector), Some(recognizer), Ok(image)) => {
                    match quire_infer::read(detector, recognizer, &image, size.scale) {
                        Ok(lines) => json!({ "read": lines }),
                        Err(e) => refused(e),
                    }
                }
                _ => refused("reading needs both a detector and a recogniser loaded".into()),
            }
        }
        Request::Boxes {
            width,
            height,
            min_score,
        } => {
            let size = Size {
                width,
                height,
                scale: None,
            };
            let image = pixels(&size, input)?;
            match (&models.boxes, image) {
                (_, Err(e)) => refused(e),
                (None, _) => refused("no box detector is loaded".into()),
                (Some(boxes), Ok(image)) => match boxes.boxes(&image, min_score) {
                    Ok(found) => json!({ "boxes": found }),
                    Err(e) => refused(e),
                },
            }
        }
        // Answered by `serve`, which writes its pixels after the line.
        Request::Inpaint { .. } => refused("an inpaint request is served apart".into()),
    })
}

/// The filled image of an inpaint request, or why there is none.
fn inpaint(
    models: &Models,
    image: Result<RgbImage, String>,
    mask: Result<GrayImage, String>,
) -> Result<RgbImage, String> {
    let inpainter = models
        .inpainter
        .as_ref()
        .ok_or_else(|| "no inpainting model is loaded".to_owned())?;
    inpainter.inpaint(&image?, &mask?)
}

/// An inpaint request's mask (one byte a pixel), read like [`pixels`].
fn mask(size: &Size, input: &mut impl Read) -> std::io::Result<Result<GrayImage, String>> {
    let mut bytes = vec![0u8; size.width as usize * size.height as usize];
    input.read_exact(&mut bytes)?;
    Ok(GrayImage::from_raw(size.width, size.height, bytes)
        .ok_or_else(|| "the mask does not fill the image".to_owned()))
}

/// The request's pixels, read whole even when the size is refused (so
/// the next request is read in step) unless the size is beyond reading.
fn pixels(size: &Size, input: &mut impl Read) -> std::io::Result<Result<RgbImage, String>> {
    let pixels = u64::from(size.width) * u64::from(size.height);
    if pixels > MAX_PIXELS {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "{} × {} pixels is over the helper's limit",
                size.width, size.height
            ),
        ));
    }
    let mut bytes = vec![0u8; usize::try_from(pixels * 3).unwrap_or(usize::MAX)];
    input.read_exact(&mut bytes)?;
    Ok(RgbImage::from_raw(size.width, size.height, bytes)
        .ok_or_else(|| "the pixels do not fill the image".to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange(input: &[u8]) -> Vec<Value> {
        let mut out = Vec::new();
        serve(input, &mut out).unwrap();
        out.split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect()
    }

    #[test]
    fn an_image_without_models_is_refused_and_the_next_request_read_in_step() {
        let mut input = b"{\"lines\":{\"width\":2,\"height\":1}}\n".to_vec();
        input.extend_from_slice(&[255; 6]);
        input.extend_from_slice(b"{\"load\":{}}\n");
        let answers = exchange(&input);
        assert_eq!(answers[0]["error"], "no detector is loaded");
        assert_eq!(answers[1]["ok"]["characters"], Value::Null);
    }

    #[test]
    fn a_model_that_does_not_load_is_named_in_the_refusal() {
        let answers = exchange(b"{\"load\":{\"detector\":\"/nonexistent/det.onnx\"}}\n");
        let error = answers[0]["error"].as_str().unwrap();
        assert!(error.contains("/nonexistent/det.onnx"), "{error}");
    }

    /// One answer, the refusal of a line that is not a request: nothing
    /// after it was read.
    fn assert_only_refused_as_not_a_request(answers: &[Value]) {
        assert_eq!(answers.len(), 1);
        let error = answers[0]["error"].as_str().unwrap();
        assert!(error.starts_with("not a request"), "{error}");
    }

    #[test]
    fn a_line_that_is_not_a_request_ends_the_exchange_with_an_error() {
        let answers = exchange(b"{\"dance\":{}}\n{\"load\":{}}\n");
        assert_only_refused_as_not_a_request(&answers);
    }

    #[test]
    fn a_request_line_past_its_limit_is_refused_unread() {
        let mut input = b"{\"load\":{\"detector\":\"".to_vec();
        input.resize(200 << 10, b'a');
        input.extend_from_slice(b"\"}}\n{\"load\":{}}\n");
        let answers = exchange(&input);
        assert_only_refused_as_not_a_request(&answers);
    }

    #[test]
    fn an_image_beyond_the_limit_fails_the_pipe() {
        let mut out = Vec::new();
        let input = b"{\"lines\":{\"width\":100000,\"height\":100000}}\n";
        assert!(serve(&input[..], &mut out).is_err());
    }
}
