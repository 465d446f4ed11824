// infer.c - Type inference: dispatch, shared checks, glow_build, and the elementwise kinds.
//
// Inference runs on a read-only node and writes the result types into an infer_cx; only
// glow_infer_types copies them into the node. That lets the verifier recompute a node's
// types without touching it. Generic checks (operand counts, required attributes, result
// sizes) live here; each family file checks its operands' dtypes and shapes.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/infer_internal.h"

tstr ts(const glow_type *t)
{
    tstr r;
    glow_type_str(t, r.s, sizeof r.s);
    return r;
}

glow_status ifail(infer_cx *cx, glow_status s, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return glow_fail(cx->d, s, "%s '%s': %s", glow_node_kind_name(cx->n->kind), cx->n->name,
                     msg);
}

int64_t attr_i(const infer_cx *cx, glow_attr_id a, int64_t dflt)
{
    const glow_attr *at = glow_node_attr(cx->n, a);
    return at ? at->v.i : dflt;
}

double attr_f(const infer_cx *cx, glow_attr_id a, double dflt)
{
    const glow_attr *at = glow_node_attr(cx->n, a);
    return at ? at->v.f : dflt;
}

const int64_t *attr_ints(const infer_cx *cx, glow_attr_id a, int *count)
{
    const glow_attr *at = glow_node_attr(cx->n, a);
    *count = at ? (int)at->n : 0;
    return at && at->n ? at->v.ints : NULL;
}

const char *attr_s(const infer_cx *cx, glow_attr_id a, const char *dflt)
{
    const glow_attr *at = glow_node_attr(cx->n, a);
    return at && at->v.s ? at->v.s : dflt;
}

glow_status want_ints(infer_cx *cx, glow_attr_id a, int want, const int64_t **vals)
{
    int count;
    *vals = attr_ints(cx, a, &count);
    if (count != want)
        return ifail(cx, GLOW_ERR_BAD_ATTR, "'%s' has %d values, expected %d",
                     glow_attr_name(a), count, want);
    return GLOW_OK;
}

glow_status want_str_in(infer_cx *cx, glow_attr_id a, const char *allowed)
{
    const char *s = attr_s(cx, a, NULL);
    size_t len = s ? strlen(s) : 0;
    for (const char *p = allowed; s && *p;) {
        size_t w = strcspn(p, " ");
        if (w == len && strncmp(p, s, w) == 0)
            return GLOW_OK;
        p += w;
        p += strspn(p, " ");
    }
    return ifail(cx, GLOW_ERR_BAD_ATTR, "'%s' is \"%s\", expected one of: %s", glow_attr_name(a),
                 s ? s : "(none)", allowed);
}

glow_status want_axis(infer_cx *cx, glow_attr_id a, int limit, int *axis)
{
    int64_t v = attr_i(cx, a, 0);
    if (v < 0 || v >= limit)
        return ifail(cx, GLOW_ERR_BAD_ATTR, "'%s' = %" PRId64 " is outside [0, %d)",
                     glow_attr_name(a), v, limit);
    *axis = (int)v;
    return GLOW_OK;
}

glow_status want_float(infer_cx *cx, int i, const char *role)
{
    const glow_type *t = in_type(cx, i);
    if (glow_dtype_is_float(t->dtype) || glow_dtype_is_quantized(t->dtype))
        return GLOW_OK;
    return ifail(cx, GLOW_ERR_BAD_TYPE, "%s %s must be a floating-point tensor", role, ts(t).s);
}

glow_status want_numeric(infer_cx *cx, int i, const char *role)
{
    const glow_type *t = in_type(cx, i);
    if (t->dtype != GLOW_BOOL && t->dtype != GLOW_STRING)
        return GLOW_OK;
    return ifail(cx, GLOW_ERR_BAD_TYPE, "%s %s must be numeric, not %s", role, ts(t).s,
                 glow_dtype_name(t->dtype));
}

glow_status want_index(infer_cx *cx, int i, const char *role)
{
    const glow_type *t = in_type(cx, i);
    if (t->dtype == GLOW_I32 || t->dtype == GLOW_I64)
        return GLOW_OK;
    return ifail(cx, GLOW_ERR_BAD_TYPE, "%s %s must be i32 or i64", role, ts(t).s);
}

