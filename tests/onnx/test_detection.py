# test_detection.py - A detection-style model end to end (issue 21, docs/dynamic-shapes.md): a
# small conv backbone with box and score heads, exported by torch (Debian's python3-torch),
# followed by ONNX nodes added with python3-onnx, as exporters of detection models write them:
# NonMaxSuppression, its box column taken with a Gather (torch's `selected[:, 2]`) and its class
# column with a Slice and a Squeeze, then the kept boxes gathered by box index and the kept
# scores by the flat index class * boxes + box (arithmetic on a data-dependent value). glowc
# compiles and runs it on the interpreter and the cpu backend. Its boxes and scores are compared
# with torch's. Its selected indices (a data-dependent shape) are compared with a NumPy NMS of
# torch's boxes and scores, which is itself checked against torchvision.ops.nms when torchvision
# is there; the kept boxes, scores and classes with NumPy indexing of torch's results by them. A
# bundle must refuse the model with its one-line reason. Exits 77 (skipped) without torch or
# onnx.
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import onnx
    import torch
    from onnx import helper, numpy_helper, TensorProto
except ImportError as e:
    print(f"skipped: python3-torch, python3-onnx or numpy is missing ({e})")
    sys.exit(77)

GLOWC = os.environ.get("GLOWC_BIN", "build/release/glowc")
MAX_PER_CLASS, IOU, SCORE = 20, 0.4, 0.5
NOUT = 6   # boxes, scores, selected, kept_boxes, kept_scores, kept_classes
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


class Detector(torch.nn.Module):
    """Two stride-2 convs to an 8x8 grid, then per cell one box (y1, x1, y2, x2, in cell units
    around the cell's center) and two class scores."""

    def __init__(self):
        super().__init__()
        self.body = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, stride=2, padding=1), torch.nn.ReLU(),
            torch.nn.Conv2d(8, 16, 3, stride=2, padding=1), torch.nn.ReLU())
        self.box = torch.nn.Conv2d(16, 4, 1)
        self.cls = torch.nn.Conv2d(16, 2, 1)
        ys, xs = torch.meshgrid(torch.arange(8.0), torch.arange(8.0), indexing="ij")
        self.register_buffer("cy", ys.reshape(1, 64) + 0.5)
        self.register_buffer("cx", xs.reshape(1, 64) + 0.5)

    def forward(self, x):
        f = self.body(x)
        d = self.box(f).flatten(2).transpose(1, 2)               # [1, 64, 4]
        cy = self.cy + torch.tanh(d[..., 0])
        cx = self.cx + torch.tanh(d[..., 1])
        h = 1 + 3 * torch.sigmoid(d[..., 2])
        w = 1 + 3 * torch.sigmoid(d[..., 3])
        boxes = torch.stack([cy - h / 2, cx - w / 2, cy + h / 2, cx + w / 2], dim=-1)
        scores = torch.sigmoid(self.cls(f).flatten(2))           # [1, 2, 64]
        return boxes, scores


def iou(a, b):
    ih = min(a[2], b[2]) - max(a[0], b[0])
    iw = min(a[3], b[3]) - max(a[1], b[1])
    if ih <= 0 or iw <= 0:
        return 0.0
    inter = ih * iw
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)


def nms_reference(boxes, scores):
    """ONNX NonMaxSuppression (corner boxes); also returns the closest call it made (the
    smallest distance of a score to the score threshold or of an IoU to the IoU threshold), so a
    float difference between torch and glowc cannot flip a decision unnoticed."""
    rows, margin = [], np.inf
    for b in range(scores.shape[0]):
        for c in range(scores.shape[1]):
            s = scores[b, c].astype(np.float64)
            margin = min(margin, np.min(np.abs(s - SCORE)))
            order = [i for i in np.argsort(-s, kind="stable") if s[i] > SCORE]
            kept = []
            for i in order:
                if len(kept) == MAX_PER_CLASS:
                    break
                overlaps = [iou(boxes[b, i], boxes[b, j]) for j in kept]
                margin = min([margin] + [abs(o - IOU) for o in overlaps])
                if all(o <= IOU for o in overlaps):
                    kept.append(i)
            rows += [[b, c, i] for i in kept]
    return np.array(rows, dtype=np.int64).reshape(-1, 3), margin


