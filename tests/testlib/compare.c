// compare.c - Test support: the comparisons of compare.h. Differences are printed as they
// are found, so that a failing CHECK on the count comes with the elements that broke it.
#include "testlib/compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx.h"

static void report(const cmp_spec *s, int64_t i, double got, double ref)
{
    fprintf(stderr, "%s: [%lld] %s %.9g, %s %.9g\n", s->what, (long long)i, s->got_name, got,
            s->ref_name, ref);
}

int compare_close(const cmp_spec *s, glow_dtype dt, const void *got, const void *ref,
                  int64_t n)
{
    size_t es = glow_dtype_size(dt);
    const uint8_t *g = got, *r = ref;
    double floor = s->floor > 0 ? s->floor : 1;
    int bad = 0;
    for (int64_t i = 0; i < n && bad < s->max_report; i++) {
        double a = glow_load_f64(dt, ref, (size_t)i), b = glow_load_f64(dt, got, (size_t)i);
        bool same;
        if (glow_dtype_is_float(dt))
            same = (s->nan_equal && a != a && b != b) ||
                   fabs(a - b) <= s->rel_tol * (fabs(a) > floor ? fabs(a) : floor);
        else
            same = memcmp(r + (size_t)i * es, g + (size_t)i * es, es) == 0;
        if (!same) {
            report(s, i, b, a);
            bad++;
        }
    }
    return bad;
}

int compare_bits(const cmp_spec *s, glow_dtype dt, const void *got, const void *ref,
                 int64_t n)
{
    size_t es = glow_dtype_size(dt);
    const uint8_t *g = got, *r = ref;
    int bad = 0;
    for (int64_t i = 0; i < n && bad < s->max_report; i++) {
        if (memcmp(g + (size_t)i * es, r + (size_t)i * es, es) != 0) {
            report(s, i, glow_load_f64(dt, got, (size_t)i), glow_load_f64(dt, ref, (size_t)i));
            bad++;
        }
    }
    return bad;
}

double tensor_max_diff(const glow_tensor *a, const glow_tensor *e)
{
    if (!glow_type_equal(&a->type, &e->type))
        return -1;
    double m = 0;
    for (int64_t i = 0; i < glow_type_numel(&a->type); i++) {
        double x = glow_load_f64(a->type.dtype, a->data, (size_t)i);
        double y = glow_load_f64(e->type.dtype, e->data, (size_t)i);
        m = fabs(x - y) > m ? fabs(x - y) : m;
    }
    return m;
}

double tensor_file_diff(const char *got, const char *ref, char **got_name)
{
    glow_tensor a = { 0 }, e = { 0 };
    char *name = NULL;
    glow_diag d = { 0 };
    double diff = -1;
    if (glow_tensor_read_file(got, &a, &name, &d) == GLOW_OK &&
        glow_tensor_read_file(ref, &e, NULL, &d) == GLOW_OK)
        diff = tensor_max_diff(&a, &e);
    else
        fprintf(stderr, "%s\n", d.msg);
    if (got_name)
        *got_name = name;
    else
        free(name);
    glow_tensor_free(&a);
    glow_tensor_free(&e);
    return diff;
}

bool write_ramp_tensor(const char *path, glow_dtype dt, int rank, const int64_t *dims,
                       double scale)
{
    glow_type ty = glow_type_make(dt, rank, dims);
    glow_tensor t;
    glow_diag d = { 0 };
    if (glow_tensor_alloc(&t, &ty, &d) != GLOW_OK) {
        fprintf(stderr, "%s\n", d.msg);
        return false;
    }
    for (int64_t i = 0; i < glow_type_numel(&ty); i++)
        glow_store_f64(dt, t.data, (size_t)i, (double)i * scale);
    bool ok = glow_tensor_write_pb(path, &t, "t", &d) == GLOW_OK;
    if (!ok)
        fprintf(stderr, "%s: %s\n", path, d.msg);
    glow_tensor_free(&t);
    return ok;
}
