// test_eval_move.c - The reference evaluator on data-movement and index nodes.
#include "eval_check.h"

static glow_node *ints_attr(glow_node *n, glow_attr_id a, const int64_t *v, int count)
{
    glow_node_set_ints(n, a, v, count);
    return n;
}

static void test_shape_ops(void)
{
    /* The Shape -> Gather -> Concat -> Reshape pattern the importer folds, in i64. */
    int64_t shape[] = { 1, 3, 224, 224 }, idx0[] = { 0 }, minus1[] = { -1 };
    glow_node *s = cst(GLOW_I64, 1, DIMS(4), shape);
    glow_node *i0 = cst(GLOW_I64, 0, NULL, idx0);
    glow_node *g = mk2(NK_GATHER, s, i0, ty(GLOW_I64, 0, NULL));
    glow_node_set_int(g, GA_AXIS, 0);
    EXPECT(g, 1);
    glow_node *m1 = cst(GLOW_I64, 1, DIMS(1), minus1);
    glow_node *cat_in[3] = { s, m1, s };
    glow_type t9 = ty(GLOW_I64, 1, DIMS(9));
    glow_node *cat = mk(NK_CONCAT, 3, cat_in, 1, &t9);
    glow_node_set_int(cat, GA_AXIS, 0);
    EXPECT(cat, 1, 3, 224, 224, -1, 1, 3, 224, 224);

    float x[6] = { 0, 1, 2, 3, 4, 5 };
    glow_node *c = cst(GLOW_F32, 2, DIMS(2, 3), x);
    EXPECT(mk1(NK_RESHAPE, c, ty(GLOW_F32, 3, DIMS(3, 1, 2))), 0, 1, 2, 3, 4, 5);
    glow_tensor out[1];
    CHECK_EQ(run(mk1(NK_RESHAPE, c, ty(GLOW_F32, 1, DIMS(5))), out), GLOW_ERR_BAD_SHAPE);
    glow_node *t = mk1(NK_TRANSPOSE, c, ty(GLOW_F32, 2, DIMS(3, 2)));
    EXPECT(ints_attr(t, GA_PERM, DIMS(1, 0), 2), 0, 3, 1, 4, 2, 5);
    glow_node *c21 = cst(GLOW_F32, 2, DIMS(2, 1), x);
    EXPECT(mk1(NK_BROADCAST, c21, ty(GLOW_F32, 3, DIMS(2, 2, 3))), 0, 0, 0, 1, 1, 1, 0, 0, 0,
           1, 1, 1);
    glow_node *c3 = cst(GLOW_F32, 1, DIMS(3), x);
    EXPECT(mk1(NK_BROADCAST, c3, ty(GLOW_F32, 2, DIMS(2, 3))), 0, 1, 2, 0, 1, 2);
    CHECK_EQ(run(mk1(NK_BROADCAST, c3, ty(GLOW_F32, 2, DIMS(2, 4))), out), GLOW_ERR_BAD_SHAPE);
    glow_node *cat_in2[2] = { c, c };
    glow_type t26 = ty(GLOW_F32, 2, DIMS(2, 6));
    glow_node *cat2 = mk(NK_CONCAT, 2, cat_in2, 1, &t26);
    glow_node_set_int(cat2, GA_AXIS, 1);
    EXPECT(cat2, 0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5);
    glow_node *tl = mk1(NK_TILE, c, ty(GLOW_F32, 2, DIMS(2, 6)));
    EXPECT(ints_attr(tl, GA_REPEATS, DIMS(1, 2), 2), 0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5);
}

