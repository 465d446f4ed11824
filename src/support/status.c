// status.c - Status names, failure messages collected in a glow_diag, and the abort for bugs.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/support.h"

static const char *const status_names[] = {
#define STATUS(id, text) [GLOW_##id] = text,
#include "status.def"
#undef STATUS
};

const char *glow_status_name(glow_status s)
{
    if ((unsigned)s >= GLOW_STATUS_COUNT)
        return "unknown status";
    return status_names[s];
}

/* Appends formatted text at d->len, truncating safely; d->len never exceeds sizeof msg - 1.
 * Messages quote names from the model, so the text is escaped (escape.c) before it is kept:
 * no caller can put a terminal escape sequence or invalid UTF-8 into a message. Newlines stay,
 * since messages list one problem per line. */
static void diag_append(glow_diag *d, const char *fmt, va_list ap)
{
    size_t room = sizeof(d->msg) - d->len;
    if (room <= 1)
        return;
    char raw[sizeof(d->msg)];
    if (vsnprintf(raw, sizeof raw, fmt, ap) < 0) {
        d->msg[d->len] = '\0';
        return;
    }
    glow_escape(d->msg + d->len, room, raw, GLOW_ESC_PLAIN, GLOW_ESC_KEEP_NEWLINE, 0);
    d->len += strlen(d->msg + d->len);
}

glow_status glow_failv(glow_diag *d, glow_status s, const char *fmt, va_list ap)
{
    if (!d)
        return s;
    if (d->len >= sizeof(d->msg))
        d->len = sizeof(d->msg) - 1;   /* a corrupt length must not send us out of bounds */
    if (d->status == GLOW_OK) {
        /* The first failure decides the status; its message starts the buffer. */
        d->status = s;
        d->len = 0;
        d->msg[0] = '\0';
        diag_append(d, fmt, ap);
        return s;
    }
    /* Later failures add context (e.g. the enclosing node) on their own line. */
    if (d->len + 2 < sizeof(d->msg)) {
        d->msg[d->len++] = '\n';
        d->msg[d->len] = '\0';
        diag_append(d, fmt, ap);
    }
    return s;
}

glow_status glow_fail(glow_diag *d, glow_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    glow_status r = glow_failv(d, s, fmt, ap);
    va_end(ap);
    return r;
}

void glow_diag_clear(glow_diag *d)
{
    if (!d)
        return;
    d->status = GLOW_OK;
    d->len = 0;
    d->msg[0] = '\0';
}

_Noreturn void glow_unreachable_at(const char *file, int line, const char *what)
{
    fprintf(stderr, "%s:%d: internal error: unreachable (%s)\n", file, line, what);
    fflush(stderr);
    abort();
}
