// test_ops_nn.c - Loads ONNX node tests for conv, pool, norm, gemm/matmul and softmax and checks
// the node kinds, normalized attributes and result types the loaders produce.
#include "check.h"

#include "onnx/onnx.h"
#include "onnx/onnx.pb-c.h"

static char shared_dir[1024];

/* Loads <suite>/<test>/model.onnx; NULL (with the message in d) on failure. */
static glow_module *load(const char *suite, const char *test, glow_diag *d)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/onnx-node-tests/%s/%s/model.onnx", shared_dir, suite, test);
    glow_module *m = glow_module_create();
    glow_diag_clear(d);
    if (glow_onnx_load(m, path, NULL, d) != GLOW_OK) {
        fprintf(stderr, "%s: %s\n", test, d->msg);
        glow_module_destroy(m);
        return NULL;
    }
    return m;
}

/* A one-node model built in memory: f32 inputs "x0", "x1", ... with the given shapes, output
 * "y", the node's int or ints attributes as name/values pairs (count 0: a scalar int). */
typedef struct test_attr {
    const char *name;
    int64_t vals[8];
    int count;
} test_attr;

typedef struct test_input {
    int rank;
    int64_t dims[GLOW_MAX_DIMS];
} test_input;

#define MAX_TEST_IN 4

static glow_module *load_many(const char *op, int opset, const test_input *ins, int nin,
                              const test_attr *attrs, int nattr, glow_diag *d)
{
    Onnx__TensorShapeProto__Dimension dimv[MAX_TEST_IN][GLOW_MAX_DIMS];
    Onnx__TensorShapeProto__Dimension *dimp[MAX_TEST_IN][GLOW_MAX_DIMS];
    Onnx__TensorShapeProto shape[MAX_TEST_IN];
    Onnx__TypeProto__Tensor tt[MAX_TEST_IN + 1];
    Onnx__TypeProto ty[MAX_TEST_IN + 1];
    Onnx__ValueInfoProto vi[MAX_TEST_IN + 1], *vip[MAX_TEST_IN + 1];
    char names[MAX_TEST_IN][8], *inames[MAX_TEST_IN];
    for (int k = 0; k <= nin && k <= MAX_TEST_IN; k++) {
        Onnx__TypeProto__Tensor tinit = ONNX__TYPE_PROTO__TENSOR__INIT;
        Onnx__TypeProto yinit = ONNX__TYPE_PROTO__INIT;
        Onnx__ValueInfoProto vinit = ONNX__VALUE_INFO_PROTO__INIT;
        tt[k] = tinit;
        tt[k].has_elem_type = 1;
        tt[k].elem_type = 1;
        ty[k] = yinit;
        ty[k].value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
        ty[k].tensor_type = &tt[k];
        vi[k] = vinit;
        vi[k].type = &ty[k];
        vip[k] = &vi[k];
        if (k == nin) {
            vi[k].name = "y";   /* the output, shape left to inference */
            break;
        }
        snprintf(names[k], sizeof names[k], "x%d", k);
        inames[k] = names[k];
        vi[k].name = names[k];
        for (int i = 0; i < ins[k].rank; i++) {
            Onnx__TensorShapeProto__Dimension init = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
            dimv[k][i] = init;
            dimv[k][i].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            dimv[k][i].dim_value = ins[k].dims[i];
            dimp[k][i] = &dimv[k][i];
        }
        Onnx__TensorShapeProto sinit = ONNX__TENSOR_SHAPE_PROTO__INIT;
        shape[k] = sinit;
        shape[k].n_dim = (size_t)ins[k].rank;
        shape[k].dim = dimp[k];
        tt[k].shape = &shape[k];
    }

    Onnx__AttributeProto av[8], *ap[8];
    for (int i = 0; i < nattr && i < 8; i++) {
        Onnx__AttributeProto init = ONNX__ATTRIBUTE_PROTO__INIT;
        av[i] = init;
        av[i].name = (char *)attrs[i].name;
        av[i].has_type = 1;
        if (attrs[i].count == 0) {
            av[i].type = 2;
            av[i].has_i = 1;
            av[i].i = attrs[i].vals[0];
        } else {
            av[i].type = 7;
            av[i].n_ints = (size_t)attrs[i].count;
            av[i].ints = (int64_t *)attrs[i].vals;
        }
        ap[i] = &av[i];
    }
    char *ys = "y";
    Onnx__NodeProto node = ONNX__NODE_PROTO__INIT;
    node.op_type = (char *)op;
    node.name = "n0";
    node.n_input = (size_t)nin;
    node.input = inames;
    node.n_output = 1;
    node.output = &ys;
    node.n_attribute = (size_t)nattr;
    node.attribute = ap;
    Onnx__NodeProto *nodep = &node;
    Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
    g.name = "g";
    g.n_node = 1;
    g.node = &nodep;
    g.n_input = (size_t)nin;
    g.input = vip;
    g.n_output = 1;
    g.output = &vip[nin];
    Onnx__OperatorSetIdProto os = ONNX__OPERATOR_SET_ID_PROTO__INIT, *osp = &os;
    os.domain = "";
    os.has_version = 1;
    os.version = opset;
    Onnx__ModelProto mp = ONNX__MODEL_PROTO__INIT;
    mp.has_ir_version = 1;
    mp.ir_version = 7;
    mp.graph = &g;
    mp.n_opset_import = 1;
    mp.opset_import = &osp;

    size_t size = onnx__model_proto__get_packed_size(&mp);
    uint8_t *buf = malloc(size);
    onnx__model_proto__pack(&mp, buf);
    glow_module *m = glow_module_create();
    glow_diag_clear(d);
    glow_status s = glow_onnx_load_bytes(m, buf, size, NULL, d);
    free(buf);
    if (s != GLOW_OK) {
        glow_module_destroy(m);
        return NULL;
    }
    return m;
}

