// backend.c - The table of backends the compile pipeline can target, looked up by name.
#include <string.h>

#include "backend/backend.h"

static const glow_backend *const backends[] = {
    &glow_interpreter_backend,
    &glow_cpu_backend,
};

const glow_backend *glow_backend_find(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++)
        if (strcmp(backends[i]->name, name) == 0)
            return backends[i];
    return NULL;
}

const char *glow_backend_names(void)
{
    /* One fixed string: the table is small and known at compile time. */
    return "interpreter, cpu";
}
