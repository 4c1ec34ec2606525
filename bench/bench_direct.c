/*
 * direct_simd against onednn_direct and im2col_gemm, timed interleaved in one
 * process (convsel_measure_problem), on layers given as descriptors or read
 * from a network file. Prints per-layer ms (min and median) and the speed of
 * direct_simd relative to each: ratio = other_ms / direct_simd_ms, so > 1
 * means direct_simd is faster. Timing uses each primitive's own layouts; no
 * reorders are counted. The last column is direct_simd's GFLOP/s (of its
 * minimum time), to compare with the FMA peak (bench/peak_fma).
 *
 *   bench_direct [--threads N] [--mb N] [--max-time S] [--net FILE] [--csv FILE] [DESC...]
 *
 * --csv appends one row per layer (min ms of each primitive, empty when not
 * applicable), e.g. to bench/results/direct.csv.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convsel.h"

static const char *const names[] = {"direct_simd", "onednn_direct", "im2col_gemm"};
#define N_NAMES (sizeof names / sizeof names[0])

static void usage(void)
{
    fprintf(stderr, "usage: bench_direct [--threads N] [--mb N] [--max-time S] [--net FILE] [--csv FILE] [DESC...]\n");
}

/* Geometric-mean accumulators of the ratios, per compared primitive. */
static double log_sum[N_NAMES];
static int log_n[N_NAMES];

static FILE *csv;

/* A quoted CSV field: descriptors contain quotes (n"name"), doubled here. */
static void csv_field(const char *text)
{
    fputc('"', csv);
    for (; *text; text++) {
        if (*text == '"')
            fputc('"', csv);
        fputc(*text, csv);
    }
    fputc('"', csv);
}

static int bench_problem(const convsel_problem *p, int threads, const convsel_timing_options *opts,
                         const size_t *index, const int *present)
{
    size_t count = convsel_primitive_count();
    unsigned char *selected = calloc(count, 1);
    convsel_measurement *m = calloc(count, sizeof *m);
    if (!selected || !m) {
        free(selected);
        free(m);
        return 1;
    }
    for (size_t k = 0; k < N_NAMES; k++)
        if (present[k])
            selected[index[k]] = 1;
    convsel_status st = convsel_measure_problem(p, threads, selected, opts, m);
    if (st != CONVSEL_OK) {
        fprintf(stderr, "%s: %s: %s\n", p->name, convsel_status_str(st), convsel_last_error());
        free(selected);
        free(m);
        return 1;
    }
    printf("%-36.36s", p->name[0] ? p->name : "layer");
    const convsel_measurement *ds = present[0] ? &m[index[0]] : NULL;
    for (size_t k = 0; k < N_NAMES; k++) {
        const convsel_measurement *mk = &m[index[k]];
        if (!present[k] || !mk->applicable)
            printf(" %9s %9s", "-", "-");
        else
            printf(" %9.3f %9.3f", mk->timing.min_ms, mk->timing.median_ms);
    }
    for (size_t k = 1; k < N_NAMES; k++) {
        const convsel_measurement *mk = &m[index[k]];
        if (ds && ds->applicable && present[k] && mk->applicable) {
            double r = mk->timing.min_ms / ds->timing.min_ms;
            printf(" %7.2f", r);
            log_sum[k] += log(r);
            log_n[k]++;
        } else {
            printf(" %7s", "-");
        }
    }
    if (ds && ds->applicable)
        printf(" %7.1f", convsel_problem_flops(p) / (ds->timing.min_ms * 1e6));
    printf("\n");
    fflush(stdout);
    if (csv) {
        char desc[512];
        convsel_problem_format(p, desc, sizeof desc);
        csv_field(p->name);
        fputc(',', csv);
        csv_field(desc);
        fprintf(csv, ",%s,%d", convsel_isa_name(convsel_get_isa()), threads);
        for (size_t k = 0; k < N_NAMES; k++) {
            if (present[k] && m[index[k]].applicable)
                fprintf(csv, ",%.4f", m[index[k]].timing.min_ms);
            else
                fprintf(csv, ",");
        }
        fprintf(csv, "\n");
    }
    free(selected);
    free(m);
    return 0;
}

int main(int argc, char **argv)
{
    int threads = 1;
    int64_t mb = 0;
    const char *net = NULL;
    convsel_timing_options opts;
    convsel_timing_options_default(&opts);
    opts.max_time_s = 1.0;

    int first_desc = argc;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            threads = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--mb") == 0 && i + 1 < argc) {
            mb = atoll(argv[++i]);
        } else if (strcmp(argv[i], "--max-time") == 0 && i + 1 < argc) {
            opts.max_time_s = atof(argv[++i]);
        } else if (strcmp(argv[i], "--net") == 0 && i + 1 < argc) {
            net = argv[++i];
        } else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc) {
            const char *path = argv[++i];
            csv = fopen(path, "a");
            if (!csv) {
                fprintf(stderr, "bench_direct: cannot open %s\n", path);
                return 1;
            }
            if (ftell(csv) == 0)
                fprintf(csv, "layer,problem,isa,threads,direct_simd_ms,onednn_direct_ms,im2col_gemm_ms\n");
        } else if (argv[i][0] == '-' && argv[i][1] == '-') {
            usage();
            return 2;
        } else {
            first_desc = i;
            break;
        }
    }
    if (threads < 1 || (!net && first_desc == argc)) {
        usage();
        return 2;
    }

    size_t index[N_NAMES];
    int present[N_NAMES];
    for (size_t k = 0; k < N_NAMES; k++) {
        present[k] = convsel_primitive_find(names[k], &index[k]) == CONVSEL_OK;
        if (!present[k])
            fprintf(stderr, "bench_direct: no primitive '%s' in this build; its column stays empty\n", names[k]);
    }
    if (!present[0])
        return 1;

    printf("isa %s, threads %d; ms = min / median of interleaved runs;\n"
           "ratio = other min / direct_simd min (> 1: direct_simd faster); GF/s of direct_simd's min\n",
           convsel_isa_name(convsel_get_isa()), threads);
    printf("%-36s", "layer");
    for (size_t k = 0; k < N_NAMES; k++)
        printf(" %9.9s %9s", names[k], "median");
    printf(" %7s %7s %7s\n", "xonednn", "xim2col", "GF/s");

    int failures = 0;
    convsel_network *network = NULL;
    if (net) {
        convsel_status st = convsel_network_load(net, mb, &network);
        if (st != CONVSEL_OK) {
            fprintf(stderr, "bench_direct: %s\n", convsel_last_error());
            return 1;
        }
        for (size_t i = 0; i < convsel_network_size(network); i++)
            failures += bench_problem(convsel_network_layer(network, i), threads, &opts, index, present);
        convsel_network_destroy(network);
    }
    for (int i = first_desc; i < argc; i++) {
        convsel_network *one = NULL;
        if (convsel_network_from_desc(argv[i], mb, &one) != CONVSEL_OK) {
            fprintf(stderr, "bench_direct: %s\n", convsel_last_error());
            failures++;
            continue;
        }
        failures += bench_problem(convsel_network_layer(one, 0), threads, &opts, index, present);
        convsel_network_destroy(one);
    }
    for (size_t k = 1; k < N_NAMES; k++)
        if (log_n[k])
            printf("geometric mean speed of direct_simd vs %s: %.2fx over %d layers\n", names[k],
                   exp(log_sum[k] / log_n[k]), log_n[k]);
    if (csv)
        fclose(csv);
    return failures ? 1 : 0;
}
