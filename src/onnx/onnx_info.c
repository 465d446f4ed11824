// onnx_info.c - Summarizes an ONNX model (I/O types, opsets, op histogram, weight size)
// without building a graph, for `glowc info`.
//
// This reads the protobuf directly rather than calling the importer, so that it works on any
// parseable model, including ones whose ops glowc cannot import: its job is to say what a
// model contains and which of its ops are supported. Everything it returns is copied into the
// caller's arena; the unpacked protobuf is freed before returning.
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx_internal.h"

/* Nested type descriptions (sequence of optional of map ...) stop here; real models nest
 * two or three levels, and a malicious file must not recurse without bound. */
#define MAX_TYPE_DEPTH 8

static const char *str_or_empty(const char *s) { return s ? s : ""; }

/* ONNX names for element kinds glowc has no dtype for, so `info` can still describe them. */
static const char *onnx_elem_name(int code)
{
    glow_dtype t;
    if (glow_dtype_from_onnx(code, &t))
        return glow_dtype_name(t);
    switch (code) {
    case 0: return "undefined";
    case 8: return "string";
    case 14: return "c64";
    case 15: return "c128";
    case 17: return "f8e4m3fn";
    case 18: return "f8e4m3fnuz";
    case 19: return "f8e5m2";
    case 20: return "f8e5m2fnuz";
    case 21: return "u4";
    case 22: return "i4";
    case 23: return "f4e2m1";
    default: return NULL;
    }
}

/* A growing string in a fixed buffer: appends are cut silently at the end, which only
 * matters for absurd models, and the result is always NUL-terminated. */
typedef struct sbuf {
    char *p;
    size_t len, cap;
} sbuf;

static void sb_add(sbuf *b, const char *s)
{
    size_t n = strlen(s);
    if (b->len + 1 >= b->cap)
        return;
    if (n > b->cap - 1 - b->len)
        n = b->cap - 1 - b->len;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void sb_addf(sbuf *b, const char *fmt, long long v)
{
    char tmp[32];
    snprintf(tmp, sizeof tmp, fmt, v);
    sb_add(b, tmp);
}

static void add_elem(sbuf *b, int code)
{
    const char *name = onnx_elem_name(code);
    if (name)
        sb_add(b, name);
    else
        sb_addf(b, "type%lld", code);
}

static void add_shape(sbuf *b, const Onnx__TensorShapeProto *shape)
{
    if (!shape) {
        sb_add(b, "[...]"); /* rank unknown */
        return;
    }
    sb_add(b, "[");
    for (size_t i = 0; i < shape->n_dim; i++) {
        const Onnx__TensorShapeProto__Dimension *dim = shape->dim[i];
        if (i)
            sb_add(b, ", ");
        if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
            sb_addf(b, "%lld", (long long)dim->dim_value);
        else if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
                 dim->dim_param && dim->dim_param[0])
            sb_add(b, dim->dim_param);
        else
            sb_add(b, "?");
    }
    sb_add(b, "]");
}

static void add_type(sbuf *b, const Onnx__TypeProto *tp, int depth)
{
    if (!tp || depth > MAX_TYPE_DEPTH) {
        sb_add(b, "?");
        return;
    }
    switch (tp->value_case) {
    case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE:
        add_elem(b, tp->tensor_type->elem_type);
        add_shape(b, tp->tensor_type->shape);
        break;
    case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE:
        sb_add(b, "sparse(");
        add_elem(b, tp->sparse_tensor_type->elem_type);
        add_shape(b, tp->sparse_tensor_type->shape);
        sb_add(b, ")");
        break;
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
        sb_add(b, "seq(");
        add_type(b, tp->sequence_type->elem_type, depth + 1);
        sb_add(b, ")");
        break;
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE:
        sb_add(b, "optional(");
        add_type(b, tp->optional_type->elem_type, depth + 1);
        sb_add(b, ")");
        break;
    case ONNX__TYPE_PROTO__VALUE_MAP_TYPE:
        sb_add(b, "map(");
        add_elem(b, tp->map_type->key_type);
        sb_add(b, ", ");
        add_type(b, tp->map_type->value_type, depth + 1);
        sb_add(b, ")");
        break;
    default:
        sb_add(b, "?");
        break;
    }
}

