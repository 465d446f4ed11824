// onnx_ops_rnn.c - Loaders for RNN, GRU and LSTM: unrolled over the static sequence length into
// MatMul, Add, Mul, Slice, activation, Concat and Reshape nodes.
//
// The graph has no recurrent node, so each time step becomes a handful of ordinary nodes and
// later stages (optimizer, lowering, backends) need nothing new. The input projection X·W^T
// (plus the biases that are purely additive) is computed for all time steps with one MatMul per
// direction; each step then adds H·R^T and applies the gate equations of the ONNX operator
// specification (gate order iofc for LSTM, zrh for GRU). W and R are usually initializers, so
// their per-direction slices and transposes fold to constants at import.
#include <limits.h>
#include <string.h>

#include "onnx/onnx_internal.h"

/* Steps (sequence length x directions) unrolled at most, so a model cannot make the importer
 * build an unbounded graph. */
#define MAX_STEPS 10000

typedef enum { CELL_RNN, CELL_GRU, CELL_LSTM } cell_kind;
typedef enum { FORM_PLAIN, FORM_SCALED_TANH, FORM_AFFINE } act_form;

typedef struct rnn_act {
    glow_node_kind kind;
    act_form form;
    double alpha, beta;
} rnn_act;

/* Activation names of the RNN family and how many of activation_alpha / activation_beta each
 * consumes (defaults as the corresponding ONNX operators). A plain activation is the ONNX op
 * of that name: its node kind comes from onnx_ops.def. */
static const struct {
    const char *name;
    act_form form;
    int nalpha, nbeta;
    double alpha, beta;
} act_table[] = {
    { "Relu", FORM_PLAIN, 0, 0, 0, 0 },
    { "Tanh", FORM_PLAIN, 0, 0, 0, 0 },
    { "Sigmoid", FORM_PLAIN, 0, 0, 0, 0 },
    { "Softsign", FORM_PLAIN, 0, 0, 0, 0 },
    { "Softplus", FORM_PLAIN, 0, 0, 0, 0 },
    { "LeakyRelu", FORM_PLAIN, 1, 0, 0.01, 0 },
    { "ThresholdedRelu", FORM_PLAIN, 1, 0, 1.0, 0 },
    { "Elu", FORM_PLAIN, 1, 0, 1.0, 0 },
    { "HardSigmoid", FORM_PLAIN, 1, 1, 0.2, 0.5 },
    { "ScaledTanh", FORM_SCALED_TANH, 1, 1, 1.0, 1.0 },
    { "Affine", FORM_AFFINE, 1, 1, 1.0, 0.0 },
};

typedef struct rnn {
    onnx_ctx *cx;
    const Onnx__NodeProto *np;
    cell_kind cell;
    int G, nact, D;          /* gates, activations per direction, directions */
    bool rev[2];             /* direction d runs backwards in time */
    int64_t T, B, I, H;
    glow_dtype dt;
    rnn_act act[2][3];
    bool clip_on;
    double clip;
    bool input_forget, lbr;
    glow_value ones;         /* [B, H] of 1 (GRU's 1 - z, LSTM's coupled forget gate) */
} rnn;

static bool same_name(const char *a, const uint8_t *b, size_t n)
{
    size_t i = 0;
    for (; i < n && a[i]; i++) {
        char x = a[i], y = (char)b[i];
        if ((x | 0x20) != (y | 0x20))
            return false;
    }
    return i == n && !a[i];
}

