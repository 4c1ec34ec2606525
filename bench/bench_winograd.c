/*
 * The Winograd primitives on real layers.
 *
 *   bench_winograd --error [--out FILE.md] [NETWORK.txt ...]
 *     max|y - y_ref| / max|y_ref| of winograd_2x2_3x3, winograd_4x4_3x3 (and
 *     onednn_winograd where present) on every 3×3 stride-1 layer at batch 1,
 *     against the library's reference primitive. The worst values set the
 *     primitives' expected_error.
 *
 *   bench_winograd [--threads N] [--cpu-time] [--max-time S] [--blas] [--out FILE.md] DESC ...
 *     times winograd_2x2_3x3, winograd_4x4_3x3, onednn_winograd and
 *     onednn_auto interleaved on each layer (one process, short rounds: the
 *     only comparison that holds on these noisy machines) and prints ms and
 *     ratios (--out appends them to a markdown file; --cpu-time, at 1
 *     thread, times by thread CPU time, robust to a busy machine). --blas adds winograd_4x4_3x3 with OpenBLAS doing the products;
 *     --sweep adds it under other schedules and blocking budgets, to tune
 *     them (p768: private chunks of 768 KiB, s6144: shared chunks of 6 MiB,
 *     /256: 256 KiB blocks of U; 0 keeps a default).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "convsel.h"
#include "winograd.h"

#define MAX_CANDIDATES 8

static const char *const default_networks[] = {"resnet_50.txt", "vgg_19.txt"};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: bench_winograd --error [--out FILE.md] [NETWORK.txt ...]\n"
            "       bench_winograd [--threads N] [--cpu-time] [--max-time S] [--blas] [--sweep SPEC,...]\n"
            "                      [--out FILE.md] DESC ...\n"
            "\n"
            "--error: relative error of the Winograd primitives on every 3x3 stride-1 layer of the\n"
            "networks at batch 1 (default: resnet_50 and vgg_19 from $CONVSEL_NETWORKS_DIR or\n"
            "../shared/networks); --out writes the table as markdown.\n"
            "Otherwise: times winograd_2x2_3x3, winograd_4x4_3x3, onednn_winograd, onednn_auto\n"
            "interleaved on each layer descriptor (batch as written; benchdnn's default is 2);\n"
            "--out appends the table to FILE.md. --cpu-time (1 thread only) times each run by its\n"
            "thread's CPU time, which other processes on a busy machine do not inflate.\n"
            "--blas adds winograd_4x4_3x3 with OpenBLAS products; --sweep p768,s6144/256,... adds\n"
            "it with private (p) or shared (s) chunks of N KiB and U blocks of /N KiB (0: default).\n");
}

/* One primitive instance with its input already in its layout. */
struct candidate {
    const char *label;
    size_t primitive;
    convsel_instance *instance;
    float *src, *dst;
    size_t dst_elems;
};

static convsel_status candidate_run(void *ctx)
{
    struct candidate *c = ctx;
    return convsel_instance_run(c->instance, c->src, c->dst);
}

/* Creates primitive name on problem and reorders src (nchw) into its layout.
 * Returns NOT_FOUND / NOT_APPLICABLE when the primitive is missing or refuses. */
static convsel_status candidate_create(struct candidate *c, const char *label, const char *name,
                                       const convsel_problem *p, int threads, const float *weights,
                                       const float *src_nchw)
{
    memset(c, 0, sizeof *c);
    c->label = label;
    convsel_status st = convsel_primitive_find(name, &c->primitive);
    if (st != CONVSEL_OK)
        return st;
    if (!convsel_primitive_applicable(c->primitive, p, NULL, 0))
        return CONVSEL_NOT_APPLICABLE;
    st = convsel_instance_create(c->primitive, p, threads, weights, &c->instance);
    if (st != CONVSEL_OK)
        return st;
    const convsel_layout sl = convsel_instance_src_layout(c->instance), dl = convsel_instance_dst_layout(c->instance);
    const size_t sn = convsel_layout_elems(sl, p->mb, p->ic, p->ih, p->iw);
    c->dst_elems = convsel_layout_elems(dl, p->mb, p->oc, p->oh, p->ow);
    c->src = convsel_alloc(sn * sizeof(float));
    c->dst = convsel_alloc(c->dst_elems * sizeof(float));
    if (!c->src || !c->dst)
        return CONVSEL_OUT_OF_MEMORY;
    convsel_reorder *r = NULL;
    st = convsel_reorder_create(p->mb, p->ic, p->ih, p->iw, CONVSEL_LAYOUT_NCHW, sl, threads, &r);
    if (st == CONVSEL_OK)
        st = convsel_reorder_run(r, src_nchw, c->src);
    convsel_reorder_destroy(r);
    return st;
}