static glow_module *load_one(const char *op, int opset, int rank, const int64_t *dims,
                             const test_attr *attrs, int nattr, glow_diag *d)
{
    test_input in = { .rank = rank };
    memcpy(in.dims, dims, sizeof(int64_t) * (size_t)rank);
    return load_many(op, opset, &in, 1, attrs, nattr, d);
}

/* The nth node of `kind` in function main, or NULL. */
static glow_node *find(glow_module *m, glow_node_kind kind, int nth)
{
    glow_function *f = glow_module_function(m, "main");
    if (!f)
        return NULL;
    GLOW_FOR_EACH_NODE(f, n) {
        if (n->kind == kind && nth-- == 0)
            return n;
    }
    return NULL;
}

static int count(glow_module *m, glow_node_kind kind)
{
    int c = 0;
    while (find(m, kind, c))
        c++;
    return c;
}

/* "[1, 2, 3]" for an ints attribute ("-" when absent). */
static const char *ints_str(const glow_node *n, glow_attr_id a)
{
    static char buf[256];
    int cnt = 0;
    const int64_t *v = n ? glow_node_ints(n, a, &cnt) : NULL;
    if (!v && cnt == 0 && !(n && glow_node_attr(n, a)))
        return "-";
    size_t len = 0;
    len += (size_t)snprintf(buf + len, sizeof buf - len, "[");
    for (int i = 0; i < cnt; i++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%lld", i ? ", " : "",
                                (long long)v[i]);
    snprintf(buf + len, sizeof buf - len, "]");
    return buf;
}

/* Result i's type as text ("-" when there is none). */
static const char *res_str(const glow_node *n, uint32_t i)
{
    static char buf[256];
    if (!n || i >= n->nout)
        return "-";
    return glow_type_str(&n->outs[i], buf, sizeof buf);
}

static const char *val_str(glow_value v)
{
    return res_str(v.node, v.res);
}