/* Reads activations, activation_alpha and activation_beta (defaults: Sigmoid/Tanh/Tanh). */
static glow_status parse_acts(rnn *r)
{
    static const char *const dflt[3][3] = {
        [CELL_RNN] = { "Tanh" }, [CELL_GRU] = { "Sigmoid", "Tanh" },
        [CELL_LSTM] = { "Sigmoid", "Tanh", "Tanh" },
    };
    const Onnx__AttributeProto *a = onnx_attr(r->np, "activations");
    size_t n = a ? a->n_strings : 0;
    if (a && n != (size_t)r->nact && n != (size_t)(r->nact * r->D))
        return onnx_fail(r->cx, r->np, GLOW_ERR_BAD_ATTR, "'activations' has %zu names, "
                         "expected %d", n, r->nact * r->D);
    const float *alphas = NULL, *betas = NULL;
    int na = onnx_attr_floats(r->np, "activation_alpha", &alphas);
    int nb = onnx_attr_floats(r->np, "activation_beta", &betas);
    int ia = 0, ib = 0;
    for (int d = 0; d < r->D; d++) {
        for (int k = 0; k < r->nact; k++) {
            size_t idx = n == (size_t)r->nact ? (size_t)k : (size_t)(d * r->nact + k);
            const uint8_t *s = n ? a->strings[idx].data : (const uint8_t *)dflt[r->cell][k];
            size_t len = n ? a->strings[idx].len : strlen(dflt[r->cell][k]);
            size_t e = 0, ne = sizeof(act_table) / sizeof(act_table[0]);
            while (e < ne && !same_name(act_table[e].name, s, len))
                e++;
            if (e == ne)
                return onnx_unsupported(r->cx, r->np, "activation '%.*s'",
                                        (int)(len > 64 ? 64 : len), (const char *)s);
            rnn_act *ac = &r->act[d][k];
            ac->form = act_table[e].form;
            /* At the latest opset: the names denote the functions whatever the model's. */
            ac->kind = ac->form == FORM_PLAIN ? onnx_op_kind(act_table[e].name, INT_MAX)
                                              : ONNX_CUSTOM;
            ac->alpha = act_table[e].alpha;
            ac->beta = act_table[e].beta;
            /* The lists are consumed in order by the activations that take parameters. */
            if (act_table[e].nalpha && ia < na)
                ac->alpha = alphas[ia++];
            if (act_table[e].nbeta && ib < nb)
                ac->beta = betas[ib++];
        }
    }
    return GLOW_OK;
}

/* --- node helpers --- */

static glow_status bin(rnn *r, glow_node_kind k, glow_value a, glow_value b, glow_value *out)
{
    glow_value ins[2] = { a, b };
    return onnx_build(r->cx, r->np, k, ins, 2, NULL, 0, NULL, 0, out);
}

/* A constant [B, H] filled with v. */
static glow_status filled(rnn *r, const char *what, double v, glow_value *out)
{
    int64_t dims[2] = { r->B, r->H };
    glow_type t = glow_type_make(r->dt, 2, dims);
    const char *name = glow_arena_printf(r->cx->arena, "%s/%s", onnx_node_name(r->np), what);
    glow_node *c = glow_constant_create(r->cx->m, name, &t, NULL);
    if (!c)
        return onnx_fail(r->cx, r->np, GLOW_ERR_TOO_LARGE, "state of %lld x %lld does not fit "
                         "in memory", (long long)r->B, (long long)r->H);
    for (int64_t i = 0; v != 0 && i < r->B * r->H; i++)
        glow_store_f64(r->dt, c->payload.data, (size_t)i, v);
    *out = glow_val(c, 0);
    return GLOW_OK;
}

static glow_status transpose(rnn *r, glow_value v, const int64_t *perm, glow_value *out)
{
    glow_attr a = GLOW_AINTS(PERM, perm, glow_value_type(v)->rank);
    return onnx_build(r->cx, r->np, NK_TRANSPOSE, &v, 1, &a, 1, NULL, 0, out);
}

/* v[d] for a [D, ...] value, the leading axis removed. */
static glow_status take_dir(rnn *r, glow_value v, int d, glow_value *out)
{
    glow_value s;
    GLOW_TRY(onnx_slice_axis(r->cx, r->np, v, 0, d, d + 1, &s));
    const glow_type *t = glow_value_type(s);
    return onnx_reshape(r->cx, r->np, s, t->rank - 1, t->dims + 1, out);
}

/* Columns [k*H, (k+1)*H) of a [rows, G*H] value: gate k. */
static glow_status gate(rnn *r, glow_value v, int k, glow_value *out)
{
    return onnx_slice_axis(r->cx, r->np, v, 1, k * r->H, (k + 1) * r->H, out);
}

