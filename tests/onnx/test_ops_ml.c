// test_ops_ml.c - ai.onnx.ml ops on numbers (onnx_ops_ml.c): the node-suite tests evaluated
// node by node, and TreeEnsemble with two trees, every split mode, missing values sent to the
// true branch and each aggregate function against a direct tree walk.
#include <float.h>
#include <math.h>

#include "check.h"
#include "testlib/cf_eval.h"
#include "testlib/node_eval.h"
#include "testlib/onnx_build.h"

#define S(...) ((const char *[]){ __VA_ARGS__ })
#define D(...) ((int64_t[]){ __VA_ARGS__ })

static const char *const passing[] = {
    "test_ai_onnx_ml_binarizer",
    "test_ai_onnx_ml_array_feature_extractor",
    "test_ai_onnx_ml_tree_ensemble_set_membership",
    "test_ai_onnx_ml_tree_ensemble_single_tree",
};

/* Two trees over 2 features. Tree 0: node 0 (x0 <= 0.5) -> node 1 (x1 > 1: leaf 0 | leaf 1)
 * | node 2 (x0 == 2: leaf 2 | node 3 (x1 != 3: leaf 3 | leaf 4)). Tree 1: node 4 (x1 >= 0,
 * NaN true) -> leaf 5 | node 5 (x0 < -1: leaf 6 | node 6 (x1 member {-2, -5}: leaf 7 |
 * leaf 8)). */
enum { NN = 7, NL = 9, NT = 3, ROWS = 8 };
static const int64_t feat[NN] = { 0, 1, 0, 1, 1, 0, 1 };
static const uint8_t modes[NN] = { 0, 3, 4, 5, 2, 1, 6 };
static const float splits[NN] = { 0.5f, 1, 2, 3, 0, -1, 0 };
static const int64_t tid[NN] = { 1, 0, 2, 3, 5, 6, 7 }, tleaf[NN] = { 0, 1, 1, 1, 1, 1, 1 };
static const int64_t fid[NN] = { 2, 1, 3, 4, 5, 6, 8 }, fleaf[NN] = { 0, 1, 0, 1, 0, 0, 1 };
static const int64_t track[NN] = { 0, 0, 0, 0, 1, 0, 0 };
static const int64_t targets[NL] = { 0, 1, 2, 0, 1, 2, 0, 1, 2 };
static const float weights[NL] = { 1, 2, 4, 8, 16, 32, 64, 128, 256 };
static const float member[3] = { -2, -5, NAN };

static int walk(int node, const float *x)
{
    for (;;) {
        float v = x[feat[node]], s = splits[node];
        bool t;
        switch (modes[node]) {
        case 0: t = v <= s; break;
        case 1: t = v < s; break;
        case 2: t = v >= s; break;
        case 3: t = v > s; break;
        case 4: t = v == s; break;
        case 5: t = v != s; break;
        default: t = v == member[0] || v == member[1]; break;
        }
        if (isnan(v) && track[node])
            t = true;
        if (t ? tleaf[node] : fleaf[node])
            return (int)(t ? tid[node] : fid[node]);
        node = (int)(t ? tid[node] : fid[node]);
    }
}

