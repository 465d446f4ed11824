// node_driver.c - The host program of the node-suite bundles (test_conformance --backend
// bundle): one object, linked with the system C compiler to any bundle named "model", so no
// per-bundle build of the driver. The region sizes and each input's and output's place come
// on the command line (the conformance runner reads them from the compiled program):
//
//   node_driver WEIGHTS CONSTANT MUTABLE ACTIVATIONS ALIGN [in OFFSET FILE]...
//               [out OFFSET SIZE FILE]...
//
// Reads WEIGHTS into the constant region, each input file's bytes to its offset in the mutable
// region, calls model(constant, mutable, activations) and writes each output's bytes to its
// file. Exit status 0 ok, 2 bad arguments or files, 3 the bundle returned non-zero.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int model(uint8_t *constant_weights, uint8_t *mutable_weights, uint8_t *activations);

static uint8_t *region(unsigned long long bytes, unsigned long long align)
{
    void *p = NULL;
    size_t n = (size_t)(bytes ? bytes : 1);
    if (align < sizeof(void *))
        align = sizeof(void *);
    if (posix_memalign(&p, (size_t)align, (n + align - 1) / align * align))
        return NULL;
    memset(p, 0, n);
    return p;
}

/* Reads exactly `size` bytes of `path` into dst. */
static int read_into(const char *path, uint8_t *dst, unsigned long long size)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "node_driver: cannot open %s\n", path);
        return -1;
    }
    size_t got = fread(dst, 1, (size_t)size, f);
    int extra = fgetc(f);
    fclose(f);
    if (got != size || extra != EOF) {
        fprintf(stderr, "node_driver: %s is not %llu bytes\n", path, size);
        return -1;
    }
    return 0;
}

static unsigned long long num(const char *s) { return strtoull(s, NULL, 10); }

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: node_driver WEIGHTS CONSTANT MUTABLE ACTIVATIONS ALIGN "
                        "[in OFFSET FILE]... [out OFFSET SIZE FILE]...\n");
        return 2;
    }
    unsigned long long csize = num(argv[2]), msize = num(argv[3]), asize = num(argv[4]);
    unsigned long long align = num(argv[5]);
    uint8_t *c = region(csize, align), *m = region(msize, align), *a = region(asize, align);
    if (!c || !m || !a || read_into(argv[1], c, csize))
        return 2;
    for (int i = 6; i < argc;) {
        if (!strcmp(argv[i], "in") && i + 2 < argc) {
            unsigned long long off = num(argv[i + 1]);
            FILE *f = fopen(argv[i + 2], "rb");
            if (!f)
                return 2;
            fseek(f, 0, SEEK_END);
            long n = ftell(f);
            fclose(f);
            /* checked without overflow: an offset of -1 read as unsigned once wrapped to
             * one byte before the region */
            if (n < 0 || off > msize || (unsigned long long)n > msize - off ||
                read_into(argv[i + 2], m + off, (unsigned long long)n))
                return 2;
            i += 3;
        } else if (!strcmp(argv[i], "out") && i + 3 < argc) {
            i += 4;
        } else {
            fprintf(stderr, "node_driver: bad argument '%s'\n", argv[i]);
            return 2;
        }
    }
    int rc = model(c, m, a);
    if (rc != 0) {
        fprintf(stderr, "node_driver: the bundle returned %d\n", rc);
        return 3;
    }
    for (int i = 6; i < argc;) {
        if (!strcmp(argv[i], "in")) {
            i += 3;
            continue;
        }
        unsigned long long off = num(argv[i + 1]), size = num(argv[i + 2]);
        FILE *f = fopen(argv[i + 3], "wb");
        if (!f || off > msize || size > msize - off ||
            fwrite(m + off, 1, (size_t)size, f) != size) {
            fprintf(stderr, "node_driver: cannot write %s\n", argv[i + 3]);
            if (f)
                fclose(f);
            return 2;
        }
        fclose(f);
        i += 4;
    }
    free(c);
    free(m);
    free(a);
    return 0;
}
