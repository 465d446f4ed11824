// ops_test_util.h - Loads ONNX node-suite models for the op-loader tests, optionally edited
// (fed inputs frozen into initializers from the test data, attributes changed), and prints
// the imported graph.
#ifndef GLOW_TEST_OPS_TEST_UTIL_H
#define GLOW_TEST_OPS_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance/node_test.h"
#include "graph/graph.h"
#include "onnx/onnx.h"
#include "onnx/onnx.pb-c.h"

/* Edits the unpacked model before it is loaded. Anything added must be malloc'd, since
 * protobuf-c frees the message field by field. */
typedef void (*model_edit)(Onnx__ModelProto *mp);

typedef struct loaded {
    glow_status st;
    glow_diag d;
    char *text;   /* glow_function_print of "main" when the load succeeded; malloc'd */
    char *module_text; /* glow_module_print (storage with small constants' values); malloc'd */
} loaded;

static inline uint8_t *read_all(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    uint8_t *buf = NULL;
    size_t cap = 0, len = 0, got;
    do {
        if (len == cap) {
            cap = cap ? 2 * cap : 4096;
            buf = realloc(buf, cap);
        }
        got = fread(buf + len, 1, cap - len, f);
        len += got;
    } while (got > 0);
    fclose(f);
    *size = len;
    return buf;
}

static inline const char *node_dir(void)
{
    return nt_suite_dir("node");
}

/* Sets an integer attribute of node 0 (added when absent). */
static inline void set_int_attr(Onnx__NodeProto *np, const char *name, int64_t v)
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

static inline void set_ints_attr(Onnx__NodeProto *np, const char *name, const int64_t *v, size_t n)
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
static inline void set_string_attr(Onnx__NodeProto *np, const char *name, const char *v)
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

static inline void set_node_name(Onnx__NodeProto *np, const char *name)
{
    if (np->name != protobuf_c_empty_string)
        free(np->name);
    np->name = strdup(name);
}

static inline void set_opset(Onnx__ModelProto *mp, int64_t v)
{
    for (size_t i = 0; i < mp->n_opset_import; i++)
        if (!mp->opset_import[i]->domain || !mp->opset_import[i]->domain[0] ||
            strcmp(mp->opset_import[i]->domain, "ai.onnx") == 0)
            mp->opset_import[i]->version = v;
}

/* Loads node/<test>/model.onnx. Fed inputs whose bit is set in `freeze` become initializers
 * holding their test_data_set_0 value; `edit` (may be NULL) changes the model first. */
static inline loaded load_node_test(const char *test, unsigned freeze, model_edit edit)
{
    loaded r = { 0 };
    char path[1200], dir[1100];
    size_t size;
    snprintf(path, sizeof path, "%s/%s/model.onnx", node_dir(), test);
    uint8_t *data = read_all(path, &size);
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
static inline const char *loaded_text(const loaded *r)
{
    return r->st == GLOW_OK ? r->text : r->d.msg;
}

static inline void loaded_free(loaded *r)
{
    free(r->text);
    free(r->module_text);
    r->text = r->module_text = NULL;
}

#endif
