# models.py - The benchmark's model zoo: how each PyTorch model is built (random weights from
# a fixed seed, no downloads), its input shape and batches, and where its files live.
import os

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS_DIR = os.path.join(HERE, "models")
SEED = 0

# name -> (input shape without batch, batches). Batch 8 (the Glow paper's) only for the big
# three image models; the small ones are latency benchmarks. The last four bring ops the image
# classifiers lack: Resize and HardSigmoid (lraspp), ConvTranspose and Concat (unet), Conv1d,
# Pow and Log (audio), LSTM (lstm).
ZOO = {
    "resnet50": ((3, 224, 224), (1, 8)),
    "vgg19": ((3, 224, 224), (1, 8)),
    "googlenet": ((3, 224, 224), (1, 8)),
    "mobilenet_v2": ((3, 224, 224), (1,)),
    "squeezenet1_1": ((3, 224, 224), (1,)),
    "mlp": ((784,), (1,)),
    "lenet": ((1, 28, 28), (1,)),
    "lraspp": ((3, 224, 224), (1,)),
    "unet": ((3, 128, 128), (1,)),
    "audio": ((1, 16000), (1,)),
    "lstm": ((50, 40), (1,)),
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
    elif name == "lraspp":
        m = _lraspp()
    elif name == "unet":
        m = _unet()
    elif name == "audio":
        m = _audio()
    elif name == "lstm":
        m = _lstm()
    else:
        raise KeyError(name)
    if calibrate:
        calibrate_batchnorm(m, ZOO[name][0])
    return m.eval()


def _lraspp():
    """LR-ASPP segmentation on MobileNetV3-Large. torchvision's model returns a dict; every
    zoo model has one tensor output, so this returns its "out" map."""
    from torch import nn
    from torchvision.models.segmentation import lraspp_mobilenet_v3_large

    class OutOnly(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = lraspp_mobilenet_v3_large(weights=None, weights_backbone=None)

        def forward(self, x):
            return self.net(x)["out"]

    return OutOnly()


def _conv_bn_relu(nn, cin, cout, dims=2, **kw):
    conv, bn = (nn.Conv2d, nn.BatchNorm2d) if dims == 2 else (nn.Conv1d, nn.BatchNorm1d)
    return [conv(cin, cout, bias=False, **kw), bn(cout), nn.ReLU()]


def _unet(widths=(8, 16, 32, 64), classes=4):
    """A small U-Net: two-conv blocks, max-pool down, 2x2 stride-2 transposed conv up, skips
    joined by concatenation, 1x1 head. About 0.3 GFLOP at 128x128."""
    import torch
    from torch import nn

    def block(cin, cout):
        return nn.Sequential(*_conv_bn_relu(nn, cin, cout, kernel_size=3, padding=1),
                             *_conv_bn_relu(nn, cout, cout, kernel_size=3, padding=1))

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.down = nn.ModuleList(block(c, w) for c, w in zip((3,) + widths, widths))
            self.pool = nn.MaxPool2d(2)
            narrow = widths[-2::-1]  # decoder widths, deepest first
            self.up = nn.ModuleList(nn.ConvTranspose2d(2 * w, w, 2, stride=2) for w in narrow)
            self.dec = nn.ModuleList(block(2 * w, w) for w in narrow)
            self.head = nn.Conv2d(widths[0], classes, 1)

        def forward(self, x):
            skips = []
            for blk in self.down[:-1]:
                x = blk(x)
                skips.append(x)
                x = self.pool(x)
            x = self.down[-1](x)
            for up, blk, skip in zip(self.up, self.dec, reversed(skips)):
                x = blk(torch.cat([up(x), skip], 1))
            return self.head(x)

    return UNet()


def _audio(rate=16000, n_fft=512, hop=160, n_mels=40, classes=12):
    """A keyword-spotting-style classifier of one second of audio: a short-time Fourier
    transform as a strided Conv1d with fixed Hann-windowed cosine and sine rows, power
    re^2 + im^2, a fixed triangular mel filterbank as a 1x1 Conv1d, log, then Conv1d-BN-ReLU
    layers, global average pooling and a linear classifier."""
    import math
    import torch
    from torch import nn

    bins = n_fft // 2 + 1
    n = torch.arange(n_fft, dtype=torch.float64)
    k = torch.arange(bins, dtype=torch.float64)[:, None]
    window = torch.hann_window(n_fft, periodic=True, dtype=torch.float64)
    angle = 2 * math.pi * k * n / n_fft
    dft = torch.cat([torch.cos(angle), -torch.sin(angle)]) * window  # (2 * bins, n_fft)

    def mel(f):
        return 2595 * torch.log10(1 + f / 700)

    # Triangles whose feet and peaks are equally spaced on the mel scale up to Nyquist.
    edges = mel(torch.tensor(rate / 2.0)) * torch.linspace(0, 1, n_mels + 2, dtype=torch.float64)
    hz = 700 * (10 ** (edges / 2595) - 1)
    f = k[:, 0] * rate / n_fft
    lo, mid, hi = hz[:-2, None], hz[1:-1, None], hz[2:, None]
    fbank = torch.clamp(torch.minimum((f - lo) / (mid - lo), (hi - f) / (hi - mid)), min=0)

    class Audio(nn.Module):
        def __init__(self):
            super().__init__()
            self.stft = nn.Conv1d(1, 2 * bins, n_fft, stride=hop, bias=False)
            self.mel = nn.Conv1d(bins, n_mels, 1, bias=False)
            with torch.no_grad():
                self.stft.weight.copy_(dft[:, None, :])
                self.mel.weight.copy_(fbank[:, :, None])
            self.body = nn.Sequential(
                *_conv_bn_relu(nn, n_mels, 64, dims=1, kernel_size=3, padding=1),
                *_conv_bn_relu(nn, 64, 64, dims=1, kernel_size=3, padding=1),
                *_conv_bn_relu(nn, 64, 128, dims=1, kernel_size=3, stride=2, padding=1),
                *_conv_bn_relu(nn, 128, 128, dims=1, kernel_size=3, padding=1),
                nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(128, classes))

        def forward(self, x):
            spec = self.stft(x)
            power = torch.pow(spec[:, :bins], 2) + torch.pow(spec[:, bins:], 2)
            return self.body(torch.log(self.mel(power) + 1e-6))

    return Audio()


def _lstm(features=40, hidden=128, classes=10):
    """A two-layer LSTM over a (batch, time, features) sequence, classified from its last
    step."""
    from torch import nn

    class Seq(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(features, hidden, num_layers=2, batch_first=True)
            self.fc = nn.Linear(hidden, classes)

        def forward(self, x):
            y, _ = self.lstm(x)
            return self.fc(y[:, -1])

    return Seq()


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
