// node_test.c - Reading ONNX backend test folders and judging their outputs, for every runner.
#include "conformance/node_test.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *nt_suite_dir(const char *suite)
{
    static char dir[1024];
    const char *shared = getenv("GLOWC_SHARED");
    snprintf(dir, sizeof dir, "%s/onnx-node-tests/%s", shared && *shared ? shared : "../shared",
             suite);
    return dir;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char **nt_list_tests(const char *dir, int *count)
{
    *count = 0;
    DIR *dp = opendir(dir);
    if (!dp)
        return NULL;
    char **names = NULL;
    size_t n = 0, cap = 0;
    for (struct dirent *e; (e = readdir(dp)) != NULL;) {
        if (strncmp(e->d_name, "test_", 5) != 0)
            continue;
        if (n == cap)
            names = realloc(names, (cap = cap ? cap * 2 : 256) * sizeof *names);
        names[n++] = strdup(e->d_name);
    }
    closedir(dp);
    if (n)
        qsort(names, n, sizeof *names, cmp_name);
    *count = (int)n;
    return names;
}

void nt_free_tests(char **names, int count)
{
    for (int i = 0; i < count; i++)
        free(names[i]);
    free(names);
}

/* Tests whose expected outputs are further from the exact result than ONNX's tolerance, with
 * the atol that covers the reference's own error (and only that). */
static const struct {
    const char *test;
    double atol;
} atol_overrides[] = {
    /* The inverse DFT's expected outputs carry the reference's float32 error: up to 1.47e-6
     * from the float64 inverse DFT (numpy.fft.ifft of the input), so 10 elements whose exact
     * value is 0 are beyond ONNX's own atol of 1e-7 from the exact result. glowc gives 0 there
     * and is within one float32 ulp of float64 everywhere. 2e-6 is half an ulp of the largest
     * output (54). */
    { "test_dft_inverse", 2e-6 },
    { "test_dft_inverse_opset19", 2e-6 },
};

void nt_read_tolerances(const char *dir, double *rtol, double *atol)
{
    *rtol = 1e-3;
    *atol = 1e-7;
    const char *base = strrchr(dir, '/');
    base = base ? base + 1 : dir;
    for (size_t i = 0; i < sizeof atol_overrides / sizeof atol_overrides[0]; i++)
        if (!strcmp(base, atol_overrides[i].test))
            *atol = atol_overrides[i].atol;
    char path[4096];
    snprintf(path, sizeof path, "%s/data.json", dir);
    uint8_t *data = NULL;
    size_t size = 0;
    glow_diag d = { 0 };
    if (glow_read_file(path, &data, &size, &d) != GLOW_OK)
        return;
    const char *s = (const char *)data, *p;
    if ((p = strstr(s, "\"rtol\"")) && (p = strchr(p, ':')))
        *rtol = strtod(p + 1, NULL);
    if ((p = strstr(s, "\"atol\"")) && (p = strchr(p, ':')))
        *atol = strtod(p + 1, NULL);
    free(data);
}

void nt_shorten(char *out, size_t size, const char *prefix, const char *msg)
{
    const char *p = msg;
    bool ops = strncmp(msg, "model uses ", 11) == 0 && strstr(msg, ": ");
    if (ops) {
        prefix = "unsupported: ";
        p = strstr(msg, ": ") + 2;
    }
    size_t n = (size_t)snprintf(out, size, "%s", prefix);
    if (n >= size)
        n = size - 1;
    bool skipping = false;
    for (; *p && *p != '\n' && n + 1 < size; p++) {
        if (ops && strncmp(p, "; node", 6) == 0)
            skipping = true;
        if (skipping) {
            if (*p != ')')
                continue;
            skipping = false;
        }
        out[n++] = *p == '\t' ? ' ' : *p;
    }
    out[n] = '\0';
    if (*p && *p != '\n' && size > 4)
        strcpy(out + size - 4, "...");
}

/* Sequence and optional values are stored as other protos; their read errors say so. */
static bool is_sequence_msg(const char *msg)
{
    return strstr(msg, "equence") || strstr(msg, "ptional");
}

/* dir/test_data_set_0/<kind>_<i>.pb into *t: 1 read, 0 no such file, -1 not a tensor (d says). */
static int read_one(const char *dir, const char *kind, int i, glow_tensor *t, char *path,
                    size_t psize, glow_diag *d)
{
    snprintf(path, psize, "%s/test_data_set_0/%s_%d.pb", dir, kind, i);
    if (access(path, R_OK) != 0)
        return 0;
    return glow_tensor_read_file(path, t, NULL, d) == GLOW_OK ? 1 : -1;
}

int nt_read_prefix(const char *dir, const char *kind, glow_tensor *ts, int max)
{
    int n = 0;
    char path[4096];
    glow_diag d = { 0 };
    while (n < max && read_one(dir, kind, n, &ts[n], path, sizeof path, &d) > 0)
        n++;
    return n;
}

int nt_read_set(const char *dir, const char *kind, glow_tensor *ts, int max, char *why,
                size_t wsize)
{
    int n = 0;
    for (; n < max; n++) {
        char path[4096];
        glow_diag d = { 0 };
        int got = read_one(dir, kind, n, &ts[n], path, sizeof path, &d);
        if (got == 0)
            break;
        if (got < 0) {
            /* The path is the same for every test: keep the reasons comparable. */
            const char *msg = d.msg;
            size_t plen = strlen(path);
            if (!strncmp(msg, path, plen) && msg[plen] == ':')
                msg += plen + 1 + (msg[plen + 1] == ' ');
            if (is_sequence_msg(msg))
                snprintf(why, wsize, "sequence %s", kind);
            else
                nt_shorten(why, wsize, !strcmp(kind, "input") ? "input file: " : "output file: ",
                           msg);
            for (int k = 0; k < n; k++)
                glow_tensor_free(&ts[k]);
            return -1;
        }
    }
    return n;
}

int nt_read_values(const char *dir, const char *kind, const glow_onnx_io *decl, int ndecl,
                   glow_tensor *ts, int max, int *counts, int *nfiles, char *why,
                   size_t wsize)
{
    int n = 0, f = 0;
    bool ok = true;
    for (; ok && f < ndecl; f++) {
        char path[4096];
        glow_diag d = { 0 };
        glow_io_kind k = glow_io_kind_of(decl[f].type_str);
        if (k == GLOW_IO_TENSOR) {
            int got = read_one(dir, kind, f, &ts[n], path, sizeof path, &d);
            if (got == 0)
                break;
            ok = got > 0 && n + 1 <= max;
            n += got > 0;
            counts[f] = 1;
        } else {
            snprintf(path, sizeof path, "%s/test_data_set_0/%s_%d.pb", dir, kind, f);
            if (access(path, R_OK) != 0)
                break;
            glow_seq_value v = { 0 };
            ok = glow_seq_read_file(path, k, &v, &d) == GLOW_OK;
            ok = ok && n + (v.count > 0 ? v.count : 0) <= max;
            for (int j = 0; ok && j < v.count; j++) {
                ts[n++] = v.tensors[j];   /* moved: v keeps no tensors */
                v.tensors[j] = (glow_tensor){ 0 };
            }
            if (ok)
                counts[f] = v.count;
            glow_seq_value_free(&v);
        }
        if (!ok) {
            const char *msg = d.msg[0] ? d.msg : "too many tensors";
            size_t plen = strlen(path);
            if (!strncmp(msg, path, plen) && msg[plen] == ':')
                msg += plen + 1 + (msg[plen + 1] == ' ');
            nt_shorten(why, wsize, !strcmp(kind, "input") ? "input file: " : "output file: ",
                       msg);
            for (int j = 0; j < n; j++)
                glow_tensor_free(&ts[j]);
            return -1;
        }
    }
    *nfiles = f;
    return n;
}

bool nt_freeze_input(Onnx__GraphProto *g, const char *dir, size_t i)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/test_data_set_0/input_%zu.pb", dir, i);
    uint8_t *data = NULL;
    size_t size = 0;
    glow_diag d = { 0 };
    if (glow_read_file(path, &data, &size, &d) != GLOW_OK)
        return false;
    Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, size, data);
    free(data);
    if (!tp)
        return false;
    if (tp->name != protobuf_c_empty_string)
        free(tp->name);
    tp->name = strdup(g->input[i]->name);
    g->initializer = realloc(g->initializer, (g->n_initializer + 1) * sizeof(void *));
    g->initializer[g->n_initializer++] = tp;
    return true;
}

