// eval.c - The reference evaluator's entry points: dtype policy per node kind and dispatch.
//
// glow_eval_node evaluates one node on constant operands (import-time and optimizer folding,
// later the reference interpreter). Each kind maps to one routine of an op family
// (eval_elem.c, eval_move.c, eval_index.c, eval_reduce.c, eval_nn.c, eval_norm.c,
// eval_resize.c, eval_prim.c) and to a dtype policy that glow_eval_supported checks, so the
// routines themselves can assume their operand kinds. Shapes are still checked by the
// routines: a malformed node must fail, never read out of bounds.
//
// GLOWC_EVAL_REFERENCE=1 turns the f32 fast paths off, so that every float reduction
// accumulates in double: the differential fuzzer's float64 reference (glow_ev_reference;
// docs/fuzzing.md, "Telling rounding from bugs").
#include <stdatomic.h>
#include <stdlib.h>

#include "eval/eval_internal.h"
#include "eval/eval_string.h"
#include "scalar_math.h"

/* Which operand/result kinds a routine handles. */
typedef enum {
    EP_NONE,        /* no evaluator */
    EP_UN_FLOAT,    /* x float -> same */
    EP_UN_NUM,      /* x float or integer -> same */
    EP_UN_INT,      /* x integer -> same */
    EP_FLOAT_BOOL,  /* x float -> bool */
    EP_BIN_NUM,     /* a, b same numeric kind -> same */
    EP_BIN_INT,     /* a, b same integer kind -> same */
    EP_POW,         /* base numeric, exponent any numeric -> base's kind */
    EP_CMP,         /* a, b same non-quantized kind -> bool */
    EP_LOGICAL,     /* bool... -> bool */
    EP_WHERE,       /* bool, a, b same non-quantized kind -> same */
    EP_CAST,        /* any non-quantized -> any non-quantized */
    EP_MOVE,        /* all operands and result of one kind; quantized allowed */
    EP_MOVE_PLAIN,  /* like EP_MOVE but not quantized (a fill value is involved) */
    EP_GATHER,      /* data any kind, indices i32/i64 -> data's kind */
    EP_SCATTER,     /* data non-quantized, indices i32/i64, updates like data */
    EP_ONE_HOT,     /* indices numeric, depth any, values non-quantized -> values' kind */
    EP_REDUCE,      /* x numeric -> same */
    EP_ARG,         /* x numeric -> i64 */
    EP_TOPK,        /* x numeric -> same, i64 (TopK, MaxPool) */
    EP_FLOAT,       /* x float -> same (softmax family) */
    EP_SPLAT,       /* no operands -> any non-quantized kind */
    EP_FLOAT_ALL,   /* every operand of x's float kind -> same, extra results float */
    EP_QUANT,       /* only quantized forms (glow_ev_quant_types decides) */
    EP_DYN,         /* x not quantized -> bounded results, i64 count (eval_dyn.c checks) */
    EP_CONTROL,     /* IF, LOOP: their bodies decide (eval_control.c) */
    EP_STRING,      /* the string ops: their routines check the kinds (eval_string.c) */
} ev_policy;

typedef struct {
    ev_fn fn;
    ev_policy policy;
} ev_entry;

