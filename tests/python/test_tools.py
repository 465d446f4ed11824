# test_tools.py - The compiler-side calls of the Python package (python/glowc): Session.info(),
# glowc.profile and glowc.compile_bundle, each against what the glowc CLI (a client of the
# same C calls) writes for the same model: the same profile bytes and the same bundle files.
# Run by CTest with /usr/bin/python3, GLOWC_LIBRARY at the build's libglowc.so, PYTHONPATH at
# python/ and GLOWC_BIN at the CLI.
import os
import subprocess
import tempfile

import numpy as np

import glowc

from checks import check, done, raises


def same(a, b):
    with open(a, "rb") as fa, open(b, "rb") as fb:
        return fa.read() == fb.read()


GLOWC = os.environ["GLOWC_BIN"]
LENET = "models/lenet.onnx"
with open("models/lenet_input.pb", "rb") as f:
    image = np.frombuffer(f.read()[-4 * 784:], dtype="<f4").reshape(1, 1, 28, 28)

# Session.info: the regions and what compiling cost.
s = glowc.Session(LENET, backend="cpu", threads=1)
info = s.info()
check(info["backend"] == "cpu" and info["threads"] == 1, "info %r" % info)
check(200000 < info["constant_bytes"] < 300000, "constant bytes %r" % info)
check(info["mutable_bytes"] >= (784 + 10) * 4 and info["activation_bytes"] > 0, "regions")
check(info["compile_ms"] > 0 and info["load_ms"] > 0, "times %r" % info)
check(info["fallbacks"] == 0 and info["code_cached"] is False, "fallbacks, cache %r" % info)
# The struct's last fields: a ctypes mirror shorter than the C struct let the library write
# past it (heap corruption that crashed the interpreter at exit).
check(info["code_bytes"] > 0 and info["codegen_anon_bytes"] >= 0, "jit memory %r" % info)
s.close()

with tempfile.TemporaryDirectory(prefix="glowc_test_tools.") as tmp:
    # A profile from two samples (as a dict and as a list), the CLI's bytes for the same.
    mine = os.path.join(tmp, "mine.json")
    n = glowc.profile(LENET, [{"input": image}, [image * 0.5]], mine, threads=2)
    check(n == 18, "profile values %d" % n)
    np.save(os.path.join(tmp, "a.npy"), image)
    np.save(os.path.join(tmp, "b.npy"), image * 0.5)
    samples = os.path.join(tmp, "samples")
    os.mkdir(samples)
    os.rename(os.path.join(tmp, "a.npy"), os.path.join(samples, "a.npy"))
    os.rename(os.path.join(tmp, "b.npy"), os.path.join(samples, "b.npy"))
    cli = os.path.join(tmp, "cli.json")
    r = subprocess.run([GLOWC, "profile", LENET, samples, "-o", cli], capture_output=True,
                       text=True)
    check(r.returncode == 0, "glowc profile: %s" % r.stderr)
    check(r.returncode == 0 and same(mine, cli), "profile bytes differ from the CLI's")
    q = glowc.Session(LENET, backend="cpu", quantize=mine)
    check(int(q.run([image])[0].argmax()) == 8, "quantized top-1")
    q.close()
    raises(lambda: glowc.profile(LENET, [], mine), "no samples", 1)
    raises(lambda: glowc.profile(LENET, [[image[0]]], mine), "Conv 'conv1'", 3)
    raises(lambda: glowc.profile(LENET, [[image], [image[0]]], mine), "the first sample's", 5)

    # A bundle, and the CLI's from the same options: the same files.
    out = os.path.join(tmp, "py")
    b = glowc.compile_bundle(LENET, out, name="net", cpu="generic", weights="c-array",
                             threads=2)
    check(b["name"] == "net" and b["cpu"] == "generic" and b["instructions"] > 10, "%r" % b)
    check(b["alignment"] == 64 and b["object_bytes"] > 0, "bundle info %r" % b)
    ref = os.path.join(tmp, "cli")
    r = subprocess.run([GLOWC, "compile", LENET, "--emit-bundle", ref, "--name", "net",
                        "--mcpu", "generic", "--weights", "c-array", "--threads", "2"],
                       capture_output=True, text=True)
    check(r.returncode == 0, "glowc compile: %s" % r.stderr)
    for f in ("net.o", "net.h", "net.weights.bin", "net.weights.c"):
        check(r.returncode == 0 and same(os.path.join(out, f), os.path.join(ref, f)),
              "%s differs from the CLI's" % f)
    check(glowc.compile_bundle(LENET, out)["name"] == "lenet", "default name")
    raises(lambda: glowc.compile_bundle(LENET, out, name="9x"), "C identifier", 1)
    raises(lambda: glowc.compile_bundle(LENET, out, weights="inline"), "c-array", 1)
    raises(lambda: glowc.compile_bundle("models/none.onnx", out), "models/none.onnx", 2)

done()
