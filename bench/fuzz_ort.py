#!/usr/bin/python3
# fuzz_ort.py - ONNX Runtime as a third opinion on the differential fuzzer's models: writes
# each seed's generated model and inputs (glowc-fuzz-diff --write), runs it on glowc's
# interpreter and on ONNX Runtime (onnxruntime-node from bench/node_modules, one node process
# serving every seed), and reports the outputs that disagree beyond the fuzzer's tolerance.
# A disagreement is a lead to analyse, not a glowc bug by default: ORT has its own
# approximations and its own reading of ONNX's corner cases (see docs/fuzzing.md).
#
#   bench/fuzz_ort.py --seed 1 --count 200 [--max-nodes 60] [--keep DIR] [--check]
#                     [--localize [--isolate]]
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# The ORT side: reads one JSON request per line ({"model", "inputs": [{name, dims, file}],
# "outdir"}), runs the model with raw float32 inputs, writes output k as outdir/ort_<k>.bin and
# answers {"outputs": [{"name", "dims"}]} or {"error"}.
SERVER_JS = r"""
'use strict';
const fs = require('fs');
const path = require('path');
const readline = require('readline');
const ort = require(path.join(process.argv[1], 'node_modules', 'onnxruntime-node'));
const rl = readline.createInterface({ input: process.stdin });
const queue = [];
let busy = false;
async function serve(line) {
  const req = JSON.parse(line);
  try {
    const session = await ort.InferenceSession.create(req.model, {
      executionProviders: ['cpu'], intraOpNumThreads: 1, interOpNumThreads: 1,
      graphOptimizationLevel: req.opt || 'all' });
    const feeds = {};
    for (const i of req.inputs) {
      const b = fs.readFileSync(i.file);
      const copy = Buffer.from(b);
      feeds[i.name] = new ort.Tensor('float32',
        new Float32Array(copy.buffer, copy.byteOffset, copy.length / 4), i.dims);
    }
    const res = await session.run(feeds);
    const outs = [];
    session.outputNames.forEach((n, k) => {
      const t = res[n];
      fs.writeFileSync(path.join(req.outdir, `ort_${k}.bin`), Buffer.from(t.data.buffer,
        t.data.byteOffset, t.data.byteLength));
      outs.push({ name: n, dims: t.dims });
    });
    await session.release();
    return { outputs: outs };
  } catch (e) {
    return { error: String(e.message || e).split('\n')[0] };
  }
}
async function pump() {
  if (busy) return;
  busy = true;
  while (queue.length) process.stdout.write(JSON.stringify(await serve(queue.shift())) + '\n');
  busy = false;
}
rl.on('line', (l) => { queue.push(l); pump(); });
"""


def log(msg):
    print(msg, flush=True)


def tolerance(depth):
    return 2e-5 * (4 + depth)  # as glowc-fuzz-diff (tests/fuzz/fuzz_run.c)


def compare(got, ref, tol):
    """None when got agrees with ref, else a one-line description of the first difference."""
    if got.shape != ref.shape:
        return f"shape {list(got.shape)} vs {list(ref.shape)}"
    g = got.astype(np.float64).ravel()
    r = ref.astype(np.float64).ravel()
    finite = r[np.isfinite(r)]
    rms = float(np.sqrt(np.mean(finite * finite))) if finite.size else 0.0
    with np.errstate(invalid="ignore"):
        same = (np.isnan(g) & np.isnan(r)) | (g == r) | (np.abs(g - r) <= tol * (np.abs(r) + rms))
    bad = np.flatnonzero(~same)
    if not bad.size:
        return None
    i = int(bad[0])
    return (f"{bad.size} of {r.size} differ, first [{i}] ort {g[i]:.9g} vs glowc {r[i]:.9g} "
            f"(rms {rms:.3g}, tol {tol:.2g})")


def ort_run(server, model_path, ins, outdir, opt="all"):
    server.stdin.write(json.dumps({"model": model_path, "inputs": ins, "outdir": outdir,
                                   "opt": opt}) + "\n")
    server.stdin.flush()
    return json.loads(server.stdout.readline())


