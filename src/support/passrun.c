// passrun.c - The pass driver shared by the graph and IR optimizers (see passrun.h).
#include <string.h>
#include <time.h>

#include "support/passrun.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

bool glow_pass_find(const glow_pass_desc *passes, int npasses, const char *name, int *id)
{
    for (int i = 0; i < npasses; i++) {
        const char *a = passes[i].name, *b = name;
        while (*a && (*a == *b || (*a == '_' && *b == '-'))) {
            a++;
            b++;
        }
        if (!*a && !*b) {
            *id = i;
            return true;
        }
    }
    return false;
}

glow_status glow_pass_run_once(const glow_pass_driver *dr, int id, int *changes, glow_diag *d)
{
    const char *name = dr->passes[id].name;
    int before = dr->stats ? dr->count(dr->unit) : 0, n = 0;
    double t0 = now();
    glow_status s = dr->run(dr->unit, id, &n, d);
    double t1 = now();
    if (s != GLOW_OK) {
        if (d && d->status == GLOW_OK)
            glow_fail(d, s, "%s %s failed", dr->what, name);
        return s;
    }
    if (dr->verify && dr->verify(dr->unit, d) != GLOW_OK) {
        char msg[sizeof d->msg];
        snprintf(msg, sizeof msg, "%s", d->msg);
        return glow_fail(d, GLOW_ERR_INTERNAL, "after %s %s: %s", dr->what, name, msg);
    }
    if (dr->stats) {
        glow_pass_stats *st = &dr->stats[id];
        st->runs++;
        st->changes += n;
        st->removed += before - dr->count(dr->unit);
        st->seconds += t1 - t0;
    }
    if (dr->dump_after && dr->dump_out) {
        /* "all" shows only passes that changed something; a named pass shows every run. */
        int want;
        bool all = !strcmp(dr->dump_after, "all");
        if ((all && n) ||
            (!all && glow_pass_find(dr->passes, dr->npasses, dr->dump_after, &want) &&
             want == id)) {
            fprintf(dr->dump_out, "# after %s (%d change%s)\n", name, n, n == 1 ? "" : "s");
            dr->print(dr->dump_out, dr->unit);
        }
    }
    if (changes)
        *changes = n;
    return GLOW_OK;
}

glow_status glow_pass_run_steps(const glow_pass_driver *dr, const glow_pass_step *steps,
                                int nsteps, glow_diag *d)
{
    for (int i = 0; i < nsteps; i++) {
        if (dr->skip && dr->skip(dr->unit, steps[i].id))
            continue;
        for (int k = 0; k < (steps[i].fixpoint ? dr->max_fixpoint : 1); k++) {
            int changes = 0;
            GLOW_TRY(glow_pass_run_once(dr, steps[i].id, &changes, d));
            if (!changes)
                break;
        }
    }
    return GLOW_OK;
}

void glow_pass_print_steps(FILE *out, const glow_pass_desc *passes, const glow_pass_step *steps,
                           int nsteps, int width)
{
    for (int i = 0; i < nsteps; i++)
        fprintf(out, "  %2d. %-*s %-9s %s\n", i + 1, width, passes[steps[i].id].name,
                steps[i].fixpoint ? "fixpoint" : "once", steps[i].why);
}

void glow_pass_print_table(FILE *out, const glow_pass_desc *passes, int npasses, int width)
{
    for (int i = 0; i < npasses; i++)
        fprintf(out, "  %-*s %s\n", width, passes[i].name, passes[i].desc);
}

void glow_pass_print_stats(FILE *out, const char *title, const glow_pass_desc *passes,
                           const glow_pass_stats *st, int npasses, int width, bool times_only)
{
    double total = 0;
    fprintf(out, "# %s\n", title);
    if (times_only)
        fprintf(out, "# %-*s %10s\n", width, "pass", "time(ms)");
    else
        fprintf(out, "# %-*s %5s %8s %8s %10s\n", width, "pass", "runs", "removed", "changes",
                "time(ms)");
    for (int i = 0; i < npasses; i++) {
        total += st[i].seconds;
        if (!st[i].runs)
            continue;
        if (times_only)
            fprintf(out, "  %-*s %10.3f\n", width, passes[i].name, st[i].seconds * 1e3);
        else
            fprintf(out, "  %-*s %5d %8d %8d %10.3f\n", width, passes[i].name, st[i].runs,
                    st[i].removed, st[i].changes, st[i].seconds * 1e3);
    }
    if (times_only)
        fprintf(out, "  %-*s %10.3f\n", width, "total", total * 1e3);
    else
        fprintf(out, "  %-*s %5s %8s %8s %10.3f\n", width, "total", "", "", "", total * 1e3);
}
