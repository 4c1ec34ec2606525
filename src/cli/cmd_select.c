/* convsel select: the fastest primitive per layer, from the model (or, with
 * --oracle, from exhaustive profiling). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: convsel select --net FILE|DIR... [--mb N] [--threads N] [--model M] [--max-error E]\n"
            "                      [--exclude LIST] [--verify K] [--alone] [--uncertainty U] [--check]\n"
            "                      [--check-time S] [--oracle [--profile-time S]]\n"
            "                      [-o PLAN|DIR] [--resume] [--quiet]\n"
            "\n"
            "Predicts every applicable primitive on every layer and chooses by dynamic programming\n"
            "along the layer sequence, counting the reorders between layouts (docs/selection.md).\n"
            "Several networks (--net given more than once, or a directory) are selected in turn\n"
            "with the model loaded once, a table each and a summary line each at the end; one that\n"
            "fails is said and the others go on (the exit status is the first failure's).\n"
            "\n"
            "  --net FILE       network file (one benchdnn descriptor per line; '*N' = N consecutive copies)\n"
            "  --net DIR        every *.txt in DIR, in byte order; --net may be given several times\n"
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
            "  --oracle         no model: every applicable primitive timed on every layer and every\n"
            "                   reorder between layouts timed on this CPU (exhaustive profiling,\n"
            "                   minutes a network), then the same dynamic programming; the plan\n"
            "                   records model \"measured\". A layer shape met again, in this network\n"
            "                   or a later one of the batch, is not timed again. 'convsel run --plans\n"
            "                   ORACLE_DIR --plans MODEL_DIR' then times the model's plans against the\n"
            "                   oracle's, interleaved. Not with --model, --verify, --alone,\n"
            "                   --uncertainty, --check or --check-time\n"
            "  --profile-time S with --oracle: time cap per layer's profiling (default 1, as compare)\n"
            "  -o PLAN          write the plan (JSON, docs/plan-format.md)\n"
            "  -o DIR           with several networks: write each plan to DIR/NAME.plan.json\n"
            "                   (DIR created if missing; two files of one NAME are refused);\n"
            "                   'convsel run --net ... --plans DIR --baseline' runs them beside oneDNN alone\n"
            "  --resume         keep a plan already at -o when it was made for this network (its\n"
            "                   layers and batch), these threads, this model (with --oracle: by\n"
            "                   measurement), this CPU and these options (--verify, --alone,\n"
            "                   --uncertainty, --check, --check-time, --exclude, --max-error):\n"
            "                   an interrupted run goes on where it stopped\n"
            "  --quiet          no table (with several networks, the summary only)\n");
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

/* What select does to every network: the options, the model's costs. */
typedef struct select_job {
    convsel_select_options opts;
    convsel_cost_source costs;
    long verify;
    double uncertainty, check_time;
    int check, quiet, resume;
    convsel_measured_costs *measured; /* --oracle: the cost source's measurements */
    convsel_plan_made_with made_with; /* what its plans record of the options */
    const char *model_id;          /* the model's, as plans record it */
    const convsel_fingerprint *cpu; /* this CPU */
} select_job;

/* One network's result, for the batch summary. */
typedef struct select_result {
    int ok, resumed; /* resumed: an earlier run's plan kept (--resume) */
    size_t layers, verified;
    double total_ms, select_ms;
    double profile_s; /* --oracle: seconds spent measuring for this network */
    char kept[64];
} select_result;

/* The first option in which a and b differ, as select's flags: "made with
 * --verify 3, not 0". */
