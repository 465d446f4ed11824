// cli_samples.c - Sample inputs for the commands that run a model on many of them (profile,
// run --compare-float): tensor files, folders of them, test_data_set_* folders; each sample
// read and checked against the model's declared inputs and the first sample's shapes.
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"


static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = glow_xmalloc(n);
    snprintf(p, n, "%s%s%s", dir, dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/", name);
    return p;
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

static bool digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Names in natural order: runs of digits compare as numbers (test_data_set_2 before _10). */
static int natural(const char *a, const char *b)
{
    while (*a && *b) {
        if (digit(*a) && digit(*b)) {
            while (*a == '0' && digit(a[1]))
                a++;
            while (*b == '0' && digit(b[1]))
                b++;
            size_t la = 0, lb = 0;
            while (digit(a[la]))
                la++;
            while (digit(b[lb]))
                lb++;
            if (la != lb)
                return la < lb ? -1 : 1;
            int c = strncmp(a, b, la);
            if (c)
                return c;
            a += la;
            b += lb;
        } else if (*a != *b) {
            return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
        } else {
            a++;
            b++;
        }
    }
    return *a ? 1 : *b ? -1 : 0;
}

/* Natural order, then plain order where it ties ("1" and "01"), so the order is total. */
static int cmp_names(const void *pa, const void *pb)
{
    const char *a = *(const char *const *)pa, *b = *(const char *const *)pb;
    int c = natural(a, b);
    return c ? c : strcmp(a, b);
}

/* The sorted entry names of a folder (hidden ones left out); NULL with a message on error. */
static char **list_dir(const cli_sample_list *l, const char *dir, int *count)
{
    DIR *dp = opendir(dir);
    if (!dp) {
        cli_error("%s: cannot read the folder '%s': %s", l->cmd, dir, strerror(errno));
        return NULL;
    }
    GLOW_VEC(char *) names = { 0 };
    for (struct dirent *e; (e = readdir(dp));)
        if (e->d_name[0] != '.')
            GLOW_VEC_PUSH(names, strdup(e->d_name));
    closedir(dp);
    GLOW_VEC_PUSH(names, NULL);
    qsort(names.data, names.len - 1, sizeof(char *), cmp_names);
    *count = (int)names.len - 1;
    return names.data;
}

static void free_names(char **names)
{
    for (int i = 0; names && names[i]; i++)
        free(names[i]);
    free(names);
}

static void add_sample(cli_sample_list *l, char *label, char **files)
{
    GLOW_VEC_PUSH(l->v, ((cli_sample){ label, files }));
}

/* A folder holding input_0.pb, input_1.pb, ... (or .npy): one sample. */
static int add_sample_dir(cli_sample_list *l, const char *dir)
{
    int n = l->s->ninputs;
    char **files = glow_xcalloc((size_t)n + 1, sizeof(char *));
    for (int i = 0; i <= n; i++) {
        char name[64], *found = NULL;
        static const char *const exts[] = { "pb", "npy" };
        for (int k = 0; k < 2 && !found; k++) {
            snprintf(name, sizeof name, "input_%d.%s", i, exts[k]);
            char *p = join(dir, name);
            if (access(p, F_OK) == 0)
                found = p;
            else
                free(p);
        }
        if (i < n && !found) {
            cli_error("%s: '%s' has no input_%d.pb for model input %d '%s' (%s)", l->cmd, dir, i,
                      i, l->s->inputs[i].name, l->s->inputs[i].type_str);
        } else if (i == n && found) {
            cli_error("%s: '%s' has '%s', but the model has %d input%s", l->cmd, dir, found, n,
                      n == 1 ? "" : "s");
            free(found);
            found = NULL;
        } else {
            if (i < n)
                files[i] = found;
            continue;
        }
        for (int k = 0; k < n; k++)
            free(files[k]);
        free(files);
        return CLI_EXIT_BAD_MODEL;
    }
    add_sample(l, strdup(dir), files);
    return -1;
}

/* One tensor file as the sample of a one-input model. */
static int add_sample_file(cli_sample_list *l, const char *path)
{
    if (l->s->ninputs != 1) {
        cli_error("%s: '%s' is one tensor file, but the model has %d inputs: give a "
                  "folder with input_0.pb ... input_%d.pb per sample", l->cmd, path, l->s->ninputs,
                  l->s->ninputs - 1);
        return CLI_EXIT_BAD_MODEL;
    }
    char **files = glow_xcalloc(2, sizeof(char *));
    files[0] = strdup(path);
    add_sample(l, strdup(path), files);
    return -1;
}

int cli_samples_collect(cli_sample_list *l, const char *input)
{
    if (!is_dir(input)) {
        if (access(input, R_OK) != 0) {
            cli_error("%s: cannot read the input '%s': %s", l->cmd, input, strerror(errno));
            return CLI_EXIT_BAD_MODEL;
        }
        return add_sample_file(l, input);
    }
    int count = 0, rc = -1, sets = 0, tensors = 0;
    char **names = list_dir(l, input, &count);
    if (!names)
        return CLI_EXIT_BAD_MODEL;
    bool own = false;
    for (int i = 0; i < count; i++) {
        own |= !strcmp(names[i], "input_0.pb") || !strcmp(names[i], "input_0.npy");
        tensors += ends_with(names[i], ".pb") || ends_with(names[i], ".npy");
    }
    for (int i = 0; i < count && rc < 0; i++) {
        char *p = join(input, names[i]);
        if (!strncmp(names[i], "test_data_set_", 14) && is_dir(p)) {
            sets++;
            rc = add_sample_dir(l, p);
        }
        free(p);
    }
    if (rc < 0 && !sets && own) {
        rc = add_sample_dir(l, input);
    } else if (rc < 0 && !sets) {
        for (int i = 0; i < count && rc < 0; i++) {
            char *p = join(input, names[i]);
            if ((ends_with(names[i], ".pb") || ends_with(names[i], ".npy")) && !is_dir(p))
                rc = add_sample_file(l, p);
            free(p);
        }
        if (rc < 0 && !tensors) {
            cli_error("%s: the folder '%s' holds no test_data_set_* folders, no "
                      "input_0.pb and no tensor files (.pb, .npy)", l->cmd, input);
            rc = CLI_EXIT_BAD_MODEL;
        }
    }
    free_names(names);
    return rc;
}

void cli_samples_free(cli_sample_list *l)
{
    for (size_t i = 0; i < l->v.len; i++) {
        for (int k = 0; l->v.data[i].files && k < l->s->ninputs; k++)
            free(l->v.data[i].files[k]);
        free(l->v.data[i].files);
        free(l->v.data[i].label);
    }
    GLOW_VEC_FREE(l->v);
}

/* --- checking inputs --- */

/* The --define value of the symbol (len chars at sym), or 0. */
static int64_t define_value(const cli_model_opts *o, const char *sym, size_t len)
{
    for (int i = 0; i < o->ndefines; i++)
        if (!strncmp(o->defines[i], sym, len) && o->defines[i][len] == '=')
            return strtoll(o->defines[i] + len + 1, NULL, 10);
    return 0;
}

/* True when t fits the declared type text ("f32[N, 3]", "f32[...]", "?" element type):
 * same element type and rank, equal fixed dims, and symbolic dims as --define fixes them. */
static bool fits(const cli_model_opts *o, const char *decl, const glow_type *t)
{
    const char *br = strchr(decl, '[');
    size_t dlen = br ? (size_t)(br - decl) : strlen(decl);
    const char *dt = glow_dtype_name(t->dtype);
    bool any = (dlen == 1 && decl[0] == '?') || (dlen == 9 && !strncmp(decl, "undefined", 9));
    if (!any && (strlen(dt) != dlen || strncmp(decl, dt, dlen)))
        return false;
    if (!br || !strcmp(br, "[...]"))
        return true;
    int k = 0;
    for (const char *p = br + 1; *p && *p != ']';) {
        size_t n = strcspn(p, ",]");
        if (k >= t->rank)
            return false;
        int64_t have = t->dims[k++];
        char *end = NULL;
        long long v = strtoll(p, &end, 10);
        if (end == p + n ? v != have : define_value(o, p, n) && define_value(o, p, n) != have)
            return false;
        p += n;
        while (*p == ',' || *p == ' ')
            p++;
    }
    return k == t->rank;
}

/* Reads sample `si` into tensors (model order), checking each against the model's declared
 * input and the first sample's type (first: NULL for the first sample). */
int cli_samples_read(const cli_model_opts *o, const cli_sample_list *l, int si,
                     const glow_type *first, glow_tensor *tensors)
{
    const cli_sample *sm = &l->v.data[si];
    for (int i = 0; i < l->s->ninputs; i++) {
        const glow_onnx_io *in = &l->s->inputs[i];
        glow_diag d = { 0 };
        if (glow_tensor_read_file(sm->files[i], &tensors[i], NULL, &d) != GLOW_OK) {
            cli_error("%s: sample %d, input %d '%s': %s", l->cmd, si + 1, i, in->name, d.msg);
            return CLI_EXIT_BAD_MODEL;
        }
        char have[128], want[128];
        glow_type_str(&tensors[i].type, have, sizeof have);
        if (!fits(o, in->type_str, &tensors[i].type)) {
            cli_error("%s: sample %d: input %d '%s' is %s (file '%s'), the model expects "
                      "%s", l->cmd, si + 1, i, in->name, have, sm->files[i], in->type_str);
            return CLI_EXIT_BAD_MODEL;
        }
        if (first && !glow_type_equal(&tensors[i].type, &first[i])) {
            cli_error("%s: sample %d: input %d '%s' is %s (file '%s'), the first sample's "
                      "is %s: one compiled program runs every sample, so all must have the "
                      "same shapes", l->cmd, si + 1, i, in->name, have, sm->files[i],
                      glow_type_str(&first[i], want, sizeof want));
            return CLI_EXIT_BAD_MODEL;
        }
    }
    return -1;
}

void cli_tensors_free(glow_tensor *t, int n)
{
    for (int i = 0; i < n; i++)
        glow_tensor_free(&t[i]);
}
