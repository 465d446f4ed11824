// device.h - A device of the host (host.c): a backend kind with its threads per run and its
// memory capacity, a worker thread that runs the device's work items one at a time in FIFO
// order, and the accounting of the bytes the networks placed on it hold.
#ifndef GLOW_DEVICE_H
#define GLOW_DEVICE_H

#include "runtime/runtime.h"

typedef struct glow_device glow_device;

/* One unit of work: fn(dev, arg) on the device's worker thread. */
typedef void (*glow_device_fn)(glow_device *dev, void *arg);

/* A device of `backend` ("cpu" or "interpreter") whose runs use `threads` worker threads (0:
 * the backend's default) and which holds `capacity` bytes (UINT64_MAX: unlimited); `index`
 * is its number in the host. Starts its worker thread. */
glow_status glow_device_create(const char *backend, int threads, uint64_t capacity, int index,
                               glow_device **out, glow_diag *d);
/* Runs every item already queued (a paused device is resumed first), stops the worker and
 * frees the device. */
void glow_device_destroy(glow_device *dev);

const char *glow_device_backend(const glow_device *dev);
int glow_device_threads(const glow_device *dev);
int glow_device_index(const glow_device *dev);
uint64_t glow_device_capacity(const glow_device *dev);

/* Appends a work item to the device's queue; thread-safe, never waits for work to finish. */
void glow_device_submit(glow_device *dev, glow_device_fn fn, void *arg);
/* Items queued or running on the device. */
int glow_device_load(glow_device *dev);
/* A paused device starts no new item (the one running finishes); resuming starts them again.
 * For maintenance, and for tests that need work to wait deterministically. */
void glow_device_pause(glow_device *dev, bool paused);
/* A failing device's items fail with a message instead of running (they ask
 * glow_device_failing): a device fault, injected by tests. */
void glow_device_set_failing(glow_device *dev, bool failing);
bool glow_device_failing(glow_device *dev);

/* --- memory accounting --- */

/* Takes `bytes` of the device's capacity when they are free (true), else changes nothing. */
bool glow_device_reserve(glow_device *dev, uint64_t bytes);
void glow_device_unreserve(glow_device *dev, uint64_t bytes);
uint64_t glow_device_used(glow_device *dev);
/* Capacity not reserved (UINT64_MAX for an unlimited device). */
uint64_t glow_device_free_bytes(glow_device *dev);

#endif
