// eval_string.h - The evaluator's string routines (eval_string.c, eval_tfidf.c), for eval.c
// and eval_elem.c.
#ifndef GLOW_EVAL_STRING_H
#define GLOW_EVAL_STRING_H

#include "eval/eval_internal.h"

/* Writes a copy of s[0..len) to the bound string store as *dst (len 0: NULL, the empty
 * string); GLOW_ERR_UNSUPPORTED naming n when no store is bound (folding at compile time). */
glow_status glow_ev_str_store(const glow_node *n, glow_str *dst, const char *s, size_t len,
                              glow_diag *d);
/* EQUAL on two string operands (other comparisons are refused). */
glow_status glow_ev_str_compare(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                                glow_diag *d);
/* CAST from or to string (ONNX's number spellings). */
glow_status glow_ev_str_cast(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                             glow_diag *d);
/* The string node kinds of nodes.def (STRING_NORMALIZER ... TFIDF). */
glow_status glow_ev_string_op(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                              glow_diag *d);
glow_status glow_ev_tfidf(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                          glow_diag *d);

#endif
