// test_tensor_file.c - Tensor files: .pb and .npy round trips for every element kind, the ONNX
// node suite's data files, typed-field TensorProtos, and malformed files failing cleanly.
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "onnx/onnx_internal.h"

static char tmpdir[256];

static char *tmp_path(const char *file)
{
    static char buf[512];
    snprintf(buf, sizeof(buf), "%s/%s", tmpdir, file);
    return buf;
}

/* A tensor of dtype dt and the given shape with values that differ per element. */
static glow_tensor make_tensor(glow_dtype dt, int rank, const int64_t *dims)
{
    glow_type ty = glow_type_make(dt, rank, dims);
    glow_tensor t;
    glow_diag d = { 0 };
    CHECK_EQ(glow_tensor_alloc(&t, &ty, &d), GLOW_OK);
    for (size_t i = 0; i < (size_t)glow_type_numel(&ty); i++) {
        double v = dt == GLOW_BOOL ? (double)(i % 2) : (double)i - 2.0 * (double)(i % 3);
        glow_store_f64(dt, t.data, i, v);
    }
    return t;
}

static void test_round_trips(void)
{
    static const glow_dtype all[] = { GLOW_F32, GLOW_F16, GLOW_BF16, GLOW_F64, GLOW_I8, GLOW_U8,
                                      GLOW_I16, GLOW_U16, GLOW_I32, GLOW_U32, GLOW_I64, GLOW_U64,
                                      GLOW_BOOL };
    static const int64_t dims[] = { 2, 3, 1 };
    for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++) {
        for (int rank = 0; rank <= 3; rank++) {
            glow_dtype dt = all[k];
            glow_tensor t = make_tensor(dt, rank, dims);
            glow_diag d = { 0 };

            /* In memory. */
            uint8_t *buf;
            size_t n;
            CHECK_EQ(glow_tensor_to_pb(&t, "tname", &buf, &n, &d), GLOW_OK);
            glow_tensor r = { 0 };
            char *name = NULL;
            CHECK_EQ(glow_tensor_read_pb(buf, n, &r, &name, &d), GLOW_OK);
            CHECK(glow_type_equal(&t.type, &r.type));
            CHECK(glow_tensor_equal(&t, &r));
            CHECK_STR_EQ(name, "tname");
            free(name);
            free(buf);
            glow_tensor_free(&r);

            /* Files, read back by contents. */
            char *p = tmp_path("t.pb");
            CHECK_EQ(glow_tensor_write_pb(p, &t, "file_name", &d), GLOW_OK);
            name = NULL;
            CHECK_EQ(glow_tensor_read_file(p, &r, &name, &d), GLOW_OK);
            CHECK(glow_tensor_equal(&t, &r));
            CHECK_STR_EQ(name, "file_name");
            free(name);
            glow_tensor_free(&r);

            p = tmp_path("t.npy");
            glow_status s = glow_tensor_write_npy(p, &t, &d);
            if (dt == GLOW_BF16) {
                /* NumPy has no bfloat16: refused, not written wrongly. */
                CHECK_EQ(s, GLOW_ERR_UNSUPPORTED);
                CHECK_CONTAINS(d.msg, "bf16");
                glow_diag_clear(&d);
            } else {
                CHECK_EQ(s, GLOW_OK);
                name = NULL;
                CHECK_EQ(glow_tensor_read_file(p, &r, &name, &d), GLOW_OK);
                CHECK(glow_type_equal(&t.type, &r.type));
                CHECK(glow_tensor_equal(&t, &r));
                CHECK_STR_EQ(name, "");
                free(name);
                glow_tensor_free(&r);
                /* The header is padded so that the data starts on a 64-byte boundary. */
                uint8_t *raw;
                size_t size;
                CHECK_EQ(glow_read_file(p, &raw, &size, &d), GLOW_OK);
                size_t hdr = size - glow_tensor_bytes(&t);
                CHECK_EQ(hdr % 64, 0);
                CHECK_EQ(raw[hdr - 1], '\n');
                CHECK_EQ(raw[6], 1);
                free(raw);
            }
            if (d.status != GLOW_OK)
                fprintf(stderr, "%s rank %d: %s\n", glow_dtype_name(dt), rank, d.msg);
            glow_tensor_free(&t);
        }
    }
}

