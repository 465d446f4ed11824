// cmd_bench_host.c - `glowc bench MODEL --devices SPEC [--clients K]`: the model as a network
// on a host of the public API (glowc_host_*), K client threads running synchronous requests
// back to back; prints how the network was placed, requests per second and the host's
// statistics (latency from acceptance to completion, queueing included).
//
// The host's queue holds one request per client, so no request is ever turned away as BUSY
// here: the figure is the devices' throughput, not the queue's.
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

typedef struct shared {
    const cli_bench_host_opts *o;
    glowc_host *h;
    glowc_value *inputs;
    int ninputs;
    void *out;
    size_t out_bytes;
    int nout;                    /* output 0 bound (1), or none when it is string (0) */
    pthread_mutex_t lock;
    int next, total, failed;
    char first_error[512];
} shared;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The exit code for a failed API call, as the other commands map statuses. */
static void *client_main(void *arg)
{
    shared *s = arg;
    /* Each client writes its outputs into its own buffer (the runs check nothing in them). */
    void *out = malloc(s->out_bytes ? s->out_bytes : 1);
    glowc_value ov = { NULL, GLOWC_DTYPE_UNDEFINED, 0, NULL, out, s->out_bytes };
    for (;;) {
        pthread_mutex_lock(&s->lock);
        bool more = s->next < s->total;
        s->next += more;
        pthread_mutex_unlock(&s->lock);
        if (!more || !out)
            break;
        if (glowc_host_run(s->h, "model", s->inputs, s->ninputs, &ov, s->nout, 0) != GLOWC_OK) {
            pthread_mutex_lock(&s->lock);
            if (!s->failed++)
                snprintf(s->first_error, sizeof s->first_error, "%s", glowc_last_error());
            pthread_mutex_unlock(&s->lock);
        }
    }
    free(out);
    return NULL;
}

/* Runs `total` requests from the clients; seconds taken. */
static double run_requests(shared *s, int total)
{
    pthread_t th[256];
    int n = s->o->clients;
    s->next = 0;
    s->total = total;
    double t0 = now_s();
    int started = 0;
    for (int i = 0; i < n; i++)
        started += pthread_create(&th[started], NULL, client_main, s) == 0;
    if (!started)
        client_main(s);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    return now_s() - t0;
}

/* Fixed pseudo-random inputs in [-1, 1] (integers: small non-negative values). */
static bool make_inputs(shared *s)
{
    glowc_network_info ni;
    if (glowc_host_network_info(s->h, "model", &ni) != GLOWC_OK)
        return false;
    s->ninputs = ni.ninputs;
    s->inputs = calloc((size_t)ni.ninputs + 1, sizeof *s->inputs);
    uint32_t seed = 12345;
    for (int i = 0; s->inputs && i < ni.ninputs; i++) {
        glowc_tensor_info t;
        if (glowc_host_network_input_info(s->h, "model", i, &t) != GLOWC_OK)
            return false;
        uint8_t *data = calloc(1, t.size_bytes + 4);
        if (!data)
            return false;
        /* Strings stay NULL handles, which read as "" (glowc.h). */
        size_t esize = t.dtype == GLOWC_DTYPE_STRING ? 0 : glowc_dtype_size(t.dtype);
        for (size_t k = 0; esize && k < t.size_bytes / esize; k++) {
            seed = seed * 1664525u + 1013904223u;
            if (t.dtype == GLOWC_F32)
                ((float *)data)[k] = (float)(seed >> 8) / 8388608.0f - 1.0f;
            else
                data[k * esize] = (uint8_t)((seed >> 24) & 1);
        }
        s->inputs[i] = (glowc_value){ NULL, t.dtype, t.rank, t.shape, data, t.size_bytes };
    }
    glowc_tensor_info t;
    if (!s->inputs || glowc_host_network_output_info(s->h, "model", 0, &t) != GLOWC_OK)
        return false;
    s->out_bytes = t.size_bytes;
    s->nout = t.dtype != GLOWC_DTYPE_STRING;   /* a caller's buffer cannot hold strings */
    return true;
}

