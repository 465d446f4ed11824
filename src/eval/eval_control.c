// eval_control.c - Reference evaluation of the lazy control-flow nodes IF and LOOP: their
// bodies are programs of their own (glow_subgraph_run), so an IF runs only the branch its
// condition takes and a LOOP runs its body once per iteration, however many there are
// (docs/dynamic-shapes.md, "Lazy control flow"). A LOOP's scan inputs are fed to the body one
// slice per iteration, and its scan outputs are written one slice per iteration, so a Scan or
// a Loop with scan outputs costs one body's memory, not one copy per iteration.
#include <stdlib.h>

#include "eval/eval_internal.h"

#define KIND_NAME(n) glow_ev_kind(n), (n)->name

static bool truth(const glow_tensor *t)
{
    return glow_load_i64(t->type.dtype, t->data, 0) != 0;
}

static glow_status ev_if(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                         glow_diag *d)
{
    int64_t k = glow_node_int(n, GA_K, 0);
    if (k < 0 || k > (int64_t)n->nin - 1)
        return glow_fail(d, GLOW_ERR_BAD_ATTR, "%s '%s': k = %lld", KIND_NAME(n), (long long)k);
    bool c = truth(&ins[0]);
    int64_t id = glow_node_int(n, c ? GA_THEN_BRANCH : GA_ELSE_BRANCH, 0);
    /* The then branch reads operands 1..k, the else branch the rest. */
    const glow_tensor *bins = c ? ins + 1 : ins + 1 + k;
    int nb = c ? (int)k : (int)(n->nin - 1 - (uint32_t)k);
    return glow_subgraph_run(id, bins, nb, outs, (int)n->nout, d);
}

/* --- scans --- */

/* One scan tensor seen as [outer, len, inner bytes] around its scan axis. */
typedef struct scan_view {
    uint8_t *data;
    int64_t outer, len;
    size_t inner;   /* bytes of one element times the dims after the axis */
    bool rev;
} scan_view;

static scan_view view_of(const glow_tensor *t, int axis, bool rev)
{
    scan_view v = { .data = t->data, .outer = 1, .len = t->type.dims[axis], .rev = rev };
    v.inner = glow_dtype_size(t->type.dtype);
    for (int i = 0; i < axis; i++)
        v.outer *= t->type.dims[i];
    for (int i = axis + 1; i < t->type.rank; i++)
        v.inner *= (size_t)t->type.dims[i];
    return v;
}

/* The type of one slice: t without its scan axis. */
static glow_type slice_type(const glow_type *t, int axis)
{
    glow_type s = *t;
    for (int i = axis; i + 1 < t->rank; i++)
        s.dims[i] = t->dims[i + 1];
    s.dims[--s.rank] = 0;
    return s;
}

/* Copies slice `it` (counted from the end when reversed) between v and the compact slice. */
static void move_slice(const scan_view *v, int64_t it, uint8_t *slice, bool into_view)
{
    int64_t pos = v->rev ? v->len - 1 - it : it;
    for (int64_t o = 0; o < v->outer; o++) {
        uint8_t *p = v->data + ((size_t)o * (size_t)v->len + (size_t)pos) * v->inner;
        uint8_t *q = slice + (size_t)o * v->inner;
        if (into_view)
            memcpy(p, q, v->inner);
        else
            memcpy(q, p, v->inner);
    }
}

/* --- LOOP --- */

/* Everything one LOOP run holds: the body's inputs (iteration, condition, carried, scan
 * slices, captures) and outputs (condition, carried, scan slices), and the scan views. */
typedef struct loop_run {
    int k, s, so;          /* carried values, scan inputs, scan outputs */
    glow_tensor *bins, *bouts;
    scan_view *views;      /* s scan inputs, then so scan outputs */
    int64_t len;           /* the scans' common length (-1: no scans) */
} loop_run;

static glow_status loop_setup(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                              loop_run *lr, glow_diag *d)
{
    int na, nd, nb, ne;
    const int64_t *ia = glow_node_ints(n, GA_SCAN_IN_AXES, &na);
    const int64_t *id = glow_node_ints(n, GA_SCAN_IN_DIRS, &nd);
    const int64_t *oa = glow_node_ints(n, GA_SCAN_OUT_AXES, &nb);
    const int64_t *od = glow_node_ints(n, GA_SCAN_OUT_DIRS, &ne);
    if (na != lr->s || nd != lr->s || nb != lr->so || ne != lr->so)
        return glow_fail(d, GLOW_ERR_BAD_ATTR, "%s '%s': scan attributes do not fit %d scan "
                         "inputs and %d scan outputs", KIND_NAME(n), lr->s, lr->so);
    glow_status st = GLOW_OK;
    for (int j = 0; j < lr->s + lr->so && st == GLOW_OK; j++) {
        bool in = j < lr->s;
        const glow_tensor *t = in ? &ins[2 + lr->k + j] : &outs[lr->k + j - lr->s];
        int64_t axis = in ? ia[j] : oa[j - lr->s];
        if (axis < 0 || axis >= t->type.rank)
            return glow_fail(d, GLOW_ERR_BAD_ATTR, "%s '%s': scan axis %lld of a rank-%d "
                             "tensor", KIND_NAME(n), (long long)axis, t->type.rank);
        lr->views[j] = view_of(t, (int)axis, (in ? id[j] : od[j - lr->s]) != 0);
        if (lr->len >= 0 && lr->views[j].len != lr->len)
            return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': scans of %lld and %lld slices",
                             KIND_NAME(n), (long long)lr->len, (long long)lr->views[j].len);
        lr->len = lr->views[j].len;
        glow_type st_ = slice_type(&t->type, (int)axis);
        glow_tensor *slot = in ? &lr->bins[2 + lr->k + j] : &lr->bouts[1 + lr->k + j - lr->s];
        st = glow_tensor_alloc(slot, &st_, d);
    }
    for (int i = 0; i < lr->k && st == GLOW_OK; i++)
        st = glow_tensor_alloc(&lr->bouts[1 + i], &outs[i].type, d);
    return st;
}

