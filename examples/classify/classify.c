// classify.c - A small program on glowc's public C API: loads an ONNX classifier, runs it on
// one input file (.pb TensorProto or .npy) and prints the top-1 class and its score.
//
//   cc classify.c $(pkg-config --cflags --libs glowc) -o classify
//   ./classify models/lenet.onnx models/lenet_input.pb [cpu|interpreter]
#include <stdio.h>
#include <stdlib.h>

#include <glowc/glowc.h>

/* Prints the failed call's message and exits. */
static void check(glowc_status s, const char *what)
{
    if (s != GLOWC_OK) {
        fprintf(stderr, "classify: %s: %s\n", what, glowc_last_error());
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: classify MODEL.onnx INPUT.pb|INPUT.npy [cpu|interpreter]\n");
        return 2;
    }
    glowc_options *o = glowc_options_create();
    check(glowc_options_set_backend(o, argc > 3 ? argv[3] : "cpu"), "backend");
    glowc_session *s = NULL;
    check(glowc_session_create(o, argv[1], &s), "loading the model");
    glowc_options_destroy(o);

    glowc_tensor *input = NULL;
    check(glowc_tensor_read_file(argv[2], &input), "reading the input");
    glowc_value in = glowc_tensor_value(input);

    /* The first output is the score vector ([K] or [1, K]), in a buffer of our own. */
    glowc_tensor_info info;
    check(glowc_session_output_info(s, 0, &info), "describing the output");
    if (info.dtype != GLOWC_F32) {
        fprintf(stderr, "classify: output '%s' is %s, not f32 scores\n", info.name,
                glowc_dtype_name(info.dtype));
        return 1;
    }
    size_t k = info.size_bytes / sizeof(float);
    float *scores = malloc(info.size_bytes);
    glowc_value out = { NULL, GLOWC_F32, 0, NULL, scores, info.size_bytes };
    check(glowc_session_run(s, &in, 1, &out, 1), "running");

    size_t best = 0;
    for (size_t i = 1; i < k; i++)
        if (scores[i] > scores[best])
            best = i;
    printf("top-1: class %zu (score %.6f) of %zu, glowc %s\n", best, scores[best], k,
           glowc_version());
    free(scores);
    glowc_tensor_destroy(input);
    glowc_session_destroy(s);
    return 0;
}