static glow_onnx_io make_io(glow_arena *a, const Onnx__ValueInfoProto *vi)
{
    char buf[512];
    sbuf b = { buf, 0, sizeof buf };
    buf[0] = '\0';
    add_type(&b, vi->type, 0);
    glow_onnx_io io = {
        .name = glow_arena_strdup(a, str_or_empty(vi->name)),
        .type_str = glow_arena_strdup(a, buf),
    };
    return io;
}

/* Adds without overflow; a model declaring more than INT64_MAX bytes just saturates. */
static int64_t sat_add(int64_t a, int64_t b)
{
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}

/* Bytes an initializer holds once loaded: from its dims (which also covers external data),
 * or from what is stored when the element kind has no fixed size. */
static int64_t initializer_bytes(const Onnx__TensorProto *tp)
{
    int64_t numel = 1;
    for (size_t i = 0; i < tp->n_dims; i++) {
        if (tp->dims[i] < 0)
            return 0;
        if (!glow_mul_overflow_i64(numel, tp->dims[i], &numel))
            return INT64_MAX;
    }
    int64_t elem_bits;
    glow_dtype t;
    if (glow_dtype_from_onnx(tp->data_type, &t)) {
        elem_bits = 8 * (int64_t)glow_dtype_size(t);
    } else {
        switch (tp->data_type) {
        case 14: elem_bits = 64; break;
        case 15: elem_bits = 128; break;
        case 17: case 18: case 19: case 20: elem_bits = 8; break;
        case 21: case 22: case 23: elem_bits = 4; break;
        default: {
            /* Strings and unknown kinds: count what is stored. */
            int64_t total = tp->has_raw_data ? (int64_t)tp->raw_data.len : 0;
            for (size_t i = 0; i < tp->n_string_data; i++)
                total = sat_add(total, (int64_t)tp->string_data[i].len);
            return total;
        }
        }
    }
    int64_t bits;
    if (!glow_mul_overflow_i64(numel, elem_bits, &bits))
        return INT64_MAX;
    return bits / 8 + (bits % 8 != 0);
}

static bool same_domain(const char *a, const char *b)
{
    /* "" and "ai.onnx" both name the default domain. */
    if (!a[0] || !strcmp(a, "ai.onnx"))
        a = "";
    if (!b[0] || !strcmp(b, "ai.onnx"))
        b = "";
    return !strcmp(a, b);
}

static int compare_ops(const void *pa, const void *pb)
{
    const glow_onnx_op_count *a = pa, *b = pb;
    if (a->count != b->count)
        return a->count > b->count ? -1 : 1;
    int c = strcmp(a->op_type, b->op_type);
    return c ? c : strcmp(a->domain, b->domain);
}

static void summarize_ops(const Onnx__ModelProto *mp, glow_arena *a, glow_onnx_summary *s)
{
    const Onnx__GraphProto *g = mp->graph;
    s->ops = g->n_node ? GLOW_NEW_ARRAY(a, glow_onnx_op_count, g->n_node) : NULL;
    s->nops = 0;
    /* Quadratic in distinct ops, which stay few (a few dozen at most in real models);
     * nodes are many, and each is matched against the distinct list only. */
    for (size_t i = 0; i < g->n_node; i++) {
        const char *op = str_or_empty(g->node[i]->op_type);
        const char *dom = str_or_empty(g->node[i]->domain);
        int k;
        for (k = 0; k < s->nops; k++) {
            if (!strcmp(s->ops[k].op_type, op) && same_domain(s->ops[k].domain, dom))
                break;
        }
        if (k == s->nops) {
            glow_onnx_op_count *oc = &s->ops[s->nops++];
            oc->op_type = glow_arena_strdup(a, op);
            oc->domain = glow_arena_strdup(a, same_domain(dom, "") ? "" : dom);
            oc->opset = 0;
            for (int j = 0; j < s->nopsets; j++) {
                if (same_domain(s->opset_domains[j], dom)) {
                    int64_t v = s->opset_versions[j];
                    oc->opset = v > INT32_MAX ? INT32_MAX : v < 0 ? 0 : (int)v;
                }
            }
            oc->supported = glow_onnx_op_supported(oc->domain, oc->op_type, oc->opset);
        }
        s->ops[k].count++;
    }
    if (s->nops > 1)
        qsort(s->ops, (size_t)s->nops, sizeof *s->ops, compare_ops);
}