static void made_with_diff(const convsel_plan_made_with *a, const convsel_plan_made_with *b, char *buf, size_t size)
{
    if (!a->recorded)
        snprintf(buf, size, "made before plans recorded their options");
    else if (a->max_error != b->max_error)
        snprintf(buf, size, "made with --max-error %g, not %g", a->max_error, b->max_error);
    else if (strcmp(a->excluded, b->excluded) != 0)
        snprintf(buf, size, "made excluding '%.400s', not '%.400s'", a->excluded, b->excluded);
    else if (a->verify_k != b->verify_k)
        snprintf(buf, size, "made with --verify %d, not %d", a->verify_k, b->verify_k);
    else if (a->verify_alone != b->verify_alone)
        snprintf(buf, size, "made %s --alone", a->verify_alone ? "with" : "without");
    else if (a->uncertainty != b->uncertainty)
        snprintf(buf, size, "made with --uncertainty %.17g, not %.17g", a->uncertainty, b->uncertainty);
    else if (a->checked != b->checked)
        snprintf(buf, size, "made %s --check", a->checked ? "with" : "without");
    else
        snprintf(buf, size, "made with --check-time %g, not %g", a->check_time_s, b->check_time_s);
}

/* Why old is not a plan select would make for net now, into buf (0: it is
 * one: the same network, batch, threads, model, CPU setup and options). */
static int stale_reason(const select_job *job, const convsel_plan *old, const convsel_network *net, char *buf,
                        size_t size)
{
    const char *why = NULL;
    if (!cli_plan_matches(old, net, NULL))
        why = "another network or batch";
    else if (old->threads != job->opts.threads)
        why = "other threads";
    else if (strcmp(old->model_id, job->model_id) != 0)
        why = "another model";
    else if (!convsel_fingerprint_same_setup(&old->cpu, job->cpu))
        why = "another CPU or OpenBLAS setup";
    else if (!convsel_plan_made_with_equal(&old->made_with, &job->made_with))
        made_with_diff(&old->made_with, &job->made_with, buf, size);
    else
        return 0;
    if (why)
        snprintf(buf, size, "%s", why);
    return 1;
}

/* --resume: keeps the plan an earlier run wrote to out when it is this
 * network's, with these threads, model and CPU; 1 when kept. */
static int resume_one(const select_job *job, const convsel_network *net, const char *out, select_result *r)
{
    convsel_plan *old = NULL;
    char reason[1024];
    if (access(out, F_OK) != 0)
        return 0;
    const char *why = convsel_plan_load(out, &old) != CONVSEL_OK           ? convsel_last_error()
                      : stale_reason(job, old, net, reason, sizeof reason) ? reason
                                                                            : NULL;
    if (why) {
        fprintf(stderr, "convsel select: note: %s is not kept (%s): selecting again\n", out, why);
        fflush(stderr);
    } else {
        r->ok = r->resumed = 1;
        r->layers = old->n_layers;
        r->verified = old->verified_layers;
        r->total_ms = old->total_ms;
        if (!job->quiet)
            printf("kept %s: made by an earlier run for this network, %d thread%s, model %s, this CPU and "
                   "these options\n",
                   out, old->threads, old->threads == 1 ? "" : "s", old->model_id);
    }
    convsel_plan_destroy(old);
    return r->resumed;
}

/* Selects for one network file, prints its table and writes its plan to out
 * (NULL: none). The exit code; r says what came of it. */
