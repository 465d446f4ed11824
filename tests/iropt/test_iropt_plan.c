// test_iropt_plan.c - The best-fit planner and its checker, the memory report, and the
// targets on whole networks: bench models (or the light ONNX CNNs) planned near the liveness
// lower bound, googlenet without Concat copies, results unchanged by the IR optimizer.
#include <unistd.h>

#include "iropt_check.h"
#include "onnx/onnx.h"
#include "runtime/runtime.h"

/* A plan with two live buffers at one address is refused, naming both. */
static void test_checker(void)
{
    begin();
    glow_value x = input("x", 2, DIMS(4, 16));
    glow_value a = un(NK_RELU, "a", x);
    glow_value b = un(NK_TANH, "b", x);
    save("out", bin(NK_ADD, "c", a, b));
    ir_function *ir = gen();
    CHECK(ir_plan_memory_best_fit(ir, &D) == GLOW_OK);
    CHECK(ir_memory_check(ir, &D) == GLOW_OK);
    ir_value *va = NULL, *vb = NULL;
    for (ir_value *v = ir->values; v; v = v->next) {
        if (!strcmp(v->name, "a.res"))
            va = v;
        if (!strcmp(v->name, "b.res"))
            vb = v;
    }
    CHECK(va && vb && va->addr != vb->addr);
    if (va && vb) {
        vb->addr = va->addr;
        CHECK(ir_memory_check(ir, &D) != GLOW_OK);
        CHECK_CONTAINS(D.msg, "overlap while both are live");
        CHECK_CONTAINS(D.msg, "a.res");
        CHECK_CONTAINS(D.msg, "b.res");
    }
    ir_function_destroy(ir);
    end();
}

/* Lifetimes where first fit in program order would fragment the region (placing s1 above
 * big, so that m2 cannot reuse big's room): small s1 lives through, a big buffer dies, then
 * a bigger one needs the room. Best fit reaches the liveness lower bound. */
static void test_best_fit_beats_first_fit(void)
{
    begin();
    glow_value x = input("x", 1, DIMS(64));
    glow_value x2 = input("x2", 1, DIMS(1024));
    glow_value big = un(NK_RELU, "big", x2);          /* 4 KiB, dies at m */
    glow_value s1 = un(NK_EXP, "s1", x);              /* 256 B, lives to the end */
    glow_value m = un(NK_TANH, "m", big);             /* 4 KiB */
    glow_value m2 = un(NK_NEG, "m2", m);              /* 4 KiB */
    glow_value r = un(NK_ABS, "r", m2);
    save("out", r);
    save("out2", un(NK_SIGMOID, "s2", s1));
    ir_function *bf = gen();
    CHECK(ir_plan_memory_best_fit(bf, &D) == GLOW_OK);
    ir_memory_report rb;
    ir_memory_report_compute(bf, &rb);
    CHECK_EQ(rb.activation_bytes, rb.lower_bound);
    CHECK(rb.naive_bytes >= rb.activation_bytes);
    ir_function_destroy(bf);
    end();
}

static void test_svg(void)
{
    begin();
    glow_value x = input("x", 2, DIMS(4, 16));
    save("out", bin(NK_ADD, "c<&>", un(NK_RELU, "a", x), un(NK_TANH, "b", x)));
    ir_function *ir = gen();
    CHECK(ir_plan_memory_best_fit(ir, &D) == GLOW_OK);
    char *buf = NULL;
    size_t size = 0;
    FILE *mem = open_memstream(&buf, &size);
    ir_memory_svg(mem, ir);
    fclose(mem);
    CHECK_CONTAINS(buf, "<svg xmlns=\"http://www.w3.org/2000/svg\"");
    CHECK_CONTAINS(buf, "<rect x=");
    CHECK_CONTAINS(buf, "<polyline");
    CHECK_CONTAINS(buf, "</svg>\n");
    CHECK(!strstr(buf, "c<&>"));
    free(buf);
    ir_function_destroy(ir);
    end();
}

static glow_program *compile(const char *path, glow_stage stage, bool no_ir)
{
    glow_module *m = glow_module_create();
    glow_program *p = NULL;
    if (glow_onnx_load(m, path, NULL, &D) != GLOW_OK) {
        glow_module_destroy(m);
        fprintf(stderr, "%s: %s\n", path, D.msg);
        return NULL;
    }
    glow_compile_options o = { .stop_after = stage, .no_ir_optimize = no_ir };
    if (glow_program_create(m, &o, &p, &D) != GLOW_OK) {
        fprintf(stderr, "%s: %s\n", path, D.msg);
        return NULL;
    }
    return p;
}

