// device.c - A host's device: a worker thread taking work items from the device's own FIFO
// queue and running them one at a time, and the device's memory accounting.
//
// One item at a time is what makes a device a unit of capacity: a request placed on it owns
// its `threads` cores while it runs, so two devices of one thread each use two cores and serve
// two requests at once, and a third waits in the host's queue instead of slowing the other
// two down. The backend's own worker threads (the cpu backend's pool, `threads` of them) live
// in the execution context the item runs on; the device thread only drives it.
#include <stdlib.h>
#include <string.h>

#include "runtime/device.h"

typedef struct work {
    glow_device_fn fn;
    void *arg;
    struct work *next;
} work;

struct glow_device {
    char *backend;
    int threads, index;
    uint64_t capacity;
    pthread_mutex_t lock;      /* guards everything below */
    pthread_cond_t wake;       /* work arrived, resumed, or stopping */
    uint64_t used;
    work *head, *tail;
    int queued;                /* items in the list */
    bool running;              /* an item is being run */
    bool paused, stopping, failing;
    pthread_t thread;
};

static void *worker_main(void *arg)
{
    glow_device *dev = arg;
    pthread_mutex_lock(&dev->lock);
    for (;;) {
        while (!(dev->head && !dev->paused) && !(dev->stopping && !dev->head))
            pthread_cond_wait(&dev->wake, &dev->lock);
        if (!dev->head)
            break;              /* stopping, and nothing is left to run */
        work *w = dev->head;
        dev->head = w->next;
        if (!dev->head)
            dev->tail = NULL;
        dev->queued--;
        dev->running = true;
        pthread_mutex_unlock(&dev->lock);
        w->fn(dev, w->arg);
        free(w);
        pthread_mutex_lock(&dev->lock);
        dev->running = false;
    }
    pthread_mutex_unlock(&dev->lock);
    return NULL;
}

glow_status glow_device_create(const char *backend, int threads, uint64_t capacity, int index,
                               glow_device **out, glow_diag *d)
{
    *out = NULL;
    if (!backend || !glow_backend_find(backend))
        return glow_fail(d, GLOW_ERR_USAGE, "device %d: unknown backend '%s' (known: %s)",
                         index, backend ? backend : "(null)", glow_backend_names());
    glow_device *dev = glow_xcalloc(1, sizeof *dev);
    size_t len = strlen(backend);
    dev->backend = glow_xcalloc(1, len + 1);
    memcpy(dev->backend, backend, len);
    dev->threads = threads;
    dev->index = index;
    dev->capacity = capacity;
    pthread_mutex_init(&dev->lock, NULL);
    pthread_cond_init(&dev->wake, NULL);
    if (pthread_create(&dev->thread, NULL, worker_main, dev) != 0) {
        pthread_cond_destroy(&dev->wake);
        pthread_mutex_destroy(&dev->lock);
        free(dev->backend);
        free(dev);
        return glow_fail(d, GLOW_ERR_TOO_LARGE, "device %d: cannot start its worker thread",
                         index);
    }
    *out = dev;
    return GLOW_OK;
}

void glow_device_destroy(glow_device *dev)
{
    if (!dev)
        return;
    pthread_mutex_lock(&dev->lock);
    dev->stopping = true;
    dev->paused = false;
    pthread_cond_broadcast(&dev->wake);
    pthread_mutex_unlock(&dev->lock);
    pthread_join(dev->thread, NULL);
    pthread_cond_destroy(&dev->wake);
    pthread_mutex_destroy(&dev->lock);
    free(dev->backend);
    free(dev);
}

const char *glow_device_backend(const glow_device *dev) { return dev->backend; }
int glow_device_threads(const glow_device *dev) { return dev->threads; }
int glow_device_index(const glow_device *dev) { return dev->index; }
uint64_t glow_device_capacity(const glow_device *dev) { return dev->capacity; }

void glow_device_submit(glow_device *dev, glow_device_fn fn, void *arg)
{
    work *w = glow_xcalloc(1, sizeof *w);
    w->fn = fn;
    w->arg = arg;
    pthread_mutex_lock(&dev->lock);
    if (dev->tail)
        dev->tail->next = w;
    else
        dev->head = w;
    dev->tail = w;
    dev->queued++;
    pthread_cond_signal(&dev->wake);
    pthread_mutex_unlock(&dev->lock);
}

int glow_device_load(glow_device *dev)
{
    pthread_mutex_lock(&dev->lock);
    int n = dev->queued + dev->running;
    pthread_mutex_unlock(&dev->lock);
    return n;
}

void glow_device_pause(glow_device *dev, bool paused)
{
    pthread_mutex_lock(&dev->lock);
    dev->paused = paused;
    pthread_cond_broadcast(&dev->wake);
    pthread_mutex_unlock(&dev->lock);
}

void glow_device_set_failing(glow_device *dev, bool failing)
{
    pthread_mutex_lock(&dev->lock);
    dev->failing = failing;
    pthread_mutex_unlock(&dev->lock);
}

bool glow_device_failing(glow_device *dev)
{
    pthread_mutex_lock(&dev->lock);
    bool f = dev->failing;
    pthread_mutex_unlock(&dev->lock);
    return f;
}

bool glow_device_reserve(glow_device *dev, uint64_t bytes)
{
    pthread_mutex_lock(&dev->lock);
    bool ok = dev->capacity == UINT64_MAX ||
              (dev->used <= dev->capacity && bytes <= dev->capacity - dev->used);
    if (ok)
        dev->used += bytes;
    pthread_mutex_unlock(&dev->lock);
    return ok;
}

void glow_device_unreserve(glow_device *dev, uint64_t bytes)
{
    pthread_mutex_lock(&dev->lock);
    dev->used = bytes > dev->used ? 0 : dev->used - bytes;
    pthread_mutex_unlock(&dev->lock);
}

uint64_t glow_device_used(glow_device *dev)
{
    pthread_mutex_lock(&dev->lock);
    uint64_t u = dev->used;
    pthread_mutex_unlock(&dev->lock);
    return u;
}

uint64_t glow_device_free_bytes(glow_device *dev)
{
    pthread_mutex_lock(&dev->lock);
    uint64_t f = dev->capacity == UINT64_MAX ? UINT64_MAX
               : dev->used >= dev->capacity  ? 0
                                             : dev->capacity - dev->used;
    pthread_mutex_unlock(&dev->lock);
    return f;
}
