// onnx_util.c - Helpers the op loaders share: messages naming the node, inputs, attributes,
// outputs, and node building with NumPy broadcasting and import-time constant folding.
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx_internal.h"
#include "eval/eval.h"

/* Unnamed nodes get "<op_type>#<index>" as their name from onnx_load.c before any loader
 * runs, so the NodeProto's own name is all a message needs. */
const char *onnx_node_name(const Onnx__NodeProto *np)
{
    if (np->name && *np->name)
        return np->name;
    return np->op_type ? np->op_type : "?";
}

static const char *op_type_of(const Onnx__NodeProto *np)
{
    return np->op_type && *np->op_type ? np->op_type : "(no op_type)";
}

static glow_status failv(onnx_ctx *cx, const Onnx__NodeProto *np, glow_status s, const char *fmt,
                         va_list ap)
{
    char text[2048];
    vsnprintf(text, sizeof(text), fmt, ap);
    return glow_fail(cx->d, s, "%s '%s' (opset %d): %s", op_type_of(np), onnx_node_name(np),
                     cx->opset, text);
}

glow_status onnx_fail(onnx_ctx *cx, const Onnx__NodeProto *np, glow_status s, const char *fmt,
                      ...)
{
    va_list ap;
    va_start(ap, fmt);
    glow_status r = failv(cx, np, s, fmt, ap);
    va_end(ap);
    return r;
}

glow_status onnx_unsupported(onnx_ctx *cx, const Onnx__NodeProto *np, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    glow_status r = failv(cx, np, GLOW_ERR_UNSUPPORTED, fmt, ap);
    va_end(ap);
    return r;
}

/* --- inputs --- */

int onnx_num_inputs(const Onnx__NodeProto *np)
{
    int n = (int)np->n_input;
    while (n > 0 && (!np->input[n - 1] || !*np->input[n - 1]))
        n--;
    return n;
}

bool onnx_has_input(const Onnx__NodeProto *np, int i)
{
    return i >= 0 && (size_t)i < np->n_input && np->input[i] && *np->input[i];
}

/* --- input specialization (glow_onnx_options.input_values) --- */

/* Node inputs ONNX defines as shape-like (shapes, axes, pads, scales, counts) whose loaders
 * test for a constant before reading it: a graph input feeding one of them is specialized to
 * its known value. Bit k of `inputs` marks node input k. Loaders reading through
 * onnx_input_const/ints/floats need no entry. */
static const struct {
    const char *op;
    unsigned inputs;
} shape_inputs[] = {
    { "Reshape", 1u << 1 }, { "Expand", 1u << 1 }, { "Tile", 1u << 1 },
    { "Squeeze", 1u << 1 }, { "Unsqueeze", 1u << 1 }, { "Split", 1u << 1 },
    { "Slice", 0xfu << 1 }, { "Pad", 0x7u << 1 }, { "Trilu", 1u << 1 },
    { "Resize", 0x7u << 1 }, { "Upsample", 1u << 1 }, { "OneHot", 1u << 1 },
    { "Compress", 1u << 1 }, { "RNN", 1u << 4 }, { "GRU", 1u << 4 }, { "LSTM", 1u << 4 },
    { "Loop", 0x3u },   /* the trip count and the first condition decide the unrolling */
};

static bool is_shape_input(const Onnx__NodeProto *np, int i)
{
    for (size_t k = 0; k < sizeof(shape_inputs) / sizeof(shape_inputs[0]); k++)
        if (np->op_type && strcmp(np->op_type, shape_inputs[k].op) == 0)
            return i < 32 && (shape_inputs[k].inputs >> i & 1u);
    return false;
}

/* The constant "<input>/value" standing for graph input placeholder ph when the options give
 * its value (with ph's exact type), created on first use; NULL when the value is unknown.
 * Fed inputs become placeholders in order, so ph's rank among the input placeholders is its
 * position in input_values. */