def read_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def localize(a, server, d, depth):
    """Every node's value as a graph output, on glowc and on ORT without its graph
    optimizations: the first node (in graph order) whose output disagrees, and whether ORT
    with its optimizations agrees with itself there. Returns a one-line description."""
    model = onnx.shape_inference.infer_shapes(onnx.load(os.path.join(d, "model.onnx")))
    known = {v.name: v for v in list(model.graph.value_info) + list(model.graph.output)}
    del model.graph.output[:]
    names = []
    for n in model.graph.node:
        if n.output[0] in known:
            model.graph.output.append(known[n.output[0]])
            names.append((n.output[0], n.op_type))
    path = os.path.join(d, "all.onnx")
    onnx.save(model, path)
    inits = {t.name for t in model.graph.initializer}
    fed = [i for i in model.graph.input if i.name not in inits]
    ins, files = [], []
    for k, i in enumerate(fed):
        files.append(os.path.join(d, f"input_{k}.pb"))
        ins.append({"name": i.name, "dims": list(read_pb(files[-1]).shape),
                    "file": os.path.join(d, f"input_{k}.bin")})
    g = subprocess.run([a.glowc, "run", path, *files, "--backend", a.backend,
                        "--output-dir", os.path.join(d, "glowc_all")],
                       capture_output=True, text=True)
    if g.returncode != 0:
        return "glowc cannot run the all-outputs model: " + g.stderr.strip()[:200]
    outs = {}
    for opt in ("disabled", "all"):
        od = os.path.join(d, "ort_" + opt)
        os.makedirs(od, exist_ok=True)
        r = ort_run(server, path, ins, od, opt)
        if "error" in r:
            outs[opt] = r["error"][:200]
            continue
        outs[opt] = [np.fromfile(os.path.join(od, f"ort_{k}.bin"),
                                 dtype=np.float32).reshape(o["dims"])
                     for k, o in enumerate(r["outputs"])]
    if isinstance(outs["disabled"], str):
        return "ORT without optimizations fails too: " + outs["disabled"]
    for k, (name, op) in enumerate(names):
        ref = read_pb(os.path.join(d, "glowc_all", f"output_{k}.pb"))
        diff = compare(outs["disabled"][k], ref, tolerance(depth))
        if diff:
            node = next(n for n in model.graph.node if n.output[0] == name)
            attrs = " ".join(f"{x.name}={onnx.helper.get_attribute_value(x)}"
                             for x in node.attribute)
            opt_note = ("ORT's own optimizations disagree with it as well"
                        if not isinstance(outs["all"], str) and
                        compare(outs["all"][k], ref, tolerance(depth)) else
                        "ORT optimized agrees with glowc")
            line = f"first at {op} {name} ({attrs}): {diff}; {opt_note}"
            if a.isolate:
                line += "\n  " + isolate(a, server, d, model, node, names, outs["disabled"],
                                          depth)
            return line
    return ("no node differs with ORT's optimizations disabled: the difference comes from "
            "ORT's graph optimizations" + ("" if not isinstance(outs["all"], str)
                                            else f" (optimized ORT: {outs['all']})"))


def isolate(a, server, d, model, node, names, ort_vals, depth):
    """Runs `node` alone on glowc's values of its inputs and on ORT's (from the all-outputs
    runs), on both sides: tells a difference in the node's own semantics (it stays when both
    get the same inputs) from an upstream difference within the tolerance that the node
    amplifies (glowc on ORT's inputs then gives ORT's output)."""
    inits = {t.name: t for t in model.graph.initializer}
    idx = {name: k for k, (name, _) in enumerate(names)}
    fed = [i.name for i in model.graph.input if i.name not in inits]
    def value(x, side):
        if x in idx:
            if side == "ort":
                return ort_vals[idx[x]]
            return read_pb(os.path.join(d, "glowc_all", f"output_{idx[x]}.pb"))
        return read_pb(os.path.join(d, f"input_{fed.index(x)}.pb"))
    ins = [x for x in node.input if x and x not in inits]
    known = {v.name: v for v in list(model.graph.value_info) + list(model.graph.output)}
    graph = onnx.helper.make_graph(
        [node], "isolated",
        [onnx.helper.make_tensor_value_info(x, onnx.TensorProto.FLOAT,
                                            list(value(x, "glowc").shape)) for x in ins],
        [known[node.output[0]]], [inits[x] for x in node.input if x in inits])
    iso = os.path.join(d, "isolated")
    os.makedirs(iso, exist_ok=True)
    path = os.path.join(iso, "model.onnx")
    onnx.save(onnx.helper.make_model(graph, opset_imports=model.opset_import), path)
    res = {}
    for side in ("glowc", "ort"):
        files, reqs = [], []
        for k, x in enumerate(ins):
            arr = value(x, side).astype(np.float32)
            pb = os.path.join(iso, f"{side}_in_{k}.pb")
            with open(pb, "wb") as f:
                f.write(numpy_helper.from_array(arr, x).SerializeToString())
            raw = os.path.join(iso, f"{side}_in_{k}.bin")
            arr.tofile(raw)
            files.append(pb)
            reqs.append({"name": x, "dims": list(arr.shape), "file": raw})
        out = os.path.join(iso, f"glowc_on_{side}")
        g = subprocess.run([a.glowc, "run", path, *files, "--backend", a.backend,
                            "--output-dir", out], capture_output=True, text=True)
        if g.returncode != 0:
            return "isolated: glowc cannot run the node alone: " + g.stderr.strip()[:200]
        od = os.path.join(iso, f"ort_on_{side}")
        os.makedirs(od, exist_ok=True)
        r = ort_run(server, path, reqs, od, "disabled")
        if "error" in r:
            return "isolated: ORT cannot run the node alone: " + r["error"][:200]
        res[side] = (read_pb(os.path.join(out, "output_0.pb")),
                     np.fromfile(os.path.join(od, "ort_0.bin"),
                                 dtype=np.float32).reshape(r["outputs"][0]["dims"]))
    tol = tolerance(depth)
    same = [side for side in ("glowc", "ort")
            if not compare(res[side][1], res[side][0], tol)]
    if len(same) == 2:
        return ("isolated: glowc and ORT agree on the same inputs (both sides'): the inputs "
                "differ upstream within the tolerance and the node amplifies it")
    return ("isolated: on the same inputs they still differ (" +
            ", ".join(f"{side}'s inputs: {compare(res[side][1], res[side][0], tol) or 'agree'}"
                      for side in ("glowc", "ort")) + "): the node's own semantics")