static void test_conv(void)
{
    glow_diag d;
    glow_module *m = load("node", "test_conv_with_strides_padding", &d);
    CHECK(m != NULL);
    glow_node *c = m ? find(m, NK_CONV, 0) : NULL;
    CHECK(c != NULL);
    if (c) {
        CHECK_STR_EQ(ints_str(c, GA_KERNEL), "[3, 3]");
        CHECK_STR_EQ(ints_str(c, GA_STRIDES), "[2, 2]");
        CHECK_STR_EQ(ints_str(c, GA_PADS), "[1, 1, 1, 1]");
        CHECK_STR_EQ(ints_str(c, GA_DILATIONS), "[1, 1]");
        CHECK_EQ(glow_node_int(c, GA_GROUP, -1), 1);
        CHECK_STR_EQ(res_str(c, 0), "f32[1, 1, 4, 3]");
    }
    if (m)
        glow_module_destroy(m);

    /* SAME_LOWER with stride 2 on 5x5: 3 outputs, total padding 2 split evenly. */
    m = load("node", "test_conv_with_autopad_same", &d);
    c = m ? find(m, NK_CONV, 0) : NULL;
    CHECK(c != NULL);
    if (c) {
        CHECK_STR_EQ(ints_str(c, GA_PADS), "[1, 1, 1, 1]");
        CHECK_STR_EQ(res_str(c, 0), "f32[1, 1, 3, 3]");
    }
    if (m)
        glow_module_destroy(m);

    /* output_shape [10, 8] is one more than the natural 9x7: it becomes output_padding. */
    m = load("node", "test_convtranspose_output_shape", &d);
    c = m ? find(m, NK_CONV_TRANSPOSE, 0) : NULL;
    CHECK(c != NULL);
    if (c) {
        CHECK_STR_EQ(ints_str(c, GA_STRIDES), "[3, 2]");
        CHECK_STR_EQ(ints_str(c, GA_PADS), "[0, 0, 0, 0]");
        CHECK_STR_EQ(ints_str(c, GA_OUTPUT_PADDING), "[1, 1]");
        CHECK_STR_EQ(res_str(c, 0), "f32[1, 2, 10, 8]");
    }
    if (m)
        glow_module_destroy(m);

    /* SAME_UPPER: output = input * stride, the odd padding at the end. */
    m = load("node", "test_convtranspose_autopad_same", &d);
    c = m ? find(m, NK_CONV_TRANSPOSE, 0) : NULL;
    CHECK(c != NULL);
    if (c) {
        CHECK_STR_EQ(ints_str(c, GA_PADS), "[0, 0, 1, 1]");
        CHECK_STR_EQ(res_str(c, 0), "f32[1, 2, 6, 6]");
    }
    if (m)
        glow_module_destroy(m);
}

