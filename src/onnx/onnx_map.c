// onnx_map.c - Cuts the large raw_data fields of a model's initializers out of its bytes, so
// that protobuf-c unpacks a small copy and the weights stay in the file mapping.
//
// protobuf-c copies every bytes field it unpacks, so unpacking a mapped model would hold its
// weights twice (the file's pages and the copy). This walks the protobuf wire format down
// ModelProto.graph (field 7) -> GraphProto.initializer (field 5) -> TensorProto.raw_data
// (field 9), field numbers from onnx.proto, and writes a copy of the model without the raw_data
// fields of at least min_len bytes, the length prefixes of the enclosing tensor and graph
// rewritten. Each cut records the initializer's position and the payload's place in the file;
// the loader puts them back into the unpacked TensorProtos as pointers into the mapping.
//
// Anything unexpected (a second graph field, a tensor with two raw_data fields, a malformed
// or cut-off field) makes the walk give up, and the loader unpacks the whole file as before:
// a damaged model is refused by protobuf-c with the same message either way.
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx_internal.h"

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };
enum { MODEL_GRAPH = 7, GRAPH_INITIALIZER = 5, TENSOR_RAW_DATA = 9 };

/* One field: its key's number and wire type, its whole extent [start, end) and, for
 * length-delimited ones, the payload [val, end). */
typedef struct field {
    uint32_t num;
    int wt;
    const uint8_t *start, *val, *end;
} field;

static bool read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    uint64_t x = 0;
    for (int shift = 0; shift <= 63; shift += 7) {
        if (*p >= end)
            return false;
        uint8_t b = *(*p)++;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return true;
        }
    }
    return false;
}

/* Reads the field at *p (before end) and moves *p past it; false when malformed. */
static bool next_field(const uint8_t **p, const uint8_t *end, field *f)
{
    f->start = *p;
    uint64_t key, len;
    if (!read_varint(p, end, &key) || key >> 3 == 0 || key >> 3 > UINT32_MAX)
        return false;
    f->num = (uint32_t)(key >> 3);
    f->wt = (int)(key & 7);
    f->val = *p;
    switch (f->wt) {
    case WT_VARINT:
        if (!read_varint(p, end, &len))
            return false;
        break;
    case WT_I64:
    case WT_I32: {
        size_t n = f->wt == WT_I64 ? 8 : 4;
        if ((size_t)(end - *p) < n)
            return false;
        *p += n;
        break;
    }
    case WT_LEN:
        if (!read_varint(p, end, &len) || len > (uint64_t)(end - *p))
            return false;
        f->val = *p;
        *p += len;
        break;
    default:
        return false;   /* groups and unknown wire types: protobuf-c decides */
    }
    f->end = *p;
    return true;
}

typedef struct buf {
    uint8_t *data;
    size_t len, cap;
} buf;

static void put(buf *b, const void *p, size_t n)
{
    if (b->len + n > b->cap) {
        b->cap = b->cap * 2 > b->len + n ? b->cap * 2 : b->len + n + 256;
        b->data = glow_xrealloc(b->data, b->cap);
    }
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
}

