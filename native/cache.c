#include "cache.h"

#include <stdio.h>
#include <unistd.h>

#include "kernel.h"
#include "options.h"

/* The largest cache cpu0 reports in sysfs ("32768K"), or 0. Read first:
 * glibc's sysconf answers from CPUID, which in a VM can name the host's
 * whole L3 (384 MiB here, where the guest's is 32 MiB). */
static size_t sysfs_llc_bytes(void)
{
    size_t largest = 0;
    for (int i = 0; i < 8; i++) {
        char path[96];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        unsigned long long n = 0;
        char unit = 0;
        if (fscanf(f, "%llu%c", &n, &unit) >= 1) {
            size_t bytes = (size_t)n * (unit == 'K' ? 1024 : unit == 'M' ? 1024 * 1024 : 1);
            largest = bytes > largest ? bytes : largest;
        }
        fclose(f);
    }
    return largest;
}

size_t cache_llc_bytes(void)
{
    static size_t known;
    if (known)
        return known;
    long bytes = (long)sysfs_llc_bytes();
#ifdef _SC_LEVEL3_CACHE_SIZE
    if (bytes <= 0)
        bytes = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
#ifdef _SC_LEVEL2_CACHE_SIZE
    if (bytes <= 0)
        bytes = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
    known = bytes > 0 ? (size_t)bytes : CACHE_LLC_DEFAULT;
    return known;
}

size_t cache_sets(const struct kcase *c, size_t set_bytes)
{
    if (!c->cfg->cold_cache || !c->cfg->kernel->cold_cache || set_bytes == 0)
        return 1;
    size_t goal = 2 * cache_llc_bytes();
    if (set_bytes >= goal)
        return 1;
    size_t sets = (goal + set_bytes - 1) / set_bytes;
    return sets < 2 ? 2 : sets;
}