glow_status want_same_dtype(infer_cx *cx, int i, int j, const char *ri, const char *rj)
{
    const glow_type *a = in_type(cx, i), *b = in_type(cx, j);
    if (a->dtype == b->dtype)
        return GLOW_OK;
    return ifail(cx, GLOW_ERR_BAD_TYPE, "%s %s and %s %s differ in element kind", ri, ts(a).s,
                 rj, ts(b).s);
}

glow_status want_rank(infer_cx *cx, int i, const char *role, int lo, int hi)
{
    const glow_type *t = in_type(cx, i);
    if (t->rank >= lo && t->rank <= hi)
        return GLOW_OK;
    if (lo == hi)
        return ifail(cx, GLOW_ERR_BAD_SHAPE, "%s %s has rank %d, expected %d", role, ts(t).s,
                     t->rank, lo);
    return ifail(cx, GLOW_ERR_BAD_SHAPE, "%s %s has rank %d, expected %d to %d", role, ts(t).s,
                 t->rank, lo, hi);
}

void set_out(infer_cx *cx, int i, const glow_type *t)
{
    glow_type r = *t;
    if (!glow_dtype_is_quantized(r.dtype)) {
        r.scale = 0;
        r.offset = 0;
    } else if (cx->declared && i < cx->ndeclared &&
               glow_dtype_is_quantized(cx->declared[i].dtype)) {
        /* Quantization parameters of a result are chosen (by the quantizer or the model),
         * not derived, so they come from the declared type. */
        r.dtype = cx->declared[i].dtype;
        r.scale = cx->declared[i].scale;
        r.offset = cx->declared[i].offset;
    }
    for (int k = r.rank; k < GLOW_MAX_DIMS; k++)
        r.dims[k] = 0;
    if (i < cx->cap)
        cx->out[i] = r;
}

glow_dtype quant_result_kind(const infer_cx *cx, glow_dtype x)
{
    if (!glow_dtype_is_quantized(x) || !cx->declared || cx->ndeclared < 1)
        return x;
    glow_dtype r = cx->declared[0].dtype;
    return glow_dtype_is_quantized(r) || r == GLOW_I32 ? r : x;
}

void set_out_dims(infer_cx *cx, int i, glow_dtype dt, int rank, const int64_t *dims)
{
    glow_type t = glow_type_make(dt, rank, dims);
    /* Keep the operand's quantization when the result has the operand's element kind. */
    if (cx->n->nin > 0 && in_type(cx, 0)->dtype == dt) {
        t.scale = in_type(cx, 0)->scale;
        t.offset = in_type(cx, 0)->offset;
    }
    set_out(cx, i, &t);
}

/* ---- Elementwise kinds ---- */

static bool is_float_only(glow_node_kind k)
{
    switch (k) {
    case NK_DIV: case NK_SIGMOID: case NK_TANH: case NK_EXP: case NK_LOG: case NK_SQRT:
    case NK_FLOOR: case NK_CEIL: case NK_ROUND: case NK_RECIPROCAL: case NK_SIN: case NK_COS:
    case NK_TAN: case NK_ASIN: case NK_ACOS: case NK_ATAN: case NK_SINH: case NK_COSH:
    case NK_ASINH: case NK_ACOSH: case NK_ATANH: case NK_ISNAN: case NK_ISINF:
    case NK_SOFTPLUS: case NK_SOFTSIGN: case NK_ELU: case NK_SELU: case NK_CELU:
    case NK_LEAKY_RELU: case NK_THRESHOLDED_RELU: case NK_HARD_SIGMOID: case NK_HARD_SWISH:
    case NK_GELU: case NK_MISH:
        return k != NK_DIV;   /* Div also divides integers */
    default:
        return false;
    }
}

static bool is_int_only(glow_node_kind k)
{
    return k == NK_BITSHIFT || k == NK_BITWISE_AND || k == NK_BITWISE_OR ||
           k == NK_BITWISE_XOR || k == NK_BITWISE_NOT;
}

static const char *const operand_words[] = { "operand 0", "operand 1", "operand 2" };

