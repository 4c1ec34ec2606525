/*
 * Every distinct layer of real networks, every applicable primitive, timed
 * interleaved (convsel_measure_problem) at batch 1 on 1 and 2 threads.
 * Writes PREFIX.md (tables) and PREFIX.csv (one row per layer × threads ×
 * primitive). The FMA peak is measured first, in the same process, as the
 * denominator of "fraction of peak".
 *
 * Numbers from different processes are not comparable on these machines
 * (FACTS.md): ratios are only ever taken between primitives of one
 * interleaved measurement.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "convsel.h"
#include "internal.h"
#include "peak_fma.h"

#define MAX_THREAD_COUNTS 8

static const char *const default_networks[] = {"resnet_50.txt", "vgg_11.txt", "vgg_19.txt"};

struct layer {
    convsel_problem problem;
    char network[64];
    int occurrences; /* repeats summed over every network it appears in */
};

struct options {
    int threads[MAX_THREAD_COUNTS];
    int n_threads;
    long mb;
    double max_time_s;
    int only_3x3;
    const char *match;
    long max_layers;
    const char *out_prefix;
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: bench_layers [--threads LIST] [--mb N] [--max-time S] [--only-3x3] [--match TEXT]\n"
            "                    [--max-layers N] [--out PREFIX] [NETWORK.txt ...]\n"
            "\n"
            "Times every applicable primitive on every distinct layer of the networks (default:\n"
            "resnet_50, vgg_11, vgg_19 from $CONVSEL_NETWORKS_DIR or ../shared/networks) and writes\n"
            "PREFIX.md and PREFIX.csv (default PREFIX: bench/results/layers).\n"
            "\n"
            "  --threads LIST  comma-separated thread counts (default 1,2)\n"
            "  --mb N          batch size of every layer (default 1)\n"
            "  --max-time S    timing budget per layer and thread count (default 2)\n"
            "  --only-3x3      only layers with a 3x3 kernel\n"
            "  --match TEXT    only layers whose name contains TEXT\n"
            "  --max-layers N  stop after N layers\n");
}

static int parse_threads(const char *text, struct options *o)
{
    o->n_threads = 0;
    const char *s = text;
    while (*s) {
        char *end;
        errno = 0;
        long t = strtol(s, &end, 10);
        if (end == s || errno || t < 1 || t > 1024 || o->n_threads == MAX_THREAD_COUNTS)
            return 0;
        o->threads[o->n_threads++] = (int)t;
        s = end;
        if (*s == ',')
            s++;
        else if (*s)
            return 0;
    }
    return o->n_threads > 0;
}

static int same_shape(const convsel_problem *a, const convsel_problem *b)
{
    return a->g == b->g && a->mb == b->mb && a->ic == b->ic && a->ih == b->ih && a->iw == b->iw && a->oc == b->oc &&
           a->oh == b->oh && a->ow == b->ow && a->kh == b->kh && a->kw == b->kw && a->sh == b->sh && a->sw == b->sw &&
           a->ph == b->ph && a->pw == b->pw && a->dh == b->dh && a->dw == b->dw;
}

/* Adds the distinct layers of one network file to layers. */
static int collect_layers(const char *path, const struct options *o, struct layer **layers, size_t *n, size_t *cap)
{
    convsel_network *net = NULL;
    convsel_status st = convsel_network_load(path, o->mb, &net);
    if (st != CONVSEL_OK) {
        fprintf(stderr, "bench_layers: %s: %s\n", convsel_status_str(st), convsel_last_error());
        return 0;
    }
    for (size_t i = 0; i < convsel_network_size(net); i++) {
        const convsel_problem *p = convsel_network_layer(net, i);
        if (o->only_3x3 && !(p->kh == 3 && p->kw == 3))
            continue;
        if (o->match && !strstr(p->name, o->match))
            continue;
        size_t k = 0;
        while (k < *n && !same_shape(&(*layers)[k].problem, p))
            k++;
        if (k < *n) {
            (*layers)[k].occurrences += p->repeat;
            continue;
        }
        if (*n == *cap) {
            size_t c = *cap ? 2 * *cap : 32;
            struct layer *grown = realloc(*layers, c * sizeof *grown);
            if (!grown) {
                convsel_network_destroy(net);
                fprintf(stderr, "bench_layers: out of memory\n");
                return 0;
            }
            *layers = grown;
            *cap = c;
        }
        struct layer *l = &(*layers)[(*n)++];
        l->problem = *p;
        l->occurrences = p->repeat;
        snprintf(l->network, sizeof l->network, "%s", convsel_network_name(net));
    }
    convsel_network_destroy(net);
    return 1;
}

