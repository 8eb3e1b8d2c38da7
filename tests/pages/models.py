"""Small ONNX models built with the `onnx` package (the format's reference
implementation, not quire), for the model plug-ins' tests (spec 13):

  models.py OUT TRUTH PAGE

writes into OUT:

- yolo.onnx: a box detector in YOLOv8's layout (input `images` [1, 3, 640,
  640] letterboxed, output [1, 4 + 4, N] of centre, size and four class
  scores in the input's pixels). Its boxes are PAGE's truth (from
  TRUTH): each balloon as class 0 (bubble) and its text as class 1
  (text), text on the art as class 2 (free text); a copy of each text box
  2 px aside with a lower score (to be suppressed), a box of class 3 (to
  be ignored) and one below any threshold. The scores go through the
  image (its mean times zero), so the graph runs on the page.
- detr.onnx: the same boxes in RT-DETR's layout (input stretched to 640 ×
  640, outputs `pred_boxes` [1, N, 4] in 0..1 and `logits` [1, N, 4]),
  without the copies.
- inpaint.onnx: an inpainter by normalised convolution (inputs `image`
  [1, 3, 256, 256] in 0..1 and `mask` [1, 1, 256, 256]; output in
  0..255): each masked pixel is the mean of the known pixels within 15
  px.
- boxes.json: the boxes the detectors hold, in the page's pixels.
"""

import json
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from PIL import Image

SIZE = 640
CLASSES = 4


def const(name, array):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(array, name + "_v"))


def through_image(nodes, name, array):
    """`array` + mean(images) * 0: a constant that the page flows into."""
    nodes.append(const(name + "_c", array.astype(np.float32)))
    nodes.append(const(name + "_zero", np.array(0.0, dtype=np.float32)))
    nodes.append(helper.make_node("ReduceMean", ["images"], [name + "_mean"], keepdims=0))
    nodes.append(helper.make_node("Mul", [name + "_mean", name + "_zero"], [name + "_none"]))
    nodes.append(helper.make_node("Add", [name + "_c", name + "_none"], [name]))


def save(graph, path):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, path)


def main():
    out, truth_path, page = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    out.mkdir(parents=True, exist_ok=True)
    truth = json.loads(truth_path.read_text())
    entry = next(p for p in truth["pages"] if p["name"] == page)
    width, height = Image.open(truth_path.parent / f"{page}.png").size
    # (x, y, w, h, class, score) in the page's pixels.
    boxes = []
    for b in entry["balloons"]:
        if b["kind"] == "balloon":
            boxes.append((*b["box"], 0, 0.92))
            boxes.append((*b["text_box"], 1, 0.88))
        else:
            boxes.append((*b["text_box"], 2, 0.81))
    copies = [(x + 2, y + 2, w, h, c, s - 0.2) for (x, y, w, h, c, s) in boxes if c != 0]
    extra = [(20, 20, 60, 60, 3, 0.9), (width - 120, 40, 80, 40, 1, 0.1)]
    (out / "boxes.json").write_text(json.dumps(boxes + extra))

    # YOLO: letterboxed, boxes in the input's pixels, channels first.
    k = min(SIZE / width, SIZE / height)
    dx, dy = (SIZE - round(width * k)) // 2, (SIZE - round(height * k)) // 2
    rows = []
    for (x, y, w, h, c, s) in boxes + copies + extra:
        scores = [0.01] * CLASSES
        scores[c] = s
        rows.append([(x + w / 2) * k + dx, (y + h / 2) * k + dy, w * k, h * k] + scores)
    yolo = np.array(rows, dtype=np.float32).T[None]
    nodes = []
    through_image(nodes, "output0", yolo)
    save(helper.make_graph(
        nodes, "yolo",
        [helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, SIZE, SIZE])],
        [helper.make_tensor_value_info("output0", TensorProto.FLOAT, list(yolo.shape))],
    ), out / "yolo.onnx")

    # DETR: boxes in 0..1 of the stretched input, class logits.
    detr = boxes + extra
    pred = np.array([[(x + w / 2) / width, (y + h / 2) / height, w / width, h / height]
                     for (x, y, w, h, _, _) in detr], dtype=np.float32)[None]
    logits = np.full((1, len(detr), CLASSES), -4.6, dtype=np.float32)
    for i, (_, _, _, _, c, s) in enumerate(detr):
        logits[0, i, c] = np.log(s / (1 - s))
    nodes = []
    through_image(nodes, "pred_boxes", pred)
    through_image(nodes, "logits", logits)
    save(helper.make_graph(
        nodes, "detr",
        [helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, SIZE, SIZE])],
        [helper.make_tensor_value_info("pred_boxes", TensorProto.FLOAT, list(pred.shape)),
         helper.make_tensor_value_info("logits", TensorProto.FLOAT, list(logits.shape))],
    ), out / "detr.onnx")

    # Inpainting by normalised convolution.
    n = 256
    nodes = [const("one", np.array(1.0, dtype=np.float32)),
             const("eps", np.array(1e-6, dtype=np.float32)),
             const("scale", np.array(255.0, dtype=np.float32)),
             helper.make_node("Sub", ["one", "mask"], ["known"])]
    image = "image"
    for r in range(1):
        pool = dict(kernel_shape=[31, 31], pads=[15, 15, 15, 15], strides=[1, 1])
        nodes += [
            helper.make_node("Mul", [image, "known"], [f"kept{r}"]),
            helper.make_node("AveragePool", [f"kept{r}"], [f"sum{r}"], **pool),
            helper.make_node("AveragePool", ["known"], [f"weight{r}"], **pool),
            helper.make_node("Add", [f"weight{r}", "eps"], [f"safe{r}"]),
            helper.make_node("Div", [f"sum{r}", f"safe{r}"], [f"mean{r}"]),
            helper.make_node("Mul", [f"mean{r}", "mask"], [f"fill{r}"]),
            helper.make_node("Add", [f"kept{r}", f"fill{r}"], [f"image{r}"]),
        ]
        image = f"image{r}"
    nodes.append(helper.make_node("Mul", [image, "scale"], ["output"]))
    save(helper.make_graph(
        nodes, "inpaint",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, n, n]),
         helper.make_tensor_value_info("mask", TensorProto.FLOAT, [1, 1, n, n])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 3, n, n])],
    ), out / "inpaint.onnx")


if __name__ == "__main__":
    main()
