# glowc - Python bindings of libglowc (ctypes over the C API in include/glowc/glowc.h, no
# build step): compile an ONNX model once into a Session and run it on numpy arrays.
#
#     import numpy as np, glowc
#     s = glowc.Session("models/lenet.onnx", backend="cpu", threads=2)
#     print(s.inputs, s.outputs)
#     scores = s.run({s.inputs[0].name: np.zeros(s.inputs[0].shape, np.float32)})[0]
#
# Names, shapes and dtypes are checked by libglowc; a failure raises glowc.Error carrying its
# message. A Session may be used from several Python threads at once (the C call releases the
# GIL; libglowc runs each concurrent request on its own execution context).
#
# libglowc.so is found, in this order, at $GLOWC_LIBRARY, beside this package, in the libdir
# written by `cmake --install` (_install.py), and through the system's library path.
import concurrent.futures
import ctypes
import itertools
import os
import threading
from collections import namedtuple

import numpy as np

__all__ = ["Session", "Host", "Error", "TensorInfo", "version", "profile", "compile_bundle",
           "BUSY", "CANCELLED", "DEADLINE"]

# Statuses a host run ends with besides errors (glowc_status).
BUSY, CANCELLED, DEADLINE = 9, 10, 11

# Public element types (glowc_dtype, ONNX's numbering) and their numpy types.
_DTYPES = {
    1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32,
    7: np.int64, 9: np.bool_, 10: np.float16, 11: np.float64, 12: np.uint32, 13: np.uint64,
}
_CODES = {np.dtype(t): c for c, t in _DTYPES.items()}
# The types numpy has no dtype for: their arrays hold one code an element, as libglowc does
# (glowc.h, "Element types"): bf16 bit patterns as uint16; float8, e8m0 and float4 bit
# patterns and the unsigned 4/2-bit integers as uint8; the signed 4/2-bit integers
# sign-extended as int8. Such an array is taken for that type when the input is of that type
# (a uint8 array fed to a u8 input stays u8).
_LOWBIT = {
    16: np.uint16, 17: np.uint8, 18: np.uint8, 19: np.uint8, 20: np.uint8, 21: np.uint8, 22: np.int8,
    23: np.uint8, 24: np.uint8, 25: np.uint8, 26: np.int8,
}
_DTYPES.update(_LOWBIT)
# glowc's names of the types ("f32", "f8e4m3fn", "i4") and back.
_TYPE_NAMES = {1: "f32", 2: "u8", 3: "i8", 4: "u16", 5: "i16", 6: "i32", 7: "i64", 9: "bool",
               10: "f16", 11: "f64", 12: "u32", 13: "u64", 16: "bf16", 17: "f8e4m3fn",
               18: "f8e4m3fnuz", 19: "f8e5m2", 20: "f8e5m2fnuz", 21: "u4", 22: "i4",
               23: "f4e2m1", 24: "f8e8m0", 25: "u2", 26: "i2"}
# ONNX's string type: numpy object arrays of str (or bytes) in, of str out. libglowc takes
# and gives an array of `const char *` (NUL-terminated, so a string cannot hold a NUL byte).
_STRING = 8
_DTYPES[_STRING] = object
_TYPE_NAMES[_STRING] = "string"
_TYPE_CODES = {n: c for c, n in _TYPE_NAMES.items()}


