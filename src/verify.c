/*
 * Selection that measures where the model cannot tell candidates apart:
 * oracle quality on the layers that need it, model speed on the rest.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct verified_costs {
    const convsel_cost_source *inner;
    convsel_verify_candidate *entries;
    size_t n, cap;
};

/* A verified layer's candidates are the ones measured there: a candidate
 * the model ranked below the top K keeps only a prediction, and a
 * prediction must not undercut measurements it was never compared with. */
static convsel_status verified_conv(void *ctx, const convsel_problem *problem, int threads, size_t primitive,
                                    double *ms)
{
    const struct verified_costs *vc = ctx;
    int layer_verified = 0;
    for (size_t i = 0; i < vc->n; i++) {
        if (!convsel_problem_same_shape(&vc->entries[i].shape, problem))
            continue;
        layer_verified = 1;
        if (vc->entries[i].primitive == primitive && vc->entries[i].kept) {
            *ms = vc->entries[i].ms;
            return CONVSEL_OK;
        }
    }
    if (layer_verified)
        return CONVSEL_NOT_APPLICABLE;
    return vc->inner->conv_ms(vc->inner->ctx, problem, threads, primitive, ms);
}

/* Reorders as the wrapped costs price them: both wrappers here (verified_costs,
 * variant_costs) hold the costs they wrap as their first member. */
static convsel_status inner_reorder(void *ctx, int64_t mb, int64_t c, int64_t h, int64_t w, convsel_layout from,
                                    convsel_layout to, int threads, double *ms)
{
    const convsel_cost_source *inner = *(const convsel_cost_source *const *)ctx;
    return inner->reorder_ms(inner->ctx, mb, c, h, w, from, to, threads, ms);
}

/* Cold reads as the wrapped costs price them (the same first member). */
static convsel_status inner_cold(void *ctx, int64_t mb, int64_t c, int64_t h, int64_t w, convsel_layout layout,
                                 int threads, double *ms)
{
    const convsel_cost_source *inner = *(const convsel_cost_source *const *)ctx;
    return inner->cold_read_ms(inner->ctx, mb, c, h, w, layout, threads, ms);
}

/* A candidate's time alone in the costs' statistic (the one the model learnt),
 * so that measured and predicted layers add up in the same units. */
static double alone_ms(convsel_statistic statistic, const convsel_measurement *m)
{
    return convsel_statistic_pick(statistic, m->timing.min_ms, m->timing.p10_ms, m->timing.median_ms);
}

static convsel_status add_entry(struct verified_costs *vc, const convsel_problem *p, size_t group, size_t primitive,
                                int anchor, int baseline, double ms, int runs)
{
    convsel_verify_candidate *grown = convsel_grow(vc->entries, vc->n, &vc->cap, 32, sizeof *grown);
    if (!grown)
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    vc->entries = grown;
    convsel_verify_candidate *e = &vc->entries[vc->n++];
    e->shape = *p;
    e->shape.name[0] = '\0';
    e->shape.repeat = 1;
    e->group = group;
    e->primitive = primitive;
    e->anchor = anchor;
    e->baseline = baseline;
    e->alone_ms = e->ms = ms;
    e->in_place_ms = 0.0;
    e->kept = 1;
    e->alone_runs = runs;
    return CONVSEL_OK;
}

/* Declared in internal.h. A candidate timed alone is not the candidate
 * inside a network: there its weights come from memory and its input from
 * the layer before, and a kernel that wins a near tie alone can lose by 2x in
 * place (direct_simd on ResNet-50's 1024->256 1x1 layers on the 16-core Xeon
 * server: 0.62-0.90 ms alone, 1.28-1.54 ms in the network, in three runs;
 * docs/selection.md). So the model's choice stands unless a candidate was
 * measured clearly faster: by more than CONVSEL_VERIFY_SWITCH_MARGIN. */
int convsel_verify_keeps(double model_choice_ms, int is_model_choice, double ms)
{
    if (is_model_choice || !(model_choice_ms > 0.0))
        return 1; /* the model's choice, or nothing measured to hold it to */
    return ms * (1.0 + CONVSEL_VERIFY_SWITCH_MARGIN) < model_choice_ms;
}

/* The model plan's choice among group g's entries, or NULL when it was not
 * measured there (not applicable when timed). */
static const convsel_verify_candidate *group_anchor(const convsel_verify_candidate *c, size_t n, size_t g)
{
    for (size_t i = 0; i < n; i++)
        if (c[i].group == g && c[i].anchor)
            return &c[i];
    return NULL;
}