static glow_node *input_value_const(onnx_ctx *cx, glow_node *ph)
{
    const glow_onnx_options *o = cx->opt;
    if (!o || !o->input_values || ph->kind != NK_PLACEHOLDER || !ph->is_input)
        return NULL;
    int pos = 0;
    for (glow_node *n = cx->m->placeholders.first; n && n != ph; n = n->next)
        pos += n->is_input;
    if (pos >= o->ninput_values || !o->input_values[pos])
        return NULL;
    const glow_tensor *t = o->input_values[pos];
    if (!glow_type_equal(&t->type, &ph->outs[0]) || (!t->data && glow_type_bytes(&t->type)))
        return NULL;
    char name[512];
    snprintf(name, sizeof(name), "%s/value", ph->name);
    for (glow_node *c = cx->m->constants.first; c; c = c->next)
        if (strcmp(c->name, name) == 0 && glow_type_equal(&c->outs[0], &t->type))
            return c;
    return glow_constant_create(cx->m, glow_arena_strdup(cx->arena, name), &t->type, t->data);
}

/* The value of v as a constant when the known input values decide it: a graph input with a
 * known value, or a node whose operands are all decided that way (say, a Cast of a size or a
 * Concat of pads computed from specialized inputs), evaluated here. NULL otherwise. `budget`
 * bounds the work on deep or diamond-shaped shape computations. */
static glow_node *known_value(onnx_ctx *cx, glow_value v, int depth, int *budget)
{
    glow_node *n = v.node;
    if (n->kind == NK_CONSTANT)
        return n;
    if (n->kind == NK_PLACEHOLDER)
        return input_value_const(cx, n);
    if (!cx->opt || !cx->opt->input_values || depth > 16 || --*budget < 0 || n->nout != 1 ||
        n->nin > 16 || glow_type_bytes(&n->outs[0]) > ONNX_FOLD_MAX_BYTES ||
        !glow_eval_foldable(n))
        return NULL;
    glow_tensor ins[16];
    for (uint32_t i = 0; i < n->nin; i++) {
        glow_node *c = known_value(cx, n->ins[i], depth + 1, budget);
        if (!c || c->kind != NK_CONSTANT)
            return NULL;
        ins[i] = glow_tensor_borrow(&c->outs[0], c->payload.data);
    }
    glow_tensor out = { 0 };
    glow_diag d = { 0 };
    if (glow_eval_node(n, ins, &out, &d) != GLOW_OK)
        return NULL;
    glow_node *c = glow_constant_create(cx->m, glow_arena_printf(cx->arena, "%s/value", n->name),
                                        &n->outs[0], out.data);
    glow_tensor_free(&out);
    return c;
}

static glow_node *specialize(onnx_ctx *cx, glow_value v)
{
    int budget = 256;
    return v.node->kind == NK_CONSTANT ? NULL : known_value(cx, v, 0, &budget);
}

glow_status onnx_input(onnx_ctx *cx, const Onnx__NodeProto *np, int i, glow_value *v)
{
    GLOW_TRY(onnx_input_any(cx, np, i, v));
    if (onnx_seq_of(*v))
        return onnx_unsupported(cx, np, "input %d '%s' is %s; this op takes tensors", i,
                                np->input[i], onnx_seq_kind_str(*v));
    return GLOW_OK;
}

glow_status onnx_input_any(onnx_ctx *cx, const Onnx__NodeProto *np, int i, glow_value *v)
{
    if (!onnx_has_input(np, i))
        return onnx_fail(cx, np, GLOW_ERR_PARSE, "input %d is required but missing", i);
    const onnx_binding *b = glow_strmap_get(&cx->values, np->input[i]);
    if (!b)
        return onnx_fail(cx, np, GLOW_ERR_NOT_FOUND, "input %d '%s' is not defined (no "
                         "initializer, graph input or earlier node output has that name)", i,
                         np->input[i]);
    if (b->poisoned)
        return onnx_fail(cx, np, GLOW_ERR_UNSUPPORTED, "input %d '%s' comes from a node that "
                         "failed to import", i, np->input[i]);
    if (b->count.node)
        return onnx_bounded_input(cx, np, i, b, v);   /* refused unless the op keeps rows apart */
    *v = b->v;
    glow_node *c = is_shape_input(np, i) ? specialize(cx, *v) : NULL;
    if (c)
        *v = glow_val(c, 0);
    return GLOW_OK;
}

