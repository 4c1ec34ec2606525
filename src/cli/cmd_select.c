/* convsel select: the fastest primitive per layer, from the model. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: convsel select --net FILE [--mb N] [--threads N] [--model M] [--max-error E]\n"
            "                      [--exclude LIST] [--verify K] [--alone] [--uncertainty U] [--check]\n"
            "                      [--check-time S]\n"
            "                      [-o PLAN] [--quiet]\n"
            "\n"
            "Predicts every applicable primitive on every layer and chooses by dynamic programming\n"
            "along the layer sequence, counting the reorders between layouts (docs/selection.md).\n"
            "\n"
            "  --net FILE       network file (one benchdnn descriptor per line; '*N' = N consecutive copies)\n"
            "  --mb N           override every layer's batch\n"
            "  --threads N      threads per primitive (default 1)\n"
            "  --model M        model file (default: the shipped models/default.msgpack)\n"
            "  --max-error E    exclude primitives whose expected relative error exceeds E\n"
            "  --exclude LIST   exclude primitives or families by name (comma-separated)\n"
            "  --verify K       where the best predictions are too close to call, time the top K\n"
            "                   and oneDNN alone's choice interleaved, alone and then inside the\n"
            "                   network (the model's plan and up to K + 1 variants of it, run\n"
            "                   interleaved), and choose by measurement\n"
            "  --alone          with --verify, choose by the times alone (no runs of the network)\n"
            "  --uncertainty U  the model's relative uncertainty for --verify (default: the model's own)\n"
            "  --check          then run the whole network with the model's plan, the verified plan\n"
            "                   (with --verify) and oneDNN alone, interleaved, and keep the fastest\n"
            "  --check-time S   seconds of --check's end-to-end timing (default 2)\n"
            "  -o PLAN          write the plan (JSON, docs/plan-format.md)\n"
            "  --quiet          no table\n");
}

int cli_open_model(const char *cmd, const char *path, convsel_model **model)
{
    char found[4096];
    convsel_status st;
    if (!path) {
        st = convsel_model_default_path(found, sizeof found);
        if (st != CONVSEL_OK)
            return cli_fail(cmd, st);
        path = found;
    }
    st = convsel_model_load(path, model);
    if (st != CONVSEL_OK)
        return cli_fail(cmd, st);
    return CLI_OK;
}

int cli_model_describes(const convsel_model *model, const convsel_fingerprint *here,
                        const convsel_fingerprint **same_cpu)
{
    const convsel_fingerprint *found = NULL;
    for (size_t i = 0; i < convsel_model_fingerprint_count(model); i++) {
        const convsel_fingerprint *fp = convsel_model_fingerprint(model, i);
        if (convsel_fingerprint_same_setup(fp, here))
            return 1;
        if (convsel_fingerprint_same_cpu(fp, here))
            found = fp;
    }
    if (same_cpu)
        *same_cpu = found;
    return 0;
}

const char *cli_blas_isa_name(const convsel_fingerprint *fp)
{
    int isa = convsel_fingerprint_blas_isa(fp);
    return isa < 0 ? "unknown" : convsel_isa_name((convsel_isa)isa);
}

uint64_t cli_calibrated_threads(const convsel_model *model, const convsel_fingerprint *here)
{
    convsel_calibration_info info;
    for (size_t i = 0; i < convsel_model_calibration_count(model); i++)
        if (convsel_model_calibration(model, i, &info) == CONVSEL_OK && convsel_fingerprint_same_cpu(&info.cpu, here))
            return info.threads_mask;
    return 0;
}

void cli_threads_text(uint64_t mask, char *buf, size_t size)
{
    int n = 0, total = 0, one = 0;
    size_t len = 0;
    for (int b = 0; b < 64; b++)
        total += (int)(mask >> b & 1);
    buf[0] = '\0';
    for (int b = 0; b < 64 && len < size; b++) {
        if (!(mask >> b & 1))
            continue;
        one = b == 0 && total == 1;
        n++;
        len += (size_t)snprintf(buf + len, size - len, "%s%d%s", n == 1 ? "" : n == total ? " and " : ", ", b + 1,
                                b == 63 ? " or more" : "");
    }
    if (len < size)
        snprintf(buf + len, size - len, " thread%s", one ? "" : "s");
}

void cli_warn_cpu(const char *cmd, const convsel_model *model, const convsel_fingerprint *here, int threads)
{
    const convsel_fingerprint *same_cpu;
    if (cli_model_describes(model, here, &same_cpu)) {
        uint64_t mask = cli_calibrated_threads(model, here);
        if (threads > 0 && mask && !(mask & convsel_threads_bit(threads))) {
            /* Worded as calibrate --if-needed words it. */
            char had[256], want[64];
            cli_threads_text(mask, had, sizeof had);
            cli_threads_text(convsel_threads_bit(threads), want, sizeof want);
            fprintf(stderr,
                    "convsel %s: note: the model's calibration measured this CPU at %s, not %s: its prices at %s "
                    "are extrapolated; 'convsel calibrate --threads %d' fits it to them\n",
                    cmd, had, want, want, threads);
        }
        return;
    }
    if (same_cpu) {
        fprintf(stderr,
                "convsel %s: note: the model measured this CPU with OpenBLAS's %s kernels and this process runs "
                "its %s ones (OPENBLAS_CORETYPE); 'convsel calibrate' adapts it from a few measurements\n",
                cmd, cli_blas_isa_name(same_cpu), cli_blas_isa_name(here));
        return;
    }
    char text[512];
    cli_foreign_cpu_text(model, here, text, sizeof text);
    fprintf(stderr, "convsel %s: note: %s; 'convsel calibrate' adapts it from a few measurements\n", cmd, text);
}

