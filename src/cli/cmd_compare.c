/*
 * convsel compare: the proof. In one process, the model's plan against
 * oneDNN's own choice on every layer, the best single primitive, and the
 * oracle (every applicable primitive measured on every layer, the same
 * dynamic programming on measured costs), the four networks timed
 * interleaved end to end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: convsel compare --net FILE [--mb N] [--threads N] [--model M] [--verify K]\n"
            "                       [--alone] [--check] [--check-time S] [--max-time S]\n"
            "                       [--profile-time S] [--plans DIR] [--json]\n"
            "\n"
            "Times, interleaved in one process, the network run with (a) the model's plan,\n"
            "(b) onednn_auto on every layer, (c) the best single primitive on every layer and\n"
            "(d) the oracle plan from exhaustive profiling, and reports their latencies.\n"
            "\n"
            "  --net FILE        network file\n"
            "  --mb N            override every layer's batch\n"
            "  --threads N       threads per primitive (default 1)\n"
            "  --model M         model file (default: the shipped model)\n"
            "  --verify K        also time (a') the plan whose close calls were measured (the top K\n"
            "                    candidates, see convsel select); JSON adds verified_ms, verify_s, ...\n"
            "  --alone           with --verify, decide by the candidates' times alone, not inside the\n"
            "                    network (see convsel select); JSON: verify_in_place\n"
            "  --check           also time (a'') the checked plan: the fastest end to end of the\n"
            "                    model's plan, the verified plan and oneDNN alone (see convsel select);\n"
            "                    JSON adds checked_ms, check_kept, check_s, ...\n"
            "  --check-time S    seconds of --check's end-to-end timing (default 2)\n"
            "  --max-time S      seconds of interleaved end-to-end timing (default 5)\n"
            "  --profile-time S  time cap per layer of the oracle's profiling (default 1)\n"
            "  --plans DIR       also write every plan timed (model, onednn_auto, single_best,\n"
            "                    oracle, verified, checked) into DIR as NAME.plan.json, and\n"
            "                    NAME.layers.csv: each layer's predicted, measured (alone) and\n"
            "                    in-network time (the median over the end-to-end runs); DIR is\n"
            "                    created when missing (its parent must exist)\n"
            "  --json            print plan_ms, onednn_auto_ms, single_best_ms, single_best, oracle_ms,\n"
            "                    select_ms, oracle_profile_s, ...; each plan priced by the oracle's\n"
            "                    measurements too (*_measured_conv_ms, *_measured_reorder_ms)\n");
}

static convsel_status run_network(void *ctx)
{
    return convsel_runner_run(ctx);
}

static const char *const plan_files[] = {"model", "onednn_auto", "single_best", "oracle", "verified", "checked"};

/* PLAN's layers, one row each: the costs it was chosen by, the oracle's
 * measurement of its primitive there (the layer alone), and what the layer
 * took inside the network (RUNNER's timed passes). */
static int write_layers(const char *path, const convsel_plan *plan, const convsel_runner *runner,
                        const convsel_cost_source *measured)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "convsel compare: cannot write %s\n", path);
        return CLI_FAIL;
    }
    fprintf(f, "layer,name,primitive,src_layout,dst_layout,predicted_conv_ms,predicted_reorder_ms,"
               "alone_conv_ms,network_conv_ms,network_reorder_ms,predicted_cold_ms\n");
    convsel_status st = CONVSEL_OK;
    for (size_t i = 0; i < plan->n_layers && st == CONVSEL_OK; i++) {
        const convsel_plan_layer *l = &plan->layers[i];
        double alone = -1.0, conv = 0.0, reorder = 0.0;
        size_t idx;
        if (convsel_primitive_find(l->primitive, &idx) != CONVSEL_OK ||
            measured->conv_ms(measured->ctx, &l->problem, plan->threads, idx, &alone) != CONVSEL_OK)
            alone = -1.0;
        st = convsel_runner_layer_ms(runner, i, &conv, &reorder);
        fprintf(f, "%zu,%s,%s,%s,%s,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f\n", i + 1, l->problem.name, l->primitive,
                convsel_layout_name(l->src_layout), convsel_layout_name(l->dst_layout), l->conv_ms,
                l->reorder_in_ms + l->reorder_out_ms, alone, conv, reorder, l->cold_in_ms);
    }
    if (st != CONVSEL_OK) {
        fclose(f);
        return cli_fail("compare", st);
    }
    if (fclose(f) != 0) {
        fprintf(stderr, "convsel compare: cannot write %s\n", path);
        return CLI_FAIL;
    }
    return CLI_OK;
}

