"""An MLServer runtime that serves one ONNX model file with onnxruntime,
for quire's Open Inference Protocol backends (spec 17).

It serves the model as it is in the file: the metadata lists the file's
own inputs and outputs (names, FP32, shapes with -1 for free dimensions)
and, for a PP-OCR recogniser, the file's `character` metadata as the
parameter `character`, which quire reads as its dictionary. An inference
request runs the model on the tensors it names and answers every output
asked for (all of them when none is named).

A model's `model-settings.json`:

    {"name": "ppocr-det", "implementation": "quire_onnx.OnnxModel",
     "parameters": {"uri": "./PP-OCRv6_det_small.onnx"}}

ONNX_THREADS (default 1) sets onnxruntime's threads per model: on a
machine of N cores, N models (or N replicas) of one thread each use it
best.
"""

import os

import numpy as np
import onnxruntime as ort
from mlserver import MLModel
from mlserver.codecs import NumpyCodec
from mlserver.types import (
    InferenceRequest,
    InferenceResponse,
    MetadataModelResponse,
    MetadataTensor,
    Parameters,
)
from mlserver.utils import get_model_uri


def _shape(dims):
    return [d if isinstance(d, int) and d > 0 else -1 for d in dims]


class OnnxModel(MLModel):
    async def load(self) -> bool:
        path = await get_model_uri(self._settings)
        options = ort.SessionOptions()
        threads = int(os.environ.get("ONNX_THREADS", "1"))
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self._session = ort.InferenceSession(
            path, sess_options=options, providers=["CPUExecutionProvider"]
        )
        self.inputs = [
            MetadataTensor(name=i.name, datatype="FP32", shape=_shape(i.shape))
            for i in self._session.get_inputs()
        ]
        self.outputs = [
            MetadataTensor(name=o.name, datatype="FP32", shape=_shape(o.shape))
            for o in self._session.get_outputs()
        ]
        custom = self._session.get_modelmeta().custom_metadata_map
        self._character = custom.get("character")
        return True

    async def metadata(self) -> MetadataModelResponse:
        metadata = await super().metadata()
        if self._character is not None:
            metadata.parameters = Parameters(character=self._character)
        return metadata

    async def predict(self, payload: InferenceRequest) -> InferenceResponse:
        feeds = {
            tensor.name: NumpyCodec.decode_input(tensor).astype(np.float32)
            for tensor in payload.inputs
        }
        names = [o.name for o in self._session.get_outputs()]
        wanted = [o.name for o in payload.outputs or []] or names
        unknown = [n for n in wanted if n not in names]
        if unknown:
            raise ValueError(f"no output {unknown[0]!r} (the model has {names})")
        results = self._session.run(wanted, feeds)
        return InferenceResponse(
            model_name=self.name,
            model_version=self.version,
            outputs=[
                NumpyCodec.encode_output(name, np.ascontiguousarray(value, dtype=np.float32))
                for name, value in zip(wanted, results)
            ],
        )