/* The candidate's last output, back in nchw. */
static convsel_status candidate_output(const struct candidate *c, const convsel_problem *p, float *nchw)
{
    convsel_reorder *r = NULL;
    convsel_status st = convsel_reorder_create(p->mb, p->oc, p->oh, p->ow, convsel_instance_dst_layout(c->instance),
                                               CONVSEL_LAYOUT_NCHW, 1, &r);
    if (st == CONVSEL_OK)
        st = convsel_reorder_run(r, c->dst, nchw);
    convsel_reorder_destroy(r);
    return st;
}

static void candidate_destroy(struct candidate *c)
{
    convsel_instance_destroy(c->instance);
    convsel_free(c->src);
    convsel_free(c->dst);
    memset(c, 0, sizeof *c);
}

/* Relative error of primitive name on p against ref; negative when the
 * primitive is missing or refuses the layer. */
static double error_of(const char *name, const convsel_problem *p, const float *w, const float *src, const float *ref,
                       float *out)
{
    struct candidate c;
    convsel_status st = candidate_create(&c, name, name, p, 2, w, src);
    double err = -1.0;
    if (st == CONVSEL_OK && (st = convsel_instance_run(c.instance, c.src, c.dst)) == CONVSEL_OK &&
        (st = candidate_output(&c, p, out)) == CONVSEL_OK)
        err = convsel_rel_error(out, ref, convsel_problem_dst_elems(p));
    else if (st != CONVSEL_NOT_FOUND && st != CONVSEL_NOT_APPLICABLE)
        fprintf(stderr, "bench_winograd: %s on %s: %s\n", name, p->name, convsel_last_error());
    candidate_destroy(&c);
    return err;
}

/* /proc/cpuinfo's model name, with family and model numbers (a VM may
 * report only "AMD EPYC"). */
static void cpu_model(char *buf, size_t size)
{
    snprintf(buf, size, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512], name[256] = "unknown CPU";
    long family = -1, model = -1;
    while (fgets(line, sizeof line, f) && (family < 0 || model < 0 || strcmp(name, "unknown CPU") == 0)) {
        const char *colon = strchr(line, ':');
        if (!colon)
            continue;
        const char *value = colon + 1 + strspn(colon + 1, " \t");
        if (strncmp(line, "model name", 10) == 0) {
            snprintf(name, sizeof name, "%s", value);
            name[strcspn(name, "\n")] = '\0';
        } else if (strncmp(line, "cpu family", 10) == 0) {
            family = strtol(value, NULL, 10);
        } else if (strncmp(line, "model", 5) == 0 && (line[5] == ' ' || line[5] == '\t')) {
            model = strtol(value, NULL, 10);
        }
    }
    fclose(f);
    snprintf(buf, size, "%s (family %ld, model %ld)", name, family, model);
}

static void print_error(double e, FILE *md)
{
    if (e < 0) {
        printf(" %12s", "-");
        if (md)
            fprintf(md, " - |");
    } else {
        printf(" %12.3e", e);
        if (md)
            fprintf(md, " %.2e |", e);
    }
}