static glow_status summarize_proto(const Onnx__ModelProto *mp, glow_arena *a,
                                   glow_onnx_summary *s, const char *path, glow_diag *d)
{
    if (!mp->graph)
        return glow_fail(d, GLOW_ERR_PARSE, "%s: the model has no graph", path);
    const Onnx__GraphProto *g = mp->graph;

    s->ir_version = mp->has_ir_version ? mp->ir_version : 0;
    if (mp->producer_name && mp->producer_name[0] && mp->producer_version &&
        mp->producer_version[0])
        s->producer = glow_arena_printf(a, "%s %s", mp->producer_name, mp->producer_version);
    else
        s->producer = glow_arena_strdup(a, str_or_empty(mp->producer_name));

    s->nopsets = (int)mp->n_opset_import;
    s->opset_domains = GLOW_NEW_ARRAY(a, const char *, mp->n_opset_import + 1);
    s->opset_versions = GLOW_NEW_ARRAY(a, int64_t, mp->n_opset_import + 1);
    for (size_t i = 0; i < mp->n_opset_import; i++) {
        s->opset_domains[i] = glow_arena_strdup(a, str_or_empty(mp->opset_import[i]->domain));
        /* An import without a version means version 1, as the importer reads it. */
        const Onnx__OperatorSetIdProto *os = mp->opset_import[i];
        s->opset_versions[i] = os->has_version ? os->version : 1;
    }

    /* Initializers listed among the graph inputs (older exporters do this) are weights, not
     * inputs a caller feeds. */
    glow_strmap inits = { 0 };
    s->ninitializers = (int)(g->n_initializer + g->n_sparse_initializer);
    s->weight_bytes = 0;
    for (size_t i = 0; i < g->n_initializer; i++) {
        const Onnx__TensorProto *tp = g->initializer[i];
        if (tp->name)
            glow_strmap_put(&inits, tp->name, (void *)tp);
        s->weight_bytes = sat_add(s->weight_bytes, initializer_bytes(tp));
    }
    for (size_t i = 0; i < g->n_sparse_initializer; i++) {
        const Onnx__SparseTensorProto *sp = g->sparse_initializer[i];
        if (sp->values && sp->values->name)
            glow_strmap_put(&inits, sp->values->name, (void *)sp);
        if (sp->values)
            s->weight_bytes = sat_add(s->weight_bytes, initializer_bytes(sp->values));
        if (sp->indices)
            s->weight_bytes = sat_add(s->weight_bytes, initializer_bytes(sp->indices));
    }

    s->inputs = GLOW_NEW_ARRAY(a, glow_onnx_io, g->n_input + 1);
    s->ninputs = 0;
    for (size_t i = 0; i < g->n_input; i++) {
        const Onnx__ValueInfoProto *vi = g->input[i];
        if (vi->name && glow_strmap_has(&inits, vi->name))
            continue;
        s->inputs[s->ninputs++] = make_io(a, vi);
    }
    glow_strmap_free(&inits);

    s->outputs = GLOW_NEW_ARRAY(a, glow_onnx_io, g->n_output + 1);
    s->noutputs = (int)g->n_output;
    for (size_t i = 0; i < g->n_output; i++)
        s->outputs[i] = make_io(a, g->output[i]);

    summarize_ops(mp, a, s);
    return GLOW_OK;
}

glow_status glow_onnx_summarize(const char *path, glow_arena *a, glow_onnx_summary *out,
                                glow_diag *d)
{
    memset(out, 0, sizeof *out);
    /* A mapped file is unpacked without its large weights (onnx_map.c), so `run` and
     * `profile`, which summarize before they load, do not hold the weights twice. */
    glow_mapping *map = glow_map_file(path);
    glow_diag ud = { 0 };
    Onnx__ModelProto *mp;
    if (map) {
        mp = onnx_unpack_mapped(map, &ud);
    } else {
        uint8_t *data = NULL;
        size_t size = 0;
        GLOW_TRY(glow_read_file(path, &data, &size, d));
        mp = onnx_unpack(data, size, size, &ud);
        free(data);
    }
    glow_status s;
    if (mp) {
        s = summarize_proto(mp, a, out, path, d);
        onnx_free_mapped(mp, map);
    } else {
        s = glow_fail(d, ud.status, "%s: %s", path, ud.msg);
    }
    if (map)
        glow_mapping_unref(map);
    return s;
}