static glow_status infer_elemwise(infer_cx *cx)
{
    const glow_node *n = cx->n;
    unsigned fl = glow_node_kind_flags(n->kind);
    const glow_type *a = in_type(cx, 0);
    int first = n->kind == NK_WHERE ? 1 : 0;   /* the operand that gives the result type */

    for (uint32_t i = 1; i < n->nin; i++) {
        const glow_type *b = in_type(cx, (int)i);
        if (!glow_type_same_shape(a, b))
            return ifail(cx, GLOW_ERR_BAD_SHAPE,
                         "operand %u %s does not have the shape of operand 0 %s "
                         "(elementwise operands must have identical shapes)", i, ts(b).s,
                         ts(a).s);
    }
    if (n->kind == NK_WHERE) {
        if (a->dtype != GLOW_BOOL)
            return ifail(cx, GLOW_ERR_BAD_TYPE, "condition %s must be bool", ts(a).s);
        GLOW_TRY(want_same_dtype(cx, 1, 2, "operand 1", "operand 2"));
    } else if (fl & NF_LOGICAL) {
        for (uint32_t i = 0; i < n->nin; i++)
            if (in_type(cx, (int)i)->dtype != GLOW_BOOL)
                return ifail(cx, GLOW_ERR_BAD_TYPE, "operand %u %s must be bool", i,
                             ts(in_type(cx, (int)i)).s);
    } else {
        /* POW's exponent may have its own element kind; everything else matches operand 0.
         * Quantized operands may differ in scale and offset, and in kind too: each is read
         * with its own offset (symmetric-uint8 gives a Relu's output u8q and a signed value
         * i8q, and a residual Add sums the two). */
        bool mixed_q = n->nin == 2 && glow_dtype_is_quantized(a->dtype) &&
                       glow_dtype_is_quantized(in_type(cx, 1)->dtype);
        if (n->nin == 2 && n->kind != NK_POW && !mixed_q)
            GLOW_TRY(want_same_dtype(cx, 0, 1, "operand 0", "operand 1"));
        bool cmp_eq = n->kind == NK_EQUAL;
        for (uint32_t i = 0; i < n->nin; i++) {
            if (cmp_eq)
                break;   /* Equal also compares bools */
            const char *role = operand_words[i];
            if (is_float_only(n->kind))
                GLOW_TRY(want_float(cx, (int)i, role));
            else if (is_int_only(n->kind)) {
                if (!glow_dtype_is_int(in_type(cx, (int)i)->dtype))
                    return ifail(cx, GLOW_ERR_BAD_TYPE, "%s %s must be an integer tensor",
                                 role, ts(in_type(cx, (int)i)).s);
            } else
                GLOW_TRY(want_numeric(cx, (int)i, role));
        }
        if ((n->kind == NK_ISNAN || n->kind == NK_ISINF) && !glow_dtype_is_float(a->dtype))
            return ifail(cx, GLOW_ERR_BAD_TYPE, "operand 0 %s must be a float tensor", ts(a).s);
    }
    switch (n->kind) {
    case NK_MOD:
        if (attr_i(cx, GA_FMOD, 0) == 0 && !glow_dtype_is_int(a->dtype))
            return ifail(cx, GLOW_ERR_BAD_ATTR, "fmod=0 requires integer operands, got %s",
                         ts(a).s);
        break;
    case NK_BITSHIFT:
        GLOW_TRY(want_str_in(cx, GA_DIRECTION, "LEFT RIGHT"));
        break;
    case NK_GELU:
        GLOW_TRY(want_str_in(cx, GA_APPROXIMATE, "none tanh"));
        break;
    default:
        break;   /* CLIP with min > max is valid: ONNX then gives max everywhere */
    }
    if (fl & NF_CMP) {
        glow_type r = glow_type_make(GLOW_BOOL, a->rank, a->dims);
        set_out(cx, 0, &r);
    } else {
        set_out(cx, 0, in_type(cx, first));
    }
    return GLOW_OK;
}

/* ---- Storage, SAVE, CAST ---- */