static void test_slice_pad(void)
{
    float x[6] = { 0, 1, 2, 3, 4, 5 };
    glow_node *c = cst(GLOW_F32, 1, DIMS(6), x);
    /* Negative step: starts 4, ends -1 ("before 0"), step -2. */
    glow_node *s = mk1(NK_SLICE, c, ty(GLOW_F32, 1, DIMS(3)));
    ints_attr(s, GA_STARTS, DIMS(4), 1);
    ints_attr(s, GA_ENDS, DIMS(-1), 1);
    EXPECT(ints_attr(s, GA_STEPS, DIMS(-2), 1), 4, 2, 0);
    s = mk1(NK_SLICE, c, ty(GLOW_F32, 1, DIMS(6)));
    ints_attr(s, GA_STARTS, DIMS(5), 1);
    ints_attr(s, GA_ENDS, DIMS(-1), 1);
    EXPECT(ints_attr(s, GA_STEPS, DIMS(-1), 1), 5, 4, 3, 2, 1, 0);
    glow_node *c23 = cst(GLOW_F32, 2, DIMS(2, 3), x);
    s = mk1(NK_SLICE, c23, ty(GLOW_F32, 2, DIMS(1, 2)));
    ints_attr(s, GA_STARTS, DIMS(1, 0), 2);
    ints_attr(s, GA_ENDS, DIMS(2, 3), 2);
    EXPECT(ints_attr(s, GA_STEPS, DIMS(1, 2), 2), 3, 5);
    /* Huge steps select one element; unclamped starts fail. */
    s = mk1(NK_SLICE, c, ty(GLOW_F32, 1, DIMS(1)));
    ints_attr(s, GA_STARTS, DIMS(2), 1);
    ints_attr(s, GA_ENDS, DIMS(6), 1);
    EXPECT(ints_attr(s, GA_STEPS, DIMS(INT64_MAX), 1), 2);
    s = mk1(NK_SLICE, c, ty(GLOW_F32, 1, DIMS(1)));
    ints_attr(s, GA_STARTS, DIMS(7), 1);
    ints_attr(s, GA_ENDS, DIMS(8), 1);
    ints_attr(s, GA_STEPS, DIMS(1), 1);
    glow_tensor out[1];
    CHECK_EQ(run(s, out), GLOW_ERR_BAD_ATTR);

    glow_node *c3 = cst(GLOW_F32, 1, DIMS(3), (float[]){ 1, 2, 3 });
    const char *modes[] = { "reflect", "edge", "wrap", "constant" };
    const double want[4][7] = { { 3, 2, 1, 2, 3, 2, 1 }, { 1, 1, 1, 2, 3, 3, 3 },
                                { 2, 3, 1, 2, 3, 1, 2 }, { 9, 9, 1, 2, 3, 9, 9 } };
    for (int m = 0; m < 4; m++) {
        glow_node *p = mk1(NK_PAD, c3, ty(GLOW_F32, 1, DIMS(7)));
        ints_attr(p, GA_PADS, DIMS(2, 2), 2);
        glow_node_set_str(p, GA_MODE, modes[m]);
        glow_node_set_float(p, GA_VALUE, 9);
        expect_f(p, 7, want[m], 0, __LINE__);
    }
    /* Reflect further than the operand is long keeps mirroring. */
    glow_node *p = mk1(NK_PAD, c3, ty(GLOW_F32, 1, DIMS(8)));
    ints_attr(p, GA_PADS, DIMS(5, 0), 2);
    glow_node_set_str(p, GA_MODE, "reflect");
    EXPECT(p, 2, 1, 2, 3, 2, 1, 2, 3);
    /* Negative pads crop. */
    p = mk1(NK_PAD, c3, ty(GLOW_F32, 1, DIMS(3)));
    ints_attr(p, GA_PADS, DIMS(-1, 1), 2);
    glow_node_set_str(p, GA_MODE, "constant");
    EXPECT(p, 2, 3, 0);
    /* 2-D edge pad on i32. */
    glow_node *ci = cst(GLOW_I32, 2, DIMS(2, 2), (int32_t[]){ 1, 2, 3, 4 });
    p = mk1(NK_PAD, ci, ty(GLOW_I32, 2, DIMS(3, 3)));
    ints_attr(p, GA_PADS, DIMS(1, 0, 0, 1), 4);
    glow_node_set_str(p, GA_MODE, "edge");
    EXPECT(p, 1, 2, 2, 1, 2, 2, 3, 4, 4);
}

