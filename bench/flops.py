#!/usr/bin/python3
# flops.py - A model's GFLOP per inference: multiply-accumulates of Conv, ConvTranspose, Gemm,
# MatMul and recurrent layers counted from the ONNX graph after shape inference, times two.
import sys


def _shapes(model):
    """name -> list of ints for every value whose shape inference found static dims."""
    import onnx
    inferred = onnx.shape_inference.infer_shapes(model)
    g = inferred.graph
    out = {}
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        dims = vi.type.tensor_type.shape.dim
        if vi.type.tensor_type.HasField("shape") and all(d.HasField("dim_value") for d in dims):
            out[vi.name] = [d.dim_value for d in dims]
    for init in g.initializer:
        out[init.name] = list(init.dims)
    return out


def _prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}  # gate blocks stacked in W and R


def macs(model):
    """Multiply-accumulates of the model's dense ops (others are memory-bound and ignored)."""
    shapes = _shapes(model)
    total = 0
    for n in model.graph.node:
        ins = [shapes.get(i) for i in n.input]
        outs = [shapes.get(o) for o in n.output]
        if not outs or outs[0] is None:
            continue
        if n.op_type == "Conv" and ins[1] is not None:
            # Each output element sums over Cin/group x kernel window.
            total += _prod(outs[0]) * _prod(ins[1][1:])
        elif n.op_type == "ConvTranspose" and ins[0] is not None and ins[1] is not None:
            total += _prod(ins[0]) * _prod(ins[1][1:])
        elif n.op_type == "Gemm" and ins[0] is not None:
            trans_a = any(a.name == "transA" and a.i for a in n.attribute)
            k = ins[0][0] if trans_a else ins[0][1]
            total += _prod(outs[0]) * k
        elif n.op_type == "MatMul" and ins[0] is not None:
            total += _prod(outs[0]) * ins[0][-1]
        elif n.op_type in GATES and ins[0] is not None and ins[1] is not None:
            # X leads with seq and batch (in either order); each step multiplies X_t by W and
            # H_t-1 by R, (directions, gates x hidden, input) and (..., hidden).
            dirs, rows, width = ins[1]
            total += ins[0][0] * ins[0][1] * dirs * rows * (width + rows // GATES[n.op_type])
    return total


def gflop(path):
    import onnx
    return 2 * macs(onnx.load(path)) / 1e9


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: flops.py MODEL.onnx...")
    for p in sys.argv[1:]:
        print("%s %.4f GFLOP" % (p, gflop(p)))