/* act(clip(x)); `clipped` is false for LSTM's output activation h, which gets the cell. */
static glow_status activate(rnn *r, const rnn_act *a, glow_value x, bool clipped,
                            glow_value *out)
{
    if (clipped && r->clip_on) {
        glow_attr c[2] = { GLOW_AF(MIN, -r->clip), GLOW_AF(MAX, r->clip) };
        GLOW_TRY(onnx_build(r->cx, r->np, NK_CLIP, &x, 1, c, 2, NULL, 0, &x));
    }
    glow_value s;
    switch (a->form) {
    case FORM_SCALED_TANH:   /* alpha * tanh(beta * x) */
        GLOW_TRY(filled(r, "beta", a->beta, &s));
        GLOW_TRY(bin(r, NK_MUL, x, s, &x));
        GLOW_TRY(onnx_build(r->cx, r->np, NK_TANH, &x, 1, NULL, 0, NULL, 0, &x));
        GLOW_TRY(filled(r, "alpha", a->alpha, &s));
        return bin(r, NK_MUL, x, s, out);
    case FORM_AFFINE:        /* alpha * x + beta */
        GLOW_TRY(filled(r, "alpha", a->alpha, &s));
        GLOW_TRY(bin(r, NK_MUL, x, s, &x));
        GLOW_TRY(filled(r, "beta", a->beta, &s));
        return bin(r, NK_ADD, x, s, out);
    case FORM_PLAIN:
        break;
    }
    glow_attr p[2];
    int np = 0;
    if (a->kind == NK_LEAKY_RELU || a->kind == NK_THRESHOLDED_RELU || a->kind == NK_ELU ||
        a->kind == NK_HARD_SIGMOID)
        p[np++] = GLOW_AF(ALPHA, a->alpha);
    if (a->kind == NK_HARD_SIGMOID)
        p[np++] = GLOW_AF(BETA, a->beta);
    return onnx_build(r->cx, r->np, a->kind, &x, 1, p, np, NULL, 0, out);
}

/* --- one direction --- */

typedef struct rnn_inputs {
    glow_value x;                  /* [T, B, I] */
    glow_value w, rw;              /* [D, G*H, I], [D, G*H, H] */
    glow_value b, h0, c0, p;       /* optional (node NULL): [D, 2*G*H], [D, B, H] x2, [D, 3H] */
} rnn_inputs;

