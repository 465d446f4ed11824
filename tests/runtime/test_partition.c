// test_partition.c - The partitioner and the executor: a model split over small devices into
// three or more partitions computes what the whole graph computes (cpu and interpreter), a
// user assignment moves a node to the interpreter without changing the result, devices too
// small fail with the node and the sizes; and the same through `glowc dump --partitions` and
// `glowc run --devices`.
#include "check.h"
#include "onnx/onnx.h"
#include "runtime/partition.h"
#include "testlib/spawn.h"

#define LENET "models/lenet.onnx"
#define LENET_INPUT "models/lenet_input.pb"

/* Every element of a within 1e-5 relative of b (with a floor of 1e-6 of b's largest
 * magnitude, for elements near zero). Returns the largest relative error seen. */
static double rel_err(const glow_tensor *a, const glow_tensor *b)
{
    int64_t n = glow_type_numel(&b->type);
    double big = 0, worst = 0;
    for (int64_t i = 0; i < n; i++)
        big = fmax(big, fabs(glow_load_f64(b->type.dtype, b->data, (size_t)i)));
    for (int64_t i = 0; i < n; i++) {
        double x = glow_load_f64(a->type.dtype, a->data, (size_t)i);
        double y = glow_load_f64(b->type.dtype, b->data, (size_t)i);
        double e = fabs(x - y) / fmax(fabs(y), 1e-6 * big + 1e-30);
        worst = fmax(worst, e);
    }
    return worst;
}

/* Whether run_parts splits products too large for every device. */
static bool split_nodes;

static glow_module *load_lenet(void)
{
    glow_module *m = glow_module_create();
    glow_diag d = { 0 };
    glow_onnx_options opt = { 0 };
    if (glow_onnx_load(m, LENET, &opt, &d) != GLOW_OK) {
        fprintf(stderr, "load: %s\n", d.msg);
        glow_module_destroy(m);
        return NULL;
    }
    return m;
}

/* A DAG with two branches from an early result, a skip from the model input into the last
 * layers, and a model output computed early:
 *   h1 = Relu(x W1)   -> output "early"
 *   a = Tanh(h1 W2); b = Tanh(h1 W3); y = Relu(a W4 + b W5 + x) -> output "final"
 * Over devices that hold one weight each, the two branches give partitions that do not
 * depend on each other, and run at once. */
static glow_module *build_dag(void)
{
    glow_module *m = glow_module_create();
    glow_function *f = glow_function_create(m, "main");
    glow_diag d = { 0 };
    int64_t xd[2] = { 1, 64 }, wd[2] = { 64, 64 };
    glow_type xt = glow_type_make(GLOW_F32, 2, xd), wt = glow_type_make(GLOW_F32, 2, wd);
    glow_node *x = glow_placeholder_create(m, "x", &xt, true);
    glow_node *early = glow_placeholder_create(m, "early", &xt, false);
    glow_node *final = glow_placeholder_create(m, "final", &xt, false);
    float w[64 * 64];
    uint32_t seed = 12345;
    glow_node *ws[5];
    for (int k = 0; k < 5; k++) {
        for (int i = 0; i < 64 * 64; i++) {
            seed = seed * 1664525u + 1013904223u;
            w[i] = ((float)(seed >> 8) / 16777216.0f - 0.5f) * 0.3f;
        }
        char name[16];
        snprintf(name, sizeof name, "w%d", k + 1);
        ws[k] = glow_constant_create(m, name, &wt, w);
    }
#define B2(kind, name, a, b) \
    glow_build(f, kind, name, (glow_value[]){ a, b }, 2, NULL, 0, NULL, 0, &d)
#define B1(kind, name, a) glow_build(f, kind, name, (glow_value[]){ a }, 1, NULL, 0, NULL, 0, &d)
    glow_node *mm1 = B2(NK_MATMUL, "mm1", glow_val(x, 0), glow_val(ws[0], 0));
    glow_node *h1 = B1(NK_RELU, "h1", glow_val(mm1, 0));
    glow_node *mm2 = B2(NK_MATMUL, "mm2", glow_val(h1, 0), glow_val(ws[1], 0));
    glow_node *a = B1(NK_TANH, "a", glow_val(mm2, 0));
    glow_node *mm3 = B2(NK_MATMUL, "mm3", glow_val(h1, 0), glow_val(ws[2], 0));
    glow_node *b = B1(NK_TANH, "b", glow_val(mm3, 0));
    glow_node *mm4 = B2(NK_MATMUL, "mm4", glow_val(a, 0), glow_val(ws[3], 0));
    glow_node *mm5 = B2(NK_MATMUL, "mm5", glow_val(b, 0), glow_val(ws[4], 0));
    glow_node *s1 = B2(NK_ADD, "s1", glow_val(mm4, 0), glow_val(mm5, 0));
    glow_node *s2 = B2(NK_ADD, "s2", glow_val(s1, 0), glow_val(x, 0));
    glow_node *y = B1(NK_RELU, "y", glow_val(s2, 0));
#undef B1
#undef B2
    if (!y) {
        fprintf(stderr, "build: %s\n", d.msg);
        glow_module_destroy(m);
        return NULL;
    }
    glow_save_create(f, "save_early", glow_val(h1, 0), early);
    glow_save_create(f, "save_final", glow_val(y, 0), final);
    return m;
}