class Error(Exception):
    """A failed libglowc call: .status is the glowc_status code, str() glowc's message."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


TensorInfo = namedtuple("TensorInfo", "name shape dtype type", defaults=(None,))
TensorInfo.__doc__ = """An input or output of a session: name, shape (tuple), numpy dtype, and
glowc's element type name ("f32", "i64", "f8e4m3fn", "i4", ...). For the low-bit types numpy
lacks, dtype is the array type holding one code a byte (uint8, or int8 for i4 and i2); for
"string", object (arrays of str or bytes in, of str out)."""


class _Value(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int), ("rank", ctypes.c_int),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("data", ctypes.c_void_p),
                ("size_bytes", ctypes.c_size_t)]


class _Info(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int), ("rank", ctypes.c_int),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("size_bytes", ctypes.c_size_t)]


def _candidates():
    env = os.environ.get("GLOWC_LIBRARY")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "libglowc.so")
    try:
        from . import _install
        yield os.path.join(_install.LIBDIR, "libglowc.so")
    except ImportError:
        pass
    yield "libglowc.so.0"


def _load():
    tried = []
    for path in _candidates():
        if os.path.sep in path and not os.path.exists(path):
            tried.append(path + " (missing)")
            continue
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise ImportError("glowc: cannot load libglowc.so; set GLOWC_LIBRARY to its path. Tried: "
                      + "; ".join(tried))


_lib = _load()


def _fn(name, restype, *argtypes):
    f = getattr(_lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


_P = ctypes.c_void_p
_version = _fn("glowc_version", ctypes.c_char_p)
_last_error = _fn("glowc_last_error", ctypes.c_char_p)
_options_create = _fn("glowc_options_create", _P)
_options_destroy = _fn("glowc_options_destroy", None, _P)
_set_backend = _fn("glowc_options_set_backend", ctypes.c_int, _P, ctypes.c_char_p)
_set_threads = _fn("glowc_options_set_threads", ctypes.c_int, _P, ctypes.c_int)
_add_define = _fn("glowc_options_add_define", ctypes.c_int, _P, ctypes.c_char_p)
_set_no_optimize = _fn("glowc_options_set_no_optimize", ctypes.c_int, _P, ctypes.c_int)
_set_cache_dir = _fn("glowc_options_set_cache_dir", ctypes.c_int, _P, ctypes.c_char_p)
_set_quantize = _fn("glowc_options_set_quantize", ctypes.c_int, _P, ctypes.c_char_p)
_set_schema = _fn("glowc_options_set_quant_schema", ctypes.c_int, _P, ctypes.c_char_p)
_set_calibration = _fn("glowc_options_set_quant_calibration", ctypes.c_int, _P, ctypes.c_char_p)
_set_per_channel = _fn("glowc_options_set_quant_per_channel", ctypes.c_int, _P, ctypes.c_int)
_set_reduce_range = _fn("glowc_options_set_quant_reduce_range", ctypes.c_int, _P, ctypes.c_int)
_set_keep_float = _fn("glowc_options_set_quant_keep_float", ctypes.c_int, _P, ctypes.c_char_p)
_set_precision = _fn("glowc_options_set_quant_precision", ctypes.c_int, _P, ctypes.c_char_p)
_create = _fn("glowc_session_create", ctypes.c_int, _P, ctypes.c_char_p, ctypes.POINTER(_P))
_create_bytes = _fn("glowc_session_create_from_bytes", ctypes.c_int, _P, ctypes.c_char_p,
                    ctypes.c_size_t, ctypes.POINTER(_P))
_destroy = _fn("glowc_session_destroy", None, _P)
_ninputs = _fn("glowc_session_input_count", ctypes.c_int, _P)
_noutputs = _fn("glowc_session_output_count", ctypes.c_int, _P)
_input_info = _fn("glowc_session_input_info", ctypes.c_int, _P, ctypes.c_int,
                  ctypes.POINTER(_Info))
_output_info = _fn("glowc_session_output_info", ctypes.c_int, _P, ctypes.c_int,
                   ctypes.POINTER(_Info))
_run = _fn("glowc_session_run", ctypes.c_int, _P, ctypes.POINTER(_Value), ctypes.c_int,
           ctypes.POINTER(_Value), ctypes.c_int)
_run_tensors = _fn("glowc_session_run_tensors", ctypes.c_int, _P, ctypes.POINTER(_Value),
                   ctypes.c_int, ctypes.POINTER(_P))
_t_destroy = _fn("glowc_tensor_destroy", None, _P)
_t_data = _fn("glowc_tensor_data", _P, _P)
_t_size = _fn("glowc_tensor_size_bytes", ctypes.c_size_t, _P)
_t_rank = _fn("glowc_tensor_rank", ctypes.c_int, _P)
_t_shape = _fn("glowc_tensor_shape", ctypes.POINTER(ctypes.c_int64), _P)


class _SessionInfo(ctypes.Structure):
    _fields_ = [("backend", ctypes.c_char_p), ("threads", ctypes.c_int)] + \
               [(n, ctypes.c_uint64) for n in ("constant_bytes", "mutable_bytes",
                                                "activation_bytes")] + \
               [(n, ctypes.c_double) for n in ("load_ms", "compile_ms")] + \
               [("fallbacks", ctypes.c_int), ("code_cached", ctypes.c_int)] + \
               [(n, ctypes.c_uint64) for n in ("code_bytes", "codegen_anon_bytes",
                                                "codegen_file_bytes")]


_session_info = _fn("glowc_session_get_info", ctypes.c_int, _P, ctypes.POINTER(_SessionInfo))


def _check(status):
    if status != 0:
        raise Error(status, _last_error().decode("utf-8", "replace"))


def version():
    """libglowc's version, "MAJOR.MINOR.PATCH"."""
    return _version().decode()


