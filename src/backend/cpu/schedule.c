// schedule.c - What the generated code runs, in which order, with which barriers: every
// instruction's operations (select.c), runs of elementwise operations fused into one loop,
// barriers between dependent instructions, evaluator fallbacks.
//
// Barriers. glowc_run is run by every pool thread and each kernel does the thread's share, so
// an instruction must wait for the others only when it touches bytes that an instruction
// since the last barrier wrote (or writes bytes one of them read): the byte ranges of the
// operands, recorded since the last barrier, decide. That is what makes the shares of two
// kernels with different splits safe. A fallback, a zeroing and a small operation (operands
// of at most SERIAL_BYTES in all, or a GEMM of at most SERIAL_MACS) run on thread 0 alone:
// those need no barrier among themselves, only against what the threads ran together since
// the last barrier. A program whose shared work is small beside its serial work (an unrolled
// LSTM) runs wholly on thread 0, without barriers (cpu_plan.serial: cpu.c leaves the pool
// asleep).
//
// Chains. Consecutive instructions whose one operation is a same-size f32 elementwise kernel
// (unary, binary, Clip) join a chain when every buffer a step reads or writes is either
// exactly a buffer of an earlier step (same bytes: element i then depends only on element i
// of the steps before it) or disjoint from all of them, and when it touches nothing else
// that ran since the last barrier. The chain runs as one gk_chain loop in which each element
// goes through every step: one pass over memory, no barrier between the steps (each thread
// computes the same share of every step), values in registers between steps.
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_internal.h"
#include "gk_dtype.h"
#include "gk_ops.h"

/* Byte ranges (region, [lo, hi)) read and written since the last barrier. */
typedef struct range {
    int region;
    uint64_t lo, hi;
} range;

typedef struct range_set {
    range *v;
    size_t n, cap;
} range_set;

static void range_add(range_set *s, int region, uint64_t lo, uint64_t hi)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 64;
        s->v = glow_xrealloc(s->v, s->cap * sizeof(*s->v));
    }
    s->v[s->n++] = (range){ region, lo, hi };
}

static bool range_hits(const range_set *s, size_t upto, int region, uint64_t lo, uint64_t hi)
{
    for (size_t i = 0; i < upto; i++)
        if (s->v[i].region == region && s->v[i].lo < hi && lo < s->v[i].hi)
            return true;
    return false;
}

/* True when `in` conflicts with the first rn / wn ranges recorded in rd / wr. */
static bool conflicts(const ir_instr *in, const range_set *rd, size_t rn, const range_set *wr,
                      size_t wn)
{
    for (uint32_t i = 0; i < in->nops; i++) {
        const ir_value *v = in->ops[i].v;
        int r = glow_value_region(v);
        uint64_t lo = v->addr, hi = lo + glow_type_bytes(&v->type);
        if (hi == lo)
            continue;
        if (range_hits(wr, wn, r, lo, hi))
            return true;
        if (in->ops[i].role != 'i' && range_hits(rd, rn, r, lo, hi))
            return true;
    }
    return false;
}

static void record(const ir_instr *in, range_set *rd, range_set *wr)
{
    for (uint32_t i = 0; i < in->nops; i++) {
        const ir_value *v = in->ops[i].v;
        uint64_t lo = v->addr, hi = lo + glow_type_bytes(&v->type);
        if (hi > lo)
            range_add(in->ops[i].role == 'i' ? rd : wr, glow_value_region(v), lo, hi);
    }
}

/* --- chains --- */

enum { ST_OP, ST_P, ST_Q, ST_A, ST_B, ST_Y, ST_ARGS };

typedef struct chain {
    int64_t n;                                 /* elements of every step */
    int nsteps;
    cpu_arg step[GK_CHAIN_MAX][ST_ARGS];       /* op, p, q, a, b (or null), y */
    const ir_instr *first;
    cpu_op single;                             /* its own operation, when it stays alone */
    size_t rd_mark, wr_mark;   /* the ranges recorded since the last barrier, before the chain */
    bool serial;               /* thread 0 runs it alone (small steps) */
    bool for_size;             /* its one operation is compiled for size (a chain never) */
} chain;

