#!/usr/bin/python3
# quant_accuracy.py - What int8 costs in accuracy on the bench models: each model is profiled
# on seeded random calibration inputs, then run in float and in int8 on 100 other seeded inputs
# with `glowc run --quantize PROFILE --compare-float` (top-1 agreement, output SNR, errors),
# once per calibration (minmax, kl). Not a test: a report, like the rest of bench/.
#
#     /usr/bin/python3 bench/quant_accuracy.py [--models resnet50,...] [--samples 100]
#         [--calib 8] [--quant-args='--per-channel'] [--glowc PATH] [--out DIR]
#
# Needs the exported models (bench/export_models.py) and numpy.
import argparse
import os
import re
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import models  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description="int8 accuracy of the bench models (see the header)")
    ap.add_argument("--models", default="resnet50,googlenet,mobilenet_v2,squeezenet1_1")
    ap.add_argument("--samples", type=int, default=100)
    ap.add_argument("--calib", type=int, default=8)
    ap.add_argument("--quant-args", default="--per-channel")
    ap.add_argument("--glowc", default=os.environ.get("GLOWC_BIN", os.path.join(
        HERE, "..", "build", "release", "glowc")))
    ap.add_argument("--out", default="/tmp/glowc_quant_accuracy")
    ap.add_argument("--backend", default="cpu")
    a = ap.parse_args()
    print("| model | calibration | top-1 agreement | SNR dB | max abs err | mean abs err |")
    print("|---|---|---|---|---|---|")
    for name in a.models.split(","):
        m, _, _ = models.paths(name, 1)
        d = os.path.join(a.out, name)
        os.makedirs(os.path.join(d, "calib"), exist_ok=True)
        os.makedirs(os.path.join(d, "eval"), exist_ok=True)
        shape = (1,) + models.ZOO[name][0]
        # Calibration and evaluation inputs come from different seeds.
        rng = np.random.default_rng(1)
        for k in range(a.calib):
            np.save(os.path.join(d, "calib", "c%03d.npy" % k),
                    rng.standard_normal(shape).astype(np.float32))
        rng = np.random.default_rng(2)
        for k in range(a.samples):
            np.save(os.path.join(d, "eval", "e%03d.npy" % k),
                    rng.standard_normal(shape).astype(np.float32))
        prof = os.path.join(d, "profile.json")
        subprocess.run([a.glowc, "profile", m, os.path.join(d, "calib"), "-o", prof],
                       check=True, capture_output=True)
        for calib in ("minmax", "kl"):
            r = subprocess.run([a.glowc, "run", m, "--backend", a.backend, "--quantize", prof,
                                "--calibration", calib] + a.quant_args.split() +
                               ["--compare-float", os.path.join(d, "eval")],
                               capture_output=True, text=True)
            if r.returncode:
                print("| %s | %s | failed: %s |" % (name, calib, r.stderr.strip()[:100]))
                continue
            row = r.stdout.strip().splitlines()[-1].split()
            # output max mean snr agree/total (pct)
            agree = " ".join(row[4:])
            print("| %s | %s | %s | %s | %s | %s |" % (name, calib, agree, row[3], row[1],
                                                      row[2]))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
