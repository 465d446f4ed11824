// escape.c - Makes text read from a model safe to print: terminal, dumps, DOT, JSON, SVG, C.
//
// Node, op, input and output names, doc strings and domains come from the model file, which
// may come from anyone. Printed raw, a name holding ESC[2J clears the user's terminal, other
// escape sequences can retitle windows or hide lines, and invalid UTF-8 makes JSON and DOT
// files unreadable. Every printing point passes such text through one of the modes below.
// The rule is the same in all of them: printable ASCII and valid UTF-8 (other than the C1
// controls U+0080..U+009F, which some terminals obey like ESC) are kept; any other byte shows
// as \xNN. Backslash itself is kept, so escaping twice changes nothing: a message that
// quotes an already escaped message stays readable. The modes add what their syntax needs.
#include <stdio.h>
#include <string.h>

#include "support/support.h"

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when the bytes are not one. Overlong
 * forms, surrogates and code points above U+10FFFF are invalid, as in RFC 3629. */
size_t glow_utf8_len(const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    unsigned c = s[0];
    size_t n;
    unsigned cp, min;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2, cp = c & 0x1f, min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3, cp = c & 0x0f, min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4, cp = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;   /* also stops at the terminating NUL */
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    if (cp >= 0x80 && cp <= 0x9f)
        return 0;   /* C1 controls: CSI (U+009B) acts like ESC [ on some terminals */
    return n;
}

/* Output that either goes to a FILE or fills a bounded buffer. A piece that does not fit
 * whole is dropped with everything after it, so a truncated buffer never ends inside a UTF-8
 * sequence or an escape. */
typedef struct sink {
    FILE *f;
    char *buf;
    size_t size, len;   /* len counts every byte produced, even those not stored */
    size_t stored;
} sink;

static void put(sink *k, const char *s, size_t n)
{
    if (k->f) {
        fwrite(s, 1, n, k->f);
    } else if (k->stored == k->len && k->len + n < k->size) {
        memcpy(k->buf + k->len, s, n);
        k->stored += n;
    }
    k->len += n;
}

/* The form of one byte that cannot be printed; JSON and quoted strings need the backslash
 * escaped so that their readers see the four characters \xNN. */
static void put_hex(sink *k, unsigned char c, glow_esc_mode mode)
{
    static const char hex[] = "0123456789abcdef";
    char t[6] = { '\\', '\\', 'x', hex[c >> 4], hex[c & 15], 0 };
    if (mode == GLOW_ESC_JSON || mode == GLOW_ESC_QUOTED)
        put(k, t, 5);
    else
        put(k, t + 1, 4);
}

/* Escapes s into k; stops after max_chars source characters (0: no limit) and adds "...".
 * Returns the number of source bytes consumed. */
static size_t escape_into(sink *k, const char *s, glow_esc_mode mode, unsigned flags,
                          size_t max_chars)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t chars = 0;
    while (*p) {
        if (max_chars && chars == max_chars) {
            put(k, "...", 3);
            break;
        }
        chars++;
        unsigned char c = *p;
        if (c >= 0x80) {
            size_t n = glow_utf8_len((const char *)p);
            if (n)
                put(k, (const char *)p, n), p += n;
            else
                put_hex(k, c, mode), p++;
            continue;
        }
        p++;
        if (c == '\n' && (flags & GLOW_ESC_KEEP_NEWLINE)) {
            put(k, "\n", 1);
        } else if (c < 0x20 || c == 0x7f) {
            if (mode == GLOW_ESC_JSON) {
                /* Lossless for JSON readers (the profile reader gets the name back). */
                char u[8];
                snprintf(u, sizeof u, "\\u%04x", c);
                put(k, u, 6);
            } else {
                put_hex(k, c, mode);
            }
        } else if ((c == '"' || c == '\\') && (mode == GLOW_ESC_JSON || mode == GLOW_ESC_QUOTED)) {
            char e[2] = { '\\', (char)c };
            put(k, e, 2);
        } else if (mode == GLOW_ESC_XML && strchr("<>&\"'", c)) {
            const char *e = c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;"
                          : c == '"' ? "&quot;" : "&#39;";
            put(k, e, strlen(e));
        } else if (mode == GLOW_ESC_COMMENT &&
                   ((c == '*' && *p == '/') || (c == '/' && *p == '*'))) {
            /* Neither "*" "/" (ends the comment) nor "/" "*" (-Wcomment) may appear. */
            put(k, (const char *)&c, 1);
            put(k, " ", 1);
        } else if (mode == GLOW_ESC_COMMENT && c == '?' && *p == '?') {
            put(k, "? ", 2);   /* no trigraphs in comments either (??/ splices lines) */
        } else {
            put(k, (const char *)&c, 1);
        }
    }
    return (size_t)((const char *)p - s);
}

size_t glow_escape(char *out, size_t size, const char *s, glow_esc_mode mode, unsigned flags,
                   size_t max_chars)
{
    sink k = { .buf = out, .size = size };
    if (!s)
        s = "(null)";
    escape_into(&k, s, mode, flags, max_chars);
    if (size)
        out[k.stored] = '\0';
    return k.len;
}

void glow_escape_put(FILE *out, const char *s, glow_esc_mode mode)
{
    sink k = { .f = out };
    escape_into(&k, s ? s : "(null)", mode, 0, 0);
}

/* A ring of per-thread buffers, so one message can quote several names:
 * glow_fail(d, ..., "'%s' feeds '%s'", glow_esc(a), glow_esc(b)). */
#define ESC_RING 8
#define ESC_MAX_CHARS 160

const char *glow_esc(const char *s)
{
    static _Thread_local char ring[ESC_RING][ESC_MAX_CHARS * 4 + 8];
    static _Thread_local unsigned next;
    char *b = ring[next++ % ESC_RING];
    glow_escape(b, sizeof ring[0], s, GLOW_ESC_PLAIN, 0, ESC_MAX_CHARS);
    return b;
}

bool glow_text_is_safe(const char *s, size_t len, bool allow_newline)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + len;
    while (p < end) {
        if (*p >= 0x80) {
            /* glow_utf8_len reads up to 4 bytes; only trust it when they are all inside s. */
            unsigned char tmp[5] = { 0 };
            size_t avail = (size_t)(end - p) < 4 ? (size_t)(end - p) : 4;
            memcpy(tmp, p, avail);
            size_t n = glow_utf8_len((const char *)tmp);
            if (!n)
                return false;
            p += n;
            continue;
        }
        if ((*p < 0x20 && !(*p == '\n' && allow_newline)) || *p == 0x7f)
            return false;
        p++;
    }
    return true;
}
