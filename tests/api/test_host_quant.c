// test_host_quant.c - Quantized networks on a host (glowc_host_add_network with
// glowc_options_set_quantize), through the public header alone: LeNet quantized with a
// profile `glowc profile` writes, placed whole as replicas on two devices and partitioned over
// three small ones, gives exactly the quantized session's scores (the profile applies to the
// whole graph before it is cut, so the parts hold the same integer graph), and not the float
// ones; a profile that does not exist fails the add naming the file.
#include <math.h>
#include <unistd.h>

#include "check.h"
#include "glowc/glowc.h"

#define LENET "models/lenet.onnx"

static const int64_t SHAPE[4] = { 1, 1, 28, 28 };

/* The float payload of lenet_input.pb: its raw_data is the file's last field. */
static int read_image(float *x)
{
    FILE *f = fopen("models/lenet_input.pb", "rb");
    if (!f)
        return 0;
    int ok = fseek(f, -784 * 4, SEEK_END) == 0 && fread(x, 4, 784, f) == 784;
    fclose(f);
    return ok;
}

static glowc_options *quant_options(const char *prof)
{
    glowc_options *o = glowc_options_create();
    CHECK_EQ(glowc_options_set_quantize(o, prof), GLOWC_OK);
    return o;
}

/* The network's scores on image through a host on devices `spec`; *parts its partitions. */
static int host_scores(const char *spec, const char *prof, const float *image, float *got,
                       int *parts, uint64_t *devices)
{
    glowc_host *h = NULL;
    CHECK_EQ(glowc_host_create_from_spec(spec, 8, &h), GLOWC_OK);
    if (!h)
        return 0;
    glowc_options *o = quant_options(prof);
    glowc_status st = glowc_host_add_network(h, "q", o, LENET);
    glowc_options_destroy(o);
    if (st != GLOWC_OK)
        fprintf(stderr, "%s: %s\n", spec, glowc_last_error());
    CHECK_EQ(st, GLOWC_OK);
    glowc_network_info info = { 0 };
    if (st == GLOWC_OK) {
        CHECK_EQ(glowc_host_network_info(h, "q", &info), GLOWC_OK);
        glowc_value in = { NULL, GLOWC_F32, 4, SHAPE, (void *)image, 784 * 4 };
        glowc_value out = { NULL, GLOWC_F32, 0, NULL, got, 10 * sizeof *got };
        st = glowc_host_run(h, "q", &in, 1, &out, 1, 0);
        CHECK_EQ(st, GLOWC_OK);
    }
    *parts = info.partitions;
    *devices = info.devices;
    glowc_host_destroy(h);
    return st == GLOWC_OK;
}

int main(void)
{
    const char *bin = getenv("GLOWC_BIN");
    float image[784];
    CHECK(read_image(image));
    if (!bin) {
        fprintf(stderr, "GLOWC_BIN is not set: no profile can be made\n");
        CHECK(bin != NULL);
        return CHECK_DONE();
    }
    char prof[64], cmd[512];
    snprintf(prof, sizeof prof, "/tmp/glowc_test_host_quant_%d.json", (int)getpid());
    snprintf(cmd, sizeof cmd, "'%s' profile " LENET " models/lenet_input.pb -o %s >/dev/null",
             bin, prof);
    CHECK_EQ(system(cmd), 0);

    /* The references: the quantized session's scores, and the float ones. */
    float want[10], flt[10];
    glowc_value in = { NULL, GLOWC_F32, 4, SHAPE, image, sizeof image };
    glowc_session *s = NULL;
    glowc_options *o = quant_options(prof);
    CHECK_EQ(glowc_session_create(o, LENET, &s), GLOWC_OK);
    glowc_options_destroy(o);
    glowc_value out = { NULL, GLOWC_F32, 0, NULL, want, sizeof want };
    CHECK(s && glowc_session_run(s, &in, 1, &out, 1) == GLOWC_OK);
    glowc_session_destroy(s);
    s = NULL;
    CHECK_EQ(glowc_session_create(NULL, LENET, &s), GLOWC_OK);
    out.data = flt;
    CHECK(s && glowc_session_run(s, &in, 1, &out, 1) == GLOWC_OK);
    glowc_session_destroy(s);
    double qf = 0;
    for (int i = 0; i < 10; i++)
        qf = fmax(qf, fabs(want[i] - flt[i]));
    CHECK(qf > 1e-6);   /* int8 indeed */

    /* Whole, as replicas on two devices; then cut in two over three 55 KiB devices (the
     * quantized LeNet needs about 71 KiB on one). */
    const char *specs[] = { "cpu:t1,cpu:t1", "cpu:55KiB:t1,cpu:55KiB:t1,cpu:55KiB:t1",
                            "interpreter:t1,cpu:t1" };
    const int want_parts[] = { 1, 2, 1 };
    for (int k = 0; k < 3; k++) {
        float got[10];
        int parts = 0;
        uint64_t devices = 0;
        if (!host_scores(specs[k], prof, image, got, &parts, &devices))
            continue;
        CHECK_EQ(parts, want_parts[k]);
        if (k != 1)
            CHECK_EQ(devices, 3);
        for (int i = 0; i < 10; i++)
            CHECK_EQ(got[i] == want[i], 1);
    }

    /* A profile that is not there: the add fails naming it, and the host keeps nothing. */
    glowc_host *h = NULL;
    CHECK_EQ(glowc_host_create_from_spec("cpu:t1", 4, &h), GLOWC_OK);
    o = quant_options("no/such/profile.json");
    CHECK(glowc_host_add_network(h, "q", o, LENET) != GLOWC_OK);
    CHECK_CONTAINS(glowc_last_error(), "no/such/profile.json");
    glowc_network_info info;
    CHECK_EQ(glowc_host_network_info(h, "q", &info), GLOWC_ERR_INVALID_ARGUMENT);
    glowc_options_destroy(o);
    glowc_host_destroy(h);
    remove(prof);
    return CHECK_DONE();
}