def _enc(s):
    return s.encode("utf-8") if isinstance(s, str) else s


def _lowbit_code(info, a):
    """The low-bit type code of input info when array a holds its codes, else None."""
    code = _TYPE_CODES.get(info.type) if info is not None else None
    if code in _LOWBIT and a.dtype == np.dtype(_LOWBIT[code]):
        return code
    return None


def _string_data(a):
    """The `const char *` array of a str/bytes array a (object, str_ or bytes_ dtype; None
    elements are ""), or None when an element is none of these (glowc then names the type
    it wants)."""
    items = []
    for x in a.reshape(-1):
        if x is None:
            items.append(None)   # NULL, which reads as "" (as in C)
            continue
        if isinstance(x, str):
            x = x.encode("utf-8")
        elif not isinstance(x, bytes):
            return None
        if b"\0" in x:
            raise Error(5, "string element %r holds a NUL byte, which glowc's strings "
                           "(NUL-terminated) cannot" % (x,))
        items.append(x)
    return (ctypes.c_char_p * max(len(items), 1))(*items)


def _values(inputs, infos=()):
    """The _Value array for {name: array} or a sequence in input order, its length, and what
    must stay alive until the call returns (the arrays and shapes). infos: the inputs'
    TensorInfo, to know which uint8/int8 arrays hold low-bit codes."""
    if isinstance(inputs, dict):
        items = list(inputs.items())
    else:
        items = [(None, a) for a in inputs]
    by_name = {t.name: t for t in infos}
    n = len(items)
    vals = (_Value * max(n, 1))()
    keep = []
    for k, (name, a) in enumerate(items):
        a = np.asarray(a)
        info = by_name.get(name) if name is not None else \
            (infos[k] if k < len(infos) else None)
        code = _lowbit_code(info, a) or _CODES.get(a.dtype)
        a = np.ascontiguousarray(a)
        data, nbytes = a.ctypes.data, a.nbytes
        if a.dtype.kind in "OUS":
            strs = _string_data(a)
            if strs is not None:
                code = _STRING
                keep.append(strs)
                data, nbytes = ctypes.addressof(strs), a.size * ctypes.sizeof(ctypes.c_char_p)
        if code is None:
            # No glowc type for it (e.g. complex): let glowc name the expected type.
            code = 0
        shape = (ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
        keep += [a, shape]
        vals[k] = _Value(_enc(name) if name is not None else None, code, a.ndim, shape,
                         data, nbytes)
    return vals, n, keep


def _out_values(infos):
    """New arrays for outputs described by infos, and the _Value array pointing at them."""
    outs = [np.empty(t.shape, t.dtype) for t in infos]
    ovals = (_Value * max(len(outs), 1))()
    for k, o in enumerate(outs):
        ovals[k] = _Value(None, 0, 0, None, o.ctypes.data, o.nbytes)
    return outs, ovals


def _decode(p):
    """A string element as str; bytes when it is not UTF-8 (ONNX strings may be any bytes)."""
    b = ctypes.string_at(p) if p else b""
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return b


def _from_tensor(t, info):
    """A numpy array holding a copy of library-owned tensor t (its actual shape); strings as
    an object array of str."""
    shape = tuple(_t_shape(t)[d] for d in range(_t_rank(t)))
    if info.type == "string":
        n = int(np.prod(shape, dtype=np.int64))
        ptrs = ctypes.cast(_t_data(t), ctypes.POINTER(ctypes.c_void_p))
        a = np.empty(n, object)
        for i in range(n):
            a[i] = _decode(ptrs[i])
        return a.reshape(shape)
    a = np.empty(shape, info.dtype)
    ctypes.memmove(a.ctypes.data, _t_data(t), min(a.nbytes, _t_size(t)))
    return a


def _tensor_info(info):
    return TensorInfo(info.name.decode("utf-8"), tuple(info.shape[d] for d in range(info.rank)),
                      np.dtype(_DTYPES[info.dtype]), _TYPE_NAMES[info.dtype])


def _set_model_options(o, defines, no_optimize, quantize, schema, calibration, per_channel,
                       keep_float, precision, cache_dir, reduce_range=False):
    """The options a Session and a Host network share, set on options object o."""
    if isinstance(defines, dict):
        defines = ["%s=%s" % kv for kv in defines.items()]
    for d in defines or ():
        _check(_add_define(o, _enc(d)))
    _check(_set_no_optimize(o, int(bool(no_optimize))))
    if cache_dir is not None:
        _check(_set_cache_dir(o, _enc(os.fspath(cache_dir))))
    if quantize is not None:
        _check(_set_quantize(o, _enc(os.fspath(quantize))))
    if schema is not None:
        _check(_set_schema(o, _enc(schema)))
    if calibration is not None:
        _check(_set_calibration(o, _enc(calibration)))
    _check(_set_per_channel(o, int(bool(per_channel))))
    _check(_set_reduce_range(o, int(bool(reduce_range))))
    if keep_float is not None:
        if not isinstance(keep_float, str):
            keep_float = ",".join(keep_float)
        _check(_set_keep_float(o, _enc(keep_float)))
    if precision is not None:
        _check(_set_precision(o, _enc(precision)))


class _Closing:
    """close() when collected or at the end of a `with` block."""

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Session(_Closing):
    """An ONNX model compiled by glowc. `model` is a path or the model's bytes.

    backend: "cpu" (native code) or "interpreter"; threads: worker threads per run (0: one
    per core); defines: {"N": 1} or ["N=1"] for symbolic input dims; no_optimize: skip the
    graph optimizer; quantize: a profile from `glowc profile` (with schema, calibration,
    per_channel, reduce_range, keep_float, precision as the CLI's options); cache_dir: a
    folder where the cpu backend keeps its machine code, so that the same model compiles
    again as a load."""

    def __init__(self, model, backend="cpu", threads=0, defines=None, no_optimize=False,
                 quantize=None, schema=None, calibration=None, per_channel=False,
                 keep_float=None, precision=None, cache_dir=None, reduce_range=False):
        self._s = None
        o = _options_create()
        if not o:
            raise MemoryError("glowc: cannot create options")
        try:
            _check(_set_backend(o, _enc(backend)))
            _check(_set_threads(o, int(threads)))
            _set_model_options(o, defines, no_optimize, quantize, schema, calibration,
                               per_channel, keep_float, precision, cache_dir, reduce_range)
            s = _P()
            if isinstance(model, (bytes, bytearray, memoryview)):
                data = bytes(model)
                _check(_create_bytes(o, data, len(data), ctypes.byref(s)))
            else:
                _check(_create(o, _enc(os.fspath(model)), ctypes.byref(s)))
            self._s = s
        finally:
            _options_destroy(o)
        self.inputs = [self._info(_input_info, i) for i in range(_ninputs(self._s))]
        self.outputs = [self._info(_output_info, i) for i in range(_noutputs(self._s))]
        self._in_index = {t.name: i for i, t in enumerate(self.inputs)}

    def _info(self, fn, i):
        info = _Info()
        _check(fn(self._s, i, ctypes.byref(info)))
        return _tensor_info(info)

    def close(self):
        """Frees the compiled model now (also done when the session is collected)."""
        if self._s:
            _destroy(self._s)
            self._s = None

    def info(self):
        """What the session is made of: {"backend", "threads", "constant_bytes" (weights,
        shared by runs), "mutable_bytes" (inputs and outputs) and "activation_bytes" (both per
        concurrent run), "load_ms", "compile_ms", "fallbacks" (instructions the backend runs
        through its evaluator), "code_cached" (machine code from cache_dir), "code_bytes",
        "codegen_anon_bytes" and "codegen_file_bytes" (the compiler's own memory once compiled:
        machine code kept, and what code generation left resident; 0 when unknown)}."""
        if not self._s:
            raise Error(1, "the session is closed")
        i = _SessionInfo()
        _check(_session_info(self._s, ctypes.byref(i)))
        d = {f: getattr(i, f) for f, _ in _SessionInfo._fields_}
        d["backend"] = i.backend.decode()
        d["code_cached"] = bool(i.code_cached)
        return d

    def run(self, inputs, as_dict=False):
        """Runs the model. inputs: {name: array} (or a list/tuple in input order). Returns the
        outputs as a list of numpy arrays in output order, or {name: array} with as_dict."""
        if not self._s:
            raise Error(1, "the session is closed")
        vals, n, keep = _values(inputs, self.inputs)
        if any(t.type == "string" for t in self.outputs):
            outs = self._run_tensors(vals, n)
        else:
            outs, ovals = _out_values(self.outputs)
            _check(_run(self._s, vals, n, ovals, len(outs)))
        del keep
        if as_dict:
            return {t.name: o for t, o in zip(self.outputs, outs)}
        return outs


    def _run_tensors(self, vals, n):
        """Runs into library-owned tensors (string outputs cannot go to numpy's buffers) and
        copies them to numpy arrays of their actual shapes."""
        ts = (_P * max(len(self.outputs), 1))()
        _check(_run_tensors(self._s, vals, n, ts))
        try:
            return [_from_tensor(ts[k], t) for k, t in enumerate(self.outputs)]
        finally:
            for k in range(len(self.outputs)):
                _t_destroy(ts[k])


# ---- the host ----

class _NetInfo(ctypes.Structure):
    _fields_ = [("ninputs", ctypes.c_int), ("noutputs", ctypes.c_int),
                ("partitions", ctypes.c_int), ("devices", ctypes.c_uint64)]


class _Stats(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in ("submitted", "rejected", "queued", "running",
                                                "done", "failed", "cancelled", "expired")] + \
               [(n, ctypes.c_double) for n in ("latency_min_us", "latency_mean_us",
                                                "latency_p50_us", "latency_p99_us",
                                                "latency_max_us")] + \
               [("quarantined", ctypes.c_uint64)]


_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int,
                             ctypes.POINTER(_P), ctypes.c_int)
