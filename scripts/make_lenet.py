#!/usr/bin/python3
# make_lenet.py - Regenerates models/lenet.onnx, lenet_input.pb and lenet_output.pb.
#
# The model is a LeNet-style CNN on a 1x1x28x28 image with fixed-seed random weights, so the
# repository ships a small model that exercises the common CNN ops (Conv, Relu, MaxPool,
# Flatten, Gemm, Softmax) at opset 13. The files are committed; this script only exists to
# regenerate them, so neither setup nor the tests need Python.
#
# Requires Debian's python3-onnx and python3-numpy:  /usr/bin/python3 scripts/make_lenet.py
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models")
SEED = 20240601


def he_init(rng, shape, fan_in):
    # He-normal keeps activations in a sane range through the Relus, so the Softmax output is
    # not a one-hot vector and comparisons of later milestones remain meaningful.
    return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)


def make_weights(rng):
    return {
        "conv1.w": he_init(rng, (6, 1, 5, 5), 25),
        "conv1.b": (rng.standard_normal(6) * 0.1).astype(np.float32),
        "conv2.w": he_init(rng, (16, 6, 5, 5), 150),
        "conv2.b": (rng.standard_normal(16) * 0.1).astype(np.float32),
        "fc1.w": he_init(rng, (120, 400), 400),
        "fc1.b": (rng.standard_normal(120) * 0.1).astype(np.float32),
        "fc2.w": he_init(rng, (10, 120), 120),
        "fc2.b": (rng.standard_normal(10) * 0.1).astype(np.float32),
    }


def make_model(w):
    nodes = [
        helper.make_node("Conv", ["input", "conv1.w", "conv1.b"], ["conv1"], name="conv1",
                         kernel_shape=[5, 5], pads=[2, 2, 2, 2]),
        helper.make_node("Relu", ["conv1"], ["relu1"], name="relu1"),
        helper.make_node("MaxPool", ["relu1"], ["pool1"], name="pool1",
                         kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["pool1", "conv2.w", "conv2.b"], ["conv2"], name="conv2",
                         kernel_shape=[5, 5]),
        helper.make_node("Relu", ["conv2"], ["relu2"], name="relu2"),
        helper.make_node("MaxPool", ["relu2"], ["pool2"], name="pool2",
                         kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["pool2"], ["flat"], name="flatten", axis=1),
        helper.make_node("Gemm", ["flat", "fc1.w", "fc1.b"], ["fc1"], name="fc1", transB=1),
        helper.make_node("Relu", ["fc1"], ["relu3"], name="relu3"),
        helper.make_node("Gemm", ["relu3", "fc2.w", "fc2.b"], ["fc2"], name="fc2", transB=1),
        helper.make_node("Softmax", ["fc2"], ["probs"], name="softmax", axis=1),
    ]
    graph = helper.make_graph(
        nodes, "lenet",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 1, 28, 28])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, 10])],
        initializer=[numpy_helper.from_array(v, name=k) for k, v in w.items()])
    model = helper.make_model(graph, producer_name="glowc/scripts/make_lenet.py",
                              producer_version="1",
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    return model


# --- A plain NumPy reference, so the expected output ships beside the input. ---

def conv2d(x, w, b, pad):
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, c, h, wd = x.shape
    k = w.shape[2]
    oh, ow = h - k + 1, wd - k + 1
    out = np.zeros((n, w.shape[0], oh, ow), dtype=np.float64)
    for i in range(k):
        for j in range(k):
            patch = x[:, :, i:i + oh, j:j + ow]
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j])
    return out + b.reshape(1, -1, 1, 1)


def maxpool2(x):
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def reference(w, x):
    y = np.maximum(conv2d(x.astype(np.float64), w["conv1.w"], w["conv1.b"], 2), 0)
    y = maxpool2(y)
    y = np.maximum(conv2d(y, w["conv2.w"], w["conv2.b"], 0), 0)
    y = maxpool2(y).reshape(1, -1)
    y = np.maximum(y @ w["fc1.w"].T + w["fc1.b"], 0)
    y = y @ w["fc2.w"].T + w["fc2.b"]
    e = np.exp(y - y.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


def make_input(rng):
    # A soft ring, roughly a hand-written zero, plus a little noise.
    yy, xx = np.mgrid[0:28, 0:28].astype(np.float32)
    r = np.sqrt(((yy - 14) / 9.0) ** 2 + ((xx - 14) / 6.0) ** 2)
    img = np.exp(-((r - 1.0) ** 2) / 0.05) + 0.05 * rng.random((28, 28))
    return np.clip(img, 0, 1).astype(np.float32).reshape(1, 1, 28, 28)


def main():
    rng = np.random.default_rng(SEED)
    w = make_weights(rng)
    model = make_model(w)
    x = make_input(rng)
    y = reference(w, x)
    os.makedirs(OUT_DIR, exist_ok=True)
    onnx.save(model, os.path.join(OUT_DIR, "lenet.onnx"))
    with open(os.path.join(OUT_DIR, "lenet_input.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, name="input").SerializeToString())
    with open(os.path.join(OUT_DIR, "lenet_output.pb"), "wb") as f:
        f.write(numpy_helper.from_array(y, name="probs").SerializeToString())
    print("wrote lenet.onnx, lenet_input.pb, lenet_output.pb to", os.path.normpath(OUT_DIR))
    print("expected probs:", np.array2string(y[0], precision=4))
    return 0


if __name__ == "__main__":
    sys.exit(main())
