// partition.c - The partitioner: splits the optimized graph over devices by memory capacity,
// backend support and the user's assignment (Glow's Partitioner, simplified).
//
// Approach. The graph is optimized (backend-independent passes only: activation fusion runs
// after lowering) and scheduled for low peak memory; partitions are then contiguous ranges of
// that order, so the partition graph is acyclic by construction and its order is a valid
// execution order. The walk grows the current range while the device can hold it:
//   need(range) = weights its nodes read (each constant once)
//               + its inputs and outputs (model tensors and tensors crossing partitions:
//                 placeholders that live for the whole run)
//               + the peak of its intermediate results (live from producer to last reader,
//                 in schedule order) - an estimate of what the memory planner achieves.
// A node pinned by the user to another device, or that the device's backend cannot run, ends
// the range; so does the capacity. At a capacity cut the cut point moves back, within the last
// quarter of the range, to where the fewest bytes cross (ties: the latest point), and the
// device is marked full; when that leaves the devices too small, the walk is redone without
// moving cuts (the plain greedy packs tightest). Each new range goes to the first device (list
// order) that is not full, can run its first node and has room for it; pinned nodes go to
// their device. With split_nodes, products too large for every device are split first
// (partition_nodes.c).
// Cost: need() is O(k + operands) for a range of k nodes and is recomputed per added node, so
// a range costs O(k^2) and the walk O(sum k^2) <= O(n^2); the crossing bytes at every cut
// point come from one prefix sum, O(n + operands).
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "runtime/partition_internal.h"

/* Scratch for need(): stamps so a constant or input is counted once per range. */
typedef struct pt_scratch {
    uint32_t epoch;
    uint32_t *store;       /* by node id */
    uint32_t *vals;        /* by value index */
    int64_t *diff;         /* n + 2 */
} pt_scratch;

static uint64_t total(const pt_range *r) { return r->weights + r->io + r->act; }

/* need() of positions [s, e] (inclusive), into r's sizes. */
static void range_cost(const pt_graph *g, pt_scratch *sc, int s, int e, pt_range *r)
{
    uint32_t ep = ++sc->epoch;
    r->weights = r->io = r->act = 0;
    for (int i = 0; i <= e - s + 1; i++)
        sc->diff[i] = 0;
    for (int i = s; i <= e; i++) {
        const glow_node *n = g->node[i];
        for (uint32_t k = 0; k < n->nin; k++) {
            const glow_node *o = n->ins[k].node;
            int vi = pt_value_of(g, n->ins[k]);
            if (vi < 0) {
                if (sc->store[o->id] == ep)
                    continue;
                sc->store[o->id] = ep;
                uint64_t b = glow_type_bytes(&o->outs[0]);
                if (o->kind == NK_CONSTANT)
                    r->weights += b;
                else
                    r->io += b;
            } else if (g->val[vi].prod < s && sc->vals[vi] != ep) {
                sc->vals[vi] = ep;
                r->io += g->val[vi].bytes;
            }
        }
        for (int vi = g->vbase[i]; vi < g->vbase[i + 1]; vi++) {
            const pt_value *v = &g->val[vi];
            if (v->last > e || v->saved) {
                r->io += v->bytes;
            } else {
                sc->diff[i - s] += (int64_t)v->bytes;
                sc->diff[v->last - s + 1] -= (int64_t)v->bytes;
            }
        }
    }
    int64_t live = 0;
    for (int i = 0; i <= e - s; i++) {
        live += sc->diff[i];
        if ((uint64_t)live > r->act)
            r->act = (uint64_t)live;
    }
}