static cpu_arg num(int64_t i) { return (cpu_arg){ .kind = CA_INT, .i = i }; }
static cpu_arg real(double f) { return (cpu_arg){ .kind = CA_REAL, .f = f }; }

/* The step an elementwise operation makes (false: no chainable kernel). */
static bool chain_step(const cpu_op *op, int64_t *n, cpu_arg st[ST_ARGS])
{
    const cpu_arg *a = op->args;
    cpu_arg none = { .kind = CA_NULL };
    switch (op->k) {
    case CPU_K_unary_f32_scalar: {
        *n = a[1].i;
        cpu_arg s[ST_ARGS] = { a[0], real(0), real(0), a[2], none, a[3] };
        memcpy(st, s, sizeof s);
        break;
    }
    case CPU_K_binary_f32_scalar: {
        *n = a[1].i;
        cpu_arg s[ST_ARGS] = { num(-a[0].i), real(0), real(0), a[2], a[3], a[4] };
        memcpy(st, s, sizeof s);
        break;
    }
    case CPU_K_act_f32_scalar: {
        if (a[0].i != GK_ACT_CLIP && a[0].i != GK_ACT_LEAKY_RELU)
            return false;
        *n = a[3].i;
        cpu_arg s[ST_ARGS] = { num(a[0].i == GK_ACT_CLIP ? GK_CHAIN_CLIP : GK_CHAIN_LEAKY_RELU),
                               a[1], a[2], a[4], none, a[5] };
        memcpy(st, s, sizeof s);
        break;
    }
    case CPU_K_unary_any_scalar: {
        /* (op, tx, ty, p, q, n, x, y): f32 to f32 only. */
        if (a[1].i != GK_DT_F32 || a[2].i != GK_DT_F32)
            return false;
        *n = a[5].i;
        cpu_arg s[ST_ARGS] = { num(GK_CHAIN_TYPED + a[0].i), a[3], a[4], a[6], none, a[7] };
        memcpy(st, s, sizeof s);
        break;
    }
    case CPU_K_binary_any_scalar: {
        /* (op, ta, tb, ty, n, a, b, y): all f32 only. */
        if (a[1].i != GK_DT_F32 || a[2].i != GK_DT_F32 || a[3].i != GK_DT_F32)
            return false;
        *n = a[4].i;
        cpu_arg s[ST_ARGS] = { num(-(GK_CHAIN_TYPED + a[0].i)), real(0), real(0), a[5], a[6],
                               a[7] };
        memcpy(st, s, sizeof s);
        break;
    }
    default:
        return false;
    }
    return *n > 0;
}

/* Same bytes, or none in common, for two n-float buffers. */
static bool compatible(const cpu_arg *x, const cpu_arg *y, int64_t n)
{
    if (x->kind != CA_PTR || y->kind != CA_PTR || x->region != y->region ||
        x->offset == y->offset)
        return true;
    uint64_t bytes = (uint64_t)n * sizeof(float);
    return x->offset + bytes <= y->offset || y->offset + bytes <= x->offset;
}

/* The step may join the (non-empty) chain: same size, room, and every buffer it touches is
 * a buffer of the chain exactly or disjoint from them where one side writes. */
static bool chain_fits(const chain *ch, int64_t n, const cpu_arg st[ST_ARGS])
{
    if (ch->nsteps == 0 || ch->nsteps >= GK_CHAIN_MAX || n != ch->n)
        return false;
    static const int ptrs[3] = { ST_A, ST_B, ST_Y };
    for (int k = 0; k < ch->nsteps; k++)
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                if ((ptrs[i] == ST_Y || ptrs[j] == ST_Y) &&
                    !compatible(&st[ptrs[i]], &ch->step[k][ptrs[j]], n))
                    return false;
    return true;
}