/* Declared in internal.h. A candidate with an in-place time costs the
 * anchor's time alone scaled by their in-place ratio: the units of the
 * costs' statistic, which the rest of the network is priced in. */
void convsel_verify_decide(convsel_verify_candidate *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        convsel_verify_candidate *e = &c[i];
        const convsel_verify_candidate *a = group_anchor(c, n, e->group);
        if (a && a->in_place_ms > 0.0 && e->in_place_ms > 0.0) {
            e->kept = e->baseline || convsel_verify_keeps(a->in_place_ms, e->anchor, e->in_place_ms);
            e->ms = e->anchor ? e->alone_ms : a->alone_ms * e->in_place_ms / a->in_place_ms;
        } else {
            e->kept = convsel_verify_keeps(a ? a->alone_ms : 0.0, e->anchor, e->alone_ms);
            e->ms = e->alone_ms;
        }
    }
}

/* ------------------------------------------------------------ in place */

/* Variant v (>= 1) of the model's plan, as a cost source: on each verified
 * shape its v-th measured candidate other than the anchor (the anchor where
 * it has fewer), on every other layer the primitives the model's plan runs
 * on that shape; the costs' own prices, so that the selector still chooses
 * the layouts and reorders around them. */
struct variant_costs {
    const convsel_cost_source *inner;
    const struct verified_costs *vc;
    const convsel_plan *model_plan;
    const size_t *model_choice; /* per model-plan layer: its primitive's index */
    size_t variant;
};

static size_t variant_choice(const struct verified_costs *vc, size_t g, size_t v)
{
    size_t seen = 0, anchor = SIZE_MAX;
    for (size_t i = 0; i < vc->n; i++) {
        const convsel_verify_candidate *e = &vc->entries[i];
        if (e->group != g)
            continue;
        if (e->anchor)
            anchor = e->primitive;
        else if (++seen == v)
            return e->primitive;
    }
    return anchor;
}

static convsel_status variant_conv(void *ctx, const convsel_problem *problem, int threads, size_t primitive,
                                   double *ms)
{
    const struct variant_costs *c = ctx;
    size_t choice = SIZE_MAX; /* stays so where no anchor was measured: the model plan's choice */
    for (size_t i = 0; i < c->vc->n; i++)
        if (convsel_problem_same_shape(&c->vc->entries[i].shape, problem)) {
            choice = variant_choice(c->vc, c->vc->entries[i].group, c->variant);
            break;
        }
    int allowed = choice == primitive;
    for (size_t i = 0; i < c->model_plan->n_layers && choice == SIZE_MAX && !allowed; i++)
        allowed = c->model_choice[i] == primitive &&
                  convsel_problem_same_shape(&c->model_plan->layers[i].problem, problem);
    if (!allowed)
        return CONVSEL_NOT_APPLICABLE;
    return c->inner->conv_ms(c->inner->ctx, problem, threads, primitive, ms);
}

/* The bytes the variants' runners may take beside the model plan's:
 * CONVSEL_VERIFY_MEMORY_SHARE of the available memory, or
 * CONVSEL_VERIFY_MAX_BYTES; negative when that is unknown (no limit). */
static double variants_budget(void)
{
    double set = convsel_env_double("CONVSEL_VERIFY_MAX_BYTES", 0.0, -1.0);
    if (set >= 0.0)
        return set;
    double budget = CONVSEL_VERIFY_MEMORY_SHARE * (double)convsel_memory_available();
    return budget > 0.0 ? budget : -1.0;
}

/* How many interleaved rounds the networks get in place, when one round (a
 * run of each) takes about round_s: CONVSEL_VERIFY_IN_PLACE_ROUNDS where they
 * fit in budget_s, else as many as fit, and at least
 * CONVSEL_VERIFY_IN_PLACE_MIN_ROUNDS. A network that takes a second a run
 * (Mask R-CNN) would otherwise spend more time here than profiling every
 * primitive on every layer does. */
int convsel_verify_in_place_rounds(double round_s, double budget_s)
{
    if (!(round_s > 0.0))
        return CONVSEL_VERIFY_IN_PLACE_ROUNDS;
    double fit = floor(budget_s / round_s);
    if (fit >= (double)CONVSEL_VERIFY_IN_PLACE_ROUNDS)
        return CONVSEL_VERIFY_IN_PLACE_ROUNDS;
    return fit > CONVSEL_VERIFY_IN_PLACE_MIN_ROUNDS ? (int)fit : CONVSEL_VERIFY_IN_PLACE_MIN_ROUNDS; /* NaN too */
}