bool onnx_input_known(onnx_ctx *cx, const Onnx__NodeProto *np, int i)
{
    const onnx_binding *b = onnx_has_input(np, i) ? glow_strmap_get(&cx->values, np->input[i])
                                                  : NULL;
    if (!b || b->poisoned || b->count.node)
        return true;   /* onnx_input_const reports it */
    return glow_value_is_constant(b->v) || specialize(cx, b->v) != NULL;
}

glow_status onnx_input_const(onnx_ctx *cx, const Onnx__NodeProto *np, int i,
                             const glow_tensor **t)
{
    glow_value v;
    GLOW_TRY(onnx_input(cx, np, i, &v));
    glow_node *c = specialize(cx, v);
    if (c)
        v = glow_val(c, 0);
    if (v.node->kind != NK_CONSTANT)
        return onnx_unsupported(cx, np, "input %d '%s' must be a constant (glowc needs it at "
                                "compile time), but it is computed by %s '%s'", i, np->input[i],
                                glow_node_kind_name(v.node->kind), v.node->name);
    *t = &v.node->payload;
    return GLOW_OK;
}

/* Element count of a constant input as an int, bounded so callers can index with int. */
static glow_status const_count(onnx_ctx *cx, const Onnx__NodeProto *np, int i,
                               const glow_tensor *t, int *count)
{
    int64_t n = glow_type_numel(&t->type);
    if (n > (1 << 24))
        return onnx_fail(cx, np, GLOW_ERR_TOO_LARGE, "input %d '%s' has %lld values; too many",
                         i, np->input[i], (long long)n);
    *count = (int)n;
    return GLOW_OK;
}

glow_status onnx_input_ints(onnx_ctx *cx, const Onnx__NodeProto *np, int i, int64_t **vals,
                            int *count)
{
    const glow_tensor *t;
    GLOW_TRY(onnx_input_const(cx, np, i, &t));
    glow_dtype dt = t->type.dtype;
    if (!glow_dtype_is_int(dt) && dt != GLOW_BOOL)
        return onnx_fail(cx, np, GLOW_ERR_BAD_TYPE, "input %d '%s' must hold integers, not %s",
                         i, np->input[i], glow_dtype_name(dt));
    int n = 0;
    GLOW_TRY(const_count(cx, np, i, t, &n));
    int64_t *out = GLOW_NEW_ARRAY(cx->arena, int64_t, n ? n : 1);
    for (int k = 0; k < n; k++)
        out[k] = glow_load_i64(dt, t->data, (size_t)k);
    *vals = out;
    *count = n;
    return GLOW_OK;
}

glow_status onnx_input_floats(onnx_ctx *cx, const Onnx__NodeProto *np, int i, double **vals,
                              int *count)
{
    const glow_tensor *t;
    GLOW_TRY(onnx_input_const(cx, np, i, &t));
    glow_dtype dt = t->type.dtype;
    if (glow_dtype_is_quantized(dt))
        return onnx_fail(cx, np, GLOW_ERR_BAD_TYPE, "input %d '%s' must hold numbers, not %s",
                         i, np->input[i], glow_dtype_name(dt));
    int n = 0;
    GLOW_TRY(const_count(cx, np, i, t, &n));
    double *out = GLOW_NEW_ARRAY(cx->arena, double, n ? n : 1);
    for (int k = 0; k < n; k++)
        out[k] = glow_load_f64(dt, t->data, (size_t)k);
    *vals = out;
    *count = n;
    return GLOW_OK;
}

/* --- attributes --- */

enum { AT_FLOAT = 1, AT_INT = 2, AT_STRING = 3, AT_FLOATS = 6, AT_INTS = 7 };

const Onnx__AttributeProto *onnx_attr(const Onnx__NodeProto *np, const char *name)
{
    for (size_t i = 0; i < np->n_attribute; i++) {
        const Onnx__AttributeProto *a = np->attribute[i];
        if (a->name && strcmp(a->name, name) == 0)
            return a;
    }
    return NULL;
}

