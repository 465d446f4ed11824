# test_glowc.py - The Python package (python/glowc) over libglowc: sessions from a path and
# from bytes, descriptions, runs against LeNet's reference output on both backends, every
# checked mistake raising glowc.Error with glowc's message, concurrent runs from Python
# threads, and the library search. Run by CTest with /usr/bin/python3 (Debian's numpy),
# GLOWC_LIBRARY pointing at the build's libglowc.so and PYTHONPATH at python/.
import os
import subprocess
import sys
import threading

import numpy as np

import glowc

from checks import check, done, raises


def tail_floats(path, n):
    # LeNet's .pb files hold their floats as raw_data, the TensorProto's last field.
    with open(path, "rb") as f:
        return np.frombuffer(f.read()[-4 * n:], dtype="<f4")


image = tail_floats("models/lenet_input.pb", 784).reshape(1, 1, 28, 28)
want = tail_floats("models/lenet_output.pb", 10).reshape(1, 10)

check(glowc.version().count(".") == 2, "version %r" % glowc.version())

s = glowc.Session("models/lenet.onnx", backend="cpu", threads=2)
check(s.inputs == [glowc.TensorInfo("input", (1, 1, 28, 28), np.dtype(np.float32), "f32")],
      "inputs %r" % (s.inputs,))
check(s.outputs[0].name == "probs" and s.outputs[0].shape == (1, 10), "outputs %r" % s.outputs)
out = s.run({"input": image})
check(isinstance(out, list) and len(out) == 1, "run returns a list")
check(out[0].dtype == np.float32 and out[0].shape == (1, 10), "output type")
check(np.allclose(out[0], want, atol=1e-4), "cpu output %r vs %r" % (out[0], want))
check(int(out[0].argmax()) == int(want.argmax()) == 8, "top-1")
d = s.run([image], as_dict=True)
check(list(d) == ["probs"] and np.array_equal(d["probs"], out[0]), "as_dict")
# A non-contiguous array of the right shape is fine (copied to C order).
fortran = np.asfortranarray(image)
check(np.array_equal(s.run({"input": fortran})[0], out[0]), "non-contiguous input")

# Mistakes: glowc checks and names them.
raises(lambda: s.run({"input": image[0]}),
       "input 0 'input' is f32[1, 28, 28], the model's is f32[1, 1, 28, 28]", 5)
raises(lambda: s.run({"input": image.astype(np.float64)}), "is f64[1, 1, 28, 28]", 5)
raises(lambda: s.run({"image": image}), "the model has no input 'image' (its inputs: 'input')")
raises(lambda: s.run({}), "missing input 0 'input'")
raises(lambda: glowc.Session("models/none.onnx"), "models/none.onnx", 2)
raises(lambda: glowc.Session("models/lenet.onnx", backend="gpu"), "unknown backend 'gpu'", 1)
raises(lambda: glowc.Session("models/lenet.onnx", threads=5000), "1 to 1024", 1)
raises(lambda: glowc.Session("models/lenet.onnx", defines={"N": 0}), "SYM=VAL", 1)
raises(lambda: glowc.Session(b"not a model"), "", 3)
raises(lambda: glowc.Session("models/lenet.onnx", schema="sideways"), "got 'sideways'", 1)

# From bytes, on the interpreter: the same answer.
with open("models/lenet.onnx", "rb") as f:
    si = glowc.Session(f.read(), backend="interpreter")
oi = si.run({"input": image})[0]
check(np.allclose(oi, want, atol=1e-4), "interpreter output")
si.close()
raises(lambda: si.run({"input": image}), "closed")

# The compiled-code cache: the second session of the same model loads its code (one entry,
# the same answer); a file where the folder should be is refused.
import tempfile
with tempfile.TemporaryDirectory() as tmp:
    cache = os.path.join(tmp, "cache")
    for _ in range(2):
        sc = glowc.Session("models/lenet.onnx", backend="cpu", threads=1, cache_dir=cache)
        check(np.allclose(sc.run({"input": image})[0], want, atol=1e-4), "cached output")
        sc.close()
    check(len([n for n in os.listdir(cache) if n.endswith(".jit")]) == 1, "one cache entry")
    plain = os.path.join(tmp, "plain")
    open(plain, "w").close()
    raises(lambda: glowc.Session("models/lenet.onnx", cache_dir=plain), "cache wants", 1)

# Concurrent runs from Python threads on one session: each result is its own input's.
rng = np.random.default_rng(3)
inputs = [rng.random((1, 1, 28, 28), dtype=np.float32) for _ in range(5)]
refs = [s.run({"input": x})[0] for x in inputs]
wrong = []


def client(tid):
    for r in range(10):
        k = (tid + 2 * r) % len(inputs)
        if not np.array_equal(s.run({"input": inputs[k]})[0], refs[k]):
            wrong.append((tid, r))


threads = [threading.Thread(target=client, args=(t,)) for t in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
check(not wrong, "crossed or wrong results: %r" % wrong)
s.close()

# Low-bit types (numpy has none): one code a byte, uint8 (int8 for i4/i2), named by .type.
node = os.path.join(os.environ.get("GLOWC_SHARED", "/work/shared"), "onnx-node-tests", "node")
f8 = glowc.Session(os.path.join(node, "test_cast_FLOAT8E4M3FN_to_FLOAT", "model.onnx"),
                   backend="interpreter")
x = f8.inputs[0]
check(x.type == "f8e4m3fn" and x.dtype == np.uint8, "f8 input info %r" % (x,))
codes = np.resize(np.array([0x38, 0x40, 0xb8, 0x7f, 0x00, 0x30], np.uint8), x.shape)
got = f8.run([codes])[0]
wantf = np.resize(np.array([1.0, 2.0, -1.0, np.nan, 0.0, 0.5], np.float32), x.shape)
check(np.array_equal(got, wantf, equal_nan=True), "f8e4m3fn codes -> f32 %r" % (got,))
# A uint8 array fed to a u8-typed model stays u8; an int8 array is no f8 input.
raises(lambda: f8.run([codes.astype(np.int8)]), "f8e4m3fn", 5)
f8.close()
i4 = glowc.Session(os.path.join(node, "test_cast_FLOAT_to_INT4", "model.onnx"),
                   backend="interpreter")
y = i4.outputs[0]
check(y.type == "i4" and y.dtype == np.int8, "i4 output info %r" % (y,))
vals = np.resize(np.array([-8, -3, 0, 7, 2, -1], np.float32), i4.inputs[0].shape)
got = i4.run([vals])[0]
check(got.dtype == np.int8 and np.array_equal(got, vals.astype(np.int8)),
      "f32 -> i4 codes %r" % (got,))
i4.close()

# The library search: a wrong GLOWC_LIBRARY is reported at import, naming the path.
env = dict(os.environ, GLOWC_LIBRARY="/nonexistent/libglowc.so")
p = subprocess.run([sys.executable, "-c", "import glowc"], env=env, capture_output=True,
                   text=True)
check(p.returncode != 0 and "/nonexistent/libglowc.so" in p.stderr, "import error: %r" % p.stderr)

done()
