// fuzz_tensor_file.c - libFuzzer target: the tensor-file readers (src/onnx/tensor_file.c and
// onnx_tensor.c) on the same bytes, as a serialized TensorProto (.pb) and as a NumPy file
// (.npy). Either reader must refuse bad bytes with a message; a tensor it returns must hold
// exactly as many bytes as its type says (the sanitizers see any read past the data).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "onnx/onnx.h"

/* Touches every byte of a returned tensor: the buffer must be as large as the type says. */
static void touch(const glow_tensor *t)
{
    size_t n = glow_tensor_bytes(t);
    const volatile uint8_t *p = t->data;
    uint8_t acc = 0;
    for (size_t i = 0; i < n; i++)
        acc ^= p[i];
    (void)acc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    glow_tensor t = { 0 };
    char *name = NULL;
    glow_diag d = { 0 };
    if (glow_tensor_read_pb(data, size, &t, &name, &d) == GLOW_OK) {
        touch(&t);
        /* What was read writes back and reads again as the same tensor. */
        uint8_t *pb = NULL;
        size_t pbsize = 0;
        glow_diag w = { 0 };
        if (glow_tensor_to_pb(&t, name, &pb, &pbsize, &w) == GLOW_OK) {
            glow_tensor back = { 0 };
            char *name2 = NULL;
            glow_diag r = { 0 };
            if (glow_tensor_read_pb(pb, pbsize, &back, &name2, &r) != GLOW_OK ||
                !glow_tensor_equal(&t, &back)) {
                fprintf(stderr, "a tensor read from .pb does not read back: %s\n", r.msg);
                abort();
            }
            glow_tensor_free(&back);
            free(name2);
            free(pb);
        }
        glow_tensor_free(&t);
    }
    free(name);
    glow_diag_clear(&d);
    t = (glow_tensor){ 0 };
    if (glow_tensor_read_npy(data, size, &t, &d) == GLOW_OK) {
        touch(&t);
        glow_tensor_free(&t);
    }
    return 0;
}