static void test_gather_scatter(void)
{
    float x[6] = { 0, 1, 2, 3, 4, 5 };
    glow_node *c = cst(GLOW_F32, 2, DIMS(3, 2), x);
    glow_node *ix = cst(GLOW_I64, 1, DIMS(2), (int64_t[]){ -1, 0 });
    glow_node *g = mk2(NK_GATHER, c, ix, ty(GLOW_F32, 2, DIMS(2, 2)));
    glow_node_set_int(g, GA_AXIS, 0);
    EXPECT(g, 4, 5, 0, 1);
    glow_node *ix32 = cst(GLOW_I32, 2, DIMS(1, 2), (int32_t[]){ 1, -2 });
    g = mk2(NK_GATHER, c, ix32, ty(GLOW_F32, 3, DIMS(3, 1, 2)));
    glow_node_set_int(g, GA_AXIS, 1);
    EXPECT(g, 1, 0, 3, 2, 5, 4);
    glow_node *bad = cst(GLOW_I64, 1, DIMS(2), (int64_t[]){ 0, 3 });
    g = mk2(NK_GATHER, c, bad, ty(GLOW_F32, 2, DIMS(2, 2)));
    glow_node_set_int(g, GA_AXIS, 0);
    glow_tensor out[1] = { { .data = (void *)1 } };
    CHECK_EQ(run(g, out), GLOW_ERR_RUNTIME);
    CHECK_CONTAINS(D.msg, "Gather");
    CHECK_CONTAINS(D.msg, "index 3");
    CHECK(out[0].data == NULL); /* nothing leaks or dangles on failure */

    glow_node *ie = cst(GLOW_I64, 2, DIMS(2, 2), (int64_t[]){ 1, 0, -1, 1 });
    glow_node *c22 = cst(GLOW_F32, 2, DIMS(2, 2), (float[]){ 1, 2, 3, 4 });
    g = mk2(NK_GATHER_ELEMENTS, c22, ie, ty(GLOW_F32, 2, DIMS(2, 2)));
    glow_node_set_int(g, GA_AXIS, 1);
    EXPECT(g, 2, 1, 4, 4);
    g = mk2(NK_GATHER_ELEMENTS, c22, ie, ty(GLOW_F32, 2, DIMS(2, 2)));
    glow_node_set_int(g, GA_AXIS, 0);
    EXPECT(g, 3, 2, 3, 4);

    /* GatherND: ONNX examples 1, 3 and the batch_dims=1 example. */
    glow_node *nd = cst(GLOW_I32, 2, DIMS(2, 2), (int32_t[]){ 0, 1, 2, 3 });
    glow_node *i1 = cst(GLOW_I64, 2, DIMS(2, 2), (int64_t[]){ 0, 0, 1, 1 });
    EXPECT(mk2(NK_GATHER_ND, nd, i1, ty(GLOW_I32, 1, DIMS(2))), 0, 3);
    glow_node *i2 = cst(GLOW_I64, 2, DIMS(2, 1), (int64_t[]){ 1, 0 });
    EXPECT(mk2(NK_GATHER_ND, nd, i2, ty(GLOW_I32, 2, DIMS(2, 2))), 2, 3, 0, 1);
    glow_node *nd3 = cst(GLOW_I32, 3, DIMS(2, 2, 2), (int32_t[]){ 0, 1, 2, 3, 4, 5, 6, 7 });
    glow_node *i3 = cst(GLOW_I64, 2, DIMS(2, 1), (int64_t[]){ 1, 0 });
    g = mk2(NK_GATHER_ND, nd3, i3, ty(GLOW_I32, 2, DIMS(2, 2)));
    glow_node_set_int(g, GA_BATCH_DIMS, 1);
    EXPECT(g, 2, 3, 4, 5);

    /* ScatterElements with and without reduction. */
    glow_node *data = cst(GLOW_F32, 2, DIMS(1, 5), (float[]){ 1, 2, 3, 4, 5 });
    glow_node *si = cst(GLOW_I64, 2, DIMS(1, 2), (int64_t[]){ 1, 1 });
    glow_node *su = cst(GLOW_F32, 2, DIMS(1, 2), (float[]){ 1.1f, 2.1f });
    glow_node *sin_[3] = { data, si, su };
    glow_type t15 = ty(GLOW_F32, 2, DIMS(1, 5));
    glow_node *se = mk(NK_SCATTER_ELEMENTS, 3, sin_, 1, &t15);
    glow_node_set_int(se, GA_AXIS, 1);
    glow_node_set_str(se, GA_REDUCTION, "add");
    EXPECT_F(se, 1e-6, 1, 5.2, 3, 4, 5);
    se = mk(NK_SCATTER_ELEMENTS, 3, sin_, 1, &t15);
    glow_node_set_int(se, GA_AXIS, 1);
    glow_node_set_str(se, GA_REDUCTION, "max");
    EXPECT_F(se, 1e-6, 1, 2.1, 3, 4, 5);

    /* ScatterND: ONNX example 1 (none) and a mul reduction on i64. */
    glow_node *d8 = cst(GLOW_I64, 1, DIMS(8), (int64_t[]){ 1, 2, 3, 4, 5, 6, 7, 8 });
    glow_node *ni = cst(GLOW_I64, 2, DIMS(4, 1), (int64_t[]){ 4, 3, 1, -1 });
    glow_node *nu = cst(GLOW_I64, 1, DIMS(4), (int64_t[]){ 9, 10, 11, 12 });
    glow_node *nin_[3] = { d8, ni, nu };
    glow_type t8 = ty(GLOW_I64, 1, DIMS(8));
    EXPECT(mk(NK_SCATTER_ND, 3, nin_, 1, &t8), 1, 11, 3, 10, 9, 6, 7, 12);
    glow_node *sn = mk(NK_SCATTER_ND, 3, nin_, 1, &t8);
    glow_node_set_str(sn, GA_REDUCTION, "mul");
    EXPECT(sn, 1, 22, 3, 40, 45, 6, 7, 96);
    glow_node *nbad = cst(GLOW_I64, 2, DIMS(4, 1), (int64_t[]){ 4, 3, 1, 8 });
    glow_node *nbad_in[3] = { d8, nbad, nu };
    CHECK_EQ(run(mk(NK_SCATTER_ND, 3, nbad_in, 1, &t8), out), GLOW_ERR_RUNTIME);
}