static int run_errors(int argc, char **argv, const char *out_path)
{
    const char *dir = getenv("CONVSEL_NETWORKS_DIR");
    if (!dir || !*dir)
        dir = "../shared/networks";
    char paths[16][512];
    int npaths = 0;
    for (int i = 0; i < argc && npaths < 16; i++)
        snprintf(paths[npaths++], sizeof paths[0], "%s", argv[i]);
    if (npaths == 0)
        for (size_t i = 0; i < sizeof default_networks / sizeof default_networks[0]; i++)
            snprintf(paths[npaths++], sizeof paths[0], "%s/%s", dir, default_networks[i]);

    FILE *md = NULL;
    if (out_path && !(md = fopen(out_path, "a"))) {
        fprintf(stderr, "bench_winograd: cannot write %s: %s\n", out_path, strerror(errno));
        return 1;
    }
    char cpu[256];
    cpu_model(cpu, sizeof cpu);
    const char *const names[] = {"winograd_2x2_3x3", "winograd_4x4_3x3", "onednn_winograd"};
    double worst[3] = {-1, -1, -1}; /* -1: not applicable anywhere */
    if (md) {
        time_t now = time(NULL);
        char date[32];
        strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
        /* One section per run, so that runs under each CONVSEL_ISA collect in one file. */
        if (ftell(md) == 0)
            fprintf(md,
                    "# Winograd error on real layers\n\n"
                    "CPU: %s. Batch 1, src and weights uniform in [-1, 1), error = max|y - y_ref| / max|y_ref|\n"
                    "against the reference primitive (double accumulation). Measured with\n"
                    "`CONVSEL_ISA=... bench_winograd --error --out %s` from the repository root.\n",
                    cpu, out_path);
        fprintf(md,
                "\n## ISA %s (%s)\n\n"
                "| layer | shape | winograd_2x2_3x3 | winograd_4x4_3x3 | onednn_winograd |\n"
                "|---|---|---|---|---|\n",
                convsel_isa_name(convsel_get_isa()), date);
    }
    printf("%-34s %12s %12s %12s\n", "layer", names[0], names[1], names[2]);
    size_t ref_i = 0;
    if (convsel_primitive_find("reference", &ref_i) != CONVSEL_OK) {
        fprintf(stderr, "bench_winograd: %s\n", convsel_last_error());
        return 1;
    }
    for (int f = 0; f < npaths; f++) {
        convsel_network *net = NULL;
        if (convsel_network_load(paths[f], 1, &net) != CONVSEL_OK) {
            fprintf(stderr, "bench_winograd: %s\n", convsel_last_error());
            return 1;
        }
        for (size_t l = 0; l < convsel_network_size(net); l++) {
            const convsel_problem *p = convsel_network_layer(net, l);
            size_t w4 = 0;
            convsel_primitive_find("winograd_4x4_3x3", &w4);
            if (!convsel_primitive_applicable(w4, p, NULL, 0))
                continue;
            const size_t sn = convsel_problem_src_elems(p), wn = convsel_problem_weights_elems(p),
                         dn = convsel_problem_dst_elems(p);
            float *src = malloc(sn * sizeof(float)), *w = malloc(wn * sizeof(float));
            float *ref = malloc(dn * sizeof(float)), *out = malloc(dn * sizeof(float));
            convsel_fill_random(src, sn, 1 + l);
            convsel_fill_random(w, wn, 1000 + l);
            convsel_instance *ri = NULL;
            if (convsel_instance_create(ref_i, p, 2, w, &ri) != CONVSEL_OK ||
                convsel_instance_run(ri, src, ref) != CONVSEL_OK) {
                fprintf(stderr, "bench_winograd: reference on %s: %s\n", p->name, convsel_last_error());
                return 1;
            }
            convsel_instance_destroy(ri);
            char shape[128];
            snprintf(shape, sizeof shape, "ic%lld oc%lld %lldx%lld", (long long)p->ic, (long long)p->oc,
                     (long long)p->oh, (long long)p->ow);
            printf("%-34s", p->name);
            if (md)
                fprintf(md, "| %s | %s |", p->name, shape);
            for (int k = 0; k < 3; k++) {
                double e = error_of(names[k], p, w, src, ref, out);
                if (e > worst[k])
                    worst[k] = e;
                print_error(e, md);
            }
            printf("\n");
            if (md)
                fprintf(md, "\n");
            fflush(stdout);
            free(src);
            free(w);
            free(ref);
            free(out);
        }
        convsel_network_destroy(net);
    }
    printf("%-34s", "worst");
    if (md)
        fprintf(md, "| **worst** | |");
    for (int k = 0; k < 3; k++)
        print_error(worst[k], md);
    printf("\n");
    if (md) {
        fprintf(md, "\n");
        for (int k = 0; k < 2; k++) {
            size_t i = 0;
            convsel_primitive_find(names[k], &i);
            fprintf(md, "%s%s: expected_error %.1e (worst measured %.2e).\n", k ? "" : "\n", names[k],
                    convsel_primitive_expected_error(i), worst[k]);
        }
        fclose(md);
    }
    return 0;
}

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int compare_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/*
 * At 1 thread every candidate runs on this thread (OpenMP and oneDNN keep a
 * team of one on the caller), so its CPU time is its run time minus the
 * time other processes took the core: on a loaded machine the min of wall
 * clock rounds still drifts 1.5x, CPU time agrees to ~1% between repeats.
 * Interleaved rounds as convsel_time_interleaved, until max_time or 200.
 */