static void test_pool(void)
{
    glow_diag d;
    /* ceil_mode on 4x4, kernel 3, stride 2: 2 outputs, one extra end pad. */
    glow_module *m = load("node", "test_maxpool_2d_ceil", &d);
    glow_node *p = m ? find(m, NK_MAX_POOL, 0) : NULL;
    CHECK(p != NULL);
    if (p) {
        CHECK_STR_EQ(ints_str(p, GA_KERNEL), "[3, 3]");
        CHECK_STR_EQ(ints_str(p, GA_PADS), "[0, 0, 1, 1]");
        CHECK_EQ(p->nout, 1);
        CHECK_STR_EQ(res_str(p, 0), "f32[1, 1, 2, 2]");
    }
    if (m)
        glow_module_destroy(m);

    /* A last window that would start in the padding is dropped: 5 outputs, not 6. */
    m = load("node", "test_maxpool_2d_ceil_output_size_reduce_by_one", &d);
    p = m ? find(m, NK_MAX_POOL, 0) : NULL;
    CHECK(p != NULL);
    if (p)
        CHECK_STR_EQ(res_str(p, 0), "f32[1, 1, 1, 1]");
    if (m)
        glow_module_destroy(m);

    m = load("node", "test_maxpool_with_argmax_2d_precomputed_pads", &d);
    p = m ? find(m, NK_MAX_POOL, 0) : NULL;
    CHECK(p != NULL);
    if (p) {
        CHECK_STR_EQ(ints_str(p, GA_PADS), "[2, 2, 2, 2]");
        CHECK_EQ(p->nout, 2);
        CHECK_STR_EQ(res_str(p, 0), "f32[1, 1, 5, 5]");
        CHECK_STR_EQ(res_str(p, 1), "i64[1, 1, 5, 5]");
    }
    if (m)
        glow_module_destroy(m);

    m = load("node", "test_averagepool_2d_same_upper", &d);
    p = m ? find(m, NK_AVG_POOL, 0) : NULL;
    CHECK(p != NULL);
    if (p) {
        CHECK_STR_EQ(ints_str(p, GA_PADS), "[0, 0, 1, 1]");
        CHECK_EQ(glow_node_int(p, GA_COUNT_INCLUDE_PAD, -1), 0);
        CHECK_STR_EQ(res_str(p, 0), "f32[1, 3, 32, 32]");
    }
    if (m)
        glow_module_destroy(m);

    /* count_include_pad with ceil_mode: the end pads added for ceil_mode are recorded in
     * ceil_extra so the evaluator does not count them (ONNX counts the model's pads only). */
    m = load("node", "test_averagepool_3d_dilations_large_count_include_pad_is_1_ceil_mode_is_True",
             &d);
    p = m ? find(m, NK_AVG_POOL, 0) : NULL;
    CHECK(p != NULL);
    if (p) {
        CHECK_STR_EQ(ints_str(p, GA_PADS), "[0, 0, 0, 1, 1, 1]");
        CHECK_STR_EQ(ints_str(p, GA_CEIL_EXTRA), "[1, 1, 1]");
        CHECK_EQ(glow_node_int(p, GA_COUNT_INCLUDE_PAD, -1), 1);
    }
    if (m)
        glow_module_destroy(m);
    /* Without count_include_pad the extra padding is never counted: no attribute. */
    m = load("node", "test_averagepool_3d_dilations_large_count_include_pad_is_0_ceil_mode_is_True",
             &d);
    p = m ? find(m, NK_AVG_POOL, 0) : NULL;
    CHECK(p != NULL && !glow_node_attr(p, GA_CEIL_EXTRA));
    if (m)
        glow_module_destroy(m);

    m = load("node", "test_globalaveragepool", &d);
    p = m ? find(m, NK_AVG_POOL, 0) : NULL;
    CHECK(p != NULL);
    if (p) {
        CHECK_STR_EQ(ints_str(p, GA_KERNEL), "[5, 5]");
        CHECK_STR_EQ(ints_str(p, GA_PADS), "[0, 0, 0, 0]");
        CHECK_STR_EQ(res_str(p, 0), "f32[1, 3, 1, 1]");
    }
    if (m)
        glow_module_destroy(m);
}

