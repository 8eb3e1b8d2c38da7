//! Models run here, by tract: an ONNX file loaded once, a plan optimised
//! for each input shape it sees and kept (a chapter's pages have one
//! size, a line's width is rounded up to one of a few widths), so a page
//! costs only its inference.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use tract_onnx::prelude::*;

use quire_infer::{Infer, Tensor as Floats};

pub(crate) type Plan = Arc<TypedRunnableModel>;

/// The one plan of a model whose inputs have fixed `shapes` (input
/// index, shape), made at the first call and kept in `kept`.
pub(crate) fn fixed_plan(
    model: &InferenceModel,
    kept: &Mutex<Option<Plan>>,
    shapes: &[(usize, [usize; 4])],
    what: &str,
) -> Result<Plan, String> {
    let mut kept = kept.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(plan) = kept.as_ref() {
        return Ok(plan.clone());
    }
    let plan: Plan = shapes
        .iter()
        .try_fold(model.clone(), |m, (input, shape)| {
            m.with_input_fact(*input, f32::fact(*shape).into())
        })
        .and_then(|m| m.into_optimized())
        .and_then(|m| m.into_runnable())
        .map_err(|e| format!("{what} cannot run on its {:?} input: {e}", shapes[0].1))?;
    *kept = Some(plan.clone());
    Ok(plan)
}

/// "1 input", "2 inputs".
pub(crate) fn inputs(n: usize) -> String {
    if n == 1 {
        "1 input".to_owned()
    } else {
        format!("{n} inputs")
    }
}

pub(crate) fn load(path: &Path) -> Result<InferenceModel, String> {
    tract_onnx::onnx()
        // The models' own shape annotations use symbols that do not unify
        // once the input has a size: the shapes are inferred instead.
        .with_ignore_value_info(true)
        .with_ignore_output_shapes(true)
        .model_for_path(path)
        .map_err(|e| format!("{} cannot be loaded as an ONNX model: {e}", path.display()))
}

/// A model file with one FP32 input, run here: `what` names it in errors
/// ("the detector").
pub struct Local {
    model: InferenceModel,
    plans: Mutex<HashMap<Vec<usize>, Plan>>,
    what: &'static str,
}

impl Local {
    pub fn load(path: &Path, what: &'static str) -> Result<Local, String> {
        Ok(Local {
            model: load(path)?,
            plans: Mutex::new(HashMap::new()),
            what,
        })
    }

    /// A plan for an input of `shape`, made once and kept.
    fn plan(&self, shape: &[usize]) -> Result<Plan, String> {
        if let Some(plan) = self
            .plans
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(shape)
        {
            return Ok(plan.clone());
        }
        let made = self
            .model
            .clone()
            .with_input_fact(0, f32::fact(shape).into())
            .and_then(|m| m.into_optimized())
            .and_then(|m| m.into_runnable())
            .map_err(|e| format!("the model cannot run on a {shape:?} input: {e}"))?;
        self.plans
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(shape.to_vec(), made.clone());
        Ok(made)
    }
}

impl Infer for Local {
    fn infer(&self, input: Floats) -> Result<Floats, String> {
        let plan = self.plan(&input.shape)?;
        let tensor = tract_ndarray::ArrayD::from_shape_vec(input.shape, input.data)
            .map_err(|e| format!("{}: {e}", self.what))?;
        let out = plan
            .run(tvec!(Tensor::from(tensor).into()))
            .map_err(|e| format!("{} failed: {e}", self.what))?;
        let view = out[0]
            .to_plain_array_view::<f32>()
            .map_err(|e| format!("{}'s output is not f32: {e}", self.what))?;
        Ok(Floats {
            shape: view.shape().to_vec(),
            data: view.iter().copied().collect(),
        })
    }
}