void cli_foreign_cpu_text(const convsel_model *model, const convsel_fingerprint *here, char *buf, size_t size)
{
    /* The nearest of the model's CPUs: the fewest fields apart. */
    size_t n = convsel_model_fingerprint_count(model), cpus = 0;
    const convsel_fingerprint *nearest = NULL;
    int fewest = 0;
    for (size_t i = 0; i < n; i++) {
        const convsel_fingerprint *fp = convsel_model_fingerprint(model, i);
        size_t k = 0;
        while (k < i && !convsel_fingerprint_same_cpu(convsel_model_fingerprint(model, k), fp))
            k++;
        cpus += k == i; /* setups of one CPU (OpenBLAS's kernels) count once */
        int d = convsel_fingerprint_diff(here, fp, NULL, 0);
        if (!nearest || d < fewest)
            nearest = fp, fewest = d;
    }
    if (!nearest) {
        snprintf(buf, size, "the model names no CPU it was trained on");
        return;
    }
    char diff[384];
    convsel_fingerprint_diff(here, nearest, diff, sizeof diff);
    if (cpus == 1)
        snprintf(buf, size, "the model was trained on another CPU than this one (%s, %s): this one differs in %s",
                 here->model_name, convsel_isa_name(here->isa_cap), diff);
    else
        snprintf(buf, size,
                 "the model was trained on %zu CPUs, not this one (%s, %s): the nearest of them differs in %s", cpus,
                 here->model_name, convsel_isa_name(here->isa_cap), diff);
}

void cli_print_plan(const convsel_plan *plan)
{
    printf("%-4s %-34s %-17s %10s %10s %-17s %10s\n", "#", "layer", "primitive", "conv_ms", "reorder_ms", "runner-up",
           "margin_ms");
    for (size_t i = 0; i < plan->n_layers; i++) {
        const convsel_plan_layer *l = &plan->layers[i];
        printf("%-4zu %-34.34s %-17s %10.4f %10.4f %-17s %10.4f%s\n", i + 1, l->problem.name[0] ? l->problem.name : "-",
               l->primitive, l->conv_ms, l->reorder_in_ms + l->reorder_out_ms, l->runner_up[0] ? l->runner_up : "-",
               l->runner_up[0] ? l->runner_up_margin_ms : 0.0, l->verified ? "  (verified)" : "");
    }
    double cold = 0.0;
    for (size_t i = 0; i < plan->n_layers; i++)
        cold += plan->layers[i].cold_in_ms;
    printf("total %.4f ms (convolutions %.4f, reorders %.4f", plan->total_ms, plan->total_ms - plan->reorder_ms,
           plan->reorder_ms - cold);
    if (cold > 0)
        printf(", cold reads %.4f", cold);
    printf("), boundary layout %s\n", convsel_layout_name(plan->boundary_layout));
}

