// fuzz_compile.c - libFuzzer target: a small model that loads goes through the whole compile
// pipeline - graph optimizer, lowering, scheduling, IR generation, IR optimizer and memory
// plan - for the interpreter (no run, no JIT: glow_program_create stops after the plan).
// "Small" keeps each input fast: at most 256 nodes and 2^20 elements in every value, and a
// 64 MiB memory limit on the plan (the --max-memory check), so the fuzzer explores shapes
// and attributes rather than waiting on constant folding of huge tensors.
#include <stdio.h>
#include <stdlib.h>

#include "graph/graph.h"
#include "onnx/onnx.h"
#include "runtime/runtime.h"

#define MAX_NODES 256
#define MAX_ELEMS ((int64_t)1 << 20)

static bool small_type(const glow_type *t)
{
    int64_t n = glow_type_numel(t);
    return n >= 0 && n <= MAX_ELEMS;
}

static bool small_list(const glow_node_list *l, bool count)
{
    if (count && l->count > MAX_NODES)
        return false;
    for (const glow_node *n = l->first; n; n = n->next)
        for (uint32_t i = 0; i < n->nout; i++)
            if (!small_type(&n->outs[i]))
                return false;
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    glow_module *m = glow_module_create();
    glow_diag d = { 0 };
    if (glow_onnx_load_bytes(m, data, size, NULL, &d) != GLOW_OK) {
        glow_module_destroy(m);
        return 0;
    }
    glow_function *f = glow_module_function(m, "main");
    if (!f || !small_list(&f->nodes, true) || !small_list(&m->constants, false) ||
        !small_list(&m->placeholders, false)) {
        glow_module_destroy(m);
        return 0;
    }
    glow_compile_options opt = { .backend = "interpreter",
                                 .stop_after = GLOW_STAGE_IR_OPTIMIZED,
                                 .max_memory = 64u << 20 };
    glow_program *p = NULL;
    if (glow_program_create(m, &opt, &p, &d) == GLOW_OK) {   /* takes m either way */
        /* What the pipeline hands a backend must verify, and fit the limit it accepted. */
        glow_diag v = { 0 };
        if (ir_function_verify(p->ir, &v) != GLOW_OK) {
            fprintf(stderr, "the compiled IR fails verification: %s\n", v.msg);
            abort();
        }
        if (p->ir->constant_bytes + p->ir->mutable_bytes + p->ir->activation_bytes >
            opt.max_memory) {
            fprintf(stderr, "a plan over the limit was accepted\n");
            abort();
        }
        glow_program_destroy(p);
    }
    return 0;
}
