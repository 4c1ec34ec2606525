/* convsel run: execute plans end to end and report their latencies. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Plans one run may time side by side. */
#define MAX_PLANS 8

static void usage(FILE *out)
{
    fprintf(out, "usage: convsel run --net FILE --plan PLAN [--plan PLAN ...] [--max-time S] [--check] [--json]\n"
                 "\n"
                 "Creates every layer's primitive of PLAN (random weights and input), runs the\n"
                 "network's convolutions in order with the reorders the plan implies, and reports\n"
                 "the median end-to-end latency over repeated runs.\n"
                 "\n"
                 "With several plans (up to %d, all made for the network at one batch), each gets\n"
                 "its own weights and buffers and they are timed interleaved in one process\n"
                 "(A B C A B C ...), to a median known within about 1%%: a slow spell of the\n"
                 "machine falls on all of them alike, so compare their ratios, which are given\n"
                 "against the first plan.\n"
                 "\n"
                 "  --net FILE    the network the plans were made for (checked against each)\n"
                 "  --plan PLAN   a plan file from 'convsel select -o' (repeatable)\n"
                 "  --max-time S  time spent measuring after warm-up (default 3)\n"
                 "  --check       first one pass of each plan checked layer by layer against the\n"
                 "                reference convolution (slow: plain loops); a wrong result fails the run\n"
                 "  --json        print {\"network\", \"median_ms\", \"min_ms\", ...}; with several plans\n"
                 "                {\"network\", \"mb\", \"layers\", \"plans\": [{\"plan\", \"threads\",\n"
                 "                \"reorders\", \"median_ms\", ..., \"vs_first\"}, ...]}\n",
            MAX_PLANS);
}

static convsel_status run_once(void *ctx)
{
    return convsel_runner_run(ctx);
}

/* A warning on stderr when the plan was made on another CPU or setup. */
static void warn_foreign(const convsel_plan *plan, const char *file, const convsel_fingerprint *here)
{
    char diff[384];
    if (convsel_fingerprint_diff(here, &plan->cpu, diff, sizeof diff))
        fprintf(stderr,
                "convsel run: warning: %s was made on another CPU (%s, %s) than this one (%s, %s), which differs "
                "in %s; its choices may not be the fastest here\n",
                file, plan->cpu.model_name, convsel_isa_name(plan->cpu.isa_cap), here->model_name,
                convsel_isa_name(here->isa_cap), diff);
    else if (!convsel_fingerprint_same_setup(here, &plan->cpu))
        fprintf(stderr,
                "convsel run: warning: %s was made with OpenBLAS's %s kernels and this process runs its %s "
                "ones (OPENBLAS_CORETYPE); the GEMM primitives' times differ\n",
                file, cli_blas_isa_name(&plan->cpu), cli_blas_isa_name(here));
}

/* One plan's line of the JSON with several plans. */
static void json_plan(const char *file, const convsel_plan *plan, const convsel_runner *runner,
                      const convsel_timing *t, double first_ms, int check, double worst)
{
    printf("{\"plan\": ");
    cli_json_string(file);
    printf(", \"threads\": %d, \"reorders\": %zu, \"median_ms\": %.4f, \"min_ms\": %.4f, \"p10_ms\": %.4f, "
           "\"p90_ms\": %.4f, \"runs\": %d, \"vs_first\": %.4f",
           plan->threads, convsel_runner_reorder_count(runner), t->median_ms, t->min_ms, t->p10_ms, t->p90_ms,
           t->runs, first_ms > 0 ? t->median_ms / first_ms : 0.0);
    if (check)
        printf(", \"checked\": true, \"worst_error_of_bound\": %.4g", worst);
    putchar('}');
}

