// seq_file.c - Sequence and optional values in files: ONNX SequenceProto / OptionalProto
// (.pb, the layout of the ONNX backend tests) read into, and written from, flat tensor lists.
//
// Sequences reach the compiled program as one tensor per element (docs/onnx-import.md,
// "Sequences and optionals"), so a file's value is read as the list of its tensors plus a
// count (-1 for an absent optional), the form glow_onnx_options.input_counts takes.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx_internal.h"

/* OptionalProto / SequenceProto elem_type codes. */
enum { ELEM_UNDEFINED = 0, ELEM_TENSOR = 1, ELEM_SEQUENCE = 3 };

glow_io_kind glow_io_kind_of(const char *type_str)
{
    if (!strncmp(type_str, "seq(", 4))
        return GLOW_IO_SEQ;
    if (!strncmp(type_str, "optional(seq(", 13))
        return GLOW_IO_OPT_SEQ;
    if (!strncmp(type_str, "optional(", 9))
        return GLOW_IO_OPT_TENSOR;
    return GLOW_IO_TENSOR;
}

void glow_seq_value_free(glow_seq_value *v)
{
    for (int k = 0; k < v->count; k++)
        glow_tensor_free(&v->tensors[k]);
    free(v->tensors);
    free(v->name);
    memset(v, 0, sizeof *v);
}

/* Appends tp to v as an owned tensor. */
static glow_status add_tensor(glow_seq_value *v, const Onnx__TensorProto *tp, glow_diag *d)
{
    glow_arena scratch = { 0 };
    glow_tensor tmp, *t = &v->tensors[v->count];
    char what[32];
    snprintf(what, sizeof what, "element %d", v->count);
    glow_status s = onnx_tensor_from_proto(tp, &scratch, &tmp, what, d);
    if (s == GLOW_OK)
        s = glow_tensor_alloc(t, &tmp.type, d);
    if (s == GLOW_OK) {
        memcpy(t->data, tmp.data, glow_type_bytes(&tmp.type));
        v->count++;
    }
    glow_arena_release(&scratch);
    return s;
}

static glow_status add_sequence(glow_seq_value *v, const Onnx__SequenceProto *sp, glow_diag *d)
{
    if (sp->n_sparse_tensor_values || sp->n_sequence_values || sp->n_optional_values ||
        (sp->elem_type != ELEM_TENSOR && sp->elem_type != ELEM_UNDEFINED))
        return glow_fail(d, GLOW_ERR_UNSUPPORTED, "a sequence of something other than dense "
                         "tensors (elem_type %d); glowc reads sequences of tensors",
                         (int)sp->elem_type);
    if (sp->n_tensor_values > ONNX_SEQ_MAX)
        return glow_fail(d, GLOW_ERR_TOO_LARGE, "a sequence of %zu tensors; glowc takes up to "
                         "%d", sp->n_tensor_values, ONNX_SEQ_MAX);
    v->tensors = glow_xmalloc((sp->n_tensor_values + 1) * sizeof *v->tensors);
    memset(v->tensors, 0, (sp->n_tensor_values + 1) * sizeof *v->tensors);
    for (size_t k = 0; k < sp->n_tensor_values; k++)
        GLOW_TRY(add_tensor(v, sp->tensor_values[k], d));
    return GLOW_OK;
}

static void set_name(glow_seq_value *v, const char *name)
{
    const char *n = name ? name : "";
    v->name = glow_xmalloc(strlen(n) + 1);
    strcpy(v->name, n);
}

glow_status glow_seq_read_pb(const uint8_t *data, size_t size, glow_io_kind kind,
                             glow_seq_value *v, glow_diag *d)
{
    memset(v, 0, sizeof *v);
    glow_status s = GLOW_OK;
    if (kind == GLOW_IO_SEQ) {
        Onnx__SequenceProto *sp = onnx__sequence_proto__unpack(NULL, size, data);
        if (!sp)
            return glow_fail(d, GLOW_ERR_PARSE, "not a valid ONNX SequenceProto (%zu bytes)",
                             size);
        set_name(v, sp->name);
        /* A TensorProto may parse as a SequenceProto: its data fields are unknown here. */
        s = sp->base.n_unknown_fields
                ? glow_fail(d, GLOW_ERR_PARSE, "not an ONNX SequenceProto (it has fields a "
                            "SequenceProto does not; a TensorProto file?)")
                : add_sequence(v, sp, d);
        onnx__sequence_proto__free_unpacked(sp, NULL);
    } else if (kind == GLOW_IO_OPT_TENSOR || kind == GLOW_IO_OPT_SEQ) {
        Onnx__OptionalProto *op = onnx__optional_proto__unpack(NULL, size, data);
        if (!op)
            return glow_fail(d, GLOW_ERR_PARSE, "not a valid ONNX OptionalProto (%zu bytes)",
                             size);
        set_name(v, op->name);
        if (op->base.n_unknown_fields) {
            s = glow_fail(d, GLOW_ERR_PARSE, "not an ONNX OptionalProto (it has fields an "
                          "OptionalProto does not; a TensorProto file?)");
        } else if (op->sparse_tensor_value || op->optional_value) {
            s = glow_fail(d, GLOW_ERR_UNSUPPORTED, "an optional holding a sparse tensor or an "
                          "optional; glowc reads optional tensors and sequences");
        } else if (op->tensor_value && kind == GLOW_IO_OPT_TENSOR) {
            v->tensors = glow_xmalloc(2 * sizeof *v->tensors);
            memset(v->tensors, 0, 2 * sizeof *v->tensors);
            s = add_tensor(v, op->tensor_value, d);
        } else if (op->sequence_value && kind == GLOW_IO_OPT_SEQ) {
            s = add_sequence(v, op->sequence_value, d);
        } else if (op->tensor_value || op->sequence_value) {
            s = glow_fail(d, GLOW_ERR_BAD_TYPE, "the optional holds a %s, the model declares an "
                          "optional %s", op->tensor_value ? "tensor" : "sequence",
                          kind == GLOW_IO_OPT_SEQ ? "sequence" : "tensor");
        } else {
            v->count = -1;   /* absent */
        }
        onnx__optional_proto__free_unpacked(op, NULL);
    } else {
        return glow_fail(d, GLOW_ERR_USAGE, "a tensor is not read as a sequence or optional");
    }
    if (s != GLOW_OK)
        glow_seq_value_free(v);
    return s;
}