static glow_status infer_misc(infer_cx *cx)
{
    const glow_node *n = cx->n;
    switch (n->kind) {
    case NK_CONSTANT:
    case NK_PLACEHOLDER:
        /* Storage types are given, not derived. */
        if (!cx->declared || cx->ndeclared != 1)
            return ifail(cx, GLOW_ERR_INTERNAL, "storage needs exactly one declared type");
        if (n->kind == NK_CONSTANT && !glow_type_equal(&n->payload.type, &cx->declared[0]))
            return ifail(cx, GLOW_ERR_BAD_TYPE, "payload %s differs from the result type %s",
                         ts(&n->payload.type).s, ts(&cx->declared[0]).s);
        cx->out[0] = cx->declared[0];
        return GLOW_OK;
    case NK_SAVE: {
        const glow_node *ph = n->ins[1].node;
        if (ph->kind != NK_PLACEHOLDER || ph->is_input)
            return ifail(cx, GLOW_ERR_BAD_TYPE,
                         "operand 1 '%s' must be an output placeholder, not %s%s", ph->name,
                         ph->kind == NK_PLACEHOLDER ? "an input " : "a ",
                         glow_node_kind_name(ph->kind));
        if (!glow_type_equal(in_type(cx, 0), in_type(cx, 1)))
            return ifail(cx, GLOW_ERR_BAD_TYPE, "value %s does not match placeholder '%s' %s",
                         ts(in_type(cx, 0)).s, ph->name, ts(in_type(cx, 1)).s);
        return GLOW_OK;
    }
    case NK_CAST: {
        if (!cx->declared)
            return ifail(cx, GLOW_ERR_BAD_TYPE, "needs a declared result type");
        const glow_type *x = in_type(cx, 0), *r = &cx->declared[0];
        if (!glow_type_same_shape(x, r))
            return ifail(cx, GLOW_ERR_BAD_SHAPE, "declared result %s changes the shape of %s",
                         ts(r).s, ts(x).s);
        cx->out[0] = *r;
        return GLOW_OK;
    }
    default:
        GLOW_UNREACHABLE();
    }
}

/* ---- Dispatch ---- */

static glow_status check_attrs(infer_cx *cx)
{
    const glow_node *n = cx->n;
    for (uint32_t i = 0; i < n->nattr; i++) {
        const glow_attr *a = &n->attrs[i];
        if ((unsigned)a->id >= GA_COUNT)
            return ifail(cx, GLOW_ERR_BAD_ATTR, "attribute #%u has an unknown id %d", i,
                         (int)a->id);
        glow_attr_kind k = glow_attr_kind_of(a->id);
        if (((k == AK_INTS || k == AK_FLOATS) && a->n && !a->v.ints) ||
            (k == AK_STR && !a->v.s))
            return ifail(cx, GLOW_ERR_BAD_ATTR, "attribute '%s' has no value",
                         glow_attr_name(a->id));
    }
    const char *req = glow_node_kind_required_attrs(n->kind);
    for (const char *p = req ? req : ""; *p;) {
        size_t w = strcspn(p, " ");
        char name[64];
        if (w > 0 && w < sizeof name) {
            memcpy(name, p, w);
            name[w] = 0;
            glow_attr_id id;
            if (!glow_attr_from_name(name, &id))
                return ifail(cx, GLOW_ERR_INTERNAL, "nodes.def names unknown attribute '%s'",
                             name);
            if (!glow_node_attr(n, id))
                return ifail(cx, GLOW_ERR_BAD_ATTR, "missing required attribute '%s'", name);
        }
        p += w;
        p += strspn(p, " ");
    }
    return GLOW_OK;
}

static glow_status check_result_sizes(infer_cx *cx)
{
    for (int i = 0; i < cx->nout; i++) {
        const glow_type *t = &cx->out[i];
        int64_t numel = (int64_t)glow_dtype_size(t->dtype);
        if (t->rank > GLOW_MAX_DIMS)
            return ifail(cx, GLOW_ERR_BAD_SHAPE, "result %d has rank %d (at most %d)", i,
                         t->rank, GLOW_MAX_DIMS);
        for (int k = 0; k < t->rank; k++) {
            if (t->dims[k] < 0)
                return ifail(cx, GLOW_ERR_BAD_SHAPE, "result %d has negative dim %" PRId64,
                             i, t->dims[k]);
            if (mul_ok(numel, t->dims[k], &numel))
                continue;
            return ifail(cx, GLOW_ERR_TOO_LARGE, "result %d is too large", i);
        }
    }
    return GLOW_OK;
}