/* --- the plan --- */

static cpu_step *add_step(cpu_plan *p, cpu_step_kind kind, const ir_instr *in)
{
    if (p->nsteps == p->capsteps) {
        p->capsteps = p->capsteps ? 2 * p->capsteps : 64;
        p->steps = glow_xrealloc(p->steps, (size_t)p->capsteps * sizeof(*p->steps));
    }
    cpu_step *s = &p->steps[p->nsteps++];
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->in = in;
    return s;
}

static void add_run(cpu_plan *p, const ir_instr *in, const cpu_op *ops, int nops, bool chained)
{
    if (p->nops + nops > p->capops) {
        while (p->nops + nops > p->capops)
            p->capops = p->capops ? 2 * p->capops : 64;
        p->ops = glow_xrealloc(p->ops, (size_t)p->capops * sizeof(*p->ops));
    }
    cpu_step *s = add_step(p, CPU_STEP_RUN, in);
    s->first = p->nops;
    s->nops = nops;
    s->chain = chained;
    memcpy(&p->ops[p->nops], ops, (size_t)nops * sizeof(*ops));
    p->nops += nops;
}

/* Adds the pending chain (its one operation, or the fused loop) and empties it. */
static void flush_chain(cpu_plan *p, chain *ch)
{
    if (ch->nsteps == 1) {
        add_run(p, ch->first, &ch->single, 1, false);
        p->steps[p->nsteps - 1].serial = ch->serial;
        p->steps[p->nsteps - 1].for_size = ch->for_size;
    } else if (ch->nsteps > 1) {
        cpu_op op = { .k = CPU_K_chain_f32_scalar };
        op.args[op.nargs++] = cpu_elements(ch->n);
        op.args[op.nargs++] = num(ch->nsteps);
        for (int k = 0; k < GK_CHAIN_MAX; k++)
            for (int i = 0; i < ST_ARGS; i++)
                op.args[op.nargs++] = k < ch->nsteps ? ch->step[k][i]
                                      : i == ST_OP   ? num(0)
                                      : i <= ST_Q    ? real(0)
                                                     : (cpu_arg){ .kind = CA_NULL };
        add_run(p, ch->first, &op, 1, true);
        p->steps[p->nsteps - 1].serial = ch->serial;
    }
    ch->nsteps = 0;
}

/* What ran since the last barrier: the ranges of the steps all threads share (rd, wr) and
 * of the steps thread 0 runs alone (srd, swr: small operations, fallbacks, zeroing), which
 * need no barrier among themselves, thread 0 running them in program order. */
typedef struct since_barrier {
    range_set rd, wr, srd, swr;
} since_barrier;

static void barrier(cpu_plan *p, since_barrier *sb)
{
    add_step(p, CPU_STEP_BARRIER, NULL);
    sb->rd.n = sb->wr.n = sb->srd.n = sb->swr.n = 0;
}

/* A step shared by the threads conflicts with anything since the barrier. */
static bool conflicts_shared(const ir_instr *in, const since_barrier *sb)
{
    return conflicts(in, &sb->rd, sb->rd.n, &sb->wr, sb->wr.n) ||
           conflicts(in, &sb->srd, sb->srd.n, &sb->swr, sb->swr.n);
}

/* Operations this small run on thread 0 alone: splitting them saves less than the barrier
 * their sharing would need (an unrolled LSTM's steps on [1, 128] vectors). So does a packed
 * GEMM of at most SERIAL_MACS multiply-adds (an LSTM step's [1, 128] x [128, 512], ~1 us on
 * one core): shared, it needs a barrier before and after it, which cost more than half of it
 * on a busy machine, and the steps between are serial anyway. */
enum { SERIAL_BYTES = 16384, SERIAL_MACS = 65536 };