static convsel_status time_cpu(size_t n, struct candidate *cands, double max_time, convsel_timing *res)
{
    enum { MAX_ROUNDS = 200 };
    static double t[MAX_CANDIDATES][MAX_ROUNDS];
    convsel_status st;
    for (size_t k = 0; k < n; k++)
        if ((st = candidate_run(&cands[k])) != CONVSEL_OK)
            return st;
    const double start = wall_s();
    int rounds = 0;
    while (rounds < MAX_ROUNDS && (rounds < 5 || wall_s() - start < max_time)) {
        for (size_t k = 0; k < n; k++) {
            const double t0 = thread_cpu_s();
            if ((st = candidate_run(&cands[k])) != CONVSEL_OK)
                return st;
            t[k][rounds] = thread_cpu_s() - t0;
        }
        rounds++;
    }
    for (size_t k = 0; k < n; k++) {
        qsort(t[k], (size_t)rounds, sizeof(double), compare_double);
        res[k].min_ms = 1e3 * t[k][0];
        res[k].p10_ms = 1e3 * t[k][rounds / 10];
        res[k].median_ms = 1e3 * t[k][rounds / 2];
        res[k].p90_ms = 1e3 * t[k][rounds * 9 / 10];
        res[k].runs = rounds;
    }
    return CONVSEL_OK;
}

/* Extra winograd_4x4_3x3 candidates with other tuning: "p768" private
 * chunks of 768 KiB, "s6144" shared chunks of 6 MiB, "a0" the automatic
 * choice; "/256" sets the U block to 256 KiB. */
struct sweep {
    int count;
    char schedule[MAX_CANDIDATES];
    long chunk_kb[MAX_CANDIDATES], ublock_kb[MAX_CANDIDATES];
    char label[MAX_CANDIDATES][64];
};

static int parse_sweep(const char *text, struct sweep *sw)
{
    while (*text && sw->count < MAX_CANDIDATES - 2) {
        const char sched = *text++;
        if (sched != 'p' && sched != 's' && sched != 'a')
            return 0;
        char *end;
        long chunk = strtol(text, &end, 10), ublock = 0;
        if (end == text || chunk < 0)
            return 0;
        if (*end == '/') {
            const char *u = end + 1;
            ublock = strtol(u, &end, 10);
            if (end == u || ublock < 0)
                return 0;
        }
        sw->schedule[sw->count] = sched;
        sw->chunk_kb[sw->count] = chunk;
        sw->ublock_kb[sw->count] = ublock;
        snprintf(sw->label[sw->count], sizeof sw->label[0], "4x4 %s %ldK U %ldK",
                 sched == 'p' ? "private" : sched == 's' ? "shared" : "auto", chunk, ublock);
        sw->count++;
        if (*end == ',')
            end++;
        else if (*end)
            return 0;
        text = end;
    }
    return 1;
}

