// onnx_build.c - Test support: the in-memory ONNX model builder of onnx_build.h. Every block
// is tracked by the model so that a test builds with plain calls and frees once.
#include "testlib/onnx_build.h"

#include <stdio.h>

#include "onnx/onnx.h"
#include "support/support.h"

void *mk_track(mk_model *mk, void *p)
{
    if (mk->nallocs == mk->cap) {
        mk->cap = mk->cap ? 2 * mk->cap : 64;
        mk->allocs = realloc(mk->allocs, mk->cap * sizeof(void *));
    }
    mk->allocs[mk->nallocs++] = p;
    return p;
}

void *mk_alloc(mk_model *mk, size_t size)
{
    return mk_track(mk, calloc(1, size ? size : 1));
}

char *mk_str(mk_model *mk, const char *s)
{
    char *c = mk_alloc(mk, strlen(s) + 1);
    strcpy(c, s);
    return c;
}

void *mk_dup(mk_model *mk, const void *p, size_t size)
{
    void *c = mk_alloc(mk, size);
    if (size)
        memcpy(c, p, size);
    return c;
}

/* Appends p to a pointer array owned by the model. The capacity is implied by the length: an
 * array mk_push built has room for the next power of two >= max(n, 4), so a new block (the old
 * one stays tracked until mk_free) is taken only when n reaches a power of two and the copies
 * add up to less than 2n, where one block per push made a 100,000-node graph quadratic (about
 * 40 GB). An array shortened in place (onnx_edit) keeps its larger block, so this stays safe. */
void mk_push(mk_model *mk, void ***arr, size_t *n, void *p)
{
    size_t len = *n;
    if (len == 0 || (len >= 4 && (len & (len - 1)) == 0)) {
        void **grown = mk_alloc(mk, (len ? 2 * len : 4) * sizeof(void *));
        if (len)
            memcpy(grown, *arr, len * sizeof(void *));
        *arr = grown;
    }
    (*arr)[(*n)++] = p;
}

mk_model *mk_new(int opset)
{
    mk_model *mk = calloc(1, sizeof(mk_model));
    onnx__model_proto__init(&mk->model);
    onnx__graph_proto__init(&mk->graph);
    mk->model.has_ir_version = 1;
    mk->model.ir_version = 8;
    mk->model.producer_name = mk_str(mk, "mkmodel");
    mk->model.graph = &mk->graph;
    mk->graph.name = mk_str(mk, "test");
    if (opset > 0) {
        Onnx__OperatorSetIdProto *o = mk_alloc(mk, sizeof(*o));
        onnx__operator_set_id_proto__init(o);
        o->domain = mk_str(mk, "");
        o->has_version = 1;
        o->version = opset;
        mk_push(mk, (void ***)&mk->model.opset_import, &mk->model.n_opset_import, o);
    }
    return mk;
}

void mk_opset(mk_model *mk, const char *domain, int version)
{
    Onnx__OperatorSetIdProto *o = mk_alloc(mk, sizeof(*o));
    onnx__operator_set_id_proto__init(o);
    o->domain = mk_str(mk, domain);
    o->has_version = 1;
    o->version = version;
    mk_push(mk, (void ***)&mk->model.opset_import, &mk->model.n_opset_import, o);
}

/* A tensor ValueInfoProto; syms (may be NULL) gives dim_param names where non-NULL. */
Onnx__ValueInfoProto *mk_value_info(mk_model *mk, const char *name, int elem,
                                    int rank, const int64_t *dims,
                                    const char *const *syms)
{
    Onnx__ValueInfoProto *vi = mk_alloc(mk, sizeof(*vi));
    onnx__value_info_proto__init(vi);
    vi->name = mk_str(mk, name);
    Onnx__TypeProto *tp = mk_alloc(mk, sizeof(*tp));
    onnx__type_proto__init(tp);
    Onnx__TypeProto__Tensor *tt = mk_alloc(mk, sizeof(*tt));
    onnx__type_proto__tensor__init(tt);
    tt->has_elem_type = 1;
    tt->elem_type = elem;
    if (rank >= 0) {
        Onnx__TensorShapeProto *sh = mk_alloc(mk, sizeof(*sh));
        onnx__tensor_shape_proto__init(sh);
        for (int i = 0; i < rank; i++) {
            Onnx__TensorShapeProto__Dimension *d = mk_alloc(mk, sizeof(*d));
            onnx__tensor_shape_proto__dimension__init(d);
            if (syms && syms[i]) {
                d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
                d->dim_param = mk_str(mk, syms[i]);
            } else {
                d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
                d->dim_value = dims[i];
            }
            mk_push(mk, (void ***)&sh->dim, &sh->n_dim, d);
        }
        tt->shape = sh;
    }
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    vi->type = tp;
    return vi;
}

