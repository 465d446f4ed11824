// cache.c - The compiled-code cache (--cache DIR): the object files of a program's parts, kept
// on disk under a key of everything the machine code depends on, so that compiling the same
// program again is a load of its objects instead of LLVM's optimizer and code generator.
//
// The key is taken from the generated module itself (its bitcode, written for the parts
// anyway) with the target triple, CPU, features, the number of parts, LLVM's version and
// CACHE_FORMAT. The module is a function of the model, the options, glowc's kernels and its
// code generator, so whatever changes the code changes the key; what is left out is how LLVM
// turns a module into objects (target.c's O2 pipeline, the JIT code model), which
// CACHE_FORMAT stands for: bump it when that changes.
//
// An entry is one file DIR/<key>.jit:
//   "GLOWCJIT" | u32 format | u32 nparts | u64 size[nparts] | objects | u64 check
// where check hashes everything before it. A file that is short, of another format or fails
// its check is a miss (and is replaced). Entries are written atomically (glow_write_file), so
// a reader never sees half an entry, also with several compiles at once.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm/Config/llvm-config.h>

#include "backend/cpu/cpu_llvm.h"

#define CACHE_MAGIC "GLOWCJIT"
#define CACHE_FORMAT 5u   /* 2: O2 instead of O3; 3: one InstCombine sweep (target.c); 4: small
                             * operations compiled for size (schedule.c); 5: loop counts passed
                             * at run time (cpu_arg.varies) */

void cpu_cache_key(const void *bitcode, size_t size, const char *triple, const char *cpu,
                   const char *features, int nparts, char key[CPU_CACHE_KEY_LEN + 1])
{
    glow_hash h;
    glow_hash_init(&h, 0);
    char fixed[64];
    snprintf(fixed, sizeof fixed, "%s/%u/%d", LLVM_VERSION_STRING, CACHE_FORMAT, nparts);
    const char *parts[] = { fixed, cpu_pipeline(), triple, cpu, features };
    for (int i = 0; i < 5; i++)
        glow_hash_update(&h, parts[i] ? parts[i] : "", parts[i] ? strlen(parts[i]) + 1 : 1);
    glow_hash_update(&h, bitcode, size);
    uint64_t out[2];
    glow_hash_final(&h, out);
    snprintf(key, CPU_CACHE_KEY_LEN + 1, "%016llx%016llx", (unsigned long long)out[0],
             (unsigned long long)out[1]);
}

static char *entry_path(const char *dir, const char *key)
{
    size_t n = strlen(dir) + strlen(key) + 8;
    char *path = glow_xcalloc(n, 1);
    snprintf(path, n, "%s/%s.jit", dir, key);
    return path;
}

/* --- load --- */

static uint64_t check_of(const unsigned char *data, size_t n)
{
    return glow_hash64(data, n, 0xbe5466cf34e90c6cull);
}

/* The objects of a well-formed entry, or false (nothing kept). */
static bool parse_entry(const unsigned char *data, size_t size, LLVMMemoryBufferRef *objs,
                        int *nobj)
{
    size_t head = 8 + 4 + 4;
    if (size < head + 8 || memcmp(data, CACHE_MAGIC, 8))
        return false;
    uint32_t format, nparts;
    memcpy(&format, data + 8, 4);
    memcpy(&nparts, data + 12, 4);
    if (format != CACHE_FORMAT || nparts == 0 || nparts > CPU_MAX_PARTS ||
        size < head + 8 * (size_t)nparts + 8)
        return false;
    uint64_t check;
    memcpy(&check, data + size - 8, 8);
    if (check != check_of(data, size - 8))
        return false;
    size_t at = head + 8 * (size_t)nparts, end = size - 8;
    uint64_t sizes[CPU_MAX_PARTS];
    for (uint32_t p = 0; p < nparts; p++) {
        memcpy(&sizes[p], data + head + 8 * p, 8);
        if (sizes[p] == 0 || sizes[p] > end - at)
            return false;
        at += sizes[p];
    }
    if (at != end)
        return false;
    at = head + 8 * (size_t)nparts;
    for (uint32_t p = 0; p < nparts; p++) {
        objs[p] = LLVMCreateMemoryBufferWithMemoryRangeCopy((const char *)data + at,
                                                            (size_t)sizes[p], "cached.o");
        at += sizes[p];
    }
    *nobj = (int)nparts;
    return true;
}

bool cpu_cache_load(const char *dir, const char *key, LLVMMemoryBufferRef *objs, int *nobj)
{
    char *path = entry_path(dir, key);
    uint8_t *data = NULL;
    size_t size = 0;
    glow_diag d = { 0 };
    bool hit = glow_read_file(path, &data, &size, &d) == GLOW_OK &&
               parse_entry(data, size, objs, nobj);
    free(data);
    free(path);
    return hit;
}

/* --- store --- */

bool cpu_cache_store(const char *dir, const char *key, LLVMMemoryBufferRef *objs, int nobj)
{
    if (nobj <= 0 || nobj > CPU_MAX_PARTS || !glow_make_dirs(dir))
        return false;
    size_t total = 16 + 8 * (size_t)nobj;
    for (int p = 0; p < nobj; p++)
        total += LLVMGetBufferSize(objs[p]);
    unsigned char *data = malloc(total + 8);
    if (!data)
        return false;
    uint32_t format = CACHE_FORMAT, nparts = (uint32_t)nobj;
    memcpy(data, CACHE_MAGIC, 8);
    memcpy(data + 8, &format, 4);
    memcpy(data + 12, &nparts, 4);
    size_t at = 16 + 8 * (size_t)nobj;
    for (int p = 0; p < nobj; p++) {
        uint64_t n = LLVMGetBufferSize(objs[p]);
        memcpy(data + 16 + 8 * (size_t)p, &n, 8);
        memcpy(data + at, LLVMGetBufferStart(objs[p]), (size_t)n);
        at += (size_t)n;
    }
    uint64_t check = check_of(data, total);
    memcpy(data + total, &check, 8);

    char *path = entry_path(dir, key);
    glow_diag d = { 0 };
    bool ok = glow_write_file(path, data, total + 8, &d) == GLOW_OK;
    free(path);
    free(data);
    return ok;
}
