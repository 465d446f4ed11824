// partition_nodes.c - The partitioner's questions and rewrites of single nodes: which backend
// can run a node (asked of the backend itself), and splitting a matrix product whose weights
// no device can hold into products over slices of its output columns.
//
// Support: the node alone goes through the pipeline for that backend (lowering, IRGen, IR
// optimizer, the backend's prepare step) and every instruction through the backend's supports
// hook, the check glow_program_create makes on a whole program. For cpu and interpreter the
// answer is the same today: the cpu backend runs its own kernels and hands everything else to
// the evaluator the interpreter runs, so it supports a superset. The check is there for
// backends that differ, and so the partitioner never guesses.
//
// Splitting (glow_partition_options.split_nodes): Glow's memory partitioner places whole
// nodes, so a model with one weight larger than every device (VGG-19's first FullyConnected,
// 392 MiB, on 256 MiB devices) cannot be partitioned. A product splits exactly along its
// output columns: column j of A x B depends only on column j of B (and of the bias). Each
// slice holds about a quarter of the largest device, so the partitioner can fill the room the
// previous layers left. Float products with a constant weight only: Gemm (C constant or
// absent), FullyConnected, rank-2 MatMul.
#include <stdlib.h>
#include <string.h>

#include "runtime/partition_internal.h"

#define MAX_SLICES 64   /* Concat's operand limit */

/* Columns [c0, c1) of the row-major [rows, cols] constant `w`, as a new constant. */
static glow_node *column_slice(glow_module *m, const glow_node *w, int64_t c0, int64_t c1,
                               const char *name)
{
    const glow_type *t = &w->outs[0];
    int64_t rows = t->rank == 2 ? t->dims[0] : 1, cols = t->dims[t->rank - 1];
    size_t es = glow_dtype_size(t->dtype);
    glow_type st = *t;
    st.dims[st.rank - 1] = c1 - c0;
    uint8_t *buf = glow_xmalloc((size_t)(rows * (c1 - c0)) * es + 1);
    const uint8_t *src = w->payload.data;
    for (int64_t r = 0; r < rows; r++)
        memcpy(buf + (size_t)(r * (c1 - c0)) * es, src + (size_t)(r * cols + c0) * es,
               (size_t)(c1 - c0) * es);
    glow_node *c = glow_constant_create(m, name, &st, buf);
    free(buf);
    return c;
}

/* Rows [r0, r1) of the row-major [rows, cols] constant `w`. */
static glow_node *row_slice(glow_module *m, const glow_node *w, int64_t r0, int64_t r1,
                            const char *name)
{
    const glow_type *t = &w->outs[0];
    size_t row = (size_t)t->dims[1] * glow_dtype_size(t->dtype);
    glow_type st = *t;
    st.dims[0] = r1 - r0;
    return glow_constant_create(m, name, &st, (const uint8_t *)w->payload.data +
                                                  (size_t)r0 * row);
}

const glow_node *pt_split_weight(const glow_node *n)
{
    if (n->kind != NK_GEMM && n->kind != NK_FULLY_CONNECTED && n->kind != NK_MATMUL)
        return NULL;
    if (!glow_dtype_is_float(n->outs[0].dtype) || n->outs[0].rank != 2)
        return NULL;
    const glow_node *w = n->ins[1].node;
    if (w->kind != NK_CONSTANT)
        return NULL;
    if (n->nin > 2 && n->ins[2].node->kind != NK_CONSTANT)
        return NULL;
    return w;
}

