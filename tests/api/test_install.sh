#!/usr/bin/env bash
# test_install.sh - What a newcomer does with an installed glowc, in a fresh prefix inside the
# build tree: `cmake --install`, then the classify example built with
# `pkg-config --cflags --libs glowc` and again through find_package(glowc), both run on LeNet's
# input (top-1 must be the reference's class 8); libglowc.so exports glowc_* only; the Python
# package imports from the prefix with no environment but PYTHONPATH.
# Usage: test_install.sh BUILD_DIR (run from the source root, as CTest does).
set -euo pipefail

BUILD=$(cd "$1" && pwd)
SRC=$(pwd)
PREFIX=$BUILD/install-test
rm -rf "$PREFIX" "$BUILD/install-test-classify"
cmake --install "$BUILD" --prefix "$PREFIX" >/dev/null
fail() { echo "test_install: $*" >&2; exit 1; }

for f in include/glowc/glowc.h lib/libglowc.so lib/libglowc.a lib/pkgconfig/glowc.pc \
         lib/cmake/glowc/glowcConfig.cmake bin/glowc lib/python3/dist-packages/glowc/__init__.py; do
    [ -e "$PREFIX/$f" ] || fail "missing $PREFIX/$f"
done

# Only the public API in the dynamic symbol table.
others=$(nm -D --defined-only "$PREFIX/lib/libglowc.so" | awk '{print $3}' | grep -v '^glowc_' || true)
[ -z "$others" ] || fail "libglowc.so exports more than glowc_*: $(echo $others | head -c 300)"
napi=$(nm -D --defined-only "$PREFIX/lib/libglowc.so" | grep -c ' T glowc_')
[ "$napi" -ge 30 ] || fail "libglowc.so exports only $napi glowc_* functions"

# The header alone compiles as C99 and as C++.
echo '#include <glowc/glowc.h>
int main(void) { return glowc_version_number() == GLOWC_VERSION ? 0 : 1; }' > "$PREFIX/h.c"
cc -std=c99 -Wall -Wextra -pedantic -Werror -I"$PREFIX/include" -c "$PREFIX/h.c" -o "$PREFIX/h.o"
if command -v g++ >/dev/null; then
    g++ -x c++ -Wall -Wextra -Werror -I"$PREFIX/include" -c "$PREFIX/h.c" -o "$PREFIX/hpp.o"
fi

# pkg-config, as the README says.
export PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig
flags=$(pkg-config --cflags --libs glowc)
cc -std=c99 -Wall -Wextra -Werror "$SRC/examples/classify/classify.c" $flags \
    -Wl,-rpath,"$PREFIX/lib" -o "$PREFIX/classify"
out=$("$PREFIX/classify" "$SRC/models/lenet.onnx" "$SRC/models/lenet_input.pb")
echo "pkg-config build: $out"
case "$out" in "top-1: class 8 (score 0.207"*) ;; *) fail "unexpected output: $out" ;; esac
out=$("$PREFIX/classify" "$SRC/models/lenet.onnx" "$SRC/models/lenet_input.pb" interpreter)
case "$out" in "top-1: class 8 "*) ;; *) fail "unexpected interpreter output: $out" ;; esac
# A failure comes with glowc's message.
if "$PREFIX/classify" "$SRC/models/lenet.onnx" "$SRC/models/digits.onnx" 2> "$PREFIX/err.txt"; then
    fail "classify accepted a model file as its input"
fi
grep -q "classify: reading the input: " "$PREFIX/err.txt" || fail "no message: $(cat "$PREFIX/err.txt")"

# find_package(glowc).
cmake -S "$SRC/examples/classify" -B "$BUILD/install-test-classify" \
    -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_BUILD_RPATH="$PREFIX/lib" >/dev/null
cmake --build "$BUILD/install-test-classify" >/dev/null
out=$("$BUILD/install-test-classify/classify" "$SRC/models/lenet.onnx" "$SRC/models/lenet_input.pb")
echo "find_package build: $out"
case "$out" in "top-1: class 8 "*) ;; *) fail "unexpected output: $out" ;; esac

# Python from the prefix: the package finds libglowc through the installed libdir.
if /usr/bin/python3 -c "import numpy" 2>/dev/null; then
    out=$(cd / && env -u GLOWC_LIBRARY PYTHONPATH="$PREFIX/lib/python3/dist-packages" \
          /usr/bin/python3 -c "
import numpy as np, glowc
s = glowc.Session('$SRC/models/lenet.onnx')
print(glowc.version(), s.inputs[0].name, s.inputs[0].shape, s.outputs[0].name)")
    echo "python: $out"
    case "$out" in *"input (1, 1, 28, 28) probs") ;; *) fail "unexpected python output: $out" ;; esac
fi
echo "test_install: ok"