/* Plans every model near its lower bound; returns the report (zeros when absent). */
static ir_memory_report plan_model(const char *path)
{
    ir_memory_report r = { 0 };
    if (access(path, R_OK) != 0)
        return r;
    glow_program *p = compile(path, GLOW_STAGE_IR_OPTIMIZED, false);
    CHECK(p != NULL);
    if (!p)
        return r;
    CHECK(ir_memory_check(p->ir, &D) == GLOW_OK);
    ir_memory_report_compute(p->ir, &r);
    printf("%-48s region %11llu  bound %11llu  naive %11llu  copies %u  concats %u\n", path,
           (unsigned long long)r.activation_bytes, (unsigned long long)r.lower_bound,
           (unsigned long long)r.naive_bytes, r.ncopies, r.nconcats);
    CHECK(r.activation_bytes >= r.lower_bound);
    CHECK(r.activation_bytes * 100 <= r.lower_bound * 110);
    glow_program_destroy(p);
    return r;
}

static void test_models(void)
{
    static const char *const bench[] = { "lenet", "mlp", "squeezenet1_1", "mobilenet_v2",
                                         "googlenet", "resnet50", "vgg19" };
    char path[256];
    for (size_t i = 0; i < sizeof bench / sizeof bench[0]; i++) {
        snprintf(path, sizeof path, "bench/models/%s_b1.onnx", bench[i]);
        ir_memory_report r = plan_model(path);
        if (!r.nbuffers)
            continue;
        if (!strcmp(bench[i], "resnet50"))
            CHECK(r.activation_bytes * 10 <= r.naive_bytes);
        if (!strcmp(bench[i], "googlenet"))
            CHECK_EQ(r.nconcats + r.ncopies, 0);
    }
    const char *shared = getenv("GLOWC_SHARED");
    static const char *const light[] = { "test_squeezenet", "test_inception_v1",
                                         "test_resnet50", "test_densenet121" };
    for (size_t i = 0; shared && i < sizeof light / sizeof light[0]; i++) {
        snprintf(path, sizeof path, "%s/onnx-node-tests/light/%s/model.onnx", shared, light[i]);
        plan_model(path);
    }
}

/* A whole CNN gives bit-identical outputs with and without the IR optimizer. */
static void test_same_outputs(void)
{
    const char *shared = getenv("GLOWC_SHARED");
    char path[512], in_path[512];
    if (!shared)
        return;
    snprintf(path, sizeof path, "%s/onnx-node-tests/light/test_inception_v1/model.onnx", shared);
    snprintf(in_path, sizeof in_path,
             "%s/onnx-node-tests/light/test_inception_v1/test_data_set_0/input_0.pb", shared);
    if (access(path, R_OK) != 0)
        return;
    glow_tensor in = { 0 };
    char *name = NULL;
    CHECK(glow_tensor_read_file(in_path, &in, &name, &D) == GLOW_OK);
    free(name);
    glow_program *a = compile(path, GLOW_STAGE_COMPILED, false);
    glow_program *b = compile(path, GLOW_STAGE_COMPILED, true);
    CHECK(a && b);
    if (a && b) {
        CHECK(glow_program_run(a, &in, 1, &D) == GLOW_OK);
        CHECK(glow_program_run(b, &in, 1, &D) == GLOW_OK);
        glow_tensor ta = glow_program_output(a, 0), tb = glow_program_output(b, 0);
        size_t n = glow_type_bytes(&ta.type);
        CHECK(n > 0 && n == glow_type_bytes(&tb.type) && memcmp(ta.data, tb.data, n) == 0);
        CHECK(a->ir->activation_bytes < b->ir->activation_bytes);
    }
    glow_program_destroy(a);
    glow_program_destroy(b);
    glow_tensor_free(&in);
}

/* glowc dump --memory prints the report; --memory-svg writes the picture. */
static void test_cli(void)
{
    const char *bin = getenv("GLOWC_BIN");
    if (!bin || access("models/lenet.onnx", R_OK) != 0)
        return;
    char cmd[1024], svg[] = "/tmp/glowc_iropt_XXXXXX";
    int fd = mkstemp(svg);
    CHECK(fd >= 0);
    if (fd >= 0)
        close(fd);
    snprintf(cmd, sizeof cmd, "%s dump models/lenet.onnx --memory --memory-svg %s", bin, svg);
    FILE *p = popen(cmd, "r");
    char out[4096] = "";
    size_t n = p ? fread(out, 1, sizeof out - 1, p) : 0;
    out[n] = 0;
    CHECK(p && pclose(p) == 0);
    CHECK_CONTAINS(out, "activation region");
    CHECK_CONTAINS(out, "lower bound");
    CHECK_CONTAINS(out, "naive sum");
    FILE *s = fopen(svg, "r");
    char head[64] = "";
    CHECK(s && fread(head, 1, sizeof head - 1, s) > 0);
    if (s)
        fclose(s);
    CHECK_CONTAINS(head, "<svg");
    unlink(svg);
    snprintf(cmd, sizeof cmd, "%s dump models/lenet.onnx --ir-dump-after=nope 2>&1", bin);
    p = popen(cmd, "r");
    n = p ? fread(out, 1, sizeof out - 1, p) : 0;
    out[n] = 0;
    CHECK(p && pclose(p) != 0);
    CHECK_CONTAINS(out, "--ir-dump-after");
}

int main(void)
{
    test_checker();
    test_best_fit_beats_first_fit();
    test_svg();
    test_models();
    test_same_outputs();
    test_cli();
    return CHECK_DONE();
}
