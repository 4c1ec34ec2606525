/*
 * What a disturbance does to the weights prices convsel_conv_probe's samples
 * give, probe variant by variant: P passes over the primitives of T timings
 * each (end-to-end runs and repetitions alone), each primitive keeping the
 * pass its layers took least time in; 1x5 is the probe before the
 * fifty-fifth session.
 * Each repetition probes NETWORK at T threads with every variant (which
 * first rotates), quiet and then disturbed: T processes spinning for S
 * seconds, started D seconds into the probe, each writing over M MB again
 * and again (0: arithmetic only). A primitive's price is what
 * convsel_model_calibrate_network fits from the samples: summed excess over
 * summed plain weights MB plus 1, clamped to [0, 1] ms/MB. Prints each
 * probe's prices and wall time, then per variant each primitive's median and
 * largest price quiet and disturbed, and the largest distance of a disturbed
 * price from the quiet median of the same variant.
 * With --cold C, each repetition first prices cold reads on NETWORK, quiet,
 * as calibrate does (convsel_cold_probe, C seconds; calibrate gives 0.4),
 * and every price is also shown over the cold-read price times the weights
 * the primitive keeps over the plain ones (convsel_conv_sample.weights_bytes):
 * what a price would be if it were the weights read from memory and nothing
 * else. Each variant then says each primitive's largest ratio, quiet and
 * disturbed, and how many prices a bound at BOUND times would have lowered
 * (the fifty-sixth session's bound, measured and not built:
 * docs/transfer.md).
 *
 *   bench_conv_probe NETWORK [--threads T] [--reps R] [--time S]
 *                    [--variants PxT,...] [--disturb S] [--disturb-at D]
 *                    [--disturb-mb M] [--cold C]
 * Defaults: T 2, R 3, S (--time) 1.0 as calibrate gives a network, variants
 * 1x5,2x3, --disturb 3, --disturb-at 0, --disturb-mb 0, --cold 0 (no bound).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "convsel.h"
#include "internal.h"
#include "../learner/model.h" /* convsel_price_per_mb, as calibrate prices */

#define MAX_PRIMS 64
#define MAX_REPS 32
#define MAX_VARIANTS 4
/* The bound the fifty-sixth session tried on a price, in cold reads of the
 * weights kept. */
#define BOUND 2.0

/* n processes that sleep `at` seconds, then spin for `for_s`, writing over
 * mb MB each if mb > 0; their pids into pids. */
static int disturb(int n, double at, double for_s, size_t mb, pid_t *pids)
{
    fflush(stdout);
    for (int k = 0; k < n; k++) {
        pids[k] = fork();
        if (pids[k] < 0)
            return -1;
        if (pids[k] == 0) {
            const double t0 = convsel_now();
            while (convsel_now() - t0 < at) {
                struct timespec ts = {0, 10000000};
                nanosleep(&ts, NULL);
            }
            unsigned char *buf = mb ? malloc(mb << 20) : NULL;
            volatile double x = 1.0;
            for (unsigned char v = 0; convsel_now() - t0 < at + for_s; v++) {
                if (buf)
                    memset(buf, v, mb << 20);
                else
                    x = x * 1.0000001 + 1e-9;
            }
            _exit(0);
        }
    }
    return 0;
}

static void stop(int n, const pid_t *pids)
{
    for (int k = 0; k < n; k++) {
        kill(pids[k], SIGKILL);
        waitpid(pids[k], NULL, 0);
    }
}

static double median(double *x, int n)
{
    qsort(x, (size_t)n, sizeof *x, convsel_cmp_double);
    return convsel_quantile(x, n, 0.5);
}

/* Cold reads priced as convsel_model_calibrate_cold does: summed excess
 * over summed MB read, clamped to [0, 1] ms/MB; -1 on failure. */
static double cold_price(const convsel_network *net, int threads, const unsigned char *allowed, double time_s)
{
    convsel_cold_sample *s = NULL;
    size_t n = 0;
    if (convsel_cold_probe(net, threads, allowed, time_s, 1, &s, &n) != CONVSEL_OK || n == 0) {
        fprintf(stderr, "bench_conv_probe: cold reads: %s\n", n ? convsel_last_error() : "no samples");
        free(s);
        return -1.0;
    }
    double excess = 0, mb = 0;
    for (size_t i = 0; i < n; i++) {
        excess += s[i].excess_ms;
        mb += (double)convsel_layout_elems(s[i].layout, s[i].mb, s[i].c, s[i].h, s[i].w) * sizeof(float) / 1e6;
    }
    free(s);
    return convsel_price_per_mb(excess, mb, 0.0, 1.0);
}

/* One probe's price per primitive (NAN where it has no sample) into price,
 * and its weights kept over its plain weights into kept. */