/* The body's inputs are (iteration, condition, carried..., scan slices..., captures...) and
 * its outputs (condition, carried..., scan slices...). The carried values live in the results
 * from the start, and each iteration's new ones come back through bouts. */
static glow_status ev_loop(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                           glow_diag *d)
{
    loop_run lr = { .k = (int)glow_node_int(n, GA_K, 0),
                    .s = (int)glow_node_int(n, GA_SCAN_INPUTS, 0), .len = -1 };
    int nin = (int)n->nin, nout = (int)n->nout;
    /* With scan_count the body may end the loop before the scans are full: the last result
     * counts the iterations run (infer_control.c keeps its scans on axis 0, forward). */
    bool counted = glow_node_int(n, GA_SCAN_COUNT, 0) != 0;
    int nres = nout - counted;   /* the body's results: carried and scan outputs */
    lr.so = nres - lr.k;
    if (lr.k < 0 || lr.s < 0 || lr.so < 0 || 2 + lr.k + lr.s > nin)
        return glow_fail(d, GLOW_ERR_BAD_ATTR, "%s '%s': k = %d, %d scan inputs with %d "
                         "operands and %d results", KIND_NAME(n), lr.k, lr.s, nin, nout);
    int64_t trips = glow_load_i64(ins[0].type.dtype, ins[0].data, 0);
    bool cond = truth(&ins[1]);
    for (int i = 0; i < lr.k; i++)
        memmove(outs[i].data, ins[2 + i].data, glow_type_bytes(&outs[i].type));
    int64_t iter = 0;
    uint8_t cond_in = cond, cond_out = 0;
    glow_type it = glow_type_scalar(GLOW_I64), ct = glow_type_scalar(GLOW_BOOL);
    lr.bins = glow_xcalloc((size_t)nin, sizeof *lr.bins);
    lr.bouts = glow_xcalloc((size_t)(1 + nres), sizeof *lr.bouts);
    lr.views = glow_xcalloc((size_t)(lr.s + lr.so + 1), sizeof *lr.views);
    lr.bins[0] = glow_tensor_borrow(&it, &iter);
    lr.bins[1] = glow_tensor_borrow(&ct, &cond_in);
    for (int i = 0; i < lr.k; i++)
        lr.bins[2 + i] = outs[i];
    for (int i = 2 + lr.k + lr.s; i < nin; i++)
        lr.bins[i] = ins[i];
    lr.bouts[0] = glow_tensor_borrow(&ct, &cond_out);
    glow_status s = loop_setup(n, ins, outs, &lr, d);
    int64_t body = glow_node_int(n, GA_BODY, 0);
    for (; s == GLOW_OK && iter < trips && cond; iter++) {
        if (lr.len >= 0 && iter >= lr.len) {
            s = glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': runs more than the %lld iterations "
                          "its scans hold", KIND_NAME(n), (long long)lr.len);
            break;
        }
        for (int j = 0; j < lr.s; j++)
            move_slice(&lr.views[j], iter, lr.bins[2 + lr.k + j].data, false);
        cond_in = cond;
        s = glow_subgraph_run(body, lr.bins, nin, lr.bouts, 1 + nres, d);
        for (int i = 0; s == GLOW_OK && i < lr.k; i++)
            memcpy(outs[i].data, lr.bouts[1 + i].data, glow_type_bytes(&outs[i].type));
        for (int j = 0; s == GLOW_OK && j < lr.so; j++)
            move_slice(&lr.views[lr.s + j], iter, lr.bouts[1 + lr.k + j].data, true);
        cond = cond_out != 0;
    }
    /* The slices run are at the front of each scan output; the rest is zeroed, so a run's
     * result never depends on an earlier run's (like the data-dependent nodes, eval_dyn.c). */
    for (int j = 0; s == GLOW_OK && counted && j < lr.so; j++) {
        const scan_view *v = &lr.views[lr.s + j];
        size_t used = (size_t)iter * v->inner, total = (size_t)v->len * v->inner;
        if (used < total)
            memset(v->data + used, 0, total - used);
    }
    if (s == GLOW_OK && counted)
        *(int64_t *)outs[nout - 1].data = iter;
    /* Scan outputs are sized for `len` iterations; fewer would leave slices unwritten. */
    if (s == GLOW_OK && !counted && lr.len >= 0 && iter != lr.len)
        s = glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': ended after %lld iterations, but its "
                      "scans hold %lld", KIND_NAME(n), (long long)iter, (long long)lr.len);
    for (int j = 0; j < lr.s; j++)
        glow_tensor_free(&lr.bins[2 + lr.k + j]);
    for (int i = 1; i < 1 + nres; i++)
        glow_tensor_free(&lr.bouts[i]);
    free(lr.bins);
    free(lr.bouts);
    free(lr.views);
    return s;
}

glow_status glow_ev_control(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                            glow_diag *d)
{
    if (n->kind == NK_IF)
        return ev_if(n, ins, outs, d);
    if (n->kind == NK_LOOP)
        return ev_loop(n, ins, outs, d);
    return glow_fail(d, GLOW_ERR_INTERNAL, "%s '%s': not a control-flow kind", KIND_NAME(n));
}