/* Fills g from f: positions, values, last readers, saves, the model's placeholders. */
static void analyze(pt_graph *g, glow_function *f, glow_node **inputs, int ninputs,
                    glow_node **outputs, int noutputs)
{
    glow_module *m = f->module;
    g->f = f;
    g->nids = m->next_id;
    g->inputs = inputs;
    g->ninputs = ninputs;
    g->outputs = outputs;
    g->noutputs = noutputs;
    for (glow_node *n = m->constants.first; n; n = n->next)
        n->aux = NULL;
    for (glow_node *n = m->placeholders.first; n; n = n->next)
        n->aux = NULL;
    int count = 0, nsave = 0, nval = 0;
    for (glow_node *n = f->nodes.first; n; n = n->next) {
        if (n->kind == NK_SAVE) {
            nsave++;
        } else {
            count++;
            nval += (int)n->nout;
        }
    }
    g->node = glow_xcalloc((size_t)count + 1, sizeof *g->node);
    g->vbase = glow_xcalloc((size_t)count + 2, sizeof *g->vbase);
    g->val = glow_xcalloc((size_t)nval + 1, sizeof *g->val);
    g->saves = glow_xcalloc((size_t)nsave + 1, sizeof *g->saves);
    g->save_part = glow_xcalloc((size_t)nsave + 1, sizeof *g->save_part);
    for (glow_node *n = f->nodes.first; n; n = n->next) {
        if (n->kind == NK_SAVE) {
            n->aux = NULL;
            g->saves[g->nsaves++] = n;
            continue;
        }
        int pos = g->n++;
        g->node[pos] = n;
        n->aux = (void *)(intptr_t)(pos + 1);
        g->vbase[pos] = g->nval;
        for (uint32_t r = 0; r < n->nout; r++) {
            pt_value *v = &g->val[g->nval++];
            v->v = glow_val(n, r);
            v->bytes = glow_type_bytes(&n->outs[r]);
            v->prod = v->last = pos;
        }
    }
    g->vbase[g->n] = g->nval;
    for (int i = 0; i < g->n; i++) {
        const glow_node *n = g->node[i];
        for (uint32_t k = 0; k < n->nin; k++) {
            int vi = pt_value_of(g, n->ins[k]);
            if (vi >= 0 && g->val[vi].last < i)
                g->val[vi].last = i;
        }
    }
    for (int s = 0; s < g->nsaves; s++) {
        int vi = pt_value_of(g, g->saves[s]->ins[0]);
        if (vi >= 0)
            g->val[vi].saved = true;
    }
}

/* cross[c] = bytes of values made before position c and read at or after it. */
static uint64_t *crossing_bytes(const pt_graph *g)
{
    int64_t *diff = glow_xcalloc((size_t)g->n + 2, sizeof *diff);
    uint64_t *cross = glow_xcalloc((size_t)g->n + 1, sizeof *cross);
    for (int vi = 0; vi < g->nval; vi++) {
        const pt_value *v = &g->val[vi];
        if (v->last > v->prod) {
            diff[v->prod + 1] += (int64_t)v->bytes;
            diff[v->last + 1] -= (int64_t)v->bytes;
        }
    }
    int64_t cur = 0;
    for (int c = 0; c <= g->n; c++) {
        cur += diff[c];
        cross[c] = (uint64_t)cur;
    }
    free(diff);
    return cross;
}

typedef struct walk {
    pt_graph *g;
    const glow_partition_options *o;
    pt_scratch sc;
    int *pin;              /* device by position, -1 when not pinned */
    bool *sup;             /* [pos * ndevices + dev]: the device's backend runs the node */
    uint64_t *room;        /* bytes left per device */
    bool *full;            /* a capacity cut closed the device */
    GLOW_VEC(pt_range) parts;
} walk;

static bool can_run(const walk *w, int pos, int dev)
{
    if (w->pin[pos] >= 0)
        return w->pin[pos] == dev;
    return w->sup[(size_t)pos * (size_t)w->o->ndevices + (size_t)dev];
}

/* The support table: the options' check, else the backends' own (partition_nodes.c) when
 * the devices have more than one backend; asked once per node and backend. */
static void support_table(walk *w)
{
    const glow_partition_options *o = w->o;
    int nd = o->ndevices;
    glow_partition_support_fn fn = o->supports;
    void *ctx = o->supports_ctx;
    for (int k = 1; !fn && k < nd; k++)
        if (strcmp(o->devices[k].backend, o->devices[0].backend) != 0)
            fn = glow_partition_backend_supports;
    w->sup = glow_xcalloc((size_t)w->g->n * (size_t)nd + 1, sizeof *w->sup);
    for (int i = 0; i < w->g->n; i++) {
        bool *row = &w->sup[(size_t)i * (size_t)nd];
        for (int k = 0; k < nd; k++) {
            int same = 0;
            while (same < k && strcmp(o->devices[same].backend, o->devices[k].backend) != 0)
                same++;
            if (same < k)
                row[k] = row[same];
            else
                row[k] = !fn || fn(w->g->node[i], o->devices[k].backend, ctx);
        }
    }
}

