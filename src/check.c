/*
 * Selection checked end to end (convsel_check_plans, convsel_select_checked):
 * the model's plan, the verified plan, oneDNN alone and the plan chosen
 * without each family of primitives the plan uses run as whole networks,
 * interleaved; the fastest is kept.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* End-to-end rounds of each finalist at least. */
#define CHECK_MIN_ROUNDS 5
/* A finalist whose warm pass takes this many times the fastest warm pass is
 * not timed further. */
#define CHECK_DROP_RATIO 1.5
/* A finalist whose first (cold) pass takes this many times the fastest cold
 * pass is out without a warm pass: cold passes can take 3x a warm one (page
 * faults, oneDNN's first execution; ResNet-50's verified plan at 2 threads:
 * 96 ms cold, 31 ms warm), but oneDNN alone can take 200x the plan's time. */
#define CHECK_COLD_RATIO 10.0
/* At most this many plans without one family each (there are four). */
#define CHECK_MAX_ABLATIONS 4
_Static_assert(CHECK_MAX_ABLATIONS == sizeof ((convsel_check_report *)0)->without /
                                          sizeof ((convsel_check_report *)0)->without[0],
               "the report has a slot for every plan without a family");

const char *convsel_kept_plan_name(convsel_kept_plan kept)
{
    switch (kept) {
    case CONVSEL_KEPT_MODEL_PLAN:
        return "model plan";
    case CONVSEL_KEPT_VERIFIED:
        return "verified plan";
    case CONVSEL_KEPT_ONEDNN_ALONE:
        return "oneDNN alone";
    case CONVSEL_KEPT_WITHOUT_FAMILY:
        return "plan without a family";
    }
    return "?";
}

static int same_choices(const convsel_plan *a, const convsel_plan *b)
{
    if (a->n_layers != b->n_layers || a->boundary_layout != b->boundary_layout)
        return 0;
    for (size_t i = 0; i < a->n_layers; i++)
        if (strcmp(a->layers[i].primitive, b->layers[i].primitive) != 0)
            return 0;
    return 1;
}

enum { MODEL, VERIFIED, ALONE, N_FIXED, N_FINALISTS = N_FIXED + CHECK_MAX_ABLATIONS };

/* Times the n finalists that exist and differ from an earlier one; a copy
 * gets its twin's time. *best: the fastest median. */
static convsel_status time_finalists(const convsel_plan *const *plans, int n, double max_time_s, double *median_ms,
                                     int *best)
{
    convsel_runner *runners[N_FINALISTS] = {0};
    convsel_timed_fn fns[N_FINALISTS];
    void *ctxs[N_FINALISTS];
    convsel_timing timings[N_FINALISTS];
    int twin[N_FINALISTS], slot[N_FINALISTS];
    size_t m = 0;
    convsel_status st = CONVSEL_OK;
    for (int i = 0; i < n && st == CONVSEL_OK; i++) {
        twin[i] = i;
        median_ms[i] = 0.0;
        if (!plans[i])
            continue;
        for (int j = 0; j < i && twin[i] == i; j++)
            if (plans[j] && same_choices(plans[i], plans[j]))
                twin[i] = twin[j];
        if (twin[i] != i)
            continue;
        /* Each its own, unlike --verify's variants (convsel_runner_create_like):
         * a finalist sharing weights with the one run before it would find them
         * in cache (this VM's L3 holds a ResNet-50 pass), and oneDNN alone,
         * which shares little, would not. */
        st = convsel_runner_create(plans[i], 1, &runners[m]);
        fns[m] = convsel_runner_timed;
        ctxs[m] = runners[m];
        slot[i] = (int)m++;
    }
    /* A cold pass of each (it touches every buffer for the first time), then
     * a warm pass of those within CHECK_COLD_RATIO of the fastest cold one; a
     * finalist more than CHECK_DROP_RATIO slower than the fastest warm pass
     * is out before the interleaved rounds. Judging by the cold pass alone
     * dropped plans that were the fastest once warm. */
    double pass_ms[N_FINALISTS] = {0}, fastest = 0.0, fastest_warm = 0.0;
    for (size_t j = 0; j < m && m > 1 && st == CONVSEL_OK; j++) {
        double t0 = convsel_now();
        st = convsel_runner_run(runners[j]);
        pass_ms[j] = (convsel_now() - t0) * 1e3;
        fastest = j == 0 || pass_ms[j] < fastest ? pass_ms[j] : fastest;
    }
    int dropped[N_FINALISTS] = {0}, have_warm = 0;
    for (size_t j = 0; j < m && m > 1 && st == CONVSEL_OK; j++) {
        if (pass_ms[j] > CHECK_COLD_RATIO * fastest) {
            dropped[j] = 1;
            continue;
        }
        double t0 = convsel_now();
        st = convsel_runner_run(runners[j]);
        pass_ms[j] = (convsel_now() - t0) * 1e3;
        if (!have_warm || pass_ms[j] < fastest_warm)
            fastest_warm = pass_ms[j];
        have_warm = 1;
    }
    size_t kept = 0;
    for (size_t j = 0; j < m && m > 1 && st == CONVSEL_OK; j++) {
        dropped[j] = dropped[j] || pass_ms[j] > CHECK_DROP_RATIO * fastest_warm;
        if (!dropped[j]) {
            fns[kept] = fns[j];
            ctxs[kept] = ctxs[j];
            kept++;
        }
    }
    convsel_timing_options topts;
    convsel_timing_options_default(&topts);
    topts.warmup_s = 0.05;
    topts.min_rounds = CHECK_MIN_ROUNDS;
    topts.max_time_s = max_time_s;
    topts.target_rel_ci = 0.01;
    convsel_timing measured[N_FINALISTS];
    if (st == CONVSEL_OK && m > 1 && kept > 1)
        st = convsel_time_interleaved(kept, fns, ctxs, &topts, measured);
    /* Back to the runners' order; a dropped finalist (or a lone survivor)
     * keeps its last pass (warm where it had one). */
    for (size_t j = 0, k = 0; j < m && m > 1 && st == CONVSEL_OK; j++)
        timings[j].median_ms = dropped[j] || kept < 2 ? pass_ms[j] : measured[k++].median_ms;
    for (int i = 0; i < n && st == CONVSEL_OK; i++) {
        if (!plans[i])
            continue;
        median_ms[i] = m > 1 ? timings[slot[twin[i]]].median_ms : 0.0;
        /* Ties keep the earlier finalist: the model's plan, then the verified. */
        if (i == 0 || median_ms[i] < median_ms[*best])
            *best = i;
    }
    for (size_t j = 0; j < m; j++)
        convsel_runner_destroy(runners[j]);
    return st;
}