static void print_report(const shared *s, double seconds, int timed)
{
    const cli_bench_host_opts *o = s->o;
    glowc_network_info ni = { 0 };
    glowc_host_network_info(s->h, "model", &ni);
    glowc_host_stats st;
    glowc_host_get_stats(s->h, NULL, &st);
    char devs[256] = "";
    size_t len = 0;
    for (int i = 0; i < 64 && len < sizeof devs; i++)
        if (ni.devices >> i & 1)
            len += (size_t)snprintf(devs + len, sizeof devs - len, "%s%d", len ? ", " : "", i);
    double rps = seconds > 0 ? timed / seconds : 0;
    if (o->json) {
        printf("{\"model\": \"%s\", \"devices\": \"%s\", \"clients\": %d, \"partitions\": %d, "
               "\"requests\": %d, \"seconds\": %.6f, \"requests_per_second\": %.3f, "
               "\"done\": %llu, \"failed\": %llu, \"rejected\": %llu, \"latency_us\": "
               "{\"min\": %.1f, \"p50\": %.1f, \"p99\": %.1f, \"max\": %.1f, \"mean\": %.1f}}\n",
               o->path, o->devices, o->clients, ni.partitions, timed, seconds, rps,
               (unsigned long long)st.done, (unsigned long long)st.failed,
               (unsigned long long)st.rejected, st.latency_min_us, st.latency_p50_us,
               st.latency_p99_us, st.latency_max_us, st.latency_mean_us);
        return;
    }
    printf("model:       %s\n", o->path);
    printf("host:        %s (%d device%s), %d client%s\n", o->devices,
           glowc_host_device_count(s->h), glowc_host_device_count(s->h) == 1 ? "" : "s",
           o->clients, o->clients == 1 ? "" : "s");
    if (ni.partitions > 1)
        printf("network:     %d partitions on devices %s\n", ni.partitions, devs);
    else
        printf("network:     whole, on device%s %s\n", strchr(devs, ',') ? "s" : "", devs);
    printf("throughput:  %.2f requests/s (%d requests in %.3f s)\n", rps, timed, seconds);
    printf("latency:     min %.3f ms, median %.3f ms, p99 %.3f ms, max %.3f ms, mean %.3f ms"
           " (warm-up included)\n", st.latency_min_us / 1e3, st.latency_p50_us / 1e3,
           st.latency_p99_us / 1e3, st.latency_max_us / 1e3, st.latency_mean_us / 1e3);
    printf("requests:    %llu done, %llu failed, %llu rejected\n", (unsigned long long)st.done,
           (unsigned long long)st.failed, (unsigned long long)st.rejected);
}

int cli_bench_host(const cli_bench_host_opts *o)
{
    shared s = { .o = o };
    pthread_mutex_init(&s.lock, NULL);
    /* The backend and threads are the devices'; the options say the rest. */
    glowc_options *opt = cli_api_options(o->model);
    int rc = -1;
    glowc_status st = opt ? GLOWC_OK : GLOWC_ERR_NO_MEMORY;
    if (st == GLOWC_OK)
        st = glowc_host_create_from_spec(o->devices, o->clients, &s.h);
    if (st != GLOWC_OK) {
        cli_error("bench: --devices %s: %s", o->devices, glowc_last_error());
        rc = cli_api_exit_code(st) == CLI_EXIT_USAGE ? CLI_EXIT_USAGE : cli_api_exit_code(st);
    } else if ((st = glowc_host_add_network(s.h, "model", opt, o->path)) != GLOWC_OK) {
        cli_error("%s", glowc_last_error());
        rc = cli_api_exit_code(st);
    } else if (!make_inputs(&s)) {
        cli_error("bench: cannot prepare the inputs: %s", glowc_last_error());
        rc = CLI_EXIT_RUN_FAILED;
    } else {
        if (o->warmup > 0)
            run_requests(&s, o->warmup);
        double seconds = run_requests(&s, o->requests);
        if (s.failed) {
            cli_error("bench: %d request%s failed; the first: %s", s.failed,
                      s.failed == 1 ? "" : "s", s.first_error);
            rc = CLI_EXIT_RUN_FAILED;
        } else {
            print_report(&s, seconds, o->requests);
            rc = fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_RUN_FAILED;
        }
    }
    glowc_host_destroy(s.h);
    glowc_options_destroy(opt);
    for (int i = 0; s.inputs && i < s.ninputs; i++)
        free(s.inputs[i].data);
    free(s.inputs);
    pthread_mutex_destroy(&s.lock);
    return rc;
}
