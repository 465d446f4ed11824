# models.py - The benchmark's model zoo: how each PyTorch model is built (random weights from
# a fixed seed, no downloads), its input shape and batches, and where its files live.
import os

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS_DIR = os.path.join(HERE, "models")
SEED = 0

# name -> (input shape without batch, batches). Batch 8 (the Glow paper's) only for the big
# three image models; the small ones are latency benchmarks.
ZOO = {
    "resnet50": ((3, 224, 224), (1, 8)),
    "vgg19": ((3, 224, 224), (1, 8)),
    "googlenet": ((3, 224, 224), (1, 8)),
    "mobilenet_v2": ((3, 224, 224), (1,)),
    "squeezenet1_1": ((3, 224, 224), (1,)),
    "mlp": ((784,), (1,)),
    "lenet": ((1, 28, 28), (1,)),
}


def calibrate_batchnorm(net, in_shape):
    """Sets every BatchNorm's running statistics from a few seeded random batches.

    Fresh BatchNorms (mean 0, variance 1) leave activations at whatever scale the random
    convolutions produce: googlenet's outputs then shrink to its classifier's bias, the same
    for every input, and mobilenet_v2's to about 1e-9, so a wrong compiler would still match
    the reference. Calibrated statistics keep activations near unit scale, as in a trained
    network."""
    import torch
    from torch import nn

    bns = [m for m in net.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    for m in bns:
        m.reset_running_stats()
        m.momentum = None  # cumulative average over the calibration batches
    g = torch.Generator().manual_seed(SEED + 1000)
    net.train()
    with torch.no_grad():
        for _ in range(2):
            net(torch.randn((8,) + tuple(in_shape), generator=g))
    for m in bns:
        m.momentum = 0.1
    net.eval()


def build(name, calibrate=False):
    """The PyTorch module for `name` in eval mode, weights drawn from SEED (BatchNorm
    statistics calibrated when asked; the exporter saves them, the runner loads them)."""
    import torch
    import torchvision.models as tvm
    from torch import nn

    torch.manual_seed(SEED)
    if name == "resnet50":
        m = tvm.resnet50(weights=None)
    elif name == "vgg19":
        m = tvm.vgg19(weights=None)
    elif name == "googlenet":
        m = tvm.googlenet(weights=None, aux_logits=False, init_weights=True)
    elif name == "mobilenet_v2":
        m = tvm.mobilenet_v2(weights=None)
    elif name == "squeezenet1_1":
        m = tvm.squeezenet1_1(weights=None)
    elif name == "mlp":
        m = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(),
                          nn.Linear(256, 10))
    elif name == "lenet":
        m = nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(16 * 5 * 5, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
                          nn.Linear(84, 10))
    else:
        raise KeyError(name)
    if calibrate:
        calibrate_batchnorm(m, ZOO[name][0])
    return m.eval()


def paths(name, batch):
    """(model.onnx, input.pb, reference output.pb) for one model at one batch."""
    stem = os.path.join(MODELS_DIR, "%s_b%d" % (name, batch))
    return stem + ".onnx", stem + "_input.pb", stem + "_output.pb"


def weights_path(name):
    """The state dict the PyTorch runner loads, so it runs exactly the exported weights."""
    return os.path.join(MODELS_DIR, "%s.pt" % name)


def variants(names=None):
    """(name, batch) pairs in zoo order, restricted to `names` when given."""
    out = []
    for name, (_, batches) in ZOO.items():
        if names and name not in names:
            continue
        out.extend((name, b) for b in batches)
    return out