static void test_norm(void)
{
    glow_diag d;
    glow_module *m = load("node", "test_batchnorm_example", &d);
    glow_node *n = m ? find(m, NK_BATCH_NORM, 0) : NULL;
    CHECK(n != NULL);
    if (n) {
        CHECK_EQ(n->nin, 5);
        CHECK_STR_EQ(res_str(n, 0), "f32[2, 3, 4, 5]");
    }
    if (m)
        glow_module_destroy(m);

    /* Training mode normalizes with the batch's own statistics: reductions, no BATCH_NORM
     * (tests/onnx/test_ops_train.c checks the values). */
    m = load("node", "test_batchnorm_example_training_mode", &d);
    CHECK(m != NULL);
    CHECK(m && find(m, NK_BATCH_NORM, 0) == NULL);
    CHECK(m && count(m, NK_REDUCE_MEAN) == 2);
    if (m)
        glow_module_destroy(m);

    m = load("node", "test_layer_normalization_4d_axis1", &d);
    n = m ? find(m, NK_LAYER_NORM, 0) : NULL;
    CHECK(n != NULL);
    if (n) {
        CHECK_EQ(glow_node_int(n, GA_AXIS, -1), 1);
        CHECK_EQ(n->nout, 3);
        CHECK_STR_EQ(res_str(n, 0), "f32[2, 3, 4, 5]");
        CHECK_STR_EQ(res_str(n, 1), "f32[2, 1, 1, 1]");
        CHECK_STR_EQ(res_str(n, 2), "f32[2, 1, 1, 1]");
        CHECK_STR_EQ(val_str(n->ins[1]), "f32[3, 4, 5]");
    }
    if (m)
        glow_module_destroy(m);

    /* Opset 18 per-group scale and bias become per-channel ones. */
    m = load("node", "test_group_normalization_example", &d);
    n = m ? find(m, NK_GROUP_NORM, 0) : NULL;
    CHECK(n != NULL);
    if (n) {
        CHECK_EQ(glow_node_int(n, GA_NUM_GROUPS, -1), 2);
        CHECK_STR_EQ(val_str(n->ins[1]), "f32[4]");
        CHECK_STR_EQ(val_str(n->ins[2]), "f32[4]");
    }
    if (m)
        glow_module_destroy(m);

    /* Opset 18: scale [2] for 2 groups of 3 channels is repeated to [6]. */
    test_input gin[3] = { { 4, { 1, 6, 2, 2 } }, { 1, { 2 } }, { 1, { 2 } } };
    test_attr groups = { "num_groups", { 2 }, 0 };
    m = load_many("GroupNormalization", 18, gin, 3, &groups, 1, &d);
    n = m ? find(m, NK_GROUP_NORM, 0) : NULL;
    CHECK(n != NULL);
    if (n) {
        CHECK_STR_EQ(val_str(n->ins[1]), "f32[6]");
        CHECK_STR_EQ(val_str(n->ins[2]), "f32[6]");
        CHECK_EQ(count(m, NK_BROADCAST), 2);
    }
    if (m)
        glow_module_destroy(m);

    /* MeanVarianceNormalization is built from primitives. */
    m = load("node", "test_mvn", &d);
    CHECK(m != NULL);
    if (m) {
        CHECK_EQ(count(m, NK_REDUCE_MEAN), 2);
        n = find(m, NK_REDUCE_MEAN, 0);
        CHECK_STR_EQ(ints_str(n, GA_AXES), "[0, 2, 3]");
        CHECK_EQ(count(m, NK_SQRT), 1);
        CHECK_EQ(count(m, NK_DIV), 1);
        glow_module_destroy(m);
    }
}