Onnx__ValueInfoProto *mk_input_sym(mk_model *mk, const char *name, int elem, int rank,
                                   const int64_t *dims, const char *const *syms)
{
    Onnx__ValueInfoProto *vi = mk_value_info(mk, name, elem, rank, dims, syms);
    mk_push(mk, (void ***)&mk->graph.input, &mk->graph.n_input, vi);
    return vi;
}

Onnx__ValueInfoProto *mk_input(mk_model *mk, const char *name, int elem, int rank,
                               const int64_t *dims)
{
    return mk_input_sym(mk, name, elem, rank, dims, NULL);
}

Onnx__ValueInfoProto *mk_output_sym(mk_model *mk, const char *name, int elem, int rank,
                                    const int64_t *dims, const char *const *syms)
{
    Onnx__ValueInfoProto *vi = mk_value_info(mk, name, elem, rank, dims, syms);
    mk_push(mk, (void ***)&mk->graph.output, &mk->graph.n_output, vi);
    return vi;
}

Onnx__ValueInfoProto *mk_output(mk_model *mk, const char *name, int elem, int rank,
                                const int64_t *dims)
{
    return mk_output_sym(mk, name, elem, rank, dims, NULL);
}

/* A TensorProto with raw_data (little-endian bytes), not yet attached to anything. */
Onnx__TensorProto *mk_tensor_raw(mk_model *mk, const char *name, int elem, int rank,
                                 const int64_t *dims, const void *data, size_t bytes)
{
    Onnx__TensorProto *t = mk_alloc(mk, sizeof(*t));
    onnx__tensor_proto__init(t);
    t->name = mk_str(mk, name);
    t->has_data_type = 1;
    t->data_type = elem;
    t->n_dims = (size_t)rank;
    t->dims = mk_dup(mk, dims, sizeof(int64_t) * (size_t)rank);
    t->has_raw_data = 1;
    t->raw_data.len = bytes;
    t->raw_data.data = mk_dup(mk, data, bytes);
    return t;
}

/* A TensorProto without data: fill a typed field (float_data, int32_data, ...) afterwards. */
Onnx__TensorProto *mk_tensor_typed(mk_model *mk, const char *name, int elem, int rank,
                                   const int64_t *dims)
{
    Onnx__TensorProto *t = mk_tensor_raw(mk, name, elem, rank, dims, NULL, 0);
    t->has_raw_data = 0;
    t->raw_data.len = 0;
    return t;
}

Onnx__TensorProto *mk_initializer(mk_model *mk, Onnx__TensorProto *t)
{
    mk_push(mk, (void ***)&mk->graph.initializer, &mk->graph.n_initializer, t);
    return t;
}

Onnx__NodeProto *mk_node_domain(mk_model *mk, const char *domain, const char *op,
                                const char *name, int nin, const char *const *ins,
                                int nout, const char *const *outs)
{
    Onnx__NodeProto *n = mk_alloc(mk, sizeof(*n));
    onnx__node_proto__init(n);
    n->op_type = mk_str(mk, op);
    if (name)
        n->name = mk_str(mk, name);
    if (domain)
        n->domain = mk_str(mk, domain);
    for (int i = 0; i < nin; i++)
        mk_push(mk, (void ***)&n->input, &n->n_input, mk_str(mk, ins[i]));
    for (int i = 0; i < nout; i++)
        mk_push(mk, (void ***)&n->output, &n->n_output, mk_str(mk, outs[i]));
    mk_push(mk, (void ***)&mk->graph.node, &mk->graph.n_node, n);
    return n;
}

Onnx__NodeProto *mk_node(mk_model *mk, const char *op, const char *name, int nin,
                         const char *const *ins, int nout, const char *const *outs)
{
    return mk_node_domain(mk, NULL, op, name, nin, ins, nout, outs);
}