/* The attribute's type: declared, or guessed from the fields set (very old models). */
static int attr_type(const Onnx__AttributeProto *a)
{
    if (a->has_type && a->type)
        return a->type;
    if (a->n_ints) return AT_INTS;
    if (a->n_floats) return AT_FLOATS;
    if (a->has_i) return AT_INT;
    if (a->has_f) return AT_FLOAT;
    if (a->has_s) return AT_STRING;
    if (a->t) return 4;
    if (a->g) return 5;
    return 0;
}

static const char *attr_type_name(int t)
{
    static const char *names[] = { "undefined", "float", "int", "string", "tensor", "graph",
                                   "floats", "ints", "strings", "tensors", "graphs",
                                   "sparse_tensor", "sparse_tensors", "type_proto",
                                   "type_protos" };
    return t >= 0 && t < (int)(sizeof(names) / sizeof(names[0])) ? names[t] : "unknown";
}

glow_status onnx_attr_check(onnx_ctx *cx, const Onnx__NodeProto *np, const char *name, int type)
{
    const Onnx__AttributeProto *a = onnx_attr(np, name);
    if (!a)
        return GLOW_OK;
    int t = attr_type(a);
    if (t != type)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "attribute '%s' is of type %s, expected %s",
                         name, attr_type_name(t), attr_type_name(type));
    return GLOW_OK;
}

int64_t onnx_attr_int(const Onnx__NodeProto *np, const char *name, int64_t dflt)
{
    const Onnx__AttributeProto *a = onnx_attr(np, name);
    if (!a)
        return dflt;
    int t = attr_type(a);
    if (t == AT_INT)
        return a->i;
    if (t == AT_FLOAT) {
        /* Converting NaN or a float beyond int64 is undefined behaviour: saturate instead
         * (NaN to the minimum), so that the caller's range check refuses the value. */
        if (a->f >= 0x1p63f)
            return INT64_MAX;
        if (!(a->f >= -0x1p63f))
            return INT64_MIN;
        return (int64_t)a->f;
    }
    return dflt;
}

float onnx_attr_float(const Onnx__NodeProto *np, const char *name, float dflt)
{
    const Onnx__AttributeProto *a = onnx_attr(np, name);
    if (!a)
        return dflt;
    int t = attr_type(a);
    if (t == AT_FLOAT)
        return a->f;
    if (t == AT_INT)
        return (float)a->i;
    return dflt;
}

int onnx_attr_ints(const Onnx__NodeProto *np, const char *name, const int64_t **vals)
{
    const Onnx__AttributeProto *a = onnx_attr(np, name);
    if (!a || (attr_type(a) != AT_INTS && attr_type(a) != 0))
        return -1;
    *vals = a->ints;
    return a->n_ints > (size_t)(1 << 24) ? -1 : (int)a->n_ints;
}

int onnx_attr_floats(const Onnx__NodeProto *np, const char *name, const float **vals)
{
    const Onnx__AttributeProto *a = onnx_attr(np, name);
    if (!a || (attr_type(a) != AT_FLOATS && attr_type(a) != 0))
        return -1;
    *vals = a->floats;
    return a->n_floats > (size_t)(1 << 24) ? -1 : (int)a->n_floats;
}

const char *onnx_attr_str(onnx_ctx *cx, const Onnx__NodeProto *np, const char *name,
                          const char *dflt)
{
    const Onnx__AttributeProto *a = onnx_attr(np, name);
    if (!a || !a->has_s)
        return dflt;
    /* Bytes in the file may hold a NUL; the copy stops there, which only shortens names.
     * An empty string may come with no bytes at all (StringSplit's delimiter ""). */
    if (!a->s.len)
        return "";
    return glow_arena_strndup(cx->arena, (const char *)a->s.data, a->s.len);
}

/* --- outputs --- */

int onnx_num_outputs(const Onnx__NodeProto *np)
{
    return (int)np->n_output;
}

bool onnx_has_output(const Onnx__NodeProto *np, int i)
{
    return i >= 0 && (size_t)i < np->n_output && np->output[i] && *np->output[i];
}