void infer_release(infer_cx *cx)
{
    if (cx->out != cx->small)
        free(cx->out);
    cx->out = cx->small;
    cx->cap = INFER_MAX_OUT;
}

/* Attributes, then the kind's own rule, then the result sizes. */
static glow_status infer_kind(infer_cx *cx, const glow_node *n)
{
    GLOW_TRY(check_attrs(cx));

    glow_status s;
    bool handled = false;
    unsigned fl = glow_node_kind_flags(n->kind);
    if ((fl & NF_STORAGE) || n->kind == NK_SAVE || n->kind == NK_CAST) {
        s = infer_misc(cx);
        handled = true;
    } else if (fl & NF_ELEMWISE) {
        s = infer_elemwise(cx);
        handled = true;
    } else {
        s = infer_nn(cx, &handled);
        if (!handled)
            s = infer_shape(cx, &handled);
        if (!handled)
            s = infer_reduce(cx, &handled);
        if (!handled)
            s = infer_prim(cx, &handled);
        if (!handled)
            s = infer_quant(cx, &handled);
        if (!handled)
            s = infer_loop(cx, &handled);
        if (!handled)
            s = infer_dyn(cx, &handled);
        if (!handled)
            s = infer_string(cx, &handled);
    }
    if (!handled)
        return ifail(cx, GLOW_ERR_UNSUPPORTED, "no type inference for this kind");
    GLOW_TRY(s);
    return check_result_sizes(cx);
}

glow_status infer_run(infer_cx *cx, const glow_node *n, const glow_type *declared, int nout,
                      glow_diag *d)
{
    memset(cx, 0, sizeof *cx);
    cx->out = cx->small;
    cx->cap = INFER_MAX_OUT;
    cx->n = n;
    cx->d = d;
    cx->declared = declared;
    cx->ndeclared = declared ? nout : 0;
    if ((unsigned)n->kind >= NK_COUNT)
        return glow_fail(d, GLOW_ERR_INTERNAL, "node '%s' has unknown kind %d", n->name,
                         (int)n->kind);
    int lo = glow_node_kind_min_in(n->kind), hi = glow_node_kind_max_in(n->kind);
    int maxout = glow_node_kind_max_out(n->kind);
    if ((int)n->nin < lo || (int)n->nin > hi) {
        if (lo == hi)
            return ifail(cx, GLOW_ERR_BAD_SHAPE, "has %u operands, expected %d", n->nin, lo);
        return ifail(cx, GLOW_ERR_BAD_SHAPE, "has %u operands, expected %d to %d", n->nin, lo,
                     hi);
    }
    for (uint32_t i = 0; i < n->nin; i++) {
        glow_value v = n->ins[i];
        if (!v.node || v.res >= v.node->nout || !v.node->outs)
            return ifail(cx, GLOW_ERR_INTERNAL, "operand %u is not a valid value", i);
    }
    cx->nout = nout > 0 ? nout : maxout;
    if (cx->nout > maxout || (maxout > 0 && cx->nout < 1))
        return ifail(cx, GLOW_ERR_BAD_SHAPE, "has %d results, expected 1 to %d", cx->nout,
                     maxout);
    if (cx->nout > INFER_MAX_OUT) {
        cx->out = glow_xcalloc((size_t)cx->nout, sizeof *cx->out);
        cx->cap = cx->nout;
    }
    glow_status s = infer_kind(cx, n);
    if (s != GLOW_OK)
        infer_release(cx);
    return s;
}

glow_status glow_infer_types(glow_node *n, glow_diag *d)
{
    infer_cx cx;
    GLOW_TRY(infer_run(&cx, n, n->outs, (int)n->nout, d));
    if ((int)n->nout != cx.nout || (!n->outs && cx.nout > 0)) {
        if (!n->fn) {
            infer_release(&cx);
            return glow_fail(d, GLOW_ERR_INTERNAL, "node '%s' has no function", n->name);
        }
        n->outs = GLOW_NEW_ARRAY(&n->fn->module->arena, glow_type, cx.nout ? cx.nout : 1);
        n->nout = (uint32_t)cx.nout;
    }
    for (int i = 0; i < cx.nout; i++)
        n->outs[i] = cx.out[i];
    infer_release(&cx);
    return GLOW_OK;
}