static void test_linalg(void)
{
    glow_diag d;
    glow_module *m = load("node", "test_gemm_all_attributes", &d);
    glow_node *n = m ? find(m, NK_GEMM, 0) : NULL;
    CHECK(n != NULL);
    if (n) {
        CHECK_EQ(glow_node_int(n, GA_TRANS_A, -1), 1);
        CHECK_EQ(glow_node_int(n, GA_TRANS_B, -1), 1);
        CHECK_NEAR(glow_node_float(n, GA_ALPHA, 0), 0.25, 1e-6);
        CHECK_NEAR(glow_node_float(n, GA_BETA, 0), 0.35, 1e-6);
        CHECK_EQ(n->nin, 3);
        CHECK_STR_EQ(val_str(n->ins[2]), "f32[3, 5]");
        CHECK_STR_EQ(res_str(n, 0), "f32[3, 5]");
    }
    if (m)
        glow_module_destroy(m);

    m = load("node", "test_matmul_2d", &d);
    n = m ? find(m, NK_MATMUL, 0) : NULL;
    CHECK(n != NULL);
    if (n)
        CHECK_STR_EQ(res_str(n, 0), "f32[3, 3]");
    if (m)
        glow_module_destroy(m);

    /* Rank-1 B: [1, 2, 4, 3] x [3] -> [1, 2, 4, 1] reshaped to [1, 2, 4]. */
    m = load("node", "test_matmul_4d_1d", &d);
    n = m ? find(m, NK_MATMUL, 0) : NULL;
    CHECK(n != NULL);
    if (n) {
        CHECK_STR_EQ(val_str(n->ins[1]), "f32[1, 2, 3, 1]");
        CHECK_STR_EQ(res_str(n, 0), "f32[1, 2, 4, 1]");
        glow_node *last = glow_module_function(m, "main")->nodes.last;
        CHECK_STR_EQ(val_str(last->ins[0]), "f32[1, 2, 4]");
    }
    if (m)
        glow_module_destroy(m);

    /* Batch dims [2] and [3, 2] broadcast to [3, 2] on both sides. */
    m = load("node", "test_matmul_bcast", &d);
    n = m ? find(m, NK_MATMUL, 0) : NULL;
    CHECK(n != NULL);
    if (n) {
        CHECK_STR_EQ(val_str(n->ins[0]), "f32[3, 2, 3, 4]");
        CHECK_STR_EQ(val_str(n->ins[1]), "f32[3, 2, 4, 2]");
        CHECK_STR_EQ(res_str(n, 0), "f32[3, 2, 3, 2]");
    }
    if (m)
        glow_module_destroy(m);

    /* Einsum: a batched product is one MatMul; an inner product is reshaped around one. */
    m = load("node", "test_einsum_batch_matmul", &d);
    CHECK(m != NULL);
    if (m) {
        CHECK_EQ(count(m, NK_MATMUL), 1);
        CHECK_STR_EQ(res_str(find(m, NK_MATMUL, 0), 0), "f64[5, 2, 4]");
        glow_module_destroy(m);
    }
    m = load("node", "test_einsum_inner_prod", &d);
    CHECK(m != NULL);
    if (m) {
        CHECK_STR_EQ(res_str(find(m, NK_MATMUL, 0), 0), "f64[1, 1, 1]");
        glow_node *last = glow_module_function(m, "main")->nodes.last;
        CHECK_STR_EQ(val_str(last->ins[0]), "f64[]");
        glow_module_destroy(m);
    }
    m = load("node", "test_einsum_transpose", &d);
    n = m ? find(m, NK_TRANSPOSE, 0) : NULL;
    CHECK(n != NULL);
    if (n)
        CHECK_STR_EQ(ints_str(n, GA_PERM), "[1, 0]");
    if (m)
        glow_module_destroy(m);
    /* "...ii ->...i": the ellipsis becomes a subscript, the repeat a strided Slice (the
     * diagonal; tests/onnx/test_ops_modes.c checks the values). */
    m = load("node", "test_einsum_batch_diagonal", &d);
    CHECK(m != NULL);
    CHECK(m && find(m, NK_SLICE, 0) != NULL);
    if (m)
        glow_module_destroy(m);

    /* Two vectors give a scalar. */
    m = load("node", "test_matmul_1d_1d", &d);
    CHECK(m != NULL);
    if (m) {
        glow_node *last = glow_module_function(m, "main")->nodes.last;
        CHECK_STR_EQ(val_str(last->ins[0]), "f32[]");
        glow_module_destroy(m);
    }
}