static void dag_input(glow_tensor *t)
{
    int64_t xd[2] = { 1, 64 };
    glow_type xt = glow_type_make(GLOW_F32, 2, xd);
    glow_diag d = { 0 };
    glow_tensor_alloc(t, &xt, &d);
    for (int i = 0; i < 64; i++)
        ((float *)t->data)[i] = (float)((i * 37) % 17 - 8) * 0.125f;
}

/* The whole graph on `backend`: outputs copied into outs (owned). */
static bool run_whole(glow_module *m, const char *backend, const glow_tensor *in, int nin,
                      glow_tensor *outs, int *nout)
{
    glow_compile_options copt = { .backend = backend, .stop_after = GLOW_STAGE_COMPILED };
    glow_program *p = NULL;
    glow_diag d = { 0 };
    if (glow_program_create(m, &copt, &p, &d) != GLOW_OK ||
        glow_program_run(p, in, nin, &d) != GLOW_OK) {
        fprintf(stderr, "whole %s: %s\n", backend, d.msg);
        glow_program_destroy(p);
        return false;
    }
    *nout = p->noutputs;
    for (int i = 0; i < p->noutputs; i++) {
        glow_tensor t = glow_program_output(p, i);
        glow_tensor_alloc(&outs[i], &t.type, &d);
        memcpy(outs[i].data, t.data, glow_type_bytes(&t.type));
    }
    glow_program_destroy(p);
    return true;
}

/* Partitions m over `devices` (with assignments) and runs it; the plan's shape is checked by
 * the caller through *nparts and the part_device array (device of each partition). */
static bool run_parts(glow_module *m, const char *devices, const char *const *assign,
                      int nassign, const glow_tensor *in, int nin, glow_tensor *outs,
                      int *nparts, int *part_device, int *part_nodes, unsigned *part_deps)
{
    glow_device_spec *devs = NULL;
    int ndevs = 0;
    glow_diag d = { 0 };
    CHECK(glow_devices_parse(devices, &devs, &ndevs, &d) == GLOW_OK);
    glow_partition_options po = { .devices = devs, .ndevices = ndevs, .assign = assign,
                                  .nassign = nassign, .split_nodes = split_nodes };
    glow_partition_plan *plan = NULL;
    glow_executor *e = NULL;
    bool ok = glow_partition_module(m, &po, &plan, &d) == GLOW_OK &&
              glow_executor_create(plan, NULL, &e, &d) == GLOW_OK &&
              glow_executor_run(e, in, nin, &d) == GLOW_OK;
    if (!ok) {
        fprintf(stderr, "partitioned over %s: %s\n", devices, d.msg);
    } else {
        const glow_partition_plan *pl = glow_executor_plan(e);
        glow_partition_plan_print(stdout, pl);
        *nparts = pl->nparts;
        for (int i = 0; i < pl->nparts && i < 16; i++) {
            part_device[i] = pl->parts[i].device;
            part_nodes[i] = pl->parts[i].nnodes;
            part_deps[i] = 0;
            for (int k = 0; k < pl->parts[i].ndeps; k++)
                part_deps[i] |= 1u << (pl->parts[i].deps[k] & 31);
        }
        for (int j = 0; j < glow_executor_noutputs(e); j++) {
            glow_tensor t = glow_executor_output(e, j);
            glow_tensor_alloc(&outs[j], &t.type, &d);
            memcpy(outs[j].data, t.data, glow_type_bytes(&t.type));
        }
    }
    glow_executor_destroy(e);
    glow_devices_free(devs, ndevs);
    return ok;
}

