/* convsel bench-layer: every primitive on one layer, timed interleaved. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: convsel bench-layer DESC [--threads N] [--mb N] [--primitives a,b,...]\n"
            "                               [--max-time S] [--warmup S] [--flush MIB] [--json]\n"
            "\n"
            "Times every applicable primitive on the layer DESC (a benchdnn descriptor such as\n"
            "mb1ic64ih56oc64oh56kh3ph1) against each other in interleaved rounds, and prints them\n"
            "fastest (lowest median) first, then the inapplicable ones with their reason, and\n"
            "the weights each keeps in kB (transformed by Winograd, blocked and padded, or plain).\n"
            "\n"
            "  --threads N        OpenMP threads per primitive (default 1)\n"
            "  --mb N             override the batch size of DESC\n"
            "  --primitives LIST  only these primitives (comma-separated; the reference only when named)\n"
            "  --max-time S       stop timing after S seconds once the minimum rounds are done (default 2)\n"
            "  --warmup S         warm-up per primitive before timing (default 0.05)\n"
            "  --flush MIB        before every timed run, write MIB MiB (at most 1024) of a buffer of its\n"
            "                     own, so that each run starts with the layer's data out of the caches\n"
            "                     those writes reach (default 0: off; they count towards --max-time)\n"
            "  --json             print {\"problem\", \"threads\", \"results\": [...]} instead of a table\n");
}

/* Exit code for a failed descriptor or argument: the user's input is at fault
 * (usage error) unless the library failed for another reason. */
static int status_exit_code(convsel_status st)
{
    switch (st) {
    case CONVSEL_PARSE_ERROR:
    case CONVSEL_UNSUPPORTED:
    case CONVSEL_INVALID_ARGUMENT:
    case CONVSEL_TOO_LARGE:
    case CONVSEL_NOT_FOUND:
        return CLI_USAGE;
    default:
        return CLI_FAIL;
    }
}

static int parse_long(const char *opt, const char *text, long lo, long hi, long *value)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (end == text || *end || errno || v < lo || v > hi) {
        fprintf(stderr, "convsel bench-layer: %s needs an integer in [%ld, %ld] (got '%s')\n", opt, lo, hi, text);
        return 0;
    }
    *value = v;
    return 1;
}

static int parse_seconds(const char *opt, const char *text, double *value)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end || errno || !(v >= 0.0) || v > 3600.0) {
        fprintf(stderr, "convsel bench-layer: %s needs seconds in [0, 3600] (got '%s')\n", opt, text);
        return 0;
    }
    *value = v;
    return 1;
}