static void cpu_model_name(char *buf, size_t size)
{
    snprintf(buf, size, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            const char *colon = strchr(line, ':');
            if (colon) {
                colon++;
                while (*colon == ' ' || *colon == '\t')
                    colon++;
                snprintf(buf, size, "%.*s", (int)strcspn(colon, "\n"), colon);
            }
            break;
        }
    }
    fclose(f);
}

/* "64→256 56×56 k1 s1" (shape only; the canonical descriptor is in the CSV). */
static void shape_text(const convsel_problem *p, char *buf, size_t size)
{
    char stride[16] = "";
    if (p->sh != 1 || p->sw != 1)
        snprintf(stride, sizeof stride, " s%lld", (long long)p->sh);
    char groups[16] = "";
    if (p->g != 1)
        snprintf(groups, sizeof groups, " g%lld", (long long)p->g);
    snprintf(buf, size, "%lld→%lld %lld×%lld k%lld×%lld%s%s", (long long)p->ic, (long long)p->oc, (long long)p->ih,
             (long long)p->iw, (long long)p->kh, (long long)p->kw, stride, groups);
}

/* Index of the best (lowest minimum) applicable primitive that passes the
 * filter, or count when none. The tables use the minimum of the interleaved
 * rounds, as FACTS.md's do: on a shared machine slow bursts only ever add
 * time, and a short budget leaves the median exposed to them. */
static size_t best_of(const convsel_measurement *m, size_t count, int (*filter)(size_t))
{
    size_t best = count;
    for (size_t i = 0; i < count; i++)
        if (m[i].applicable && filter(i) && (best == count || m[i].timing.min_ms < m[best].timing.min_ms))
            best = i;
    return best;
}

static int is_any(size_t i)
{
    (void)i;
    return 1;
}

static int is_onednn_auto(size_t i)
{
    return strcmp(convsel_primitive_name(i), "onednn_auto") == 0;
}

static int is_onednn_winograd(size_t i)
{
    return strcmp(convsel_primitive_name(i), "onednn_winograd") == 0;
}

/* convsel's own Winograd kernels: a Winograd name outside the onednn family. */
static int is_own_winograd(size_t i)
{
    return strstr(convsel_primitive_name(i), "winograd") && strcmp(convsel_primitive_family(i), "onednn") != 0;
}

static int is_direct_simd(size_t i)
{
    return strncmp(convsel_primitive_name(i), "direct_simd", 11) == 0;
}

/* The best matching primitive's minimum over onednn_auto's, "–" when either
 * is missing. */
static void ratio_text(const convsel_measurement *m, size_t count, int (*filter)(size_t), char *buf, size_t size)
{
    size_t a = best_of(m, count, is_onednn_auto), x = best_of(m, count, filter);
    if (a == count || x == count || !(m[a].timing.min_ms > 0.0))
        snprintf(buf, size, "–");
    else
        snprintf(buf, size, "%.2f", m[x].timing.min_ms / m[a].timing.min_ms);
}

static void csv_header(FILE *csv)
{
    fprintf(csv, "network,layer,problem,occurrences,threads,primitive,family,applicable,min_ms,p10_ms,median_ms,"
                 "p90_ms,runs,create_ms,gflops,gflops_at_min,fraction_of_peak_at_min,src_layout,dst_layout,reason\n");
}