def torchvision_check(boxes, scores, want):
    try:
        import torchvision
    except ImportError:
        print("torchvision not found: the NumPy reference is not cross-checked")
        return
    rows = []
    for c in range(scores.shape[1]):
        s = torch.from_numpy(scores[0, c])
        idx = torch.nonzero(s > SCORE).flatten()
        yx = torch.from_numpy(boxes[0])[idx]
        xyxy = yx[:, [1, 0, 3, 2]]
        keep = torchvision.ops.nms(xyxy, s[idx], IOU)[:MAX_PER_CLASS]
        rows += [[0, c, int(idx[k])] for k in keep]
    got = np.array(rows, dtype=np.int64).reshape(-1, 3)
    check(np.array_equal(got, want), f"torchvision.ops.nms gives {got.tolist()}, the NumPy "
          f"reference {want.tolist()}")


def export(path, x):
    torch.manual_seed(7)
    net = Detector().eval()
    with torch.no_grad():
        boxes, scores = net(torch.from_numpy(x))
    base = path + ".base.onnx"
    torch.onnx.export(net, torch.from_numpy(x), base, opset_version=13,
                      input_names=["image"], output_names=["boxes", "scores"])
    m = onnx.load(base)
    g = m.graph
    g.initializer.extend([
        numpy_helper.from_array(np.array([MAX_PER_CLASS], np.int64), "max_per_class"),
        numpy_helper.from_array(np.array([IOU], np.float32), "iou_threshold"),
        numpy_helper.from_array(np.array([SCORE], np.float32), "score_threshold")])
    g.initializer.extend([
        numpy_helper.from_array(np.array(2, np.int64), "two"),
        numpy_helper.from_array(np.array([1], np.int64), "one_1"),
        numpy_helper.from_array(np.array([2], np.int64), "two_1"),
        numpy_helper.from_array(np.array([0], np.int64), "axis0"),
        numpy_helper.from_array(np.array([-1], np.int64), "flat"),
        numpy_helper.from_array(np.array(boxes.shape[1], np.int64), "nboxes")])
    g.node.extend([
        helper.make_node("NonMaxSuppression", ["boxes", "scores", "max_per_class",
                                               "iou_threshold", "score_threshold"],
                         ["selected"], name="nms", center_point_box=0),
        helper.make_node("Gather", ["selected", "two"], ["box_index"], name="box_col", axis=1),
        helper.make_node("Slice", ["selected", "one_1", "two_1", "one_1"], ["cls_col"],
                         name="cls_slice"),
        helper.make_node("Squeeze", ["cls_col", "one_1"], ["kept_classes"], name="cls_squeeze"),
        helper.make_node("Squeeze", ["boxes", "axis0"], ["boxes_2d"], name="boxes_2d"),
        helper.make_node("Gather", ["boxes_2d", "box_index"], ["kept_boxes"], name="keep_boxes",
                         axis=0),
        helper.make_node("Reshape", ["scores", "flat"], ["scores_flat"], name="scores_flat"),
        helper.make_node("Mul", ["kept_classes", "nboxes"], ["cls_base"], name="cls_base"),
        helper.make_node("Add", ["cls_base", "box_index"], ["score_index"], name="score_index"),
        helper.make_node("Gather", ["scores_flat", "score_index"], ["kept_scores"],
                         name="keep_scores", axis=0)])
    g.output.extend([
        helper.make_tensor_value_info("selected", TensorProto.INT64, ["num_selected", 3]),
        helper.make_tensor_value_info("kept_boxes", TensorProto.FLOAT, ["num_selected", 4]),
        helper.make_tensor_value_info("kept_scores", TensorProto.FLOAT, ["num_selected"]),
        helper.make_tensor_value_info("kept_classes", TensorProto.INT64, ["num_selected"])])
    onnx.checker.check_model(m)
    onnx.save(m, path)
    return boxes.numpy(), scores.numpy()