int cmd_select(int argc, char **argv)
{
    const char *net_file = NULL, *model_file = NULL, *out = NULL, *exclude = NULL, *v;
    long mb = 0, threads = 1, verify = 0;
    double max_error = 0.0, uncertainty = -1.0, check_time = 2.0;
    int quiet = 0, check = 0, alone = 0;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            usage(stdout);
            return CLI_OK;
        } else if (!strcmp(argv[i], "--net")) {
            if (!(net_file = cli_value("select", argc, argv, &i)))
                return CLI_USAGE;
        } else if (!strcmp(argv[i], "--model")) {
            if (!(model_file = cli_value("select", argc, argv, &i)))
                return CLI_USAGE;
        } else if (!strcmp(argv[i], "-o")) {
            if (!(out = cli_value("select", argc, argv, &i)))
                return CLI_USAGE;
        } else if (!strcmp(argv[i], "--exclude")) {
            if (!(exclude = cli_value("select", argc, argv, &i)))
                return CLI_USAGE;
        } else if (!strcmp(argv[i], "--mb")) {
            if (!(v = cli_value("select", argc, argv, &i)) || !cli_parse_long("select", "--mb", v, 1, 1 << 20, &mb))
                return CLI_USAGE;
        } else if (!strcmp(argv[i], "--threads")) {
            if (!(v = cli_value("select", argc, argv, &i)) ||
                !cli_parse_long("select", "--threads", v, 1, 1024, &threads))
                return CLI_USAGE;
        } else if (!strcmp(argv[i], "--verify")) {
            if (!(v = cli_value("select", argc, argv, &i)) || !cli_parse_long("select", "--verify", v, 0, 64, &verify))
                return CLI_USAGE;
        } else if (!strcmp(argv[i], "--max-error")) {
            if (!(v = cli_value("select", argc, argv, &i)) ||
                !cli_parse_double("select", "--max-error", v, 0.0, 1.0, &max_error))
                return CLI_USAGE;
        } else if (!strcmp(argv[i], "--uncertainty")) {
            if (!(v = cli_value("select", argc, argv, &i)) ||
                !cli_parse_double("select", "--uncertainty", v, 0.0, 10.0, &uncertainty))
                return CLI_USAGE;
        } else if (!strcmp(argv[i], "--alone")) {
            alone = 1;
        } else if (!strcmp(argv[i], "--check")) {
            check = 1;
        } else if (!strcmp(argv[i], "--check-time")) {
            if (!(v = cli_value("select", argc, argv, &i)) ||
                !cli_parse_double("select", "--check-time", v, 0.0, 600.0, &check_time))
                return CLI_USAGE;
        } else if (!strcmp(argv[i], "--quiet")) {
            quiet = 1;
        } else {
            fprintf(stderr, "convsel select: unknown argument '%s'\n", argv[i]);
            usage(stderr);
            return CLI_USAGE;
        }
    }
    if (!net_file) {
        fprintf(stderr, "convsel select: --net FILE is required\n");
        return CLI_USAGE;
    }
    if (out && cli_check_output("select", "-o", out) != CLI_OK)
        return CLI_USAGE;
    size_t np = convsel_primitive_count();
    unsigned char *excluded = calloc(np, 1);
    convsel_network *net = NULL;
    convsel_model *model = NULL;
    convsel_plan *plan = NULL;
    int rc = excluded ? CLI_OK : CLI_FAIL;
    if (rc == CLI_OK && exclude)
        rc = cli_parse_primitive_set("select", exclude, excluded);
    if (rc == CLI_OK)
        rc = cli_load_network("select", net_file, NULL, mb, &net);
    if (rc == CLI_OK)
        rc = cli_open_model("select", model_file, &model);
    if (rc == CLI_OK) {
        convsel_model_costs mc = {.model = model};
        convsel_fingerprint_get(&mc.cpu);
        cli_warn_cpu("select", model, &mc.cpu, (int)threads);
        convsel_cost_source costs = convsel_model_costs_source(&mc);
        convsel_select_options opts = {(int)threads, max_error, excluded, 1, alone};
        if (uncertainty < 0.0)
            uncertainty = convsel_model_uncertainty(model);
        convsel_timing_options topts;
        convsel_timing_options_default(&topts);
        double t0 = cli_now();
        convsel_check_report report;
        convsel_status st =
            check    ? convsel_select_checked(net, &opts, &costs, (int)verify, uncertainty, &topts, check_time, &plan,
                                              &report)
            : verify ? convsel_select_verified(net, &opts, &costs, (int)verify, uncertainty, &topts, &plan)
                     : convsel_select(net, &opts, &costs, &plan);
        double select_ms = (cli_now() - t0) * 1e3;
        if (st != CONVSEL_OK) {
            rc = cli_fail("select", st);
        } else {
            if (!quiet) {
                cli_print_plan(plan);
                printf("selected in %.2f ms", select_ms);
                if (verify)
                    printf("; %zu layer%s verified by measurement in %.2f s", plan->verified_layers,
                           plan->verified_layers == 1 ? "" : "s", plan->verify_s);
                printf("\n");
                if (check) {
                    char kept[64], without[256];
                    cli_kept_name(&report, kept, sizeof kept);
                    cli_without_times(&report, " ms", without, sizeof without);
                    printf("checked end to end in %.2f s: %.3f ms (model plan) / %.3f ms (verified) / %.3f ms "
                           "(oneDNN alone)%s (0: not timed); kept the %s\n",
                           report.check_s, report.model_plan_ms, report.verified_ms, report.onednn_alone_ms, without,
                           kept);
                }
            }
            if (out && (st = convsel_plan_save(plan, out)) != CONVSEL_OK)
                rc = cli_fail("select", st);
        }
    }
    convsel_plan_destroy(plan);
    convsel_model_destroy(model);
    convsel_network_destroy(net);
    free(excluded);
    return rc;
}