_host_create = _fn("glowc_host_create_from_spec", ctypes.c_int, ctypes.c_char_p, ctypes.c_int,
                   ctypes.POINTER(_P))
_host_destroy = _fn("glowc_host_destroy", None, _P)
_host_pause = _fn("glowc_host_pause", ctypes.c_int, _P, ctypes.c_int)
_host_add = _fn("glowc_host_add_network", ctypes.c_int, _P, ctypes.c_char_p, _P,
                ctypes.c_char_p)
_host_add_bytes = _fn("glowc_host_add_network_from_bytes", ctypes.c_int, _P, ctypes.c_char_p,
                      _P, ctypes.c_char_p, ctypes.c_size_t)
_host_restore = _fn("glowc_host_restore_device", ctypes.c_int, _P, ctypes.c_int)
_host_remove = _fn("glowc_host_remove_network", ctypes.c_int, _P, ctypes.c_char_p)
_host_net_info = _fn("glowc_host_network_info", ctypes.c_int, _P, ctypes.c_char_p,
                     ctypes.POINTER(_NetInfo))
_host_in_info = _fn("glowc_host_network_input_info", ctypes.c_int, _P, ctypes.c_char_p,
                    ctypes.c_int, ctypes.POINTER(_Info))
_host_out_info = _fn("glowc_host_network_output_info", ctypes.c_int, _P, ctypes.c_char_p,
                     ctypes.c_int, ctypes.POINTER(_Info))