static void test_node_suite_file(void)
{
    const char *shared = getenv("GLOWC_SHARED");
    if (!shared) {
        fprintf(stderr, "GLOWC_SHARED not set; skipping the node-suite file\n");
        return;
    }
    char path[1024];
    snprintf(path, sizeof(path), "%s/onnx-node-tests/node/test_add/test_data_set_0/input_0.pb",
             shared);
    glow_tensor t;
    char *name = NULL;
    glow_diag d = { 0 };
    CHECK_EQ(glow_tensor_read_file(path, &t, &name, &d), GLOW_OK);
    if (d.status != GLOW_OK) {
        fprintf(stderr, "%s\n", d.msg);
        return;
    }
    CHECK_EQ(t.type.dtype, GLOW_F32);
    CHECK_EQ(t.type.rank, 3);
    CHECK_EQ(t.type.dims[0], 3);
    CHECK_EQ(t.type.dims[1], 4);
    CHECK_EQ(t.type.dims[2], 5);
    CHECK_STR_EQ(name, "x");
    free(name);
    glow_tensor_free(&t);

    /* A SequenceProto is not a tensor: refused with a message saying so. */
    snprintf(path, sizeof(path), "%s/onnx-node-tests/node/test_sequence_insert_at_back/"
             "test_data_set_0/input_0.pb", shared);
    if (access(path, R_OK) == 0) {
        CHECK_EQ(glow_tensor_read_file(path, &t, NULL, &d), GLOW_ERR_UNSUPPORTED);
        CHECK_CONTAINS(d.msg, "SequenceProto");
        glow_diag_clear(&d);
    }
}

/* Packs a hand-made TensorProto and reads it back through glow_tensor_read_pb. */
static glow_status read_proto(Onnx__TensorProto *tp, glow_tensor *t, glow_diag *d)
{
    size_t n = onnx__tensor_proto__get_packed_size(tp);
    uint8_t *buf = malloc(n + 1);
    onnx__tensor_proto__pack(tp, buf);
    glow_status s = glow_tensor_read_pb(buf, n, t, NULL, d);
    free(buf);
    return s;
}

