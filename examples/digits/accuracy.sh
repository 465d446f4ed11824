#!/usr/bin/env bash
# accuracy.sh - The digit classifier's accuracy in float and in int8, side by side, over the
# whole held-out split of scikit-learn's digits (the last fifth, 360 images, as
# scripts/train_digits.py held it out), quantized with a profile of 100 training images.
#
#     bash examples/digits/accuracy.sh [GLOWC] [extra quantization options...]
#
# GLOWC defaults to build/release/glowc. Needs Debian's python3-sklearn (the data set ships
# with it; installed here when missing, as root). Prints both accuracies and their gap.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
glowc=${1:-$root/build/release/glowc}
shift || true
if ! /usr/bin/python3 -c 'import sklearn' 2>/dev/null; then
    echo "accuracy: apt-get install python3-sklearn"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-sklearn
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Held-out images as test_data_set_* folders (input_0.npy) with their labels; the first 100
# training images as the calibration samples.
/usr/bin/python3 - "$work" <<'EOF'
import os, sys
import numpy as np
from sklearn.datasets import load_digits
work = sys.argv[1]
d = load_digits()
x = (d.images / 16.0).astype(np.float32).reshape(-1, 1, 1, 8, 8)
n = len(x)
split = n - n // 5
os.makedirs(f"{work}/calib")
for i in range(100):
    np.save(f"{work}/calib/s{i:03d}.npy", x[i])
labels = []
for k, i in enumerate(range(split, n)):
    ds = f"{work}/held/test_data_set_{k}"
    os.makedirs(ds)
    np.save(f"{ds}/input_0.npy", x[i])
    labels.append(int(d.target[i]))
with open(f"{work}/labels.txt", "w") as f:
    f.write("\n".join(map(str, labels)) + "\n")
EOF

"$glowc" profile "$root/models/digits.onnx" "$work/calib" -o "$work/profile.json" >/dev/null
count=$(wc -l < "$work/labels.txt")
# One process per image and mode: the argmax line of `glowc run` is the prediction.
correct_f=0
correct_q=0
k=0
while read -r label; do
    img="$work/held/test_data_set_$k/input_0.npy"
    pf=$("$glowc" run "$root/models/digits.onnx" "$img" --backend cpu | sed -n 's/.*argmax \([0-9]*\).*/\1/p')
    pq=$("$glowc" run "$root/models/digits.onnx" "$img" --backend cpu \
         --quantize "$work/profile.json" "$@" | sed -n 's/.*argmax \([0-9]*\).*/\1/p')
    [ "$pf" = "$label" ] && correct_f=$((correct_f + 1))
    [ "$pq" = "$label" ] && correct_q=$((correct_q + 1))
    k=$((k + 1))
done < "$work/labels.txt"
awk -v f="$correct_f" -v q="$correct_q" -v n="$count" 'BEGIN {
    printf "digits held-out split: %d images\n", n
    printf "  float: %d correct, accuracy %.2f%%\n", f, 100 * f / n
    printf "  int8:  %d correct, accuracy %.2f%%\n", q, 100 * q / n
    printf "  gap:   %.2f points\n", 100 * (f - q) / n
}'
"$glowc" run "$root/models/digits.onnx" --quantize "$work/profile.json" "$@" --backend cpu \
    --compare-float "$work/held"
