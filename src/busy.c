/* What else the machine did while convsel measured: other processes' CPU
 * time and the hypervisor's steal, from /proc/stat and getrusage. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "internal.h"

int convsel_proc_stat_parse(const char *text, double *busy_ticks, double *steal_ticks)
{
    if (!text || !busy_ticks || !steal_ticks || strncmp(text, "cpu ", 4) != 0)
        return -1;
    unsigned long long v[8] = {0};
    int n = sscanf(text + 4, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                   &v[6], &v[7]);
    if (n < 4) /* user nice system idle, at the least */
        return -1;
    *busy_ticks = (double)v[0] + (double)v[1] + (double)v[2] + (double)v[5] + (double)v[6];
    *steal_ticks = n >= 8 ? (double)v[7] : 0.0;
    return 0;
}

void convsel_busy_mark_now(convsel_busy_mark *mark)
{
    if (!mark)
        return;
    mark->wall_s = convsel_now();
    mark->busy_s = mark->steal_s = -1.0;
    struct rusage ru;
    mark->self_s = getrusage(RUSAGE_SELF, &ru) == 0
                       ? (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
                             (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec
                       : 0.0;
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return;
    char line[512];
    double busy, steal;
    const long hz = sysconf(_SC_CLK_TCK);
    if (fgets(line, sizeof line, f) && hz > 0 && convsel_proc_stat_parse(line, &busy, &steal) == 0) {
        mark->busy_s = busy / (double)hz;
        mark->steal_s = steal / (double)hz;
    }
    fclose(f);
}

int convsel_busy_between(const convsel_busy_mark *a, const convsel_busy_mark *b, double *others_cpus,
                         double *steal_cpus)
{
    double others = -1.0, steal = -1.0;
    int rc = -1;
    if (a && b && a->busy_s >= 0 && b->busy_s >= 0 && b->wall_s > a->wall_s) {
        const double wall = b->wall_s - a->wall_s;
        /* The kernel counts in ticks and this process in microseconds:
         * what the others used can come out a little below 0. */
        others = (b->busy_s - a->busy_s - (b->self_s - a->self_s)) / wall;
        others = others > 0 ? others : 0.0;
        steal = (b->steal_s - a->steal_s) / wall;
        steal = steal > 0 ? steal : 0.0;
        rc = 0;
    }
    if (others_cpus)
        *others_cpus = others;
    if (steal_cpus)
        *steal_cpus = steal;
    return rc;
}