_host_run = _fn("glowc_host_run", ctypes.c_int, _P, ctypes.c_char_p, ctypes.POINTER(_Value),
                ctypes.c_int, ctypes.POINTER(_Value), ctypes.c_int, ctypes.c_int64)
_host_run_async = _fn("glowc_host_run_async", ctypes.c_int, _P, ctypes.c_char_p,
                      ctypes.POINTER(_Value), ctypes.c_int, ctypes.c_int64, _CALLBACK, _P,
                      ctypes.POINTER(ctypes.c_uint64))
_host_cancel = _fn("glowc_host_cancel", ctypes.c_int, _P, ctypes.c_uint64)
_host_stats = _fn("glowc_host_get_stats", ctypes.c_int, _P, ctypes.c_char_p,
                  ctypes.POINTER(_Stats))
_set_replicas = _fn("glowc_options_set_replicas", ctypes.c_int, _P, ctypes.c_int)

# Asynchronous requests in flight: key -> (future, output infos). The one C callback below
# serves them all and stays alive as long as the module (the library may call it any time).
_pending = {}
_pending_lock = threading.Lock()
_keys = itertools.count(1)


def _on_done(user, request_id, status, outputs, n):
    with _pending_lock:
        fut, infos = _pending.pop(user, (None, None))
    if fut is None:
        return
    if status != 0:
        fut.set_exception(Error(status, _last_error().decode("utf-8", "replace")))
        return
    outs = []
    for k, t in enumerate(infos):
        if t.type == "string":
            outs.append(_from_tensor(outputs[k], t))
            continue
        a = np.empty(t.shape, t.dtype)
        ctypes.memmove(a.ctypes.data, _t_data(outputs[k]), min(a.nbytes, _t_size(outputs[k])))
        outs.append(a)
    fut.set_result(outs)