static void test_rearrange(void)
{
    int64_t v[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
    glow_node *c = cst(GLOW_I64, 4, DIMS(1, 8, 1, 1), v);
    glow_type t = ty(GLOW_I64, 4, DIMS(1, 2, 2, 2));
    glow_node *d2s = mk1(NK_DEPTH_TO_SPACE, c, t);
    glow_node_set_int(d2s, GA_BLOCKSIZE, 2);
    glow_node_set_str(d2s, GA_MODE, "DCR");
    EXPECT(d2s, 0, 2, 4, 6, 1, 3, 5, 7);
    glow_node *crd = mk1(NK_DEPTH_TO_SPACE, c, t);
    glow_node_set_int(crd, GA_BLOCKSIZE, 2);
    glow_node_set_str(crd, GA_MODE, "CRD");
    EXPECT(crd, 0, 1, 2, 3, 4, 5, 6, 7);
    /* SpaceToDepth undoes DCR DepthToSpace. */
    glow_node *sp = cst(GLOW_I64, 4, DIMS(1, 2, 2, 2), (int64_t[]){ 0, 2, 4, 6, 1, 3, 5, 7 });
    glow_node *s2d = mk1(NK_SPACE_TO_DEPTH, sp, ty(GLOW_I64, 4, DIMS(1, 8, 1, 1)));
    glow_node_set_int(s2d, GA_BLOCKSIZE, 2);
    EXPECT(s2d, 0, 1, 2, 3, 4, 5, 6, 7);

    float m[9] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
    glow_node *cm = cst(GLOW_F32, 2, DIMS(3, 3), m);
    glow_node *tr = mk1(NK_TRILU, cm, ty(GLOW_F32, 2, DIMS(3, 3)));
    glow_node_set_int(tr, GA_UPPER, 1);
    glow_node_set_int(tr, GA_K, 0);
    EXPECT(tr, 1, 2, 3, 0, 5, 6, 0, 0, 9);
    tr = mk1(NK_TRILU, cm, ty(GLOW_F32, 2, DIMS(3, 3)));
    glow_node_set_int(tr, GA_UPPER, 0);
    glow_node_set_int(tr, GA_K, -1);
    EXPECT(tr, 0, 0, 0, 4, 0, 0, 7, 8, 0);

    glow_node *oi = cst(GLOW_I64, 1, DIMS(4), (int64_t[]){ 0, 2, -1, 5 });
    glow_node *od = cst(GLOW_I64, 0, NULL, (int64_t[]){ 3 });
    glow_node *ov = cst(GLOW_F32, 1, DIMS(2), (float[]){ -1, 7 });
    glow_node *oin[3] = { oi, od, ov };
    glow_type t43 = ty(GLOW_F32, 2, DIMS(4, 3));
    glow_node *oh = mk(NK_ONE_HOT, 3, oin, 1, &t43);
    glow_node_set_int(oh, GA_DEPTH, 3);
    glow_node_set_int(oh, GA_AXIS, -1);
    EXPECT(oh, 7, -1, -1, -1, -1, 7, -1, -1, 7, -1, -1, -1);
    glow_type t34 = ty(GLOW_F32, 2, DIMS(3, 4));
    oh = mk(NK_ONE_HOT, 3, oin, 1, &t34);
    glow_node_set_int(oh, GA_DEPTH, 3);
    glow_node_set_int(oh, GA_AXIS, 0);
    EXPECT(oh, 7, -1, -1, -1, -1, -1, -1, -1, -1, 7, 7, -1);

    /* ReverseSequence, ONNX's batch_axis=1 example on a [4, 4] operand. */
    float rs[16];
    for (int i = 0; i < 16; i++)
        rs[i] = (float)i;
    glow_node *cr = cst(GLOW_F32, 2, DIMS(4, 4), rs);
    glow_node *lens = cst(GLOW_I64, 1, DIMS(4), (int64_t[]){ 4, 3, 2, 1 });
    glow_node *r = mk2(NK_REVERSE_SEQUENCE, cr, lens, ty(GLOW_F32, 2, DIMS(4, 4)));
    glow_node_set_int(r, GA_TIME_AXIS, 0);
    glow_node_set_int(r, GA_BATCH_AXIS, 1);
    EXPECT(r, 12, 9, 6, 3, 8, 5, 2, 7, 4, 1, 10, 11, 0, 13, 14, 15);

    /* Resize-11's tf_half_pixel_for_nn maps o to (o + 0.5) / scale (half_pixel would subtract
     * 0.5 more): halving [10, 11, 12, 13] with floor picks elements 1 and 3. */
    glow_node *rx = cst(GLOW_F32, 4, DIMS(1, 1, 1, 4), (float[]){ 10, 11, 12, 13 });
    glow_node *rz = mk1(NK_RESIZE, rx, ty(GLOW_F32, 4, DIMS(1, 1, 1, 2)));
    glow_node_set_floats(rz, GA_SCALES, (const float[]){ 1, 1, 1, 0.5f }, 4);
    glow_node_set_str(rz, GA_MODE, "nearest");
    glow_node_set_str(rz, GA_COORD_MODE, "tf_half_pixel_for_nn");
    glow_node_set_str(rz, GA_NEAREST_MODE, "floor");
    glow_node_set_float(rz, GA_CUBIC_COEFF_A, -0.75);
    glow_node_set_int(rz, GA_EXCLUDE_OUTSIDE, 0);
    glow_node_set_float(rz, GA_EXTRAPOLATION_VALUE, 0);
    EXPECT(rz, 11, 13);
    glow_diag_clear(&D);
    CHECK_EQ(glow_infer_types(rz, &D), GLOW_OK);
}

int main(void)
{
    M = glow_module_create();
    F = glow_function_create(M, "main");
    test_shape_ops();
    test_slice_pad();
    test_gather_scatter();
    test_rearrange();
    glow_module_destroy(M);
    return CHECK_DONE();
}
