//! quire's page models run here, by tract (pure Rust, no runtime library
//! to install or ship): PP-OCR's detector and recogniser (what surrounds
//! them is `quire-infer`'s, shared with models on inference servers), a
//! detector with box and label outputs (RT-DETR, YOLO: [`boxes`]) and an
//! inpainting model (LaMa: [`inpaint`]).
//!
//! A model is optimised for each input size it sees ([`local`]); the
//! plans are kept (a chapter's pages have one size, a line's width is
//! rounded up to one of a few widths), so a page costs only its
//! inference.
//!
//! quire runs these models in a helper process, `quire-ppocr`, which
//! [`serve`] answers (module [`helper`]): the model runtime is most of
//! this crate's code, and kept out of the `quire` binary it no longer
//! loads at every start.

pub mod boxes;
pub mod helper;
pub mod inpaint;
pub mod local;
pub use helper::serve;

use quire_infer::{Detector, Recognizer};

/// The detector model file at `path`, run here.
pub fn detector(path: &std::path::Path) -> Result<Detector, String> {
    let model = local::Local::load(path, "the detector")?;
    Ok(Detector::new(Box::new(model)))
}

/// The recogniser model file at `path`, run here, its dictionary from
/// its `character` metadata.
pub fn recognizer(path: &std::path::Path) -> Result<Recognizer, String> {
    let dictionary = dictionary(path)?;
    let model = local::Local::load(path, "the recogniser")?;
    Ok(Recognizer::new(Box::new(model), &dictionary))
}

/// A PP-OCR recognition model file's dictionary: its `character`
/// metadata.
pub fn dictionary(path: &std::path::Path) -> Result<String, String> {
    use tract_onnx::prelude::Framework;
    let proto = tract_onnx::onnx()
        .proto_model_for_path(path)
        .map_err(|e| format!("{} cannot be read as an ONNX model: {e}", path.display()))?;
    proto
        .metadata_props
        .iter()
        .find(|p| p.key == "character")
        .map(|p| p.value.clone())
        .ok_or_else(|| {
            format!(
                "{} has no `character` metadata: not a PP-OCR recognition model with its dictionary",
                path.display()
            )
        })
}
