// partition_text.c - The partitioner's text: device lists ("cpu:256MiB,interpreter:1GiB")
// parsed, sizes printed, and the partition plan as a report and as a Graphviz picture.
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/partition.h"

static const struct {
    const char *suffix;
    uint64_t scale;
} units[] = {
    { "", 1 }, { "B", 1 },
    { "KiB", 1ull << 10 }, { "MiB", 1ull << 20 }, { "GiB", 1ull << 30 }, { "TiB", 1ull << 40 },
    { "KB", 1000ull }, { "MB", 1000000ull }, { "GB", 1000000000ull },
    { "TB", 1000000000000ull },
};

/* "256MiB" into bytes; false when malformed or too large. */
static bool parse_size(const char *s, uint64_t *out)
{
    char *end = NULL;
    if (*s < '0' || *s > '9')
        return false;
    unsigned long long v = strtoull(s, &end, 10);
    for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
        if (strcmp(end, units[u].suffix) != 0)
            continue;
        if (v > UINT64_MAX / units[u].scale)
            return false;
        *out = (uint64_t)v * units[u].scale;
        return true;
    }
    return false;
}

glow_status glow_devices_parse(const char *spec, glow_device_spec **out, int *n, glow_diag *d)
{
    *out = NULL;
    *n = 0;
    if (!spec || !spec[0])
        return glow_fail(d, GLOW_ERR_USAGE, "empty device list (want e.g. cpu:256MiB,cpu)");
    int count = 1;
    for (const char *c = spec; *c; c++)
        count += *c == ',';
    /* One allocation: the specs, then a copy of the text their strings point into. */
    size_t len = strlen(spec);
    glow_device_spec *devs = glow_xcalloc(1, (size_t)count * sizeof *devs + len + 1);
    char *text = (char *)(devs + count);
    memcpy(text, spec, len + 1);
    int k = 0;
    for (char *item = text, *next; item; item = next, k++) {
        next = strchr(item, ',');
        if (next)
            *next++ = '\0';
        char *colon = strchr(item, ':');
        if (colon)
            *colon = '\0';
        devs[k].backend = item;
        devs[k].capacity = UINT64_MAX;
        if (!glow_backend_find(item)) {
            glow_status s = glow_fail(d, GLOW_ERR_USAGE, "device %d: unknown backend '%s' "
                                      "(known: %s)", k, item, glow_backend_names());
            free(devs);
            return s;
        }
        if (colon && !parse_size(colon + 1, &devs[k].capacity)) {
            glow_status s = glow_fail(d, GLOW_ERR_USAGE, "device %d: bad capacity '%s' (want "
                                      "bytes, or a number with B, KiB, MiB, GiB, TiB, KB, MB, "
                                      "GB or TB)", k, colon + 1);
            free(devs);
            return s;
        }
    }
    *out = devs;
    *n = count;
    return GLOW_OK;
}

void glow_devices_free(glow_device_spec *devs, int n)
{
    (void)n;
    free(devs);
}

char *glow_bytes_str(uint64_t bytes, char *buf, size_t size)
{
    if (bytes == UINT64_MAX)
        snprintf(buf, size, "unlimited");
    else if (bytes >= (1ull << 30))
        snprintf(buf, size, "%.2f GiB", (double)bytes / (double)(1ull << 30));
    else if (bytes >= (1ull << 20))
        snprintf(buf, size, "%.2f MiB", (double)bytes / (double)(1ull << 20));
    else if (bytes >= (1ull << 10))
        snprintf(buf, size, "%.2f KiB", (double)bytes / (double)(1ull << 10));
    else
        snprintf(buf, size, "%" PRIu64 " B", bytes);
    return buf;
}

/* "name f32[1, 64] 256 B" */
static void tensor_line(FILE *out, const char *name, const glow_type *t)
{
    char ty[128], b[32];
    fprintf(out, "%s %s %s", glow_esc(name), glow_type_str(t, ty, sizeof ty),
            glow_bytes_str(glow_type_bytes(t), b, sizeof b));
}

