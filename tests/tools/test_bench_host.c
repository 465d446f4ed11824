// test_bench_host.c - `glowc bench MODEL --devices SPEC [--clients K]`: the model on a host of
// the public API - the report (placement, requests/s, every request done), JSON, a
// partitioned placement, a quantized one (and `run --devices --quantize` giving the whole
// quantized program's scores), a model that fits no device (exit 3, the sizes named), and
// the options that do not combine with --devices.
#include "check.h"
#include "testlib/spawn.h"

int main(void)
{
    if (!spawn_setup("glowc_test_bench_host"))
        return 1;
    result r = RUN("bench", "models/lenet.onnx", "--devices", "cpu:t1,cpu:t1", "--clients", "3",
                   "--iterations", "30");
    CHECK_EQ(r.code, 0);
    CHECK_CONTAINS(r.out, "host:        cpu:t1,cpu:t1 (2 devices), 3 clients");
    CHECK_CONTAINS(r.out, "network:     whole, on devices 0, 1");
    CHECK_CONTAINS(r.out, "requests/s (30 requests in");
    CHECK_CONTAINS(r.out, "31 done, 0 failed, 0 rejected");   /* 30 + the warm-up */
    result_free(&r);

    r = RUN("bench", "models/lenet.onnx", "--devices", "cpu:150KiB:t1,cpu:250KiB:t1",
            "--iterations", "10", "--warmup", "0", "--json");
    CHECK_EQ(r.code, 0);
    CHECK_CONTAINS(r.out, "\"partitions\": 2");
    CHECK_CONTAINS(r.out, "\"clients\": 2");
    CHECK_CONTAINS(r.out, "\"done\": 10, \"failed\": 0");
    result_free(&r);

    /* Quantized: the profile applies to the whole graph, then it is cut over three devices
     * too small for the int8 LeNet whole (about 71 KiB). */
    TMP(prof, "lenet.json");
    r = RUN("profile", "models/lenet.onnx", "models/lenet_input.pb", "-o", prof);
    CHECK_EQ(r.code, 0);
    result_free(&r);
    r = RUN("bench", "models/lenet.onnx", "--devices", "cpu:55KiB:t1,cpu:55KiB:t1,cpu:55KiB:t1",
            "--quantize", prof, "--iterations", "10", "--warmup", "0", "--json");
    CHECK_EQ(r.code, 0);
    CHECK_CONTAINS(r.out, "\"partitions\": 2");
    CHECK_CONTAINS(r.out, "\"done\": 10, \"failed\": 0");
    result_free(&r);

    /* run --devices --quantize: the same quantize-then-cut, the same scores as the whole
     * quantized program's (the printed values, digit for digit). */
    r = RUN("run", "models/lenet.onnx", "models/lenet_input.pb", "--backend", "cpu",
            "--quantize", prof);
    CHECK_EQ(r.code, 0);
    result p = RUN("run", "models/lenet.onnx", "models/lenet_input.pb", "--quantize", prof,
                   "--devices", "cpu:55KiB,cpu:55KiB,cpu:55KiB", "--stats");
    CHECK_EQ(p.code, 0);
    CHECK_CONTAINS(p.err, "partition 1 on device 1 (cpu)");
    CHECK_CONTAINS(r.out, "argmax 8");
    CHECK_STR_EQ(p.out, r.out);
    result_free(&p);
    result_free(&r);

    r = RUN("bench", "models/lenet.onnx", "--devices", "cpu:1KiB");
    CHECK_EQ(r.code, 3);
    CHECK_CONTAINS(r.err, "network 'model' fits no device: it needs");
    CHECK_CONTAINS(r.err, "device 0 (cpu) 1.00 KiB");
    result_free(&r);

    r = RUN("bench", "models/lenet.onnx", "--devices", "gpu");
    CHECK_EQ(r.code, 1);
    CHECK_CONTAINS(r.err, "unknown backend 'gpu'");
    result_free(&r);

    r = RUN("bench", "models/lenet.onnx", "--clients", "2");
    CHECK_EQ(r.code, 1);
    CHECK_CONTAINS(r.err, "--clients needs --devices");
    result_free(&r);

    r = RUN("bench", "models/lenet.onnx", "--devices", "cpu", "--threads", "2");
    CHECK_EQ(r.code, 1);
    CHECK_CONTAINS(r.err, "--devices takes none of");
    result_free(&r);

    spawn_cleanup();
    return CHECK_DONE();
}