static void put_varint(buf *b, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;
    do {
        tmp[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        tmp[n] |= v ? 0x80 : 0;
        n++;
    } while (v);
    put(b, tmp, n);
}

/* A length-delimited field: key, length, payload. */
static void put_len_field(buf *b, uint32_t num, const uint8_t *payload, size_t n)
{
    put_varint(b, (uint64_t)num << 3 | WT_LEN);
    put_varint(b, n);
    put(b, payload, n);
}

/* The tensor t (an initializer's payload) without its raw_data field when that field is
 * alone and at least min_len bytes: appends the rewritten field to g and true, or false
 * when the tensor stays as it is (or is malformed). */
static bool cut_tensor(const field *t, size_t min_len, buf *g, buf *scratch, field *raw)
{
    const uint8_t *p = t->val;
    int nraw = 0;
    field f;
    while (p < t->end) {
        if (!next_field(&p, t->end, &f))
            return false;
        if (f.num == TENSOR_RAW_DATA) {
            nraw++;
            *raw = f;
        }
    }
    /* Two raw_data fields: protobuf keeps the last; leave such a tensor to protobuf-c. */
    if (nraw != 1 || raw->wt != WT_LEN || (size_t)(raw->end - raw->val) < min_len)
        return false;
    scratch->len = 0;
    put(scratch, t->val, (size_t)(raw->start - t->val));
    put(scratch, raw->end, (size_t)(t->end - raw->end));
    put_len_field(g, GRAPH_INITIALIZER, scratch->data, scratch->len);
    return true;
}

bool onnx_cut_raw_data(const uint8_t *data, size_t size, size_t min_len, uint8_t **out,
                       size_t *out_size, onnx_cut **cuts, size_t *ncuts)
{
    *out = NULL;
    *out_size = 0;
    *cuts = NULL;
    *ncuts = 0;
    const uint8_t *p = data, *end = data + size;
    field f, graph = { 0 };
    int ngraph = 0;
    while (p < end) {
        if (!next_field(&p, end, &f))
            return false;
        if (f.num == MODEL_GRAPH) {
            graph = f;
            ngraph++;
        }
    }
    /* A repeated graph field would be merged by protobuf-c; such files keep the old path. */
    if (ngraph != 1 || graph.wt != WT_LEN)
        return false;
    buf g = { 0 }, scratch = { 0 };
    GLOW_VEC(onnx_cut) found = { 0 };
    size_t index = 0;
    bool ok = true;
    for (p = graph.val; p < graph.end;) {
        if (!next_field(&p, graph.end, &f)) {
            ok = false;
            break;
        }
        field raw;
        if (f.num == GRAPH_INITIALIZER && f.wt == WT_LEN) {
            if (cut_tensor(&f, min_len, &g, &scratch, &raw)) {
                onnx_cut c = { index, (size_t)(raw.val - data), (size_t)(raw.end - raw.val) };
                GLOW_VEC_PUSH(found, c);
            } else {
                put(&g, f.start, (size_t)(f.end - f.start));
            }
            index++;
        } else {
            put(&g, f.start, (size_t)(f.end - f.start));
        }
    }
    free(scratch.data);
    if (!ok || found.len == 0) {
        free(g.data);
        GLOW_VEC_FREE(found);
        return false;
    }
    buf m = { 0 };
    put(&m, data, (size_t)(graph.start - data));
    put_len_field(&m, MODEL_GRAPH, g.data, g.len);
    put(&m, graph.end, (size_t)(end - graph.end));
    free(g.data);
    *out = m.data;
    *out_size = m.len;
    *cuts = found.data;
    *ncuts = found.len;
    return true;
}

Onnx__ModelProto *onnx_unpack(const uint8_t *data, size_t size, size_t file_size, glow_diag *d)
{
    if (!onnx_nesting_ok(&onnx__model_proto__descriptor, data, size, ONNX_MAX_NESTING)) {
        glow_fail(d, GLOW_ERR_PARSE, "not a valid ONNX model (its messages nest more than %d "
                  "deep, e.g. subgraphs within subgraphs)", ONNX_MAX_NESTING);
        return NULL;
    }
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, size, data);
    if (!mp)
        glow_fail(d, GLOW_ERR_PARSE, "not a valid ONNX model (the protobuf does not parse; %zu "
                  "bytes)", file_size);
    return mp;
}

/* Puts the cut payloads back into the unpacked model as pointers into the mapping; false
 * when the model does not hold them where the walk found them (then nothing is hooked). */
static bool hook_mapped(Onnx__ModelProto *mp, const glow_mapping *map, const onnx_cut *cuts,
                        size_t ncuts)
{
    const Onnx__GraphProto *g = mp->graph;
    for (size_t i = 0; i < ncuts; i++)
        if (!g || cuts[i].index >= g->n_initializer || g->initializer[cuts[i].index]->has_raw_data)
            return false;
    const uint8_t *base = glow_mapping_data(map);
    for (size_t i = 0; i < ncuts; i++) {
        Onnx__TensorProto *tp = g->initializer[cuts[i].index];
        tp->has_raw_data = true;
        tp->raw_data.data = (uint8_t *)(uintptr_t)(base + cuts[i].off);
        tp->raw_data.len = cuts[i].len;
    }
    return true;
}

Onnx__ModelProto *onnx_unpack_mapped(const glow_mapping *map, glow_diag *d)
{
    const uint8_t *data = glow_mapping_data(map);
    size_t size = glow_mapping_size(map), small_size, ncuts;
    uint8_t *small;
    onnx_cut *cuts;
    Onnx__ModelProto *mp = NULL;
    if (onnx_cut_raw_data(data, size, ONNX_MAP_MIN_BYTES, &small, &small_size, &cuts, &ncuts)) {
        mp = onnx_unpack(small, small_size, size, d);
        free(small);
        bool hooked = mp && hook_mapped(mp, map, cuts, ncuts);
        free(cuts);
        if (!mp)
            return NULL;
        if (!hooked) {
            onnx__model_proto__free_unpacked(mp, NULL);
            mp = NULL;   /* not expected: unpack the whole file instead */
        }
    }
    if (!mp)
        mp = onnx_unpack(data, size, size, d);
    /* Reading the walk and the small fields brought pages in; the weights' are read again
     * only when something reads them. */
    glow_mapping_drop(map, data, size);
    return mp;
}

bool onnx_raw_mapped(const glow_mapping *map, const Onnx__TensorProto *tp)
{
    return map && tp->has_raw_data && tp->raw_data.data &&
           glow_mapping_holds(map, tp->raw_data.data, tp->raw_data.len);
}

void onnx_free_mapped(Onnx__ModelProto *mp, const glow_mapping *map)
{
    for (size_t i = 0; map && mp->graph && i < mp->graph->n_initializer; i++) {
        Onnx__TensorProto *tp = mp->graph->initializer[i];
        if (onnx_raw_mapped(map, tp)) {
            tp->raw_data.data = NULL;
            tp->raw_data.len = 0;
            tp->has_raw_data = false;
        }
    }
    onnx__model_proto__free_unpacked(mp, NULL);
}
