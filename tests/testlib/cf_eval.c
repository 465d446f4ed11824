// cf_eval.c - Test support: the numerical check of imported node-suite graphs of cf_eval.h.
// Models are read and re-packed with their frozen inputs, so the importer under test sees
// ordinary initializers.
#include "testlib/cf_eval.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance/node_test.h"
#include "eval/eval.h"
#include "onnx/onnx.h"
#include "onnx/onnx.pb-c.h"
#include "runtime/runtime.h"
#include "testlib/files.h"
#include "testlib/onnx_build.h"

/* ONNX's default tolerance for the node tests (data.json is not consulted). */
static void cf_compare(cf_result *r, const char *name, const glow_tensor *got,
                const glow_tensor *want)
{
    r->compared++;
    if (!nt_compare(name, got, want, 1e-3, 1e-7, r->mismatch_msg, sizeof r->mismatch_msg))
        r->mismatches++;
}

void cf_eval(cf_result *r, glow_module *m, const glow_tensor *ins,
             char *const *in_names, int nin, const glow_tensor *want, int nwant)
{
    for (glow_node *p = m->placeholders.first; p; p = p->next) {
        p->aux = NULL;
        for (int i = 0; p->is_input && i < nin; i++)
            if (strcmp(in_names[i], p->name) == 0)
                p->aux = (void *)&ins[i];
    }
    glow_function *f = glow_module_function(m, "main");
    glow_subgraph_runner_install();   /* lazy IF / LOOP bodies run as programs */
    r->nnodes = (int)f->nodes.count;
    r->evaluated = true;
    GLOW_FOR_EACH_NODE(f, n) {
        n->aux = NULL;
        glow_tensor args[64];
        for (uint32_t i = 0; i < n->nin && i < 64; i++) {
            glow_node *src = n->ins[i].node;
            if (src->kind == NK_CONSTANT)
                args[i] = glow_tensor_borrow(&src->outs[0], src->payload.data);
            else if (src->aux)
                args[i] = ((glow_tensor *)src->aux)[n->ins[i].res];
            else
                args[i] = glow_tensor_borrow(&src->outs[n->ins[i].res], NULL);
        }
        if (n->kind == NK_SAVE) {
            int k = 0;
            for (glow_node *p = m->placeholders.first; p && p != n->ins[1].node; p = p->next)
                k += !p->is_input;
            if (!args[0].data && glow_type_numel(&args[0].type) != 0) {
                r->evaluated = false;
                snprintf(r->eval_msg, sizeof r->eval_msg, "output %d has no value", k);
            } else if (k < nwant) {
                cf_compare(r, n->ins[1].node->name, &args[0], &want[k]);
            }
            continue;
        }
        glow_tensor *outs = calloc(n->nout + 1, sizeof(glow_tensor));
        glow_diag d = { 0 };
        if (glow_eval_node(n, args, outs, &d) != GLOW_OK) {
            free(outs);
            r->evaluated = false;
            snprintf(r->eval_msg, sizeof r->eval_msg, "%.400s", d.msg);
            break;
        }
        n->aux = outs;
    }
    GLOW_FOR_EACH_NODE(f, n) {
        for (uint32_t i = 0; n->aux && i < n->nout; i++)
            glow_tensor_free(&((glow_tensor *)n->aux)[i]);
        free(n->aux);
        n->aux = NULL;
    }
}

cf_result cf_run_bytes(const uint8_t *data, size_t size, const glow_tensor *ins,
                       char *const *in_names, int nin, const glow_tensor *want,
                       int nwant)
{
    cf_result r;
    memset(&r, 0, sizeof r);
    glow_module *m = glow_module_create();
    r.load = glow_onnx_load_bytes(m, data, size, NULL, &r.d);
    if (r.load == GLOW_OK) {
        for (glow_node *p = m->placeholders.first; p; p = p->next)
            if (!p->is_input && r.nout < CF_MAX_IO)
                r.outs[r.nout++] = p->outs[0];
        cf_eval(&r, m, ins, in_names, nin, want, nwant);
    }
    glow_module_destroy(m);
    return r;
}