static int run_timing(int argc, char **argv, int threads, double max_time, int blas, const struct sweep *sweep,
                      const char *out_path, int cpu_time)
{
    static const char *const names[] = {"winograd_2x2_3x3", "winograd_4x4_3x3", "onednn_winograd", "onednn_auto"};
    const char *clock = cpu_time ? "thread CPU time" : "wall clock";
    printf("threads %d, ISA %s; min and median ms (%s) of interleaved runs; 4x4 speedup = other min / "
           "winograd_4x4_3x3 min (> 1: winograd_4x4_3x3 is faster)\n",
           threads, convsel_isa_name(convsel_get_isa()), clock);
    FILE *md = NULL;
    if (out_path) {
        if (!(md = fopen(out_path, "a"))) {
            fprintf(stderr, "bench_winograd: cannot write %s: %s\n", out_path, strerror(errno));
            return 1;
        }
        char cpu[256];
        cpu_model(cpu, sizeof cpu);
        if (ftell(md) == 0)
            fprintf(md, "# Winograd speed\n\n"
                        "`bench_winograd [--cpu-time] --threads N --out FILE DESC...` from the repository root, one\n"
                        "section per run. Wall-clock numbers on this shared 2-vCPU machine include time other\n"
                        "processes took the cores; at 1 thread, thread CPU time (--cpu-time) does not.\n");
        fprintf(md,
                "\n## %d thread%s, %s\n\nCPU: %s; ISA %s. Min and median ms (%s) of interleaved runs in one "
                "process; the last column is each candidate's min over winograd_4x4_3x3's (> 1: "
                "winograd_4x4_3x3 is faster).\n\n| layer | candidate | min ms | median ms | vs winograd_4x4_3x3 "
                "|\n|---|---|---|---|---|\n",
                threads, threads == 1 ? "" : "s", clock, cpu, convsel_isa_name(convsel_get_isa()), clock);
    }
    for (int a = 0; a < argc; a++) {
        convsel_problem p;
        if (convsel_problem_parse(argv[a], &p) != CONVSEL_OK) {
            fprintf(stderr, "bench_winograd: %s\n", convsel_last_error());
            return 1;
        }
        const size_t sn = convsel_problem_src_elems(&p), wn = convsel_problem_weights_elems(&p);
        float *src = malloc(sn * sizeof(float)), *w = malloc(wn * sizeof(float));
        convsel_fill_random(src, sn, 3);
        convsel_fill_random(w, wn, 4);
        struct candidate cands[MAX_CANDIDATES];
        int n = 0;
        for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
            convsel_status st = candidate_create(&cands[n], names[k], names[k], &p, threads, w, src);
            if (st == CONVSEL_OK)
                n++;
            else {
                printf("  %-22s skipped: %s\n", names[k], convsel_status_str(st));
                candidate_destroy(&cands[n]);
            }
        }
        if (blas) {
            convsel_wino_tuning.force_blas = 1;
            if (candidate_create(&cands[n], "winograd_4x4 (OpenBLAS)", "winograd_4x4_3x3", &p, threads, w, src) ==
                CONVSEL_OK)
                n++;
            else
                candidate_destroy(&cands[n]);
            convsel_wino_tuning.force_blas = 0;
        }
        /* Tuning sweep: winograd_4x4_3x3 again under other chunk / U-block budgets. */
        const struct convsel_wino_tuning saved = convsel_wino_tuning;
        for (int k = 0; k < sweep->count && n < MAX_CANDIDATES; k++) {
            convsel_wino_tuning.force_schedule = sweep->schedule[k] == 'p' ? 1 : sweep->schedule[k] == 's' ? 2 : 0;
            /* One budget for both chunk kinds, so the value applies whichever U is. */
            if (sweep->chunk_kb[k])
                convsel_wino_tuning.small_chunk_bytes = convsel_wino_tuning.big_chunk_bytes =
                    (size_t)sweep->chunk_kb[k] << 10;
            if (sweep->ublock_kb[k])
                convsel_wino_tuning.ublock_bytes = (size_t)sweep->ublock_kb[k] << 10;
            if (candidate_create(&cands[n], sweep->label[k], "winograd_4x4_3x3", &p, threads, w, src) == CONVSEL_OK)
                n++;
            else
                candidate_destroy(&cands[n]);
            convsel_wino_tuning = saved;
        }
        convsel_timed_fn fns[MAX_CANDIDATES];
        void *ctxs[MAX_CANDIDATES];
        convsel_timing res[MAX_CANDIDATES];
        for (int k = 0; k < n; k++) {
            fns[k] = candidate_run;
            ctxs[k] = &cands[k];
        }
        convsel_timing_options opts;
        convsel_timing_options_default(&opts);
        opts.max_time_s = max_time;
        opts.max_rounds = 200;
        convsel_status st = cpu_time ? time_cpu((size_t)n, cands, max_time, res)
                                     : convsel_time_interleaved((size_t)n, fns, ctxs, &opts, res);
        printf("%s  (%.2f GFLOP)\n", p.name[0] ? p.name : argv[a], convsel_problem_flops(&p) / 1e9);
        if (st != CONVSEL_OK) {
            fprintf(stderr, "bench_winograd: timing: %s\n", convsel_last_error());
            return 1;
        }
        int w4 = -1;
        for (int k = 0; k < n; k++)
            if (strcmp(cands[k].label, "winograd_4x4_3x3") == 0)
                w4 = k;
        for (int k = 0; k < n; k++) {
            printf("  %-24s %9.3f ms min %9.3f ms median %7.1f GFLOP/s(direct-equiv)", cands[k].label,
                   res[k].min_ms, res[k].median_ms, convsel_problem_flops(&p) / (res[k].min_ms * 1e6));
            if (w4 >= 0 && k != w4)
                printf("  4x4 speedup %.2fx", res[k].min_ms / res[w4].min_ms);
            printf("\n");
            if (md)
                fprintf(md, "| %s | %s | %.3f | %.3f | %.2f |\n", k == 0 ? argv[a] : "", cands[k].label,
                        res[k].min_ms, res[k].median_ms, w4 >= 0 ? res[k].min_ms / res[w4].min_ms : 0.0);
        }
        fflush(stdout);
        for (int k = 0; k < n; k++)
            candidate_destroy(&cands[k]);
        free(src);
        free(w);
    }
    if (md)
        fclose(md);
    return 0;
}

int main(int argc, char **argv)
{
    int errors = 0, threads = 1, blas = 0, cpu_time = 0;
    double max_time = 3.0;
    const char *out = NULL;
    struct sweep sweep = {0};
    int i = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
        if (strcmp(argv[i], "--error") == 0)
            errors = 1;
        else if (strcmp(argv[i], "--blas") == 0)
            blas = 1;
        else if (strcmp(argv[i], "--cpu-time") == 0)
            cpu_time = 1;
        else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
            out = argv[++i];
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (strcmp(argv[i], "--max-time") == 0 && i + 1 < argc)
            max_time = atof(argv[++i]);
        else if (strcmp(argv[i], "--sweep") == 0 && i + 1 < argc) {
            if (!parse_sweep(argv[++i], &sweep)) {
                usage(stderr);
                return 2;
            }
        }
        else if (strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (errors)
        return run_errors(argc - i, argv + i, out);
    if (i == argc || threads < 1 || max_time <= 0) {
        usage(stderr);
        return 2;
    }
    if (cpu_time && threads != 1) {
        fprintf(stderr, "bench_winograd: --cpu-time needs --threads 1\n");
        return 2;
    }
    return run_timing(argc - i, argv + i, threads, max_time, blas, &sweep, out, cpu_time);
}