static void free_all(glow_tensor *t, int n)
{
    for (int i = 0; i < n; i++)
        glow_tensor_free(&t[i]);
}

/* Whole graph vs partitioned over `devices` (all of backend b), for lenet and the DAG. */
static void test_split(const char *b, const char *lenet_devices, const char *dag_devices)
{
    glow_tensor in = { 0 }, whole[2] = { 0 }, parts[2] = { 0 };
    glow_diag d = { 0 };
    int nout = 0, nparts = 0, dev[16], nodes[16];
    unsigned deps[16];
    CHECK(glow_tensor_read_file(LENET_INPUT, &in, NULL, &d) == GLOW_OK);
    CHECK(run_whole(load_lenet(), b, &in, 1, whole, &nout));
    CHECK(run_parts(load_lenet(), lenet_devices, NULL, 0, &in, 1, parts, &nparts, dev,
                    nodes, deps));
    printf("lenet on %s: %d partitions, max rel error %.3g\n", lenet_devices, nparts,
           rel_err(&parts[0], &whole[0]));
    CHECK(nparts >= 3);
    CHECK(rel_err(&parts[0], &whole[0]) <= 1e-5);
    free_all(whole, 1);
    free_all(parts, 1);
    glow_tensor_free(&in);

    dag_input(&in);
    CHECK(run_whole(build_dag(), b, &in, 1, whole, &nout));
    CHECK_EQ(nout, 2);
    CHECK(run_parts(build_dag(), dag_devices, NULL, 0, &in, 1, parts, &nparts, dev, nodes,
                    deps));
    printf("dag on %s: %d partitions, max rel errors %.3g %.3g\n", dag_devices, nparts,
           rel_err(&parts[0], &whole[0]), rel_err(&parts[1], &whole[1]));
    CHECK_EQ(nparts, 5);
    /* Some two partitions (of the two branches) do not depend on each other. */
    unsigned reach[16] = { 0 };
    bool independent = false;
    for (int j = 0; j < nparts && j < 16; j++) {
        reach[j] = deps[j];
        for (int k = 0; k < j; k++)
            if (deps[j] & (1u << k))
                reach[j] |= reach[k];
        for (int i = 0; i < j; i++)
            independent |= !(reach[j] & (1u << i));
    }
    CHECK(independent);
    CHECK(rel_err(&parts[0], &whole[0]) <= 1e-5);
    CHECK(rel_err(&parts[1], &whole[1]) <= 1e-5);
    free_all(whole, 2);
    free_all(parts, 2);
    glow_tensor_free(&in);
}

/* relu2 assigned to the interpreter device: a partition of that one node there, the rest on
 * the cpu device, and the result of the whole graph on the cpu. */
static void test_assign(void)
{
    glow_tensor in = { 0 }, whole[1] = { 0 }, parts[1] = { 0 };
    glow_diag d = { 0 };
    int nout = 0, nparts = 0, dev[16] = { 0 }, nodes[16] = { 0 };
    unsigned deps[16];
    CHECK(glow_tensor_read_file(LENET_INPUT, &in, NULL, &d) == GLOW_OK);
    CHECK(run_whole(load_lenet(), "cpu", &in, 1, whole, &nout));
    const char *assign[] = { "relu2=1" };
    CHECK(run_parts(load_lenet(), "cpu:1GiB,interpreter:1GiB", assign, 1, &in, 1, parts,
                    &nparts, dev, nodes, deps));
    CHECK_EQ(nparts, 3);
    CHECK_EQ(dev[0], 0);
    CHECK_EQ(dev[1], 1);
    CHECK_EQ(nodes[1], 1);
    CHECK_EQ(dev[2], 0);
    CHECK(rel_err(&parts[0], &whole[0]) <= 1e-5);
    free_all(whole, 1);
    free_all(parts, 1);
    glow_tensor_free(&in);
}

