// fuzz_onnx_load.c - libFuzzer target: ONNX model bytes -> loaded module (src/onnx). A
// malformed file must give an error, never a crash or a sanitizer report (DESIGN.md). When a
// model loads, its graph must verify and its text and DOT dumps must be safe to print (names
// escaped: no control bytes, valid UTF-8), since names are the fuzzer's to choose.
#include <stdio.h>
#include <stdlib.h>

#include "graph/graph.h"
#include "onnx/onnx.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
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