void glow_partition_plan_print(FILE *out, const glow_partition_plan *plan)
{
    uint64_t crossing = 0;
    for (int k = 0; k < plan->ncross; k++)
        crossing += glow_type_bytes(&plan->cross[k].type);
    char b1[32], b2[32], b3[32], b4[32];
    fprintf(out, "%d partition%s on %d device%s; %d tensor%s cross partitions (%s)\n",
            plan->nparts, plan->nparts == 1 ? "" : "s", plan->ndevices,
            plan->ndevices == 1 ? "" : "s", plan->ncross, plan->ncross == 1 ? "" : "s",
            glow_bytes_str(crossing, b1, sizeof b1));
    for (int k = 0; k < plan->ndevices; k++) {
        uint64_t used = 0;
        int parts = 0;
        for (int i = 0; i < plan->nparts; i++) {
            const glow_partition *p = &plan->parts[i];
            if (p->device == k) {
                used += p->weight_bytes + p->io_bytes + p->act_bytes;
                parts++;
            }
        }
        fprintf(out, "device %d: %s, capacity %s, %d partition%s, %s estimated\n", k,
                plan->devices[k].backend,
                glow_bytes_str(plan->devices[k].capacity, b1, sizeof b1), parts,
                parts == 1 ? "" : "s", glow_bytes_str(used, b2, sizeof b2));
    }
    for (int i = 0; i < plan->nparts; i++) {
        const glow_partition *p = &plan->parts[i];
        fprintf(out, "partition %d: device %d (%s), %d node%s", i, p->device,
                plan->devices[p->device].backend, p->nnodes, p->nnodes == 1 ? "" : "s");
        if (p->nnodes == 1)
            fprintf(out, " '%s'", glow_esc(p->first));
        else if (p->nnodes)
            fprintf(out, " '%s' .. '%s'", glow_esc(p->first), glow_esc(p->last));
        fprintf(out, "\n  weights %s, inputs+outputs %s, activations %s (total %s)\n",
                glow_bytes_str(p->weight_bytes, b1, sizeof b1),
                glow_bytes_str(p->io_bytes, b2, sizeof b2),
                glow_bytes_str(p->act_bytes, b3, sizeof b3),
                glow_bytes_str(p->weight_bytes + p->io_bytes + p->act_bytes, b4, sizeof b4));
        for (int k = 0; k < p->ninputs; k++) {
            int s = p->in_src[k];
            fputs("  in  ", out);
            if (s >= 0) {
                tensor_line(out, plan->input_names[s], &plan->input_types[s]);
                fputs(" (model input)\n", out);
            } else {
                const glow_crossing *c = &plan->cross[GLOW_XFER(s)];
                tensor_line(out, c->name, &c->type);
                fprintf(out, " from partition %d\n", c->from);
            }
        }
        for (int k = 0; k < p->noutputs; k++) {
            int s = p->out_dst[k];
            fputs("  out ", out);
            if (s >= 0) {
                tensor_line(out, plan->output_names[s], &plan->output_types[s]);
                fputs(" (model output)\n", out);
            } else {
                const glow_crossing *c = &plan->cross[GLOW_XFER(s)];
                tensor_line(out, c->name, &c->type);
                fprintf(out, " to %d partition%s\n", c->nto, c->nto == 1 ? "" : "s");
            }
        }
    }
}

/* Writes s as a DOT string body (quotes and backslashes escaped). */
static void dot_str(FILE *out, const char *s)
{
    glow_escape_put(out, s, GLOW_ESC_QUOTED);   /* also control bytes and invalid UTF-8 */
}

void glow_partition_plan_dot(FILE *out, const glow_partition_plan *plan)
{
    char b1[32], b2[32], b3[32], b4[32];
    fputs("digraph partitions {\n  rankdir=TB;\n  node [fontname=\"monospace\"];\n", out);
    for (int i = 0; i < plan->ninputs; i++) {
        fprintf(out, "  in%d [shape=ellipse, label=\"", i);
        dot_str(out, plan->input_names[i]);
        fprintf(out, "\\n%s\"];\n", glow_bytes_str(glow_type_bytes(&plan->input_types[i]), b1,
                                                   sizeof b1));
    }
    for (int j = 0; j < plan->noutputs; j++) {
        fprintf(out, "  out%d [shape=ellipse, label=\"", j);
        dot_str(out, plan->output_names[j]);
        fprintf(out, "\\n%s\"];\n", glow_bytes_str(glow_type_bytes(&plan->output_types[j]),
                                                    b1, sizeof b1));
    }
    for (int i = 0; i < plan->nparts; i++) {
        const glow_partition *p = &plan->parts[i];
        fprintf(out, "  p%d [shape=box, style=filled, fillcolor=\"%s\", label=\"partition %d"
                "\\ndevice %d (%s)\\n%d nodes\\nweights %s\\nin+out %s\\nactivations %s",
                i, !strcmp(plan->devices[p->device].backend, "cpu") ? "#cfe2f3" : "#f4cccc",
                i, p->device, plan->devices[p->device].backend, p->nnodes,
                glow_bytes_str(p->weight_bytes, b1, sizeof b1),
                glow_bytes_str(p->io_bytes, b2, sizeof b2),
                glow_bytes_str(p->act_bytes, b3, sizeof b3));
        if (p->nnodes) {
            fputs("\\n", out);
            dot_str(out, p->first);
        }
        if (p->nnodes > 1) {
            fputs(" .. ", out);
            dot_str(out, p->last);
        }
        fputs("\"];\n", out);
        for (int k = 0; k < p->ninputs; k++) {
            int s = p->in_src[k];
            if (s >= 0) {
                fprintf(out, "  in%d -> p%d;\n", s, i);
                continue;
            }
            const glow_crossing *c = &plan->cross[GLOW_XFER(s)];
            fprintf(out, "  p%d -> p%d [label=\"", c->from, i);
            dot_str(out, c->name);
            fprintf(out, "\\n%s\"];\n", glow_bytes_str(glow_type_bytes(&c->type), b4,
                                                       sizeof b4));
        }
        for (int k = 0; k < p->noutputs; k++)
            if (p->out_dst[k] >= 0)
                fprintf(out, "  p%d -> out%d;\n", i, p->out_dst[k]);
    }
    fputs("}\n", out);
}