static void test_typed_fields(void)
{
    int64_t dims[2] = { 2, 2 };
    glow_tensor t;
    glow_diag d = { 0 };
    Onnx__TensorProto tp;

    onnx__tensor_proto__init(&tp);
    float f[4] = { 1.5f, -2, 3, 4 };
    tp.n_dims = 2, tp.dims = dims, tp.has_data_type = 1, tp.data_type = 1;
    tp.n_float_data = 4, tp.float_data = f;
    CHECK_EQ(read_proto(&tp, &t, &d), GLOW_OK);
    CHECK_NEAR(((float *)t.data)[0], 1.5, 0);
    CHECK_NEAR(((float *)t.data)[1], -2, 0);
    glow_tensor_free(&t);

    /* Empty tensors have no data at all. */
    int64_t zero[2] = { 0, 3 };
    tp.dims = zero, tp.n_float_data = 0, tp.float_data = NULL;
    CHECK_EQ(read_proto(&tp, &t, &d), GLOW_OK);
    CHECK_EQ(glow_type_numel(&t.type), 0);
    glow_tensor_free(&t);
    tp.dims = dims, tp.n_float_data = 4, tp.float_data = f;

    /* Count mismatch: 3 values for 4 elements. */
    tp.n_float_data = 3;
    CHECK_EQ(read_proto(&tp, &t, &d), GLOW_ERR_PARSE);
    CHECK_CONTAINS(d.msg, "float_data");
    glow_diag_clear(&d);

    /* f16 bits, i8, bool and u16 live in int32_data. */
    int32_t bits[4] = { 0x3c00, 0xc000, 0, 0x7bff };
    onnx__tensor_proto__init(&tp);
    tp.n_dims = 2, tp.dims = dims, tp.has_data_type = 1, tp.data_type = 10;
    tp.n_int32_data = 4, tp.int32_data = bits;
    CHECK_EQ(read_proto(&tp, &t, &d), GLOW_OK);
    CHECK_EQ(t.type.dtype, GLOW_F16);
    CHECK_NEAR(glow_load_f64(GLOW_F16, t.data, 0), 1.0, 0);
    CHECK_NEAR(glow_load_f64(GLOW_F16, t.data, 1), -2.0, 0);
    CHECK_NEAR(glow_load_f64(GLOW_F16, t.data, 3), 65504.0, 0);
    glow_tensor_free(&t);

    int32_t small[4] = { -128, 127, -1, 5 };
    tp.data_type = 3;   /* i8 */
    tp.int32_data = small;
    CHECK_EQ(read_proto(&tp, &t, &d), GLOW_OK);
    CHECK_EQ(((int8_t *)t.data)[0], -128);
    CHECK_EQ(((int8_t *)t.data)[2], -1);
    glow_tensor_free(&t);

    tp.data_type = 9;   /* bool: any non-zero is true */
    CHECK_EQ(read_proto(&tp, &t, &d), GLOW_OK);
    CHECK_EQ(((uint8_t *)t.data)[0], 1);
    CHECK_EQ(((uint8_t *)t.data)[3], 1);
    glow_tensor_free(&t);

    int64_t big[4] = { INT64_MIN, -1, 0, INT64_MAX };
    onnx__tensor_proto__init(&tp);
    tp.n_dims = 2, tp.dims = dims, tp.has_data_type = 1, tp.data_type = 7;
    tp.n_int64_data = 4, tp.int64_data = big;
    CHECK_EQ(read_proto(&tp, &t, &d), GLOW_OK);
    CHECK(((int64_t *)t.data)[0] == INT64_MIN && ((int64_t *)t.data)[3] == INT64_MAX);
    glow_tensor_free(&t);

    double dd[4] = { 0.1, -1e300, 2, 3 };
    onnx__tensor_proto__init(&tp);
    tp.n_dims = 2, tp.dims = dims, tp.has_data_type = 1, tp.data_type = 11;
    tp.n_double_data = 4, tp.double_data = dd;
    CHECK_EQ(read_proto(&tp, &t, &d), GLOW_OK);
    CHECK(((double *)t.data)[1] == -1e300);
    glow_tensor_free(&t);

    uint64_t uu[4] = { 0, 1, 0xffffffffu, 7 };
    onnx__tensor_proto__init(&tp);
    tp.n_dims = 2, tp.dims = dims, tp.has_data_type = 1, tp.data_type = 12;   /* u32 */
    tp.n_uint64_data = 4, tp.uint64_data = uu;
    CHECK_EQ(read_proto(&tp, &t, &d), GLOW_OK);
    CHECK_EQ(((uint32_t *)t.data)[2], 0xffffffffu);
    glow_tensor_free(&t);
    uu[3] = UINT64_MAX;
    tp.data_type = 13;   /* u64 */
    CHECK_EQ(read_proto(&tp, &t, &d), GLOW_OK);
    CHECK(((uint64_t *)t.data)[3] == UINT64_MAX);
    glow_tensor_free(&t);

    /* Strings without their string_data, external data, unknown kinds, negative dims,
     * absurd sizes, rank 7. */
    onnx__tensor_proto__init(&tp);
    tp.n_dims = 2, tp.dims = dims, tp.has_data_type = 1, tp.data_type = 8;
    tp.name = "strs";
    CHECK_EQ(read_proto(&tp, &t, &d), GLOW_ERR_PARSE);
    CHECK_CONTAINS(d.msg, "strs");
    CHECK_CONTAINS(d.msg, "string_data");
    glow_diag_clear(&d);
    tp.data_type = 1;
    tp.has_data_location = 1, tp.data_location = 1;
    CHECK_EQ(read_proto(&tp, &t, &d), GLOW_ERR_UNSUPPORTED);
    CHECK_CONTAINS(d.msg, "external");
    glow_diag_clear(&d);
    tp.has_data_location = 0;
    tp.data_type = 14;
    CHECK_EQ(read_proto(&tp, &t, &d), GLOW_ERR_UNSUPPORTED);
    glow_diag_clear(&d);
    tp.data_type = 1;
    int64_t neg[2] = { 2, -1 };
    tp.dims = neg;
    CHECK_EQ(read_proto(&tp, &t, &d), GLOW_ERR_PARSE);
    glow_diag_clear(&d);
    int64_t huge[2] = { (int64_t)1 << 40, (int64_t)1 << 40 };
    tp.dims = huge;
    CHECK_EQ(read_proto(&tp, &t, &d), GLOW_ERR_TOO_LARGE);
    CHECK_CONTAINS(d.msg, "strs");
    glow_diag_clear(&d);
    int64_t mid[2] = { (int64_t)1 << 20, (int64_t)1 << 20 };   /* 4 TiB declared, no data */
    tp.dims = mid;
    CHECK(read_proto(&tp, &t, &d) != GLOW_OK);
    glow_diag_clear(&d);
    int64_t nine[9] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 };   /* one more than GLOW_MAX_DIMS */
    tp.dims = nine, tp.n_dims = 9;
    float one = 1;
    tp.n_float_data = 1, tp.float_data = &one;
    CHECK_EQ(read_proto(&tp, &t, &d), GLOW_ERR_UNSUPPORTED);
    glow_diag_clear(&d);

    /* Not a protobuf at all. */
    uint8_t junk[] = { 0xff, 0xff, 0xff, 0xff, 0xff };
    CHECK_EQ(glow_tensor_read_pb(junk, sizeof(junk), &t, NULL, &d), GLOW_ERR_PARSE);
    glow_diag_clear(&d);
}

/* Builds an .npy image: magic, version, header text, then `data`. */
static size_t make_npy(uint8_t *out, int version, const char *header, const void *data,
                       size_t bytes)
{
    size_t hl = strlen(header), n = 0;
    memcpy(out, "\x93NUMPY", 6);
    out[6] = (uint8_t)version;
    out[7] = 0;
    if (version == 1) {
        out[8] = (uint8_t)hl, out[9] = (uint8_t)(hl >> 8);
        n = 10;
    } else {
        out[8] = (uint8_t)hl, out[9] = (uint8_t)(hl >> 8), out[10] = 0, out[11] = 0;
        n = 12;
    }
    memcpy(out + n, header, hl);
    n += hl;
    memcpy(out + n, data, bytes);
    return n + bytes;
}