/* Replaces product n by `k` products over column slices and a Concat. */
static glow_status split_node(glow_function *f, glow_node *n, int k, glow_diag *d)
{
    glow_module *m = f->module;
    const glow_node *w = pt_split_weight(n);
    bool tb = n->kind == NK_GEMM && glow_node_int(n, GA_TRANS_B, 0) != 0;
    int64_t cols = n->outs[0].dims[1];
    glow_value parts[MAX_SLICES];
    for (int i = 0; i < k; i++) {
        int64_t c0 = cols * i / k, c1 = cols * (i + 1) / k;
        char name[512];
        snprintf(name, sizeof name, "%s#%d", n->name, i);
        char wname[600];
        snprintf(wname, sizeof wname, "%s.w", name);
        glow_value ins[3];
        ins[0] = n->ins[0];
        ins[1] = glow_val(tb ? row_slice(m, w, c0, c1, wname)
                             : column_slice(m, w, c0, c1, wname), 0);
        if (n->nin > 2) {
            snprintf(wname, sizeof wname, "%s.b", name);
            ins[2] = glow_val(column_slice(m, n->ins[2].node, c0, c1, wname), 0);
        }
        if (!ins[1].node || (n->nin > 2 && !ins[2].node))
            return glow_fail(d, GLOW_ERR_TOO_LARGE, "cannot split '%s': out of memory",
                             n->name);
        glow_type out = n->outs[0];
        out.dims[1] = c1 - c0;
        glow_node *c = glow_node_create(f, n->kind, name, ins, (int)n->nin, &out, 1);
        pt_copy_attrs(c, n);
        glow_node_move_before(c, n);
        parts[i] = glow_val(c, 0);
    }
    glow_attr axis = GLOW_AI(AXIS, 1);
    glow_node *cat = glow_build(f, NK_CONCAT, n->name, parts, k, &axis, 1, NULL, 0, d);
    if (!cat)
        return GLOW_ERR_INTERNAL;
    glow_node_move_before(cat, n);
    glow_replace_all_uses(f, glow_val(n, 0), glow_val(cat, 0));
    glow_node_erase(n);
    return GLOW_OK;
}

glow_status pt_split_large(glow_function *f, uint64_t capacity, int *nsplit, glow_diag *d)
{
    *nsplit = 0;
    GLOW_FOR_EACH_NODE(f, n) {
        const glow_node *w = pt_split_weight(n);
        if (!w)
            continue;
        uint64_t need = 0;
        for (uint32_t i = 0; i < n->nin; i++)
            need += glow_type_bytes(glow_value_type(n->ins[i]));
        need += glow_type_bytes(&n->outs[0]);
        if (need <= capacity)
            continue;
        uint64_t wbytes = glow_type_bytes(&w->outs[0]);
        uint64_t slice = capacity / 4 ? capacity / 4 : 1;
        uint64_t k = (wbytes + slice - 1) / slice;
        int64_t cols = n->outs[0].dims[1];
        if (k < 2)
            k = 2;
        if (k > MAX_SLICES)
            k = MAX_SLICES;
        if ((int64_t)k > cols)
            k = (uint64_t)cols;
        if (k < 2)
            continue;
        GLOW_TRY(split_node(f, n, (int)k, d));
        (*nsplit)++;
    }
    return glow_function_verify(f, d);
}

/* Operands this small stay constants (lowering may want their values: shapes, pads, scales);
 * larger ones become placeholders, so asking costs no copy of a model's big weights. */
#define SMALL_CONSTANT 65536

bool glow_partition_backend_supports(const glow_node *n, const char *backend, void *ctx)
{
    (void)ctx;
    if (n->kind == NK_SAVE || !n->fn)
        return true;
    glow_module *m = glow_module_create();
    glow_function *f = glow_function_create(m, "main");
    glow_value ins[64];
    if (n->nin > 64) {
        glow_module_destroy(m);
        return true; /* no node kind has that many operands; the real compile will tell */
    }
    for (uint32_t k = 0; k < n->nin; k++) {
        const glow_node *o = n->ins[k].node;
        const glow_type *t = glow_value_type(n->ins[k]);
        glow_node *c = NULL;
        if (o->kind == NK_CONSTANT && glow_type_bytes(t) <= SMALL_CONSTANT)
            c = glow_constant_create(m, o->name, t, o->payload.data);
        else
            c = glow_placeholder_create(m, o->name, t, true);
        ins[k] = glow_val(c, 0);
    }
    glow_node *c = glow_node_create(f, n->kind, n->name, ins, (int)n->nin, n->outs,
                                    (int)n->nout);
    pt_copy_attrs(c, n);
    for (uint32_t r = 0; r < n->nout; r++) {
        glow_node *ph = glow_placeholder_create(m, "out", &n->outs[r], false);
        glow_save_create(f, "save", glow_val(c, r), ph);
    }
    glow_compile_options copt = { .backend = backend, .stop_after = GLOW_STAGE_IR_OPTIMIZED,
                                  .no_optimize = true };
    glow_program *p = NULL;
    glow_diag d = { 0 };
    glow_status st = glow_program_create(m, &copt, &p, &d);
    /* A failure other than "unsupported" says nothing about the backend (the node alone may
     * not compile where it would in its graph): leave the decision to the real compile. */
    bool ok = st != GLOW_ERR_UNSUPPORTED;
    for (const ir_instr *in = p && p->ir ? p->ir->first : NULL; in && ok; in = in->next) {
        char why[128];
        ok = p->backend->supports(in, why, sizeof why);
    }
    glow_program_destroy(p);
    return ok;
}
