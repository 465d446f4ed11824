// test_onnx_build.c - The test-support model builder (tests/testlib/onnx_build.c): mk_push grows
// its arrays geometrically, so a long graph costs linear time and memory (it took one block per
// push, quadratic: a 100,000-node chain needed about 40 GB), and the model it builds loads.
#include <stdio.h>

#include "check.h"
#include "onnx/onnx.h"
#include "testlib/onnx_build.h"

/* Pushing n pointers into one array takes about log2(n) blocks, not n. */
static void test_push_blocks(void)
{
    mk_model *mk = mk_new(13);
    void **arr = NULL;
    size_t n = 0, before = mk->nallocs;
    static int cells[100000];
    for (int i = 0; i < 100000; i++)
        mk_push(mk, &arr, &n, &cells[i]);
    CHECK_EQ(n, (size_t)100000);
    CHECK(mk->nallocs - before <= 20);
    bool in_order = true;
    for (int i = 0; i < 100000; i++)
        in_order = in_order && arr[i] == &cells[i];
    CHECK(in_order);
    /* shortened in place (as onnx_edit does), then grown again */
    n = 5;
    mk_push(mk, &arr, &n, &cells[7]);
    CHECK(n == 6 && arr[4] == &cells[4] && arr[5] == &cells[7]);
    mk_free(mk);
}

/* A 20,000-node chain built by mk_node loads, every node in order. */
static void test_long_graph(void)
{
    enum { N = 20000 };
    mk_model *mk = mk_new(13);
    mk_input(mk, "x", MK_F32, 2, (int64_t[]){ 1, 4 });
    char prev[32] = "x", cur[32];
    for (int i = 0; i < N; i++) {
        snprintf(cur, sizeof cur, i + 1 == N ? "y" : "t%d", i);
        mk_node(mk, "Relu", NULL, 1, (const char *[]){ prev }, 1, (const char *[]){ cur });
        snprintf(prev, sizeof prev, "%s", cur);
    }
    mk_output(mk, "y", MK_F32, 2, (int64_t[]){ 1, 4 });
    CHECK_EQ(mk->graph.n_node, (size_t)N);
    CHECK(mk->graph.node[N - 1]->output[0][0] == 'y');
    size_t size = 0;
    uint8_t *bytes = mk_pack(mk, &size);
    glow_module *m = glow_module_create();
    glow_diag d = { 0 };
    CHECK_EQ(glow_onnx_load_bytes(m, bytes, size, NULL, &d), GLOW_OK);
    free(bytes);
    glow_module_destroy(m);
    mk_free(mk);
}

int main(void)
{
    test_push_blocks();
    test_long_graph();
    return CHECK_DONE();
}
