#!/usr/bin/env bash
# run.sh - The digits demo end to end: compiles models/digits.onnx with glowc into an AOT
# bundle, builds main.c against it with the system C compiler and runs it on the held-out
# digit images in digits.bin. GLOWC (optional) is the glowc binary (default: build/release).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
GLOWC=${GLOWC:-$ROOT/build/release/glowc}
OUT=${DIGITS_OUT:-$ROOT/build/digits}
CC=${CC:-cc}

mkdir -p "$OUT"
"$GLOWC" compile "$ROOT/models/digits.onnx" --emit-bundle "$OUT" --name digits
"$CC" -std=c99 -O2 -Wall -Wextra -Werror -I"$OUT" "$HERE/main.c" "$OUT/digits.o" -lm \
    -o "$OUT/digits_demo"
echo "run.sh: built $OUT/digits_demo"
"$OUT/digits_demo" "$OUT/digits.weights.bin" "$HERE/digits.bin" "$@"