glow_status onnx_set_output(onnx_ctx *cx, const Onnx__NodeProto *np, int i, glow_value v)
{
    if (!onnx_has_output(np, i))
        return GLOW_OK;
    if (cx->bnd_np == np && cx->bnd_inputs)
        return onnx_bounded_output(cx, np, i, v);
    onnx_binding *b = GLOW_NEW(cx->arena, onnx_binding);
    b->v = v;
    glow_strmap_put(&cx->values, np->output[i], b);
    return GLOW_OK;
}

/* --- building --- */

/* A helper node's name: "<node>/<suffix><n>", unique among the nodes built for np. */
static const char *helper_name(onnx_ctx *cx, const Onnx__NodeProto *np, const char *suffix)
{
    return glow_arena_printf(cx->arena, "%s/%s%d", onnx_node_name(np), suffix, cx->nbuilt++);
}

/* Replaces a single-result node whose operands are all constants by its value. */
static glow_value try_fold(onnx_ctx *cx, glow_node *n)
{
    glow_value v = glow_val(n, 0);
    if (n->nout != 1 || glow_type_bytes(&n->outs[0]) > ONNX_FOLD_MAX_BYTES)
        return v;
    for (uint32_t i = 0; i < n->nin; i++)
        if (n->ins[i].node->kind != NK_CONSTANT)
            return v;
    if (!glow_eval_foldable(n))
        return v;
    glow_tensor ins[64];
    if (n->nin > 64)
        return v;
    for (uint32_t i = 0; i < n->nin; i++) {
        const glow_node *c = n->ins[i].node;
        ins[i] = glow_tensor_borrow(&c->outs[0], c->payload.data);
    }
    glow_tensor out = { 0 };
    glow_diag d = { 0 };
    /* A failed evaluation (say, an unsupported dtype) leaves the node for later stages. */
    if (glow_eval_node(n, ins, &out, &d) != GLOW_OK)
        return v;
    glow_node *c = glow_constant_create(cx->m, n->name, &n->outs[0], out.data);
    glow_tensor_free(&out);
    if (!c)
        return v;
    glow_node_erase(n);   /* just built: it has no users yet */
    return glow_val(c, 0);
}

static glow_status build_named(onnx_ctx *cx, const Onnx__NodeProto *np, const char *name,
                               glow_node_kind kind, const glow_value *ins, int nin,
                               const glow_attr *attrs, int nattr, const glow_type *declared,
                               int ndeclared, glow_value *out)
{
    glow_diag d = { 0 };
    /* Sequence handles are no graph values: a loader that got one past onnx_input (control
     * flow passing values around in a malformed model) must not wire it into the graph. */
    for (int i = 0; i < nin; i++)
        if (onnx_seq_of(ins[i]))
            return onnx_unsupported(cx, np, "operand %d of %s is %s, not a tensor", i,
                                    glow_node_kind_name(kind), onnx_seq_kind_str(ins[i]));
    /* Names may point into the model, which is freed after import: the graph keeps a copy. */
    name = glow_arena_strdup(cx->arena, name);
    glow_node *n = glow_build(cx->f, kind, name, ins, nin, attrs, nattr, declared, ndeclared, &d);
    if (!n)
        return onnx_fail(cx, np, d.status != GLOW_OK ? d.status : GLOW_ERR_INTERNAL, "%s",
                         d.msg);
    *out = try_fold(cx, n);
    return GLOW_OK;
}

glow_status onnx_build(onnx_ctx *cx, const Onnx__NodeProto *np, glow_node_kind kind,
                       const glow_value *ins, int nin, const glow_attr *attrs, int nattr,
                       const glow_type *declared, int ndeclared, glow_value *out)
{
    /* The first node built for np carries its name; any further ones get a suffix. */
    const char *name = !cx->main_built ? onnx_node_name(np)
                                       : helper_name(cx, np, glow_node_kind_name(kind));
    cx->main_built = true;
    return build_named(cx, np, name, kind, ins, nin, attrs, nattr, declared, ndeclared, out);
}

