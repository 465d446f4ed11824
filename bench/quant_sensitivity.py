#!/usr/bin/python3
# quant_sensitivity.py - How much of the int8 error is the model's own: the float PyTorch
# model is run with one source of rounding at a time, and the output SNR and top-1 agreement
# with the exact float run are reported on the inputs bench/quant_accuracy.py uses (seed 2):
#   - weights rounded to N bits per output channel (symmetric, round to nearest; activations
#     stay float): the floor any N-bit weight scheme that rounds to nearest starts from;
#   - the input alone rounded to 8 bits over its own min..max (weights float);
#   - the input perturbed by Gaussian noise at a given SNR (how much the network amplifies
#     any small error).
# A network that turns 40 dB of input noise into 15 dB at its output cannot reach a 25 dB
# int8 output whatever the quantizer does; glowc's figures (quant_accuracy.py) are compared
# with these floors. Not a test: a report, like the rest of bench/.
#
#     /usr/bin/python3 bench/quant_sensitivity.py [--models resnet50,...] [--samples 20]
#         [--weight-bits 8,10,12] [--input-noise-db 40,50]
#
# Needs PyTorch and torchvision (bench/setup); builds the models as export_models.py does.
import argparse
import copy
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import models  # noqa: E402


def snr_db(ref, got):
    """Output SNR in dB over all samples: signal power over error power."""
    ref = np.concatenate([r.ravel() for r in ref])
    got = np.concatenate([g.ravel() for g in got])
    err = ((ref - got) ** 2).sum()
    return float("inf") if err == 0 else 10 * np.log10((ref ** 2).sum() / err)


def agreement(ref, got):
    return sum(int(np.argmax(r) == np.argmax(g)) for r, g in zip(ref, got))


def round_weights(net, bits):
    """A copy of net whose Conv/Linear weights are rounded to `bits` per output channel."""
    import torch
    q = copy.deepcopy(net)
    top = 2 ** (bits - 1) - 1
    for m in q.modules():
        if isinstance(m, (torch.nn.Conv1d, torch.nn.Conv2d, torch.nn.Linear)):
            w = m.weight.data
            amax = w.abs().reshape(w.shape[0], -1).max(1)[0].clamp(min=1e-30)
            scale = (amax / top).reshape((-1,) + (1,) * (w.dim() - 1))
            m.weight.data = torch.round(w / scale) * scale
    return q


def round_input(x, bits=8):
    """x rounded to 2^bits levels over its own range (an asymmetric per-tensor quantizer)."""
    lo, hi = float(x.min()), float(x.max())
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = (hi - lo) / (2 ** bits - 1)
    zero = round(-lo / scale)
    return (x / scale + zero).round().clamp(0, 2 ** bits - 1).sub(zero).mul(scale)


def main():
    ap = argparse.ArgumentParser(description="int8 error floors of the bench models "
                                             "(see the header)")
    ap.add_argument("--models", default="resnet50,googlenet,mobilenet_v2,squeezenet1_1")
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--weight-bits", default="8,10,12")
    ap.add_argument("--input-noise-db", default="40,50")
    a = ap.parse_args()
    import torch
    torch.set_num_threads(2)
    print("| model | rounding | SNR dB | top-1 agreement |")
    print("|---|---|---|---|")
    for name in a.models.split(","):
        net = models.build(name, calibrate=True)
        shape = (1,) + models.ZOO[name][0]
        # The evaluation inputs of quant_accuracy.py (seed 2, standard normal).
        rng = np.random.default_rng(2)
        xs = [torch.from_numpy(rng.standard_normal(shape).astype(np.float32))
              for _ in range(a.samples)]
        noise = torch.Generator().manual_seed(3)
        with torch.no_grad():
            ref = [net(x).numpy() for x in xs]

            def row(what, outs):
                print("| %s | %s | %.1f | %d/%d |" % (name, what, snr_db(ref, outs),
                                                   agreement(ref, outs), len(ref)))
            for bits in (int(b) for b in a.weight_bits.split(",")):
                q = round_weights(net, bits)
                row("weights int%d per channel, float activations" % bits,
                    [q(x).numpy() for x in xs])
            row("input int8 (its own min..max), float weights",
                [net(round_input(x)).numpy() for x in xs])
            for db in (float(v) for v in a.input_noise_db.split(",")):
                outs = []
                for x in xs:
                    n = torch.randn(x.shape, generator=noise) * x.std() * 10 ** (-db / 20)
                    outs.append(net(x + n).numpy())
                row("input + Gaussian noise at %g dB" % db, outs)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