static int probe(const convsel_network *net, int threads, const unsigned char *allowed, double time_s, int passes,
                 int timings, double *price, double *kept, double *wall_s)
{
    convsel_conv_sample *s = NULL;
    size_t n = 0;
    const double t0 = convsel_now();
    if (convsel_conv_probe_passes(net, threads, allowed, time_s, passes, timings, 1, &s, &n) != CONVSEL_OK) {
        fprintf(stderr, "bench_conv_probe: %s\n", convsel_last_error());
        free(s);
        return -1;
    }
    *wall_s = convsel_now() - t0;
    double excess[MAX_PRIMS] = {0}, mb[MAX_PRIMS] = {0}, kept_mb[MAX_PRIMS] = {0};
    int count[MAX_PRIMS] = {0};
    for (size_t i = 0; i < n; i++) {
        const double plain = (double)convsel_problem_weights_elems(&s[i].problem) * sizeof(float) / 1e6;
        excess[s[i].primitive] += s[i].network_ms - s[i].alone_ms;
        mb[s[i].primitive] += plain;
        kept_mb[s[i].primitive] += s[i].weights_bytes ? (double)s[i].weights_bytes / 1e6 : plain;
        count[s[i].primitive]++;
    }
    for (size_t p = 0; p < convsel_primitive_count(); p++) {
        price[p] = count[p] ? convsel_price_per_mb(excess[p], mb[p], 1.0, 1.0) : NAN;
        kept[p] = count[p] ? kept_mb[p] / mb[p] : NAN;
    }
    free(s);
    return 0;
}