/* Backend-support partitioning, with a support check that says the cpu cannot run Relu:
 * every Relu runs on the interpreter device, alone, and everything else goes back to the cpu
 * device (the real check says both backends run everything, see docs/partitioning.md). */
static bool no_relu_on_cpu(const glow_node *n, const char *backend, void *ctx)
{
    (*(int *)ctx)++;
    return !(n->kind == NK_RELU && !strcmp(backend, "cpu"));
}

static void test_support(void)
{
    glow_tensor in = { 0 }, whole[1] = { 0 };
    glow_diag d = { 0 };
    int nout = 0, asked = 0;
    CHECK(glow_tensor_read_file(LENET_INPUT, &in, NULL, &d) == GLOW_OK);
    CHECK(run_whole(load_lenet(), "cpu", &in, 1, whole, &nout));
    glow_device_spec devs[2] = { { "cpu", UINT64_MAX }, { "interpreter", UINT64_MAX } };
    glow_partition_options po = { .devices = devs, .ndevices = 2, .supports = no_relu_on_cpu,
                                  .supports_ctx = &asked };
    glow_partition_plan *plan = NULL;
    glow_executor *e = NULL;
    CHECK(glow_partition_module(load_lenet(), &po, &plan, &d) == GLOW_OK);
    /* conv1 | relu1 | pool1 conv2 | relu2 | pool2 flatten fc1 | relu3 | fc2 softmax */
    CHECK_EQ(plan ? plan->nparts : 0, 7);
    for (int i = 0; plan && i < plan->nparts; i++) {
        CHECK_EQ(plan->parts[i].device, i % 2);
        if (i % 2)
            CHECK_EQ(plan->parts[i].nnodes, 1);
    }
    /* Asked once per node and backend: lenet has 11 nodes. */
    CHECK_EQ(asked, 22);
    if (plan && glow_executor_create(plan, NULL, &e, &d) == GLOW_OK &&
        glow_executor_run(e, &in, 1, &d) == GLOW_OK) {
        glow_tensor out = glow_executor_output(e, 0);
        CHECK(rel_err(&out, &whole[0]) <= 1e-5);
        /* Wrong inputs fail with the messages of a single program. */
        glow_tensor bad = { 0 };
        dag_input(&bad);
        glow_diag_clear(&d);
        CHECK(glow_executor_run(e, &bad, 1, &d) == GLOW_ERR_BAD_TYPE);
        CHECK_CONTAINS(d.msg, "input 0 'input' is f32[1, 64], the model expects "
                              "f32[1, 1, 28, 28]");
        glow_diag_clear(&d);
        CHECK(glow_executor_run(e, &bad, 0, &d) == GLOW_ERR_USAGE);
        glow_tensor_free(&bad);
    } else {
        CHECK(!"partitioned run failed");
        fprintf(stderr, "%s\n", d.msg);
    }
    glow_executor_destroy(e);

    /* The backends' own check: both run every node of lenet. */
    glow_module *m = load_lenet();
    glow_function *f = m ? glow_module_function(m, "main") : NULL;
    int nodes = 0, yes = 0;
    for (glow_node *n = f ? f->nodes.first : NULL; n; n = n->next, nodes++)
        yes += glow_partition_backend_supports(n, "cpu", NULL) +
               glow_partition_backend_supports(n, "interpreter", NULL);
    CHECK(nodes > 0);
    CHECK_EQ(yes, 2 * nodes);
    glow_module_destroy(m);
    free_all(whole, 1);
    glow_tensor_free(&in);
}

/* fc1 (188 KiB of weights) on 100 KiB devices: split into column slices over the
 * partitions, with the whole graph's result on both backends. */
