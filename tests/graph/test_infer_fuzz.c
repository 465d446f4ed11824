// test_infer_fuzz.c - Every node kind has type inference, and random operands and attributes
// never crash it (run under ASan/UBSan); whatever it accepts, the verifier accepts too.
#include "check.h"
#include "graph/graph.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return n ? (uint32_t)(rng % n) : 0;
}

static const glow_dtype dtypes[] = { GLOW_F32, GLOW_F32, GLOW_F16, GLOW_I64, GLOW_I32,
                                     GLOW_BOOL, GLOW_U8, GLOW_I8Q };

static glow_type rand_type(void)
{
    int64_t dims[GLOW_MAX_DIMS];
    int rank = (int)rnd(6);
    for (int i = 0; i < rank; i++)
        dims[i] = rnd(8) == 0 ? 0 : 1 + rnd(4);
    glow_type t = glow_type_make(dtypes[rnd(sizeof dtypes / sizeof dtypes[0])], rank, dims);
    if (glow_dtype_is_quantized(t.dtype))
        t.scale = 0.5f;
    return t;
}

/* Words that are valid for some string attribute, plus one that is valid for none. */
static const char *const words[] = { "constant", "reflect", "edge", "DCR", "CRD", "none", "tanh",
                                     "add", "nearest", "linear", "half_pixel", "asymmetric",
                                     "round_prefer_floor", "floor", "LEFT", "RIGHT", "bogus" };

static void rand_attr(glow_node *n, glow_attr_id id)
{
    int64_t ints[8];
    float floats[8];
    int count = (int)rnd(9);
    for (int i = 0; i < count; i++) {
        ints[i] = (int64_t)rnd(7) - 2;
        floats[i] = (float)rnd(5) * 0.5f;
    }
    switch (glow_attr_kind_of(id)) {
    case AK_INT: glow_node_set_int(n, id, (int64_t)rnd(7) - 2); break;
    case AK_FLOAT: glow_node_set_float(n, id, (double)rnd(5) - 1); break;
    case AK_INTS: glow_node_set_ints(n, id, ints, count); break;
    case AK_FLOATS: glow_node_set_floats(n, id, floats, count); break;
    case AK_STR: glow_node_set_str(n, id, words[rnd(sizeof words / sizeof words[0])]); break;
    }
}

static void fuzz_kind(glow_node_kind k, int iters, int *accepted)
{
    glow_module *m = glow_module_create();
    glow_function *f = glow_function_create(m, "main");
    glow_diag d;
    for (int it = 0; it < iters; it++) {
        int lo = glow_node_kind_min_in(k), hi = glow_node_kind_max_in(k);
        int nin = lo + (int)rnd((uint32_t)(hi - lo + 2));   /* sometimes one too many */
        if (nin > 5)
            nin = 5;
        glow_value ins[5];
        glow_type first = rand_type();
        for (int i = 0; i < nin; i++) {
            /* Often reuse the first operand's type so that some nodes are accepted. */
            glow_type t = rnd(2) ? first : rand_type();
            char name[32];
            snprintf(name, sizeof name, "p%d_%d", it, i);
            ins[i] = glow_val(glow_placeholder_create(m, name, &t, rnd(4) != 0), 0);
        }
        int maxout = glow_node_kind_max_out(k) < 4 ? glow_node_kind_max_out(k) : 4;
        int nout = maxout ? 1 + (int)rnd((uint32_t)maxout) : 0;   /* If, Loop: any; 4 here */
        glow_type outs[4] = { rnd(2) ? first : rand_type(), rand_type(), rand_type(),
                              rand_type() };
        char name[32];
        snprintf(name, sizeof name, "n%d", it);
        glow_node *n = glow_node_create(f, k, name, ins, nin, outs, nout);
        const char *req = glow_node_kind_required_attrs(k);
        for (const char *p = req; *p;) {
            size_t w = strcspn(p, " ");
            char an[64] = "";
            memcpy(an, p, w < 63 ? w : 63);
            glow_attr_id id;
            if (w && glow_attr_from_name(an, &id) && rnd(16) != 0)
                rand_attr(n, id);
            p += w;
            p += strspn(p, " ");
        }
        glow_diag_clear(&d);
        if (glow_infer_types(n, &d) == GLOW_OK) {
            (*accepted)++;
        } else {
            CHECK(strstr(d.msg, "no type inference") == NULL);
            CHECK(strstr(d.msg, glow_node_kind_name(k)) == d.msg);   /* names the kind */
            glow_node_erase(n);
        }
    }
    /* Everything inference accepted (including SAVEs) verifies. */
    glow_diag_clear(&d);
    glow_status s = glow_function_verify(f, &d);
    if (k != NK_SAVE)
        CHECK_EQ(s, GLOW_OK);
    if (s != GLOW_OK && k != NK_SAVE)
        fprintf(stderr, "%s: %s\n", glow_node_kind_name(k), d.msg);
    glow_module_destroy(m);
}

int main(void)
{
    int total = 0;
    for (int k = 0; k < NK_COUNT; k++) {
        if (glow_node_kind_flags((glow_node_kind)k) & NF_STORAGE)
            continue;
        int accepted = 0;
        fuzz_kind((glow_node_kind)k, 300, &accepted);
        total += accepted;
    }
    printf("%d random nodes accepted\n", total);
    CHECK(total > 0);
    return CHECK_DONE();
}
