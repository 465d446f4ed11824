// lower_check.h - Helpers of the lowering tests: building small graphs on random constants,
// evaluating a whole function node by node, and comparing before/after lowering.
#ifndef GLOW_TEST_LOWER_CHECK_H
#define GLOW_TEST_LOWER_CHECK_H

#include "check.h"
#include "eval/eval.h"
#include "lower/lower.h"

static glow_module *M;
static glow_function *F;
static glow_diag D;
static int counter;
/* Values of the input placeholders, in module order (inputs come first), for eval_function. */
static const glow_tensor *FEED;
static int NFEED;
static bool QUIET;   /* no message when a node has no evaluator */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })
#define ATTRS(...) ((const glow_attr[]){ __VA_ARGS__ })
#define NATTRS(...) ((int)(sizeof((const glow_attr[]){ __VA_ARGS__ }) / sizeof(glow_attr)))

static inline void begin(void)
{
    M = glow_module_create();
    F = glow_function_create(M, "main");
    counter = 0;
}

static inline void end(void)
{
    glow_module_destroy(M);
    M = NULL;
    F = NULL;
}

static inline glow_value no_value(void) { return (glow_value){ NULL, 0 }; }

/* Uniform in [lo, hi), deterministic across runs. */
static inline double urand(double lo, double hi)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return lo + (hi - lo) * (double)(rng_state >> 11) / 9007199254740992.0;
}

/* A constant of random values in [lo, hi) (integers: rounded). */
static inline glow_value rnd(glow_dtype dt, int rank, const int64_t *dims, double lo, double hi)
{
    char name[32];
    snprintf(name, sizeof name, "in%d", counter++);
    glow_type t = glow_type_make(dt, rank, dims);
    glow_node *c = glow_constant_create(M, name, &t, NULL);
    for (int64_t i = 0; i < glow_type_numel(&t); i++) {
        double v = urand(lo, hi);
        glow_store_f64(dt, c->payload.data, (size_t)i, glow_dtype_is_float(dt) ? v : floor(v));
    }
    return glow_val(c, 0);
}

/* glow_build with a check that it worked (declared may be NULL). */
static inline glow_value build(glow_node_kind k, const char *name, const glow_value *ins, int nin,
                        const glow_attr *attrs, int nattr, const glow_type *declared, int ndecl)
{
    glow_diag_clear(&D);
    glow_node *n = glow_build(F, k, name, ins, nin, attrs, nattr, declared, ndecl, &D);
    if (!n)
        fprintf(stderr, "build %s '%s' failed: %s\n", glow_node_kind_name(k), name, D.msg);
    CHECK(n != NULL);
    return glow_val(n, 0);
}

/* Saves v to a new output placeholder named `name`. */
static inline void save(const char *name, glow_value v)
{
    if (!v.node)
        return;
    glow_node *ph = glow_placeholder_create(M, name, glow_value_type(v), false);
    glow_save_create(F, name, v, ph);
}

/* The fed value of input placeholder ph; -1 when there is none of its type. */
static inline int feed_of(const glow_node *ph, glow_tensor *out)
{
    int i = 0;
    for (const glow_node *p = M->placeholders.first; p && p->is_input; p = p->next, i++) {
        if (p != ph)
            continue;
        if (i >= NFEED || !glow_type_equal(&FEED[i].type, &ph->outs[0]))
            return -1;
        *out = FEED[i];
        return 0;
    }
    return -1;
}

/* Evaluates F in order with glow_eval_node and copies the value of each SAVE (in function
 * order) to outs; returns the number of outputs, or -1 when a node cannot be evaluated. */
