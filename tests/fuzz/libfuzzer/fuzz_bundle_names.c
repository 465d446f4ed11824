// fuzz_bundle_names.c - libFuzzer target: the names a bundle header is made from. The input is
// lines: the bundle name, the model path, then input and output names alternately (at most 16
// each). A name glow_bundle_name_ok refuses is replaced by "net", as the CLI refuses it. The
// header written (src/backend/cpu/bundle_header.c) must be safe text, keep every name inside
// comments (which no name may end or nest), have only C outside them, and give every macro a
// distinct identifier - whatever bytes the names hold.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/cpu/bundle.h"

#define MAX_IO 16

static void fail(const char *why, const char *text)
{
    fprintf(stderr, "bundle header: %s\n----\n%s\n----\n", why, text);
    abort();
}

static bool ident_start(char c)
{
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool ident_char(char c)
{
    return ident_start(c) || (c >= '0' && c <= '9');
}

/* Checks the header's C: comments closed and never nested, only C tokens outside them, and
 * each #define's name a distinct identifier. */
static void check_header(const char *text, size_t len)
{
    if (!glow_text_is_safe(text, len, true))
        fail("unsafe bytes", text);
    char **macros = NULL;
    size_t nmacros = 0;
    bool in_comment = false, line_start = true;
    for (size_t i = 0; i < len; i++) {
        char c = text[i], n = i + 1 < len ? text[i + 1] : 0;
        if (in_comment) {
            if (c == '/' && n == '*')
                fail("a comment opens inside a comment", text);
            if (c == '*' && n == '/')
                in_comment = false, i++;
            continue;
        }
        if (c == '/' && n == '*') {
            in_comment = true, i++;
            continue;
        }
        bool extern_c = !strncmp(text + i, "\"C\"", 3) ||
                        (i >= 2 && !strncmp(text + i - 2, "\"C\"", 3));
        if (c == '"' && !extern_c)
            fail("a string literal outside a comment", text);
        if (!ident_char(c) && !strchr(" \n#(){};*,\"<>.[]", c))
            fail("a character that is not C outside a comment", text);
        if (line_start && !strncmp(text + i, "#define ", 8)) {
            const char *s = text + i + 8;
            size_t k = 0;
            if (!ident_start(s[0]))
                fail("a macro name that is not an identifier", text);
            while (ident_char(s[k]))
                k++;
            for (size_t j = 0; j < nmacros; j++)
                if (strlen(macros[j]) == k && !strncmp(macros[j], s, k))
                    fail("a macro defined twice", text);
            macros = realloc(macros, (nmacros + 1) * sizeof *macros);
            macros[nmacros++] = strndup(s, k);
        }
        line_start = c == '\n';
    }
    if (in_comment)
        fail("a comment left open", text);
    for (size_t j = 0; j < nmacros; j++)
        free(macros[j]);
    free(macros);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Lines of the input, each NUL-terminated in a copy. */
    char *buf = malloc(size + 1);
    memcpy(buf, data, size);
    buf[size] = '\0';
    char *lines[2 + 2 * MAX_IO];
    int nlines = 0;
    for (char *p = buf; nlines < 2 + 2 * MAX_IO;) {
        lines[nlines++] = p;
        char *nl = memchr(p, '\n', (size_t)(buf + size - p));
        if (!nl)
            break;
        *nl = '\0';
        p = nl + 1;
    }
    const char *name = nlines > 0 && glow_bundle_name_ok(lines[0]) ? lines[0] : "net";
    const char *model = nlines > 1 ? lines[1] : NULL;

    glow_type ty = glow_type_make(GLOW_F32, 2, (const int64_t[]){ 1, 4 });
    ir_value vals[2 * MAX_IO];
    glow_bundle_io ins[MAX_IO], outs[MAX_IO];
    glow_bundle_ios ios = { .inputs = ins, .outputs = outs };
    memset(vals, 0, sizeof vals);
    for (int i = 2; i < nlines; i++) {
        ir_value *v = &vals[i - 2];
        v->addr = (uint64_t)(i - 2) * 16;
        glow_bundle_io io = { lines[i], &ty, (i % 3) ? v : NULL };   /* some without offset */
        if (i % 2 == 0)
            ins[ios.ninputs++] = io;
        else
            outs[ios.noutputs++] = io;
    }
    ir_function f = { .constant_bytes = 64, .mutable_bytes = 1024, .activation_bytes = 256,
                      .alignment = 64 };
    glow_bundle_options o = { .dir = "/tmp", .name = name, .model = model,
                              .weights = (glow_bundle_weights)(size % 3),
                              .threads = size % 2 ? 2 : 1 };

    static char path[64];
    if (!path[0])
        snprintf(path, sizeof path, "/tmp/fuzz_bundle_names.%d.h", (int)getpid());
    glow_diag d = { 0 };
    if (glow_bundle_write_header(&f, &ios, &o, "x86_64-unknown-linux-gnu", "generic", path,
                                 &d) == GLOW_OK) {
        size_t len = 0;
        uint8_t *text = NULL;
        glow_diag r = { 0 };
        if (glow_read_file(path, &text, &len, &r) == GLOW_OK) {
            check_header((const char *)text, len);
            free(text);
        }
    }
    free(buf);
    return 0;
}