/* Runs direction d over the sequence; hs[t] receives H at time t, *h and *c the final state. */
static glow_status run_direction(rnn *r, const rnn_inputs *in, int d, glow_value *hs,
                                 glow_value *h, glow_value *c)
{
    onnx_ctx *cx = r->cx;
    const Onnx__NodeProto *np = r->np;
    int64_t GH = r->G * r->H, H = r->H;
    const int64_t flip[2] = { 1, 0 };
    glow_value wt, rt, xbias = { 0 }, hbias = { 0 };
    GLOW_TRY(take_dir(r, in->w, d, &wt));
    GLOW_TRY(transpose(r, wt, flip, &wt));                 /* [I, GH] */
    GLOW_TRY(take_dir(r, in->rw, d, &rt));
    GLOW_TRY(transpose(r, rt, flip, &rt));                 /* [H, GH] */
    if (in->b.node) {
        glow_value bd, wb, rb;
        GLOW_TRY(take_dir(r, in->b, d, &bd));
        GLOW_TRY(onnx_slice_axis(cx, np, bd, 0, 0, GH, &wb));
        GLOW_TRY(onnx_slice_axis(cx, np, bd, 0, GH, 2 * GH, &rb));
        /* GRU with linear_before_reset keeps Rb_h inside r (.) (H·Rh^T + Rb_h); every other
         * recurrence bias is a plain addend and joins the input projection. */
        if (r->cell == CELL_GRU && r->lbr) {
            xbias = wb;
            int64_t bh[2] = { r->B, GH };
            GLOW_TRY(onnx_broadcast_to(cx, np, rb, 2, bh, &hbias));
        } else {
            GLOW_TRY(bin(r, NK_ADD, wb, rb, &xbias));
        }
    }
    /* The input projection of every step at once: [T*B, I] x [I, GH]. */
    glow_value xp;
    int64_t flat[2] = { r->T * r->B, r->I }, steps[3] = { r->T, r->B, GH };
    GLOW_TRY(onnx_reshape(cx, np, in->x, 2, flat, &xp));
    GLOW_TRY(bin(r, NK_MATMUL, xp, wt, &xp));
    if (xbias.node) {
        glow_value ins[2] = { xp, xbias };
        GLOW_TRY(onnx_build_elemwise(cx, np, NK_ADD, ins, 2, NULL, 0, &xp));
    }
    GLOW_TRY(onnx_reshape(cx, np, xp, 3, steps, &xp));

    if (in->h0.node)
        GLOW_TRY(take_dir(r, in->h0, d, h));
    else
        GLOW_TRY(filled(r, "h0", 0, h));
    if (r->cell == CELL_LSTM) {
        if (in->c0.node)
            GLOW_TRY(take_dir(r, in->c0, d, c));
        else
            GLOW_TRY(filled(r, "c0", 0, c));
    }
    glow_value peep[3] = { { 0 } }, rt_zr = { 0 }, rt_h = { 0 };
    if (in->p.node) {
        glow_value pd;
        int64_t bh[2] = { r->B, H };
        GLOW_TRY(take_dir(r, in->p, d, &pd));
        for (int k = 0; k < 3; k++) {   /* P holds i, o, f */
            GLOW_TRY(onnx_slice_axis(cx, np, pd, 0, k * H, (k + 1) * H, &peep[k]));
            GLOW_TRY(onnx_broadcast_to(cx, np, peep[k], 2, bh, &peep[k]));
        }
    }
    if (r->cell == CELL_GRU && !r->lbr) {
        GLOW_TRY(onnx_slice_axis(cx, np, rt, 1, 0, 2 * H, &rt_zr));
        GLOW_TRY(onnx_slice_axis(cx, np, rt, 1, 2 * H, 3 * H, &rt_h));
    }
    const rnn_act *act = r->act[d];
    for (int64_t s = 0; s < r->T; s++) {
        int64_t t = r->rev[d] ? r->T - 1 - s : s;
        glow_value xt, hp, g[4], v, u;
        int64_t row[2] = { r->B, GH };
        GLOW_TRY(onnx_slice_axis(cx, np, xp, 0, t, t + 1, &xt));
        GLOW_TRY(onnx_reshape(cx, np, xt, 2, row, &xt));
        switch (r->cell) {
        case CELL_RNN:
            GLOW_TRY(bin(r, NK_MATMUL, *h, rt, &hp));
            GLOW_TRY(bin(r, NK_ADD, xt, hp, &v));
            GLOW_TRY(activate(r, &act[0], v, true, h));
            break;
        case CELL_LSTM: {
            GLOW_TRY(bin(r, NK_MATMUL, *h, rt, &hp));
            GLOW_TRY(bin(r, NK_ADD, xt, hp, &v));
            for (int k = 0; k < 4; k++)   /* i, o, f, c */
                GLOW_TRY(gate(r, v, k, &g[k]));
            glow_value i, f, cc, o;
            if (peep[0].node) {
                GLOW_TRY(bin(r, NK_MUL, peep[0], *c, &u));
                GLOW_TRY(bin(r, NK_ADD, g[0], u, &g[0]));
                GLOW_TRY(bin(r, NK_MUL, peep[2], *c, &u));
                GLOW_TRY(bin(r, NK_ADD, g[2], u, &g[2]));
            }
            GLOW_TRY(activate(r, &act[0], g[0], true, &i));
            if (r->input_forget)
                GLOW_TRY(bin(r, NK_SUB, r->ones, i, &f));
            else
                GLOW_TRY(activate(r, &act[0], g[2], true, &f));
            GLOW_TRY(activate(r, &act[1], g[3], true, &cc));
            GLOW_TRY(bin(r, NK_MUL, f, *c, &v));
            GLOW_TRY(bin(r, NK_MUL, i, cc, &u));
            GLOW_TRY(bin(r, NK_ADD, v, u, c));
            if (peep[1].node) {
                GLOW_TRY(bin(r, NK_MUL, peep[1], *c, &u));
                GLOW_TRY(bin(r, NK_ADD, g[1], u, &g[1]));
            }
            GLOW_TRY(activate(r, &act[0], g[1], true, &o));
            GLOW_TRY(activate(r, &act[2], *c, false, &v));
            GLOW_TRY(bin(r, NK_MUL, o, v, h));
            break;
        }
        case CELL_GRU: {
            for (int k = 0; k < 3; k++)   /* z, r, h */
                GLOW_TRY(gate(r, xt, k, &g[k]));
            glow_value hz, hr, z, rr, hh;
            GLOW_TRY(bin(r, NK_MATMUL, *h, r->lbr ? rt : rt_zr, &hp));
            if (hbias.node)
                GLOW_TRY(bin(r, NK_ADD, hp, hbias, &hp));
            GLOW_TRY(gate(r, hp, 0, &hz));
            GLOW_TRY(gate(r, hp, 1, &hr));
            GLOW_TRY(bin(r, NK_ADD, g[0], hz, &z));
            GLOW_TRY(activate(r, &act[0], z, true, &z));
            GLOW_TRY(bin(r, NK_ADD, g[1], hr, &rr));
            GLOW_TRY(activate(r, &act[0], rr, true, &rr));
            if (r->lbr) {
                GLOW_TRY(gate(r, hp, 2, &u));
                GLOW_TRY(bin(r, NK_MUL, rr, u, &u));
            } else {
                GLOW_TRY(bin(r, NK_MUL, rr, *h, &u));
                GLOW_TRY(bin(r, NK_MATMUL, u, rt_h, &u));
            }
            GLOW_TRY(bin(r, NK_ADD, g[2], u, &hh));
            GLOW_TRY(activate(r, &act[1], hh, true, &hh));
            /* H = (1 - z) (.) h~ + z (.) H */
            GLOW_TRY(bin(r, NK_SUB, r->ones, z, &u));
            GLOW_TRY(bin(r, NK_MUL, u, hh, &u));
            GLOW_TRY(bin(r, NK_MUL, z, *h, &v));
            GLOW_TRY(bin(r, NK_ADD, u, v, h));
            break;
        }
        }
        hs[t] = *h;
    }
    return GLOW_OK;
}

