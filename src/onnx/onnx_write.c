// onnx_write.c - Writes a graph function as an ONNX model (ir_version 8, opset 13): graph inputs
// and outputs from the placeholders, initializers from the Constants, and quantized values in
// the standard QDQ form that ONNX Runtime's quantizer writes.
//
// A quantized value (u8q/i8q with scale s and offset z) is an ONNX uint8/int8 tensor holding
// the same integers. A quantized computation is written as DequantizeLinear of its quantized
// operands, the float ONNX op, and QuantizeLinear to its result's scale and zero point; an
// ONNX runtime recognises the pattern and runs its integer kernels. Nodes are built in memory
// first and the file is written only when every node was mapped, so an unsupported node leaves
// nothing behind. onnx_write_ops.c maps the node kinds; this file keeps names, initializers and
// the Q/DQ helpers, and packs the model.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx_write_internal.h"

/* ONNX TensorProto.DataType codes used below. */
enum { OT_FLOAT = 1, OT_UINT8 = 2, OT_INT8 = 3, OT_INT16 = 5, OT_INT32 = 6, OT_INT64 = 7 };

glow_status wx_fail(wx *w, glow_status s, const char *fmt, ...)
{
    if (w->status != GLOW_OK)
        return w->status;
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (w->at)
        glow_fail(w->d, s, "cannot write node '%s' (%s) as ONNX: %s", w->at->name,
                  glow_node_kind_name(w->at->kind), msg);
    else
        glow_fail(w->d, s, "cannot write the graph as ONNX: %s", msg);
    w->status = s;
    return s;
}

const char *wx_unique(wx *w, const char *base)
{
    if (!base || !*base)
        base = "v";
    const char *name = base;
    for (int k = 2; glow_strmap_has(&w->taken, name); k++)
        name = glow_arena_printf(&w->a, "%s_%d", base, k);
    name = glow_arena_strdup(&w->a, name);
    glow_strmap_put(&w->taken, name, (void *)name);
    return name;
}

int wx_onnx_dtype(glow_dtype t)
{
    switch (t) {
    case GLOW_I8Q: return OT_INT8;
    case GLOW_U8Q: return OT_UINT8;
    case GLOW_I16Q: return OT_INT16;
    case GLOW_I32Q: return OT_INT32;
    default: return glow_dtype_to_onnx(t);
    }
}

static bool is_q8(glow_dtype t)
{
    return t == GLOW_I8Q || t == GLOW_U8Q;
}

const char *wx_init(wx *w, const char *base, int onnx_dtype, int rank, const int64_t *dims,
                    const void *data)
{
    Onnx__TensorProto *tp = GLOW_NEW(&w->a, Onnx__TensorProto);
    onnx__tensor_proto__init(tp);
    int64_t *d = GLOW_NEW_ARRAY(&w->a, int64_t, rank + 1);
    size_t numel = 1, esize = 0;
    for (int i = 0; i < rank; i++) {
        d[i] = dims[i];
        numel *= (size_t)dims[i];
    }
    for (int t = 0; t < GLOW_DTYPE_COUNT; t++)
        if (wx_onnx_dtype((glow_dtype)t) == onnx_dtype)
            esize = glow_dtype_size((glow_dtype)t);
    tp->n_dims = (size_t)rank;
    tp->dims = d;
    tp->has_data_type = true;
    tp->data_type = onnx_dtype;
    tp->name = (char *)wx_unique(w, base);
    tp->has_raw_data = true;
    tp->raw_data.len = numel * esize;
    tp->raw_data.data = (uint8_t *)data;
    GLOW_VEC_PUSH(w->inits, tp);
    return tp->name;
}

/* A small initializer shared by content (scales, zero points, shapes). */
static const char *shared_init(wx *w, const char *base, int onnx_dtype, int rank,
                               const int64_t *dims, const void *data, size_t bytes)
{
    char *key = glow_arena_printf(&w->a, "%d:%d:%lld:", onnx_dtype, rank,
                                  rank ? (long long)dims[0] : -1LL);
    size_t klen = strlen(key);
    char *full = glow_arena_alloc(&w->a, klen + 2 * bytes + 1);
    memcpy(full, key, klen);
    for (size_t i = 0; i < bytes; i++)
        snprintf(full + klen + 2 * i, 3, "%02x", ((const uint8_t *)data)[i]);
    const char *have = glow_strmap_get(&w->shared, full);
    if (have)
        return have;
    void *copy = glow_arena_memdup(&w->a, data, bytes ? bytes : 1);
    const char *name = wx_init(w, base, onnx_dtype, rank, dims, copy);
    glow_strmap_put(&w->shared, full, (void *)name);
    return name;
}