static ev_entry entry_of(glow_node_kind k)
{
    switch (k) {
    case NK_RELU: case NK_ABS: case NK_NEG: case NK_SIGN: case NK_CLIP: case NK_SHRINK:
        return (ev_entry){ glow_ev_unary, EP_UN_NUM };
    case NK_SIGMOID: case NK_TANH: case NK_EXP: case NK_LOG: case NK_SQRT: case NK_FLOOR:
    case NK_CEIL: case NK_ROUND: case NK_RECIPROCAL: case NK_ERF: case NK_SIN: case NK_COS:
    case NK_TAN: case NK_ASIN: case NK_ACOS: case NK_ATAN: case NK_SINH: case NK_COSH:
    case NK_ASINH: case NK_ACOSH: case NK_ATANH: case NK_SOFTPLUS: case NK_SOFTSIGN:
    case NK_ELU: case NK_SELU: case NK_CELU: case NK_LEAKY_RELU: case NK_THRESHOLDED_RELU:
    case NK_HARD_SIGMOID: case NK_HARD_SWISH: case NK_GELU: case NK_MISH:
        return (ev_entry){ glow_ev_unary, EP_UN_FLOAT };
    case NK_BITWISE_NOT:
        return (ev_entry){ glow_ev_unary, EP_UN_INT };
    case NK_ISNAN: case NK_ISINF:
        return (ev_entry){ glow_ev_unary, EP_FLOAT_BOOL };
    case NK_NOT:
        return (ev_entry){ glow_ev_unary, EP_LOGICAL };
    case NK_ADD: case NK_SUB: case NK_MUL: case NK_DIV: case NK_MOD: case NK_MAX:
    case NK_MIN: case NK_PRELU:
        return (ev_entry){ glow_ev_binary, EP_BIN_NUM };
    case NK_POW:
        return (ev_entry){ glow_ev_binary, EP_POW };
    case NK_BITSHIFT: case NK_BITWISE_AND: case NK_BITWISE_OR: case NK_BITWISE_XOR:
        return (ev_entry){ glow_ev_binary, EP_BIN_INT };
    case NK_EQUAL: case NK_LESS: case NK_LESS_EQUAL: case NK_GREATER: case NK_GREATER_EQUAL:
        return (ev_entry){ glow_ev_binary, EP_CMP };
    case NK_AND: case NK_OR: case NK_XOR:
        return (ev_entry){ glow_ev_binary, EP_LOGICAL };
    case NK_WHERE: return (ev_entry){ glow_ev_where, EP_WHERE };
    case NK_CAST: return (ev_entry){ glow_ev_cast, EP_CAST };
    case NK_RESHAPE: return (ev_entry){ glow_ev_reshape, EP_MOVE };
    case NK_BROADCAST: return (ev_entry){ glow_ev_broadcast, EP_MOVE };
    case NK_TRANSPOSE: return (ev_entry){ glow_ev_transpose, EP_MOVE };
    case NK_CONCAT: return (ev_entry){ glow_ev_concat, EP_MOVE };
    case NK_SLICE: return (ev_entry){ glow_ev_slice, EP_MOVE };
    case NK_TILE: return (ev_entry){ glow_ev_tile, EP_MOVE };
    case NK_DEPTH_TO_SPACE: return (ev_entry){ glow_ev_depth_to_space, EP_MOVE };
    case NK_SPACE_TO_DEPTH: return (ev_entry){ glow_ev_space_to_depth, EP_MOVE };
    case NK_PAD: return (ev_entry){ glow_ev_pad, EP_MOVE_PLAIN };
    case NK_TRILU: return (ev_entry){ glow_ev_trilu, EP_MOVE_PLAIN };
    case NK_GATHER: return (ev_entry){ glow_ev_gather, EP_GATHER };
    case NK_GATHER_ELEMENTS: return (ev_entry){ glow_ev_gather_elements, EP_GATHER };
    case NK_GATHER_ND: return (ev_entry){ glow_ev_gather_nd, EP_GATHER };
    case NK_REVERSE_SEQUENCE: return (ev_entry){ glow_ev_reverse_sequence, EP_GATHER };
    case NK_SCATTER_ELEMENTS: return (ev_entry){ glow_ev_scatter_elements, EP_SCATTER };
    case NK_SCATTER_ND: return (ev_entry){ glow_ev_scatter_nd, EP_SCATTER };
    case NK_ONE_HOT: return (ev_entry){ glow_ev_one_hot, EP_ONE_HOT };
    case NK_REDUCE_SUM: case NK_REDUCE_MEAN: case NK_REDUCE_MAX: case NK_REDUCE_MIN:
    case NK_REDUCE_PROD: case NK_REDUCE_L1: case NK_REDUCE_L2: case NK_REDUCE_LOG_SUM:
    case NK_REDUCE_LOG_SUM_EXP: case NK_REDUCE_SUM_SQUARE:
        return (ev_entry){ glow_ev_reduce, EP_REDUCE };
    case NK_CUMSUM: case NK_CUMPROD: return (ev_entry){ glow_ev_cumulative, EP_REDUCE };
    case NK_MATMUL: return (ev_entry){ glow_ev_matmul, EP_BIN_NUM };
    case NK_ARG_MAX: case NK_ARG_MIN: return (ev_entry){ glow_ev_arg, EP_ARG };
    case NK_TOPK: return (ev_entry){ glow_ev_topk, EP_TOPK };
    case NK_SOFTMAX: case NK_LOG_SOFTMAX: case NK_HARDMAX:
        return (ev_entry){ glow_ev_softmax, EP_FLOAT };
    case NK_CONV: return (ev_entry){ glow_ev_conv, EP_FLOAT_ALL };
    case NK_CONV_TRANSPOSE: return (ev_entry){ glow_ev_conv_transpose, EP_FLOAT_ALL };
    case NK_MAX_POOL: return (ev_entry){ glow_ev_pool, EP_TOPK };
    case NK_AVG_POOL: case NK_LP_POOL: return (ev_entry){ glow_ev_pool, EP_FLOAT_ALL };
    case NK_GEMM: case NK_FULLY_CONNECTED: return (ev_entry){ glow_ev_gemm, EP_FLOAT_ALL };
    case NK_BATCH_NORM: case NK_INSTANCE_NORM: case NK_GROUP_NORM:
        return (ev_entry){ glow_ev_channel_norm, EP_FLOAT_ALL };
    case NK_LAYER_NORM: case NK_RMS_NORM: return (ev_entry){ glow_ev_axis_norm, EP_FLOAT_ALL };
    case NK_LRN: return (ev_entry){ glow_ev_lrn, EP_FLOAT_ALL };
    case NK_LP_NORM: return (ev_entry){ glow_ev_lp_norm, EP_FLOAT_ALL };
    case NK_RESIZE: return (ev_entry){ glow_ev_resize, EP_UN_NUM };
    case NK_SPLAT: return (ev_entry){ glow_ev_splat, EP_SPLAT };
    case NK_INSERT_TENSOR: return (ev_entry){ glow_ev_insert_tensor, EP_MOVE };
    case NK_QUANTIZE: case NK_DEQUANTIZE: case NK_RESCALE_QUANTIZED: case NK_REINTERPRET:
    case NK_CHANNELWISE_QCONV:
        return (ev_entry){ glow_ev_quant, EP_QUANT };
    case NK_NON_ZERO: case NK_UNIQUE: case NK_COMPRESS: case NK_NON_MAX_SUPPRESSION:
    case NK_FIRST_K:
        return (ev_entry){ glow_ev_dyn, EP_DYN };
    case NK_IF: case NK_LOOP: return (ev_entry){ glow_ev_control, EP_CONTROL };
    case NK_STRING_NORMALIZER: case NK_STRING_CONCAT: case NK_STRING_SPLIT:
    case NK_REGEX_FULL_MATCH: case NK_LABEL_ENCODER: case NK_TFIDF:
        return (ev_entry){ glow_ev_string_op, EP_STRING };
    default: return (ev_entry){ NULL, EP_NONE };
    }
}