glow_status glow_seq_read_file(const char *path, glow_io_kind kind, glow_seq_value *v,
                               glow_diag *d)
{
    uint8_t *data;
    size_t size;
    GLOW_TRY(glow_read_file(path, &data, &size, d));
    glow_diag local = { 0 };
    glow_status s = glow_seq_read_pb(data, size, kind, v, &local);
    free(data);
    if (s != GLOW_OK)
        return glow_fail(d, s, "%s: %s", path, local.msg);
    return GLOW_OK;
}

glow_status glow_seq_to_pb(const glow_tensor *ts, int count, glow_io_kind kind,
                           const char *name, uint8_t **data, size_t *size, glow_diag *d)
{
    if (kind == GLOW_IO_TENSOR)
        return glow_fail(d, GLOW_ERR_USAGE, "output '%s' is a tensor", name ? name : "");
    if (count < -1 || count > ONNX_SEQ_MAX || (count < 0 && kind == GLOW_IO_SEQ) ||
        (count > 1 && kind == GLOW_IO_OPT_TENSOR))
        return glow_fail(d, GLOW_ERR_USAGE, "output '%s': %d tensors do not make its %s",
                         name ? name : "", count, kind == GLOW_IO_SEQ ? "sequence" : "optional");
    int n = count > 0 ? count : 0;
    Onnx__TensorProto *tps = glow_xmalloc((size_t)(n + 1) * sizeof *tps);
    Onnx__TensorProto **ptrs = glow_xmalloc((size_t)(n + 1) * sizeof *ptrs);
    int64_t(*dims)[GLOW_MAX_DIMS] = glow_xmalloc((size_t)(n + 1) * sizeof *dims);
    void **packed = glow_xmalloc((size_t)(n + 1) * sizeof *packed);
    glow_status s = GLOW_OK;
    for (int k = 0; k < n && s == GLOW_OK; k++) {
        packed[k] = NULL;
        if (glow_dtype_to_onnx(ts[k].type.dtype) == 0) {
            s = glow_fail(d, GLOW_ERR_UNSUPPORTED, "output '%s' element %d of type %s has no "
                          "ONNX equivalent", name ? name : "", k,
                          glow_dtype_name(ts[k].type.dtype));
            n = k;
            break;
        }
        packed[k] = onnx_tensor_to_proto(&ts[k], NULL, &tps[k], dims[k]);
        tps[k].name = NULL;   /* elements are unnamed, as ONNX writes them */
        ptrs[k] = &tps[k];
    }
    Onnx__SequenceProto sp = ONNX__SEQUENCE_PROTO__INIT;
    sp.name = (char *)(name ? name : "");
    sp.has_elem_type = true;
    sp.elem_type = ELEM_TENSOR;
    sp.n_tensor_values = (size_t)n;
    sp.tensor_values = ptrs;
    Onnx__OptionalProto op = ONNX__OPTIONAL_PROTO__INIT;
    op.name = sp.name;
    op.has_elem_type = true;
    op.elem_type = count < 0 ? ELEM_UNDEFINED : kind == GLOW_IO_OPT_SEQ ? ELEM_SEQUENCE
                                                                        : ELEM_TENSOR;
    if (count >= 0 && kind == GLOW_IO_OPT_SEQ) {
        sp.name = NULL;
        op.sequence_value = &sp;
    } else if (count > 0 && kind == GLOW_IO_OPT_TENSOR) {
        op.tensor_value = &tps[0];
    }
    if (s == GLOW_OK) {
        const ProtobufCMessage *msg = kind == GLOW_IO_SEQ ? &sp.base : &op.base;
        size_t len = protobuf_c_message_get_packed_size(msg);
        *data = glow_xmalloc(len ? len : 1);
        *size = protobuf_c_message_pack(msg, *data);
    }
    for (int k = 0; k < n; k++)
        free(packed[k]);
    free(packed);
    free(dims);
    free(ptrs);
    free(tps);
    return s;
}