static void test_tree_walk(void)
{
    float x[ROWS * 2] = { 0, 2, 0, 0, 2, 5, 3, 3, 3, 4, -2, NAN, 1, -2, 0.5f, -5 };
    for (int agg = 0; agg < 4; agg++) {
        float want[ROWS * NT];
        for (int r = 0; r < ROWS; r++) {
            double acc[NT];
            bool hit[NT] = { false };
            for (int t = 0; t < NT; t++)
                acc[t] = agg == 2 ? FLT_MAX : agg == 3 ? -FLT_MAX : 0;
            for (int tree = 0; tree < 2; tree++) {
                int leaf = walk(tree == 0 ? 0 : 4, x + 2 * r), tg = (int)targets[leaf];
                double w = weights[leaf];
                acc[tg] = agg == 2 ? (hit[tg] ? fmin(acc[tg], w) : w)
                        : agg == 3 ? (hit[tg] ? fmax(acc[tg], w) : w) : acc[tg] + w;
                hit[tg] = true;
            }
            for (int t = 0; t < NT; t++)
                want[r * NT + t] = (float)(agg == 0 ? acc[t] / 2 : acc[t]);
        }
        mk_model *mk = mk_new(0);
        mk_opset(mk, "ai.onnx.ml", 5);
        mk_input(mk, "X", MK_F32, 2, D(ROWS, 2));
        Onnx__NodeProto *n = mk_node_domain(mk, "ai.onnx.ml", "TreeEnsemble", "te", 1, S("X"),
                                            1, S("Y"));
        mk_attr_int(mk, n, "aggregate_function", agg);
        mk_attr_ints(mk, n, "tree_roots", D(0, 4), 2);
        mk_attr_ints(mk, n, "nodes_featureids", feat, NN);
        mk_attr_ints(mk, n, "nodes_truenodeids", tid, NN);
        mk_attr_ints(mk, n, "nodes_trueleafs", tleaf, NN);
        mk_attr_ints(mk, n, "nodes_falsenodeids", fid, NN);
        mk_attr_ints(mk, n, "nodes_falseleafs", fleaf, NN);
        mk_attr_ints(mk, n, "nodes_missing_value_tracks_true", track, NN);
        mk_attr_ints(mk, n, "leaf_targetids", targets, NL);
        mk_attr_int(mk, n, "n_targets", NT);
        mk_attr_tensor(mk, n, "nodes_modes", mk_tensor_raw(mk, "m", MK_U8, 1, D(NN), modes, NN));
        mk_attr_tensor(mk, n, "nodes_splits",
                       mk_tensor_raw(mk, "s", MK_F32, 1, D(NN), splits, sizeof splits));
        mk_attr_tensor(mk, n, "leaf_weights",
                       mk_tensor_raw(mk, "w", MK_F32, 1, D(NL), weights, sizeof weights));
        mk_attr_tensor(mk, n, "membership_values",
                       mk_tensor_raw(mk, "v", MK_F32, 1, D(3), member, sizeof member));
        mk_output(mk, "Y", MK_F32, 2, D(ROWS, NT));
        glow_type xt = glow_type_make(GLOW_F32, 2, D(ROWS, 2)), yt = glow_type_make(GLOW_F32, 2,
                                                                                D(ROWS, NT));
        glow_tensor in, out;
        glow_diag d = { 0 };
        glow_tensor_alloc(&in, &xt, &d);
        glow_tensor_alloc(&out, &yt, &d);
        memcpy(in.data, x, sizeof x);
        memcpy(out.data, want, sizeof want);
        size_t size;
        uint8_t *bytes = mk_pack(mk, &size);
        cf_result r = cf_run_bytes(bytes, size, &in, (char *const[]){ "X" }, 1, &out, 1);
        free(bytes);
        if (r.load != GLOW_OK)
            fprintf(stderr, "aggregate %d: %s\n", agg, r.d.msg);
        CHECK_EQ(r.load, GLOW_OK);
        CHECK_EQ(r.compared, 1);
        if (r.mismatches)
            fprintf(stderr, "aggregate %d: %s\n", agg, r.mismatch_msg);
        CHECK_EQ(r.mismatches, 0);
        /* Post transforms other than NONE, SOFTMAX and LOGISTIC are refused by name. */
        if (agg == 1) {
            mk_attr_int(mk, n, "post_transform", 4);
            bytes = mk_pack(mk, &size);
            r = cf_run_bytes(bytes, size, NULL, NULL, 0, NULL, 0);
            free(bytes);
            CHECK_EQ(r.load, GLOW_ERR_UNSUPPORTED);
            CHECK_CONTAINS(r.d.msg, "post_transform 4");
        }
        glow_tensor_free(&in);
        glow_tensor_free(&out);
        mk_free(mk);
    }
}

int main(void)
{
    int failed = 0, n = (int)(sizeof passing / sizeof passing[0]);
    int pass = node_eval_all(passing, n, &failed);
    CHECK_EQ(failed, 0);
    printf("ai.onnx.ml node tests: %d/%d evaluate correctly\n", pass, n);
    test_tree_walk();
    return CHECK_DONE();
}