_callback = _CALLBACK(_on_done)


class Host(_Closing):
    """A glowc host: devices (each with its own worker; a device runs one request at a
    time), named networks placed on them, and a bounded request queue.

    devices: "BACKEND[:CAPACITY][:tTHREADS],...", e.g. "cpu:t1,cpu:t1" or
    "cpu:256MiB:t2,interpreter"; queue: how many requests may wait. A run on a full queue
    raises glowc.Error with status glowc.BUSY; a cancelled one glowc.CANCELLED; one still
    queued at its deadline glowc.DEADLINE."""

    def __init__(self, devices="cpu", queue=64):
        self._h = None
        h = _P()
        _check(_host_create(_enc(devices), int(queue), ctypes.byref(h)))
        self._h = h
        self._nets = {}

    def close(self):
        """Cancels what is queued, waits for what runs, frees the host (also on collection)."""
        if self._h:
            _host_destroy(self._h)
            self._h = None

    def _handle(self):
        if not self._h:
            raise Error(1, "the host is closed")
        return self._h

    def add_network(self, name, model, defines=None, no_optimize=False, replicas=0,
                    quantize=None, schema=None, calibration=None, per_channel=False,
                    keep_float=None, precision=None, cache_dir=None, reduce_range=False):
        """Compiles and places model (a path or bytes) as network `name`: whole on every
        device with room (at most `replicas` when > 0), or partitioned when none holds it.
        The other options are Session's (quantize: quantized whole, then placed)."""
        h = self._handle()
        o = _options_create()
        if not o:
            raise MemoryError("glowc: cannot create options")
        try:
            _set_model_options(o, defines, no_optimize, quantize, schema, calibration,
                               per_channel, keep_float, precision, cache_dir, reduce_range)
            _check(_set_replicas(o, int(replicas)))
            if isinstance(model, (bytes, bytearray, memoryview)):
                data = bytes(model)
                _check(_host_add_bytes(h, _enc(name), o, data, len(data)))
            else:
                _check(_host_add(h, _enc(name), o, _enc(os.fspath(model))))
        finally:
            _options_destroy(o)
        info = _NetInfo()
        _check(_host_net_info(h, _enc(name), ctypes.byref(info)))
        ins = [self._io(_host_in_info, name, i) for i in range(info.ninputs)]
        outs = [self._io(_host_out_info, name, i) for i in range(info.noutputs)]
        self._nets[name] = (ins, outs)

    def _io(self, fn, name, i):
        info = _Info()
        _check(fn(self._h, _enc(name), i, ctypes.byref(info)))
        return _tensor_info(info)

    def remove_network(self, name):
        """Takes the network off the host; requests already accepted still complete."""
        _check(_host_remove(self._handle(), _enc(name)))
        self._nets.pop(name, None)

    def inputs(self, name):
        """The network's inputs as TensorInfo."""
        return self._net(name)[0]

    def outputs(self, name):
        """The network's outputs as TensorInfo."""
        return self._net(name)[1]

    def network_info(self, name):
        """{"partitions": P, "devices": [device indices]} of a network."""
        info = _NetInfo()
        _check(_host_net_info(self._handle(), _enc(name), ctypes.byref(info)))
        return {"partitions": info.partitions,
                "devices": [i for i in range(64) if info.devices >> i & 1]}

    def _net(self, name):
        if name not in self._nets:
            raise Error(1, "the host has no network '%s'" % name)
        return self._nets[name]

    def run(self, name, inputs, deadline_us=0, as_dict=False):
        """Runs one request and waits for it; outputs as Session.run returns them."""
        h = self._handle()
        ins, infos = self._net(name)
        if any(t.type == "string" for t in infos):
            # String outputs come back in library-owned tensors only: the callback's.
            outs = self.run_async(name, inputs, deadline_us).result()
            return {t.name: o for t, o in zip(infos, outs)} if as_dict else outs
        vals, n, keep = _values(inputs, ins)
        outs, ovals = _out_values(infos)
        _check(_host_run(h, _enc(name), vals, n, ovals, len(outs), int(deadline_us)))
        del keep
        if as_dict:
            return {t.name: o for t, o in zip(infos, outs)}
        return outs

    def run_async(self, name, inputs, deadline_us=0):
        """Queues a request; returns a concurrent.futures.Future of the output list, with
        .request_id for cancel(). Raises glowc.Error at once when the queue is full (BUSY)
        or an input is wrong. The inputs are copied: the arrays are free on return."""
        h = self._handle()
        ins, infos = self._net(name)
        vals, n, keep = _values(inputs, ins)
        fut = concurrent.futures.Future()
        key = next(_keys)
        with _pending_lock:
            _pending[key] = (fut, infos)
        rid = ctypes.c_uint64()
        st = _host_run_async(h, _enc(name), vals, n, int(deadline_us), _callback, key,
                             ctypes.byref(rid))
        del keep
        if st != 0:
            with _pending_lock:
                _pending.pop(key, None)
            _check(st)
        fut.request_id = rid.value
        return fut

    def cancel(self, request_id):
        """Cancels a queued request (its future raises CANCELLED); False when it is running,
        finished or unknown."""
        return _host_cancel(self._handle(), int(request_id)) == 0

    def pause(self, paused=True):
        """While paused no request starts (queued ones wait; deadlines still expire)."""
        _check(_host_pause(self._handle(), int(bool(paused))))

    def stats(self, name=None):
        """The host's (or one network's) counts and latencies as a dict; "quarantined" is
        the list of devices taken out of service after failing (of the network's devices)."""
        s = _Stats()
        _check(_host_stats(self._handle(), _enc(name) if name else None, ctypes.byref(s)))
        d = {f: getattr(s, f) for f, _ in _Stats._fields_}
        d["quarantined"] = [i for i in range(64) if s.quarantined >> i & 1]
        return d

    def restore_device(self, device):
        """Puts a quarantined device back in service (glowc_host_restore_device)."""
        _check(_host_restore(self._handle(), int(device)))