const char *wx_ints(wx *w, const char *base, int n, const int64_t *v)
{
    int64_t dim = n;
    return shared_init(w, base, OT_INT64, 1, &dim, v, sizeof(int64_t) * (size_t)n);
}

const char *wx_scalar(wx *w, const char *base, glow_dtype t, double v)
{
    uint8_t buf[8] = { 0 };
    glow_store_f64(t, buf, 0, v);
    return shared_init(w, base, wx_onnx_dtype(t), 0, NULL, buf, glow_dtype_size(t));
}

/* The scale and zero point initializers of one quantization (per tensor or per axis). */
static void qparams(wx *w, glow_dtype qt, int n, const float *scales, const int32_t *zps,
                    const char *base, const char **s, const char **z)
{
    int64_t dim = n;
    int rank = n > 1 ? 1 : 0;
    *s = shared_init(w, glow_arena_printf(&w->a, "%s_scale", base), OT_FLOAT, rank, &dim,
                     scales, sizeof(float) * (size_t)n);
    *z = NULL;
    if (qt == GLOW_I32Q || qt == GLOW_I32)
        return;   /* int32 zero points must be 0, and 0 is the default */
    uint8_t *zb = glow_arena_alloc(&w->a, (size_t)n);
    for (int i = 0; i < n; i++)
        zb[i] = (uint8_t)zps[i];
    *z = shared_init(w, glow_arena_printf(&w->a, "%s_zero_point", base),
                     wx_onnx_dtype(qt), rank, &dim, zb, (size_t)n);
}

const char *wx_dequantize(wx *w, const char *q, glow_dtype qt, int n, const float *scales,
                          const int32_t *zps, const char *base, const char *into)
{
    if (!is_q8(qt) && qt != GLOW_I8 && qt != GLOW_U8 && qt != GLOW_I32 && qt != GLOW_I32Q) {
        wx_fail(w, GLOW_ERR_UNSUPPORTED, "%s values have no DequantizeLinear at opset 13 "
                "(use --precision int8)", glow_dtype_name(qt));
        return "";
    }
    glow_dtype zt = qt == GLOW_I8 ? GLOW_I8Q : qt == GLOW_U8 ? GLOW_U8Q : qt;
    const char *s, *z;
    qparams(w, zt, n, scales, zps, base, &s, &z);
    const char *y = into ? into : wx_unique(w, glow_arena_printf(&w->a, "%s_dq", base));
    Onnx__NodeProto *p = wx_node(w, "DequantizeLinear", y, 3, (const char *[]){ q, s, z }, 1,
                                 &y);
    if (n > 1)
        wx_attr_int(w, p, "axis", 0);
    return y;
}

void wx_quantize_into(wx *w, const char *x, glow_value v)
{
    const glow_type *t = glow_value_type(v);
    if (!is_q8(t->dtype)) {
        wx_fail(w, GLOW_ERR_UNSUPPORTED, "%s results have no QuantizeLinear at opset 13 (use "
                "--precision int8)", glow_dtype_name(t->dtype));
        return;
    }
    const char *y = wx_val(w, v), *s, *z;
    qparams(w, t->dtype, 1, &t->scale, &t->offset, y, &s, &z);
    wx_node(w, "QuantizeLinear", glow_arena_printf(&w->a, "%s_q", y), 3,
            (const char *[]){ x, s, z }, 1, &y);
}

static size_t slot(const wx *w, glow_value v)
{
    GLOW_ASSERT(v.node->id < w->nids && v.res < WX_MAX_RES);
    return (size_t)v.node->id * WX_MAX_RES + v.res;
}

const char *wx_val(wx *w, glow_value v)
{
    const char **name = &w->names[slot(w, v)];
    if (*name)
        return *name;
    const glow_node *n = v.node;
    if (n->kind == NK_CONSTANT) {
        int dt = wx_onnx_dtype(n->outs[0].dtype);
        if (!dt)
            wx_fail(w, GLOW_ERR_UNSUPPORTED, "constant '%s' of type %s has no ONNX type",
                    n->name, glow_dtype_name(n->outs[0].dtype));
        *name = wx_init(w, n->name, dt, n->outs[0].rank, n->outs[0].dims, n->payload.data);
    } else if (n->kind == NK_PLACEHOLDER) {
        *name = n->name;   /* reserved when the graph's inputs and outputs were listed */
    } else {
        const char *base = n->name[0] ? n->name : glow_node_kind_name(n->kind);
        *name = wx_unique(w, v.res ? glow_arena_printf(&w->a, "%s_%u", base, v.res) : base);
    }
    return *name;
}

const char *wx_fval(wx *w, glow_value v)
{
    const glow_type *t = glow_value_type(v);
    if (!glow_dtype_is_quantized(t->dtype))
        return wx_val(w, v);
    const char **f = &w->fnames[slot(w, v)];
    if (!*f) {
        const char *q = wx_val(w, v);
        *f = wx_dequantize(w, q, t->dtype, 1, &t->scale, &t->offset, q, NULL);
    }
    return *f;
}