def main():
    ap = argparse.ArgumentParser(description="glowc's fuzzer models on ONNX Runtime as well")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=50)
    ap.add_argument("--glowc", default=os.environ.get("GLOWC_BIN",
                                                      os.path.join(ROOT, "build/release/glowc")))
    ap.add_argument("--fuzz", default=os.path.join(ROOT, "build/release/tests/glowc-fuzz-diff"),
                    help="the glowc-fuzz-diff binary")
    ap.add_argument("--backend", default="interpreter", help="glowc backend to compare")
    ap.add_argument("--keep", help="keep disagreeing seeds' folders here")
    ap.add_argument("--check", action="store_true", help="also run onnx.checker on each model")
    ap.add_argument("--localize", action="store_true",
                    help="on a disagreement, run every node's value on both sides (ORT with and "
                         "without its graph optimizations) and name the first node that differs")
    ap.add_argument("--isolate", action="store_true",
                    help="with --localize: run the first differing node alone on both sides' "
                         "values of its inputs, to tell its own semantics from an amplified "
                         "upstream difference")
    a = ap.parse_args()

    work = tempfile.mkdtemp(prefix="glowc-fuzz-ort.")
    server = subprocess.Popen(["node", "-e", SERVER_JS, "--", HERE], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    counts = {"agree": 0, "disagree": 0, "ort_error": 0, "glowc_error": 0, "checker": 0}
    findings = []
    for seed in range(a.seed, a.seed + a.count):
        d = os.path.join(work, f"seed{seed}")
        w = subprocess.run([a.fuzz, "--write", str(seed), d], capture_output=True, text=True)
        depth = int(re.search(r"depth (\d+)", w.stdout).group(1))
        model_path = os.path.join(d, "model.onnx")
        model = onnx.load(model_path)
        if a.check:
            try:
                onnx.checker.check_model(model, full_check=True)
            except Exception as e:  # noqa: BLE001 - any checker complaint is a finding
                counts["checker"] += 1
                findings.append((seed, "checker", str(e).splitlines()[0]))
        inits = {t.name for t in model.graph.initializer}
        fed = [i for i in model.graph.input if i.name not in inits]
        ins, files = [], []
        for k, i in enumerate(fed):
            pb = os.path.join(d, f"input_{k}.pb")
            files.append(pb)
            t = onnx.TensorProto()
            with open(pb, "rb") as f:
                t.ParseFromString(f.read())
            arr = numpy_helper.to_array(t).astype(np.float32)
            raw = os.path.join(d, f"input_{k}.bin")
            arr.tofile(raw)
            ins.append({"name": i.name, "dims": list(arr.shape), "file": raw})
        g = subprocess.run([a.glowc, "run", model_path, *files, "--backend", a.backend,
                            "--output-dir", os.path.join(d, "glowc")],
                           capture_output=True, text=True)
        reply = ort_run(server, model_path, ins, d)
        verdict, why = "agree", ""
        if g.returncode != 0:
            verdict, why = "glowc_error", g.stderr.strip().splitlines()[0]
        elif "error" in reply:
            verdict, why = "ort_error", reply["error"]
        else:
            for k, o in enumerate(reply["outputs"]):
                got = np.fromfile(os.path.join(d, f"ort_{k}.bin"), dtype=np.float32)
                got = got.reshape(o["dims"])
                t = onnx.TensorProto()
                with open(os.path.join(d, "glowc", f"output_{k}.pb"), "rb") as f:
                    t.ParseFromString(f.read())
                diff = compare(got, numpy_helper.to_array(t), tolerance(depth))
                if diff:
                    verdict, why = "disagree", f"output {k} ({o['name']}): {diff}"
                    break
        counts[verdict] += 1
        log(f"seed {seed}: {verdict}{': ' + why if why else ''}")
        if a.localize and verdict in ("disagree", "ort_error"):
            log("  " + localize(a, server, d, depth))
        if verdict != "agree":
            findings.append((seed, verdict, why))
            if a.keep:
                shutil.copytree(d, os.path.join(a.keep, f"seed{seed}"), dirs_exist_ok=True)
        shutil.rmtree(d, ignore_errors=True)
    server.stdin.close()
    server.wait()
    shutil.rmtree(work, ignore_errors=True)
    log(f"{a.count} seeds vs ONNX Runtime: " + ", ".join(f"{v} {k}" for k, v in counts.items()))
    return 0 if counts["agree"] == a.count else 1


if __name__ == "__main__":
    sys.exit(main())