static void test_split_nodes(const char *b, const char *devices)
{
    glow_tensor in = { 0 }, whole[1] = { 0 }, parts[1] = { 0 };
    glow_diag d = { 0 };
    int nout = 0, nparts = 0, dev[16] = { 0 }, nodes[16] = { 0 };
    unsigned deps[16];
    CHECK(glow_tensor_read_file(LENET_INPUT, &in, NULL, &d) == GLOW_OK);
    CHECK(run_whole(load_lenet(), b, &in, 1, whole, &nout));
    split_nodes = true;
    CHECK(run_parts(load_lenet(), devices, NULL, 0, &in, 1, parts, &nparts, dev, nodes,
                    deps));
    split_nodes = false;
    CHECK_EQ(nparts, 3);
    printf("lenet split over %s: %d partitions, max rel error %.3g\n", devices, nparts,
           parts[0].data ? rel_err(&parts[0], &whole[0]) : -1.0);
    CHECK(parts[0].data && rel_err(&parts[0], &whole[0]) <= 1e-5);
    free_all(whole, 1);
    free_all(parts, 1);
    glow_tensor_free(&in);
}

/* Failures: the message names the node and the sizes. */
static void test_errors(void)
{
    glow_device_spec devs[2] = { { "cpu", 100 << 10 }, { "cpu", 100 << 10 } };
    glow_partition_options po = { .devices = devs, .ndevices = 2 };
    glow_partition_plan *plan = NULL;
    glow_diag d = { 0 };
    /* fc1's weights (120 x 400 f32, 187.5 KiB) are larger than either device. */
    CHECK(glow_partition_module(load_lenet(), &po, &plan, &d) == GLOW_ERR_TOO_LARGE);
    CHECK_CONTAINS(d.msg, "node 'fc1' (Gemm) needs 190.00 KiB (weights 187.97 KiB");
    CHECK_CONTAINS(d.msg, "holds (device 0, cpu: 100.00 KiB)");
    CHECK_CONTAINS(d.msg, "(--split-nodes) may make it fit");
    CHECK(!plan);

    /* Each node fits, the model does not: the devices are too small together. */
    glow_device_spec one[1] = { { "cpu", 200 << 10 } };
    po = (glow_partition_options){ .devices = one, .ndevices = 1 };
    glow_diag_clear(&d);
    CHECK(glow_partition_module(load_lenet(), &po, &plan, &d) == GLOW_ERR_TOO_LARGE);
    CHECK_CONTAINS(d.msg, "the devices are too small for the model");

    const char *assign[] = { "nosuchnode=0" };
    po = (glow_partition_options){ .devices = devs, .ndevices = 1, .assign = assign,
                                   .nassign = 1 };
    devs[0].capacity = UINT64_MAX;
    glow_diag_clear(&d);
    CHECK(glow_partition_module(load_lenet(), &po, &plan, &d) == GLOW_ERR_USAGE);
    CHECK_CONTAINS(d.msg, "no node 'nosuchnode'");
    const char *bad_dev[] = { "relu1=3" };
    po.assign = bad_dev;
    glow_diag_clear(&d);
    CHECK(glow_partition_module(load_lenet(), &po, &plan, &d) == GLOW_ERR_USAGE);

    glow_device_spec *parsed = NULL;
    int n = 0;
    glow_diag_clear(&d);
    CHECK(glow_devices_parse("cpu:256MiB,interpreter,cpu:1000KB", &parsed, &n, &d) == GLOW_OK);
    CHECK_EQ(n, 3);
    if (n == 3) {
        CHECK_STR_EQ(parsed[1].backend, "interpreter");
        CHECK(parsed[0].capacity == 256ull << 20);
        CHECK(parsed[1].capacity == UINT64_MAX);
        CHECK(parsed[2].capacity == 1000000);
    }
    glow_devices_free(parsed, n);
    CHECK(glow_devices_parse("gpu:1GiB", &parsed, &n, &d) == GLOW_ERR_USAGE);
    CHECK(glow_devices_parse("cpu:12XB", &parsed, &n, &d) == GLOW_ERR_USAGE);
    CHECK(glow_devices_parse("cpu:,cpu", &parsed, &n, &d) == GLOW_ERR_USAGE);
}

/* The first output file of a run in dir. */
static bool read_output(const char *dir, glow_tensor *t)
{
    char path[700];
    snprintf(path, sizeof path, "%s/output_0.pb", dir);
    glow_diag d = { 0 };
    return glow_tensor_read_file(path, t, NULL, &d) == GLOW_OK;
}

