// onnx_depth.c - Refuses protobuf bytes whose messages nest too deeply, before protobuf-c
// unpacks them.
//
// protobuf-c unpacks nested messages recursively, without a depth limit: a model of 3,000
// If nodes each holding the next in its then_branch (about 30 KB of bytes, since each level
// costs a few bytes of framing) overflows an 8 MiB stack inside protobuf_c_message_unpack,
// and the importer would recurse as deep over the subgraphs after it. So the bytes are walked
// first, iteratively, with the schema's descriptors: a length-delimited field whose type is a
// message opens a level; anything else is skipped. Malformed framing is left for protobuf-c to
// report (the walk just stops), so this check only ever adds the one message it owns.
#include "onnx/onnx_internal.h"

static bool read_varint(const uint8_t *p, size_t end, size_t *i, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64 && *i < end; shift += 7) {
        uint8_t b = p[(*i)++];
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

bool onnx_nesting_ok(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t size,
                     int max_depth)
{
    struct level {
        const ProtobufCMessageDescriptor *d;
        size_t end;
    } st[ONNX_MAX_NESTING + 1];
    if (max_depth > ONNX_MAX_NESTING)
        max_depth = ONNX_MAX_NESTING;
    int top = 0;
    st[0] = (struct level){ desc, size };
    size_t i = 0;
    for (;;) {
        while (top > 0 && i >= st[top].end)
            top--;
        if (i >= st[top].end)
            return true;   /* the outermost message ended: never deeper than max_depth */
        uint64_t key, v;
        if (!read_varint(data, st[top].end, &i, &key))
            return true;
        size_t left = st[top].end - i;
        switch (key & 7) {
        case 0:
            if (!read_varint(data, st[top].end, &i, &v))
                return true;
            break;
        case 1:
            if (left < 8)
                return true;
            i += 8;
            break;
        case 5:
            if (left < 4)
                return true;
            i += 4;
            break;
        case 2: {
            if (!read_varint(data, st[top].end, &i, &v) || v > st[top].end - i)
                return true;
            const ProtobufCFieldDescriptor *f =
                key >> 3 <= UINT32_MAX
                    ? protobuf_c_message_descriptor_get_field(st[top].d, (unsigned)(key >> 3))
                    : NULL;
            if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
                if (top == max_depth)
                    return false;
                top++;
                st[top] = (struct level){ f->descriptor, i + (size_t)v };
            } else {
                i += (size_t)v;
            }
            break;
        }
        default:
            return true;   /* groups and bad wire types: protobuf-c's to refuse */
        }
    }
}