/* A plan priced by the oracle's measurements (what it really costs, layer by
 * layer); -1 where a layer could not be timed. */
static void price(const convsel_plan *plan, const convsel_cost_source *measured, double *conv, double *reorder)
{
    if (convsel_plan_price(plan, measured, conv, reorder) != CONVSEL_OK)
        *conv = *reorder = -1.0;
}

/* JSON keys PREFIX_measured_conv_ms and PREFIX_measured_reorder_ms (price),
 * and the reorder costs the plan was chosen by (PREFIX_predicted_reorder_ms). */
static void print_prices(const char *prefix, const convsel_plan *plan, double conv, double reorder)
{
    printf(", \"%s_measured_conv_ms\": %.4f, \"%s_measured_reorder_ms\": %.4f, \"%s_predicted_reorder_ms\": %.4f",
           prefix, conv, prefix, reorder, prefix, plan->reorder_ms);
}

static void print_priced(const char *prefix, const convsel_plan *plan, const convsel_cost_source *measured)
{
    double conv, reorder;
    price(plan, measured, &conv, &reorder);
    print_prices(prefix, plan, conv, reorder);
}

int cmd_compare(int argc, char **argv)
{
    const char *net_file = NULL, *model_file = NULL, *plans_dir = NULL, *v;
    long mb = 0, threads = 1, verify = 0;
    double max_time = 5.0, profile_time = 1.0, check_time = 2.0;
    int check = 0, alone = 0;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            usage(stdout);
            return CLI_OK;
        } else if (!strcmp(argv[i], "--net")) {
            if (!(net_file = cli_value("compare", argc, argv, &i)))
                return CLI_USAGE;
        } else if (!strcmp(argv[i], "--model")) {
            if (!(model_file = cli_value("compare", argc, argv, &i)))
                return CLI_USAGE;
        } else if (!strcmp(argv[i], "--mb")) {
            if (!(v = cli_value("compare", argc, argv, &i)) || !cli_parse_long("compare", "--mb", v, 1, 1 << 20, &mb))
                return CLI_USAGE;
        } else if (!strcmp(argv[i], "--threads")) {
            if (!(v = cli_value("compare", argc, argv, &i)) ||
                !cli_parse_long("compare", "--threads", v, 1, 1024, &threads))
                return CLI_USAGE;
        } else if (!strcmp(argv[i], "--verify")) {
            if (!(v = cli_value("compare", argc, argv, &i)) ||
                !cli_parse_long("compare", "--verify", v, 0, 64, &verify))
                return CLI_USAGE;
        } else if (!strcmp(argv[i], "--alone")) {
            alone = 1;
        } else if (!strcmp(argv[i], "--check")) {
            check = 1;
        } else if (!strcmp(argv[i], "--check-time")) {
            if (!(v = cli_value("compare", argc, argv, &i)) ||
                !cli_parse_double("compare", "--check-time", v, 0.0, 600.0, &check_time))
                return CLI_USAGE;
        } else if (!strcmp(argv[i], "--max-time")) {
            if (!(v = cli_value("compare", argc, argv, &i)) ||
                !cli_parse_double("compare", "--max-time", v, 0.1, 3600.0, &max_time))
                return CLI_USAGE;
        } else if (!strcmp(argv[i], "--profile-time")) {
            if (!(v = cli_value("compare", argc, argv, &i)) ||
                !cli_parse_double("compare", "--profile-time", v, 0.01, 600.0, &profile_time))
                return CLI_USAGE;
        } else if (!strcmp(argv[i], "--plans")) {
            if (!(plans_dir = cli_value("compare", argc, argv, &i)))
                return CLI_USAGE;
        } else if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else {
            fprintf(stderr, "convsel compare: unknown argument '%s'\n", argv[i]);
            usage(stderr);
            return CLI_USAGE;
        }
    }
    if (!net_file) {
        fprintf(stderr, "convsel compare: --net FILE is required\n");
        return CLI_USAGE;
    }
    if (plans_dir && cli_prepare_dir("compare", "--plans", plans_dir) != CLI_OK)
        return CLI_USAGE;

    enum { PLAN, AUTO, SINGLE, ORACLE, VERIFIED, CHECKED, N_PLANS };
    static const char *const labels[N_PLANS] = {"model plan", "onednn_auto", "single best",
                                                "oracle",     "verified plan", "checked plan"};
    convsel_plan *plans[N_PLANS] = {0};
    convsel_runner *runners[N_PLANS] = {0};
    convsel_timing timings[N_PLANS] = {{0}};
    convsel_network *net = NULL;
    convsel_model *model = NULL;
    convsel_measured_costs *measured = NULL;
    char single_name[32] = "";
    double select_ms = 0.0, verified_select_ms = 0.0, oracle_profile_s = 0.0, checked_select_ms = 0.0;
    convsel_check_report check_report = {0};
    size_t np = convsel_primitive_count();
    convsel_status st = CONVSEL_OK;

    int rc = cli_load_network("compare", net_file, NULL, mb, &net);
    if (rc == CLI_OK)
        rc = cli_open_model("compare", model_file, &model);
    if (rc != CLI_OK)
        goto done;

    /* (a) the model's plan, and how long choosing took. */
    convsel_model_costs mc = {.model = model};
    convsel_fingerprint_get(&mc.cpu);
    cli_warn_cpu("compare", model, &mc.cpu, (int)threads);
    convsel_cost_source model_costs = convsel_model_costs_source(&mc);
    convsel_select_options opts = {(int)threads, 0.0, NULL, 0, alone};
    convsel_timing_options topts;
    convsel_timing_options_default(&topts);
    topts.max_time_s = profile_time;
    double t0 = cli_now();
    st = convsel_select(net, &opts, &model_costs, &plans[PLAN]);
    select_ms = (cli_now() - t0) * 1e3;
    if (st != CONVSEL_OK)
        goto fail;
    /* (a') with --verify: the same plan where close calls were measured. */
    if (verify) {
        t0 = cli_now();
        st = convsel_select_verified(net, &opts, &model_costs, (int)verify, convsel_model_uncertainty(model), &topts,
                                     &plans[VERIFIED]);
        verified_select_ms = (cli_now() - t0) * 1e3;
        if (st != CONVSEL_OK)
            goto fail;
    }
    /* (a'') with --check: the fastest end to end of (a), (a') (without
     * --verify, (a) again, as convsel_select_checked does) and oneDNN alone.
     * Its time counts (a) and (a') too, which it reuses. */
    if (check) {
        t0 = cli_now();
        st = convsel_check_plans(net, &opts, &model_costs, plans[PLAN], verify ? plans[VERIFIED] : plans[PLAN],
                                 check_time, &plans[CHECKED], &check_report);
        checked_select_ms = (cli_now() - t0) * 1e3 + select_ms + verified_select_ms;
        if (st != CONVSEL_OK)
            goto fail;
    }
    /* The plans timed end to end: (a)-(d), then (a') when asked. The checked
     * plan (a'') is a copy of (a), (a') or oneDNN alone (b): it takes that
     * row's timing rather than being timed again, so that two runs of one
     * plan never show as two different results. */
    int timed[N_PLANS], n_timed = 0;
    for (int k = 0; k < N_PLANS; k++)
        if ((k != VERIFIED || verify) && k != CHECKED)
            timed[n_timed++] = k;
    /* A plan without one family is none of the rows: it is timed itself. */
    int checked_as = check_report.kept == CONVSEL_KEPT_ONEDNN_ALONE                ? AUTO
                     : check_report.kept == CONVSEL_KEPT_VERIFIED && verify        ? VERIFIED
                     : check && check_report.kept == CONVSEL_KEPT_WITHOUT_FAMILY ? CHECKED
                                                                                  : PLAN;
    if (checked_as == CHECKED)
        timed[n_timed++] = CHECKED;
    char kept_name[64] = "";
    if (check)
        cli_kept_name(&check_report, kept_name, sizeof kept_name);

    /* (d) the oracle: every applicable primitive measured on every layer. */
    if ((st = convsel_measured_costs_create(&topts, &measured)) != CONVSEL_OK)
        goto fail;
    convsel_cost_source measured_costs = convsel_measured_costs_source(measured);
    if (!json)
        fprintf(stderr, "convsel compare: profiling every primitive on every layer (the oracle)...\n");
    if ((st = convsel_select(net, &opts, &measured_costs, &plans[ORACLE])) != CONVSEL_OK)
        goto fail;
    oracle_profile_s = convsel_measured_costs_seconds(measured);

    /* (b) oneDNN alone, and (c) the best single primitive, both priced by the
     * measurements the oracle already made. */
    size_t auto_index;
    if ((st = convsel_primitive_find("onednn_auto", &auto_index)) != CONVSEL_OK)
        goto fail;
    if ((st = cli_single_plan(net, (int)threads, auto_index, &measured_costs, &plans[AUTO])) != CONVSEL_OK)
        goto fail;
    for (size_t i = 0; i < np; i++) {
        convsel_plan *candidate = NULL;
        if (convsel_primitive_is_reference(i))
            continue;
        convsel_status cs = cli_single_plan(net, (int)threads, i, &measured_costs, &candidate);
        if (cs == CONVSEL_OK && (!plans[SINGLE] || candidate->total_ms < plans[SINGLE]->total_ms)) {
            convsel_plan_destroy(plans[SINGLE]);
            plans[SINGLE] = candidate;
            snprintf(single_name, sizeof single_name, "%s", convsel_primitive_name(i));
        } else {
            convsel_plan_destroy(candidate);
        }
    }
    if (!plans[SINGLE]) {
        plans[SINGLE] = plans[AUTO];
        snprintf(single_name, sizeof single_name, "onednn_auto");
    }

    /* The networks, timed interleaved end to end. */
    convsel_timed_fn fns[N_PLANS];
    void *ctxs[N_PLANS];
    convsel_timing timed_results[N_PLANS];
    for (int j = 0; j < n_timed; j++) {
        int k = timed[j];
        /* Each its own, as --check's finalists (src/check.c). */
        if ((st = convsel_runner_create(plans[k], 1, &runners[k])) != CONVSEL_OK)
            goto fail;
        fns[j] = run_network;
        ctxs[j] = runners[k];
        if (plans_dir)
            convsel_runner_time_layers(runners[k], 1);
    }
    convsel_timing_options eopts;
    convsel_timing_options_default(&eopts);
    eopts.max_time_s = max_time;
    eopts.warmup_s = 0.3;
    eopts.min_rounds = 7;
    eopts.target_rel_ci = 0.01;
    if ((st = convsel_time_interleaved((size_t)n_timed, fns, ctxs, &eopts, timed_results)) != CONVSEL_OK)
        goto fail;
    for (int j = 0; j < n_timed; j++)
        timings[timed[j]] = timed_results[j];
    if (check && checked_as != CHECKED) {
        timings[CHECKED] = timings[checked_as];
        timed[n_timed++] = CHECKED;
    }

    double plan_measured, plan_measured_reorders;
    price(plans[PLAN], &measured_costs, &plan_measured, &plan_measured_reorders);
    for (int j = 0; plans_dir && j < n_timed; j++) {
        int k = timed[j];
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.plan.json", plans_dir, plan_files[k]);
        if ((st = convsel_plan_save(plans[k], path)) != CONVSEL_OK)
            goto fail;
        /* The checked plan copies a row: that row's runner timed it. */
        snprintf(path, sizeof path, "%s/%s.layers.csv", plans_dir, plan_files[k]);
        if ((rc = write_layers(path, plans[k], runners[k == CHECKED ? checked_as : k], &measured_costs)) != CLI_OK)
            goto done;
    }
    double speedup = timings[AUTO].median_ms / timings[PLAN].median_ms;
    double gap = timings[PLAN].median_ms / timings[ORACLE].median_ms - 1.0;
    if (json) {
        printf("{\"network\": \"%s\", \"mb\": %lld, \"threads\": %ld, \"layers\": %zu, \"plan_ms\": %.4f, "
               "\"onednn_auto_ms\": %.4f, \"single_best_ms\": %.4f, \"single_best\": \"%s\", \"oracle_ms\": %.4f, "
               "\"select_ms\": %.4f, \"oracle_profile_s\": %.3f, \"speedup_vs_onednn_auto\": %.4f, "
               "\"plan_vs_oracle\": %.4f, \"plan_predicted_ms\": %.4f, \"plan_layer_sum_measured_ms\": %.4f, "
               "\"model_id\": \"%s\"",
               convsel_network_name(net), (long long)plans[PLAN]->mb, threads, plans[PLAN]->n_layers,
               timings[PLAN].median_ms, timings[AUTO].median_ms, timings[SINGLE].median_ms, single_name,
               timings[ORACLE].median_ms, select_ms, oracle_profile_s, speedup, gap, plans[PLAN]->total_ms,
               plan_measured, convsel_model_id(model));
        print_prices("plan", plans[PLAN], plan_measured, plan_measured_reorders);
        print_priced("oracle", plans[ORACLE], &measured_costs);
        if (verify)
            printf(", \"verify_k\": %ld, \"verify_in_place\": %d, \"verified_ms\": %.4f, \"verified_select_ms\": %.4f, "
                   "\"verified_layers\": %zu, \"verify_s\": %.3f, \"verified_vs_oracle\": %.4f, "
                   "\"verified_speedup_vs_onednn_auto\": %.4f",
                   verify, !alone, timings[VERIFIED].median_ms, verified_select_ms, plans[VERIFIED]->verified_layers,
                   plans[VERIFIED]->verify_s, timings[VERIFIED].median_ms / timings[ORACLE].median_ms - 1.0,
                   timings[AUTO].median_ms / timings[VERIFIED].median_ms);
        if (verify)
            print_priced("verified", plans[VERIFIED], &measured_costs);
        if (check) {
            printf(", \"checked_ms\": %.4f, \"checked_select_ms\": %.4f, \"check_s\": %.3f, \"check_kept\": \"%s\", "
                   "\"check_model_plan_ms\": %.4f, \"check_verified_ms\": %.4f, \"check_onednn_alone_ms\": %.4f, "
                   "\"checked_vs_oracle\": %.4f, \"checked_speedup_vs_onednn_auto\": %.4f, \"check_without\": {",
                   timings[CHECKED].median_ms, checked_select_ms, check_report.check_s, kept_name,
                   check_report.model_plan_ms, check_report.verified_ms, check_report.onednn_alone_ms,
                   timings[CHECKED].median_ms / timings[ORACLE].median_ms - 1.0,
                   timings[AUTO].median_ms / timings[CHECKED].median_ms);
            for (size_t a = 0; a < check_report.n_without; a++)
                printf("%s\"%s\": %.4f", a ? ", " : "", check_report.without[a].family, check_report.without[a].ms);
            printf("}");
            print_priced("checked", plans[CHECKED], &measured_costs);
        }
        printf("}\n");
    } else {
        cli_print_plan(plans[PLAN]);
        printf("\n%-13s %12s %10s %10s\n", "network run", "median_ms", "min_ms", "vs_plan");
        for (int j = 0; j < n_timed; j++) {
            int k = timed[j];
            /* The single best names its primitive, the checked plan the row it copies. */
            char note[64] = "";
            if (k == SINGLE)
                snprintf(note, sizeof note, "  %s", single_name);
            else if (k == CHECKED)
                snprintf(note, sizeof note, "  = %s", checked_as == CHECKED ? kept_name : labels[checked_as]);
            printf("%-15s %12.3f %10.3f %9.3fx%s\n", labels[k], timings[k].median_ms, timings[k].min_ms,
                   timings[k].median_ms / timings[PLAN].median_ms, note);
        }
        printf("\nspeed-up over oneDNN alone: %.3fx; distance to the oracle: %+.1f%%\n", speedup, 100.0 * gap);
        printf("model selection took %.2f ms; exhaustive profiling took %.1f s (%.0fx longer)\n", select_ms,
               oracle_profile_s, oracle_profile_s * 1e3 / (select_ms > 0 ? select_ms : 1e-3));
        if (verify)
            printf("with --verify %ld: %zu layers measured in %.2f s; verified plan %.3fx faster than oneDNN alone, "
                   "%+.1f%% from the oracle\n",
                   verify, plans[VERIFIED]->verified_layers, plans[VERIFIED]->verify_s,
                   timings[AUTO].median_ms / timings[VERIFIED].median_ms,
                   100.0 * (timings[VERIFIED].median_ms / timings[ORACLE].median_ms - 1.0));
        char without[256] = "";
        if (check) {
            cli_without_times(&check_report, "", without, sizeof without);
            printf("with --check: end to end %.3f (model plan) / %.3f (verified) / %.3f (oneDNN alone)%s ms in "
                   "%.2f s, kept the %s; %.3fx faster than oneDNN alone, %+.1f%% from the oracle\n",
                   check_report.model_plan_ms, check_report.verified_ms, check_report.onednn_alone_ms, without,
                   check_report.check_s, kept_name,
                   timings[AUTO].median_ms / timings[CHECKED].median_ms,
                   100.0 * (timings[CHECKED].median_ms / timings[ORACLE].median_ms - 1.0));
        }
    }
    goto done;
fail:
    rc = cli_fail("compare", st);
done:
    for (int k = 0; k < N_PLANS; k++) {
        convsel_runner_destroy(runners[k]);
        if (k != SINGLE || plans[SINGLE] != plans[AUTO])
            convsel_plan_destroy(plans[k]);
    }
    convsel_measured_costs_destroy(measured);
    convsel_model_destroy(model);
    convsel_network_destroy(net);
    return rc;
}
