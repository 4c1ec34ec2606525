/*
 * Selection that measures where the model cannot tell candidates apart:
 * oracle quality on the layers that need it, model speed on the rest.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct verified_entry {
    convsel_problem shape; /* name cleared */
    size_t primitive;
    double ms;
};

struct verified_costs {
    const convsel_cost_source *inner;
    struct verified_entry *entries;
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
        if (vc->entries[i].primitive == primitive) {
            *ms = vc->entries[i].ms;
            return CONVSEL_OK;
        }
    }
    if (layer_verified)
        return CONVSEL_NOT_APPLICABLE;
    return vc->inner->conv_ms(vc->inner->ctx, problem, threads, primitive, ms);
}

static convsel_status verified_reorder(void *ctx, int64_t mb, int64_t c, int64_t h, int64_t w, convsel_layout from,
                                       convsel_layout to, int threads, double *ms)
{
    const struct verified_costs *vc = ctx;
    return vc->inner->reorder_ms(vc->inner->ctx, mb, c, h, w, from, to, threads, ms);
}

static convsel_status add_entry(struct verified_costs *vc, const convsel_problem *p, size_t primitive, double ms)
{
    if (vc->n == vc->cap) {
        size_t cap = vc->cap ? 2 * vc->cap : 32;
        struct verified_entry *grown = realloc(vc->entries, cap * sizeof *grown);
        if (!grown)
            return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
        vc->entries = grown;
        vc->cap = cap;
    }
    struct verified_entry *e = &vc->entries[vc->n++];
    e->shape = *p;
    e->shape.name[0] = '\0';
    e->shape.repeat = 1;
    e->primitive = primitive;
    e->ms = ms;
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

struct ranked {
    size_t primitive;
    double ms;
};

static int cmp_ranked(const void *a, const void *b)
{
    double x = ((const struct ranked *)a)->ms, y = ((const struct ranked *)b)->ms;
    return (x > y) - (x < y);
}

convsel_status convsel_select_verified(const convsel_network *network, const convsel_select_options *opts_in,
                                       const convsel_cost_source *costs, int k, double uncertainty,
                                       const convsel_timing_options *timing, convsel_plan **plan)
{
    convsel_select_options opts = {1, 0.0, NULL, 0};
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
    /* The model's own plan: on each layer its choice is the anchor that a
     * measured candidate must beat by the margin (its choice, not merely its
     * fastest prediction there, which the layouts around may have ruled out). */
    convsel_plan *model_plan = NULL;
    if (st == CONVSEL_OK)
        st = convsel_select(network, &opts, costs, &model_plan);
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
        /* The top k, and the model plan's choice here where it ranks lower. */
        size_t top = CONVSEL_MIN(n, (size_t)k), anchor = np;
        for (size_t i = 0; i < model_plan->n_layers; i++)
            if (convsel_problem_same_shape(&model_plan->layers[i].problem, p)) {
                if (convsel_primitive_find(model_plan->layers[i].primitive, &anchor) != CONVSEL_OK)
                    anchor = np;
                break;
            }
        for (size_t r = top; r < n && anchor < np; r++)
            if (ranked[r].primitive == anchor) {
                struct ranked a = ranked[r];
                ranked[r] = ranked[top];
                ranked[top++] = a;
                break;
            }
        memset(selected, 0, np);
        for (size_t r = 0; r < top; r++)
            selected[ranked[r].primitive] = 1;
        st = convsel_measure_problem(p, opts.threads, selected, timing, results);
        /* The statistic the costs stand for (the one the model learnt), so
         * that measured and predicted layers add up in the same units. */
        double anchor_ms = 0.0;
        if (anchor < np && results[anchor].applicable)
            anchor_ms = convsel_statistic_pick(costs->statistic, results[anchor].timing.min_ms,
                                               results[anchor].timing.p10_ms, results[anchor].timing.median_ms);
        for (size_t r = 0; r < top && st == CONVSEL_OK; r++) {
            const convsel_measurement *m = &results[ranked[r].primitive];
            if (!m->applicable)
                continue;
            double ms = convsel_statistic_pick(costs->statistic, m->timing.min_ms, m->timing.p10_ms, m->timing.median_ms);
            if (convsel_verify_keeps(anchor_ms, ranked[r].primitive == anchor, ms))
                st = add_entry(&vc, p, ranked[r].primitive, ms);
        }
        verified_line[l] = 1;
        n_verified++;
    }
    convsel_plan_destroy(model_plan);
    double spent = convsel_now() - t0;
    if (st == CONVSEL_OK) {
        convsel_cost_source wrapped = {verified_conv, verified_reorder, &vc, costs->id, NULL, costs->statistic};
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
    free(vc.entries);
    free(results);
    free(verified_line);
    free(selected);
    free(ranked);
    return st;
}
