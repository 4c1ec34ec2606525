/* convsel run: execute a plan end to end and report its latency. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: convsel run --net FILE --plan PLAN [--max-time S] [--check] [--json]\n"
                 "\n"
                 "Creates every layer's primitive of PLAN (random weights and input), runs the\n"
                 "network's convolutions in order with the reorders the plan implies, and reports\n"
                 "the median end-to-end latency over repeated runs.\n"
                 "\n"
                 "  --net FILE    the network the plan was made for (checked against the plan)\n"
                 "  --plan PLAN   a plan file from 'convsel select -o'\n"
                 "  --max-time S  time spent measuring after warm-up (default 3)\n"
                 "  --check       first one pass checked layer by layer against the reference\n"
                 "                convolution (slow: plain loops); a wrong result fails the run\n"
                 "  --json        print {\"network\", \"median_ms\", \"min_ms\", ...}\n");
}

static convsel_status run_once(void *ctx)
{
    return convsel_runner_run(ctx);
}

/* The plan must describe the network's expanded layer sequence. */
static int plan_matches(const convsel_plan *plan, const convsel_network *net)
{
    size_t k = 0;
    for (size_t l = 0; l < convsel_network_size(net); l++) {
        const convsel_problem *p = convsel_network_layer(net, l);
        for (int r = 0; r < p->repeat; r++, k++) {
            if (k >= plan->n_layers)
                return 0;
            convsel_problem a = *p, b = plan->layers[k].problem;
            a.repeat = b.repeat = 1;
            a.name[0] = b.name[0] = '\0';
            if (memcmp(&a, &b, sizeof a) != 0) {
                fprintf(stderr, "convsel run: layer %zu of the plan is not layer %zu of the network\n", k + 1,
                        l + 1);
                return 0;
            }
        }
    }
    return k == plan->n_layers;
}

int cmd_run(int argc, char **argv)
{
    const char *net_file = NULL, *plan_file = NULL;
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
            if (!(plan_file = cli_value("run", argc, argv, &i)))
                return CLI_USAGE;
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
    if (!net_file || !plan_file) {
        fprintf(stderr, "convsel run: --net FILE and --plan PLAN are required\n");
        return CLI_USAGE;
    }
    convsel_plan *plan = NULL;
    convsel_network *net = NULL;
    convsel_status st = convsel_plan_load(plan_file, &plan);
    if (st != CONVSEL_OK)
        return cli_fail("run", st);
    int rc = cli_load_network("run", net_file, NULL, plan->mb, &net);
    if (rc != CLI_OK) {
        convsel_plan_destroy(plan);
        return rc;
    }
    if (!plan_matches(plan, net)) {
        fprintf(stderr, "convsel run: plan %s was not made for network %s at mb%lld\n", plan_file, net_file,
                (long long)plan->mb);
        convsel_plan_destroy(plan);
        convsel_network_destroy(net);
        return CLI_FAIL;
    }
    convsel_fingerprint here;
    if (convsel_fingerprint_get(&here) == CONVSEL_OK && !convsel_fingerprint_same_cpu(&here, &plan->cpu))
        fprintf(stderr,
                "convsel run: warning: the plan was made on another CPU (%s, %s) than this one (%s, %s); "
                "its choices may not be the fastest here\n",
                plan->cpu.model_name, convsel_isa_name(plan->cpu.isa_cap), here.model_name,
                convsel_isa_name(here.isa_cap));
    else if (!convsel_fingerprint_same_setup(&here, &plan->cpu))
        fprintf(stderr,
                "convsel run: warning: the plan was made with OpenBLAS's %s kernels and this process runs its %s "
                "ones (OPENBLAS_CORETYPE); the GEMM primitives' times differ\n",
                cli_blas_isa_name(&plan->cpu), cli_blas_isa_name(&here));

    convsel_runner *runner = NULL;
    st = convsel_runner_create(plan, 1, &runner);
    convsel_timing timing = {0};
    double worst = -1.0;
    if (st == CONVSEL_OK && check)
        st = convsel_runner_check(runner, &worst);
    if (st == CONVSEL_OK) {
        convsel_timing_options opts;
        convsel_timing_options_default(&opts);
        opts.max_time_s = max_time;
        opts.warmup_s = 0.2;
        opts.min_rounds = 5;
        convsel_timed_fn fn = run_once;
        void *ctx[1] = {runner};
        st = convsel_time_interleaved(1, &fn, ctx, &opts, &timing);
    }
    if (st != CONVSEL_OK) {
        rc = cli_fail("run", st);
    } else if (json) {
        printf("{\"network\": \"%s\", \"mb\": %lld, \"threads\": %d, \"layers\": %zu, \"reorders\": %zu, "
               "\"median_ms\": %.4f, \"min_ms\": %.4f, \"p10_ms\": %.4f, \"p90_ms\": %.4f, \"runs\": %d",
               convsel_network_name(net), (long long)plan->mb, plan->threads, plan->n_layers,
               convsel_runner_reorder_count(runner), timing.median_ms, timing.min_ms, timing.p10_ms, timing.p90_ms,
               timing.runs);
        if (check)
            printf(", \"checked\": true, \"worst_error_of_bound\": %.4g", worst);
        printf("}\n");
    } else {
        printf("network %s: %zu layers, %zu reorders, mb%lld, %d thread%s\n", convsel_network_name(net),
               plan->n_layers, convsel_runner_reorder_count(runner), (long long)plan->mb, plan->threads,
               plan->threads == 1 ? "" : "s");
        if (check)
            printf("checked: every layer matches the reference convolution (the worst at %.2g of its bound), every "
                   "tensor reached the next layer intact\n",
                   worst);
        printf("median %.3f ms  (min %.3f, p10 %.3f, p90 %.3f; %d runs)\n", timing.median_ms, timing.min_ms,
               timing.p10_ms, timing.p90_ms, timing.runs);
    }
    convsel_runner_destroy(runner);
    convsel_network_destroy(net);
    convsel_plan_destroy(plan);
    return rc;
}
