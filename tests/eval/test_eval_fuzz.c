// test_eval_fuzz.c - Random nodes (kinds, shapes, kinds of elements, attributes, index values)
// through glow_eval_node: every call must succeed or fail with a message, never crash or leak
// (run it under the ASan/UBSan build).
#include "check.h"
#include "eval/eval.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return n ? (uint32_t)(rng >> 33) % n : 0;
}

static const glow_dtype dtypes[] = { GLOW_F32, GLOW_F16, GLOW_I64, GLOW_I32, GLOW_U8, GLOW_BOOL,
                                     GLOW_F64, GLOW_I8 };

static const char *const strs[] = { "constant", "reflect", "edge", "wrap", "DCR", "CRD",
                                    "nearest", "linear", "cubic", "none", "add", "mul", "max",
                                    "min", "LEFT", "RIGHT", "tanh", "half_pixel", "align_corners",
                                    "asymmetric", "tf_crop_and_resize", "floor", "ceil", "bogus" };

static glow_type rand_type(int rank)
{
    int64_t dims[GLOW_MAX_DIMS];
    for (int i = 0; i < rank; i++)
        dims[i] = rnd(4);
    glow_type t = glow_type_make(dtypes[rnd(sizeof dtypes / sizeof dtypes[0])], rank, dims);
    return t;
}

static glow_node *rand_constant(glow_module *m, glow_type t)
{
    glow_node *c = glow_constant_create(m, "c", &t, NULL);
    if (!c)
        return NULL;
    int64_t count = glow_type_numel(&t);
    for (int64_t i = 0; i < count; i++) {
        /* Small values, many of them valid indices, some negative or out of range. */
        int64_t v = (int64_t)rnd(9) - 4;
        if (glow_dtype_is_float(t.dtype))
            glow_store_f64(t.dtype, c->payload.data, (size_t)i, (double)v * 0.75);
        else
            glow_store_i64(t.dtype, c->payload.data, (size_t)i, v);
    }
    return c;
}

static void set_rand_attr(glow_node *n, glow_attr_id a, int rank)
{
    int64_t ints[2 * GLOW_MAX_DIMS + 2];
    float floats[GLOW_MAX_DIMS * 2];
    int count = rnd(4) == 0 ? (int)rnd(2 * GLOW_MAX_DIMS) : rnd(2) ? rank : 2 * rank;
    for (int i = 0; i < count; i++) {
        ints[i] = (int64_t)rnd(8) - 3;
        floats[i] = (float)rnd(9) * 0.5f;
    }
    switch (glow_attr_kind_of(a)) {
    case AK_INT: glow_node_set_int(n, a, rnd(20) == 0 ? INT64_MAX : (int64_t)rnd(7) - 2); break;
    case AK_FLOAT: glow_node_set_float(n, a, (double)rnd(9) * 0.5 - 1); break;
    case AK_INTS: glow_node_set_ints(n, a, ints, count); break;
    case AK_FLOATS: glow_node_set_floats(n, a, floats, count); break;
    case AK_STR: glow_node_set_str(n, a, strs[rnd(sizeof strs / sizeof strs[0])]); break;
    }
}

static int evaluated, succeeded;

static void one(glow_module *m, glow_function *f, glow_node_kind k)
{
    int lo = glow_node_kind_min_in(k), hi = glow_node_kind_max_in(k);
    if (hi > 6)
        hi = 6;
    int nin = lo + (int)rnd((uint32_t)(hi - lo + 1)), rank = (int)rnd(5);
    glow_value ins[6];
    glow_tensor tins[6];
    glow_type t0 = rand_type(rank);
    for (int i = 0; i < nin; i++) {
        /* Operands mostly share operand 0's type, so more nodes get past type checks. */
        glow_type t = rnd(3) ? t0 : rand_type(rnd(3) ? rank : (int)rnd(5));
        if (rnd(4) == 0)
            t.dtype = GLOW_I64;
        glow_node *c = rand_constant(m, t);
        if (!c)
            return;
        ins[i] = glow_val(c, 0);
        tins[i] = c->payload;
    }
    int nout = glow_node_kind_max_out(k);
    if (nout > 3)   /* If and Loop take any number: three are enough here */
        nout = 3;
    glow_type outs[3] = { t0, t0, glow_type_make(GLOW_I64, rank, t0.dims) };
    glow_node *n = glow_node_create(f, k, "fuzz", ins, nin, outs, nout < 1 ? 1 : nout);
    /* Required attributes (sometimes left out), plus an occasional stray one. */
    char req[256];
    snprintf(req, sizeof req, "%s", glow_node_kind_required_attrs(k));
    for (char *s = strtok(req, " "); s; s = strtok(NULL, " ")) {
        glow_attr_id a;
        if (glow_attr_from_name(s, &a) && rnd(8))
            set_rand_attr(n, a, rank);
    }
    if (rnd(4) == 0)
        set_rand_attr(n, (glow_attr_id)rnd(GA_COUNT), rank);
    /* Real result types where inference can give them, else the made-up ones. */
    glow_diag d = { 0 };
    if (rnd(4))
        (void)glow_infer_types(n, &d);
    glow_tensor res[3];
    memset(res, 0, sizeof res);
    glow_diag_clear(&d);
    bool supported = glow_eval_supported(n);
    glow_status s = glow_eval_node(n, tins, res, &d);
    evaluated++;
    CHECK(s != GLOW_OK || supported);
    if (s == GLOW_OK) {
        succeeded++;
        for (uint32_t i = 0; i < n->nout; i++)
            glow_tensor_free(&res[i]);
    } else {
        CHECK(d.msg[0] != 0);
        for (uint32_t i = 0; i < n->nout; i++)
            CHECK(res[i].data == NULL);
    }
    glow_node_erase(n);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 25; /* ~13k nodes: seconds in release, a minute under ASan */
    for (int r = 0; r < rounds; r++) {
        glow_module *m = glow_module_create();
        glow_function *f = glow_function_create(m, "main");
        for (int k = 0; k < NK_COUNT; k++) {
            if (glow_node_kind_flags((glow_node_kind)k) & (NF_STORAGE | NF_SIDE_EFFECT))
                continue;
            for (int i = 0; i < 4; i++)
                one(m, f, (glow_node_kind)k);
        }
        glow_module_destroy(m);
    }
    printf("%d random nodes evaluated, %d succeeded\n", evaluated, succeeded);
    CHECK(succeeded > evaluated / 20);
    return CHECK_DONE();
}