/* The multiply-adds of a packed GEMM (0 for another instruction). */
static int64_t gemm_macs(const ir_instr *in)
{
    if (in->kind != IK_CPU_GEMM_PACKED || in->nops < 2)
        return 0;
    const glow_type *y = &in->ops[0].v->type, *a = &in->ops[1].v->type;
    if (y->rank != 2 || a->rank != 2)
        return 0;
    return y->dims[0] * y->dims[1] * a->dims[1];
}

static uint64_t operand_bytes(const ir_instr *in)
{
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < in->nops; i++)
        bytes += glow_type_bytes(&in->ops[i].v->type);
    return bytes;
}

/* bytes: operand_bytes(in). */
static bool small_instr(const ir_instr *in, uint64_t bytes)
{
    int64_t macs = gemm_macs(in);
    return (macs > 0 && macs <= SERIAL_MACS) || bytes <= SERIAL_BYTES;
}

/* An operation whose operands total at most SIZE_BYTES is compiled for size (its glowc_k
 * function is `optsize`): LLVM then neither unrolls its constant-count loops whole nor
 * versions them for overlap, which for such sizes made thousands of lines of IR per
 * operation and was most of a small model's compile (ONNX's node suite on the cpu backend,
 * every 10th test: 21.2 s -> 9.9 s; a limit of 1 KiB gave 12.9 s, 16 KiB 10.3 s). Elementwise
 * chains stay O2: they are an unrolled LSTM's hot loops (its best run 2-3 % slower with them
 * compiled for size). */
enum { SIZE_BYTES = 4096 };

/* A program whose shared steps are only packed GEMMs and elementwise operations, of at most
 * SERIAL_PROGRAM_WORK multiply-adds and elements in all and no more than its serial steps',
 * runs on thread 0 alone (an unrolled LSTM: two input projections shared, a hundred serial
 * GEMM steps): sharing would save at most a quarter of the run and ~35 us on two cores,
 * while waking the threads and the barriers cost about that on a busy machine, where a
 * thread the scheduler has put aside stalls every barrier. */
enum { SERIAL_PROGRAM_WORK = 1 << 23 };

/* The work of an instruction: the multiply-adds of a packed GEMM, the n elements of an
 * elementwise operation (step), -1 for anything else. */
static int64_t work_of(const ir_instr *in, bool step, int64_t n)
{
    int64_t macs = gemm_macs(in);
    return macs > 0 ? macs : step ? n : -1;
}

/* Every step on thread 0, in program order: no barrier is needed. */
static void make_serial(cpu_plan *p)
{
    int k = 0;
    for (int i = 0; i < p->nsteps; i++) {
        if (p->steps[i].kind == CPU_STEP_BARRIER)
            continue;
        p->steps[k] = p->steps[i];
        p->steps[k++].serial = true;
    }
    p->nsteps = k;
    p->serial = true;
}