static int select_one(const select_job *job, const char *file, long mb, const char *out, select_result *r)
{
    convsel_network *net = NULL;
    convsel_plan *plan = NULL;
    memset(r, 0, sizeof *r);
    int rc = cli_load_network("select", file, NULL, mb, &net);
    if (rc != CLI_OK)
        return rc;
    if (job->resume && out && resume_one(job, net, out, r))
        goto done;
    convsel_timing_options topts;
    convsel_timing_options_default(&topts);
    double t0 = cli_now(), measured_s = convsel_measured_costs_seconds(job->measured);
    if (job->measured && !job->quiet) {
        fprintf(stderr, "convsel select: profiling every primitive on every layer (the oracle)...\n");
        fflush(stderr);
    }
    convsel_check_report report;
    convsel_status st =
        job->check    ? convsel_select_checked(net, &job->opts, &job->costs, (int)job->verify, job->uncertainty, &topts,
                                               job->check_time, &plan, &report)
        : job->verify ? convsel_select_verified(net, &job->opts, &job->costs, (int)job->verify, job->uncertainty, &topts,
                                                &plan)
                      : convsel_select(net, &job->opts, &job->costs, &plan);
    r->select_ms = (cli_now() - t0) * 1e3;
    r->profile_s = convsel_measured_costs_seconds(job->measured) - measured_s;
    if (st != CONVSEL_OK) {
        rc = cli_fail("select", st);
        goto done;
    }
    if (job->check)
        cli_kept_name(&report, r->kept, sizeof r->kept);
    if (!job->quiet) {
        cli_print_plan(plan);
        printf("selected in %.2f ms", r->select_ms);
        if (job->measured)
            printf(", %.2f s of it profiling (layer shapes measured before not timed again)", r->profile_s);
        if (job->verify)
            printf("; %zu layer%s verified by measurement in %.2f s", plan->verified_layers,
                   plan->verified_layers == 1 ? "" : "s", plan->verify_s);
        printf("\n");
        if (job->check) {
            char without[256];
            cli_without_times(&report, " ms", without, sizeof without);
            printf("checked end to end in %.2f s: %.3f ms (model plan) / %.3f ms (verified) / %.3f ms "
                   "(oneDNN alone)%s (0: not timed); kept the %s\n",
                   report.check_s, report.model_plan_ms, report.verified_ms, report.onednn_alone_ms, without, r->kept);
        }
    }
    if (out && (st = convsel_plan_save(plan, out)) != CONVSEL_OK) {
        rc = cli_fail("select", st);
        goto done;
    }
    r->ok = 1;
    r->layers = plan->n_layers;
    r->verified = plan->verified_layers;
    r->total_ms = plan->total_ms;
done:
    convsel_plan_destroy(plan);
    convsel_network_destroy(net);
    return rc;
}

/* Two files whose plans would have the same name in the -o directory. */
static int check_stems(char **files, size_t n, const char *dir)
{
    char a[256], b[256];
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            cli_network_stem(files[i], a, sizeof a);
            cli_network_stem(files[j], b, sizeof b);
            if (strcmp(a, b) == 0) {
                fprintf(stderr, "convsel select: %s and %s would both write %s/%s.plan.json\n", files[i], files[j],
                        dir, a);
                return CLI_USAGE;
            }
        }
    return CLI_OK;
}

static void print_summary(char **files, const select_result *res, size_t n, const char *dir, const select_job *job)
{
    size_t failed = 0, resumed = 0;
    double profile_s = 0.0;
    printf("\n%-28s %7s %12s %11s", "network", "layers", "total_ms", "select_ms");
    if (job->verify)
        printf(" %9s", "verified");
    if (job->check)
        printf(" %-20s", "kept");
    printf(" %s\n", dir ? "plan" : "");
    for (size_t i = 0; i < n; i++) {
        char stem[256];
        cli_network_stem(files[i], stem, sizeof stem);
        if (!res[i].ok) {
            printf("%-28.28s failed (%s)\n", stem, files[i]);
            failed++;
            continue;
        }
        resumed += (size_t)res[i].resumed;
        profile_s += res[i].profile_s;
        if (res[i].resumed)
            printf("%-28.28s %7zu %12.4f %11s", stem, res[i].layers, res[i].total_ms, "kept");
        else
            printf("%-28.28s %7zu %12.4f %11.2f", stem, res[i].layers, res[i].total_ms, res[i].select_ms);
        if (job->verify)
            printf(" %9zu", res[i].verified);
        if (job->check)
            printf(" %-20s", res[i].resumed ? "-" : res[i].kept);
        if (dir)
            printf(" %s/%s.plan.json", dir, stem);
        printf("\n");
    }
    printf("%zu network%s: %zu selected, ", n, n == 1 ? "" : "s", n - failed - resumed);
    if (job->resume)
        printf("%zu kept from an earlier run, ", resumed);
    printf("%zu failed", failed);
    if (job->measured)
        printf("; %.1f s of profiling for the oracle", profile_s);
    printf("\n");
}