static bool is_index(glow_dtype t) { return t == GLOW_I32 || t == GLOW_I64; }

static bool same_quant(const glow_type *a, const glow_type *b)
{
    return a->dtype == b->dtype &&
           (ev_class(a->dtype) != DC_QUANT || (a->scale == b->scale && a->offset == b->offset));
}

/* The policy check on explicit operand and result types (from the node or the tensors). */
static bool policy_ok(ev_policy p, int nin, const glow_type *const *in, int nout,
                      const glow_type *out)
{
    if (p == EP_SPLAT)
        return nin == 0 && nout == 1 && ev_class(out[0].dtype) != DC_QUANT;
    if (nin < 1 || nout < 1)
        return false;
    /* Strings are handles: only moves, Where, Equal, Cast and the string ops take them. */
    bool moves = p == EP_MOVE || p == EP_GATHER || p == EP_WHERE || p == EP_CMP || p == EP_CAST;
    for (int i = 0; i < nin + nout && p != EP_STRING && !moves; i++)
        if ((i < nin ? in[i]->dtype : out[i - nin].dtype) == GLOW_STRING)
            return false;
    glow_dtype x = in[0]->dtype, y = out[0].dtype;
    switch (p) {
    case EP_NONE: case EP_SPLAT: case EP_QUANT: return false;
    case EP_STRING: return true;
    case EP_UN_FLOAT: case EP_FLOAT: return ev_is_float(x) && y == x;
    case EP_UN_NUM: case EP_REDUCE: return ev_is_num(x) && y == x;
    case EP_UN_INT: return ev_is_int(x) && y == x;
    case EP_FLOAT_BOOL: return ev_is_float(x) && y == GLOW_BOOL;
    case EP_BIN_NUM: return nin == 2 && ev_is_num(x) && in[1]->dtype == x && y == x;
    case EP_BIN_INT: return nin == 2 && ev_is_int(x) && in[1]->dtype == x && y == x;
    case EP_POW: return nin == 2 && ev_is_num(x) && ev_is_num(in[1]->dtype) && y == x;
    case EP_CMP:
        return nin == 2 && ev_class(x) != DC_QUANT && in[1]->dtype == x && y == GLOW_BOOL;
    case EP_LOGICAL:
        for (int i = 0; i < nin; i++)
            if (in[i]->dtype != GLOW_BOOL)
                return false;
        return y == GLOW_BOOL;
    case EP_WHERE:
        return nin == 3 && x == GLOW_BOOL && ev_class(y) != DC_QUANT && in[1]->dtype == y &&
               in[2]->dtype == y;
    case EP_CAST: return ev_class(x) != DC_QUANT && ev_class(y) != DC_QUANT;
    case EP_MOVE_PLAIN:
        if (ev_class(x) == DC_QUANT)
            return false;
        /* fallthrough */
    case EP_MOVE:
        for (int i = 0; i < nin; i++)
            if (!same_quant(in[i], &out[0]))
                return false;
        return true;
    case EP_GATHER:
        return nin == 2 && same_quant(in[0], &out[0]) && is_index(in[1]->dtype);
    case EP_SCATTER:
        return nin == 3 && ev_class(x) != DC_QUANT && y == x && is_index(in[1]->dtype) &&
               in[2]->dtype == x;
    case EP_ONE_HOT:
        return nin == 3 && ev_is_num(x) && ev_class(in[2]->dtype) != DC_QUANT &&
               y == in[2]->dtype;
    case EP_ARG: return ev_is_num(x) && y == GLOW_I64;
    case EP_CONTROL: return true;
    case EP_DYN:
        return ev_class(x) != DC_QUANT && out[nout - 1].dtype == GLOW_I64 &&
               out[nout - 1].rank == 0;
    case EP_TOPK: return ev_is_num(x) && y == x && (nout < 2 || out[1].dtype == GLOW_I64);
    case EP_FLOAT_ALL:
        for (int i = 0; i < nin; i++)
            if (in[i]->dtype != x)
                return false;
        for (int i = 1; i < nout; i++)
            if (!ev_is_float(out[i].dtype))
                return false;
        return ev_is_float(x) && y == x;
    }
    return false;
}