static void test_npy_headers(void)
{
    uint8_t buf[1024];
    float data[6] = { 1, 2, 3, 4, 5, 6 };
    glow_tensor t;
    glow_diag d = { 0 };

    /* Other key orders, spacing, version 2 and 3, "(6,)". */
    size_t n = make_npy(buf, 2, "{ \"shape\" : (6,) ,'fortran_order':False, 'descr':'<f4'}  \n",
                        data, sizeof(data));
    CHECK_EQ(glow_tensor_read_npy(buf, n, &t, &d), GLOW_OK);
    CHECK_EQ(t.type.rank, 1);
    CHECK_EQ(t.type.dims[0], 6);
    CHECK_NEAR(((float *)t.data)[5], 6, 0);
    glow_tensor_free(&t);
    n = make_npy(buf, 3, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", data,
                 sizeof(data));
    CHECK_EQ(glow_tensor_read_npy(buf, n, &t, &d), GLOW_OK);
    CHECK_EQ(t.type.rank, 2);
    glow_tensor_free(&t);

    static const struct {
        const char *header;
        glow_status want;
    } bad[] = {
        { "{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", GLOW_ERR_PARSE },
        { "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, }", GLOW_ERR_PARSE },
        { "{'descr': '<f4', 'fortran_order': False, 'shape': 6}", GLOW_ERR_PARSE },
        { "{'descr': '<f4', 'fortran_order': False}", GLOW_ERR_PARSE },
        { "{'descr': '<f4', 'fortran_order': True, 'shape': (6,)}", GLOW_ERR_UNSUPPORTED },
        { "{'descr': '>f4', 'fortran_order': False, 'shape': (6,)}", GLOW_ERR_UNSUPPORTED },
        { "{'descr': '<c8', 'fortran_order': False, 'shape': (3,)}", GLOW_ERR_UNSUPPORTED },
        { "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (6,)}", GLOW_ERR_PARSE },
        { "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,6)}", GLOW_ERR_PARSE },
        { "{'descr': '<f4', 'fortran_order': False, 'shape': (5,)}", GLOW_ERR_PARSE },
        { "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
          GLOW_ERR_PARSE },
        { "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 16)}",
          GLOW_ERR_TOO_LARGE },
        { "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), 'extra': 1}", GLOW_ERR_PARSE },
        { "{'descr': '<f4', 'fortran_order': Fals", GLOW_ERR_PARSE },
        { "{'descr': '<f4", GLOW_ERR_PARSE },
        { "", GLOW_ERR_PARSE },
        { "garbage", GLOW_ERR_PARSE },
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        n = make_npy(buf, 1, bad[i].header, data, sizeof(data));
        glow_status s = glow_tensor_read_npy(buf, n, &t, &d);
        if (s != bad[i].want)
            fprintf(stderr, "header %zu: %s: got %s\n", i, bad[i].header, glow_status_name(s));
        CHECK_EQ(s, bad[i].want);
        CHECK(d.msg[0] != 0);
        glow_diag_clear(&d);
    }

    /* Every truncation of a valid file fails cleanly. */
    n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", data,
                 sizeof(data));
    for (size_t len = 0; len < n; len++) {
        uint8_t *copy = malloc(len + 1);   /* exact size, so ASan sees any overread */
        memcpy(copy, buf, len);
        CHECK(glow_tensor_read_npy(copy, len, &t, &d) != GLOW_OK);
        glow_diag_clear(&d);
        free(copy);
    }
    /* A header length pointing past the end, and an unknown version. */
    buf[8] = 0xff, buf[9] = 0xff;
    CHECK_EQ(glow_tensor_read_npy(buf, n, &t, &d), GLOW_ERR_PARSE);
    glow_diag_clear(&d);
    buf[6] = 9;
    CHECK_EQ(glow_tensor_read_npy(buf, n, &t, &d), GLOW_ERR_UNSUPPORTED);
    glow_diag_clear(&d);

    /* A missing file names itself. */
    CHECK(glow_tensor_read_file(tmp_path("absent.npy"), &t, NULL, &d) != GLOW_OK);
    CHECK_CONTAINS(d.msg, "absent.npy");
    glow_diag_clear(&d);
}

int main(void)
{
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/glowc_tensor_file_XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_round_trips();
    test_node_suite_file();
    test_typed_fields();
    test_npy_headers();
    unlink(tmp_path("t.pb"));
    unlink(tmp_path("t.npy"));
    rmdir(tmpdir);
    return CHECK_DONE();
}