/* --- the loaders --- */

static glow_status opt_input(rnn *r, int i, glow_value *v)
{
    *v = (glow_value){ 0 };
    if (!onnx_has_input(r->np, i))
        return GLOW_OK;
    GLOW_TRY(onnx_input(r->cx, r->np, i, v));
    if (glow_value_type(*v)->dtype != r->dt)
        return onnx_fail(r->cx, r->np, GLOW_ERR_BAD_TYPE, "input %d is %s, X is %s", i,
                         glow_dtype_name(glow_value_type(*v)->dtype), glow_dtype_name(r->dt));
    return GLOW_OK;
}

/* Fails unless v has shape dims (rank n); `what` names it. */
static glow_status want_shape(rnn *r, glow_value v, const char *what, int n, const int64_t *dims)
{
    const glow_type *t = glow_value_type(v);
    bool ok = t->rank == n;
    for (int k = 0; ok && k < n; k++)
        ok = t->dims[k] == dims[k];
    if (ok)
        return GLOW_OK;
    char got[128], want[128];
    glow_type w = glow_type_make(t->dtype, n, dims);
    return onnx_fail(r->cx, r->np, GLOW_ERR_BAD_SHAPE, "%s is %s, expected %s", what,
                     glow_type_str(t, got, sizeof got), glow_type_str(&w, want, sizeof want));
}

