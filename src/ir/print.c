// print.c - Text form of IR functions: the declare section, then the program.
//
//   declare {
//     %w = weight const f32[64, 3, 7, 7] @0
//     %data = weight mutable f32[1, 3, 224, 224] @0
//   }
//   program {
//     %conv1.res = allocactivation { f32[1, 64, 112, 112] } @0
//     %conv1 = Conv @out %conv1.res, @in %data, @in %w {kernel=[7, 7], ...}
//     deallocactivation @inout %conv1.res
//   }
//   memory { constant 37632, mutable 602112, activations 3211264, alignment 64 }
//
// Weights no instruction reads ("unused": a backend's repacked copy replaced them) have no
// memory.
// Values print as %name when the name is plain, else %v<id>; the same rules make every
// value distinct (names are made unique by irgen).
#include <string.h>

#include "ir/ir.h"

static void print_value_name(FILE *out, const ir_value *v)
{
    if (v->name[0]) {
        fputc('%', out);
        glow_escape_put(out, v->name, GLOW_ESC_PLAIN);   /* names come from the model */
    } else
        fprintf(out, "%%v%u", v->id);
}

static const char *role_name(char r)
{
    switch (r) {
    case 'o': return "@out";
    case 'i': return "@in";
    default: return "@inout";
    }
}

static void print_attrs(FILE *out, const ir_instr *in)
{
    if (!in->nattr)
        return;
    fputs(" {", out);
    bool first = true;
    for (int id = 0; id < GA_COUNT; id++) {
        for (uint32_t i = 0; i < in->nattr; i++) {
            if (in->attrs[i].id != (glow_attr_id)id)
                continue;
            if (!first)
                fputs(", ", out);
            first = false;
            glow_attr_print(out, &in->attrs[i]);
            break;
        }
    }
    fputc('}', out);
}

void ir_function_print(FILE *out, const ir_function *f)
{
    char buf[160];
    fputs("function ", out);
    glow_escape_put(out, f->name, GLOW_ESC_PLAIN);
    fputc('\n', out);
    fputs("declare {\n", out);
    for (const ir_value *v = f->values; v; v = v->next) {
        if (v->kind != IV_WEIGHT)
            continue;
        fputs("  ", out);
        print_value_name(out, v);
        if (v->unused)
            fprintf(out, " = weight const %s unused\n",
                    glow_type_str(&v->type, buf, sizeof(buf)));
        else
            fprintf(out, " = weight %s %s @%llu\n", v->is_mutable ? "mutable" : "const",
                    glow_type_str(&v->type, buf, sizeof(buf)), (unsigned long long)v->addr);
    }
    fputs("}\nprogram {\n", out);
    for (const ir_instr *in = f->first; in; in = in->next) {
        fputs("  ", out);
        if (in->kind == IK_ALLOC) {
            const ir_value *v = in->ops[0].v;
            print_value_name(out, v);
            fprintf(out, " = allocactivation { %s }", glow_type_str(&v->type, buf, sizeof(buf)));
            fprintf(out, " @%llu\n", (unsigned long long)v->addr);
            continue;
        }
        fputs(in->name[0] ? "%" : "", out);
        glow_escape_put(out, in->name, GLOW_ESC_PLAIN);
        fprintf(out, "%s%s", in->name[0] ? " = " : "", ir_instr_kind_name(in->kind));
        for (uint32_t i = 0; i < in->nops; i++) {
            const ir_value *v = in->ops[i].v;
            fprintf(out, "%s %s ", i ? "," : "", role_name(in->ops[i].role));
            print_value_name(out, v);
            if (v->kind == IV_VIEW) {
                fprintf(out, " (view ");
                print_value_name(out, v->base);
                fprintf(out, "+%llu %s)", (unsigned long long)v->view_offset,
                        glow_type_str(&v->type, buf, sizeof(buf)));
            }
        }
        print_attrs(out, in);
        fputc('\n', out);
    }
    fputs("}\n", out);
    fprintf(out, "memory { constant %llu, mutable %llu, activations %llu, alignment %llu }\n",
            (unsigned long long)f->constant_bytes, (unsigned long long)f->mutable_bytes,
            (unsigned long long)f->activation_bytes, (unsigned long long)f->alignment);
}