int cmd_select(int argc, char **argv)
{
    const char *model_file = NULL, *out = NULL, *exclude = NULL, *v;
    const char **net_args = calloc(argc > 0 ? (size_t)argc : 1, sizeof *net_args);
    size_t n_net_args = 0;
    long mb = 0, threads = 1;
    double max_error = 0.0, profile_time = 1.0;
    int alone = 0, oracle = 0, profile_time_given = 0, check_time_given = 0, rc = CLI_USAGE;
    select_job job = {.uncertainty = -1.0, .check_time = 2.0};
    if (!net_args) {
        fprintf(stderr, "convsel select: out of memory\n");
        return CLI_FAIL;
    }
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            usage(stdout);
            free(net_args);
            return CLI_OK;
        } else if (!strcmp(argv[i], "--net")) {
            if (!(net_args[n_net_args++] = cli_value("select", argc, argv, &i)))
                goto usage_error;
        } else if (!strcmp(argv[i], "--model")) {
            if (!(model_file = cli_value("select", argc, argv, &i)))
                goto usage_error;
        } else if (!strcmp(argv[i], "-o")) {
            if (!(out = cli_value("select", argc, argv, &i)))
                goto usage_error;
        } else if (!strcmp(argv[i], "--exclude")) {
            if (!(exclude = cli_value("select", argc, argv, &i)))
                goto usage_error;
        } else if (!strcmp(argv[i], "--mb")) {
            if (!(v = cli_value("select", argc, argv, &i)) || !cli_parse_long("select", "--mb", v, 1, 1 << 20, &mb))
                goto usage_error;
        } else if (!strcmp(argv[i], "--threads")) {
            if (!(v = cli_value("select", argc, argv, &i)) ||
                !cli_parse_long("select", "--threads", v, 1, 1024, &threads))
                goto usage_error;
        } else if (!strcmp(argv[i], "--verify")) {
            if (!(v = cli_value("select", argc, argv, &i)) ||
                !cli_parse_long("select", "--verify", v, 0, 64, &job.verify))
                goto usage_error;
        } else if (!strcmp(argv[i], "--max-error")) {
            if (!(v = cli_value("select", argc, argv, &i)) ||
                !cli_parse_double("select", "--max-error", v, 0.0, 1.0, &max_error))
                goto usage_error;
        } else if (!strcmp(argv[i], "--uncertainty")) {
            if (!(v = cli_value("select", argc, argv, &i)) ||
                !cli_parse_double("select", "--uncertainty", v, 0.0, 10.0, &job.uncertainty))
                goto usage_error;
        } else if (!strcmp(argv[i], "--alone")) {
            alone = 1;
        } else if (!strcmp(argv[i], "--check")) {
            job.check = 1;
        } else if (!strcmp(argv[i], "--check-time")) {
            if (!(v = cli_value("select", argc, argv, &i)) ||
                !cli_parse_double("select", "--check-time", v, 0.0, 600.0, &job.check_time))
                goto usage_error;
            check_time_given = 1;
        } else if (!strcmp(argv[i], "--oracle")) {
            oracle = 1;
        } else if (!strcmp(argv[i], "--profile-time")) {
            if (!(v = cli_value("select", argc, argv, &i)) ||
                !cli_parse_double("select", "--profile-time", v, 0.01, 600.0, &profile_time))
                goto usage_error;
            profile_time_given = 1;
        } else if (!strcmp(argv[i], "--quiet")) {
            job.quiet = 1;
        } else if (!strcmp(argv[i], "--resume")) {
            job.resume = 1;
        } else {
            fprintf(stderr, "convsel select: unknown argument '%s'\n", argv[i]);
            usage(stderr);
            goto usage_error;
        }
    }
    if (!n_net_args) {
        fprintf(stderr, "convsel select: --net FILE is required\n");
        goto usage_error;
    }
    if (job.resume && !out) {
        fprintf(stderr, "convsel select: --resume keeps the plans at -o: give -o\n");
        goto usage_error;
    }
    if (profile_time_given && !oracle) {
        fprintf(stderr, "convsel select: --profile-time is the oracle's: give --oracle\n");
        goto usage_error;
    }
    if (oracle) {
        const char *clash = model_file               ? "--model"
                            : job.verify             ? "--verify"
                            : alone                  ? "--alone"
                            : job.uncertainty >= 0.0 ? "--uncertainty"
                            : job.check              ? "--check"
                            : check_time_given       ? "--check-time"
                                                     : NULL;
        if (clash) {
            fprintf(stderr, "convsel select: --oracle chooses by measurement alone, without a model: not with %s\n",
                    clash);
            goto usage_error;
        }
    }

    char **files = NULL;
    size_t n_files = 0, np = convsel_primitive_count();
    int batch = 0;
    unsigned char *excluded = calloc(np, 1);
    convsel_model *model = NULL;
    select_result *res = NULL;
    rc = excluded ? cli_gather_networks("select", net_args, n_net_args, &files, &n_files, &batch) : CLI_FAIL;
    /* Several networks write their plans into -o DIR, one NAME.plan.json
     * each; one writes -o PLAN. Either is checked before any work. */
    if (rc == CLI_OK && batch && out)
        rc = check_stems(files, n_files, out);
    if (rc == CLI_OK && out)
        rc = batch ? cli_prepare_dir("select", "-o", out) : cli_check_output("select", "-o", out);
    if (rc == CLI_OK && exclude)
        rc = cli_parse_primitive_set("select", exclude, excluded);
    if (rc == CLI_OK && !(res = calloc(n_files, sizeof *res)))
        rc = CLI_FAIL;
    if (rc == CLI_OK && !oracle)
        rc = cli_open_model("select", model_file, &model);
    convsel_model_costs mc = {.model = model}; /* lives as long as job.costs */
    if (rc == CLI_OK && oracle) {
        convsel_timing_options topts;
        convsel_timing_options_default(&topts);
        topts.max_time_s = profile_time;
        convsel_status st = convsel_measured_costs_create(&topts, &job.measured);
        if (st != CONVSEL_OK)
            rc = cli_fail("select", st);
    }
    if (rc == CLI_OK) {
        convsel_fingerprint_get(&mc.cpu);
        if (oracle) {
            job.costs = convsel_measured_costs_source(job.measured);
            job.model_id = job.costs.id;
            job.uncertainty = 0.0;
        } else {
            cli_warn_cpu("select", model, &mc.cpu, (int)threads);
            job.costs = convsel_model_costs_source(&mc);
            job.model_id = convsel_model_id(model);
        }
        job.cpu = &mc.cpu;
        job.opts = (convsel_select_options){(int)threads, max_error, excluded, 1, alone};
        if (job.uncertainty < 0.0)
            job.uncertainty = convsel_model_uncertainty(model);
        convsel_status st = convsel_plan_made_with_init(&job.made_with, &job.opts, (int)job.verify, job.uncertainty,
                                                        job.check, job.check_time);
        if (st != CONVSEL_OK)
            rc = cli_fail("select", st);
    }
    if (rc == CLI_OK) {
        /* A network that fails is said and the others go on: the exit
         * code is the first failure's. */
        for (size_t f = 0; f < n_files; f++) {
            char path[4096], stem[256];
            const char *plan_out = out;
            cli_network_stem(files[f], stem, sizeof stem);
            if (batch && out) {
                snprintf(path, sizeof path, "%s/%s.plan.json", out, stem);
                plan_out = path;
            }
            if (batch && !job.quiet)
                printf("%s== %s (%s)\n", f ? "\n" : "", stem, files[f]);
            fflush(stdout); /* in order with a failure's message on stderr */
            int one = select_one(&job, files[f], mb, plan_out, &res[f]);
            if (one != CLI_OK && rc == CLI_OK)
                rc = one;
        }
        if (batch)
            print_summary(files, res, n_files, out, &job);
    }
    convsel_model_destroy(model);
    convsel_measured_costs_destroy(job.measured);
    convsel_network_files_free(files, n_files);
    free(res);
    free(excluded);
    free(net_args);
    return rc;

usage_error:
    free(net_args);
    return CLI_USAGE;
}