bool glow_eval_supported_types(glow_node_kind k, const glow_type *const *ins, int nin,
                               const glow_type *outs, int nout)
{
    ev_entry e = entry_of(k);
    if (e.policy == EP_CONTROL)   /* any number of operands and results */
        return nin >= 1 && nout >= 1 && policy_ok(e.policy, nin, ins, nout, outs);
    if (nin >= 1 && nin <= 64 && glow_ev_quant_types(k, ins, nin, outs, nout))
        return true;
    if (!e.fn || (nin < 1 && e.policy != EP_SPLAT) || nin > 64 || nout < 1 || nout > 3)
        return false;
    return policy_ok(e.policy, nin, ins, nout, outs);
}

/* Operand type lists: on the stack for the usual few, on the heap for the kinds that take
 * any number (If, Loop). */
#define EV_SMALL_IN 64

bool glow_eval_supported(const glow_node *n)
{
    const glow_type *small[EV_SMALL_IN] = { NULL };
    const glow_type **in = n->nin <= EV_SMALL_IN ? small : glow_xmalloc(sizeof *in * n->nin);
    for (uint32_t i = 0; i < n->nin; i++)
        in[i] = glow_value_type(n->ins[i]);
    bool ok = glow_eval_supported_types(n->kind, in, (int)n->nin, n->outs, (int)n->nout);
    if (in != small)
        free(in);
    return ok;
}