bool cf_freeze(const char *suite, const char *test, unsigned freeze, cf_frozen *fz)
{
    memset(fz, 0, sizeof *fz);
    char dir[1400], path[2048];
    snprintf(dir, sizeof dir, "%s/%s", nt_suite_dir(suite), test);
    snprintf(fz->path, sizeof fz->path, "%s/model.onnx", dir);
    size_t size;
    uint8_t *data = read_whole(fz->path, &size);
    Onnx__ModelProto *mp = data ? onnx__model_proto__unpack(NULL, size, data) : NULL;
    free(data);
    if (!mp || !mp->graph) {
        if (mp)
            onnx__model_proto__free_unpacked(mp, NULL);
        return false;
    }
    Onnx__GraphProto *g = mp->graph;
    for (size_t i = 0; i < g->n_input && i < CF_MAX_IO; i++) {
        snprintf(path, sizeof path, "%s/test_data_set_0/input_%zu.pb", dir, i);
        if (!(freeze & (1u << i))) {
            glow_diag d = { 0 };
            if (glow_tensor_read_file(path, &fz->ins[fz->nin], NULL, &d) == GLOW_OK)
                fz->in_names[fz->nin++] = strdup(g->input[i]->name);
            continue;
        }
        nt_freeze_input(g, dir, i);
    }
    fz->size = onnx__model_proto__get_packed_size(mp);
    fz->bytes = malloc(fz->size ? fz->size : 1);
    onnx__model_proto__pack(mp, fz->bytes);
    onnx__model_proto__free_unpacked(mp, NULL);
    char why[256];
    fz->nwant = nt_read_set(dir, "output", fz->want, CF_MAX_IO, why, sizeof why);
    if (fz->nwant < 0)
        fz->nwant = 0;
    return true;
}

void cf_frozen_free(cf_frozen *fz)
{
    free(fz->bytes);
    for (int i = 0; i < fz->nin; i++) {
        glow_tensor_free(&fz->ins[i]);
        free(fz->in_names[i]);
    }
    for (int i = 0; i < fz->nwant; i++)
        glow_tensor_free(&fz->want[i]);
    memset(fz, 0, sizeof *fz);
}

cf_result cf_run(const char *suite, const char *test, unsigned freeze)
{
    cf_result r;
    memset(&r, 0, sizeof r);
    cf_frozen fz;
    if (cf_freeze(suite, test, freeze, &fz))
        r = cf_run_bytes(fz.bytes, fz.size, fz.ins, fz.in_names, fz.nin, fz.want, fz.nwant);
    else {
        r.load = GLOW_ERR_IO;
        snprintf(r.d.msg, sizeof r.d.msg, "cannot read %s", fz.path);
    }
    cf_frozen_free(&fz);
    return r;
}

const char *cf_out_type(const cf_result *r, int i)
{
    static char buf[4][128];
    static int k;
    k = (k + 1) % 4;
    if (i >= r->nout)
        return "(none)";
    return glow_type_str(&r->outs[i], buf[k], sizeof buf[k]);
}

bool cf_passes(const char *test, unsigned freeze, int nout, const char *const *types,
               cf_result *out)
{
    cf_result r = cf_run("node", test, freeze);
    bool ok = r.load == GLOW_OK;
    if (!ok)
        fprintf(stderr, "%s: %s\n", test, r.d.msg);
    if (r.nout != nout) {
        fprintf(stderr, "%s: %d outputs, expected %d\n", test, r.nout, nout);
        ok = false;
    }
    for (int i = 0; i < nout; i++)
        if (strcmp(cf_out_type(&r, i), types[i]) != 0) {
            fprintf(stderr, "%s: output %d is %s, expected %s\n", test, i, cf_out_type(&r, i),
                    types[i]);
            ok = false;
        }
    if (!r.evaluated) {
        fprintf(stderr, "%s: not evaluated: %s\n", test, r.eval_msg);
        ok = false;
    }
    if (r.compared != nout) {
        fprintf(stderr, "%s: %d outputs compared, expected %d\n", test, r.compared, nout);
        ok = false;
    }
    if (r.mismatches) {
        fprintf(stderr, "%s: %s\n", test, r.mismatch_msg);
        ok = false;
    }
    if (out)
        *out = r;
    return ok;
}

cf_result cf_run_model(struct mk_model *mk, const glow_tensor *ins, char *const *in_names,
                       int nin, const glow_tensor *want, int nwant)
{
    size_t size;
    uint8_t *bytes = mk_pack(mk, &size);
    cf_result r = cf_run_bytes(bytes, size, ins, in_names, nin, want, nwant);
    free(bytes);
    return r;
}

bool cf_ok(const char *what, const cf_result *r, int nout)
{
    if (r->load != GLOW_OK) {
        fprintf(stderr, "%s: load failed: %s\n", what, r->d.msg);
        return false;
    }
    if (!r->evaluated) {
        fprintf(stderr, "%s: not evaluated: %s\n", what, r->eval_msg);
        return false;
    }
    if (r->compared != nout || r->mismatches) {
        fprintf(stderr, "%s: %d of %d outputs compared, %d mismatches: %s\n", what,
                r->compared, nout, r->mismatches, r->mismatch_msg);
        return false;
    }
    return true;
}