def run_glowc(model, inp, backend, outdir):
    r = subprocess.run([GLOWC, "run", model, inp, "--backend", backend, "--output-dir", outdir],
                       capture_output=True, text=True)
    check(r.returncode == 0, f"glowc run --backend {backend}: exit {r.returncode}: {r.stderr}")
    outs = []
    for i in range(NOUT):
        p = os.path.join(outdir, f"output_{i}.pb")
        if os.path.exists(p):
            t = onnx.TensorProto()
            with open(p, "rb") as f:
                t.ParseFromString(f.read())
            outs.append(numpy_helper.to_array(t))
    return outs


def main():
    with tempfile.TemporaryDirectory(prefix="glowc-detect-") as tmp:
        x = np.random.default_rng(3).standard_normal((1, 3, 32, 32)).astype(np.float32)
        model = os.path.join(tmp, "detector.onnx")
        boxes, scores = export(model, x)
        want, margin = nms_reference(boxes, scores)
        above = int(np.sum(scores > SCORE))
        print(f"reference: {len(want)} boxes selected of the {above} above the score threshold "
              f"({scores.shape[1]} classes x {scores.shape[2]} boxes); closest call {margin:.2e}")
        check(margin > 1e-4, f"a reference decision is within {margin:.1e} of a threshold: "
              "change the seed")
        check(0 < len(want) < above, f"the model selects {len(want)} of the {above} boxes above "
              "the score threshold; the test needs some suppressed by overlap and some kept")
        torchvision_check(boxes, scores, want)
        inp = os.path.join(tmp, "image.pb")
        with open(inp, "wb") as f:
            f.write(numpy_helper.from_array(x, "image").SerializeToString())
        for backend in ("interpreter", "cpu"):
            outdir = os.path.join(tmp, "out_" + backend)
            outs = run_glowc(model, inp, backend, outdir)
            if len(outs) != NOUT:
                check(False, f"{backend}: {len(outs)} outputs, expected {NOUT}")
                continue
            check(np.allclose(outs[0], boxes, rtol=1e-4, atol=1e-5), f"{backend}: boxes differ")
            check(np.allclose(outs[1], scores, rtol=1e-4, atol=1e-5), f"{backend}: scores differ")
            check(outs[2].dtype == np.int64 and outs[2].shape == want.shape,
                  f"{backend}: selected is {outs[2].dtype}{list(outs[2].shape)}, expected "
                  f"int64{list(want.shape)}")
            check(np.array_equal(outs[2], want), f"{backend}: selected {outs[2].tolist()}, "
                  f"expected {want.tolist()}")
            # The kept values, from torch's boxes and scores by the reference's selection.
            kb = boxes[want[:, 0], want[:, 2]]
            ks = scores[want[:, 0], want[:, 1], want[:, 2]]
            for got, ref, what in ((outs[3], kb, "kept boxes"), (outs[4], ks, "kept scores")):
                check(got.dtype == np.float32 and got.shape == ref.shape,
                      f"{backend}: {what} are {got.dtype}{list(got.shape)}, expected "
                      f"float32{list(ref.shape)}")
                check(got.shape == ref.shape and np.allclose(got, ref, rtol=1e-4, atol=1e-5),
                      f"{backend}: {what} differ: {got.tolist()} vs {ref.tolist()}")
            check(np.array_equal(outs[5], want[:, 1]), f"{backend}: kept classes "
                  f"{outs[5].tolist()}, expected {want[:, 1].tolist()}")
        r = subprocess.run([GLOWC, "compile", model, "--emit-bundle", os.path.join(tmp, "b")],
                           capture_output=True, text=True)
        check(r.returncode != 0 and "data-dependent result shape" in r.stderr,
              f"the bundle is not refused with its reason (exit {r.returncode}): {r.stderr}")
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("detection: boxes, scores, NonMaxSuppression and the kept boxes, scores and classes "
          "match on interpreter and cpu")
    return 0


if __name__ == "__main__":
    sys.exit(main())