bool glow_eval_foldable(const glow_node *n)
{
    return n->kind != NK_LOOP && glow_eval_supported(n);
}

const char *glow_ev_kind(const glow_node *n) { return glow_node_kind_name(n->kind); }

glow_status glow_ev_expect_shape(const glow_node *n, const char *what, const glow_type *t,
                                 int rank, const int64_t *dims, glow_diag *d)
{
    bool ok = t->rank == rank;
    for (int i = 0; ok && i < rank; i++)
        ok = t->dims[i] == dims[i];
    if (ok)
        return GLOW_OK;
    char got[128], want[128] = "[";
    glow_type_str(t, got, sizeof got);
    size_t len = 1;
    for (int i = 0; i < rank && len < sizeof want - 24; i++)
        len += (size_t)snprintf(want + len, sizeof want - len, "%s%lld", i ? ", " : "",
                                (long long)dims[i]);
    snprintf(want + len, sizeof want - len, "]");
    return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': %s is %s, expected shape %s",
                     glow_ev_kind(n), n->name, what, got, want);
}

glow_status glow_ev_axis(const glow_node *n, int64_t axis, int rank, int *out, glow_diag *d)
{
    if (axis < -rank || axis >= rank || (rank == 0 && axis != 0))
        return glow_fail(d, GLOW_ERR_BAD_ATTR, "%s '%s': axis %lld out of range for rank %d",
                         glow_ev_kind(n), n->name, (long long)axis, rank);
    *out = (int)(axis < 0 ? axis + rank : axis);
    return GLOW_OK;
}

/* GLOWC_EVAL_REFERENCE, read once (it is a test harness's switch, not a setting that changes
 * during a run): 0 unset or "0", 1 the float64 reference, 2 + S the reference with rounding
 * noise of seed S ("noise:S"). -1 until read; an atomic, because interpreter runs may
 * evaluate in parallel. */
static long long reference_mode(void)
{
    static _Atomic long long mode = -1;
    long long m = atomic_load_explicit(&mode, memory_order_relaxed);
    if (m < 0) {
        const char *v = getenv("GLOWC_EVAL_REFERENCE");
        m = !v || !*v || !strcmp(v, "0") ? 0 : 1;
        if (v && !strncmp(v, "noise:", 6))
            m = 2 + (long long)(strtoull(v + 6, NULL, 10) % (1ull << 40));
        atomic_store_explicit(&mode, m, memory_order_relaxed);
    }
    return m;
}

bool glow_ev_reference(void) { return reference_mode() != 0; }

/* Kinds whose f32 results are sums of many terms, which a float32 backend rounds in an order
 * of its own: where the rounding noise goes. */
