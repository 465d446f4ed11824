// iropt_check.h - Helpers of the IR optimizer tests: small graphs on placeholders, IR text,
// running an IR function on the interpreter, comparing optimized and unoptimized results.
#ifndef GLOW_TEST_IROPT_CHECK_H
#define GLOW_TEST_IROPT_CHECK_H

#include "backend/backend.h"
#include "check.h"
#include "iropt/iropt.h"

static glow_module *M;
static glow_function *F;
static glow_diag D;
static uint64_t rng = 0x9E3779B97F4A7C15ull;

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })

static inline void begin(void)
{
    M = glow_module_create();
    F = glow_function_create(M, "main");
}

static inline void end(void)
{
    glow_module_destroy(M);
    M = NULL;
    F = NULL;
}

static inline glow_value input(const char *name, int rank, const int64_t *dims)
{
    glow_type t = glow_type_make(GLOW_F32, rank, dims);
    return glow_val(glow_placeholder_create(M, name, &t, true), 0);
}

static inline glow_value constant(const char *name, int rank, const int64_t *dims, float fill)
{
    glow_type t = glow_type_make(GLOW_F32, rank, dims);
    glow_node *c = glow_constant_create(M, name, &t, NULL);
    for (int64_t i = 0; i < glow_type_numel(&t); i++)
        ((float *)c->payload.data)[i] = fill + 0.25f * (float)(i % 7);
    return glow_val(c, 0);
}

static inline glow_value op(glow_node_kind k, const char *name, const glow_value *ins, int nin,
                            const glow_attr *attrs, int nattr)
{
    glow_node *n = glow_build(F, k, name, ins, nin, attrs, nattr, NULL, 0, &D);
    if (!n) {
        fprintf(stderr, "glow_build %s: %s\n", name, D.msg);
        exit(1);
    }
    return glow_val(n, 0);
}

static inline glow_value un(glow_node_kind k, const char *name, glow_value x)
{
    return op(k, name, &x, 1, NULL, 0);
}

static inline glow_value bin(glow_node_kind k, const char *name, glow_value a, glow_value b)
{
    glow_value ins[2] = { a, b };
    return op(k, name, ins, 2, NULL, 0);
}

static inline void save(const char *name, glow_value v)
{
    glow_placeholder_create(M, name, glow_value_type(v), false);
    glow_save_create(F, name, v, glow_module_find_placeholder(M, name));
}

static inline ir_function *gen(void)
{
    ir_function *ir = NULL;
    if (glow_function_verify(F, &D) != GLOW_OK || ir_generate(F, &ir, &D) != GLOW_OK) {
        fprintf(stderr, "IR generation: %s\n", D.msg);
        exit(1);
    }
    return ir;
}

/* The program section of the printed IR (no addresses: the plan is not part of a pass). */
static inline char *ir_text(const ir_function *ir)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *mem = open_memstream(&buf, &size);
    ir_function_print(mem, ir);
    fclose(mem);
    char *p = strstr(buf, "program {\n");
    char *q = p ? strstr(p, "}\nmemory") : NULL;
    if (p && q) {
        q[2] = 0;
        memmove(buf, p, strlen(p) + 1);
    }
    /* Drop " @<address>" from allocations. */
    char *w = buf;
    for (char *r = buf; *r;) {
        if (r[0] == ' ' && r[1] == '@' && r[2] >= '0' && r[2] <= '9') {
            r += 2;
            while (*r >= '0' && *r <= '9')
                r++;
            continue;
        }
        *w++ = *r++;
    }
    *w = 0;
    return buf;
}

/* Runs the named passes once each; fails the test when one leaves an invalid function. */
static inline void passes(ir_function *ir, const ir_pass_id *ids, int n)
{
    for (int i = 0; i < n; i++) {
        if (ir_run_pass(ir, ids[i], NULL, NULL, &D) != GLOW_OK) {
            fprintf(stderr, "%s\n", D.msg);
            CHECK(false);
        }
    }
}

#define PASSES(ir, ...) \
    passes(ir, (const ir_pass_id[]){ __VA_ARGS__ }, \
           (int)(sizeof((const ir_pass_id[]){ __VA_ARGS__ }) / sizeof(ir_pass_id)))

static inline void golden(ir_function *ir, const char *want)
{
    char *got = ir_text(ir);
    CHECK_STR_EQ(got, want);
    free(got);
}

/* Deterministic input values in [-1, 1). */
static inline void fill_random(glow_tensor *t)
{
    for (int64_t i = 0; i < glow_type_numel(&t->type); i++) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        ((float *)t->data)[i] = (float)((double)(rng >> 11) / 4503599627370496.0 - 1.0);
    }
}

/* Plans (best fit, checked), runs ir on the interpreter with every input placeholder filled
 * from the seed, and returns a copy of all output placeholders' bytes concatenated. */
static inline uint8_t *run_ir(ir_function *ir, uint64_t seed, size_t *nbytes)
{
    if (ir_plan_memory_best_fit(ir, &D) != GLOW_OK) {
        fprintf(stderr, "plan: %s\n", D.msg);
        CHECK(false);
        return NULL;
    }
    uint8_t *cr = calloc(1, ir->constant_bytes + 64), *mr = calloc(1, ir->mutable_bytes + 64);
    uint8_t *ar = calloc(1, ir->activation_bytes + 64);
    rng = seed;
    size_t total = 0;
    for (ir_value *v = ir->values; v; v = v->next) {
        if (v->kind != IV_WEIGHT)
            continue;
        if (!v->is_mutable)
            memcpy(cr + v->addr, v->storage->payload.data, glow_type_bytes(&v->type));
        else if (v->storage->is_input) {
            glow_tensor t = glow_tensor_borrow(&v->type, mr + v->addr);
            fill_random(&t);
        } else {
            total += glow_type_bytes(&v->type);
        }
    }
    void *state = NULL;
    CHECK(glow_interpreter_backend.compile(ir, &(glow_codegen_options){ .threads = 1 }, &state,
                                          &D) == GLOW_OK);
    glow_status s = glow_interpreter_backend.execute(state, NULL, cr, mr, ar, &D);
    if (s != GLOW_OK)
        fprintf(stderr, "run: %s\n", D.msg);
    CHECK(s == GLOW_OK);
    glow_interpreter_backend.destroy(state);
    uint8_t *out = malloc(total + 1), *w = out;
    for (ir_value *v = ir->values; v; v = v->next) {
        if (v->kind == IV_WEIGHT && v->is_mutable && !v->storage->is_input) {
            memcpy(w, mr + v->addr, glow_type_bytes(&v->type));
            w += glow_type_bytes(&v->type);
        }
    }
    *nbytes = total;
    free(cr);
    free(mr);
    free(ar);
    return out;
}

/* The default IR pipeline leaves F's results bit for bit as they were. */
static inline void check_same_results(void)
{
    ir_function *a = gen(), *b = gen();
    CHECK(ir_optimize(b, NULL, &D) == GLOW_OK);
    size_t na = 0, nb = 0;
    uint8_t *ra = run_ir(a, 42, &na), *rb = run_ir(b, 42, &nb);
    CHECK_EQ(na, nb);
    CHECK(ra && rb && na == nb && memcmp(ra, rb, na) == 0);
    free(ra);
    free(rb);
    ir_function_destroy(a);
    ir_function_destroy(b);
}

#endif
