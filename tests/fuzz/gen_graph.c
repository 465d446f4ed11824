// gen_graph.c - The generator's graph (gen.h): values with shapes and data, nodes, the main
// loop that adds random ops until the model has its size, and emitting the graph as an ONNX
// model (tests/testlib/onnx_build.c) with its input tensors.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/gen.h"
#include "onnx/onnx.h"
#include "testlib/onnx_build.h"
#include "testlib/rand_graph.h"

/* The opset every model imports: LayerNormalization needs 17; ReduceSum takes its axes as an
 * input there, the other reductions still as an attribute. */
#define GEN_OPSET 17

uint32_t gen_rand(gen_graph *g)
{
    return rng_next(&g->rng);
}

int64_t gen_int(gen_graph *g, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(gen_rand(g) % (uint32_t)(hi - lo + 1));
}

bool gen_chance(gen_graph *g, int percent)
{
    return (int)(gen_rand(g) % 100) < percent;
}

int64_t gen_dims_numel(int rank, const int64_t *dims)
{
    int64_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= dims[i];
    return n;
}

int64_t gen_numel(const gen_val *v) { return gen_dims_numel(v->rank, v->dims); }

bool gen_fits(int rank, const int64_t *dims)
{
    int64_t n = gen_dims_numel(rank, dims);
    return n > 0 && n <= GEN_MAX_NUMEL;
}

void gen_fill(gen_graph *g, float *p, int64_t n, float scale)
{
    for (int64_t i = 0; i < n; i++) {
        uint32_t r = gen_rand(g) % 1000;
        float u = (float)((int)(gen_rand(g) % 20001) - 10000) / 10000.0f;
        if (r < 6)
            p[i] = r % 2 ? -0.0f : 0.0f;
        else if (r < 9) /* subnormal: exercises flush-to-zero differences */
            p[i] = u * 1e-39f;
        else if (r < 11) /* large magnitude */
            p[i] = u * 3e4f;
        else if (g->specials && r < 14)
            p[i] = r == 11 ? NAN : r == 12 ? INFINITY : -INFINITY;
        else
            p[i] = u * scale;
    }
}

int gen_value(gen_graph *g, gen_val_kind kind, int elem, int rank, const int64_t *dims,
              float scale)
{
    if (g->nvals >= GEN_MAX_VALS)
        return -1;
    int id = g->nvals++;
    gen_val *v = &g->vals[id];
    memset(v, 0, sizeof *v);
    v->kind = kind;
    v->elem = elem;
    v->rank = rank;
    if (rank)
        memcpy(v->dims, dims, sizeof(int64_t) * (size_t)rank);
    if (kind != GV_NODE) {
        int64_t n = gen_numel(v);
        v->data = calloc((size_t)(n > 0 ? n : 1), 8);
        /* NaN and Inf only in graph inputs: in weights they only find the documented
         * padding difference (regressions/conv_same_lower_nan_weight) again and again */
        bool specials = g->specials;
        g->specials = specials && kind == GV_INPUT;
        if (elem == MK_F32)
            gen_fill(g, v->data, n, scale);
        g->specials = specials;
    }
    return id;
}

int gen_i64s(gen_graph *g, int n, const int64_t *vals)
{
    int id = gen_value(g, GV_CONST, MK_I64, 1, (int64_t[]){ n }, 0);
    if (id >= 0)
        memcpy(g->vals[id].data, vals, sizeof(int64_t) * (size_t)n);
    return id;
}

int gen_scalar(gen_graph *g, float x)
{
    int id = gen_value(g, GV_CONST, MK_F32, 0, NULL, 0);
    if (id >= 0)
        *(float *)g->vals[id].data = x;
    return id;
}

