/*
 * How repeatable are the profiler's numbers? Profiles the same sampled
 * configurations twice in one process and compares the passes, per primitive:
 * the Spearman rank correlation of the times across configurations and the
 * median |relative difference| of a configuration's time between passes, for
 * min, p10 and median as the statistic. Targets: Spearman >= 0.99, median
 * difference <= 3%. Also, per configuration: how often both passes pick the
 * same fastest primitive, the rank correlation of its primitives between the
 * passes, and what pass 1's pick costs by pass 2's clock — the ceiling the
 * measurements put on a model's per-configuration metrics.
 *
 *   bench_repeatability [--configs N] [--seed S] [--threads T] [--max-time-s S]
 *                       [--nets DIR|FILE] [--out FILE.md]
 * Run from the repository root; writes bench/results/repeatability.md.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "convsel.h"

enum { STAT_MIN, STAT_P10, STAT_MEDIAN, STAT_COUNT };
static const char *const stat_names[STAT_COUNT] = {"min", "p10", "median"};

static double stat_of(const convsel_record *r, int s)
{
    return s == STAT_MIN ? r->min_ms : s == STAT_P10 ? r->p10_ms : r->median_ms;
}

/* What identifies a measurement across the two passes. */
static void record_key(const convsel_record *r, char *buf, size_t size)
{
    convsel_problem p = r->problem;
    char desc[512];
    p.name[0] = '\0';
    p.repeat = 1;
    convsel_problem_format(&p, desc, sizeof desc);
    snprintf(buf, size, "%s/t%d/%d/%d/%s/%d/%d", desc, r->threads, (int)r->kind, (int)r->tensor, r->primitive,
             (int)r->from, (int)r->to);
}

static void config_key(const convsel_record *r, char *buf, size_t size)
{
    convsel_record_config_key(r, buf, size);
}

/* Average ranks (ties share their mean rank). */
static void ranks(const double *x, size_t n, double *rank)
{
    size_t *idx = malloc(n * sizeof *idx);
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    for (size_t i = 1; i < n; i++) { /* insertion sort: n is small */
        size_t v = idx[i], j = i;
        while (j > 0 && x[idx[j - 1]] > x[v]) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = v;
    }
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && x[idx[j + 1]] == x[idx[i]])
            j++;
        for (size_t k = i; k <= j; k++)
            rank[idx[k]] = 0.5 * (double)(i + j) + 1.0;
        i = j + 1;
    }
    free(idx);
}

static double spearman(const double *a, const double *b, size_t n)
{
    if (n < 3)
        return NAN;
    double *ra = malloc(n * sizeof *ra), *rb = malloc(n * sizeof *rb);
    ranks(a, n, ra);
    ranks(b, n, rb);
    double ma = 0, mb = 0, sab = 0, saa = 0, sbb = 0;
    for (size_t i = 0; i < n; i++) {
        ma += ra[i];
        mb += rb[i];
    }
    ma /= (double)n;
    mb /= (double)n;
    for (size_t i = 0; i < n; i++) {
        sab += (ra[i] - ma) * (rb[i] - mb);
        saa += (ra[i] - ma) * (ra[i] - ma);
        sbb += (rb[i] - mb) * (rb[i] - mb);
    }
    free(ra);
    free(rb);
    return saa > 0 && sbb > 0 ? sab / sqrt(saa * sbb) : NAN;
}

/* A record the selection-stability table ranks: a convolution, onednn_auto
 * left out (it dispatches to the onednn_direct kernel, as convsel eval
 * treats it). */
