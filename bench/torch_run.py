#!/usr/bin/python3
# torch_run.py - Times one benchmark model in PyTorch eager mode (the exported weights, inference
# mode, N threads) and prints JSON like ort_run.js: latency, error vs reference, peak RSS.
import argparse
import json
import os
import resource
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402


def peak_rss_bytes():
    """VmHWM: this program's own high-water mark. ru_maxrss also keeps that of the process
    that exec'd us (the harness), so it is only the fallback (KiB on Linux)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def main():
    ap = argparse.ArgumentParser(description="PyTorch eager timing of one benchmark model")
    ap.add_argument("model", help="model name: " + ",".join(models.ZOO))
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--max-seconds", type=float, default=0)
    a = ap.parse_args()
    if a.model not in models.ZOO:
        sys.exit("torch_run: unknown model '%s'" % a.model)

    # Before torch loads the BLAS: OpenBLAS sizes its pool from these at load time.
    os.environ["OMP_NUM_THREADS"] = str(a.threads)
    os.environ["OPENBLAS_NUM_THREADS"] = str(a.threads)
    import numpy as np
    import onnx
    import torch
    from onnx import numpy_helper

    torch.set_num_threads(a.threads)
    torch.set_num_interop_threads(1)
    _, in_path, out_path = models.paths(a.model, a.batch)
    t0 = time.perf_counter()
    net = models.build(a.model)
    net.load_state_dict(torch.load(models.weights_path(a.model)))
    setup_ms = (time.perf_counter() - t0) * 1e3
    x = torch.from_numpy(numpy_helper.to_array(onnx.load_tensor(in_path)).copy())
    lat = []
    spent, budget_hit, y = 0.0, False, None
    total = a.warmup + a.iterations
    with torch.inference_mode():
        for k in range(total):
            s = time.perf_counter()
            y = net(x)
            ms = (time.perf_counter() - s) * 1e3
            if k >= a.warmup:
                lat.append(ms)
            spent += ms
            if a.max_seconds > 0 and spent >= a.max_seconds * 1e3 and lat and k + 1 < total:
                budget_hit = True
                break
    ref = numpy_helper.to_array(onnx.load_tensor(out_path)).astype(np.float64)
    err = np.abs(y.numpy().astype(np.float64) - ref)
    max_abs = float(err.max()) if err.size else 0.0
    max_ref = float(np.abs(ref).max()) if ref.size else 0.0
    srt = sorted(lat)
    n = len(srt)
    med = srt[n // 2] if n % 2 else (srt[n // 2 - 1] + srt[n // 2]) / 2
    out = {
        "system": "pytorch", "version": torch.__version__, "model": a.model,
        "threads": a.threads, "batch": a.batch, "warmup": a.warmup, "iterations": n,
        "budget_hit": budget_hit, "session_ms": setup_ms,
        "latency_ms": {"min": srt[0], "median": med, "max": srt[-1]},
        "latencies_ms": lat,
        "check": {"max_abs_err": max_abs,
                  "max_rel_err": max_abs / max_ref if max_ref > 0 else max_abs},
        "peak_rss_bytes": peak_rss_bytes(),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