/* The same, with the budget CONVSEL_VERIFY_IN_PLACE_S (or the environment
 * variable of that name), and a note when it cut the rounds. */
static int in_place_rounds(double round_s, int verbose)
{
    double budget = convsel_env_double("CONVSEL_VERIFY_IN_PLACE_S", 0.0, CONVSEL_VERIFY_IN_PLACE_S);
    int rounds = convsel_verify_in_place_rounds(round_s, budget);
    if (rounds < CONVSEL_VERIFY_IN_PLACE_ROUNDS && verbose)
        fprintf(stderr,
                "convsel: note: --verify timed its networks in place over %d rounds, not %d (a round takes "
                "about %.1f s; %.0f s allowed)\n",
                rounds, CONVSEL_VERIFY_IN_PLACE_ROUNDS, round_s, budget);
    return rounds;
}

/* In place (unless opts->verify_alone): every measured candidate of every
 * verified shape timed inside the network. The model's plan and its variants
 * (variant_costs) are built and run interleaved with their layers timed (at
 * least in_place_rounds, then, where those were not cut, up to the timing
 * options' max_time_s); a candidate's in-place time is
 * the mean, over the layers of its shape that run it in any of them, of the
 * layer's median. Every shape's candidates share the variants, so there are
 * at most k + 2 networks to time (the top k, the anchor and oneDNN alone's
 * choice) whatever the network's size. */