int main(int argc, char **argv)
{
    const char *path = NULL, *variants = "1x5,2x3";
    int threads = 2, reps = 3;
    double time_s = 1.0, disturb_s = 3.0, disturb_at = 0.0, cold_s = 0.0;
    long disturb_mb = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--threads") && v)
            threads = atoi(argv[++i]);
        else if (!strcmp(a, "--reps") && v)
            reps = atoi(argv[++i]);
        else if (!strcmp(a, "--time") && v)
            time_s = atof(argv[++i]);
        else if (!strcmp(a, "--variants") && v)
            variants = argv[++i];
        else if (!strcmp(a, "--disturb") && v)
            disturb_s = atof(argv[++i]);
        else if (!strcmp(a, "--disturb-at") && v)
            disturb_at = atof(argv[++i]);
        else if (!strcmp(a, "--disturb-mb") && v)
            disturb_mb = atol(argv[++i]);
        else if (!strcmp(a, "--cold") && v)
            cold_s = atof(argv[++i]);
        else if (a[0] != '-' && !path)
            path = a;
        else {
            fprintf(stderr, "usage: bench_conv_probe NETWORK [--threads T] [--reps R] [--time S] [--variants PxT,...] "
                            "[--disturb S] [--disturb-at D] [--disturb-mb M] [--cold C]\n");
            return 2;
        }
    }
    int passes[MAX_VARIANTS], timings[MAX_VARIANTS], nv = 0;
    for (const char *c = variants; *c && nv < MAX_VARIANTS;) {
        int used = 0;
        if (sscanf(c, "%dx%d%n", &passes[nv], &timings[nv], &used) != 2 || passes[nv] < 1 || passes[nv] > 16 ||
            timings[nv] < 1 || timings[nv] > 50) {
            fprintf(stderr, "bench_conv_probe: --variants: '%s' is not PxT (passes 1..16, timings 1..50)\n", c);
            return 2;
        }
        nv++;
        c += used;
        c += *c == ',';
    }
    if (!path || threads < 1 || threads > 64 || reps < 1 || reps > MAX_REPS || !(time_s > 0) || disturb_s < 0 ||
        disturb_at < 0 || disturb_mb < 0 || disturb_mb > 4096 || nv == 0 || !(cold_s >= 0) || cold_s > 60) {
        fprintf(stderr, "bench_conv_probe: a network file and T in 1..64, R in 1..%d, S > 0, D >= 0, M in 0..4096, "
                        "C in 0..60, 1 to %d variants\n", MAX_REPS, MAX_VARIANTS);
        return 2;
    }
    const size_t np = convsel_primitive_count();
    if (np > MAX_PRIMS) {
        fprintf(stderr, "bench_conv_probe: more than %d primitives\n", MAX_PRIMS);
        return 1;
    }
    convsel_network *net = NULL;
    if (convsel_network_load(path, 1, &net) != CONVSEL_OK) {
        fprintf(stderr, "bench_conv_probe: %s\n", convsel_last_error());
        return 1;
    }
    convsel_threads_set(threads);
    unsigned char allowed[MAX_PRIMS] = {0};
    for (size_t p = 0; p < np; p++)
        allowed[p] = !convsel_primitive_is_reference(p);

    /* price[variant][disturbed][rep][primitive]; ratio: the price over cold
     * x kept / plain (0 without --cold) */
    static double price[MAX_VARIANTS][2][MAX_REPS][MAX_PRIMS], ratio[MAX_VARIANTS][2][MAX_REPS][MAX_PRIMS];
    static double wall[MAX_VARIANTS][2][MAX_REPS];
    double cold[MAX_REPS] = {0};
    pid_t pids[64];
    printf("# %s, %d threads, %.2f s a probe, disturbed: %d spinning processes for %.1f s from %.1f s in, "
           "each writing over %ld MB\n", convsel_network_name(net), threads, time_s, threads, disturb_s, disturb_at,
           disturb_mb);
    if (cold_s > 0)
        printf("# with --cold %.2f: each rep prices cold reads first (quiet); each price is followed by /RATIO, "
               "measured over cold x kept / plain weights, '*' where over %.1f\n", cold_s, BOUND);
    printf("rep variant disturbed wall_s");
    for (size_t p = 0; p < np; p++)
        if (allowed[p])
            printf(" %s", convsel_primitive_name(p));
    printf("\n");
    for (int r = 0; r < reps; r++) {
        if (cold_s > 0) {
            if ((cold[r] = cold_price(net, threads, allowed, cold_s)) < 0)
                return 1;
            printf("%d cold %.4f ms/MB\n", r + 1, cold[r]);
        }
        for (int k = 0; k < nv; k++) {
            const int v = (k + r) % nv;
            for (int d = 0; d < 2; d++) {
                if (d && disturb(threads, disturb_at, disturb_s, (size_t)disturb_mb, pids) != 0) {
                    fprintf(stderr, "bench_conv_probe: fork failed\n");
                    return 1;
                }
                double kept[MAX_PRIMS];
                int rc = probe(net, threads, allowed, time_s, passes[v], timings[v], price[v][d][r], kept,
                               &wall[v][d][r]);
                if (d)
                    stop(threads, pids);
                if (rc != 0)
                    return 1;
                printf("%d %dx%d %d %.2f", r + 1, passes[v], timings[v], d, wall[v][d][r]);
                for (size_t p = 0; p < np; p++) {
                    if (!allowed[p])
                        continue;
                    printf(" %.3f", price[v][d][r][p]);
                    if (cold[r] > 0 && !isnan(price[v][d][r][p])) {
                        ratio[v][d][r][p] = price[v][d][r][p] / (cold[r] * kept[p]);
                        printf("/%.2f%s", ratio[v][d][r][p], ratio[v][d][r][p] > BOUND ? "*" : "");
                    }
                }
                printf("\n");
            }
        }
    }

    for (int v = 0; v < nv; v++) {
        printf("\n## %dx%d: per primitive, ms/MB over %d probes each: median and largest quiet, median and largest "
               "disturbed, largest distance of a disturbed one from the quiet median\n", passes[v], timings[v], reps);
        double worst = 0;
        for (size_t p = 0; p < np; p++) {
            if (!allowed[p] || isnan(price[v][0][0][p]))
                continue;
            double x[MAX_REPS], quiet_median = 0;
            printf("%-18s", convsel_primitive_name(p));
            for (int d = 0; d < 2; d++) {
                double hi = 0, far = 0;
                for (int r = 0; r < reps; r++) {
                    x[r] = price[v][d][r][p];
                    hi = fmax(hi, x[r]);
                    far = fmax(far, fabs(x[r] - quiet_median));
                }
                double m = median(x, reps);
                if (!d)
                    quiet_median = m;
                else
                    worst = fmax(worst, far);
                printf(" %7.3f %7.3f", m, hi);
                if (d)
                    printf("  off %7.3f", far);
            }
            printf("\n");
        }
        printf("%dx%d: largest distance of a disturbed price from the quiet median %.3f ms/MB; median wall time of "
               "a probe %.2f s quiet, %.2f s disturbed\n", passes[v], timings[v], worst, median(wall[v][0], reps),
               median(wall[v][1], reps));
        if (cold_s > 0) {
            int over[2] = {0, 0}, priced[2] = {0, 0};
            printf("%dx%d: largest price over cold x kept / plain, quiet and disturbed:", passes[v], timings[v]);
            for (size_t p = 0; p < np; p++) {
                if (!allowed[p] || isnan(price[v][0][0][p]))
                    continue;
                double hi[2] = {0, 0};
                for (int d = 0; d < 2; d++)
                    for (int r = 0; r < reps; r++) {
                        hi[d] = fmax(hi[d], ratio[v][d][r][p]);
                        over[d] += ratio[v][d][r][p] > BOUND;
                        priced[d]++;
                    }
                printf(" %s %.2f %.2f;", convsel_primitive_name(p), hi[0], hi[1]);
            }
            printf("\n%dx%d: prices over %.1f times: %d of %d quiet, %d of %d disturbed\n", passes[v], timings[v],
                   BOUND, over[0], priced[0], over[1], priced[1]);
        }
    }
    convsel_network_destroy(net);
    return 0;
}
