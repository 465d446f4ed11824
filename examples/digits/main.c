// main.c - The digits demo: links the AOT bundle glowc compiled from models/digits.onnx,
// loads its weights, classifies the held-out handwritten digits in digits.bin and prints each
// prediction and the accuracy. Nothing here knows about glowc beyond the bundle's header.
//
// digits.bin: records of 65 bytes, the label (0..9) then 8x8 pixels of 0..16, row major
// (scripts/train_digits.py writes it from scikit-learn's digits data set).
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "digits.h"

#define PIXELS 64
#define CLASSES 10

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A region of the bundle's size and alignment (at least one byte). */
static uint8_t *region(size_t bytes)
{
    size_t size = (bytes + DIGITS_MEM_ALIGN - 1) / DIGITS_MEM_ALIGN * DIGITS_MEM_ALIGN;
    void *p = NULL;
    if (posix_memalign(&p, DIGITS_MEM_ALIGN, size ? size : DIGITS_MEM_ALIGN) != 0)
        return NULL;
    return p;
}

static int read_file(const char *path, uint8_t *buf, size_t size, size_t *got)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    *got = fread(buf, 1, size, f);
    fclose(f);
    return 0;
}

static void show(const uint8_t *px)
{
    static const char shade[] = " .:-=+*#%@@@@@@@@";
    for (int r = 0; r < 8; r++) {
        printf("    ");
        for (int c = 0; c < 8; c++)
            printf("%c%c", shade[px[r * 8 + c]], shade[px[r * 8 + c]]);
        printf("\n");
    }
}

int main(int argc, char **argv)
{
    const char *weights = argc > 1 ? argv[1] : "digits.weights.bin";
    const char *images = argc > 2 ? argv[2] : "digits.bin";
    int verbose = argc > 3 && !strcmp(argv[3], "-v");

    double t0 = now();
    uint8_t *constant = region(DIGITS_CONSTANT_MEM_SIZE);
    uint8_t *mutable_ = region(DIGITS_MUTABLE_MEM_SIZE);
    uint8_t *act = region(DIGITS_ACTIVATIONS_MEM_SIZE);
    size_t got = 0;
    if (!constant || !mutable_ || !act || read_file(weights, constant,
                                                    DIGITS_CONSTANT_MEM_SIZE, &got) != 0)
        return 1;
    if (got != DIGITS_CONSTANT_MEM_SIZE) {
        fprintf(stderr, "%s: %zu bytes, the bundle wants %d\n", weights, got,
                DIGITS_CONSTANT_MEM_SIZE);
        return 1;
    }
    static uint8_t data[65 * 1000];
    if (read_file(images, data, sizeof data, &got) != 0)
        return 1;
    int n = (int)(got / 65), correct = 0;
    double first = 0, total = 0;
    for (int i = 0; i < n; i++) {
        const uint8_t *rec = data + i * 65;
        float *in = (float *)(mutable_ + DIGITS_INPUT_0_OFFSET);
        for (int p = 0; p < PIXELS; p++)
            in[p] = rec[1 + p] / 16.0f;
        double t = now();
        if (digits(constant, mutable_, act) != 0) {
            fprintf(stderr, "the bundle failed\n");
            return 1;
        }
        double dt = now() - t;
        if (i == 0)
            first = now() - t0;   /* cold start: regions, weights, first inference */
        total += dt;
        const float *probs = (const float *)(mutable_ + DIGITS_OUTPUT_0_OFFSET);
        int best = 0;
        for (int k = 1; k < CLASSES; k++)
            if (probs[k] > probs[best])
                best = k;
        correct += best == rec[0];
        printf("image %2d: label %d  predicted %d (p = %.3f)%s\n", i, rec[0], best,
               probs[best], best == rec[0] ? "" : "  <- wrong");
        if (verbose || best != rec[0])
            show(rec + 1);
    }
    if (n == 0) {
        fprintf(stderr, "%s: no images\n", images);
        return 1;
    }
    printf("accuracy: %d/%d = %.1f%%\n", correct, n, 100.0 * correct / n);
    printf("cold start (allocate, load %d bytes of weights, first inference): %.3f ms; "
           "mean inference %.1f us\n", DIGITS_CONSTANT_MEM_SIZE, first * 1e3, total / n * 1e6);
    free(constant);
    free(mutable_);
    free(act);
    return 0;
}
