/* convsel run: execute plans end to end and report their latencies. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

/* Plans one run may time side by side, and oneDNN alone's slot after them. */
#define MAX_PLANS 8
#define SLOTS (MAX_PLANS + 1)

static void usage(FILE *out)
{
    fprintf(out, "usage: convsel run --net FILE --plan PLAN [--plan PLAN ...] [--baseline [--model M]]\n"
                 "                   [--max-time S] [--check] [--json]\n"
                 "       convsel run --net FILE|DIR [--net ...] --plans DIR [--plans DIR ...]\n"
                 "                   [--baseline [--model M]] ...\n"
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
                 "  --plans DIR   a plan per network, DIR/NAME.plan.json as 'convsel select --net ...\n"
                 "                -o DIR' writes them; --net may then be repeated or a directory (its\n"
                 "                *.txt), each network run in turn, a summary at the end;\n"
                 "                repeated (up to %d), each network's plans of every DIR are timed\n"
                 "                interleaved and the summary compares the DIRs (their time\n"
                 "                against the first DIR's: another model's plans, say), also over\n"
                 "                only the networks whose plans make other choices than the first's\n"
                 "  --baseline    also time oneDNN alone (onednn_auto on every layer, at the first\n"
                 "                plan's threads) interleaved with the plans: each plan's speed-up\n"
                 "                over it; with --plans, their median and geometric mean, also\n"
                 "                without the networks where oneDNN alone runs its reference loops\n"
                 "                (there, seconds a round, it is timed after the plans, on its own)\n"
                 "  --model M     the model that prices oneDNN alone's boundary layout and reorders\n"
                 "                (default: the shipped model)\n"
                 "  --max-time S  time spent measuring after warm-up (default 3)\n"
                 "  --check       first one pass of each plan checked layer by layer against the\n"
                 "                reference convolution (slow: plain loops); a wrong result fails the run\n"
                 "  --json        print {\"network\", \"plan\", \"median_ms\", \"min_ms\", ...} (a line per\n"
                 "                network); with several plans {\"network\", \"mb\", \"layers\", \"plans\":\n"
                 "                [{\"plan\", \"threads\", \"reorders\", \"median_ms\", ..., \"vs_first\"}, ...]},\n"
                 "                the later plans with layers_differing_from_first and same_as_first;\n"
                 "                --baseline adds onednn_auto_ms, onednn_auto_reference_layers and\n"
                 "                speedup_vs_onednn_auto\n",
            MAX_PLANS, MAX_PLANS);
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

/* What every network of a run shares. */
typedef struct run_job {
    double max_time;
    int json, check;
    const convsel_cost_source *baseline; /* prices oneDNN alone's plan; NULL: not timed */
    const convsel_fingerprint *here;     /* NULL: unknown */
} run_job;

/* One network's outcome, for a batch's summary. */
typedef struct run_result {
    int ok;
    size_t layers;
    double plan_ms[MAX_PLANS], alone_ms; /* medians; alone_ms 0 without --baseline */
    size_t alone_ref;                    /* layers where oneDNN alone runs oneDNN's reference loops */
    int alone_after;                     /* oneDNN alone was timed after the plans, not among them */
    int same_as_first[MAX_PLANS];        /* plan i makes the first plan's choices (plans_alike) */
} run_result;

/* The layers of plan whose onednn_auto runs oneDNN's reference loops: what
 * makes oneDNN alone 100x slower on them, and a speed-up no selection earns. */
static size_t reference_layers(const convsel_plan *plan, size_t auto_index)
{
    size_t n = 0, kernel;
    for (size_t l = 0; l < plan->n_layers; l++)
        n += convsel_primitive_runs_as(auto_index, &plan->layers[l].problem, plan->threads, &kernel) == CONVSEL_OK &&
             convsel_primitive_is_reference(kernel);
    return n;
}

/* The layers where plan b chooses another primitive or layout than plan a
 * (all of them at another thread count). */
static size_t layers_differing(const convsel_plan *a, const convsel_plan *b)
{
    if (a->threads != b->threads || a->n_layers != b->n_layers)
        return a->n_layers;
    size_t n = 0;
    for (size_t l = 0; l < a->n_layers; l++) {
        const convsel_plan_layer *x = &a->layers[l], *y = &b->layers[l];
        n += strcmp(x->primitive, y->primitive) != 0 || x->src_layout != y->src_layout ||
             x->dst_layout != y->dst_layout;
    }
    return n;
}

/* Plans that run alike: the same primitive and layouts on every layer, the
 * same boundary layout and threads. Their times differ by noise alone. */
static int plans_alike(const convsel_plan *a, const convsel_plan *b)
{
    return layers_differing(a, b) == 0 && a->boundary_layout == b->boundary_layout;
}

/* One plan's line of the JSON with several plans. */
static void json_plan(const char *file, const convsel_plan *plan, const convsel_plan *first,
                      const convsel_runner *runner, const convsel_timing *t, double first_ms, double alone_ms,
                      int check, double worst)
{
    printf("{\"plan\": ");
    cli_json_string(file);
    printf(", \"threads\": %d, \"reorders\": %zu, \"median_ms\": %.4f, \"min_ms\": %.4f, \"p10_ms\": %.4f, "
           "\"p90_ms\": %.4f, \"runs\": %d, \"vs_first\": %.4f",
           plan->threads, convsel_runner_reorder_count(runner), t->median_ms, t->min_ms, t->p10_ms, t->p90_ms,
           t->runs, first_ms > 0 ? t->median_ms / first_ms : 0.0);
    if (plan != first)
        printf(", \"layers_differing_from_first\": %zu, \"same_as_first\": %s", layers_differing(first, plan),
               plans_alike(first, plan) ? "true" : "false");
    if (alone_ms > 0)
        printf(", \"speedup_vs_onednn_auto\": %.4f", t->median_ms > 0 ? alone_ms / t->median_ms : 0.0);
    if (check)
        printf(", \"checked\": true, \"worst_error_of_bound\": %.4g", worst);
    putchar('}');
}

static void print_json(const convsel_network *net, const char *const *labels, convsel_plan *const *plans,
                       convsel_runner *const *runners, const convsel_timing *timing, size_t n,
                       const run_result *res, int check, const double *worst)
{
    const convsel_plan *first = plans[0];
    const double alone_ms = res->alone_ms;
    if (n == 1) {
        printf("{\"network\": \"%s\", \"plan\": ", convsel_network_name(net));
        cli_json_string(labels[0]);
        printf(", \"mb\": %lld, \"threads\": %d, \"layers\": %zu, \"reorders\": %zu, \"median_ms\": %.4f, "
               "\"min_ms\": %.4f, \"p10_ms\": %.4f, \"p90_ms\": %.4f, \"runs\": %d",
               (long long)first->mb, first->threads, first->n_layers, convsel_runner_reorder_count(runners[0]),
               timing[0].median_ms, timing[0].min_ms, timing[0].p10_ms, timing[0].p90_ms, timing[0].runs);
        if (alone_ms > 0)
            printf(", \"onednn_auto_ms\": %.4f, \"onednn_auto_reference_layers\": %zu, "
                   "\"onednn_auto_interleaved\": %s, \"speedup_vs_onednn_auto\": %.4f",
                   alone_ms, res->alone_ref, res->alone_after ? "false" : "true",
                   timing[0].median_ms > 0 ? alone_ms / timing[0].median_ms : 0.0);
        if (check)
            printf(", \"checked\": true, \"worst_error_of_bound\": %.4g", worst[0]);
        printf("}\n");
        return;
    }
    printf("{\"network\": \"%s\", \"mb\": %lld, \"layers\": %zu, ", convsel_network_name(net), (long long)first->mb,
           first->n_layers);
    if (alone_ms > 0)
        printf("\"onednn_auto_ms\": %.4f, \"onednn_auto_reference_layers\": %zu, \"onednn_auto_interleaved\": %s, ",
               alone_ms, res->alone_ref, res->alone_after ? "false" : "true");
    printf("\"plans\": [");
    for (size_t i = 0; i < n; i++) {
        if (i)
            fputs(", ", stdout);
        json_plan(labels[i], plans[i], first, runners[i], &timing[i], timing[0].median_ms, alone_ms, check,
                  worst[i]);
    }
    printf("]}\n");
}

/* n plans, then oneDNN alone in slot n when alone is set. */
static void print_text(const convsel_network *net, const char *const *labels, convsel_plan *const *plans,
                       convsel_runner *const *runners, const convsel_timing *timing, size_t n, const run_result *res,
                       int alone, int check, const double *worst)
{
    const convsel_plan *first = plans[0];
    if (n == 1 && !alone) {
        printf("network %s: %zu layers, %zu reorders, mb%lld, %d thread%s\n", convsel_network_name(net),
               first->n_layers, convsel_runner_reorder_count(runners[0]), (long long)first->mb, first->threads,
               first->threads == 1 ? "" : "s");
        if (check)
            printf("checked: every layer matches the reference convolution (the worst at %.2g of its bound), every "
                   "tensor reached the next layer intact\n",
                   worst[0]);
        printf("median %.3f ms  (min %.3f, p10 %.3f, p90 %.3f; %d runs)\n", timing[0].median_ms, timing[0].min_ms,
               timing[0].p10_ms, timing[0].p90_ms, timing[0].runs);
        return;
    }
    if (alone && res->alone_after)
        printf("network %s: %zu layers, mb%lld; %zu plan%s timed %s, then oneDNN alone in the same process\n",
               convsel_network_name(net), first->n_layers, (long long)first->mb, n, n == 1 ? "" : "s",
               n == 1 ? "first" : "interleaved");
    else
        printf("network %s: %zu layers, mb%lld; %zu plan%s%s timed interleaved in one process (compare the ratios)\n",
               convsel_network_name(net), first->n_layers, (long long)first->mb, n, n == 1 ? "" : "s",
               alone ? " and oneDNN alone" : "");
    for (size_t i = 0; i < n + (size_t)alone; i++) {
        if (i < n)
            printf("plan %zu %s: ", i + 1, labels[i]);
        else
            printf("oneDNN alone (onednn_auto on every layer): ");
        printf("%d thread%s, %zu reorders", plans[i]->threads, plans[i]->threads == 1 ? "" : "s",
               convsel_runner_reorder_count(runners[i]));
        if (i > 0 && i < n) {
            const size_t d = layers_differing(first, plans[i]);
            if (plans[i]->threads != first->threads)
                printf(", other threads than plan 1");
            else if (d > 0)
                printf(", %zu of %zu layers chosen otherwise than plan 1", d, first->n_layers);
            else if (plans[i]->boundary_layout != first->boundary_layout)
                printf(", plan 1's layers with another boundary layout (%s)",
                       convsel_layout_name(plans[i]->boundary_layout));
            else
                printf(", the same choices as plan 1");
        }
        putchar('\n');
        if (check && i < n)
            printf("  checked: every layer matches the reference convolution (the worst at %.2g of its bound), "
                   "every tensor reached the next layer intact\n",
                   worst[i]);
        printf("  median %.3f ms  (min %.3f, p10 %.3f, p90 %.3f; %d runs)", timing[i].median_ms, timing[i].min_ms,
               timing[i].p10_ms, timing[i].p90_ms, timing[i].runs);
        if (i > 0 && i < n && timing[0].median_ms > 0) /* oneDNN alone's ratio is said below */
            printf(", %.3fx plan 1's", timing[i].median_ms / timing[0].median_ms);
        putchar('\n');
    }
    if (!alone)
        return;
    printf("speed-up over oneDNN alone:");
    for (size_t i = 0; i < n; i++) {
        const double speedup = timing[i].median_ms > 0 ? timing[n].median_ms / timing[i].median_ms : 0.0;
        if (n == 1)
            printf(" %.3fx", speedup);
        else
            printf("%s plan %zu %.3fx", i ? "," : "", i + 1, speedup);
    }
    putchar('\n');
}

/* Times the n plans of files (and oneDNN alone with job->baseline) on the
 * network of net_file, interleaved, and prints them; res gets the outcome. */
static int run_network(const run_job *job, const char *net_file, const char *const *files, size_t n,
                       run_result *res)
{
    convsel_plan *plans[SLOTS] = {0};
    convsel_runner *runners[SLOTS] = {0};
    const char *labels[SLOTS];
    convsel_network *net = NULL;
    int rc = CLI_OK;
    convsel_status st = CONVSEL_OK;
    memset(res, 0, sizeof *res);
    for (size_t i = 0; i < n && rc == CLI_OK; i++) {
        labels[i] = files[i];
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
    if (rc == CLI_OK && job->here)
        for (size_t i = 0; i < n; i++)
            warn_foreign(plans[i], files[i], job->here);

    /* oneDNN alone at the first plan's threads, after the plans. */
    const int alone = job->baseline != NULL;
    size_t auto_index;
    if (rc == CLI_OK && alone) {
        labels[n] = "oneDNN alone";
        if ((st = convsel_primitive_find("onednn_auto", &auto_index)) == CONVSEL_OK)
            st = cli_single_plan(net, plans[0]->threads, auto_index, job->baseline, &plans[n]);
        if (st != CONVSEL_OK) {
            fprintf(stderr, "convsel run: oneDNN alone on %s:\n", net_file);
            rc = cli_fail("run", st);
        }
    }
    const size_t n_all = n + (size_t)alone;
    /* Where oneDNN alone runs reference loops (seconds a round, 100x the
     * plans), timing it in the plans' rounds would hold them to a few runs
     * each over seconds of drift: the plans are timed among themselves
     * first, then it on its own. Its speed-up is no closer call than that. */
    const size_t alone_ref = rc == CLI_OK && alone ? reference_layers(plans[n], auto_index) : 0;
    const int alone_after = alone_ref > 0;

    /* Each plan its own runner (weights, buffers): one sharing the weights
     * of the plan run before it would find them in cache. oneDNN alone is
     * not checked: the plans are what is on trial. */
    double worst[SLOTS];
    convsel_timing timing[SLOTS] = {{0}};
    for (size_t i = 0; i < n_all && rc == CLI_OK && st == CONVSEL_OK; i++) {
        worst[i] = -1.0;
        st = convsel_runner_create(plans[i], 1, &runners[i]);
        if (st == CONVSEL_OK && job->check && i < n)
            st = convsel_runner_check(runners[i], &worst[i]);
        if (st != CONVSEL_OK && n_all > 1)
            fprintf(stderr, "convsel run: plan %s:\n", labels[i]);
    }
    if (rc == CLI_OK && st == CONVSEL_OK) {
        convsel_timing_options opts;
        convsel_timing_options_default(&opts);
        opts.max_time_s = job->max_time;
        opts.warmup_s = 0.2;
        opts.min_rounds = 5;
        if (n_all > 1)
            opts.target_rel_ci = 0.01; /* side by side, a few percent is the difference asked about */
        convsel_timed_fn fns[SLOTS];
        void *ctxs[SLOTS];
        for (size_t i = 0; i < n_all; i++) {
            fns[i] = run_once;
            ctxs[i] = runners[i];
        }
        if (!alone_after) {
            st = convsel_time_interleaved(n_all, fns, ctxs, &opts, timing);
        } else {
            if (n == 1)
                opts.target_rel_ci = 0.02; /* the default: one plan alone, as without --baseline */
            st = convsel_time_interleaved(n, fns, ctxs, &opts, timing);
            opts.min_rounds = 3;
            if (st == CONVSEL_OK)
                st = convsel_time_interleaved(1, &fns[n], &ctxs[n], &opts, &timing[n]);
        }
    }
    if (rc == CLI_OK && st != CONVSEL_OK)
        rc = cli_fail("run", st);
    if (rc == CLI_OK) {
        res->ok = 1;
        res->layers = plans[0]->n_layers;
        for (size_t i = 0; i < n; i++) {
            res->plan_ms[i] = timing[i].median_ms;
            res->same_as_first[i] = plans_alike(plans[0], plans[i]);
        }
        res->alone_ms = alone ? timing[n].median_ms : 0.0;
        res->alone_ref = alone_ref;
        res->alone_after = alone_after;
        if (job->json)
            print_json(net, labels, plans, runners, timing, n, res, job->check, worst);
        else
            print_text(net, labels, plans, runners, timing, n, res, alone, job->check, worst);
        if (res->alone_ref && !job->json) {
            printf("oneDNN alone runs oneDNN's reference loops on %zu of the %zu layers", res->alone_ref,
                   plans[n]->n_layers);
            if (alone_after)
                printf("; it was timed after the plan%s, on its own, not in %s rounds", n == 1 ? "" : "s",
                       n == 1 ? "the plan's" : "their");
            putchar('\n');
        }
    }
    for (size_t i = 0; i < SLOTS; i++) {
        convsel_runner_destroy(runners[i]);
        convsel_plan_destroy(plans[i]);
    }
    convsel_network_destroy(net);
    return rc;
}

static int compare_doubles(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Network i's figure for a batch's summary, 0 where it has none: the
 * speed-up of its plan from DIR d over oneDNN alone or, with vs_first, that
 * plan's time against the first DIR's. */
static double batch_value(const run_result *r, size_t d, int vs_first)
{
    if (!r->ok || !(r->plan_ms[d] > 0))
        return 0.0;
    if (vs_first)
        return r->plan_ms[0] > 0 ? r->plan_ms[d] / r->plan_ms[0] : 0.0;
    return r->alone_ms > 0 ? r->alone_ms / r->plan_ms[d] : 0.0;
}

/* Which networks batch_stats takes: all of those run, or only those where
 * oneDNN alone runs no reference loops, or only those whose plan from DIR d
 * makes other choices than the first DIR's. */
enum { BATCH_ALL, BATCH_WITHOUT_REF, BATCH_DIFFERING };

/* The median and geometric mean of batch_value over the networks run that
 * which (BATCH_*) takes; 0 networks: returns 0. */
static size_t batch_stats(const run_result *res, size_t n, size_t d, int vs_first, int which, double *median,
                          double *geomean)
{
    double *s = malloc((n ? n : 1) * sizeof *s), log_sum = 0.0;
    size_t k = 0;
    for (size_t i = 0; s && i < n; i++) {
        const double v = batch_value(&res[i], d, vs_first);
        if (v > 0 && !(which == BATCH_WITHOUT_REF && res[i].alone_ref) &&
            !(which == BATCH_DIFFERING && res[i].same_as_first[d])) {
            s[k] = v;
            log_sum += log(s[k++]);
        }
    }
    if (k) {
        qsort(s, k, sizeof *s, compare_doubles);
        *median = k % 2 ? s[k / 2] : 0.5 * (s[k / 2 - 1] + s[k / 2]);
        *geomean = exp(log_sum / (double)k);
    }
    free(s);
    return k;
}

/* "DIR d" in a summary line: nothing with one DIR. */
static void print_dir(const char *const *dirs, size_t n_dirs, size_t d, const char *sep)
{
    if (n_dirs > 1)
        printf("%s plans %zu (%s)", sep, d + 1, dirs[d]);
}

/* With --baseline, the median and geometric-mean speed-up of each DIR's
 * plans (and again without the networks where oneDNN alone runs its
 * reference loops) and the networks oneDNN alone ran faster. */
static void print_speedups(char **nets, const run_result *res, size_t n, const char *const *dirs, size_t n_dirs)
{
    double median, geomean;
    size_t k, clean;
    for (size_t d = 0; d < n_dirs; d++) {
        if (!(k = batch_stats(res, n, d, 0, BATCH_ALL, &median, &geomean)))
            return;
        printf("speed-up over oneDNN alone");
        print_dir(dirs, n_dirs, d, ",");
        printf(": median %.3fx, geometric mean %.3fx over %zu network%s\n", median, geomean, k, k == 1 ? "" : "s");
        if ((clean = batch_stats(res, n, d, 0, BATCH_WITHOUT_REF, &median, &geomean)) != k) {
            printf("* oneDNN alone runs oneDNN's reference loops on some layers; without those networks");
            print_dir(dirs, n_dirs, d, ",");
            if (clean)
                printf(": median %.3fx, geometric mean %.3fx over %zu network%s\n", median, geomean, clean,
                       clean == 1 ? "" : "s");
            else
                printf(": none left\n");
        }
    }
    for (size_t d = 0; d < n_dirs; d++) {
        printf("slower than oneDNN alone");
        print_dir(dirs, n_dirs, d, ",");
        printf(": ");
        size_t said = 0;
        for (size_t i = 0; i < n; i++) {
            const double v = batch_value(&res[i], d, 0);
            if (v > 0 && v < 1.0) {
                char stem[256];
                cli_network_stem(nets[i], stem, sizeof stem);
                printf("%s%s (%.3fx)", said++ ? ", " : "", stem, v);
            }
        }
        printf("%s\n", said ? "" : "none");
    }
}

/* Each later DIR's plans against the first DIR's: the median and geometric
 * mean of their time ratio, on how many networks they ran faster, and how
 * many of the plans make the first DIR's choices (their ratio is noise), with
 * the ratio again over the others. */
static void print_versus_first(const run_result *res, size_t n, const char *const *dirs, size_t n_dirs)
{
    for (size_t d = 1; d < n_dirs; d++) {
        double median, geomean;
        size_t k = batch_stats(res, n, d, 1, BATCH_ALL, &median, &geomean), faster = 0, slower = 0, same = 0;
        if (!k)
            continue;
        for (size_t i = 0; i < n; i++) {
            const double v = batch_value(&res[i], d, 1);
            faster += v > 0 && v < 1.0;
            slower += v > 1.0;
            same += v > 0 && res[i].same_as_first[d];
        }
        printf("plans %zu (%s) against plans 1 (%s): time ratio median %.3fx, geometric mean %.3fx over %zu "
               "network%s; faster on %zu, slower on %zu\n",
               d + 1, dirs[d], dirs[0], median, geomean, k, k == 1 ? "" : "s", faster, slower);
        printf("  the same choices as plans 1 on %zu of them", same);
        if (same && same < k && batch_stats(res, n, d, 1, BATCH_DIFFERING, &median, &geomean))
            printf("; over the %zu whose plans differ: median %.3fx, geometric mean %.3fx", k - same, median, geomean);
        putchar('\n');
    }
}

/* The batch's table, then the count and the figures of print_speedups
 * (with --baseline) and print_versus_first (with several DIRs). */
static void print_summary(char **nets, const run_result *res, size_t n, const char *const *dirs, size_t n_dirs,
                          int alone)
{
    size_t failed = 0;
    char head[32];
    printf("\n%-28s %7s", "network", "layers");
    for (size_t d = 0; d < n_dirs; d++) {
        if (n_dirs > 1)
            snprintf(head, sizeof head, "plan%zu_ms", d + 1);
        printf(" %12s", n_dirs > 1 ? head : "plan_ms");
    }
    if (alone)
        printf(" %12s", "onednn_ms");
    for (size_t d = alone ? 0 : 1; d < n_dirs; d++) {
        if (alone && n_dirs == 1)
            snprintf(head, sizeof head, "speed-up");
        else if (alone)
            snprintf(head, sizeof head, "speed-up%zu", d + 1);
        else
            snprintf(head, sizeof head, "%zu_vs_1", d + 1);
        printf(" %9s", head);
    }
    printf(n_dirs > 1 ? "\n" : " plan\n");
    for (size_t i = 0; i < n; i++) {
        char stem[256];
        cli_network_stem(nets[i], stem, sizeof stem);
        if (!res[i].ok) {
            printf("%-28.28s failed (%s)\n", stem, nets[i]);
            failed++;
            continue;
        }
        printf("%-28.28s %7zu", stem, res[i].layers);
        for (size_t d = 0; d < n_dirs; d++)
            printf(" %12.4f", res[i].plan_ms[d]);
        if (alone)
            printf(" %12.4f", res[i].alone_ms);
        for (size_t d = alone ? 0 : 1; d < n_dirs; d++)
            printf(" %8.3fx%s", batch_value(&res[i], d, !alone), alone && res[i].alone_ref ? "*" : "");
        if (n_dirs == 1)
            printf(" %s/%s.plan.json", dirs[0], stem);
        putchar('\n');
    }
    for (size_t d = 0; n_dirs > 1 && d < n_dirs; d++)
        printf("plans %zu: %s/NAME.plan.json\n", d + 1, dirs[d]);
    printf("%zu network%s: %zu run, %zu failed\n", n, n == 1 ? "" : "s", n - failed, failed);
    if (alone)
        print_speedups(nets, res, n, dirs, n_dirs);
    print_versus_first(res, n, dirs, n_dirs);
}

int cmd_run(int argc, char **argv)
{
    const char *files[MAX_PLANS], *dirs[MAX_PLANS], *model_file = NULL, *v;
    const char **net_args = calloc(argc > 0 ? (size_t)argc : 1, sizeof *net_args);
    size_t n = 0, n_dirs = 0, n_net_args = 0;
    int baseline = 0, rc = CLI_USAGE;
    run_job job = {.max_time = 3.0};
    if (!net_args) {
        fprintf(stderr, "convsel run: out of memory\n");
        return CLI_FAIL;
    }
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            usage(stdout);
            free(net_args);
            return CLI_OK;
        } else if (!strcmp(argv[i], "--net")) {
            if (!(net_args[n_net_args++] = cli_value("run", argc, argv, &i)))
                goto usage_error;
        } else if (!strcmp(argv[i], "--plan")) {
            if (!(v = cli_value("run", argc, argv, &i)))
                goto usage_error;
            if (n == MAX_PLANS) {
                fprintf(stderr, "convsel run: at most %d --plan files\n", MAX_PLANS);
                goto usage_error;
            }
            files[n++] = v;
        } else if (!strcmp(argv[i], "--plans")) {
            if (!(v = cli_value("run", argc, argv, &i)))
                goto usage_error;
            if (n_dirs == MAX_PLANS) {
                fprintf(stderr, "convsel run: at most %d --plans directories\n", MAX_PLANS);
                goto usage_error;
            }
            dirs[n_dirs++] = v;
        } else if (!strcmp(argv[i], "--model")) {
            if (!(model_file = cli_value("run", argc, argv, &i)))
                goto usage_error;
        } else if (!strcmp(argv[i], "--max-time")) {
            if (!(v = cli_value("run", argc, argv, &i)) ||
                !cli_parse_double("run", "--max-time", v, 0.0, 3600.0, &job.max_time))
                goto usage_error;
        } else if (!strcmp(argv[i], "--json")) {
            job.json = 1;
        } else if (!strcmp(argv[i], "--check")) {
            job.check = 1;
        } else if (!strcmp(argv[i], "--baseline")) {
            baseline = 1;
        } else {
            fprintf(stderr, "convsel run: unknown argument '%s'\n", argv[i]);
            usage(stderr);
            goto usage_error;
        }
    }
    if (!n_net_args || (n == 0 && !n_dirs)) {
        fprintf(stderr, "convsel run: --net FILE and --plan PLAN (or --plans DIR) are required\n");
        goto usage_error;
    }
    if (n && n_dirs) {
        fprintf(stderr, "convsel run: --plan PLAN or --plans DIR, not both\n");
        goto usage_error;
    }
    if (model_file && !baseline) {
        fprintf(stderr, "convsel run: --model prices oneDNN alone's plan: it goes with --baseline\n");
        goto usage_error;
    }
    struct stat sb;
    for (size_t d = 0; d < n_dirs; d++)
        if (stat(dirs[d], &sb) != 0 || !S_ISDIR(sb.st_mode)) {
            fprintf(stderr, "convsel run: --plans: '%s' is not a directory\n", dirs[d]);
            goto usage_error;
        }

    char **nets = NULL;
    size_t n_nets = 0;
    int batch = 0, first_failure = CLI_OK;
    run_result *res = NULL;
    convsel_model *model = NULL;
    convsel_model_costs mc = {0};
    convsel_cost_source costs = {0};
    convsel_fingerprint here;
    rc = cli_gather_networks("run", net_args, n_net_args, &nets, &n_nets, &batch);
    if (rc == CLI_OK && batch && !n_dirs) {
        fprintf(stderr, "convsel run: several networks take --plans DIR (a plan each, DIR/NAME.plan.json)\n");
        rc = CLI_USAGE;
    }
    if (rc == CLI_OK && !(res = calloc(n_nets, sizeof *res))) {
        fprintf(stderr, "convsel run: out of memory\n");
        rc = CLI_FAIL;
    }
    if (convsel_fingerprint_get(&here) == CONVSEL_OK)
        job.here = &here;
    if (rc == CLI_OK && baseline && (rc = cli_open_model("run", model_file, &model)) == CLI_OK) {
        mc.model = model;
        convsel_fingerprint_get(&mc.cpu);
        costs = convsel_model_costs_source(&mc);
        job.baseline = &costs;
    }
    /* A network that fails is said and the others go on: the exit code is
     * the first failure's. */
    for (size_t f = 0; rc == CLI_OK && f < n_nets; f++) {
        char paths[MAX_PLANS][4096], stem[256];
        const char *dir_files[MAX_PLANS];
        cli_network_stem(nets[f], stem, sizeof stem);
        for (size_t d = 0; d < n_dirs; d++) {
            snprintf(paths[d], sizeof paths[d], "%s/%s.plan.json", dirs[d], stem);
            dir_files[d] = paths[d];
        }
        if (batch && !job.json)
            printf("%s== %s (%s)\n", f ? "\n" : "", stem, nets[f]);
        fflush(stdout); /* in order with a failure's message on stderr */
        int one = run_network(&job, nets[f], n_dirs ? dir_files : files, n_dirs ? n_dirs : n, &res[f]);
        if (one != CLI_OK && first_failure == CLI_OK)
            first_failure = one;
    }
    if (rc == CLI_OK && batch && !job.json)
        print_summary(nets, res, n_nets, dirs, n_dirs, baseline);
    if (rc == CLI_OK)
        rc = first_failure;
    convsel_model_destroy(model);
    convsel_network_files_free(nets, n_nets);
    free(res);
    free(net_args);
    return rc;

usage_error:
    free(net_args);
    return CLI_USAGE;
}