static bool accumulates(glow_node_kind k)
{
    switch (k) {
    case NK_CONV: case NK_CONV_TRANSPOSE: case NK_MATMUL: case NK_GEMM:
    case NK_FULLY_CONNECTED: case NK_AVG_POOL: case NK_LP_POOL: case NK_REDUCE_SUM:
    case NK_REDUCE_MEAN: case NK_REDUCE_PROD: case NK_REDUCE_L1: case NK_REDUCE_L2:
    case NK_REDUCE_LOG_SUM: case NK_REDUCE_LOG_SUM_EXP: case NK_REDUCE_SUM_SQUARE:
    case NK_CUMSUM: case NK_SOFTMAX: case NK_LOG_SOFTMAX: case NK_BATCH_NORM:
    case NK_INSTANCE_NORM: case NK_GROUP_NORM: case NK_LAYER_NORM: case NK_RMS_NORM:
    case NK_LP_NORM: case NK_LRN:
        return true;
    default:
        return false;
    }
}

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* The noisy reference (GLOWC_EVAL_REFERENCE=noise:S): moves every f32 result of an
 * accumulating node by -4..4 ulps, chosen by a hash of S, the node's name and the element,
 * as another summation order might. How far the outputs then move from the plain reference
 * is how much this model amplifies accumulation rounding (docs/fuzzing.md, "Telling
 * rounding from bugs"). */
static void add_noise(const glow_node *n, glow_tensor *out, long long seed)
{
    if (out->type.dtype != GLOW_F32 || !accumulates(n->kind))
        return;
    uint64_t h = mix64((uint64_t)seed);
    for (const char *p = n->name; p && *p; p++)
        h = mix64(h ^ (unsigned char)*p);
    float *y = out->data;
    int64_t count = ev_numel(&out->type);
    for (int64_t i = 0; i < count; i++) {
        int k = (int)(mix64(h ^ (uint64_t)i) % 9) - 4;
        for (; k > 0; k--)
            y[i] = nextafterf(y[i], INFINITY);
        for (; k < 0; k++)
            y[i] = nextafterf(y[i], -INFINITY);
    }
}

/* The activation a backend asked the optimizer to fuse into a Conv/FullyConnected/MatMul
 * (attributes fused_act, fused_alpha, fused_beta; src/opt/fuse_activation.c), applied to the
 * result in place in double, by the function the kernels' fused epilogues round to f32. */
static glow_status apply_fused_act(const glow_node *n, glow_tensor *out, glow_diag *d)
{
    const char *act = glow_node_str(n, GA_FUSED_ACT, "");
    double alpha = glow_node_float(n, GA_FUSED_ALPHA, 0);
    double beta = glow_node_float(n, GA_FUSED_BETA, 0);
    glow_dtype t = out->type.dtype;
    int which = !strcmp(act, "Relu") ? GK_ACT_RELU : !strcmp(act, "Clip") ? GK_ACT_CLIP
              : !strcmp(act, "LeakyRelu") ? GK_ACT_LEAKY_RELU
              : !strcmp(act, "Sigmoid") ? GK_ACT_SIGMOID : !strcmp(act, "Tanh") ? GK_ACT_TANH
              : GK_ACT_NONE;
    if (which == GK_ACT_NONE || !glow_dtype_is_float(t))
        return glow_fail(d, GLOW_ERR_UNSUPPORTED, "%s '%s': no evaluator for fused activation "
                         "'%s' on %s", glow_ev_kind(n), n->name, act, glow_dtype_name(t));
    int64_t numel = glow_type_numel(&out->type);
    for (int64_t i = 0; i < numel; i++) {
        double x = glow_load_f64(t, out->data, (size_t)i);
        glow_store_f64(t, out->data, (size_t)i, gk_act_f64(which, x, alpha, beta));
    }
    return GLOW_OK;
}

/* Whether the kind takes this many operands and results: any number for control flow. */
static bool arity_ok(const glow_node *n, ev_entry e)
{
    if ((n->nin < 1 && e.policy != EP_SPLAT) || n->nout < 1)
        return false;
    return e.policy == EP_CONTROL || (n->nin <= 64 && n->nout <= 3);
}

static glow_status eval_into(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                             const glow_type **in, glow_diag *d);

glow_status glow_eval_node_into(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                                glow_diag *d)
{
    ev_entry e = entry_of(n->kind);
    if (!e.fn && !glow_ev_quant_kind(n->kind))
        return glow_fail(d, GLOW_ERR_UNSUPPORTED, "%s '%s': no evaluator for this kind",
                         glow_ev_kind(n), n->name);
    if (!arity_ok(n, e))
        return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': %u operands and %u results",
                         glow_ev_kind(n), n->name, n->nin, n->nout);
    const glow_type *small[EV_SMALL_IN] = { NULL };
    const glow_type **in = n->nin <= EV_SMALL_IN ? small : glow_xmalloc(sizeof *in * n->nin);
    glow_status s = eval_into(n, ins, outs, in, d);
    if (in != small)
        free(in);
    return s;
}