int gen_node_add(gen_graph *g, const char *op, const int *ins, int nin, int rank,
                 const int64_t *dims)
{
    for (int i = 0; i < nin; i++)
        if (ins[i] >= 0 && ins[i] >= g->nvals)
            return -1;
    if (g->nnodes >= GEN_MAX_NODES || nin > GEN_MAX_NIN)
        return -1;
    int out = gen_value(g, GV_NODE, MK_F32, rank, dims, 0);
    if (out < 0)
        return -1;
    int depth = 0;
    for (int i = 0; i < nin; i++)
        if (ins[i] >= 0 && g->vals[ins[i]].depth > depth)
            depth = g->vals[ins[i]].depth;
    g->vals[out].depth = depth + 1;
    gen_node *n = &g->nodes[g->nnodes];
    memset(n, 0, sizeof *n);
    n->op = op;
    if (nin)
        memcpy(n->in, ins, sizeof(int) * (size_t)nin);
    n->nin = nin;
    n->out = out;
    return g->nnodes++;
}

static gen_attr *attr(gen_graph *g, int node, const char *name, int type)
{
    gen_node *n = &g->nodes[node];
    gen_attr *a = &n->attrs[n->nattr++];
    memset(a, 0, sizeof *a);
    a->name = name;
    a->type = type;
    return a;
}

void gen_attr_int(gen_graph *g, int node, const char *name, int64_t v)
{
    attr(g, node, name, MK_AT_INT)->i[0] = v;
}

void gen_attr_ints(gen_graph *g, int node, const char *name, const int64_t *v, int n)
{
    gen_attr *a = attr(g, node, name, MK_AT_INTS);
    a->n = n;
    memcpy(a->i, v, sizeof(int64_t) * (size_t)n);
}

void gen_attr_float(gen_graph *g, int node, const char *name, float v)
{
    attr(g, node, name, MK_AT_FLOAT)->f = v;
}

void gen_attr_str(gen_graph *g, int node, const char *name, const char *s)
{
    attr(g, node, name, MK_AT_STRING)->s = s;
}

/* How many live nodes read value v. */
static int uses(const gen_graph *g, int v)
{
    int k = 0;
    for (int i = 0; i < g->nnodes; i++)
        for (int j = 0; j < g->nodes[i].nin && !g->nodes[i].dead; j++)
            k += g->nodes[i].in[j] == v;
    return k;
}

int gen_pick(gen_graph *g, int min_rank, int max_rank)
{
    int cand[GEN_MAX_VALS], nc = 0, fresh = -1;
    for (int v = 0; v < g->nvals; v++) {
        const gen_val *x = &g->vals[v];
        if (x->elem != MK_F32 || x->kind == GV_CONST || x->rank < min_rank ||
            x->rank > max_rank || gen_numel(x) == 0)
            continue;
        cand[nc++] = v;
        if (!uses(g, v))
            fresh = v; /* the newest value nothing reads yet */
    }
    if (!nc)
        return -1;
    if (fresh >= 0 && gen_chance(g, 70))
        return fresh;
    if (gen_chance(g, 50)) /* one of the newest: long chains */
        return cand[nc - 1 - (int)gen_int(g, 0, nc > 3 ? 2 : nc - 1)];
    return cand[gen_int(g, 0, nc - 1)];
}

void gen_refresh_outputs(gen_graph *g)
{
    g->nouts = 0;
    int sinks[GEN_MAX_NODES], ns = 0;
    for (int i = 0; i < g->nnodes; i++)
        if (!g->nodes[i].dead && !uses(g, g->nodes[i].out))
            sinks[ns++] = g->nodes[i].out;
    for (int i = ns > GEN_MAX_OUTS ? ns - GEN_MAX_OUTS : 0; i < ns; i++)
        g->outs[g->nouts++] = sinks[i];
}

/* A first graph input: an image batch (most ops want NCHW), or a matrix or sequence. */
static void first_input(gen_graph *g)
{
    static const int64_t channels[] = { 1, 2, 3, 4, 8, 15, 16, 17, 33 };
    int64_t d[4];
    int r;
    if (gen_chance(g, 65)) {
        r = 4;
        d[0] = gen_chance(g, 75) ? 1 : 2;
        d[1] = channels[gen_int(g, 0, 8)];
        d[2] = gen_int(g, 1, 17);
        d[3] = gen_chance(g, 20) ? 1 : gen_int(g, 1, 19);
    } else {
        r = (int)gen_int(g, 2, 3);
        for (int i = 0; i < r; i++)
            d[i] = gen_chance(g, 15) ? 1 : gen_int(g, 1, 40);
    }
    gen_value(g, GV_INPUT, MK_F32, r, d, 1.0f);
}

