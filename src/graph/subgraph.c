// subgraph.c - The bodies of lazy control-flow nodes (IF, LOOP): modules of their own,
// registered under an id that the node carries as an attribute, and run through a runner the
// runtime installs (docs/dynamic-shapes.md, "Lazy control flow").
//
// The id, not a pointer, is what the node holds, so the node prints, compares and survives IR
// generation like any other attribute; the evaluator reaches the body from the id alone (the
// interpreter hands it a stand-in node without a module). A body belongs to the module whose
// node uses it and goes when that module is destroyed.
#include <pthread.h>
#include <stdlib.h>

#include "graph/graph.h"

typedef struct body {
    const glow_module *owner;
    glow_module *m;        /* until the runner takes it */
    void *prog;            /* the runner's compiled form, or NULL */
    pthread_mutex_t lock;  /* one run of the body at a time */
} body;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static body **bodies;
static int64_t nbodies, cap_bodies;
static glow_subgraph_runner runner;
static void (*release_prog)(void *prog);

void glow_subgraph_set_runner(glow_subgraph_runner run, void (*release)(void *prog))
{
    pthread_mutex_lock(&reg_lock);
    runner = run;
    release_prog = release;
    pthread_mutex_unlock(&reg_lock);
}

int64_t glow_subgraph_add(const glow_module *owner, glow_module *m)
{
    body *b = glow_xcalloc(1, sizeof *b);
    b->owner = owner;
    b->m = m;
    pthread_mutex_init(&b->lock, NULL);
    pthread_mutex_lock(&reg_lock);
    if (nbodies == cap_bodies) {
        cap_bodies = cap_bodies ? cap_bodies * 2 : 16;
        bodies = realloc(bodies, (size_t)cap_bodies * sizeof *bodies);
        if (!bodies)
            abort();
    }
    bodies[nbodies++] = b;
    int64_t id = nbodies;
    pthread_mutex_unlock(&reg_lock);
    return id;
}

static body *find(int64_t id)
{
    pthread_mutex_lock(&reg_lock);
    body *b = id >= 1 && id <= nbodies ? bodies[id - 1] : NULL;
    pthread_mutex_unlock(&reg_lock);
    return b;
}

glow_module *glow_subgraph_module(int64_t id)
{
    body *b = find(id);
    return b ? b->m : NULL;
}

glow_status glow_subgraph_run(int64_t id, const glow_tensor *ins, int nin, glow_tensor *outs,
                              int nout, glow_diag *d)
{
    body *b = find(id);
    if (!b || (!b->m && !b->prog))
        return glow_fail(d, GLOW_ERR_INTERNAL, "control-flow body %lld does not exist",
                         (long long)id);
    if (!runner)
        return glow_fail(d, GLOW_ERR_UNSUPPORTED, "control-flow bodies run only inside a "
                         "compiled program");
    pthread_mutex_lock(&b->lock);
    glow_status s = runner(&b->m, &b->prog, ins, nin, outs, nout, d);
    pthread_mutex_unlock(&b->lock);
    return s;
}

/* Called by glow_module_destroy: the bodies `owner` registered go with it. Their slots stay
 * (ids are never reused), emptied. */
void glow_subgraph_release(const glow_module *owner)
{
    pthread_mutex_lock(&reg_lock);
    for (int64_t i = 0; i < nbodies; i++) {
        body *b = bodies[i];
        if (!b || b->owner != owner)
            continue;
        bodies[i] = NULL;
        pthread_mutex_unlock(&reg_lock);
        if (b->prog && release_prog)
            release_prog(b->prog);
        else
            glow_module_destroy(b->m);
        pthread_mutex_destroy(&b->lock);
        free(b);
        pthread_mutex_lock(&reg_lock);
    }
    pthread_mutex_unlock(&reg_lock);
}