static glow_status check_seq_lens(rnn *r)
{
    if (!onnx_has_input(r->np, 4))
        return GLOW_OK;
    glow_value v;
    GLOW_TRY(onnx_input(r->cx, r->np, 4, &v));
    if (v.node->kind != NK_CONSTANT)
        return onnx_unsupported(r->cx, r->np, "sequence_lens is computed at run time; glowc "
                                "needs it constant and equal to the sequence length");
    int64_t *lens;
    int n;
    GLOW_TRY(onnx_input_ints(r->cx, r->np, 4, &lens, &n));
    for (int i = 0; i < n; i++)
        if (lens[i] != r->T)
            return onnx_unsupported(r->cx, r->np, "sequence_lens[%d] = %lld differs from the "
                                    "sequence length %lld (variable lengths)", i,
                                    (long long)lens[i], (long long)r->T);
    return GLOW_OK;
}

static glow_status load_recurrent(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                  cell_kind cell)
{
    rnn r = { .cx = cx, .np = np, .cell = cell };
    r.G = cell == CELL_LSTM ? 4 : cell == CELL_GRU ? 3 : 1;
    r.nact = cell == CELL_LSTM ? 3 : cell == CELL_GRU ? 2 : 1;
    GLOW_TRY(onnx_attr_check(cx, np, "hidden_size", 2));
    GLOW_TRY(onnx_attr_check(cx, np, "clip", 1));
    const char *dir = onnx_attr_str(cx, np, "direction", "forward");
    if (strcmp(dir, "forward") == 0 || strcmp(dir, "reverse") == 0) {
        r.D = 1;
        r.rev[0] = dir[0] == 'r';
    } else if (strcmp(dir, "bidirectional") == 0) {
        r.D = 2;
        r.rev[1] = true;
    } else {
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "direction '%s'", dir);
    }
    int64_t layout = opset >= 14 ? onnx_attr_int(np, "layout", 0) : 0;
    if (layout != 0 && layout != 1)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "layout = %lld", (long long)layout);
    r.clip_on = onnx_attr(np, "clip") != NULL;
    r.clip = onnx_attr_float(np, "clip", 0);
    if (r.clip_on && !(r.clip > 0))
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "clip = %g, expected > 0", r.clip);
    r.input_forget = cell == CELL_LSTM && onnx_attr_int(np, "input_forget", 0) != 0;
    r.lbr = cell == CELL_GRU && onnx_attr_int(np, "linear_before_reset", 0) != 0;
    GLOW_TRY(parse_acts(&r));

    rnn_inputs in;
    GLOW_TRY(onnx_input(cx, np, 0, &in.x));
    const glow_type *xt = glow_value_type(in.x);
    r.dt = xt->dtype;
    if (!glow_dtype_is_float(r.dt))
        return onnx_fail(cx, np, GLOW_ERR_BAD_TYPE, "X is %s, expected a float kind",
                         glow_dtype_name(r.dt));
    if (xt->rank != 3)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "X has rank %d, expected 3", xt->rank);
    const int64_t swap01[3] = { 1, 0, 2 };
    if (layout == 1)
        GLOW_TRY(transpose(&r, in.x, swap01, &in.x));
    xt = glow_value_type(in.x);
    r.T = xt->dims[0], r.B = xt->dims[1], r.I = xt->dims[2];
    GLOW_TRY(opt_input(&r, 1, &in.w));
    GLOW_TRY(opt_input(&r, 2, &in.rw));
    if (!in.w.node || !in.rw.node)
        return onnx_fail(cx, np, GLOW_ERR_PARSE, "inputs W and R are required");
    const glow_type *rt = glow_value_type(in.rw);
    r.H = onnx_attr_int(np, "hidden_size", rt->rank == 3 ? rt->dims[2] : 0);
    if (r.H < 1 || r.H > (1 << 24))
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "hidden_size = %lld", (long long)r.H);
    int64_t GH = r.G * r.H;
    GLOW_TRY(want_shape(&r, in.w, "W", 3, (int64_t[]){ r.D, GH, r.I }));
    GLOW_TRY(want_shape(&r, in.rw, "R", 3, (int64_t[]){ r.D, GH, r.H }));
    GLOW_TRY(opt_input(&r, 3, &in.b));
    if (in.b.node)
        GLOW_TRY(want_shape(&r, in.b, "B", 2, (int64_t[]){ r.D, 2 * GH }));
    GLOW_TRY(check_seq_lens(&r));
    glow_value *states[2] = { &in.h0, &in.c0 };
    for (int k = 0; k < 2; k++) {
        GLOW_TRY(opt_input(&r, 5 + k, states[k]));
        if (!states[k]->node)
            continue;
        if (cell != CELL_LSTM && k == 1)
            return onnx_fail(cx, np, GLOW_ERR_PARSE, "has an initial_c input");
        if (layout == 1)
            GLOW_TRY(transpose(&r, *states[k], swap01, states[k]));
        GLOW_TRY(want_shape(&r, *states[k], k ? "initial_c" : "initial_h", 3,
                            (int64_t[]){ r.D, r.B, r.H }));
    }
    GLOW_TRY(opt_input(&r, 7, &in.p));
    if (in.p.node) {
        if (cell != CELL_LSTM)
            return onnx_fail(cx, np, GLOW_ERR_PARSE, "has a peephole input P");
        GLOW_TRY(want_shape(&r, in.p, "P", 2, (int64_t[]){ r.D, 3 * r.H }));
    }
    if (r.T < 1 || r.T > MAX_STEPS / r.D)
        return onnx_unsupported(cx, np, "sequence length %lld (glowc unrolls 1 to %d steps)",
                                (long long)r.T, MAX_STEPS / r.D);
    if (r.input_forget || cell == CELL_GRU)
        GLOW_TRY(filled(&r, "one", 1, &r.ones));

    glow_value *hs = GLOW_NEW_ARRAY(&cx->scratch, glow_value, (size_t)r.T * (size_t)r.D);
    glow_value hl[2], cl[2];
    for (int d = 0; d < r.D; d++)
        GLOW_TRY(run_direction(&r, &in, d, hs + (size_t)d * (size_t)r.T, &hl[d], &cl[d]));

    /* Y: [T, D, B, H] (layout 1: [B, T, D, H]); Y_h, Y_c: [D, B, H] (layout 1: [B, D, H]). */
    if (onnx_has_output(np, 0)) {
        glow_value *rows = GLOW_NEW_ARRAY(&cx->scratch, glow_value, (size_t)r.T);
        int64_t one[4] = { 1, 1, r.B, r.H };
        for (int64_t t = 0; t < r.T; t++) {
            glow_value parts[2];
            for (int d = 0; d < r.D; d++)
                GLOW_TRY(onnx_reshape(cx, np, hs[(size_t)d * (size_t)r.T + (size_t)t], 4, one,
                                      &parts[d]));
            GLOW_TRY(onnx_concat_many(cx, np, parts, r.D, 1, &rows[t]));
        }
        glow_value y;
        GLOW_TRY(onnx_concat_many(cx, np, rows, (int)r.T, 0, &y));
        if (layout == 1)
            GLOW_TRY(transpose(&r, y, (const int64_t[]){ 2, 0, 1, 3 }, &y));
        GLOW_TRY(onnx_set_output(cx, np, 0, y));
    }
    for (int k = 1; k <= (cell == CELL_LSTM ? 2 : 1); k++) {
        if (!onnx_has_output(np, k))
            continue;
        glow_value parts[2], y;
        int64_t one[3] = { 1, r.B, r.H };
        for (int d = 0; d < r.D; d++)
            GLOW_TRY(onnx_reshape(cx, np, k == 1 ? hl[d] : cl[d], 3, one, &parts[d]));
        GLOW_TRY(onnx_concat_many(cx, np, parts, r.D, 0, &y));
        if (layout == 1)
            GLOW_TRY(transpose(&r, y, swap01, &y));
        GLOW_TRY(onnx_set_output(cx, np, k, y));
    }
    return GLOW_OK;
}

glow_status load_rnn(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    return load_recurrent(cx, np, opset, CELL_RNN);
}

glow_status load_gru(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    return load_recurrent(cx, np, opset, CELL_GRU);
}

glow_status load_lstm(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    return load_recurrent(cx, np, opset, CELL_LSTM);
}
