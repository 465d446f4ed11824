// onnx_edit.c - Test support: the node-suite model loading and editing of onnx_edit.h. Models
// are edited as unpacked protobuf messages and packed again, so the loader under test reads
// bytes exactly as it would from a file.
#include "testlib/onnx_edit.h"

#include "conformance/node_test.h"
#include "testlib/files.h"

const char *node_dir(void)
{
    return nt_suite_dir("node");
}

/* Sets an integer attribute of node 0 (added when absent). */
void set_int_attr(Onnx__NodeProto *np, const char *name, int64_t v)
{
    for (size_t i = 0; i < np->n_attribute; i++)
        if (strcmp(np->attribute[i]->name, name) == 0) {
            np->attribute[i]->i = v;
            np->attribute[i]->has_i = 1;
            return;
        }
    Onnx__AttributeProto *a = malloc(sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = strdup(name);
    a->i = v;
    a->has_i = 1;
    a->type = 2;
    a->has_type = 1;
    np->attribute = realloc(np->attribute, (np->n_attribute + 1) * sizeof *np->attribute);
    np->attribute[np->n_attribute++] = a;
}

void set_ints_attr(Onnx__NodeProto *np, const char *name, const int64_t *v, size_t n)
{
    Onnx__AttributeProto *a = malloc(sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = strdup(name);
    a->ints = malloc((n ? n : 1) * sizeof(int64_t));
    memcpy(a->ints, v, n * sizeof(int64_t));
    a->n_ints = n;
    a->type = 7;
    a->has_type = 1;
    np->attribute = realloc(np->attribute, (np->n_attribute + 1) * sizeof *np->attribute);
    np->attribute[np->n_attribute++] = a;
}

/* Sets a string attribute of np (added when absent). */
void set_string_attr(Onnx__NodeProto *np, const char *name, const char *v)
{
    Onnx__AttributeProto *a = NULL;
    for (size_t i = 0; i < np->n_attribute && !a; i++)
        if (strcmp(np->attribute[i]->name, name) == 0)
            a = np->attribute[i];
    if (!a) {
        a = malloc(sizeof *a);
        onnx__attribute_proto__init(a);
        a->name = strdup(name);
        a->type = 3;
        a->has_type = 1;
        np->attribute = realloc(np->attribute, (np->n_attribute + 1) * sizeof *np->attribute);
        np->attribute[np->n_attribute++] = a;
    } else {
        free(a->s.data);
    }
    a->s.data = (uint8_t *)strdup(v);
    a->s.len = strlen(v);
    a->has_s = 1;
}

void set_node_name(Onnx__NodeProto *np, const char *name)
{
    if (np->name != protobuf_c_empty_string)
        free(np->name);
    np->name = strdup(name);
}

void set_opset(Onnx__ModelProto *mp, int64_t v)
{
    for (size_t i = 0; i < mp->n_opset_import; i++)
        if (!mp->opset_import[i]->domain || !mp->opset_import[i]->domain[0] ||
            strcmp(mp->opset_import[i]->domain, "ai.onnx") == 0)
            mp->opset_import[i]->version = v;
}

/* Loads node/<test>/model.onnx. Fed inputs whose bit is set in `freeze` become initializers
 * holding their test_data_set_0 value; `edit` (may be NULL) changes the model first. */
loaded load_node_test(const char *test, unsigned freeze, model_edit edit)
{
    loaded r = { 0 };
    char path[1200], dir[1100];
    size_t size;
    snprintf(path, sizeof path, "%s/%s/model.onnx", node_dir(), test);
    uint8_t *data = read_whole(path, &size);
    if (!data) {
        r.st = GLOW_ERR_IO;
        snprintf(r.d.msg, sizeof r.d.msg, "cannot read %s", path);
        return r;
    }
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, size, data);
    free(data);
    if (!mp || !mp->graph) {
        r.st = GLOW_ERR_PARSE;
        snprintf(r.d.msg, sizeof r.d.msg, "cannot parse %s", path);
        return r;
    }
    Onnx__GraphProto *g = mp->graph;
    for (size_t i = 0; i < g->n_input && i < 32; i++) {
        if (!(freeze & (1u << i)))
            continue;
        snprintf(dir, sizeof dir, "%s/%s", node_dir(), test);
        nt_freeze_input(g, dir, i);
    }
    if (edit)
        edit(mp);
    size = onnx__model_proto__get_packed_size(mp);
    data = malloc(size ? size : 1);
    onnx__model_proto__pack(mp, data);
    onnx__model_proto__free_unpacked(mp, NULL);

    glow_module *m = glow_module_create();
    r.st = glow_onnx_load_bytes(m, data, size, NULL, &r.d);
    free(data);
    if (r.st == GLOW_OK) {
        size_t len;
        FILE *out = open_memstream(&r.text, &len);
        glow_function_print(out, glow_module_function(m, "main"));
        fclose(out);
        out = open_memstream(&r.module_text, &len);
        glow_module_print(out, m);
        fclose(out);
    }
    glow_module_destroy(m);
    return r;
}

/* The text of a successful load, or the failure message (for CHECK_STR_EQ reports). */
const char *loaded_text(const loaded *r)
{
    return r->st == GLOW_OK ? r->text : r->d.msg;
}

void loaded_free(loaded *r)
{
    free(r->text);
    free(r->module_text);
    r->text = r->module_text = NULL;
}


void keep_inputs(Onnx__NodeProto *np, size_t keep)
{
    for (size_t i = keep; i < np->n_input; i++)
        if (np->input[i] != protobuf_c_empty_string)
            free(np->input[i]);
    if (np->n_input > keep)
        np->n_input = keep;
}

bool load_gives(const char *test, unsigned freeze, model_edit edit, glow_status st,
                const char *needle)
{
    loaded r = load_node_test(test, freeze, edit);
    bool ok = r.st == st && strstr(loaded_text(&r), needle);
    if (!ok)
        fprintf(stderr, "%s: status %d (expected %d), text:\n  %s\n  expected to contain: %s\n",
                test, (int)r.st, (int)st, loaded_text(&r), needle);
    loaded_free(&r);
    return ok;
}

bool load_prints(const char *test, unsigned freeze, model_edit edit,
                 char *(*filter)(const char *), const char *expected)
{
    loaded r = load_node_test(test, freeze, edit);
    char *got = filter && r.st == GLOW_OK ? filter(r.text) : NULL;
    const char *text = got ? got : loaded_text(&r);
    bool ok = r.st == GLOW_OK && strcmp(text, expected) == 0;
    if (!ok)
        fprintf(stderr, "%s: status %d\n  got:      %s\n  expected: %s\n", test, (int)r.st, text,
                expected);
    free(got);
    loaded_free(&r);
    return ok;
}
