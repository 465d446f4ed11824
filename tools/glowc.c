// glowc.c - The glowc command line: info, dump (and later run, bench, compile).
#include <stdio.h>

int main(void)
{
    fprintf(stderr, "glowc: not built yet\n");
    return 1;
}