glow_status onnx_reshape(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value v, int rank,
                         const int64_t *dims, glow_value *out)
{
    const glow_type *vt = glow_value_type(v);
    if (rank < 0 || rank > GLOW_MAX_DIMS)
        return onnx_unsupported(cx, np, "reshape to rank %d (glowc supports at most %d dims)",
                                rank, GLOW_MAX_DIMS);
    glow_type t = glow_type_make(vt->dtype, rank, dims);
    t.scale = vt->scale;
    t.offset = vt->offset;
    if (vt->rank == rank &&
        (rank == 0 || memcmp(vt->dims, dims, sizeof(int64_t) * (size_t)rank) == 0)) {
        *out = v;
        return GLOW_OK;
    }
    return build_named(cx, np, helper_name(cx, np, "reshape"), NK_RESHAPE, &v, 1, NULL, 0, &t, 1,
                       out);
}

glow_status onnx_cast(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value v, glow_dtype to,
                      glow_value *out)
{
    return onnx_cast_mode(cx, np, v, to, true, NULL, out);
}

glow_status onnx_cast_mode(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value v, glow_dtype to,
                           bool saturate, const char *round_mode, glow_value *out)
{
    const glow_type *vt = glow_value_type(v);
    if (vt->dtype == to) {
        *out = v;
        return GLOW_OK;
    }
    /* Only float8 targets saturate or not, only e8m0 rounds by a mode: the attributes are
     * kept where they change something and differ from the default. */
    glow_attr a[2];
    int na = 0;
    bool f8 = to == GLOW_F8E4M3FN || to == GLOW_F8E4M3FNUZ || to == GLOW_F8E5M2 ||
              to == GLOW_F8E5M2FNUZ || to == GLOW_F8E8M0;
    if (f8 && !saturate)
        a[na++] = GLOW_AI(SATURATE, 0);
    if (to == GLOW_F8E8M0 && round_mode && strcmp(round_mode, "up") != 0)
        a[na++] = GLOW_ASTR(ROUND_MODE, round_mode);
    glow_type t = glow_type_make(to, vt->rank, vt->dims);
    return build_named(cx, np, helper_name(cx, np, "cast"), NK_CAST, &v, 1, a, na, &t, 1, out);
}

glow_status onnx_broadcast_to(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value v, int rank,
                              const int64_t *dims, glow_value *out)
{
    const glow_type *vt = glow_value_type(v);
    if (vt->rank > rank)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "cannot broadcast a rank-%d operand to "
                         "rank %d", vt->rank, rank);
    int lead = rank - vt->rank;
    int64_t padded[GLOW_MAX_DIMS];
    bool same = true;
    for (int i = 0; i < rank; i++) {
        padded[i] = i < lead ? 1 : vt->dims[i - lead];
        if (padded[i] != dims[i] && padded[i] != 1) {
            char a[128], b[128];
            glow_type want = glow_type_make(vt->dtype, rank, dims);
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "cannot broadcast %s to %s",
                             glow_type_str(vt, a, sizeof(a)), glow_type_str(&want, b, sizeof(b)));
        }
        same = same && padded[i] == dims[i];
    }
    glow_value cur = v;
    if (lead > 0)
        GLOW_TRY(onnx_reshape(cx, np, cur, rank, padded, &cur));
    if (same) {
        *out = cur;
        return GLOW_OK;
    }
    glow_type t = glow_type_make(vt->dtype, rank, dims);
    t.scale = vt->scale;
    t.offset = vt->offset;
    return build_named(cx, np, helper_name(cx, np, "bcast"), NK_BROADCAST, &cur, 1, NULL, 0, &t,
                       1, out);
}

glow_status onnx_build_elemwise(onnx_ctx *cx, const Onnx__NodeProto *np, glow_node_kind kind,
                                const glow_value *ins, int nin, const glow_attr *attrs,
                                int nattr, glow_value *out)
{
    if (nin < 1 || nin > 8)
        return onnx_fail(cx, np, GLOW_ERR_INTERNAL, "elementwise node with %d operands", nin);
    int rank = 0;
    int64_t dims[GLOW_MAX_DIMS];
    for (int i = 0; i < nin; i++) {
        const glow_type *t = glow_value_type(ins[i]);
        int r;
        int64_t d2[GLOW_MAX_DIMS];
        if (!glow_broadcast_shapes(rank, dims, t->rank, t->dims, &r, d2)) {
            char a[128];
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "operand %d (%s) does not broadcast "
                             "with the others", i, glow_type_str(t, a, sizeof(a)));
        }
        rank = r;
        memcpy(dims, d2, sizeof(int64_t) * (size_t)r);
    }
    glow_value b[8];
    for (int i = 0; i < nin; i++)
        GLOW_TRY(onnx_broadcast_to(cx, np, ins[i], rank, dims, &b[i]));
    return onnx_build(cx, np, kind, b, nin, attrs, nattr, NULL, 0, out);
}

