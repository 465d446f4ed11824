// rand_graph.c - Test support: the seeded random numbers, shapes and values of rand_graph.h,
// and the graph a differential case builds with them.
#include "testlib/rand_graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"

uint64_t rng_state;
glow_module *M;
glow_function *F;
glow_diag D;
glow_tensor inputs[MAX_IN];
int ninputs;

uint32_t rng_next(uint64_t *state)
{
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(*state >> 33);
}

uint32_t rnd(void)
{
    return rng_next(&rng_state);
}

int64_t rint_in(int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rnd() % (uint32_t)(hi - lo + 1));
}

float rfloat(void)
{
    return (float)((int)(rnd() % 2001) - 1000) / 500.0f;
}

void *rand_typed(glow_dtype t, int64_t n)
{
    void *p = calloc((size_t)(n > 0 ? n : 1), glow_dtype_size(t));
    for (int64_t i = 0; i < n; i++) {
        switch (glow_dtype_class_of(t)) {
        case DC_FLOAT: glow_store_f64(t, p, (size_t)i, rfloat()); break;
        case DC_SINT: glow_store_i64(t, p, (size_t)i, rint_in(-50, 50)); break;
        case DC_UINT: glow_store_i64(t, p, (size_t)i, rint_in(0, 100)); break;
        case DC_BOOL: glow_store_i64(t, p, (size_t)i, rnd() % 2); break;
        default: break;
        }
    }
    return p;
}

float *rand_data(int64_t n)
{
    return rand_typed(GLOW_F32, n);
}

int rand_shape(int max, int64_t hi, int64_t *dims)
{
    int r = (int)rint_in(1, max);
    for (int i = 0; i < r; i++)
        dims[i] = rnd() % 3 == 0 ? 1 : rint_in(1, hi);
    return r;
}

void rand_extents(int r, int64_t hi, int64_t *dims)
{
    for (int i = 0; i < r; i++)
        dims[i] = rint_in(1, hi);
}

glow_value input_t(const char *name, glow_dtype t, int rank, const int64_t *dims)
{
    glow_type ty = glow_type_make(t, rank, dims);
    if (ninputs < MAX_IN) {
        glow_tensor_alloc(&inputs[ninputs], &ty, &D);
        void *data = rand_typed(t, glow_type_numel(&ty));
        memcpy(inputs[ninputs].data, data, glow_type_bytes(&ty));
        free(data);
        ninputs++;
    }
    return glow_val(glow_placeholder_create(M, name, &ty, true), 0);
}

glow_value input(const char *name, int rank, const int64_t *dims)
{
    return input_t(name, GLOW_F32, rank, dims);
}

glow_value cst_t(glow_dtype t, int rank, const int64_t *dims)
{
    static int count;
    char name[32];
    snprintf(name, sizeof name, "w%d", count++);
    glow_type ty = glow_type_make(t, rank, dims);
    void *data = rand_typed(t, glow_type_numel(&ty));
    glow_value v = glow_val(glow_constant_create(M, name, &ty, data), 0);
    free(data);
    return v;
}

glow_value cst(int rank, const int64_t *dims)
{
    return cst_t(GLOW_F32, rank, dims);
}

glow_value node_n(glow_node_kind k, const glow_value *ins, int nin, const glow_attr *attrs,
                  int nattr, int nout)
{
    glow_node *n = glow_build(F, k, glow_node_kind_name(k), ins, nin, attrs, nattr, NULL, nout,
                              &D);
    if (!n) {
        fprintf(stderr, "build %s: %s\n", glow_node_kind_name(k), D.msg);
        exit(1);
    }
    return glow_val(n, 0);
}

glow_value node(glow_node_kind k, const glow_value *ins, int nin, const glow_attr *attrs,
                int nattr)
{
    return node_n(k, ins, nin, attrs, nattr, k == NK_MAX_POOL ? 1 : 0);
}

void output(glow_value v)
{
    glow_node *ph = glow_placeholder_create(M, "y", glow_value_type(v), false);
    glow_save_create(F, "y", v, ph);
}

void free_inputs(void)
{
    for (int i = 0; i < ninputs; i++)
        glow_tensor_free(&inputs[i]);
    ninputs = 0;
}

void build(case_fn fn, uint64_t seed)
{
    free_inputs();
    rng_state = seed;
    M = glow_module_create();
    F = glow_function_create(M, "main");
    fn();
}

glow_value relu6(glow_value x)
{
    glow_attr ca[] = { GLOW_AF(MIN, 0.0), GLOW_AF(MAX, 6.0) };
    return node(NK_CLIP, &x, 1, ca, 2);
}

glow_value conv_g(glow_value x, int64_t m, int64_t k, int64_t s, int64_t g, char act)
{
    int64_t c = glow_value_type(x)->dims[1], pd = k / 2;
    int64_t kk[2] = { k, k }, ss[2] = { s, s }, dl[2] = { 1, 1 }, p[4] = { pd, pd, pd, pd };
    glow_attr a[] = { GLOW_AINTS(KERNEL, kk, 2), GLOW_AINTS(STRIDES, ss, 2),
                      GLOW_AINTS(PADS, p, 4), GLOW_AINTS(DILATIONS, dl, 2), GLOW_AI(GROUP, g) };
    glow_value ins[3] = { x, cst(4, DIMS(m, c / g, k, k)), cst(1, DIMS(m)) };
    glow_value y = node(NK_CONV, ins, 3, a, 5);
    return act == 'r' ? node(NK_RELU, &y, 1, NULL, 0) : act == 'c' ? relu6(y) : y;
}

glow_program *build_and_run(case_fn fn, uint64_t seed, const char *backend, int threads,
                            bool plain_layout)
{
    build(fn, seed);
    glow_program *p = NULL;
    glow_compile_options o = { .backend = backend, .threads = threads,
                               .stop_after = GLOW_STAGE_COMPILED,
                               .plain_layout = plain_layout };
    glow_diag_clear(&D);
    if (glow_program_create(M, &o, &p, &D) != GLOW_OK ||
        glow_program_run(p, inputs, ninputs, &D) != GLOW_OK) {
        fprintf(stderr, "%s: %s\n", backend, D.msg);
        glow_program_destroy(p);
        return NULL;
    }
    return p;
}

float *output_copy(const glow_program *p, int64_t *n)
{
    glow_tensor t = glow_program_output(p, 0);
    *n = glow_type_numel(&t.type);
    float *out = malloc(sizeof(float) * (size_t)(*n > 0 ? *n : 1));
    if (out && *n > 0)
        memcpy(out, t.data, sizeof(float) * (size_t)*n);
    return out;
}

float *run_counted(case_fn fn, uint64_t seed, const char *backend, int threads,
                   bool plain_layout, int64_t *n, prog_counts *pc)
{
    memset(pc, 0, sizeof *pc);
    glow_program *p = build_and_run(fn, seed, backend, threads, plain_layout);
    if (!p)
        return NULL;
    for (const ir_instr *in = p->ir->first; in; in = in->next)
        pc->kind[in->kind]++;
    pc->act_bytes = p->ir->activation_bytes;
    float *out = output_copy(p, n);
    glow_program_destroy(p);
    return out;
}