static convsel_status time_in_place(const convsel_network *network, const convsel_select_options *opts,
                                    const convsel_cost_source *costs, const convsel_plan *model_plan,
                                    const convsel_timing_options *timing, struct verified_costs *vc)
{
    size_t n_var = 1;
    for (size_t i = 0; i < vc->n; i++) {
        size_t others = 0;
        for (size_t j = 0; j < vc->n; j++)
            others += vc->entries[j].group == vc->entries[i].group && !vc->entries[j].anchor;
        n_var = CONVSEL_MAX(n_var, others + 1);
    }
    if (n_var < 2)
        return CONVSEL_OK;
    size_t nl = model_plan->n_layers;
    convsel_plan **plans = calloc(n_var, sizeof *plans);
    convsel_runner **runners = calloc(n_var, sizeof *runners);
    size_t *model_choice = calloc(nl ? nl : 1, sizeof *model_choice);
    double *layer_ms = calloc(n_var * (nl ? nl : 1), sizeof *layer_ms);
    convsel_timed_fn *fns = calloc(n_var, sizeof *fns);
    void **ctxs = calloc(n_var, sizeof *ctxs);
    convsel_timing *measured = calloc(n_var, sizeof *measured);
    convsel_status st = plans && runners && model_choice && layer_ms && fns && ctxs && measured
                            ? CONVSEL_OK
                            : convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    for (size_t i = 0; i < nl && st == CONVSEL_OK; i++)
        st = convsel_primitive_find(model_plan->layers[i].primitive, &model_choice[i]);
    convsel_select_options quiet = *opts;
    quiet.verbose = 0;
    for (size_t v = 1; v < n_var && st == CONVSEL_OK; v++) {
        struct variant_costs c = {costs, vc, model_plan, model_choice, v};
        convsel_cost_source src = {variant_conv, inner_reorder, &c, costs->id, NULL, costs->statistic,
                                   costs->cold_read_ms ? inner_cold : NULL};
        st = convsel_select(network, &quiet, &src, &plans[v]);
    }
    /* One cold pass of each (its buffers touched the first time), then every
     * layer timed over the interleaved rounds. The model plan's runner comes
     * first: the memory it took bounds how many variants run beside it. The
     * cold passes price a round. */
    /* Variants are made while the memory they take holds: the next is
     * priced as the largest made so far, the first as a whole runner (it
     * shares the model plan's unchanged layers, so it takes less). */
    size_t n_run = n_var, before = convsel_resident_bytes(), after_model = 0, last = 0, each = 0;
    const double budget = variants_budget();
    double round_s = 0.0, start = convsel_now();
    for (size_t v = 0; v < n_run && st == CONVSEL_OK; v++) {
        if (v >= 1 && budget >= 0.0 && (double)(last - after_model) + (double)each > budget) {
            if (opts->verbose)
                fprintf(stderr,
                        "convsel: note: --verify ran %zu of %zu networks in place (the next about %.0f MiB, %.0f of "
                        "%.0f MiB allowed taken); the other candidates were decided by their times alone\n",
                        v < 2 ? 0 : v, n_var, (double)each / 1048576.0, (double)(last - after_model) / 1048576.0,
                        budget / 1048576.0);
            n_run = v;
            break;
        }
        /* The variants share the model plan's unchanged layers. */
        st = v ? convsel_runner_create_like(plans[v], 1, runners[0], &runners[v])
               : convsel_runner_create(model_plan, 1, &runners[0]);
        double t0 = convsel_now();
        if (st == CONVSEL_OK)
            st = convsel_runner_run(runners[v]);
        round_s += convsel_now() - t0;
        convsel_runner_time_layers(runners[v], 1);
        fns[v] = convsel_runner_timed;
        ctxs[v] = runners[v];
        size_t now = convsel_resident_bytes();
        if (v == 0) {
            after_model = last = now;
            each = now > before ? now - before : 1;
        } else {
            size_t took = now > last ? now - last : 1;
            each = v == 1 ? took : CONVSEL_MAX(each, took);
            last = CONVSEL_MAX(now, last);
        }
    }
    convsel_timing_options topts;
    if (timing)
        topts = *timing;
    else
        convsel_timing_options_default(&topts);
    if (st == CONVSEL_OK && n_run >= 2) {
        int rounds = in_place_rounds(round_s, opts->verbose);
        if (rounds < CONVSEL_VERIFY_IN_PLACE_ROUNDS) { /* the budget decides, not the timing options */
            topts.min_rounds = rounds;
            topts.max_rounds = rounds;
        } else {
            topts.min_rounds = CONVSEL_MAX(topts.min_rounds, rounds);
            topts.max_rounds = CONVSEL_MAX(topts.max_rounds, topts.min_rounds);
        }
    }
    topts.target_rel_ci = 0.01;
    topts.flush_bytes = 0;
    double timed_from = convsel_now();
    if (st == CONVSEL_OK && n_run >= 2)
        st = convsel_time_interleaved(n_run, fns, ctxs, &topts, measured);
    if (st == CONVSEL_OK && n_run >= 2 && opts->verbose)
        fprintf(stderr,
                "convsel: --verify in place: %zu networks, %d rounds each; %.1f s to build them and run each once "
                "(%.1f s of it the runs), %.1f s timed\n",
                n_run, measured[0].runs, timed_from - start, round_s, convsel_now() - timed_from);
    for (size_t v = 0; v < n_run && n_run >= 2 && st == CONVSEL_OK; v++)
        for (size_t i = 0; i < nl && st == CONVSEL_OK; i++) {
            double reorder_ms;
            st = convsel_runner_layer_ms(runners[v], i, &layer_ms[v * nl + i], &reorder_ms);
        }
    for (size_t k = 0; k < vc->n && st == CONVSEL_OK; k++) {
        convsel_verify_candidate *e = &vc->entries[k];
        const char *name = convsel_primitive_name(e->primitive);
        double sum = 0.0;
        size_t count = 0;
        for (size_t v = 0; v < n_run && n_run >= 2; v++) {
            const convsel_plan *plan = v ? plans[v] : model_plan;
            for (size_t i = 0; i < plan->n_layers && i < nl; i++)
                if (!strcmp(plan->layers[i].primitive, name) &&
                    convsel_problem_same_shape(&plan->layers[i].problem, &e->shape)) {
                    sum += layer_ms[v * nl + i];
                    count++;
                }
        }
        e->in_place_ms = count ? sum / (double)count : 0.0;
    }
    for (size_t v = 0; v < n_var; v++) {
        convsel_runner_destroy(runners ? runners[v] : NULL);
        if (v && plans)
            convsel_plan_destroy(plans[v]);
    }
    free(measured);
    free(ctxs);
    free(fns);
    free(layer_ms);
    free(model_choice);
    free(runners);
    free(plans);
    return st;
}

/* Every group with more than one candidate where the networks in place did
 * not run them all, timed alone again with the full timing options: their
 * times alone decide there. */
