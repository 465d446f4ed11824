// test_cache.c - The compiled-code cache through the CLI (`--cache DIR`): the first cpu
// compile stores one entry, the next identical compile loads it and gives the same outputs, a
// damaged or foreign entry is a miss that is replaced, other options make other entries, and
// commands or directories that cannot take a cache are refused.
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "testlib/compare.h"
#include "testlib/spawn.h"

#define HIT "machine code from the compiled-code cache"

static bool write_whole(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    bool ok = f && fwrite(data, 1, size, f) == size;
    return (f && fclose(f) == 0) && ok;
}

/* The number of entries (*.jit) in dir; the last one's path in *last. */
static int entries(const char *dir, char *last, size_t size)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len > 4 && !strcmp(e->d_name + len - 4, ".jit")) {
            n++;
            if (last)
                snprintf(last, size, "%s/%s", dir, e->d_name);
        }
    }
    if (d)
        closedir(d);
    return n;
}

/* `glowc run` on LeNet with the cache; true when --stats says the code came from it. The
 * output must match the reference. */
static bool run_cached(const char *cache, const char *threads)
{
    TMP(out, "out");
    TMP(out0, "out/output_0.pb");
    result r = RUN("run", "models/lenet.onnx", "models/lenet_input.pb", "--backend", "cpu",
                   "--threads", threads, "--cache", cache, "--stats", "--output-dir", out);
    CHECK_EQ(r.code, 0);
    bool hit = r.err && strstr(r.err, HIT) != NULL;
    result_free(&r);
    double diff = tensor_file_diff(out0, "models/lenet_output.pb", NULL);
    CHECK(diff >= 0 && diff <= 1e-5);
    remove(out0);
    return hit;
}

static void check_store_and_load(void)
{
    TMP(cache, "cache/nested");
    char entry[700] = "";
    CHECK(!run_cached(cache, "1"));             /* a miss creates the folders and stores */
    CHECK_EQ(entries(cache, entry, sizeof entry), 1);
    CHECK(run_cached(cache, "1"));              /* the same compile is a load */
    CHECK_EQ(entries(cache, NULL, 0), 1);

    /* A damaged entry (one byte flipped in the middle) is a miss, and is replaced. */
    size_t size = 0;
    uint8_t *data = read_whole(entry, &size);
    CHECK(data && size > 64);
    if (data && size > 64) {
        data[size / 2] ^= 0x5a;
        CHECK(write_whole(entry, data, size));
        CHECK(!run_cached(cache, "1"));
        CHECK(run_cached(cache, "1"));
        /* A cut entry, and an empty one, are misses too. */
        CHECK(write_whole(entry, data, size / 3));
        CHECK(!run_cached(cache, "1"));
        CHECK(write_whole(entry, data, 0));
        CHECK(!run_cached(cache, "1"));
        CHECK(run_cached(cache, "1"));
    }
    free(data);

    /* The interpreter makes no machine code: it neither reads nor writes the cache. */
    result r = RUN("run", "models/lenet.onnx", "models/lenet_input.pb", "--cache", cache);
    CHECK_EQ(r.code, 0);
    result_free(&r);
    CHECK_EQ(entries(cache, NULL, 0), 1);

    /* Other code, another entry: LeNet without the graph optimizer. */
    r = RUN("run", "models/lenet.onnx", "models/lenet_input.pb", "--backend", "cpu",
            "--no-optimize", "--cache", cache);
    CHECK_EQ(r.code, 0);
    result_free(&r);
    CHECK_EQ(entries(cache, NULL, 0), 2);
}

static void check_refusals(void)
{
    /* A file where the folder should be. */
    TMP(file, "plain_file");
    CHECK(write_whole(file, (const uint8_t *)"x", 1));
    result r = RUN("run", "models/lenet.onnx", "models/lenet_input.pb", "--backend", "cpu",
                   "--cache", file);
    CHECK_EQ(r.code, 1);
    CHECK_CONTAINS(r.err, "--cache wants a directory");
    result_free(&r);
    /* Bundles are made each time: compile takes no --cache. */
    TMP(bundle, "bundle");
    TMP(cache, "cache2");
    r = RUN("compile", "models/lenet.onnx", "--emit-bundle", bundle, "--cache", cache);
    CHECK_EQ(r.code, 1);
    CHECK_CONTAINS(r.err, "--cache");
    result_free(&r);
    CHECK(!exists(cache));
    /* bench reports where the code came from. */
    TMP(cache3, "cache3");
    for (int i = 0; i < 2; i++) {
        r = RUN("bench", "models/lenet.onnx", "--backend", "cpu", "--iterations", "1",
                "--json", "--cache", cache3);
        CHECK_EQ(r.code, 0);
        CHECK_CONTAINS(r.out, i ? "\"code_cached\": true" : "\"code_cached\": false");
        result_free(&r);
    }
}

int main(void)
{
    if (!spawn_setup("glowc_test_cache"))
        return 1;
    check_store_and_load();
    check_refusals();
    spawn_cleanup();
    return CHECK_DONE();
}