glow_status cpu_schedule(const ir_function *f, const cpu_isa *isa, cpu_plan *p, glow_diag *d)
{
    memset(p, 0, sizeof *p);
    since_barrier sb = { 0 };
    cpu_op *ops = glow_xcalloc(CPU_MAX_CALLS, sizeof(*ops));
    chain ch = { 0 };
    glow_status s = GLOW_OK;
    int index = 0;
    int64_t shared = 0, alone = 0;   /* the work of the shared and of the serial steps */
    for (const ir_instr *in = f->first; in && s == GLOW_OK; in = in->next, index++) {
        if (in->kind == IK_ALLOC || in->kind == IK_DEALLOC)
            continue;
        int nops = 0;
        bool sel = in->kind != IK_CPU_ZERO && cpu_select(in, isa, ops, &nops);
        uint64_t bytes = sel ? operand_bytes(in) : 0;
        bool serial = !sel || small_instr(in, bytes);
        bool for_size = sel && bytes <= SIZE_BYTES;
        cpu_arg st[ST_ARGS];
        int64_t n = 0;
        bool step = sel && nops == 1 && chain_step(&ops[0], &n, st);
        int64_t w = sel ? work_of(in, step, n) : 0;
        if (!serial)
            shared = w < 0 || shared + w > SERIAL_PROGRAM_WORK ? SERIAL_PROGRAM_WORK + 1
                                                             : shared + w;
        else if (w > 0 && alone < SERIAL_PROGRAM_WORK)
            alone += w;
        /* A shared chain's step may touch only its own buffers among what ran since the
         * barrier; a serial chain's only nothing the threads shared since (thread 0 runs the
         * serial steps in order). */
        bool joins = step && serial == ch.serial && chain_fits(&ch, n, st) &&
                     (serial ? !conflicts(in, &sb.rd, sb.rd.n, &sb.wr, sb.wr.n)
                             : !conflicts(in, &sb.rd, ch.rd_mark, &sb.wr, ch.wr_mark) &&
                                   !conflicts(in, &sb.srd, sb.srd.n, &sb.swr, sb.swr.n));
        if (joins) {
            memcpy(ch.step[ch.nsteps++], st, sizeof st);
            record(in, serial ? &sb.srd : &sb.rd, serial ? &sb.swr : &sb.wr);
            p->nkernel++;
            continue;
        }
        flush_chain(p, &ch);
        if (serial ? conflicts(in, &sb.rd, sb.rd.n, &sb.wr, sb.wr.n) : conflicts_shared(in, &sb))
            barrier(p, &sb);
        size_t rd_mark = sb.rd.n, wr_mark = sb.wr.n;
        if (serial)
            record(in, &sb.srd, &sb.swr);
        else
            record(in, &sb.rd, &sb.wr);
        if (step) {
            /* Starts a chain; added when an instruction that cannot join comes. Later steps
             * are checked against what ran before the chain only (the marks): they may
             * touch the chain's own buffers element for element. */
            ch = (chain){ .n = n, .nsteps = 1, .first = in, .single = ops[0],
                          .rd_mark = rd_mark, .wr_mark = wr_mark, .serial = serial,
                          .for_size = for_size };
            memcpy(ch.step[0], st, sizeof st);
            p->nkernel++;
        } else if (in->kind == IK_CPU_ZERO) {
            cpu_step *z = add_step(p, CPU_STEP_ZERO, in);
            z->region = glow_value_region(in->ops[0].v);
            z->offset = in->ops[0].v->addr;
            z->bytes = glow_type_bytes(&in->ops[0].v->type);
            /* The kernels write the error record without naming it as an operand: every
             * thread waits for it to be zeroed. */
            if (in->ops[0].v == cpu_error_record(f))
                barrier(p, &sb);
        } else if (sel) {
            p->nkernel++;
            add_run(p, in, ops, nops, false);
            p->steps[p->nsteps - 1].serial = serial;
            p->steps[p->nsteps - 1].for_size = for_size;
        } else if (cpu_own_kind(in->kind)) {
            s = glow_fail(d, GLOW_ERR_INTERNAL, "cpu backend: %s '%s' was prepared for a fast "
                          "kernel that this target has not", ir_instr_kind_name(in->kind),
                          in->name ? in->name : "?");
        } else {
            p->nfallback++;
            add_step(p, CPU_STEP_FALLBACK, in)->index = index;
        }
    }
    if (s == GLOW_OK)
        flush_chain(p, &ch);
    if (s == GLOW_OK && shared <= SERIAL_PROGRAM_WORK && shared <= alone)
        make_serial(p);
    free(ops);
    free(sb.rd.v);
    free(sb.wr.v);
    free(sb.srd.v);
    free(sb.swr.v);
    if (s != GLOW_OK)
        cpu_plan_free(p);
    return s;
}

void cpu_plan_free(cpu_plan *p)
{
    free(p->steps);
    free(p->ops);
    memset(p, 0, sizeof *p);
}
