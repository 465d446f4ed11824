// host_throughput.c - Requests per second of a host with one device against a host with
// several, on one model: K client threads each run synchronous requests back to back; the
// hosts are measured alternately (one round each, ROUNDS rounds) so that the machine's other
// load falls on both alike, and the medians are compared. A measurement, not a test
// (issue 18's target: ResNet-50 b1, 2 x cpu:t1 over 1 x cpu:t1 >= 1.8x).
//
//   build/release/host_throughput [MODEL.onnx [SPEC_A [SPEC_B [CLIENTS [REQUESTS [ROUNDS]]]]]]
//
// Defaults: bench/models/resnet50_b1.onnx, "cpu:t1", "cpu:t1,cpu:t1", 4 clients, 24 requests
// per round and host, 5 rounds. Each client's input is its own (pseudo-random); every
// response must come back OK. The last lines are each host's statistics (latency from
// acceptance to completion, queueing included).
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "glowc/glowc.h"

typedef struct bench {
    glowc_host *h;
    glowc_tensor_info in, out;
    int requests;              /* this round, over all clients */
    int next;                  /* requests handed out (under lock) */
    int failed;
    pthread_mutex_t lock;
} bench;

typedef struct client {
    bench *b;
    float *input, *output;
} client;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU seconds the process has used (all threads). */
static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void *client_main(void *arg)
{
    client *c = arg;
    bench *b = c->b;
    glowc_value in = { NULL, b->in.dtype, b->in.rank, b->in.shape, c->input, b->in.size_bytes };
    glowc_value out = { NULL, GLOWC_DTYPE_UNDEFINED, 0, NULL, c->output, b->out.size_bytes };
    for (;;) {
        pthread_mutex_lock(&b->lock);
        bool more = b->next < b->requests;
        b->next += more;
        pthread_mutex_unlock(&b->lock);
        if (!more)
            break;
        if (glowc_host_run(b->h, "net", &in, 1, &out, 1, 0) != GLOWC_OK) {
            pthread_mutex_lock(&b->lock);
            if (!b->failed++)
                fprintf(stderr, "host_throughput: %s\n", glowc_last_error());
            pthread_mutex_unlock(&b->lock);
        }
    }
    return NULL;
}

/* One round: `requests` requests from `clients` threads; requests per second. *cores (may be
 * NULL): CPU seconds per second the process got meanwhile - on a shared machine, how many of
 * its cores the devices actually had. */
static double round_rps(bench *b, client *cs, int clients, int requests, double *cores)
{
    pthread_t th[64];
    b->requests = requests;
    b->next = 0;
    double t0 = now_s(), c0 = cpu_s();
    for (int i = 0; i < clients; i++)
        pthread_create(&th[i], NULL, client_main, &cs[i]);
    for (int i = 0; i < clients; i++)
        pthread_join(th[i], NULL);
    double wall = now_s() - t0;
    if (cores)
        *cores = (cpu_s() - c0) / wall;
    return requests / wall;
}

static bool setup(bench *b, const char *spec, const char *model, int clients)
{
    memset(b, 0, sizeof *b);
    pthread_mutex_init(&b->lock, NULL);
    /* The queue holds every client's request: nobody is ever turned away as BUSY. */
    if (glowc_host_create_from_spec(spec, clients, &b->h) != GLOWC_OK ||
        glowc_host_add_network(b->h, "net", NULL, model) != GLOWC_OK ||
        glowc_host_network_input_info(b->h, "net", 0, &b->in) != GLOWC_OK ||
        glowc_host_network_output_info(b->h, "net", 0, &b->out) != GLOWC_OK) {
        fprintf(stderr, "host_throughput: %s: %s\n", spec, glowc_last_error());
        return false;
    }
    glowc_network_info ni;
    glowc_host_network_info(b->h, "net", &ni);
    printf("host %-24s %d device(s), network on devices 0x%llx, %d partition(s)\n", spec,
           glowc_host_device_count(b->h), (unsigned long long)ni.devices, ni.partitions);
    return true;
}

static void print_stats(const char *spec, glowc_host *h)
{
    glowc_host_stats s;
    glowc_host_get_stats(h, NULL, &s);
    printf("stats %-24s done %llu failed %llu rejected %llu; latency us min %.0f p50 %.0f "
           "p99 %.0f max %.0f mean %.0f\n", spec, (unsigned long long)s.done,
           (unsigned long long)s.failed, (unsigned long long)s.rejected, s.latency_min_us,
           s.latency_p50_us, s.latency_p99_us, s.latency_max_us, s.latency_mean_us);
}

int main(int argc, char **argv)
{
    const char *model = argc > 1 ? argv[1] : "bench/models/resnet50_b1.onnx";
    const char *spec[2] = { argc > 2 ? argv[2] : "cpu:t1", argc > 3 ? argv[3] : "cpu:t1,cpu:t1" };
    int clients = argc > 4 ? atoi(argv[4]) : 4;
    int requests = argc > 5 ? atoi(argv[5]) : 24;
    int rounds = argc > 6 ? atoi(argv[6]) : 5;
    if (clients < 1 || clients > 64 || requests < 1 || rounds < 1 || rounds > 100) {
        fprintf(stderr, "usage: host_throughput [MODEL [SPEC_A [SPEC_B [CLIENTS(1-64) "
                "[REQUESTS [ROUNDS(1-100)]]]]]]\n");
        return 1;
    }
    bench b[2];
    client cs[2][64];
    for (int k = 0; k < 2; k++) {
        if (!setup(&b[k], spec[k], model, clients))
            return 1;
        for (int i = 0; i < clients; i++) {
            cs[k][i].b = &b[k];
            cs[k][i].input = malloc(b[k].in.size_bytes);
            cs[k][i].output = malloc(b[k].out.size_bytes);
            uint32_t s = 1234567u * (uint32_t)(i + 1);
            for (size_t j = 0; j < b[k].in.size_bytes / sizeof(float); j++) {
                s = s * 1664525u + 1013904223u;
                cs[k][i].input[j] = (float)(s >> 8) / 16777216.0f;
            }
        }
        round_rps(&b[k], cs[k], clients, clients, NULL);   /* warm-up: contexts, pages */
    }
    double rps[2][100], cores[2];
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < 2; k++)
            rps[k][r] = round_rps(&b[k], cs[k], clients, requests, &cores[k]);
        printf("round %d: %s %.2f req/s (%.2f cores busy), %s %.2f req/s (%.2f cores busy)\n",
               r + 1, spec[0], rps[0][r], cores[0], spec[1], rps[1][r], cores[1]);
        fflush(stdout);
    }
    double med[2];
    for (int k = 0; k < 2; k++) {
        qsort(rps[k], (size_t)rounds, sizeof(double), cmp_double);
        med[k] = rps[k][(rounds - 1) / 2];
    }
    printf("median of %d rounds, %d clients, %d requests each: %s %.2f req/s, %s %.2f req/s, "
           "ratio %.2fx\n", rounds, clients, requests, spec[0], med[0], spec[1], med[1],
           med[1] / med[0]);
    for (int k = 0; k < 2; k++)
        print_stats(spec[k], b[k].h);
    int failed = b[0].failed + b[1].failed;
    for (int k = 0; k < 2; k++) {
        glowc_host_destroy(b[k].h);
        for (int i = 0; i < clients; i++) {
            free(cs[k][i].input);
            free(cs[k][i].output);
        }
        pthread_mutex_destroy(&b[k].lock);
    }
    return failed ? 1 : 0;
}
