// sysmem.c - How much memory this machine has, and sizes such as "512M" read from the user:
// the default and the syntax of --max-memory (a compiled model must fit, checked at compile
// time from its memory plan, before its regions are allocated).
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/support.h"

uint64_t glow_machine_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && page > 0)
        return (uint64_t)pages * (uint64_t)page;
    /* Without sysconf's figure, /proc/meminfo's first line: "MemTotal: 16314060 kB". */
    FILE *f = fopen("/proc/meminfo", "r");
    unsigned long long kb = 0;
    if (f) {
        if (fscanf(f, "MemTotal: %llu kB", &kb) != 1)
            kb = 0;
        fclose(f);
    }
    return (uint64_t)kb * 1024;
}

bool glow_parse_size(const char *s, uint64_t *out)
{
    if (!s || !isdigit((unsigned char)*s))
        return false;
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 10);
    /* Binary multiples, as free(1) and ulimit count: 1K = 1024 bytes. "KiB", "KB", "K" and
     * "k" all mean the same; a bare number is bytes. */
    static const char units[] = "kmgt";
    int shift = 0;
    if (*end) {
        const char *u = strchr(units, tolower((unsigned char)*end));
        if (!u)
            return false;
        shift = 10 * (int)(u - units + 1);
        end++;
        if (*end == 'i')
            end++;
        if (*end == 'B' || *end == 'b')
            end++;
    }
    if (*end || v == 0 || (shift && v > (UINT64_MAX >> shift)))
        return false;
    *out = (uint64_t)v << shift;
    return true;
}

bool glow_process_rss(uint64_t *anon, uint64_t *file)
{
    /* RssAnon: heap and anonymous mappings; RssFile: pages of mapped files (libraries,
     * mapped models). Both in kB in /proc/self/status. */
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return false;
    char line[256];
    int found = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long long kb;
        if (sscanf(line, "RssAnon: %llu", &kb) == 1) {
            *anon = (uint64_t)kb * 1024;
            found++;
        } else if (sscanf(line, "RssFile: %llu", &kb) == 1) {
            *file = (uint64_t)kb * 1024;
            found++;
        }
    }
    fclose(f);
    return found == 2;
}