const char *wx_result_begin(wx *w, glow_value v)
{
    if (!glow_dtype_is_quantized(glow_value_type(v)->dtype))
        return wx_val(w, v);
    return wx_unique(w, glow_arena_printf(&w->a, "%s_f", wx_val(w, v)));
}

void wx_result_end(wx *w, glow_value v, const char *fname)
{
    if (glow_dtype_is_quantized(glow_value_type(v)->dtype))
        wx_quantize_into(w, fname, v);
}

/* --- nodes and attributes --- */

/* Attribute slots allocated per node: no mapping sets more. */
#define WX_MAX_ATTRS 8
/* Input slots beyond the operands, for initializers the ONNX op takes as inputs. */
#define WX_EXTRA_INS 6

Onnx__NodeProto *wx_node(wx *w, const char *op, const char *name, int nin, const char **ins,
                         int nout, const char **outs)
{
    Onnx__NodeProto *p = GLOW_NEW(&w->a, Onnx__NodeProto);
    onnx__node_proto__init(p);
    p->op_type = (char *)op;
    p->name = (char *)name;
    p->input = GLOW_NEW_ARRAY(&w->a, char *, nin + WX_EXTRA_INS);
    /* Trailing absent optional inputs are dropped; inner ones stay as "". */
    int last = nin;
    while (last > 0 && (!ins[last - 1] || !ins[last - 1][0]))
        last--;
    for (int i = 0; i < last; i++)
        p->input[p->n_input++] = (char *)(ins[i] ? ins[i] : "");
    p->output = GLOW_NEW_ARRAY(&w->a, char *, nout);
    for (int i = 0; i < nout; i++)
        p->output[p->n_output++] = (char *)outs[i];
    p->attribute = GLOW_NEW_ARRAY(&w->a, Onnx__AttributeProto *, WX_MAX_ATTRS);
    GLOW_VEC_PUSH(w->nodes, p);
    return p;
}

void wx_add_input(wx *w, Onnx__NodeProto *p, const char *name)
{
    (void)w;
    p->input[p->n_input++] = (char *)(name ? name : "");
}

static Onnx__AttributeProto *new_attr(wx *w, Onnx__NodeProto *p, const char *name, int type)
{
    GLOW_ASSERT(p->n_attribute < WX_MAX_ATTRS);
    Onnx__AttributeProto *at = GLOW_NEW(&w->a, Onnx__AttributeProto);
    onnx__attribute_proto__init(at);
    at->name = (char *)name;
    at->has_type = true;
    at->type = type;
    p->attribute[p->n_attribute++] = at;
    return at;
}

void wx_attr_int(wx *w, Onnx__NodeProto *p, const char *name, int64_t v)
{
    Onnx__AttributeProto *at = new_attr(w, p, name, 2);
    at->has_i = true;
    at->i = v;
}

void wx_attr_float(wx *w, Onnx__NodeProto *p, const char *name, float v)
{
    Onnx__AttributeProto *at = new_attr(w, p, name, 1);
    at->has_f = true;
    at->f = v;
}

void wx_attr_ints(wx *w, Onnx__NodeProto *p, const char *name, int n, const int64_t *v)
{
    Onnx__AttributeProto *at = new_attr(w, p, name, 7);
    at->n_ints = (size_t)n;
    at->ints = glow_arena_memdup(&w->a, v, sizeof(int64_t) * (size_t)(n ? n : 1));
}

void wx_attr_str(wx *w, Onnx__NodeProto *p, const char *name, const char *s)
{
    Onnx__AttributeProto *at = new_attr(w, p, name, 3);
    at->has_s = true;
    at->s.len = strlen(s);
    at->s.data = (uint8_t *)glow_arena_strdup(&w->a, s);
}

/* --- the model --- */

static Onnx__ValueInfoProto *value_info(wx *w, const char *name, const glow_type *t)
{
    Onnx__TensorShapeProto *sh = GLOW_NEW(&w->a, Onnx__TensorShapeProto);
    onnx__tensor_shape_proto__init(sh);
    sh->dim = GLOW_NEW_ARRAY(&w->a, Onnx__TensorShapeProto__Dimension *, t->rank + 1);
    for (int i = 0; i < t->rank; i++) {
        Onnx__TensorShapeProto__Dimension *dm = GLOW_NEW(&w->a,
                                                         Onnx__TensorShapeProto__Dimension);
        onnx__tensor_shape_proto__dimension__init(dm);
        dm->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        dm->dim_value = t->dims[i];
        sh->dim[sh->n_dim++] = dm;
    }
    Onnx__TypeProto__Tensor *tt = GLOW_NEW(&w->a, Onnx__TypeProto__Tensor);
    onnx__type_proto__tensor__init(tt);
    tt->has_elem_type = true;
    tt->elem_type = wx_onnx_dtype(t->dtype);
    tt->shape = sh;
    Onnx__TypeProto *tp = GLOW_NEW(&w->a, Onnx__TypeProto);
    onnx__type_proto__init(tp);
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    Onnx__ValueInfoProto *vi = GLOW_NEW(&w->a, Onnx__ValueInfoProto);
    onnx__value_info_proto__init(vi);
    vi->name = (char *)name;
    vi->type = tp;
    return vi;
}