static convsel_status retime_alone(struct verified_costs *vc, size_t n_groups, int threads,
                                   const convsel_timing_options *timing, unsigned char *selected,
                                   convsel_measurement *results)
{
    const size_t np = convsel_primitive_count();
    convsel_status st = CONVSEL_OK;
    for (size_t g = 0; g < n_groups && st == CONVSEL_OK; g++) {
        size_t n = 0, first = SIZE_MAX;
        int missing = 0;
        for (size_t i = 0; i < vc->n; i++)
            if (vc->entries[i].group == g) {
                first = first == SIZE_MAX ? i : first;
                n++;
                missing |= !(vc->entries[i].in_place_ms > 0.0);
            }
        if (n < 2 || !missing)
            continue;
        memset(selected, 0, np);
        for (size_t i = 0; i < vc->n; i++)
            if (vc->entries[i].group == g)
                selected[vc->entries[i].primitive] = 1;
        st = convsel_measure_problem(&vc->entries[first].shape, threads, selected, timing, results);
        for (size_t i = 0; i < vc->n && st == CONVSEL_OK; i++) {
            convsel_verify_candidate *e = &vc->entries[i];
            const convsel_measurement *m = &results[e->primitive];
            if (e->group == g && m->applicable) {
                e->alone_ms = e->ms = alone_ms(vc->inner->statistic, m);
                e->alone_runs = m->timing.runs;
            }
        }
    }
    return st;
}

/* ------------------------------------------------------------ selection */

struct ranked {
    size_t primitive;
    double ms;
};

static int cmp_ranked(const void *a, const void *b)
{
    double x = ((const struct ranked *)a)->ms, y = ((const struct ranked *)b)->ms;
    return (x > y) - (x < y);
}

convsel_status convsel_select_verified(const convsel_network *network, const convsel_select_options *opts,
                                       const convsel_cost_source *costs, int k, double uncertainty,
                                       const convsel_timing_options *timing, convsel_plan **plan)
{
    convsel_status st = convsel_verify_select(network, opts, costs, k, uncertainty, timing, plan, NULL, NULL);
    if (st == CONVSEL_OK && (st = convsel_plan_made_with_init(&(*plan)->made_with, opts, k, uncertainty, 0, 0.0)) !=
                                CONVSEL_OK) {
        convsel_plan_destroy(*plan);
        *plan = NULL;
    }
    return st;
}