static int ranked(const convsel_record *r)
{
    return r->kind == CONVSEL_RECORD_CONV && strcmp(r->primitive, "onednn_auto") != 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *x, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(x, n, sizeof *x, cmp_double);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

/* Symmetric relative difference: the two passes play the same role. */
static double rel_diff(double a, double b)
{
    return a + b > 0 ? fabs(a - b) / (0.5 * (a + b)) : 0.0;
}

struct pair {
    const convsel_record *a, *b;
};

static int profile_pass(const convsel_problem *configs, size_t n, int threads, double max_time_s, const char *path)
{
    convsel_profile_options opts;
    convsel_profile_options_default(&opts);
    opts.threads = &threads;
    opts.n_threads = 1;
    opts.timing.max_time_s = max_time_s;
    opts.mode = CONVSEL_WRITE_TRUNCATE;
    convsel_profile_result res;
    convsel_status st = convsel_profile_run(configs, n, &opts, path, &res);
    if (st != CONVSEL_OK) {
        fprintf(stderr, "bench_repeatability: %s\n", convsel_last_error());
        return 0;
    }
    fprintf(stderr, "  %zu configurations, %zu records, %zu failed\n", res.done, res.records, res.failed);
    return 1;
}

int main(int argc, char **argv)
{
    long n_configs = 60, seed = 1, threads = 1;
    double max_time_s = 1.0;
    const char *nets = NULL, *out_path = "bench/results/repeatability.md";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "usage: %s [--configs N] [--seed S] [--threads T] [--max-time-s S] [--nets DIR] "
                            "[--out FILE]\n", argv[0]);
            return 2;
        }
        if (strcmp(a, "--configs") == 0)
            n_configs = strtol(v, NULL, 10);
        else if (strcmp(a, "--seed") == 0)
            seed = strtol(v, NULL, 10);
        else if (strcmp(a, "--threads") == 0)
            threads = strtol(v, NULL, 10);
        else if (strcmp(a, "--max-time-s") == 0)
            max_time_s = strtod(v, NULL);
        else if (strcmp(a, "--nets") == 0)
            nets = v;
        else if (strcmp(a, "--out") == 0)
            out_path = v;
        else {
            fprintf(stderr, "%s: unknown option %s\n", argv[0], a);
            return 2;
        }
        i++;
    }
    if (n_configs < 1 || threads < 1) {
        fprintf(stderr, "%s: --configs and --threads must be >= 1\n", argv[0]);
        return 2;
    }
    if (!nets)
        nets = access("../shared/networks", F_OK) == 0 ? "../shared/networks" : "networks";

    /* The configurations: the sampler's, so they spread over the space. */
    convsel_sampler_options so;
    convsel_sampler_options_default(&so);
    so.seed = (uint64_t)seed;
    convsel_sampler *sampler;
    size_t n_bases = 0;
    convsel_problem *configs = calloc((size_t)n_configs, sizeof *configs);
    if (convsel_sampler_create(&so, &sampler) != CONVSEL_OK || !configs)
        return 1;
    if (convsel_sampler_add_file(sampler, nets, &n_bases) != CONVSEL_OK)
        fprintf(stderr, "bench_repeatability: no bases (%s); random configurations only\n", convsel_last_error());
    for (long i = 0; i < n_configs; i++)
        if (convsel_sampler_next(sampler, &configs[i]) != CONVSEL_OK)
            return 1;
    convsel_sampler_destroy(sampler);

    char path[2][512];
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    for (int p = 0; p < 2; p++) {
        snprintf(path[p], sizeof path[p], "%s/bench_repeatability_%ld_%d.msgpack", tmp, (long)getpid(), p);
        fprintf(stderr, "pass %d of 2: %ld configurations at %ld threads, --max-time-s %g\n", p + 1, n_configs,
                threads, max_time_s);
        if (!profile_pass(configs, (size_t)n_configs, (int)threads, max_time_s, path[p]))
            return 1;
    }
    convsel_dataset *ds[2];
    for (int p = 0; p < 2; p++) {
        if (convsel_dataset_load(path[p], &ds[p]) != CONVSEL_OK) {
            fprintf(stderr, "bench_repeatability: %s\n", convsel_last_error());
            return 1;
        }
        unlink(path[p]);
    }

    /* Pair the records of the two passes (both are small: a linear scan). */
    const size_t n0 = convsel_dataset_size(ds[0]), n1 = convsel_dataset_size(ds[1]);
    struct pair *pairs = calloc(n0 ? n0 : 1, sizeof *pairs);
    size_t n_pairs = 0;
    char ka[768], kb[768];
    for (size_t i = 0; i < n0; i++) {
        const convsel_record *a = convsel_dataset_record(ds[0], i);
        record_key(a, ka, sizeof ka);
        for (size_t j = 0; j < n1; j++) {
            const convsel_record *b = convsel_dataset_record(ds[1], j);
            record_key(b, kb, sizeof kb);
            if (strcmp(ka, kb) == 0) {
                pairs[n_pairs++] = (struct pair){a, b};
                break;
            }
        }
    }

    /* Groups: each primitive, plus "reorder" and everything pooled. */
    const char *groups[64];
    size_t n_groups = 0;
    for (size_t i = 0; i < n_pairs; i++) {
        size_t g = 0;
        while (g < n_groups && strcmp(groups[g], pairs[i].a->primitive) != 0)
            g++;
        if (g == n_groups && n_groups < 63)
            groups[n_groups++] = pairs[i].a->primitive;
    }
    groups[n_groups++] = "(all)";

    convsel_fingerprint fp;
    convsel_fingerprint_get(&fp);
    FILE *out = fopen(out_path, "w");
    if (!out) {
        perror(out_path);
        return 1;
    }
    fprintf(out, "# Profiler repeatability\n\n");
    fprintf(out, "The same %ld sampled configurations (seed %ld, %zu base layers from `%s`) profiled twice in one "
                 "process by `convsel_profile_run`, %ld thread(s), `--max-time-s %g`, on %s %s (%s, %d cores, "
                 "ISA %s). %zu measurements paired (convolutions and reorders).\n\n",
            n_configs, seed, n_bases, nets, threads, max_time_s, fp.vendor, fp.model_name, fp.microarch, fp.cores,
            convsel_isa_name(fp.isa_cap), n_pairs);
    fprintf(out, "Spearman: rank correlation of a primitive's times over the configurations, pass 1 vs pass 2 "
                 "(target >= 0.99). |diff|: median over configurations of |t1 - t2| / mean(t1, t2) (target <= "
                 "3%%).\n\n");
    fprintf(out, "| primitive | n | Spearman min | Spearman p10 | Spearman median | \\|diff\\| min | \\|diff\\| p10 | "
                 "\\|diff\\| median |\n|---|---|---|---|---|---|---|---|\n");
    printf("%-18s %5s %9s %9s %9s %8s %8s %8s\n", "primitive", "n", "rho_min", "rho_p10", "rho_med", "d_min",
           "d_p10", "d_med");
    double *xa = malloc((n_pairs ? n_pairs : 1) * sizeof *xa), *xb = malloc((n_pairs ? n_pairs : 1) * sizeof *xb);
    double *d = malloc((n_pairs ? n_pairs : 1) * sizeof *d);
    int all_ok = 1;
    for (size_t g = 0; g < n_groups; g++) {
        double rho[STAT_COUNT], diff[STAT_COUNT];
        size_t n = 0;
        for (int s = 0; s < STAT_COUNT; s++) {
            n = 0;
            for (size_t i = 0; i < n_pairs; i++) {
                if (strcmp(groups[g], "(all)") != 0 && strcmp(groups[g], pairs[i].a->primitive) != 0)
                    continue;
                xa[n] = stat_of(pairs[i].a, s);
                xb[n] = stat_of(pairs[i].b, s);
                d[n] = rel_diff(xa[n], xb[n]);
                n++;
            }
            rho[s] = spearman(xa, xb, n);
            diff[s] = median(d, n);
        }
        if (strcmp(groups[g], "(all)") == 0)
            all_ok = rho[STAT_MIN] >= 0.99 && diff[STAT_MIN] <= 0.03;
        fprintf(out, "| %s | %zu | %.4f | %.4f | %.4f | %.2f%% | %.2f%% | %.2f%% |\n", groups[g], n, rho[0], rho[1],
                rho[2], 100 * diff[0], 100 * diff[1], 100 * diff[2]);
        printf("%-18s %5zu %9.4f %9.4f %9.4f %7.2f%% %7.2f%% %7.2f%%\n", groups[g], n, rho[0], rho[1], rho[2],
               100 * diff[0], 100 * diff[1], 100 * diff[2]);
    }

    /* Selection stability: per configuration, its convolution primitives
     * (onednn_auto left out, as convsel eval does: it dispatches to the
     * onednn_direct kernel, and a flip between the two is no disagreement)
     * ranked by each pass — the ceiling the measurements put on a model's
     * per-configuration metrics: pass 1 as a perfect "model" of pass 2. */
    fprintf(out, "\nSelection stability: per configuration (onednn_auto left out, as in `convsel eval`), pass 1 "
                 "taken as a perfect model of pass 2 — the ceiling these measurements put on a model's "
                 "per-configuration metrics. Spearman per configuration: rank correlation of the configuration's "
                 "primitives, pass 1 vs pass 2, mean over configurations with 3+ primitives; regret: pass 2's "
                 "time of pass 1's fastest / pass 2's fastest - 1.\n\n"
                 "| statistic | configurations | same fastest primitive | Spearman per configuration | regret mean "
                 "| regret median | regret max |\n|---|---|---|---|---|---|---|\n");
    double *regret = malloc((n_pairs ? n_pairs : 1) * sizeof *regret);
    for (int s = 0; s < STAT_COUNT; s++) {
        size_t n_cfg = 0, same = 0, n_rho = 0;
        double worst = 0.0, regret_sum = 0.0, rho_sum = 0.0;
        for (size_t i = 0; i < n_pairs; i++) {
            if (!ranked(pairs[i].a))
                continue;
            config_key(pairs[i].a, ka, sizeof ka);
            int first = 1; /* the first pair of its configuration? */
            for (size_t j = 0; j < i && first; j++) {
                if (!ranked(pairs[j].a))
                    continue;
                config_key(pairs[j].a, kb, sizeof kb);
                first = strcmp(ka, kb) != 0;
            }
            if (!first)
                continue;
            const convsel_record *best_a = NULL, *best_b = NULL, *pick_in_b = NULL;
            size_t m = 0;
            for (size_t j = i; j < n_pairs; j++) {
                if (!ranked(pairs[j].a))
                    continue;
                config_key(pairs[j].a, kb, sizeof kb);
                if (strcmp(ka, kb) != 0)
                    continue;
                xa[m] = stat_of(pairs[j].a, s);
                xb[m] = stat_of(pairs[j].b, s);
                m++;
                if (!best_a || stat_of(pairs[j].a, s) < stat_of(best_a, s))
                    best_a = pairs[j].a, pick_in_b = pairs[j].b;
                if (!best_b || stat_of(pairs[j].b, s) < stat_of(best_b, s))
                    best_b = pairs[j].b;
            }
            if (m < 2)
                continue;
            if (m >= 3) {
                rho_sum += spearman(xa, xb, m);
                n_rho++;
            }
            same += strcmp(best_a->primitive, best_b->primitive) == 0;
            regret[n_cfg] = stat_of(best_b, s) > 0 ? stat_of(pick_in_b, s) / stat_of(best_b, s) - 1.0 : 0.0;
            regret_sum += regret[n_cfg];
            worst = regret[n_cfg] > worst ? regret[n_cfg] : worst;
            n_cfg++;
        }
        double med = median(regret, n_cfg);
        double rho_mean = n_rho ? rho_sum / (double)n_rho : 0.0, regret_mean = n_cfg ? regret_sum / (double)n_cfg : 0.0;
        fprintf(out, "| %s | %zu | %.1f%% | %.3f | %.2f%% | %.2f%% | %.1f%% |\n", stat_names[s], n_cfg,
                n_cfg ? 100.0 * (double)same / (double)n_cfg : 0.0, rho_mean, 100 * regret_mean, 100 * med,
                100 * worst);
        printf("%-7s same fastest %zu/%zu, Spearman per configuration %.3f, regret mean %.4f median %.4f max %.4f\n",
               stat_names[s], same, n_cfg, rho_mean, regret_mean, med, worst);
    }
    fprintf(out, "\nVerdict (all measurements, min): %s.\n",
            all_ok ? "within the targets" : "outside the targets (Spearman >= 0.99, median |diff| <= 3%)");
    fclose(out);
    printf("wrote %s\n", out_path);

    free(regret);
    free(xa);
    free(xb);
    free(d);
    free(pairs);
    free(configs);
    convsel_dataset_destroy(ds[0]);
    convsel_dataset_destroy(ds[1]);
    return 0;
}