# ---- profiling and bundles ----

class _BundleInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * 64), ("triple", ctypes.c_char * 96),
                ("cpu", ctypes.c_char * 64)] + \
               [(n, ctypes.c_uint64) for n in ("constant_bytes", "mutable_bytes",
                                                "activation_bytes", "alignment",
                                                "object_bytes")] + \
               [("instructions", ctypes.c_int)]


_profiler_create = _fn("glowc_profiler_create", ctypes.c_int, _P, ctypes.c_char_p,
                       ctypes.POINTER(_P))
_profiler_destroy = _fn("glowc_profiler_destroy", None, _P)
_profiler_pass = _fn("glowc_profiler_begin_pass", ctypes.c_int, _P, ctypes.c_int)
_profiler_run = _fn("glowc_profiler_run", ctypes.c_int, _P, ctypes.POINTER(_Value),
                    ctypes.c_int)
_profiler_count = _fn("glowc_profiler_value_count", ctypes.c_int, _P)
_profiler_finish = _fn("glowc_profiler_finish", ctypes.c_int, _P)
_profiler_write = _fn("glowc_profiler_write", ctypes.c_int, _P, ctypes.c_char_p)
_compile_bundle = _fn("glowc_compile_bundle", ctypes.c_int, _P, ctypes.c_char_p,
                      ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                      ctypes.c_int, ctypes.POINTER(_BundleInfo))
