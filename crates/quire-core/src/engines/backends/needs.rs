//! What a page engine needs of a backend's model, checked against the
//! model's metadata before a job's first page (spec 17, rule 6): the
//! server serves the same model file, with the inputs and outputs it has
//! there, so a model that does not fit is the wrong model (a recogniser
//! where a detector goes) or another export of it.

use super::protocol::{Metadata, TensorSpec};

/// A kind of model a page engine runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// A DBNet-style text detector (PP-OCR's): an image in, a map of text
    /// probability out.
    Detector,
    /// A CTC recogniser (PP-OCR's): line images 48 pixels tall in, class
    /// scores per step out, its characters from a dictionary.
    Recognizer,
}

/// A model that fits: the tensors to send and read, and a recogniser's
/// characters.
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    pub input: String,
    pub output: String,
    /// A recogniser's characters, one a line.
    pub dictionary: Option<String>,
}

/// `[-1, 3, 48, -1]`.
fn shape(dims: &[i64]) -> String {
    let dims: Vec<String> = dims.iter().map(i64::to_string).collect();
    format!("[{}]", dims.join(", "))
}

fn has(t: &TensorSpec) -> String {
    format!("the server has {} {}", t.datatype, shape(&t.shape))
}

/// Whether dimension `d` may be `size` (-1: any size).
fn may_be(d: i64, size: i64) -> bool {
    d == -1 || d == size
}

impl Need {
    /// `Ok` with what to send and read when `metadata` fits; else what
    /// differs, in rule 6's words. `dictionary` is the backend's
    /// `dictionary` file's text, when it names one.
    pub fn fit(self, metadata: &Metadata, dictionary: Option<String>) -> Result<Fit, String> {
        let [input] = &metadata.inputs[..] else {
            return Err(format!(
                "the model has {} inputs; {} takes one",
                metadata.inputs.len(),
                self.name()
            ));
        };
        let output = metadata
            .outputs
            .first()
            .ok_or_else(|| "the model has no outputs".to_owned())?;
        let fp32 = |t: &TensorSpec| t.datatype == "FP32";
        match self {
            Need::Detector => {
                let d = &input.shape;
                if !(fp32(input) && d.len() == 4 && may_be(d[1], 3)) {
                    return Err(format!(
                        "input \"{}\": wanted FP32 of rank 4 with 3 channels, {}",
                        input.name,
                        has(input)
                    ));
                }
                let d = &output.shape;
                if !(fp32(output) && d.len() == 4 && may_be(d[1], 1)) {
                    return Err(format!(
                        "output \"{}\": wanted FP32 of rank 4 with 1 channel, {}",
                        output.name,
                        has(output)
                    ));
                }
                Ok(Fit {
                    input: input.name.clone(),
                    output: output.name.clone(),
                    dictionary: None,
                })
            }
            Need::Recognizer => {
                let d = &input.shape;
                if !(fp32(input) && d.len() == 4 && may_be(d[1], 3) && may_be(d[2], 48)) {
                    return Err(format!(
                        "input \"{}\": wanted FP32 [-1, 3, 48, -1], {}",
                        input.name,
                        has(input)
                    ));
                }
                let dictionary = dictionary
                    .or_else(|| {
                        metadata
                            .parameters
                            .as_ref()?
                            .get("character")?
                            .as_str()
                            .map(str::to_owned)
                    })
                    .ok_or_else(|| {
                        "no character dictionary: set the backend's dictionary (a file of its \
                         characters, one a line) or serve the model's `character` metadata as \
                         the parameter `character`"
                            .to_owned()
                    })?;
                // The blank, each character, and the space.
                let classes = dictionary.lines().count() as i64 + 2;
                let d = &output.shape;
                if !(fp32(output) && d.len() == 3 && may_be(d[2], classes)) {
                    return Err(format!(
                        "output \"{}\": wanted FP32 [-1, -1, {classes}] (its dictionary's \
                         characters, a blank and a space), {}",
                        output.name,
                        has(output)
                    ));
                }
                Ok(Fit {
                    input: input.name.clone(),
                    output: output.name.clone(),
                    dictionary: Some(dictionary),
                })
            }
        }
    }

    fn name(self) -> &'static str {
        match self {
            Need::Detector => "a text detector",
            Need::Recognizer => "a recogniser",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tensor(name: &str, shape: &[i64]) -> TensorSpec {
        TensorSpec {
            name: name.into(),
            datatype: "FP32".into(),
            shape: shape.to_vec(),
        }
    }

    fn metadata(input: &[i64], output: &[i64], character: Option<&str>) -> Metadata {
        Metadata {
            inputs: vec![tensor("x", input)],
            outputs: vec![tensor("fetch_name_0", output)],
            parameters: character.map(|c| {
                let mut map = serde_json::Map::new();
                map.insert("character".into(), c.into());
                map
            }),
        }
    }

    #[test]
    fn a_detector_fits_a_db_model_and_not_a_recogniser() {
        let det = metadata(&[-1, 3, -1, -1], &[-1, 1, -1, -1], None);
        let fit = Need::Detector.fit(&det, None).unwrap();
        assert_eq!(
            (fit.input.as_str(), fit.output.as_str()),
            ("x", "fetch_name_0")
        );
        let rec = metadata(&[-1, 3, 48, -1], &[-1, -1, 18710], Some("a\nb"));
        assert_eq!(
            Need::Detector.fit(&rec, None).unwrap_err(),
            "output \"fetch_name_0\": wanted FP32 of rank 4 with 1 channel, the server has FP32 [-1, -1, 18710]"
        );
    }

    #[test]
    fn a_recogniser_needs_48_pixel_lines_and_as_many_classes_as_its_dictionary() {
        let rec = metadata(&[-1, 3, 48, -1], &[-1, -1, 4], Some("a\nb"));
        let fit = Need::Recognizer.fit(&rec, None).unwrap();
        assert_eq!(fit.dictionary.as_deref(), Some("a\nb"));
        // A dictionary file wins over the metadata's.
        let fit = Need::Recognizer.fit(&rec, Some("x\ny".into())).unwrap();
        assert_eq!(fit.dictionary.as_deref(), Some("x\ny"));
        let short = metadata(&[-1, 3, 32, -1], &[-1, -1, 4], Some("a\nb"));
        assert_eq!(
            Need::Recognizer.fit(&short, None).unwrap_err(),
            "input \"x\": wanted FP32 [-1, 3, 48, -1], the server has FP32 [-1, 3, 32, -1]"
        );
        let other = Need::Recognizer
            .fit(&rec, Some("a\nb\nc".into()))
            .unwrap_err();
        assert!(other.contains("wanted FP32 [-1, -1, 5]"), "{other}");
        let bare = metadata(&[-1, 3, 48, -1], &[-1, -1, 4], None);
        let none = Need::Recognizer.fit(&bare, None).unwrap_err();
        assert!(none.starts_with("no character dictionary"), "{none}");
    }
}