static void test_cli(void)
{
    bool ready = spawn_setup("glowc_partition");
    CHECK(ready); /* CTest sets GLOWC_BIN */
    if (!ready)
        return;
    TMP(dot, "parts.dot");
    const char *devices = "cpu:40KiB,cpu:40KiB,cpu:40KiB,interpreter:256KiB";
    result r = RUN("dump", LENET, "--partitions", "--devices", devices, "--dot", dot);
    CHECK_EQ(r.code, 0);
    CHECK_CONTAINS(r.out, "4 partitions on 4 devices");
    CHECK_CONTAINS(r.out, "partition 3: device 3 (interpreter)");
    CHECK_CONTAINS(r.out, "weights ");
    CHECK_CONTAINS(r.out, "(model input)");
    CHECK_CONTAINS(r.out, "from partition 0");
    char *text = slurp(dot, NULL);
    CHECK_CONTAINS(text, "digraph partitions {");
    CHECK_CONTAINS(text, "p0 -> p1 [label=");
    free(text);
    result_free(&r);
    /* The plan is deterministic: the same picture again. */
    TMP(dot2, "parts2.dot");
    r = RUN("dump", LENET, "--partitions", "--devices", devices, "--dot", dot2);
    CHECK(same_file(dot, dot2));
    result_free(&r);

    TMP(whole_dir, "whole");
    TMP(part_dir, "part");
    r = RUN("run", LENET, LENET_INPUT, "--backend", "cpu", "--output-dir", whole_dir);
    CHECK_EQ(r.code, 0);
    result_free(&r);
    r = RUN("run", LENET, LENET_INPUT, "--devices", devices, "--assign", "relu2=3",
            "--output-dir", part_dir);
    CHECK_EQ(r.code, 0);
    result_free(&r);
    glow_tensor a = { 0 }, b = { 0 };
    CHECK(read_output(whole_dir, &a) && read_output(part_dir, &b));
    if (a.data && b.data)
        CHECK(rel_err(&b, &a) <= 1e-5);
    glow_tensor_free(&a);
    glow_tensor_free(&b);

    r = RUN("run", LENET, LENET_INPUT, "--devices", "cpu:100KiB");
    CHECK_EQ(r.code, 2);
    CHECK_CONTAINS(r.err, "node 'fc1' (Gemm) needs");
    result_free(&r);
    r = RUN("dump", LENET, "--partitions", "--devices", "cpu:100KiB,cpu:100KiB,cpu:100KiB",
            "--split-nodes");
    CHECK_EQ(r.code, 0);
    CHECK_CONTAINS(r.out, "3 partitions on 3 devices");
    CHECK_CONTAINS(r.out, "out fc1#0 f32[1, 15]");
    result_free(&r);
    r = RUN("run", LENET, LENET_INPUT, "--assign", "relu2=0");
    CHECK_EQ(r.code, 1);
    result_free(&r);
    r = RUN("dump", LENET, "--partitions");
    CHECK_EQ(r.code, 1);
    result_free(&r);
    r = RUN("run", LENET, LENET_INPUT, "--devices", "tpu:1GiB");
    CHECK_EQ(r.code, 1);
    CHECK_CONTAINS(r.err, "unknown backend 'tpu'");
    result_free(&r);
    spawn_cleanup();
}

int main(void)
{
    test_split("cpu", "cpu:40KiB,cpu:40KiB,cpu:40KiB,cpu:256KiB",
               "cpu:24KiB,cpu:24KiB,cpu:24KiB,cpu:24KiB,cpu:24KiB,cpu:24KiB");
    test_split("interpreter",
               "interpreter:40KiB,interpreter:40KiB,interpreter:40KiB,interpreter:256KiB",
               "interpreter:24KiB,interpreter:24KiB,interpreter:24KiB,interpreter:24KiB,"
               "interpreter:24KiB");
    test_assign();
    test_support();
    test_split_nodes("cpu", "cpu:100KiB,cpu:100KiB,cpu:100KiB");
    test_split_nodes("interpreter", "interpreter:100KiB,interpreter:100KiB,interpreter:100KiB");
    test_errors();
    test_cli();
    return CHECK_DONE();
}
