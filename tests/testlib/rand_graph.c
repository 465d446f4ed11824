// rand_graph.c - Test support: the seeded random numbers, shapes and values of rand_graph.h,
// and the graph a differential case builds with them.
#include "testlib/rand_graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
