// program_report.c - The line --stats (GLOWC_REPORT_BACKEND) prints about a compiled program:
// how many instructions its backend runs natively, which kinds fall back to the evaluator,
// and whether the machine code came from the compiled-code cache. One text for the CLI's
// own paths and the public API's.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"

/* "Slice f32" style: the instruction's kind and the element type of its first input. */
static void kind_key(const ir_instr *in, char *buf, size_t size)
{
    const ir_value *v = in->ops[in->nops > in->nout ? in->nout : 0].v;
    snprintf(buf, size, "%s %s", ir_instr_kind_name(in->kind), glow_dtype_name(v->type.dtype));
}

void glow_program_report_backend(const glow_program *p, FILE *out)
{
    if (!p || !p->ir || !p->backend || !p->backend->fallbacks)
        return;
    const ir_instr *const *fb = NULL;
    int n = glow_program_fallbacks(p, &fb), total = 0;
    for (const ir_instr *in = p->ir->first; in; in = in->next)
        total += in->kind != IK_ALLOC && in->kind != IK_DEALLOC && in->kind != IK_CPU_ZERO;
    fprintf(out, "%s backend: %d of %d instructions fall back to the evaluator%s",
            p->backend->name, n, total, n ? ":" : "");
    /* Each kind once, with its count, in order of first appearance. */
    bool *done = calloc((size_t)n + 1, sizeof *done);
    for (int i = 0; done && i < n; i++) {
        if (done[i])
            continue;
        char key[96], other[96];
        kind_key(fb[i], key, sizeof key);
        int count = 0;
        for (int j = i; j < n; j++) {
            kind_key(fb[j], other, sizeof other);
            if (!done[j] && !strcmp(key, other)) {
                done[j] = true;
                count++;
            }
        }
        fprintf(out, "%s %s (%d)", i ? "," : "", key, count);
    }
    fputc('\n', out);
    free(done);
    if (glow_program_code_cached(p))
        fprintf(out, "%s backend: machine code from the compiled-code cache\n",
                p->backend->name);
}