gen_graph *gen_generate(uint64_t seed, const gen_options *opts)
{
    gen_options o = { 10, 60, 10 };
    if (opts)
        o = *opts;
    gen_graph *g = calloc(1, sizeof *g);
    g->seed = seed;
    /* splitmix64's finalizer: neighbouring seeds start far apart (the LCG alone would give
     * seeds 20..24 the same first draws) */
    uint64_t z = seed + 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    g->rng = z ^ (z >> 31);
    g->specials = gen_chance(g, o.special_percent);
    int target = (int)gen_int(g, o.min_nodes, o.max_nodes);
    first_input(g);
    if (gen_chance(g, 25))
        first_input(g);
    for (int tries = 0; g->nnodes < target && tries < target * 40; tries++) {
        /* Families are drawn with the nn ones less often: they are few and heavy. */
        bool nn = gen_chance(g, 35);
        gen_op_fn fn = nn ? gen_nn_ops[gen_int(g, 0, gen_num_nn_ops - 1)]
                          : gen_tensor_ops[gen_int(g, 0, gen_num_tensor_ops - 1)];
        fn(g);
    }
    gen_refresh_outputs(g);
    return g;
}

gen_graph *gen_clone(const gen_graph *g)
{
    gen_graph *c = malloc(sizeof *c);
    memcpy(c, g, sizeof *c);
    for (int v = 0; v < g->nvals; v++) {
        if (!g->vals[v].data)
            continue;
        size_t n = (size_t)(gen_numel(&g->vals[v]) > 0 ? gen_numel(&g->vals[v]) : 1) * 8;
        c->vals[v].data = malloc(n);
        memcpy(c->vals[v].data, g->vals[v].data, n);
    }
    return c;
}

void gen_free(gen_graph *g)
{
    if (!g)
        return;
    for (int v = 0; v < g->nvals; v++)
        free(g->vals[v].data);
    free(g);
}

int gen_live_nodes(const gen_graph *g)
{
    int k = 0;
    for (int i = 0; i < g->nnodes; i++)
        k += !g->nodes[i].dead;
    return k;
}

int gen_depth(const gen_graph *g)
{
    int d = 0;
    for (int i = 0; i < g->nouts; i++)
        d = g->vals[g->outs[i]].depth > d ? g->vals[g->outs[i]].depth : d;
    return d;
}

/* Whether value v is read by a live node. */
static bool live_value(const gen_graph *g, int v)
{
    return uses(g, v) > 0;
}

int gen_num_inputs(const gen_graph *g)
{
    int k = 0;
    for (int v = 0; v < g->nvals; v++)
        k += g->vals[v].kind == GV_INPUT && live_value(g, v);
    return k;
}

static void value_name(const gen_graph *g, int v, char *buf, size_t n)
{
    const char *p = g->vals[v].kind == GV_INPUT ? "in" : g->vals[v].kind == GV_CONST ? "c" : "v";
    snprintf(buf, n, "%s%d", p, v);
}

static bool write_input(const gen_graph *g, int v, const char *path, const char *name)
{
    const gen_val *x = &g->vals[v];
    glow_type ty = glow_type_make(GLOW_F32, x->rank, x->dims);
    glow_tensor t;
    glow_diag d = { 0 };
    if (glow_tensor_alloc(&t, &ty, &d) != GLOW_OK) {
        fprintf(stderr, "%s\n", d.msg);
        return false;
    }
    memcpy(t.data, x->data, glow_type_bytes(&ty));
    bool ok = glow_tensor_write_pb(path, &t, name, &d) == GLOW_OK;
    if (!ok)
        fprintf(stderr, "%s: %s\n", path, d.msg);
    glow_tensor_free(&t);
    return ok;
}