glow_value onnx_constant(onnx_ctx *cx, const char *name, const glow_type *t, const void *data)
{
    return glow_val(glow_constant_create(cx->m, glow_arena_strdup(cx->arena, name), t, data), 0);
}

glow_value onnx_scalar(onnx_ctx *cx, const char *name, glow_dtype t, double v)
{
    uint64_t buf[2] = { 0, 0 };
    glow_store_f64(t, buf, 0, v);
    glow_type ty = glow_type_scalar(t);
    return onnx_constant(cx, name, &ty, buf);
}

glow_status onnx_axis(onnx_ctx *cx, const Onnx__NodeProto *np, int64_t axis, int rank, int *out)
{
    if (axis < -(int64_t)rank || axis >= rank)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "axis %lld is out of range for rank %d",
                         (long long)axis, rank);
    *out = (int)(axis < 0 ? axis + rank : axis);
    return GLOW_OK;
}

/* --- shared by the loaders --- */

const char *onnx_sub_name(onnx_ctx *cx, const Onnx__NodeProto *np, const char *what)
{
    return glow_arena_printf(cx->arena, "%s/%s", onnx_node_name(np), what);
}

glow_status onnx_input_static(onnx_ctx *cx, const Onnx__NodeProto *np, int i, const char *what)
{
    glow_value v;
    GLOW_TRY(onnx_input(cx, np, i, &v));
    if (!glow_value_is_constant(v))
        return onnx_unsupported(cx, np, "input %d '%s' is computed at run time; glowc needs "
                                "static shapes", i, what);
    return GLOW_OK;
}

glow_value onnx_sub_scalar(onnx_ctx *cx, const Onnx__NodeProto *np, const char *what,
                           glow_dtype t, double v)
{
    return onnx_scalar(cx, onnx_sub_name(cx, np, what), t, v);
}

glow_status onnx_check_inputs(onnx_ctx *cx, const Onnx__NodeProto *np, int min, int max)
{
    int n = onnx_num_inputs(np);
    if (n >= min && n <= max)
        return GLOW_OK;
    if (min == max)
        return onnx_fail(cx, np, GLOW_ERR_PARSE, "expects %d inputs, has %d", min, n);
    return onnx_fail(cx, np, GLOW_ERR_PARSE, "expects %d to %d inputs, has %d", min, max, n);
}

bool onnx_dtype_range(glow_dtype t, double *lo, double *hi)
{
    switch (t) {
    case GLOW_I8: *lo = INT8_MIN; *hi = INT8_MAX; return true;
    case GLOW_U8: *lo = 0; *hi = UINT8_MAX; return true;
    case GLOW_I16: *lo = INT16_MIN; *hi = INT16_MAX; return true;
    case GLOW_U16: *lo = 0; *hi = UINT16_MAX; return true;
    case GLOW_I32: *lo = INT32_MIN; *hi = INT32_MAX; return true;
    case GLOW_U32: *lo = 0; *hi = UINT32_MAX; return true;
    case GLOW_I4: *lo = -8; *hi = 7; return true;
    case GLOW_U4: *lo = 0; *hi = 15; return true;
    case GLOW_I2: *lo = -2; *hi = 1; return true;
    case GLOW_U2: *lo = 0; *hi = 3; return true;
    case GLOW_I64: case GLOW_U64: return false;
    default: *lo = -INFINITY; *hi = INFINITY; return true;
    }
}

bool onnx_dtype_of_code(int64_t code, glow_dtype *out)
{
    return code >= INT32_MIN && code <= INT32_MAX && glow_dtype_from_onnx((int)code, out);
}
