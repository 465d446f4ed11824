#!/usr/bin/python3
# train_digits.py - Trains the digit classifier of the demo (examples/digits) and writes
# models/digits.onnx, examples/digits/digits.bin (real test images with labels) and, for the
# tests, models/digits_mlp.onnx (a small MLP on the same data).
#
# Data: the handwritten digits that ship with scikit-learn (load_digits: 1797 8x8 images of
# 0..16 gray levels, no download). The CNN sees one 1x1x8x8 image scaled to [0, 1]; the last
# fifth of the data set is held out, and digits.bin holds the first images of that part. Fixed
# seeds make a rerun reproduce the files (on the same torch build). The outputs are committed,
# so neither setup nor the tests need Python or torch.
#
# Requires Debian's python3-torch, python3-sklearn and python3-onnx:
#     /usr/bin/python3 scripts/train_digits.py
import os

import numpy as np
import torch
import torch.nn as nn
from sklearn.datasets import load_digits

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SEED = 20241122
N_IMAGES = 24          # images in examples/digits/digits.bin


class DigitCNN(nn.Module):
    """Two 3x3 convolutions, a max pool and two fully connected layers, then softmax."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
            nn.MaxPool2d(2))
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(32 * 4 * 4, 64), nn.ReLU(), nn.Linear(64, 10))

    def forward(self, x):
        return torch.softmax(self.classifier(self.features(x)), dim=1)


class DigitMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))

    def forward(self, x):
        return torch.softmax(self.net(x), dim=1)


def train(model, x, y, epochs):
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    loss_fn = nn.NLLLoss()
    gen = torch.Generator().manual_seed(SEED)
    for _ in range(epochs):
        perm = torch.randperm(len(x), generator=gen)
        for i in range(0, len(x), 32):
            idx = perm[i:i + 32]
            opt.zero_grad()
            loss = loss_fn(torch.log(model(x[idx]) + 1e-9), y[idx])
            loss.backward()
            opt.step()
    return model.eval()


def accuracy(model, x, y):
    with torch.no_grad():
        return (model(x).argmax(1) == y).float().mean().item()


def export(model, path):
    dummy = torch.zeros(1, 1, 8, 8)
    torch.onnx.export(model, dummy, path, input_names=["image"], output_names=["probs"],
                      opset_version=13, do_constant_folding=True)


def main():
    torch.manual_seed(SEED)
    np.random.seed(SEED)
    digits = load_digits()
    images = digits.images.astype(np.float32)          # 0..16
    labels = digits.target.astype(np.int64)
    n_train = len(images) * 4 // 5
    x = torch.from_numpy(images / 16.0).unsqueeze(1)   # [N, 1, 8, 8] in [0, 1]
    y = torch.from_numpy(labels)
    xtr, ytr, xte, yte = x[:n_train], y[:n_train], x[n_train:], y[n_train:]

    cnn = train(DigitCNN(), xtr, ytr, epochs=30)
    print(f"cnn: held-out accuracy {accuracy(cnn, xte, yte):.4f} on {len(xte)} images")
    export(cnn, os.path.join(ROOT, "models", "digits.onnx"))

    torch.manual_seed(SEED)
    mlp = train(DigitMLP(), xtr, ytr, epochs=30)
    print(f"mlp: held-out accuracy {accuracy(mlp, xte, yte):.4f} on {len(xte)} images")
    export(mlp, os.path.join(ROOT, "models", "digits_mlp.onnx"))

    # digits.bin: N records of 65 bytes, the label then the 64 pixels (0..16, row major).
    out = os.path.join(ROOT, "examples", "digits", "digits.bin")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "wb") as f:
        for i in range(n_train, n_train + N_IMAGES):
            f.write(bytes([labels[i]]) + digits.images[i].astype(np.uint8).tobytes())
    print(f"wrote {N_IMAGES} held-out images to {out}")


if __name__ == "__main__":
    main()