static inline int eval_function(glow_tensor *outs, int max)
{
    int nout = 0, result = 0;
    for (glow_node *n = F->nodes.first; n; n = n->next)
        n->aux = NULL;
    for (glow_node *n = F->nodes.first; n && result == 0; n = n->next) {
        glow_tensor ins[64];
        for (uint32_t i = 0; i < n->nin && i < 64; i++) {
            glow_value v = n->ins[i];
            if (v.node->kind == NK_CONSTANT)
                ins[i] = v.node->payload;
            else if (v.node->kind == NK_PLACEHOLDER && v.node->is_input)
                result = feed_of(v.node, &ins[i]) ? -1 : result;
            else if (v.node->aux)
                ins[i] = ((glow_tensor *)v.node->aux)[v.res];
            else if (!(n->kind == NK_SAVE && i == 1))
                result = -1;
        }
        if (result)
            break;
        if (n->kind == NK_SAVE) {
            if (nout < max) {
                glow_diag_clear(&D);
                CHECK(glow_tensor_alloc(&outs[nout], &ins[0].type, &D) == GLOW_OK);
                memcpy(outs[nout].data, ins[0].data, glow_tensor_bytes(&ins[0]));
                nout++;
            }
            continue;
        }
        glow_tensor *res = calloc(n->nout ? n->nout : 1, sizeof(glow_tensor));
        glow_diag_clear(&D);
        if (glow_eval_node(n, ins, res, &D) != GLOW_OK) {
            if (!QUIET)
                fprintf(stderr, "eval %s '%s': %s\n", glow_node_kind_name(n->kind), n->name,
                        D.msg);
            free(res);
            result = -1;
            break;
        }
        n->aux = res;
    }
    for (glow_node *n = F->nodes.first; n; n = n->next) {
        glow_tensor *res = n->aux;
        for (uint32_t i = 0; res && i < n->nout; i++)
            glow_tensor_free(&res[i]);
        free(res);
        n->aux = NULL;
    }
    return result ? -1 : nout;
}

static inline int count_kind(glow_node_kind k)
{
    int c = 0;
    for (glow_node *n = F->nodes.first; n; n = n->next)
        c += n->kind == k;
    return c;
}

/* The function as text (the caller frees it). */
static char *print_function(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    glow_function_print(out, F);
    fclose(out);
    return text;
}

/* Evaluates F, lowers it with `keep`, verifies it, evaluates again and compares every output
 * within `tol` relative (to max(1, |reference|)). Returns the number of nodes lowered away
 * (the node count difference is not useful, so it returns whether anything changed). */
static inline bool lower_and_compare(glow_keep_fn keep, double tol, int line)
{
    glow_tensor before[8], after[8];
    char *text0 = print_function();
    int n0 = eval_function(before, 8);
    CHECK(n0 > 0);
    glow_diag_clear(&D);
    glow_status s = glow_lower(F, keep, &D);
    if (s != GLOW_OK)
        fprintf(stderr, "line %d: lowering failed: %s\n", line, D.msg);
    CHECK(s == GLOW_OK);
    glow_diag_clear(&D);
    s = glow_function_verify(F, &D);
    if (s != GLOW_OK)
        fprintf(stderr, "line %d: lowered graph does not verify: %s\n", line, D.msg);
    CHECK(s == GLOW_OK);
    char *text1 = print_function();
    bool changed = strcmp(text0, text1) != 0;
    int n1 = eval_function(after, 8);
    CHECK_EQ(n1, n0);
    for (int o = 0; o < n0 && o < n1; o++) {
        CHECK(glow_type_equal(&before[o].type, &after[o].type));
        int64_t count = glow_type_numel(&before[o].type);
        int bad = 0;
        for (int64_t i = 0; i < count && bad < 3; i++) {
            double a = glow_load_f64(before[o].type.dtype, before[o].data, (size_t)i);
            double b = glow_load_f64(after[o].type.dtype, after[o].data, (size_t)i);
            double scale = fabs(a) > 1 ? fabs(a) : 1;
            bool ok = (isnan(a) && isnan(b)) || a == b || fabs(a - b) <= tol * scale;
            if (!ok) {
                fprintf(stderr, "line %d: output %d element %lld: %.9g lowered, %.9g original\n",
                        line, o, (long long)i, b, a);
                bad++;
            }
        }
        CHECK_EQ(bad, 0);
    }
    for (int o = 0; o < n0; o++)
        glow_tensor_free(&before[o]);
    for (int o = 0; o < n1; o++)
        glow_tensor_free(&after[o]);
    free(text0);
    free(text1);
    return changed;
}

#define LOWER_AND_COMPARE(keep) lower_and_compare((keep), 1e-5, __LINE__)

/* Compares the printed function with the expected text; prints the whole text when they
 * differ, so a golden can be updated from the log. */
static inline void check_text(const char *want, int line)
{
    char *got = print_function();
    if (strcmp(got, want) != 0)
        fprintf(stderr, "line %d: lowered graph differs; got:\n%s\n", line, got);
    CHECK_STR_EQ(got, want);
    free(got);
}

#define CHECK_TEXT(want) check_text((want), __LINE__)

#endif