bool gen_write(const gen_graph *g, const char *dir)
{
    mk_model *mk = mk_new(GEN_OPSET);
    char name[32], path[4200];
    bool ok = true;
    int nin = 0;
    for (int v = 0; v < g->nvals && ok; v++) {
        const gen_val *x = &g->vals[v];
        if (x->kind == GV_NODE || !live_value(g, v))
            continue;
        value_name(g, v, name, sizeof name);
        if (x->kind == GV_INPUT) {
            mk_input(mk, name, x->elem, x->rank, x->dims);
            snprintf(path, sizeof path, "%s/input_%d.pb", dir, nin++);
            ok = write_input(g, v, path, name);
        } else {
            size_t bytes = (size_t)gen_numel(x) * (x->elem == MK_F32 ? 4 : 8);
            mk_initializer(mk, mk_tensor_raw(mk, name, x->elem, x->rank, x->dims, x->data,
                                             bytes));
        }
    }
    for (int i = 0; i < g->nnodes && ok; i++) {
        const gen_node *n = &g->nodes[i];
        if (n->dead)
            continue;
        char ins[GEN_MAX_NIN][32], out[32], nn[32];
        const char *inp[GEN_MAX_NIN];
        for (int j = 0; j < n->nin; j++) {
            ins[j][0] = 0;
            if (n->in[j] >= 0)
                value_name(g, n->in[j], ins[j], sizeof ins[j]);
            inp[j] = ins[j];
        }
        value_name(g, n->out, out, sizeof out);
        snprintf(nn, sizeof nn, "n%d", i);
        Onnx__NodeProto *np = mk_node(mk, n->op, nn, n->nin, inp, 1, (const char *[]){ out });
        for (int k = 0; k < n->nattr; k++) {
            const gen_attr *a = &n->attrs[k];
            switch (a->type) {
            case MK_AT_INT: mk_attr_int(mk, np, a->name, a->i[0]); break;
            case MK_AT_INTS: mk_attr_ints(mk, np, a->name, a->i, a->n); break;
            case MK_AT_FLOAT: mk_attr_float(mk, np, a->name, a->f); break;
            default: mk_attr_str(mk, np, a->name, a->s); break;
            }
        }
    }
    for (int i = 0; i < g->nouts; i++) {
        const gen_val *x = &g->vals[g->outs[i]];
        value_name(g, g->outs[i], name, sizeof name);
        mk_output(mk, name, MK_F32, x->rank, x->dims);
    }
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    ok = ok && mk_write(mk, path);
    mk_free(mk);
    return ok;
}

void gen_print(const gen_graph *g, FILE *f)
{
    for (int i = 0; i < g->nnodes; i++) {
        const gen_node *n = &g->nodes[i];
        if (n->dead)
            continue;
        char name[32];
        value_name(g, n->out, name, sizeof name);
        fprintf(f, "  %s = %s(", name, n->op);
        for (int j = 0; j < n->nin; j++) {
            value_name(g, n->in[j] >= 0 ? n->in[j] : 0, name, sizeof name);
            fprintf(f, "%s%s", j ? ", " : "", n->in[j] >= 0 ? name : "");
        }
        fprintf(f, ") ->");
        const gen_val *x = &g->vals[n->out];
        for (int k = 0; k < x->rank; k++)
            fprintf(f, "%s%lld", k ? "x" : " [", (long long)x->dims[k]);
        fprintf(f, "%s", x->rank ? "]" : " []");
        for (int k = 0; k < n->nattr; k++) {
            const gen_attr *a = &n->attrs[k];
            fprintf(f, " %s=", a->name);
            if (a->type == MK_AT_INT)
                fprintf(f, "%lld", (long long)a->i[0]);
            else if (a->type == MK_AT_FLOAT)
                fprintf(f, "%g", a->f);
            else if (a->type == MK_AT_STRING)
                fprintf(f, "%s", a->s);
            else
                for (int m = 0; m < a->n; m++)
                    fprintf(f, "%s%lld", m ? "," : "[", (long long)a->i[m]);
            if (a->type == MK_AT_INTS)
                fprintf(f, "]");
        }
        fprintf(f, "\n");
    }
}