/* numpy.isclose: NaN only matches NaN, an infinity only itself. */
static bool close_f64(double x, double y, double rtol, double atol)
{
    if (isnan(x) || isnan(y))
        return isnan(x) && isnan(y);
    if (isinf(x) || isinf(y))
        return x == y;
    return fabs(x - y) <= atol + rtol * fabs(y);
}

bool nt_compare(const char *what, const glow_tensor *got, const glow_tensor *want, double rtol,
                double atol, char *why, size_t wsize)
{
    char ta[128], te[128];
    glow_type_str(&got->type, ta, sizeof ta);
    glow_type_str(&want->type, te, sizeof te);
    if (!glow_type_same_shape(&got->type, &want->type)) {
        snprintf(why, wsize, "mismatch: %s shape %s, expected %s", what, ta, te);
        return false;
    }
    glow_dtype dt = got->type.dtype;
    if (dt != want->type.dtype) {
        snprintf(why, wsize, "mismatch: %s dtype %s, expected %s", what, ta, te);
        return false;
    }
    int64_t n = glow_type_numel(&got->type), bad = 0, worst = -1;
    double worst_rel = 0;
    if (dt == GLOW_STRING) {
        /* Strings match byte for byte; the first differing one is named. */
        for (int64_t k = 0; k < n; k++) {
            const char *x = glow_str_at(got->data, (size_t)k);
            const char *y = glow_str_at(want->data, (size_t)k);
            if (strcmp(x, y) == 0)
                continue;
            snprintf(why, wsize, "mismatch: %s [%lld] is \"%.60s\", expected \"%.60s\"", what,
                     (long long)k, x, y);
            return false;
        }
        return true;
    }
    bool fl = glow_dtype_is_float(dt);
    for (int64_t k = 0; k < n; k++) {
        bool ok;
        double rel = 0;
        if (fl) {
            double x = glow_load_f64(dt, got->data, (size_t)k);
            double y = glow_load_f64(dt, want->data, (size_t)k);
            double diff = fabs(x - y);
            ok = close_f64(x, y, rtol, atol);
            rel = isnan(diff) ? INFINITY : diff / (fabs(y) > 0 ? fabs(y) : 1e-30);
        } else {
            ok = glow_load_i64(dt, got->data, (size_t)k) ==
                 glow_load_i64(dt, want->data, (size_t)k);
            rel = ok ? 0 : INFINITY;
        }
        if (!ok) {
            bad++;
            if (worst < 0 || rel > worst_rel) {
                worst = k;
                worst_rel = rel;
            }
        }
    }
    if (!bad)
        return true;
    double x = glow_load_f64(dt, got->data, (size_t)worst);
    double y = glow_load_f64(dt, want->data, (size_t)worst);
    snprintf(why, wsize, "mismatch: %s max rel err %.1e (%lld of %lld values; [%lld] is %.7g, "
             "expected %.7g)", what, worst_rel, (long long)bad, (long long)n, (long long)worst,
             x, y);
    return false;
}
