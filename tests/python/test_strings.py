# test_strings.py - String tensors in the Python package (python/glowc): numpy arrays of str
# or bytes (object, str_ or bytes_ dtype) in, object arrays of str out (bytes for an element
# that is not UTF-8), glowc's message on a wrong dtype, a NUL byte refused, and the host's
# synchronous and asynchronous runs - on the ONNX node tests test_string_concat and
# test_equal_string (../shared/onnx-node-tests). Run by CTest as test_glowc.py is.
import os

import numpy as np

import glowc

from checks import check, done, raises


def same(a, b):
    return a.shape == b.shape and all(x == y for x, y in zip(a.reshape(-1), b.reshape(-1)))


node = os.path.join(os.environ["GLOWC_SHARED"], "onnx-node-tests", "node")
concat = os.path.join(node, "test_string_concat", "model.onnx")
equal = os.path.join(node, "test_equal_string", "model.onnx")

for backend in ("interpreter", "cpu"):
    s = glowc.Session(concat, backend=backend, threads=1)
    info = s.inputs[0]
    check(info.type == "string" and info.dtype == np.dtype(object), "input info %r" % (info,))
    check(s.outputs[0].type == "string", "output info %r" % (s.outputs[0],))
    shape = info.shape
    n = int(np.prod(shape))
    words = ["a", "", "h\u00e9llo", "\u6f22\u5b57", "xyz", "0"]
    x = np.array([words[i % len(words)] for i in range(n)], dtype=object).reshape(shape)
    y = np.array([words[(i + 1) % len(words)] for i in range(n)], dtype=object).reshape(shape)
    want = np.array([a + b for a, b in zip(x.reshape(-1), y.reshape(-1))],
                    dtype=object).reshape(shape)
    out = s.run([x, y])[0]
    check(out.dtype == np.dtype(object), "output dtype %s" % out.dtype)
    check(same(out, want), "%s: concat %r, want %r" % (backend, out, want))
    check(all(isinstance(v, str) for v in out.reshape(-1)), "str elements")
    # bytes in (object array of bytes, and numpy's fixed-width str_ and bytes_ arrays).
    xb = np.array([v.encode() for v in x.reshape(-1)], dtype=object).reshape(shape)
    out = s.run({info.name: xb, s.inputs[1].name: y.astype(str)}, as_dict=True)
    check(same(out[s.outputs[0].name], want), "%s: bytes/str_ inputs" % backend)
    out = s.run([x.astype(str).astype(bytes), y])[0]
    check(same(out, want), "%s: bytes_ input" % backend)
    # None is "", as a NULL element in C.
    nx = x.copy()
    nx.reshape(-1)[1] = None
    check(same(s.run([nx, y])[0], want), "%s: None element" % backend)
    # An element that is not UTF-8 comes back as bytes.
    bad = x.copy()
    bad.reshape(-1)[0] = b"\xff"
    out = s.run([bad, y])[0]
    check(out.reshape(-1)[0] == b"\xff" + y.reshape(-1)[0].encode(),
          "non-UTF-8 element %r" % (out.reshape(-1)[0],))
    # Numbers for a string input: glowc's message names both types.
    raises(lambda: s.run([np.zeros(shape, np.float32), y]),
           "is f32[%s], the model's is string[" % ", ".join(str(d) for d in shape), 5)
    # Objects that are no strings are no glowc type either.
    raises(lambda: s.run([np.full(shape, 3, dtype=object), y]), "the model's is string[", 5)
    # A NUL byte cannot pass through NUL-terminated strings.
    nul = x.copy()
    nul.reshape(-1)[0] = "a\0b"
    raises(lambda: s.run([nul, y]), "NUL byte", 5)
    s.close()

    e = glowc.Session(equal, backend=backend, threads=1)
    shape = e.inputs[0].shape
    n = int(np.prod(shape))
    x = np.array(["s%d" % (i % 3) for i in range(n)], dtype=object).reshape(shape)
    y = np.array(["s%d" % (i % 2) for i in range(n)], dtype=object).reshape(shape)
    out = e.run([x, y])[0]
    check(out.dtype == np.bool_ and np.array_equal(out, x == y), "%s: equal %r" % (backend, out))
    e.close()

# The host: a run waits for the callback's tensors (string outputs cannot go to a buffer).
h = glowc.Host("interpreter,cpu:t1", queue=8)
h.add_network("cat", concat)
shape = h.inputs("cat")[0].shape
n = int(np.prod(shape))
x = np.array(["p%d" % i for i in range(n)], dtype=object).reshape(shape)
y = np.array(["q%d" % i for i in range(n)], dtype=object).reshape(shape)
want = np.array(["p%dq%d" % (i, i) for i in range(n)], dtype=object).reshape(shape)
check(same(h.run("cat", [x, y])[0], want), "host run")
futs = [h.run_async("cat", [x, y]) for _ in range(4)]
for f in futs:
    check(same(f.result()[0], want), "host run_async")
h.close()

done()