/* CSV field: quoted, with quotes doubled (RFC 4180). */
static void csv_field(FILE *csv, const char *s)
{
    fputc('"', csv);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', csv);
        fputc(*s, csv);
    }
    fputc('"', csv);
}

static void csv_rows(FILE *csv, const struct layer *l, int threads, const convsel_measurement *m, size_t count,
                     double peak)
{
    char desc[512];
    convsel_problem_format(&l->problem, desc, sizeof desc);
    const double flops = convsel_problem_flops(&l->problem);
    for (size_t i = 0; i < count; i++) {
        if (convsel_primitive_is_reference(i))
            continue;
        csv_field(csv, l->network);
        fputc(',', csv);
        csv_field(csv, l->problem.name);
        fputc(',', csv);
        csv_field(csv, desc);
        fprintf(csv, ",%d,%d,%s,%s,", l->occurrences, threads, convsel_primitive_name(i), convsel_primitive_family(i));
        if (m[i].applicable) {
            const convsel_timing *t = &m[i].timing;
            const double at_min = flops / (t->min_ms * 1e-3) / 1e9;
            fprintf(csv, "1,%.6g,%.6g,%.6g,%.6g,%d,%.6g,%.6g,%.6g,%.4f,%s,%s,\n", t->min_ms, t->p10_ms, t->median_ms,
                    t->p90_ms, t->runs, m[i].create_ms, m[i].gflops, at_min, peak > 0.0 ? at_min / peak : 0.0,
                    convsel_layout_name(m[i].src_layout), convsel_layout_name(m[i].dst_layout));
        } else {
            fprintf(csv, "0,,,,,,,,,,,,");
            csv_field(csv, m[i].why);
            fputc('\n', csv);
        }
    }
}

/* One markdown table row: the layer, the minimum ms of every primitive, the
 * fastest, its GFLOP/s and fraction of peak, and the ratios to onednn_auto. */
static void md_row(FILE *md, const struct layer *l, const convsel_measurement *m, size_t count, double peak)
{
    char shape[96], r_wino[16], r_own[16], r_simd[16];
    shape_text(&l->problem, shape, sizeof shape);
    fprintf(md, "| %s | %s | %.3f |", l->problem.name[0] ? l->problem.name : "(unnamed)", shape,
            convsel_problem_flops(&l->problem) / 1e9);
    for (size_t i = 0; i < count; i++) {
        if (convsel_primitive_is_reference(i))
            continue;
        if (m[i].applicable)
            fprintf(md, " %.3f |", m[i].timing.min_ms);
        else
            fprintf(md, " – |");
    }
    size_t best = best_of(m, count, is_any);
    ratio_text(m, count, is_onednn_winograd, r_wino, sizeof r_wino);
    ratio_text(m, count, is_own_winograd, r_own, sizeof r_own);
    ratio_text(m, count, is_direct_simd, r_simd, sizeof r_simd);
    if (best < count) {
        const double gflops = convsel_problem_flops(&l->problem) / (m[best].timing.min_ms * 1e-3) / 1e9;
        fprintf(md, " %s | %.1f | %.0f%% | %s | %s | %s |\n", convsel_primitive_name(best), gflops,
                peak > 0.0 ? 100.0 * gflops / peak : 0.0, r_wino, r_own, r_simd);
    }
    else
        fprintf(md, " – | – | – | %s | %s | %s |\n", r_wino, r_own, r_simd);
}

static void md_table_header(FILE *md, int threads, double peak, size_t count)
{
    fprintf(md, "\n## %d thread%s (FMA peak %.1f GFLOP/s)\n\n", threads, threads == 1 ? "" : "s", peak);
    fprintf(md, "| layer | shape | GFLOP |");
    for (size_t i = 0; i < count; i++)
        if (!convsel_primitive_is_reference(i))
            fprintf(md, " %s |", convsel_primitive_name(i));
    fprintf(md, " fastest | GFLOP/s | of peak | onednn_winograd / auto | own Winograd / auto | direct_simd / auto |\n");
    fprintf(md, "|---|---|--:|");
    for (size_t i = 0; i < count; i++)
        if (!convsel_primitive_is_reference(i))
            fprintf(md, "--:|");
    fprintf(md, "---|--:|--:|--:|--:|--:|\n");
}

