// eval_prim.c - Reference evaluation of the lowering primitives Splat and InsertTensor.
#include "eval/eval_internal.h"

/* Fills the result with `value` converted once to the result's element kind. */
glow_status glow_ev_splat(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                          glow_diag *d)
{
    (void)ins;
    (void)d;
    const glow_type *y = &outs[0].type;
    size_t es = ev_size(y->dtype);
    uint64_t fill = 0;
    ev_stf(y->dtype, &fill, 0, glow_node_float(n, GA_VALUE, 0.0));
    int64_t count = ev_numel(y);
    for (int64_t i = 0; i < count; i++)
        ev_copy(outs[0].data, i, &fill, 0, es);
    return GLOW_OK;
}

/* Copies big, then writes small's rows over the box at `starts`. Rows along the last dim
 * are contiguous in both tensors, so they move with one memcpy each. */
glow_status glow_ev_insert_tensor(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                                  glow_diag *d)
{
    const glow_type *big = &ins[0].type, *small = &ins[1].type;
    int ns = 0;
    const int64_t *st = glow_node_ints(n, GA_STARTS, &ns);
    if (small->rank != big->rank || ns != big->rank)
        return glow_fail(d, GLOW_ERR_BAD_ATTR, "%s '%s': rank %d insert into rank %d with %d "
                         "starts", glow_ev_kind(n), n->name, small->rank, big->rank, ns);
    for (int k = 0; k < big->rank; k++) {
        if (st[k] < 0 || st[k] > big->dims[k] || small->dims[k] > big->dims[k] - st[k])
            return glow_fail(d, GLOW_ERR_BAD_ATTR, "%s '%s': inserted tensor does not fit at "
                             "offset %lld of dim %d", glow_ev_kind(n), n->name,
                             (long long)st[k], k);
    }
    GLOW_TRY(glow_ev_expect_shape(n, "result", &outs[0].type, big->rank, big->dims, d));
    size_t es = ev_size(big->dtype);
    int64_t total = ev_numel(big);
    if (total > 0)
        memcpy(outs[0].data, ins[0].data, (size_t)total * es);
    int64_t count = ev_numel(small);
    if (count == 0)
        return GLOW_OK;
    int r = big->rank;
    if (r == 0) {
        memcpy(outs[0].data, ins[1].data, es);
        return GLOW_OK;
    }
    int64_t bs[GLOW_MAX_DIMS], idx[GLOW_MAX_DIMS] = { 0 };
    ev_strides(big, bs);
    int64_t row = small->dims[r - 1], rows = count / row;
    for (int64_t i = 0; i < rows; i++) {
        int64_t off = 0;
        for (int k = 0; k < r; k++)
            off += (idx[k] + st[k]) * bs[k];
        memcpy((char *)outs[0].data + (size_t)off * es,
               (const char *)ins[1].data + (size_t)(i * row) * es, (size_t)row * es);
        /* Advance the multi-index over all dims but the last. */
        ev_next(r - 1, small->dims, idx);
    }
    return GLOW_OK;
}