static void describe_need(char *buf, size_t size, const pt_range *r)
{
    char a[32], b[32], c[32], t[32];
    snprintf(buf, size, "%s (weights %s, inputs and outputs %s, activations %s)",
             glow_bytes_str(total(r), t, sizeof t), glow_bytes_str(r->weights, a, sizeof a),
             glow_bytes_str(r->io, b, sizeof b), glow_bytes_str(r->act, c, sizeof c));
}

/* Fails naming the first node that fits no device it may run on, whatever else is placed. */
static glow_status check_nodes(walk *w, glow_diag *d)
{
    const glow_partition_options *o = w->o;
    for (int i = 0; i < w->g->n; i++) {
        const glow_node *n = w->g->node[i];
        int best = -1;
        for (int dev = 0; dev < o->ndevices; dev++)
            if (can_run(w, i, dev) && (best < 0 || o->devices[dev].capacity >
                                                   o->devices[best].capacity))
                best = dev;
        if (best < 0)
            return glow_fail(d, GLOW_ERR_UNSUPPORTED, "no device can run node '%s' (%s): "
                             "no device's backend supports it", n->name,
                             glow_node_kind_name(n->kind));
        pt_range r;
        range_cost(w->g, &w->sc, i, i, &r);
        if (total(&r) <= o->devices[best].capacity)
            continue;
        char need[160], cap[32];
        describe_need(need, sizeof need, &r);
        glow_bytes_str(o->devices[best].capacity, cap, sizeof cap);
        return glow_fail(d, GLOW_ERR_TOO_LARGE, "node '%s' (%s) needs %s, more than %s "
                         "holds (device %d, %s: %s)%s", n->name, glow_node_kind_name(n->kind),
                         need, w->pin[i] >= 0 ? "the device it is assigned to"
                                              : "the largest device it may run on",
                         best, o->devices[best].backend, cap,
                         !o->split_nodes && pt_split_weight(n)
                             ? "; splitting its weights over partitions (--split-nodes) "
                               "may make it fit"
                             : "");
    }
    return GLOW_OK;
}

/* The device an unpinned node belongs on: the first open device that can run it. */
static int preferred(const walk *w, int pos)
{
    for (int k = 0; k < w->o->ndevices; k++)
        if (!w->full[k] && can_run(w, pos, k))
            return k;
    return -1;
}

/* The device for a range starting at position s: its pinned device, else the first open
 * device that can run it and has room. An open device without room for s is closed, so the
 * next nodes in order do not come back to it (the walk keeps to one device at a time). */
static glow_status choose_device(walk *w, int s, int *dev, glow_diag *d)
{
    pt_range r;
    range_cost(w->g, &w->sc, s, s, &r);
    for (int k = 0; k < w->o->ndevices; k++) {
        if ((w->pin[s] < 0 && w->full[k]) || !can_run(w, s, k))
            continue;
        if (total(&r) > w->room[k]) {
            if (w->pin[s] < 0)
                w->full[k] = true;
            continue;
        }
        *dev = k;
        return GLOW_OK;
    }
    char need[160], rooms[512] = "";
    size_t len = 0;
    describe_need(need, sizeof need, &r);
    for (int k = 0; k < w->o->ndevices && len < sizeof rooms - 64; k++) {
        char b[32];
        len += (size_t)snprintf(rooms + len, sizeof rooms - len, "%sdevice %d %s: %s left",
                                k ? ", " : "", k, w->o->devices[k].backend,
                                glow_bytes_str(w->full[k] ? 0 : w->room[k], b, sizeof b));
    }
    const glow_node *n = w->g->node[s];
    return glow_fail(d, GLOW_ERR_TOO_LARGE, "the devices are too small for the model: node "
                     "'%s' (%s, %d of %d in schedule order) needs %s and no device has that "
                     "room left (%s)", n->name, glow_node_kind_name(n->kind), s + 1, w->g->n,
                     need, rooms);
}

/* A capacity cut at e: the point in the last quarter of [s, e] where the fewest bytes cross;
 * every node moved to the next range must be unpinned. */
static int adjust_cut(const walk *w, const uint64_t *cross, int s, int e)
{
    int span = (e - s) / 4 > 1 ? (e - s) / 4 : 1;
    int best = e;
    for (int c = e - 1; c >= s + 1 && c >= e - span; c--) {
        if (w->pin[c] >= 0)
            break;
        if (cross[c] < cross[best])
            best = c;
    }
    return best;
}