/* Marks the primitives of a comma-separated list in selected. */
static int parse_primitives(const char *list, unsigned char *selected)
{
    char *copy = strdup(list);
    if (!copy) {
        fprintf(stderr, "convsel bench-layer: out of memory\n");
        return CLI_FAIL;
    }
    int rc = CLI_OK, any = 0;
    for (char *save = NULL, *name = strtok_r(copy, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        size_t i;
        if (convsel_primitive_find(name, &i) != CONVSEL_OK) {
            fprintf(stderr, "convsel bench-layer: %s\n", convsel_last_error());
            rc = CLI_USAGE;
            break;
        }
        selected[i] = 1;
        any = 1;
    }
    if (rc == CLI_OK && !any) {
        fprintf(stderr, "convsel bench-layer: --primitives needs at least one name\n");
        rc = CLI_USAGE;
    }
    free(copy);
    return rc;
}

/* JSON has no NaN or infinity. */
static void json_number(double x)
{
    if (isfinite(x))
        printf("%.6g", x);
    else
        fputs("null", stdout);
}

/* Applicable results first, fastest (lowest median) first; then the rest in
 * catalogue order. */
static const convsel_measurement *sort_base;

static int cmp_results(const void *a, const void *b)
{
    const convsel_measurement *x = &sort_base[*(const size_t *)a], *y = &sort_base[*(const size_t *)b];
    if (x->applicable != y->applicable)
        return y->applicable - x->applicable;
    if (x->applicable && x->timing.median_ms != y->timing.median_ms)
        return x->timing.median_ms < y->timing.median_ms ? -1 : 1;
    return (x->primitive > y->primitive) - (x->primitive < y->primitive);
}

static void print_json(const char *desc, int threads, const convsel_measurement *m, const size_t *order, size_t n)
{
    printf("{\"problem\": ");
    cli_json_string(desc);
    printf(", \"threads\": %d, \"results\": [", threads);
    for (size_t k = 0; k < n; k++) {
        const convsel_measurement *r = &m[order[k]];
        printf("%s{\"primitive\": ", k ? ", " : "");
        cli_json_string(convsel_primitive_name(r->primitive));
        printf(", \"family\": ");
        cli_json_string(convsel_primitive_family(r->primitive));
        if (r->applicable) {
            printf(", \"applicable\": true, \"min_ms\": ");
            json_number(r->timing.min_ms);
            printf(", \"median_ms\": ");
            json_number(r->timing.median_ms);
            printf(", \"gflops\": ");
            json_number(r->gflops);
            printf(", \"src_layout\": ");
            cli_json_string(convsel_layout_name(r->src_layout));
            printf(", \"dst_layout\": ");
            cli_json_string(convsel_layout_name(r->dst_layout));
            printf(", \"weights_bytes\": %zu", r->weights_bytes);
        } else {
            printf(", \"applicable\": false, \"reason\": ");
            cli_json_string(r->why);
        }
        putchar('}');
    }
    printf("]}\n");
}

static void print_table(const char *desc, int threads, const convsel_measurement *m, const size_t *order, size_t n)
{
    printf("problem: %s\nthreads: %d\n\n", desc, threads);
    printf("%-20s %-12s %10s %10s %9s %6s %10s  %s\n", "primitive", "family", "min ms", "median ms", "GFLOP/s",
           "runs", "weights kB", "src -> dst");
    size_t k = 0;
    for (; k < n && m[order[k]].applicable; k++) {
        const convsel_measurement *r = &m[order[k]];
        char layouts[64];
        snprintf(layouts, sizeof layouts, "%s -> %s", convsel_layout_name(r->src_layout),
                 convsel_layout_name(r->dst_layout));
        printf("%-20s %-12s %10.4f %10.4f %9.2f %6d %10.1f  %s\n", convsel_primitive_name(r->primitive),
               convsel_primitive_family(r->primitive), r->timing.min_ms, r->timing.median_ms, r->gflops,
               r->timing.runs, (double)r->weights_bytes / 1e3, layouts);
    }
    if (k == 0)
        printf("(no applicable primitive)\n");
    if (k < n)
        printf("\nnot applicable:\n");
    for (; k < n; k++)
        printf("  %-20s %s\n", convsel_primitive_name(m[order[k]].primitive), m[order[k]].why);
}

int cmd_bench_layer(int argc, char **argv)
{
    const char *desc = NULL, *primitives = NULL;
    long threads = 1, mb = 0;
    int json = 0;
    convsel_timing_options opts;
    convsel_timing_options_default(&opts);

    for (int a = 1; a < argc; a++) {
        const char *arg = argv[a];
        int has_value = a + 1 < argc;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout);
            return CLI_OK;
        } else if (strcmp(arg, "--json") == 0) {
            json = 1;
        } else if (strcmp(arg, "--threads") == 0 || strcmp(arg, "--mb") == 0 || strcmp(arg, "--primitives") == 0 ||
                   strcmp(arg, "--max-time") == 0 || strcmp(arg, "--warmup") == 0 || strcmp(arg, "--flush") == 0) {
            if (!has_value) {
                fprintf(stderr, "convsel bench-layer: %s needs a value\n", arg);
                return CLI_USAGE;
            }
            const char *value = argv[++a];
            int ok = 1;
            if (strcmp(arg, "--threads") == 0)
                ok = parse_long(arg, value, 1, 1024, &threads);
            else if (strcmp(arg, "--mb") == 0)
                ok = parse_long(arg, value, 1, 1L << 20, &mb);
            else if (strcmp(arg, "--max-time") == 0)
                ok = parse_seconds(arg, value, &opts.max_time_s);
            else if (strcmp(arg, "--warmup") == 0)
                ok = parse_seconds(arg, value, &opts.warmup_s);
            else if (strcmp(arg, "--flush") == 0) {
                long mib;
                if ((ok = parse_long(arg, value, 0, 1024, &mib)))
                    opts.flush_bytes = (size_t)mib << 20;
            } else
                primitives = value;
            if (!ok)
                return CLI_USAGE;
        } else if (arg[0] == '-' && arg[1] == '-') {
            fprintf(stderr, "convsel bench-layer: unknown option '%s'\n", arg);
            return CLI_USAGE;
        } else if (desc) {
            fprintf(stderr, "convsel bench-layer: one descriptor only (got '%s' and '%s')\n", desc, arg);
            return CLI_USAGE;
        } else {
            desc = arg;
        }
    }
    if (!desc) {
        usage(stderr);
        return CLI_USAGE;
    }

    convsel_network *net = NULL;
    convsel_status st = convsel_network_from_desc(desc, mb, &net);
    if (st != CONVSEL_OK) {
        fprintf(stderr, "convsel bench-layer: %s: %s\n", convsel_status_str(st), convsel_last_error());
        return status_exit_code(st);
    }
    const convsel_problem *problem = convsel_network_layer(net, 0);

    const size_t count = convsel_primitive_count();
    unsigned char *selected = calloc(count ? count : 1, 1);
    convsel_measurement *m = calloc(count ? count : 1, sizeof *m);
    size_t *order = calloc(count ? count : 1, sizeof *order);
    int rc = CLI_OK;
    if (!selected || !m || !order) {
        fprintf(stderr, "convsel bench-layer: out of memory\n");
        rc = CLI_FAIL;
        goto done;
    }
    if (primitives) {
        rc = parse_primitives(primitives, selected);
        if (rc != CLI_OK)
            goto done;
    }

    st = convsel_measure_problem(problem, (int)threads, primitives ? selected : NULL, &opts, m);
    if (st != CONVSEL_OK) {
        fprintf(stderr, "convsel bench-layer: %s: %s\n", convsel_status_str(st), convsel_last_error());
        rc = CLI_FAIL;
        goto done;
    }

    /* Unselected primitives are not listed at all. */
    size_t n = 0;
    for (size_t i = 0; i < count; i++)
        if (primitives ? selected[i] : !convsel_primitive_is_reference(i))
            order[n++] = i;
    sort_base = m;
    qsort(order, n, sizeof *order, cmp_results);

    char canonical[512];
    convsel_problem_format(problem, canonical, sizeof canonical);
    if (json)
        print_json(canonical, (int)threads, m, order, n);
    else
        print_table(canonical, (int)threads, m, order, n);

done:
    free(selected);
    free(m);
    free(order);
    convsel_network_destroy(net);
    return rc;
}