_WEIGHTS = {"file": 0, "c-array": 1, "embedded": 2}


class _Options(_Closing):
    """A glowc_options object for one call."""

    def __init__(self, backend="cpu", threads=0, **model):
        self.o = _options_create()
        if not self.o:
            raise MemoryError("glowc: cannot create options")
        _check(_set_backend(self.o, _enc(backend)))
        _check(_set_threads(self.o, int(threads)))
        _set_model_options(self.o, model.get("defines"), model.get("no_optimize", False),
                           model.get("quantize"), model.get("schema"), model.get("calibration"),
                           model.get("per_channel", False), model.get("keep_float"),
                           model.get("precision"), None, model.get("reduce_range", False))

    def close(self):
        if getattr(self, "o", None):
            _options_destroy(self.o)
            self.o = None


def profile(model, samples, output, backend="cpu", threads=0, defines=None, no_optimize=False):
    """Runs the float model (a path) on samples - each {name: array} or a list of arrays in
    input order, all of the same types - and writes the quantization profile `glowc profile`
    writes to output (the file Session(quantize=...) reads). Returns how many values it
    records. The samples are run twice (ranges, then histograms)."""
    samples = list(samples)
    if not samples:
        raise Error(1, "profile: no samples")
    with _Options(backend, threads, defines=defines, no_optimize=no_optimize) as o:
        p = _P()
        _check(_profiler_create(o.o, _enc(os.fspath(model)), ctypes.byref(p)))
    try:
        for pass_ in (1, 2):
            _check(_profiler_pass(p, pass_))
            for sample in samples:
                vals, n, keep = _values(sample)
                _check(_profiler_run(p, vals, n))
                del keep
        _check(_profiler_finish(p))
        _check(_profiler_write(p, _enc(os.fspath(output))))
        return _profiler_count(p)
    finally:
        _profiler_destroy(p)


def compile_bundle(model, directory, name=None, target=None, cpu=None, weights="file",
                   threads=0, defines=None, no_optimize=False, quantize=None, schema=None,
                   calibration=None, per_channel=False, keep_float=None, precision=None,
                   reduce_range=False):
    """Compiles the model (a path) ahead of time for the cpu backend into a bundle in
    directory, as `glowc compile --emit-bundle` does: NAME.o, NAME.h, NAME.weights.bin (and
    NAME.weights.c with weights="c-array"; weights="embedded" puts them in NAME.o). target:
    an LLVM triple (None: this machine); cpu: a CPU name; threads > 1 adds NAME_thread.
    Returns {"name", "triple", "cpu", "constant_bytes", "mutable_bytes", "activation_bytes",
    "alignment", "object_bytes", "instructions"}."""
    if weights not in _WEIGHTS:
        raise Error(1, "weights wants file, c-array or embedded, got '%s'" % weights)
    info = _BundleInfo()
    with _Options("cpu", threads, defines=defines, no_optimize=no_optimize, quantize=quantize,
                  schema=schema, calibration=calibration, per_channel=per_channel,
                  keep_float=keep_float, precision=precision, reduce_range=reduce_range) as o:
        _check(_compile_bundle(o.o, _enc(os.fspath(model)), _enc(target), _enc(cpu),
                               _enc(os.fspath(directory)), _enc(name), _WEIGHTS[weights],
                               ctypes.byref(info)))
    d = {f: getattr(info, f) for f, _ in _BundleInfo._fields_}
    for f in ("name", "triple", "cpu"):
        d[f] = d[f].decode()
    return d
