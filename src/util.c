#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>

#include "internal.h"

void *convsel_alloc(size_t bytes)
{
    void *ptr = NULL;
    if (bytes == 0)
        bytes = 64;
    if (posix_memalign(&ptr, 64, (bytes + 63) / 64 * 64) != 0)
        return NULL;
    return ptr;
}

void convsel_free(void *ptr)
{
    free(ptr);
}

void *convsel_grow(void *array, size_t count, size_t *cap, size_t first, size_t elem_size)
{
    if (count < *cap)
        return array;
    size_t want = *cap ? 2 * *cap : (first ? first : 1);
    if (want <= count)
        want = count + 1;
    if (elem_size && want > SIZE_MAX / elem_size)
        return NULL;
    void *grown = realloc(array, want * elem_size);
    if (grown)
        *cap = want;
    return grown;
}

int convsel_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* splitmix64: tiny, fast, and the same stream on every platform, so a seed
 * names the same test problem everywhere. */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void convsel_fill_random(float *buf, size_t n, uint64_t seed)
{
    uint64_t state = seed;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = splitmix64(&state) >> 40; /* 24 random bits */
        buf[i] = (float)((double)r / (double)(1u << 23) - 1.0);
    }
}

double convsel_rel_error(const float *y, const float *y_ref, size_t n)
{
    double max_diff = 0.0, max_ref = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)y[i] - (double)y_ref[i]);
        if (!(d <= max_diff)) /* also catches NaN */
            max_diff = isnan(d) ? INFINITY : d;
        if (fabs((double)y_ref[i]) > max_ref)
            max_ref = fabs((double)y_ref[i]);
    }
    if (max_ref == 0.0)
        return max_diff == 0.0 ? 0.0 : INFINITY;
    return max_diff / max_ref;
}

double convsel_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void convsel_threads_set(int threads)
{
    if (threads < 1)
        threads = 1;
    if (omp_get_max_threads() != threads)
        omp_set_num_threads(threads);
    openblas_set_num_threads(threads);
}

/* Declared in internal.h. */
size_t convsel_memory_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    unsigned long long kib = 0;
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f))
        found = sscanf(line, "MemAvailable: %llu kB", &kib) == 1;
    if (f)
        fclose(f);
    if (found)
        return (size_t)kib * 1024;
    long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (size_t)pages * (size_t)page : 0;
}

/* Declared in internal.h. */
size_t convsel_resident_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long size = 0, resident = 0;
    int ok = f && fscanf(f, "%llu %llu", &size, &resident) == 2;
    if (f)
        fclose(f);
    long page = sysconf(_SC_PAGESIZE);
    return ok && page > 0 ? (size_t)resident * (size_t)page : 0;
}

/* Declared in internal.h. */
double convsel_env_double(const char *name, double min, double fallback)
{
    const char *env = getenv(name);
    if (!env || !*env)
        return fallback;
    char *end;
    errno = 0;
    double v = strtod(env, &end);
    return errno == 0 && *end == '\0' && isfinite(v) && v >= min ? v : fallback;
}