/* One walk over the graph (adjust: move capacity cuts to cheaper points). */
static glow_status walk_graph(walk *w, bool adjust, glow_diag *d)
{
    pt_graph *g = w->g;
    uint64_t *cross = crossing_bytes(g);
    glow_status st = GLOW_OK;
    for (int s = 0; s < g->n && st == GLOW_OK;) {
        int dev = 0;
        if ((st = choose_device(w, s, &dev, d)) != GLOW_OK)
            break;
        pt_range r = { .s = s, .device = dev };
        range_cost(g, &w->sc, s, s, &r);
        bool capacity_cut = false;
        int e = s + 1;
        for (; e < g->n; e++) {
            /* A range a pinned node starts holds only nodes pinned there: the user chose
             * where those run, not their neighbours. An unpinned range holds the nodes that
             * belong on its device (pinned ones only when pinned there): a node another
             * device comes first for (backend support) goes back to that device. */
            if (w->pin[s] >= 0 || w->pin[e] >= 0 ? w->pin[e] != dev
                                                  : preferred(w, e) != dev)
                break;
            pt_range t;
            range_cost(g, &w->sc, s, e, &t);
            if (total(&t) > w->room[dev]) {
                capacity_cut = true;
                break;
            }
        }
        if (capacity_cut) {
            if (adjust)
                e = adjust_cut(w, cross, s, e);
            w->full[dev] = true;
        }
        range_cost(g, &w->sc, s, e - 1, &r);
        r.e = e;
        w->room[dev] -= total(&r) < w->room[dev] ? total(&r) : w->room[dev];
        GLOW_VEC_PUSH(w->parts, r);
        s = e;
    }
    free(cross);
    return st;
}

/* "NODE=DEVICE" assignments into w->pin. */
static glow_status read_assignments(walk *w, glow_diag *d)
{
    for (int a = 0; a < w->o->nassign; a++) {
        const char *spec = w->o->assign[a], *eq = strrchr(spec, '=');
        char *end = NULL;
        long dev = eq ? strtol(eq + 1, &end, 10) : -1;
        if (!eq || eq == spec || !eq[1] || *end || dev < 0 || dev >= w->o->ndevices)
            return glow_fail(d, GLOW_ERR_USAGE, "assignment '%s': want NODE=DEVICE with "
                             "DEVICE a device index from 0 to %d", spec, w->o->ndevices - 1);
        size_t len = (size_t)(eq - spec);
        bool found = false;
        for (int i = 0; i < w->g->n; i++) {
            const char *name = w->g->node[i]->name;
            if (strlen(name) == len && !strncmp(name, spec, len)) {
                w->pin[i] = (int)dev;
                found = true;
            }
        }
        if (!found)
            return glow_fail(d, GLOW_ERR_USAGE, "assignment '%s': the graph has no node "
                             "'%.*s' (names as `glowc dump --stage optimized` prints them)",
                             spec, (int)len, spec);
    }
    return GLOW_OK;
}

/* A Save goes with the producer of what it saves (storage: the first partition). */
static void place_saves(pt_graph *g)
{
    int *part_of = glow_xcalloc((size_t)g->n + 1, sizeof *part_of);
    for (int p = 0; p < g->nparts; p++)
        for (int i = g->parts[p].s; i < g->parts[p].e; i++)
            part_of[i] = p;
    for (int s = 0; s < g->nsaves; s++) {
        int pos = pt_pos(g->saves[s]->ins[0].node);
        g->save_part[s] = pos < 0 ? 0 : part_of[pos];
    }
    free(part_of);
}