static void print_results(const convsel_network *net, const char *const *files, convsel_plan *const *plans,
                          convsel_runner *const *runners, const convsel_timing *timing, size_t n, int json,
                          int check, const double *worst)
{
    const convsel_plan *first = plans[0];
    if (json && n == 1) {
        printf("{\"network\": \"%s\", \"mb\": %lld, \"threads\": %d, \"layers\": %zu, \"reorders\": %zu, "
               "\"median_ms\": %.4f, \"min_ms\": %.4f, \"p10_ms\": %.4f, \"p90_ms\": %.4f, \"runs\": %d",
               convsel_network_name(net), (long long)first->mb, first->threads, first->n_layers,
               convsel_runner_reorder_count(runners[0]), timing[0].median_ms, timing[0].min_ms, timing[0].p10_ms,
               timing[0].p90_ms, timing[0].runs);
        if (check)
            printf(", \"checked\": true, \"worst_error_of_bound\": %.4g", worst[0]);
        printf("}\n");
    } else if (json) {
        printf("{\"network\": \"%s\", \"mb\": %lld, \"layers\": %zu, \"plans\": [", convsel_network_name(net),
               (long long)first->mb, first->n_layers);
        for (size_t i = 0; i < n; i++) {
            if (i)
                fputs(", ", stdout);
            json_plan(files[i], plans[i], runners[i], &timing[i], timing[0].median_ms, check, worst[i]);
        }
        printf("]}\n");
    } else if (n == 1) {
        printf("network %s: %zu layers, %zu reorders, mb%lld, %d thread%s\n", convsel_network_name(net),
               first->n_layers, convsel_runner_reorder_count(runners[0]), (long long)first->mb, first->threads,
               first->threads == 1 ? "" : "s");
        if (check)
            printf("checked: every layer matches the reference convolution (the worst at %.2g of its bound), every "
                   "tensor reached the next layer intact\n",
                   worst[0]);
        printf("median %.3f ms  (min %.3f, p10 %.3f, p90 %.3f; %d runs)\n", timing[0].median_ms, timing[0].min_ms,
               timing[0].p10_ms, timing[0].p90_ms, timing[0].runs);
    } else {
        printf("network %s: %zu layers, mb%lld; %zu plans timed interleaved in one process (compare the ratios)\n",
               convsel_network_name(net), first->n_layers, (long long)first->mb, n);
        for (size_t i = 0; i < n; i++) {
            printf("plan %zu %s: %d thread%s, %zu reorders\n", i + 1, files[i], plans[i]->threads,
                   plans[i]->threads == 1 ? "" : "s", convsel_runner_reorder_count(runners[i]));
            if (check)
                printf("  checked: every layer matches the reference convolution (the worst at %.2g of its bound), "
                       "every tensor reached the next layer intact\n",
                       worst[i]);
            printf("  median %.3f ms  (min %.3f, p10 %.3f, p90 %.3f; %d runs)", timing[i].median_ms,
                   timing[i].min_ms, timing[i].p10_ms, timing[i].p90_ms, timing[i].runs);
            if (i > 0 && timing[0].median_ms > 0)
                printf(", %.3fx plan 1's", timing[i].median_ms / timing[0].median_ms);
            putchar('\n');
        }
    }
}

