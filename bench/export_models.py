#!/usr/bin/python3
# export_models.py - Exports the benchmark models to ONNX opset 13 with one reference input
# and PyTorch's output for it; skips what exists. Run with Debian's /usr/bin/python3.
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402


_saved = set()  # models whose weights this run wrote (--force writes each once)


def export_one(name, batch, force):
    import numpy as np
    import onnx
    import torch
    from onnx import numpy_helper

    onnx_path, in_path, out_path = models.paths(name, batch)
    wpath = models.weights_path(name)
    if not force and all(os.path.exists(p) for p in (onnx_path, in_path, out_path, wpath)):
        print("export: %s b%d exists" % (name, batch))
        return
    if (force and name not in _saved) or not os.path.exists(wpath):
        net = models.build(name, calibrate=True)
        torch.save(net.state_dict(), wpath)
        _saved.add(name)
    else:
        # Every batch of a model runs the same saved weights, whatever the build's float
        # reproducibility.
        net = models.build(name)
        net.load_state_dict(torch.load(wpath))
    shape = (batch,) + models.ZOO[name][0]
    # A per-variant seed so batch 1 and batch 8 inputs differ but stay reproducible.
    rng = np.random.default_rng(models.SEED + batch)
    x = rng.standard_normal(shape, dtype=np.float32)
    with torch.inference_mode():
        y = net(torch.from_numpy(x)).numpy()
    tmp = onnx_path + ".part"
    torch.onnx.export(net, torch.from_numpy(x), tmp, opset_version=13,
                      input_names=["input"], output_names=["output"],
                      do_constant_folding=True)
    onnx.checker.check_model(onnx.load(tmp))
    for path, arr, tname in ((in_path, x, "input"), (out_path, y, "output")):
        with open(path + ".part", "wb") as f:
            f.write(numpy_helper.from_array(np.ascontiguousarray(arr), tname)
                    .SerializeToString())
        os.replace(path + ".part", path)
    # The model last, so an interrupted export is redone rather than half-skipped.
    os.replace(tmp, onnx_path)
    print("export: %s b%d -> %s (output %s)" % (name, batch, os.path.basename(onnx_path),
                                                 "x".join(map(str, y.shape))))


def main():
    ap = argparse.ArgumentParser(description="Export the benchmark models to ONNX")
    ap.add_argument("--models", help="comma-separated subset of: " + ",".join(models.ZOO))
    ap.add_argument("--force", action="store_true", help="re-export even if files exist")
    args = ap.parse_args()
    names = args.models.split(",") if args.models else None
    for n in names or []:
        if n not in models.ZOO:
            sys.exit("export: unknown model '%s' (known: %s)" % (n, ",".join(models.ZOO)))
    os.makedirs(models.MODELS_DIR, exist_ok=True)
    import torch
    torch.set_num_threads(1)  # polite to a shared machine; export time does not matter
    for name, batch in models.variants(names):
        export_one(name, batch, args.force)


if __name__ == "__main__":
    main()
