// memory_report.c - What a memory plan costs and how close it is to the best possible: region
// sizes, the naive sum (no reuse), the liveness lower bound, and an SVG picture of the plan.
//
// The lower bound is the largest total size of activations live at one program point in the
// chosen schedule, with the planner's aligned sizes: no placement of those lifetimes can use
// less memory.
#include <stdlib.h>

#include "iropt/iropt_internal.h"

static uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

typedef struct span {
    const ir_value *v;
    uint32_t begin, end;
    uint64_t size;
} span;

/* Activation lifetimes (positions) with aligned sizes; *npos gets the program length. */
static span *spans_of(const ir_function *f, size_t *n, uint32_t *npos)
{
    uint64_t align = f->alignment ? f->alignment : 64;
    iropt_live lv;
    iropt_live_compute(f, &lv);
    uint32_t p = 0;
    for (const ir_instr *in = f->first; in; in = in->next)
        p++;
    GLOW_VEC(span) out = { 0 };
    for (const ir_instr *in = f->first; in; in = in->next) {
        if (in->kind != IK_ALLOC)
            continue;
        const ir_value *v = in->ops[0].v;
        const iropt_use *u = &lv.use[v->id];
        uint64_t size = align_up(glow_type_bytes(&v->type), align);
        span s = { v, lv.pos[in->id], u->dealloc ? lv.pos[u->dealloc->id] : p,
                   size ? size : align };
        GLOW_VEC_PUSH(out, s);
    }
    iropt_live_free(&lv);
    *n = out.len;
    *npos = p;
    return out.data;
}

/* Live bytes at every position (npos + 1 entries). */
static uint64_t *live_curve(const span *s, size_t n, uint32_t npos)
{
    int64_t *delta = glow_xcalloc((size_t)npos + 2, sizeof(*delta));
    uint64_t *live = glow_xcalloc((size_t)npos + 1, sizeof(*live));
    for (size_t i = 0; i < n; i++) {
        delta[s[i].begin] += (int64_t)s[i].size;
        delta[s[i].end + 1] -= (int64_t)s[i].size;
    }
    int64_t cur = 0;
    for (uint32_t p = 0; p <= npos; p++) {
        cur += delta[p];
        live[p] = (uint64_t)cur;
    }
    free(delta);
    return live;
}

void ir_memory_report_compute(const ir_function *f, ir_memory_report *r)
{
    *r = (ir_memory_report){ .constant_bytes = f->constant_bytes,
                             .mutable_bytes = f->mutable_bytes,
                             .activation_bytes = f->activation_bytes };
    size_t n;
    uint32_t npos;
    span *s = spans_of(f, &n, &npos);
    uint64_t *live = live_curve(s, n, npos);
    for (uint32_t p = 0; p <= npos; p++)
        if (live[p] > r->lower_bound)
            r->lower_bound = live[p];
    r->nbuffers = (uint32_t)n;
    uint64_t align = f->alignment ? f->alignment : 64;
    for (const ir_instr *in = f->first; in; in = in->next) {
        r->ninstrs += !iropt_is_marker(in);
        /* Naive: every result of every instruction in a buffer of its own, never reused. */
        for (uint32_t i = 0; i < in->nops && !iropt_is_marker(in); i++) {
            const ir_value *v = in->ops[i].v;
            if (in->ops[i].role != 'i' && iropt_croot(v)->kind == IV_ALLOC)
                r->naive_bytes += align_up(glow_type_bytes(&v->type), align);
        }
        r->ncopies += in->kind == IK_COPY;
        r->nconcats += (int)in->kind == NK_CONCAT;
    }
    free(live);
    free(s);
}