int cmd_run(int argc, char **argv)
{
    const char *net_file = NULL, *files[MAX_PLANS];
    size_t n = 0;
    double max_time = 3.0;
    int json = 0, check = 0;
    for (int i = 1; i < argc; i++) {
        const char *v;
        if (cli_is_help(argv[i])) {
            usage(stdout);
            return CLI_OK;
        } else if (!strcmp(argv[i], "--net")) {
            if (!(net_file = cli_value("run", argc, argv, &i)))
                return CLI_USAGE;
        } else if (!strcmp(argv[i], "--plan")) {
            if (!(v = cli_value("run", argc, argv, &i)))
                return CLI_USAGE;
            if (n == MAX_PLANS) {
                fprintf(stderr, "convsel run: at most %d --plan files\n", MAX_PLANS);
                return CLI_USAGE;
            }
            files[n++] = v;
        } else if (!strcmp(argv[i], "--max-time")) {
            if (!(v = cli_value("run", argc, argv, &i)) || !cli_parse_double("run", "--max-time", v, 0.0, 3600.0, &max_time))
                return CLI_USAGE;
        } else if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else if (!strcmp(argv[i], "--check")) {
            check = 1;
        } else {
            fprintf(stderr, "convsel run: unknown argument '%s'\n", argv[i]);
            usage(stderr);
            return CLI_USAGE;
        }
    }
    if (!net_file || n == 0) {
        fprintf(stderr, "convsel run: --net FILE and --plan PLAN are required\n");
        return CLI_USAGE;
    }
    convsel_plan *plans[MAX_PLANS] = {0};
    convsel_runner *runners[MAX_PLANS] = {0};
    convsel_network *net = NULL;
    int rc = CLI_OK;
    convsel_status st = CONVSEL_OK;
    for (size_t i = 0; i < n && rc == CLI_OK; i++) {
        if ((st = convsel_plan_load(files[i], &plans[i])) != CONVSEL_OK)
            rc = cli_fail("run", st);
        else if (plans[i]->mb != plans[0]->mb) {
            fprintf(stderr, "convsel run: plan %s is at mb%lld, plan %s at mb%lld: one network, one batch\n",
                    files[i], (long long)plans[i]->mb, files[0], (long long)plans[0]->mb);
            rc = CLI_FAIL;
        }
    }
    if (rc == CLI_OK)
        rc = cli_load_network("run", net_file, NULL, plans[0]->mb, &net);
    for (size_t i = 0; i < n && rc == CLI_OK; i++)
        if (!cli_plan_matches(plans[i], net, "run")) {
            fprintf(stderr, "convsel run: plan %s was not made for network %s at mb%lld\n", files[i], net_file,
                    (long long)plans[i]->mb);
            rc = CLI_FAIL;
        }
    convsel_fingerprint here;
    if (rc == CLI_OK && convsel_fingerprint_get(&here) == CONVSEL_OK)
        for (size_t i = 0; i < n; i++)
            warn_foreign(plans[i], files[i], &here);

    /* Each plan its own runner (weights, buffers): one sharing the weights
     * of the plan run before it would find them in cache. */
    double worst[MAX_PLANS];
    convsel_timing timing[MAX_PLANS] = {{0}};
    for (size_t i = 0; i < n && rc == CLI_OK && st == CONVSEL_OK; i++) {
        worst[i] = -1.0;
        st = convsel_runner_create(plans[i], 1, &runners[i]);
        if (st == CONVSEL_OK && check)
            st = convsel_runner_check(runners[i], &worst[i]);
        if (st != CONVSEL_OK && n > 1)
            fprintf(stderr, "convsel run: plan %s:\n", files[i]);
    }
    if (rc == CLI_OK && st == CONVSEL_OK) {
        convsel_timing_options opts;
        convsel_timing_options_default(&opts);
        opts.max_time_s = max_time;
        opts.warmup_s = 0.2;
        opts.min_rounds = 5;
        if (n > 1)
            opts.target_rel_ci = 0.01; /* side by side, a few percent is the difference asked about */
        convsel_timed_fn fns[MAX_PLANS];
        void *ctxs[MAX_PLANS];
        for (size_t i = 0; i < n; i++) {
            fns[i] = run_once;
            ctxs[i] = runners[i];
        }
        st = convsel_time_interleaved(n, fns, ctxs, &opts, timing);
    }
    if (rc == CLI_OK && st != CONVSEL_OK)
        rc = cli_fail("run", st);
    else if (rc == CLI_OK)
        print_results(net, files, plans, runners, timing, n, json, check, worst);
    for (size_t i = 0; i < n; i++) {
        convsel_runner_destroy(runners[i]);
        convsel_plan_destroy(plans[i]);
    }
    convsel_network_destroy(net);
    return rc;
}