int main(int argc, char **argv)
{
    struct options o = {.threads = {1, 2}, .n_threads = 2, .mb = 1, .max_time_s = 2.0, .max_layers = -1,
                        .out_prefix = "bench/results/layers"};
    const char *paths[64];
    int n_paths = 0;
    for (int a = 1; a < argc; a++) {
        const char *arg = argv[a];
        int has_value = a + 1 < argc;
        char *end;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(arg, "--only-3x3") == 0) {
            o.only_3x3 = 1;
        } else if (strcmp(arg, "--threads") == 0 && has_value) {
            if (!parse_threads(argv[++a], &o)) {
                fprintf(stderr, "bench_layers: bad --threads '%s' (e.g. 1,2)\n", argv[a]);
                return 2;
            }
        } else if (strcmp(arg, "--mb") == 0 && has_value) {
            o.mb = strtol(argv[++a], &end, 10);
            if (*end || o.mb < 1) {
                fprintf(stderr, "bench_layers: bad --mb '%s'\n", argv[a]);
                return 2;
            }
        } else if (strcmp(arg, "--max-time") == 0 && has_value) {
            o.max_time_s = strtod(argv[++a], &end);
            if (*end || !(o.max_time_s >= 0.0)) {
                fprintf(stderr, "bench_layers: bad --max-time '%s'\n", argv[a]);
                return 2;
            }
        } else if (strcmp(arg, "--max-layers") == 0 && has_value) {
            o.max_layers = strtol(argv[++a], &end, 10);
            if (*end || o.max_layers < 0) {
                fprintf(stderr, "bench_layers: bad --max-layers '%s'\n", argv[a]);
                return 2;
            }
        } else if (strcmp(arg, "--match") == 0 && has_value) {
            o.match = argv[++a];
        } else if (strcmp(arg, "--out") == 0 && has_value) {
            o.out_prefix = argv[++a];
        } else if (arg[0] == '-') {
            fprintf(stderr, "bench_layers: unknown option or missing value: '%s'\n", arg);
            usage(stderr);
            return 2;
        } else if (n_paths < (int)CONVSEL_ARRAY_SIZE(paths)) {
            paths[n_paths++] = arg;
        }
    }

    /* Default networks: the shared benchdnn lists (never copied into the repo). */
    char default_paths[CONVSEL_ARRAY_SIZE(default_networks)][512];
    if (n_paths == 0) {
        const char *dir = getenv("CONVSEL_NETWORKS_DIR");
        if (!dir || !*dir)
            dir = "../shared/networks";
        for (size_t i = 0; i < CONVSEL_ARRAY_SIZE(default_networks); i++) {
            snprintf(default_paths[i], sizeof default_paths[i], "%s/%s", dir, default_networks[i]);
            paths[n_paths++] = default_paths[i];
        }
    }

    struct layer *layers = NULL;
    size_t n_layers = 0, cap = 0;
    for (int i = 0; i < n_paths; i++)
        if (!collect_layers(paths[i], &o, &layers, &n_layers, &cap)) {
            free(layers);
            return 1;
        }
    if (o.max_layers >= 0 && (size_t)o.max_layers < n_layers)
        n_layers = (size_t)o.max_layers;
    if (n_layers == 0) {
        fprintf(stderr, "bench_layers: no layer to measure\n");
        free(layers);
        return 1;
    }

    /* The peak for the ISA the primitives run under. */
    const enum peak_isa isa = convsel_get_isa() >= CONVSEL_ISA_AVX512 ? PEAK_AVX512 : PEAK_AVX2;
    double peak[MAX_THREAD_COUNTS];
    for (int t = 0; t < o.n_threads; t++) {
        peak[t] = peak_fma_gflops(isa, o.threads[t], 0.5);
        fprintf(stderr, "FMA peak (%s), %d thread(s): %.1f GFLOP/s\n", isa == PEAK_AVX512 ? "avx512" : "avx2",
                o.threads[t], peak[t]);
    }

    char md_path[1024], csv_path[1024];
    snprintf(md_path, sizeof md_path, "%s.md", o.out_prefix);
    snprintf(csv_path, sizeof csv_path, "%s.csv", o.out_prefix);
    FILE *md = fopen(md_path, "w"), *csv = fopen(csv_path, "w");
    const size_t count = convsel_primitive_count();
    /* Every layer × thread count, kept so the markdown can be grouped by threads. */
    convsel_measurement *all = calloc(n_layers * (size_t)o.n_threads * (count ? count : 1), sizeof *all);
    int rc = 0;
    if (!md || !csv || !all) {
        fprintf(stderr, "bench_layers: cannot write %s / %s or out of memory\n", md_path, csv_path);
        rc = 1;
        goto done;
    }

    char cpu[256], date[64];
    cpu_model_name(cpu, sizeof cpu);
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    fprintf(md, "# Layer benchmarks\n\n");
    fprintf(md, "- CPU: %s (%d logical CPUs), ISA %s\n", cpu, omp_get_num_procs(), convsel_isa_name(convsel_get_isa()));
    fprintf(md, "- date: %s\n- batch %ld, timing budget %.2g s per layer and thread count\n", date, o.mb,
            o.max_time_s);
    fprintf(md, "- networks:");
    for (int i = 0; i < n_paths; i++)
        fprintf(md, " %s", paths[i]);
    fprintf(md, "\n- cells: minimum ms over the interleaved rounds of one measurement (medians and p10/p90 are in "
                "the CSV); – = not applicable\n");
    fprintf(md, "- GFLOP/s and \"of peak\": the fastest primitive, direct-convolution FLOPs / minimum time "
                "(effective for Winograd, which can exceed 100%%) over the FMA peak measured first in this "
                "process\n");
    fprintf(md, "- X / auto: minimum of X over minimum of onednn_auto in the same measurement; below 1 is faster "
                "than oneDNN's own choice (own Winograd / direct_simd: the best such primitive)\n");
    csv_header(csv);

    for (size_t li = 0; li < n_layers; li++) {
        for (int t = 0; t < o.n_threads; t++) {
            convsel_timing_options opts;
            convsel_timing_options_default(&opts);
            opts.max_time_s = o.max_time_s;
            convsel_measurement *cell = &all[(li * (size_t)o.n_threads + (size_t)t) * count];
            convsel_status st = convsel_measure_problem(&layers[li].problem, o.threads[t], NULL, &opts, cell);
            if (st != CONVSEL_OK) {
                fprintf(stderr, "bench_layers: %s, %d threads: %s: %s\n", layers[li].problem.name, o.threads[t],
                        convsel_status_str(st), convsel_last_error());
                rc = 1;
                for (size_t i = 0; i < count; i++) {
                    cell[i].applicable = 0;
                    snprintf(cell[i].why, sizeof cell[i].why, "measurement failed: %s", convsel_status_str(st));
                }
            }
            csv_rows(csv, &layers[li], o.threads[t], cell, count, peak[t]);
            size_t best = best_of(cell, count, is_any);
            fprintf(stderr, "[%zu/%zu] %-36s %d thread(s): fastest %s %.3f ms\n", li + 1, n_layers,
                    layers[li].problem.name, o.threads[t], best < count ? convsel_primitive_name(best) : "none",
                    best < count ? cell[best].timing.min_ms : 0.0);
        }
    }
    for (int t = 0; t < o.n_threads; t++) {
        md_table_header(md, o.threads[t], peak[t], count);
        for (size_t li = 0; li < n_layers; li++)
            md_row(md, &layers[li], &all[(li * (size_t)o.n_threads + (size_t)t) * count], count, peak[t]);
    }
    fprintf(stderr, "wrote %s and %s\n", md_path, csv_path);

done:
    if (md)
        fclose(md);
    if (csv)
        fclose(csv);
    free(all);
    free(layers);
    return rc;
}