void ir_memory_report_print(FILE *out, const ir_memory_report *r)
{
    fprintf(out, "constant region    %12llu bytes\n", (unsigned long long)r->constant_bytes);
    fprintf(out, "mutable region     %12llu bytes\n", (unsigned long long)r->mutable_bytes);
    fprintf(out, "activation region  %12llu bytes\n", (unsigned long long)r->activation_bytes);
    fprintf(out, "naive sum          %12llu bytes (every result its own buffer)\n",
            (unsigned long long)r->naive_bytes);
    fprintf(out, "activations        %12u buffers after the IR optimizer\n", r->nbuffers);
    fprintf(out, "lower bound        %12llu bytes (most bytes live at once)\n",
            (unsigned long long)r->lower_bound);
    fprintf(out, "region / bound     %12.3f\n", r->lower_bound ?
            (double)r->activation_bytes / (double)r->lower_bound : 1.0);
    fprintf(out, "region / naive     %12.3f\n", r->naive_bytes ?
            (double)r->activation_bytes / (double)r->naive_bytes : 1.0);
    fprintf(out, "instructions       %12u (%u copies, %u concats)\n", r->ninstrs, r->ncopies,
            r->nconcats);
}

/* Writes s with the characters SVG text and attributes cannot hold escaped. */
static void svg_text(FILE *out, const char *s)
{
    glow_escape_put(out, s, GLOW_ESC_XML);   /* also control bytes and invalid UTF-8 */
}

void ir_memory_svg(FILE *out, const ir_function *f)
{
    enum { W = 1000, H = 600, ML = 90, MT = 40, MB = 40, MR = 20 };
    size_t n;
    uint32_t npos;
    span *s = spans_of(f, &n, &npos);
    uint64_t *live = live_curve(s, n, npos);
    uint64_t lb = 0;
    for (uint32_t p = 0; p <= npos; p++)
        lb = live[p] > lb ? live[p] : lb;
    double top = (double)(f->activation_bytes > lb ? f->activation_bytes : lb);
    if (top <= 0)
        top = 1;
    double xs = (double)W / (npos ? npos : 1), ys = (double)H / top;
    fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "font-family=\"monospace\" font-size=\"11\">\n", W + ML + MR, H + MT + MB);
    fprintf(out, "<title>activation memory of ");
    svg_text(out, f->name);
    fprintf(out, "</title>\n<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#fafafa\" "
            "stroke=\"#888\"/>\n", ML, MT, W, H);
    fprintf(out, "<text x=\"%d\" y=\"%d\">region %llu bytes, lower bound %llu bytes, %zu "
            "buffers, %u program positions (x: instruction, y: address)</text>\n", ML, MT - 14,
            (unsigned long long)f->activation_bytes, (unsigned long long)lb, n, npos);
    for (size_t i = 0; i < n; i++) {
        const span *b = &s[i];
        double x = ML + b->begin * xs, w = (b->end - b->begin + 1) * xs;
        double y = MT + H - (double)(b->v->addr + b->size) * ys, h = (double)b->size * ys;
        unsigned hue = (unsigned)((b->v->id * 2654435761u) % 360);
        fprintf(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
                "fill=\"hsl(%u,60%%,65%%)\" stroke=\"#333\" stroke-width=\"0.3\"><title>",
                x, y, w > 0.5 ? w : 0.5, h > 0.5 ? h : 0.5, hue);
        svg_text(out, b->v->name);
        fprintf(out, ": %llu bytes @%llu, positions %u..%u</title></rect>\n",
                (unsigned long long)b->size, (unsigned long long)b->v->addr, b->begin, b->end);
    }
    /* The live-bytes curve: where it touches the top, the plan is optimal. */
    fputs("<polyline fill=\"none\" stroke=\"#c00\" stroke-width=\"1\" points=\"", out);
    for (uint32_t p = 0; p <= npos; p++)
        fprintf(out, "%.2f,%.2f ", ML + p * xs, MT + H - (double)live[p] * ys);
    fputs("\"/>\n", out);
    fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%llu</text>\n", ML - 4, MT + 4,
            (unsigned long long)top);
    fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">0</text>\n", ML - 4, MT + H);
    fprintf(out, "<text x=\"%d\" y=\"%d\">red: live bytes per position</text>\n", ML,
            MT + H + 24);
    fputs("</svg>\n", out);
    free(live);
    free(s);
}