static glow_status partition_graph(pt_graph *g, const glow_partition_options *o,
                                   glow_diag *d)
{
    walk w = { .g = g, .o = o };
    w.sc.store = glow_xcalloc((size_t)g->nids + 1, sizeof *w.sc.store);
    w.sc.vals = glow_xcalloc((size_t)g->nval + 1, sizeof *w.sc.vals);
    w.sc.diff = glow_xcalloc((size_t)g->n + 2, sizeof *w.sc.diff);
    w.pin = glow_xcalloc((size_t)g->n + 1, sizeof *w.pin);
    w.room = glow_xcalloc((size_t)o->ndevices, sizeof *w.room);
    w.full = glow_xcalloc((size_t)o->ndevices, sizeof *w.full);
    for (int i = 0; i < g->n; i++)
        w.pin[i] = -1;
    for (int k = 0; k < o->ndevices; k++)
        w.room[k] = o->devices[k].capacity;
    glow_status st = read_assignments(&w, d);
    if (st == GLOW_OK) {
        support_table(&w);
        st = check_nodes(&w, d);
    }
    if (st == GLOW_OK) {
        /* Moving cuts back saves transfers but leaves room unused; when the devices are too
         * small for that, the plain greedy (cuts where capacity ends) packs tightest. */
        glow_diag first = { 0 };
        st = walk_graph(&w, true, &first);
        if (st == GLOW_ERR_TOO_LARGE) {
            GLOW_VEC_FREE(w.parts);
            for (int k = 0; k < o->ndevices; k++) {
                w.room[k] = o->devices[k].capacity;
                w.full[k] = false;
            }
            st = walk_graph(&w, false, d);
        } else if (st != GLOW_OK) {
            st = glow_fail(d, st, "%s", first.msg);
        }
    }
    if (st == GLOW_OK && g->n == 0) {
        /* Nothing to compute (outputs are inputs or constants): one range for the Saves. */
        pt_range r = { .device = 0 };
        GLOW_VEC_PUSH(w.parts, r);
    }
    g->parts = w.parts.data;
    g->nparts = (int)w.parts.len;
    if (st == GLOW_OK)
        place_saves(g);
    free(w.sc.store);
    free(w.sc.vals);
    free(w.sc.diff);
    free(w.pin);
    free(w.sup);
    free(w.room);
    free(w.full);
    return st;
}

static void graph_free(pt_graph *g)
{
    free(g->node);
    free(g->vbase);
    free(g->val);
    free(g->saves);
    free(g->save_part);
    free(g->parts);
}

glow_status glow_partition_module(glow_module *m, const glow_partition_options *o,
                                  glow_partition_plan **out, glow_diag *d)
{
    *out = NULL;
    if (!o || o->ndevices < 1) {
        glow_module_destroy(m);
        return glow_fail(d, GLOW_ERR_USAGE, "partitioning needs at least one device");
    }
    for (int k = 0; k < o->ndevices; k++) {
        if (!glow_backend_find(o->devices[k].backend)) {
            glow_module_destroy(m);
            return glow_fail(d, GLOW_ERR_USAGE, "device %d: unknown backend '%s' (known: %s)",
                             k, o->devices[k].backend, glow_backend_names());
        }
    }
    /* The backend-independent optimizer only: which backend lowers a node is decided per
     * partition, after the cut. */
    glow_compile_options copt = { .backend = "interpreter", .stop_after = GLOW_STAGE_OPTIMIZED,
                                  .no_optimize = o->no_optimize };
    glow_program *p = NULL;
    GLOW_TRY(glow_program_create(m, &copt, &p, d));
    if (o->split_nodes) {
        uint64_t cap = 0;
        int nsplit = 0;
        for (int k = 0; k < o->ndevices; k++)
            cap = o->devices[k].capacity > cap ? o->devices[k].capacity : cap;
        glow_status s = pt_split_large(p->f, cap, &nsplit, d);
        if (s != GLOW_OK) {
            glow_program_destroy(p);
            return s;
        }
    }
    glow_schedule(p->f);
    pt_graph g = { 0 };
    analyze(&g, p->f, p->inputs, p->ninputs, p->outputs, p->noutputs);
    glow_status st = partition_graph(&g, o, d);
    glow_partition_plan *plan = NULL;
    if (st == GLOW_OK) {
        plan = glow_xcalloc(1, sizeof *plan);
        plan->ndevices = o->ndevices;
        plan->devices = glow_xcalloc((size_t)o->ndevices, sizeof *plan->devices);
        for (int k = 0; k < o->ndevices; k++) {
            plan->devices[k] = o->devices[k];
            plan->devices[k].backend = glow_arena_strdup(&plan->arena, o->devices[k].backend);
        }
        st = pt_build(&g, plan, d);
    }
    graph_free(&g);
    glow_program_destroy(p);
    if (st != GLOW_OK) {
        glow_partition_plan_destroy(plan);
        return st;
    }
    *out = plan;
    return GLOW_OK;
}

void glow_partition_plan_destroy(glow_partition_plan *plan)
{
    if (!plan)
        return;
    for (int i = 0; i < plan->nparts; i++) {
        glow_partition *pt = &plan->parts[i];
        glow_module_destroy(pt->m);
        free(pt->in_src);
        free(pt->out_dst);
        free(pt->deps);
    }
    free(plan->parts);
    free(plan->cross);
    free(plan->devices);
    free(plan->input_names);
    free(plan->output_names);
    free(plan->input_types);
    free(plan->output_types);
    glow_arena_release(&plan->arena);
    free(plan);
}
