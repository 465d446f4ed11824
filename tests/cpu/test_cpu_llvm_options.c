// test_cpu_llvm_options.c - The options the cpu backend gives LLVM once per process (target.c
// llvm_options): its own single InstCombine sweep (-instcombine-max-iterations=1, for compile
// time), then GLOWC_LLVM_OPTIONS. LLVM takes an option once and complains on stderr about a
// second, so GLOWC_LLVM_OPTIONS naming the InstCombine option replaces the backend's; with
// -time-passes the report shows InstCombine ran. glowc run on LeNet, whose outputs must not
// move with the options.
#include "check.h"
#include "testlib/spawn.h"

static result run_with(const char *options)
{
    if (options)
        setenv("GLOWC_LLVM_OPTIONS", options, 1);
    else
        unsetenv("GLOWC_LLVM_OPTIONS");
    return RUN("run", "models/lenet.onnx", "models/lenet_input.pb", "--backend", "cpu",
               "--threads", "1");
}

int main(void)
{
    if (!spawn_setup("glowc_test_llvm_options"))
        return 1;
    result plain = run_with(NULL);
    CHECK(plain.code == 0 && !strstr(plain.err, "may only occur"));
    result again = run_with("-instcombine-max-iterations=2");
    CHECK(again.code == 0);
    CHECK(!strstr(again.err, "may only occur"));
    CHECK(strcmp(again.out, plain.out) == 0);
    result timed = run_with("-time-passes");
    CHECK(timed.code == 0 && !strstr(timed.err, "may only occur"));
    CHECK(strstr(timed.err, "InstCombinePass") != NULL);
    CHECK(strcmp(timed.out, plain.out) == 0);
    result_free(&plain);
    result_free(&again);
    result_free(&timed);
    spawn_cleanup();
    return CHECK_DONE();
}