/* Kinds whose result cannot be computed from the operands alone. CONV_TRANSPOSE and RESIZE
 * can fall back to the attribute-derived shape when no type is declared. */
static bool needs_declared(glow_node_kind k)
{
    return k == NK_CAST || k == NK_RESHAPE || k == NK_BROADCAST;
}

glow_node *glow_build(glow_function *f, glow_node_kind kind, const char *name,
                      const glow_value *ins, int nin, const glow_attr *attrs, int nattr,
                      const glow_type *declared, int ndeclared, glow_diag *d)
{
    const char *nm = name ? name : "";
    if ((unsigned)kind >= NK_COUNT || (glow_node_kind_flags(kind) & NF_STORAGE)) {
        glow_fail(d, GLOW_ERR_INTERNAL, "glow_build '%s': kind %d cannot be built here", nm,
                  (int)kind);
        return NULL;
    }
    const char *kn = glow_node_kind_name(kind);
    if (nin < 0 || nin > glow_node_kind_max_in(kind) || (nin > 0 && !ins)) {
        glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': has %d operands, expected at most %d", kn,
                  nm, nin, glow_node_kind_max_in(kind));
        return NULL;
    }
    for (int i = 0; i < nin; i++) {
        if (!ins[i].node || ins[i].res >= ins[i].node->nout) {
            glow_fail(d, GLOW_ERR_INTERNAL, "%s '%s': operand %d is not a valid value", kn, nm,
                      i);
            return NULL;
        }
    }
    int maxout = glow_node_kind_max_out(kind);
    int nout = ndeclared > 0 ? ndeclared : maxout;
    if (nout > maxout || (maxout > 0 && nout < 1)) {
        glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': asked for %d results, expected 1 to %d", kn,
                  nm, nout, maxout);
        return NULL;
    }
    if (!declared && needs_declared(kind)) {
        glow_fail(d, GLOW_ERR_BAD_TYPE, "%s '%s': needs a declared result type", kn, nm);
        return NULL;
    }
    /* Until inference runs, results are zeroed placeholders (NULL: the arena's zeros). */
    glow_node *n = glow_node_create(f, kind, nm, ins, nin, declared, nout);
    if (!n) {
        glow_fail(d, GLOW_ERR_TOO_LARGE, "%s '%s': cannot create the node", kn, nm);
        return NULL;
    }
    for (int i = 0; i < nattr; i++) {
        const glow_attr *a = &attrs[i];
        if ((unsigned)a->id >= GA_COUNT) {
            glow_fail(d, GLOW_ERR_BAD_ATTR, "%s '%s': attribute #%d has unknown id %d", kn, nm,
                      i, (int)a->id);
            glow_node_erase(n);
            return NULL;
        }
        glow_attr_kind ak = glow_attr_kind_of(a->id);
        if ((ak == AK_INTS || ak == AK_FLOATS) && a->n && !a->v.ints) {
            glow_fail(d, GLOW_ERR_BAD_ATTR, "%s '%s': attribute '%s' has %u values but no array",
                      kn, nm, glow_attr_name(a->id), a->n);
            glow_node_erase(n);
            return NULL;
        }
        switch (ak) {
        case AK_INT: glow_node_set_int(n, a->id, a->v.i); break;
        case AK_FLOAT: glow_node_set_float(n, a->id, a->v.f); break;
        case AK_INTS: glow_node_set_ints(n, a->id, a->v.ints, (int)a->n); break;
        case AK_FLOATS: glow_node_set_floats(n, a->id, a->v.floats, (int)a->n); break;
        case AK_STR: glow_node_set_str(n, a->id, a->v.s ? a->v.s : ""); break;
        }
    }
    infer_cx cx;
    if (infer_run(&cx, n, declared, nout, d) != GLOW_OK) {
        glow_node_erase(n);
        return NULL;
    }
    for (int i = 0; i < cx.nout && i < (int)n->nout; i++)
        n->outs[i] = cx.out[i];
    infer_release(&cx);
    return n;
}