/* A copy of src with its own layers. */
static convsel_status plan_copy(const convsel_plan *src, convsel_plan **out)
{
    convsel_plan *p = malloc(sizeof *p);
    convsel_plan_layer *layers = malloc((src->n_layers ? src->n_layers : 1) * sizeof *layers);
    if (!p || !layers) {
        free(p);
        free(layers);
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    }
    *p = *src;
    memcpy(layers, src->layers, src->n_layers * sizeof *layers);
    p->layers = layers;
    *out = p;
    return CONVSEL_OK;
}

/* The plan from costs with only the primitives excluded[] leaves (and quiet),
 * or NULL, the error cleared, when they cannot compute every layer. */
static convsel_plan *plan_excluding(const convsel_network *network, const convsel_select_options *opts,
                                    const convsel_cost_source *costs, const unsigned char *excluded)
{
    convsel_select_options o = *opts;
    o.excluded = excluded;
    o.verbose = 0;
    convsel_plan *plan = NULL;
    if (convsel_select(network, &o, costs, &plan) != CONVSEL_OK) {
        convsel_error_clear();
        return NULL;
    }
    return plan;
}

convsel_status convsel_check_plans(const convsel_network *network, const convsel_select_options *opts_in,
                                   const convsel_cost_source *costs, const convsel_plan *model_plan,
                                   const convsel_plan *verified_plan, double max_time_s, convsel_plan **plan,
                                   convsel_check_report *report)
{
    convsel_select_options opts = {1, 0.0, NULL, 0, 0};
    if (opts_in)
        opts = *opts_in;
    if (!network || !costs || !model_plan || !plan || !(max_time_s >= 0))
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "convsel_check_plans: missing arguments or a negative time");
    *plan = NULL;
    double t0 = convsel_now();
    size_t np = convsel_primitive_count(), auto_index;
    convsel_status st = convsel_primitive_find("onednn_auto", &auto_index);
    if (st != CONVSEL_OK)
        return st;
    unsigned char *only_auto = malloc(np);
    if (!only_auto)
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");

    /* oneDNN alone: onednn_auto everywhere, where it computes every layer
     * (and the caller did not exclude it). */
    for (size_t i = 0; i < np; i++)
        only_auto[i] = i != auto_index;
    convsel_plan *alone =
        opts.excluded && opts.excluded[auto_index] ? NULL : plan_excluding(network, &opts, costs, only_auto);

    /* Per-layer times can mislead inside a network, and one family at a
     * time: on the twelfth session's Xeon, the own Winograd kernels, the
     * fastest on ResNet-50's 3x3 layers timed alone, made the whole network
     * 20% slower than the plan without them (their transformed weights, 4x
     * the direct kernels', no longer in cache). So the plan is chosen again
     * without each family it uses but oneDNN's, and those run too. */
    const convsel_plan *base = verified_plan ? verified_plan : model_plan;
    convsel_plan *ablated[CHECK_MAX_ABLATIONS] = {0};
    const char *families[CHECK_MAX_ABLATIONS];
    int n_ablated = 0;
    unsigned char *without = malloc(np);
    if (!without)
        st = convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    for (size_t l = 0; st == CONVSEL_OK && l < base->n_layers && n_ablated < CHECK_MAX_ABLATIONS; l++) {
        size_t i;
        if (convsel_primitive_find(base->layers[l].primitive, &i) != CONVSEL_OK)
            continue;
        const char *family = convsel_primitive_family(i);
        int seen = strcmp(family, "onednn") == 0 || strcmp(family, "reference") == 0;
        for (int a = 0; a < n_ablated && !seen; a++)
            seen = strcmp(families[a], family) == 0;
        if (seen)
            continue;
        for (size_t j = 0; j < np; j++)
            without[j] = (opts.excluded && opts.excluded[j]) || strcmp(convsel_primitive_family(j), family) == 0;
        families[n_ablated] = family;
        /* NULL where the family computes a layer nothing else does. */
        ablated[n_ablated++] = plan_excluding(network, &opts, costs, without);
    }

    const convsel_plan *final[N_FINALISTS] = {model_plan, verified_plan, alone};
    for (int a = 0; a < n_ablated; a++)
        final[N_FIXED + a] = ablated[a];
    double median[N_FINALISTS] = {0};
    int best = MODEL;
    if (st == CONVSEL_OK)
        st = time_finalists(final, N_FIXED + n_ablated, max_time_s, median, &best);
    double check_s = convsel_now() - t0;
    if (st == CONVSEL_OK)
        st = plan_copy(final[best], plan);
    if (st == CONVSEL_OK) {
        if (verified_plan) {
            (*plan)->verified_layers = verified_plan->verified_layers;
            (*plan)->verify_s = verified_plan->verify_s;
        }
        (*plan)->verify_s += check_s;
        if (report) {
            memset(report, 0, sizeof *report);
            report->kept = best == MODEL      ? CONVSEL_KEPT_MODEL_PLAN
                           : best == VERIFIED ? CONVSEL_KEPT_VERIFIED
                           : best == ALONE    ? CONVSEL_KEPT_ONEDNN_ALONE
                                              : CONVSEL_KEPT_WITHOUT_FAMILY;
            report->model_plan_ms = median[MODEL];
            report->verified_ms = median[VERIFIED];
            report->onednn_alone_ms = median[ALONE];
            report->check_s = check_s;
            report->n_without = (size_t)n_ablated;
            for (int a = 0; a < n_ablated; a++) {
                snprintf(report->without[a].family, sizeof report->without[a].family, "%s", families[a]);
                report->without[a].ms = median[N_FIXED + a];
            }
            if (best >= N_FIXED)
                snprintf(report->kept_without, sizeof report->kept_without, "%s", families[best - N_FIXED]);
        }
    }
    for (int a = 0; a < n_ablated; a++)
        convsel_plan_destroy(ablated[a]);
    free(without);
    convsel_plan_destroy(alone);
    free(only_auto);
    return st;
}

convsel_status convsel_select_checked(const convsel_network *network, const convsel_select_options *opts,
                                      const convsel_cost_source *costs, int k, double uncertainty,
                                      const convsel_timing_options *timing, double max_time_s, convsel_plan **plan,
                                      convsel_check_report *report)
{
    if (!network || !costs || !plan || !(max_time_s >= 0))
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "convsel_select_checked: missing arguments or a negative time");
    *plan = NULL;
    convsel_plan *model_plan = NULL, *verified = NULL;
    convsel_status st = convsel_select(network, opts, costs, &model_plan);
    if (st == CONVSEL_OK)
        st = convsel_select_verified(network, opts, costs, k, uncertainty, timing, &verified);
    if (st == CONVSEL_OK)
        st = convsel_check_plans(network, opts, costs, model_plan, verified, max_time_s, plan, report);
    if (st == CONVSEL_OK &&
        (st = convsel_plan_made_with_init(&(*plan)->made_with, opts, k, uncertainty, 1, max_time_s)) != CONVSEL_OK) {
        convsel_plan_destroy(*plan);
        *plan = NULL;
    }
    convsel_plan_destroy(model_plan);
    convsel_plan_destroy(verified);
    return st;
}
