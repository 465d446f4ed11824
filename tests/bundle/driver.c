// driver.c - A host program for any one bundle, built by test_bundle with the system (or
// cross) C compiler: -DBUNDLE_H='"name.h"' -DB_FN=name -DB_P=NAME. Loads the weights, reads
// each input as raw bytes, runs the bundle and writes the outputs' bytes, in order, to a file.
//
// usage: driver WEIGHTS|- OUT IN... [--guard start|end] [--threads]
// --guard places every region between PROT_NONE pages, starting right after one (start) or
// ending right before one (end), with the constant region read-only: a bundle that touches
// anything outside its regions, or writes its weights, dies with SIGSEGV.
// --threads runs B_FN_thread on B_P_THREADS threads with a pthread barrier.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include BUNDLE_H

#define CAT2(a, b) a##_##b
#define CAT(a, b) CAT2(a, b)
#define M(x) CAT(B_P, x)

typedef struct region {
    uint8_t *base, *p;
    size_t map;
} region;

static int guard = 0;   /* 0 none, 1 start, 2 end */

static int make_region(region *r, size_t bytes)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t rounded = (bytes + 63) / 64 * 64;
    if (!guard) {
        r->base = NULL;
        if (posix_memalign((void **)&r->p, M(MEM_ALIGN), rounded ? rounded : 64))
            return -1;
        memset(r->p, 0, rounded ? rounded : 64);
        return 0;
    }
    size_t inner = (rounded + page - 1) / page * page;
    r->map = inner + 2 * page;
    r->base = mmap(NULL, r->map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (r->base == MAP_FAILED)
        return -1;
    if (mprotect(r->base, page, PROT_NONE) || mprotect(r->base + page + inner, page, PROT_NONE))
        return -1;
    r->p = guard == 1 ? r->base + page : r->base + page + inner - rounded;
    return 0;
}

static uint8_t *read_all(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
    *size = fread(buf, 1, (size_t)n, f);
    fclose(f);
    return buf;
}

#ifdef B_THREADED
static pthread_barrier_t barrier;
static uint8_t *rc_, *rm_, *ra_;
static void wait_all(void *arg) { (void)arg; pthread_barrier_wait(&barrier); }
static void *thread_main(void *arg)
{
    int tid = (int)(intptr_t)arg;
    return (void *)(intptr_t)CAT(B_FN, thread)(rc_, rm_, ra_, tid, wait_all, NULL);
}
#endif

int main(int argc, char **argv)
{
    const char *files[16];
    int nfiles = 0, threads = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--guard") && i + 1 < argc)
            guard = !strcmp(argv[++i], "start") ? 1 : 2;
        else if (!strcmp(argv[i], "--threads"))
            threads = 1;
        else if (nfiles < 16)
            files[nfiles++] = argv[i];
    }
    if (nfiles != 2 + M(NUM_INPUTS)) {
        fprintf(stderr, "driver: want WEIGHTS OUT and %d inputs\n", M(NUM_INPUTS));
        return 2;
    }
    region c, m, a;
    if (make_region(&c, M(CONSTANT_MEM_SIZE)) || make_region(&m, M(MUTABLE_MEM_SIZE)) ||
        make_region(&a, M(ACTIVATIONS_MEM_SIZE))) {
        fprintf(stderr, "driver: cannot allocate\n");
        return 2;
    }
    uint8_t *constant = c.p;
    if (strcmp(files[0], "-")) {
        size_t n = 0;
        uint8_t *w = read_all(files[0], &n);
        if (!w || n != (size_t)M(CONSTANT_MEM_SIZE)) {
            fprintf(stderr, "driver: %s: %zu bytes, want %lld\n", files[0], n,
                    (long long)M(CONSTANT_MEM_SIZE));
            return 2;
        }
        memcpy(c.p, w, n);
        free(w);
    } else {
        constant = NULL;   /* embedded weights */
    }
    if (guard && c.base) {
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        mprotect(c.base + page, c.map - 2 * page, PROT_READ);
    }
    static const long long in_off[] = {
        M(INPUT_0_OFFSET),
#ifdef B_IN1
        M(INPUT_1_OFFSET),
#endif
    };
    static const long long in_size[] = {
        M(INPUT_0_SIZE),
#ifdef B_IN1
        M(INPUT_1_SIZE),
#endif
    };
    for (int i = 0; i < M(NUM_INPUTS); i++) {
        size_t n = 0;
        uint8_t *x = read_all(files[2 + i], &n);
        if (!x || (long long)n != in_size[i]) {
            fprintf(stderr, "driver: input %d: %zu bytes, want %lld\n", i, n, in_size[i]);
            return 2;
        }
        memcpy(m.p + in_off[i], x, n);
        free(x);
    }
    int rc = 0;
    if (threads) {
#ifdef B_THREADED
        pthread_t t[M(THREADS)];
        rc_ = constant, rm_ = m.p, ra_ = a.p;
        pthread_barrier_init(&barrier, NULL, M(THREADS));
        for (int i = 0; i < M(THREADS); i++)
            pthread_create(&t[i], NULL, thread_main, (void *)(intptr_t)i);
        for (int i = 0; i < M(THREADS); i++) {
            void *r;
            pthread_join(t[i], &r);
            rc |= (int)(intptr_t)r;
        }
#else
        fprintf(stderr, "driver: built without B_THREADED\n");
        return 2;
#endif
    } else {
        rc = B_FN(constant, m.p, a.p);
    }
    if (rc != 0) {
        fprintf(stderr, "driver: the bundle returned %d\n", rc);
        return 3;
    }
    FILE *out = fopen(files[1], "wb");
    if (!out)
        return 2;
    fwrite(m.p + M(OUTPUT_0_OFFSET), 1, M(OUTPUT_0_SIZE), out);
    fclose(out);
    return 0;
}