static void test_softmax(void)
{
    glow_diag d;
    glow_module *m = load("node", "test_softmax_axis_0", &d);
    glow_node *n = m ? find(m, NK_SOFTMAX, 0) : NULL;
    CHECK(n != NULL);
    if (n) {
        CHECK_EQ(glow_node_int(n, GA_AXIS, -1), 0);
        CHECK_STR_EQ(res_str(n, 0), "f32[3, 4, 5]");
        CHECK_EQ(count(m, NK_RESHAPE), 0);
    }
    if (m)
        glow_module_destroy(m);

    m = load("node", "test_logsoftmax_default_axis", &d);
    n = m ? find(m, NK_LOG_SOFTMAX, 0) : NULL;
    CHECK(n != NULL);
    if (n)
        CHECK_EQ(glow_node_int(n, GA_AXIS, -1), 2);
    if (m)
        glow_module_destroy(m);

    /* Opset 11 Softmax on a non-last axis is coerced to 2-D and back. */
    int64_t dims[3] = { 2, 3, 4 };
    test_attr axis1 = { "axis", { 1 }, 0 };
    m = load_one("Softmax", 11, 3, dims, &axis1, 1, &d);
    n = m ? find(m, NK_SOFTMAX, 0) : NULL;
    CHECK(n != NULL);
    if (n) {
        CHECK_EQ(glow_node_int(n, GA_AXIS, -1), 1);
        CHECK_STR_EQ(res_str(n, 0), "f32[2, 12]");
        CHECK_EQ(count(m, NK_RESHAPE), 2);
        glow_node *last = glow_module_function(m, "main")->nodes.last;
        CHECK_STR_EQ(val_str(last->ins[0]), "f32[2, 3, 4]");
    }
    if (m)
        glow_module_destroy(m);

    /* Opset 11 Hardmax with axis 0 flattens everything into one row. */
    test_attr axis0 = { "axis", { 0 }, 0 };
    m = load_one("Hardmax", 11, 3, dims, &axis0, 1, &d);
    n = m ? find(m, NK_HARDMAX, 0) : NULL;
    CHECK(n != NULL);
    if (n)
        CHECK_STR_EQ(res_str(n, 0), "f32[1, 24]");
    if (m)
        glow_module_destroy(m);

    /* Old-opset softmax on the last axis needs no reshape. */
    m = load("pytorch-converted", "test_log_softmax_lastdim", &d);
    n = m ? find(m, NK_LOG_SOFTMAX, 0) : NULL;
    CHECK(n != NULL);
    if (n) {
        CHECK_EQ(glow_node_int(n, GA_AXIS, -1), n->outs[0].rank - 1);
        CHECK_EQ(count(m, NK_RESHAPE), 0);
    }
    if (m)
        glow_module_destroy(m);
}

/* Unsupported and malformed attributes fail with messages naming the node and the reason. */
static void test_errors(void)
{
    glow_diag d;
    int64_t dims[4] = { 1, 1, 4, 4 };
    test_attr so[2] = { { "kernel_shape", { 2, 2 }, 2 }, { "storage_order", { 2 }, 0 } };
    glow_module *m = load_one("MaxPool", 12, 4, dims, so, 2, &d);
    CHECK(m == NULL);
    CHECK_EQ(d.status, GLOW_ERR_BAD_ATTR);
    CHECK_CONTAINS(d.msg, "MaxPool 'n0' (opset 12)");
    CHECK_CONTAINS(d.msg, "storage_order=2");
    if (m)
        glow_module_destroy(m);

    test_attr bad[2] = { { "kernel_shape", { 2, 2 }, 2 }, { "pads", { 1, 1 }, 2 } };
    m = load_one("AveragePool", 11, 4, dims, bad, 2, &d);
    CHECK(m == NULL);
    CHECK_EQ(d.status, GLOW_ERR_BAD_ATTR);
    CHECK_CONTAINS(d.msg, "AveragePool 'n0'");
    CHECK_CONTAINS(d.msg, "'pads' has 2 values, expected 4");
    if (m)
        glow_module_destroy(m);

    m = load_one("MaxPool", 12, 4, dims, NULL, 0, &d);
    CHECK(m == NULL);
    CHECK_CONTAINS(d.msg, "kernel_shape");
    if (m)
        glow_module_destroy(m);

    /* A window larger than the padded input. */
    test_attr big[1] = { { "kernel_shape", { 5, 5 }, 2 } };
    m = load_one("MaxPool", 12, 4, dims, big, 1, &d);
    CHECK(m == NULL);
    CHECK_EQ(d.status, GLOW_ERR_BAD_SHAPE);
    if (m)
        glow_module_destroy(m);
}

int main(void)
{
    const char *s = getenv("GLOWC_SHARED");
    snprintf(shared_dir, sizeof shared_dir, "%s", s ? s : "../shared");
    test_conv();
    test_pool();
    test_norm();
    test_linalg();
    test_softmax();
    test_errors();
    return CHECK_DONE();
}