/* glow_eval_node_into with room for the operand types in `in`. */
static glow_status eval_into(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                             const glow_type **in, glow_diag *d)
{
    ev_entry e = entry_of(n->kind);
    /* The policy is checked on the tensors actually supplied: the routines read their
     * types, not the node's operand types. */
    for (uint32_t i = 0; i < n->nin; i++) {
        in[i] = &ins[i].type;
        if (ins[i].type.rank > GLOW_MAX_DIMS || glow_type_numel(&ins[i].type) < 0 ||
            (!ins[i].data && ev_numel(&ins[i].type) != 0))
            return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': operand %u has no data",
                             glow_ev_kind(n), n->name, i);
    }
    bool quant = e.policy != EP_CONTROL &&
                 glow_ev_quant_types(n->kind, in, (int)n->nin, n->outs, (int)n->nout);
    if (quant)
        e = (ev_entry){ glow_ev_quant, EP_QUANT };
    else if (!policy_ok(e.policy, (int)n->nin, in, (int)n->nout, n->outs)) {
        char a[96] = "none", b[96];
        if (n->nin > 0)
            glow_type_str(in[0], a, sizeof a);
        glow_type_str(&n->outs[0], b, sizeof b);
        return glow_fail(d, GLOW_ERR_UNSUPPORTED,
                         "%s '%s': no evaluator for operand %s with result %s (or other operand "
                         "kinds)", glow_ev_kind(n), n->name, a, b);
    }
    for (uint32_t i = 0; i < n->nout; i++) {
        if (!glow_type_equal(&outs[i].type, &n->outs[i]) ||
            (!outs[i].data && ev_numel(&outs[i].type) != 0)) {
            char a[96], b[96];
            return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': result %u buffer is %s, the node "
                             "declares %s", glow_ev_kind(n), n->name, i,
                             glow_type_str(&outs[i].type, a, sizeof a),
                             glow_type_str(&n->outs[i], b, sizeof b));
        }
    }
    /* f32 elementwise ops and MatMul take plain float loops when their shapes allow (not in
     * the float64 reference, glow_ev_reference). */
    glow_status s = !quant && !glow_ev_reference() && glow_ev_fast(n, ins, outs)
                  ? GLOW_OK : e.fn(n, ins, outs, d);
    if (s == GLOW_OK && !quant && reference_mode() >= 2)
        add_noise(n, &outs[0], reference_mode() - 2);
    /* Quantized forms narrow their range by the fused activation themselves. */
    if (s == GLOW_OK && !quant && glow_node_attr(n, GA_FUSED_ACT))
        s = apply_fused_act(n, &outs[0], d);
    return s;
}

glow_status glow_eval_node(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                           glow_diag *d)
{
    if (n->nout < 1 || (n->nout > 3 && entry_of(n->kind).policy != EP_CONTROL))
        return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': %u results", glow_ev_kind(n), n->name,
                         n->nout);
    for (uint32_t i = 0; i < n->nout; i++)
        outs[i] = (glow_tensor){ 0 };
    glow_status s = GLOW_OK;
    if (!entry_of(n->kind).fn && !glow_ev_quant_kind(n->kind))
        return glow_eval_node_into(n, ins, outs, d); /* fails naming the kind */
    for (uint32_t i = 0; i < n->nout && s == GLOW_OK; i++)
        s = glow_tensor_alloc(&outs[i], &n->outs[i], d);
    if (s == GLOW_OK)
        s = glow_eval_node_into(n, ins, outs, d);
    if (s != GLOW_OK) {
        for (uint32_t i = 0; i < n->nout; i++)
            glow_tensor_free(&outs[i]);
    }
    return s;
}
