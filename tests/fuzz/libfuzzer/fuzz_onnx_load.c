// fuzz_onnx_load.c - libFuzzer target: ONNX model bytes -> loaded module (src/onnx). A
// malformed file must give an error, never a crash or a sanitizer report (DESIGN.md). When a
// model loads, its graph must verify and its text and DOT dumps must be safe to print (names
// escaped: no control bytes, valid UTF-8), since names are the fuzzer's to choose. The same
// bytes also go through the mapped loader's wire-format walk (onnx_map.c), which reads them
// before protobuf-c does when the model comes from a file.
#include <stdio.h>
#include <stdlib.h>

#include "graph/graph.h"
#include "onnx/onnx.h"
#include "onnx/onnx_internal.h"

/* Dumps f with `dump` into memory and aborts (a finding) when the text is not safe. */
static void check_dump(const glow_function *f, void (*dump)(FILE *, const glow_function *))
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (!out)
        return;
    dump(out, f);
    fclose(out);
    if (!glow_text_is_safe(text, len, true)) {
        fprintf(stderr, "unsafe dump text:\n%.*s\n", (int)(len < 4096 ? len : 4096), text);
        abort();
    }
    free(text);
}

/* The walk that cuts the initializers' raw_data out before unpacking (files cut 64 KiB and
 * more; here every one, so inputs under libFuzzer's 64 KiB have something to cut): each cut
 * must lie inside the input, and the copy without them must parse exactly when the input
 * does, since only bytes fields left it. */
static void check_cut(const uint8_t *data, size_t size)
{
    uint8_t *small;
    size_t small_size, ncuts;
    onnx_cut *cuts;
    if (!onnx_cut_raw_data(data, size, 1, &small, &small_size, &cuts, &ncuts))
        return;
    for (size_t i = 0; i < ncuts; i++)
        if (cuts[i].off > size || cuts[i].len > size - cuts[i].off) {
            fprintf(stderr, "cut %zu outside the input: %zu + %zu of %zu\n", i, cuts[i].off,
                    cuts[i].len, size);
            abort();
        }
    const ProtobufCMessageDescriptor *md = &onnx__model_proto__descriptor;
    if (onnx_nesting_ok(md, data, size, ONNX_MAX_NESTING) &&
        onnx_nesting_ok(md, small, small_size, ONNX_MAX_NESTING)) {
        Onnx__ModelProto *a = onnx__model_proto__unpack(NULL, size, data);
        Onnx__ModelProto *b = onnx__model_proto__unpack(NULL, small_size, small);
        if (!a != !b) {
            fprintf(stderr, "the model %s but its copy without raw_data %s\n",
                    a ? "parses" : "does not parse", b ? "does" : "does not");
            abort();
        }
        if (a)
            onnx__model_proto__free_unpacked(a, NULL);
        if (b)
            onnx__model_proto__free_unpacked(b, NULL);
    }
    free(small);
    free(cuts);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_cut(data, size);
    glow_module *m = glow_module_create();
    glow_diag d = { 0 };
    if (glow_onnx_load_bytes(m, data, size, NULL, &d) == GLOW_OK) {
        glow_function *f = glow_module_function(m, "main");
        glow_diag v = { 0 };
        if (f && glow_function_verify(f, &v) != GLOW_OK) {
            fprintf(stderr, "a loaded model fails verification: %s\n", v.msg);
            abort();
        }
        if (f) {
            check_dump(f, glow_function_print);
            check_dump(f, glow_function_dump_dot);
        }
    } else if (!glow_text_is_safe(d.msg, d.len, true)) {
        fprintf(stderr, "unsafe message: %s\n", d.msg);
        abort();
    }
    glow_module_destroy(m);
    return 0;
}