Onnx__AttributeProto *mk_attr(mk_model *mk, Onnx__NodeProto *n, const char *name,
                              int type)
{
    Onnx__AttributeProto *a = mk_alloc(mk, sizeof(*a));
    onnx__attribute_proto__init(a);
    a->name = mk_str(mk, name);
    a->has_type = 1;
    a->type = type;
    mk_push(mk, (void ***)&n->attribute, &n->n_attribute, a);
    return a;
}

void mk_attr_int(mk_model *mk, Onnx__NodeProto *n, const char *name, int64_t v)
{
    Onnx__AttributeProto *a = mk_attr(mk, n, name, MK_AT_INT);
    a->has_i = 1;
    a->i = v;
}

void mk_attr_float(mk_model *mk, Onnx__NodeProto *n, const char *name, float v)
{
    Onnx__AttributeProto *a = mk_attr(mk, n, name, MK_AT_FLOAT);
    a->has_f = 1;
    a->f = v;
}

void mk_attr_ints(mk_model *mk, Onnx__NodeProto *n, const char *name,
                  const int64_t *v, int count)
{
    Onnx__AttributeProto *a = mk_attr(mk, n, name, MK_AT_INTS);
    a->n_ints = (size_t)count;
    a->ints = mk_dup(mk, v, sizeof(int64_t) * (size_t)count);
}

void mk_attr_floats(mk_model *mk, Onnx__NodeProto *n, const char *name,
                    const float *v, int count)
{
    Onnx__AttributeProto *a = mk_attr(mk, n, name, MK_AT_FLOATS);
    a->n_floats = (size_t)count;
    a->floats = mk_dup(mk, v, sizeof(float) * (size_t)count);
}

void mk_attr_str(mk_model *mk, Onnx__NodeProto *n, const char *name, const char *s)
{
    Onnx__AttributeProto *a = mk_attr(mk, n, name, MK_AT_STRING);
    a->has_s = 1;
    a->s.len = strlen(s);
    a->s.data = (uint8_t *)mk_str(mk, s);
}

void mk_attr_tensor(mk_model *mk, Onnx__NodeProto *n, const char *name,
                    Onnx__TensorProto *t)
{
    Onnx__AttributeProto *a = mk_attr(mk, n, name, MK_AT_TENSOR);
    a->t = t;
}

/* Serializes the model into a malloc'd buffer. */
uint8_t *mk_pack(mk_model *mk, size_t *size)
{
    size_t n = onnx__model_proto__get_packed_size(&mk->model);
    uint8_t *buf = malloc(n ? n : 1);
    *size = onnx__model_proto__pack(&mk->model, buf);
    return buf;
}

glow_module *mk_load(mk_model *mk, glow_diag *d)
{
    size_t size;
    uint8_t *bytes = mk_pack(mk, &size);
    glow_module *m = glow_module_create();
    if (glow_onnx_load_bytes(m, bytes, size, NULL, d) != GLOW_OK) {
        glow_module_destroy(m);
        m = NULL;
    }
    free(bytes);
    return m;
}

void mk_free(mk_model *mk)
{
    for (size_t i = 0; i < mk->nallocs; i++)
        free(mk->allocs[i]);
    free(mk->allocs);
    free(mk);
}

bool mk_write(mk_model *mk, const char *path)
{
    size_t size = 0;
    uint8_t *buf = mk_pack(mk, &size);
    glow_diag d = { 0 };
    bool ok = glow_write_file(path, buf, size, &d) == GLOW_OK;
    if (!ok)
        fprintf(stderr, "%s: %s\n", path, d.msg);
    free(buf);
    return ok;
}

bool mk_write_symbolic_relu(const char *path)
{
    static const int64_t dims[] = { 0, 3 };
    static const char *const syms[] = { "N", NULL };
    mk_model *mk = mk_new(13);
    mk->graph.name = mk_str(mk, "sym");
    mk_input_sym(mk, "x", MK_F32, 2, dims, syms);
    mk_node(mk, "Relu", "relu0", 1, (const char *[]){ "x" }, 1, (const char *[]){ "y" });
    mk_output_sym(mk, "y", MK_F32, 2, dims, syms);
    bool ok = mk_write(mk, path);
    mk_free(mk);
    return ok;
}