/* Maps every node; on success *g holds the graph. */
static glow_status build_graph(wx *w, Onnx__GraphProto *g)
{
    const glow_function *f = w->f;
    glow_module *m = f->module;
    GLOW_VEC(Onnx__ValueInfoProto *) ins = { 0 }, outs = { 0 };
    /* Placeholder names are the model's interface: reserve them before anything is named. */
    for (glow_node *ph = m->placeholders.first; ph; ph = ph->next)
        glow_strmap_put(&w->taken, ph->name, (void *)ph->name);
    for (glow_node *ph = m->placeholders.first; ph; ph = ph->next)
        if (ph->is_input)
            GLOW_VEC_PUSH(ins, value_info(w, ph->name, &ph->outs[0]));
    /* A saved node result takes its output's name, so no Identity is needed. */
    for (glow_node *n = f->nodes.first; n; n = n->next) {
        if (n->kind != NK_SAVE)
            continue;
        glow_value src = n->ins[0];
        const char **name = &w->names[slot(w, src)];
        if (!*name && !(glow_node_kind_flags(src.node->kind) & NF_STORAGE))
            *name = n->ins[1].node->name;
        GLOW_VEC_PUSH(outs, value_info(w, n->ins[1].node->name, &n->ins[1].node->outs[0]));
    }
    for (glow_node *n = f->nodes.first; n && w->status == GLOW_OK; n = n->next) {
        w->at = n;
        if (n->kind == NK_SAVE) {
            const char *src = wx_val(w, n->ins[0]), *dst = n->ins[1].node->name;
            if (strcmp(src, dst) != 0)
                wx_node(w, "Identity", dst, 1, &src, 1, &dst);
        } else {
            wx_write_node(w, n);
        }
    }
    w->at = NULL;
    g->name = (char *)(f->name ? f->name : "main");
    g->n_node = w->nodes.len;
    g->node = w->nodes.data;
    g->n_initializer = w->inits.len;
    g->initializer = w->inits.data;
    g->n_input = ins.len;
    g->input = ins.data;
    g->n_output = outs.len;
    g->output = outs.data;
    return w->status;
}

glow_status glow_onnx_write(const glow_function *f, const char *path, const char *producer,
                            glow_diag *d)
{
    wx w = { .f = f, .d = d };
    w.nids = f->module->next_id + 1;
    w.names = glow_xcalloc((size_t)w.nids * WX_MAX_RES, sizeof *w.names);
    w.fnames = glow_xcalloc((size_t)w.nids * WX_MAX_RES, sizeof *w.fnames);
    Onnx__GraphProto g;
    onnx__graph_proto__init(&g);
    glow_status s = build_graph(&w, &g);
    if (s == GLOW_OK) {
        Onnx__OperatorSetIdProto opset;
        onnx__operator_set_id_proto__init(&opset);
        opset.domain = "";
        opset.has_version = true;
        opset.version = 13;
        Onnx__OperatorSetIdProto *opsets[1] = { &opset };
        Onnx__ModelProto mp;
        onnx__model_proto__init(&mp);
        mp.has_ir_version = true;
        mp.ir_version = 8;
        mp.producer_name = (char *)(producer ? producer : "glowc");
        mp.graph = &g;
        mp.n_opset_import = 1;
        mp.opset_import = opsets;
        size_t size = onnx__model_proto__get_packed_size(&mp);
        uint8_t *buf = malloc(size ? size : 1);
        if (!buf) {
            s = glow_fail(d, GLOW_ERR_TOO_LARGE, "cannot allocate %zu bytes for the model",
                          size);
        } else {
            size = onnx__model_proto__pack(&mp, buf);
            s = glow_write_file(path, buf, size, d);
            free(buf);
        }
    }
    /* The graph's input and output lists are heap vectors; everything else is in the arena. */
    free(g.input);
    free(g.output);
    GLOW_VEC_FREE(w.nodes);
    GLOW_VEC_FREE(w.inits);
    glow_strmap_free(&w.taken);
    glow_strmap_free(&w.shared);
    free(w.names);
    free(w.fnames);
    glow_arena_release(&w.a);
    return s;
}