/* Declared in internal.h. */
convsel_status convsel_verify_select(const convsel_network *network, const convsel_select_options *opts_in,
                                     const convsel_cost_source *costs, int k, double uncertainty,
                                     const convsel_timing_options *timing, convsel_plan **plan,
                                     convsel_verify_candidate **candidates, size_t *n_candidates)
{
    if (candidates)
        *candidates = NULL;
    if (n_candidates)
        *n_candidates = 0;
    convsel_select_options opts = {1, 0.0, NULL, 0, 0};
    if (opts_in)
        opts = *opts_in;
    if (!network || !costs || !plan)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "convsel_select_verified: missing arguments");
    if (k < 2)
        return convsel_select(network, &opts, costs, plan);

    size_t np = convsel_primitive_count(), n_lines = convsel_network_size(network);
    struct ranked *ranked = calloc(np, sizeof *ranked);
    unsigned char *selected = calloc(np, 1), *verified_line = calloc(n_lines ? n_lines : 1, 1);
    convsel_measurement *results = calloc(np, sizeof *results);
    struct verified_costs vc = {costs, NULL, 0, 0};
    convsel_status st = (ranked && selected && verified_line && results)
                            ? CONVSEL_OK
                            : convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    size_t n_verified = 0;
    double t0 = convsel_now();
    /* Where the networks will decide, the times alone only screen. */
    convsel_timing_options alone;
    if (timing)
        alone = *timing;
    else
        convsel_timing_options_default(&alone);
    if (!opts.verify_alone) {
        alone.max_time_s = CONVSEL_MIN(alone.max_time_s, CONVSEL_VERIFY_SCREEN_S);
        alone.min_rounds = CONVSEL_MIN(alone.min_rounds, CONVSEL_VERIFY_SCREEN_ROUNDS);
        alone.max_rounds = CONVSEL_MAX(alone.max_rounds, alone.min_rounds);
    }
    /* The model's own plan: on each layer its choice is the anchor that a
     * measured candidate must beat by the margin (its choice, not merely its
     * fastest prediction there, which the layouts around may have ruled out). */
    convsel_plan *model_plan = NULL;
    if (st == CONVSEL_OK)
        st = convsel_select(network, &opts, costs, &model_plan);
    /* oneDNN alone's choice is measured too wherever it applies: it is what the
     * plan is judged against, and a model led by warm per-layer times can rank
     * it below the top k where in the network it is faster (DenseNet on
     * Emerald Rapids: the calibrated model put onednn_winograd first on all 36
     * layers and onednn_auto fourth or lower on most; docs/selection.md). */
    const size_t baseline = convsel_primitive_index("onednn_auto"); /* SIZE_MAX where absent */
    for (size_t l = 0; l < n_lines && st == CONVSEL_OK; l++) {
        const convsel_problem *p = convsel_network_layer(network, l);
        int done = 0;
        for (size_t j = 0; j < l && !done; j++)
            done = verified_line[j] && convsel_problem_same_shape(convsel_network_layer(network, j), p);
        if (done) {
            verified_line[l] = 1;
            continue;
        }
        size_t n = 0;
        for (size_t i = 0; i < np; i++) {
            double ms;
            /* Naive kernels are left out as the selector leaves them out
             * (and one run of them can take seconds). */
            if (!convsel_select_allowed(i, p, &opts, NULL, 0) || convsel_select_runs_naive(i, p, opts.threads) ||
                costs->conv_ms(costs->ctx, p, opts.threads, i, &ms) != CONVSEL_OK)
                continue;
            ranked[n].primitive = i;
            ranked[n].ms = ms;
            n++;
        }
        if (n < 2)
            continue;
        qsort(ranked, n, sizeof *ranked, cmp_ranked);
        if (ranked[1].ms / ranked[0].ms - 1.0 >= 2.0 * uncertainty)
            continue;
        /* The top k, and the model plan's choice and oneDNN alone's here where
         * they rank lower. */
        size_t top = CONVSEL_MIN(n, (size_t)k), anchor = np;
        for (size_t i = 0; i < model_plan->n_layers; i++)
            if (convsel_problem_same_shape(&model_plan->layers[i].problem, p)) {
                if (convsel_primitive_find(model_plan->layers[i].primitive, &anchor) != CONVSEL_OK)
                    anchor = np;
                break;
            }
        const size_t extra[2] = {anchor, baseline};
        for (int x = 0; x < 2; x++)
            for (size_t r = top; r < n && extra[x] < np; r++)
                if (ranked[r].primitive == extra[x]) {
                    struct ranked a = ranked[r];
                    ranked[r] = ranked[top];
                    ranked[top++] = a;
                    break;
                }
        memset(selected, 0, np);
        for (size_t r = 0; r < top; r++)
            selected[ranked[r].primitive] = 1;
        st = convsel_measure_problem(p, opts.threads, selected, &alone, results);
        for (size_t r = 0; r < top && st == CONVSEL_OK; r++) {
            const convsel_measurement *m = &results[ranked[r].primitive];
            if (!m->applicable)
                continue;
            st = add_entry(&vc, p, n_verified, ranked[r].primitive, ranked[r].primitive == anchor,
                           ranked[r].primitive == baseline, alone_ms(costs->statistic, m), m->timing.runs);
        }
        verified_line[l] = 1;
        n_verified++;
    }
    if (st == CONVSEL_OK && !opts.verify_alone)
        st = time_in_place(network, &opts, costs, model_plan, timing, &vc);
    if (st == CONVSEL_OK && !opts.verify_alone)
        st = retime_alone(&vc, n_verified, opts.threads, timing, selected, results);
    if (st == CONVSEL_OK)
        convsel_verify_decide(vc.entries, vc.n);
    convsel_plan_destroy(model_plan);
    double spent = convsel_now() - t0;
    if (st == CONVSEL_OK) {
        convsel_cost_source wrapped = {verified_conv, inner_reorder, &vc, costs->id, NULL, costs->statistic,
                                       costs->cold_read_ms ? inner_cold : NULL};
        st = convsel_select(network, &opts, &wrapped, plan);
    }
    if (st == CONVSEL_OK) {
        (*plan)->verified_layers = n_verified;
        (*plan)->verify_s = spent;
        for (size_t i = 0; i < (*plan)->n_layers; i++)
            for (size_t l = 0; l < n_lines; l++)
                if (verified_line[l] && convsel_problem_same_shape(convsel_network_layer(network, l), &(*plan)->layers[i].problem))
                    (*plan)->layers[i].verified = 1;
    }
    if (st == CONVSEL_OK && candidates && n_candidates) {
        *candidates = vc.entries;
        *n_candidates = vc.n;
        vc.entries = NULL;
    }
    free(vc.entries);
    free(results);
    free(verified_line);
    free(selected);
    free(ranked);
    return st;
}
