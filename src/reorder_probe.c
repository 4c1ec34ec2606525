/* Reorders timed where a network pays them: between the layers of a plan made
 * to change layout at every connected boundary it can, run end to end. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convsel.h"
#include "internal.h"

/* A cost source under which every primitive costs the same: convsel_select
 * then only builds the plan's skeleton (the layers in order, expanded, with
 * their connections), which the probe fills in. */
static convsel_status flat_conv(void *ctx, const convsel_problem *problem, int threads, size_t primitive, double *ms)
{
    (void)ctx, (void)problem, (void)threads, (void)primitive;
    *ms = 1.0;
    return CONVSEL_OK;
}

static convsel_status flat_reorder(void *ctx, int64_t mb, int64_t c, int64_t h, int64_t w, convsel_layout from,
                                   convsel_layout to, int threads, double *ms)
{
    (void)ctx, (void)mb, (void)c, (void)h, (void)w, (void)from, (void)to, (void)threads;
    *ms = 0.0;
    return CONVSEL_OK;
}

/* Declared in internal.h. */
convsel_status convsel_probe_skeleton(const convsel_network *network, int threads, const unsigned char *allowed,
                                      convsel_plan **plan)
{
    const size_t n_prims = convsel_primitive_count();
    unsigned char *excluded = malloc(n_prims);
    if (!excluded)
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    for (size_t p = 0; p < n_prims; p++)
        excluded[p] = !allowed[p];
    convsel_select_options opts = {0};
    opts.threads = threads;
    opts.excluded = excluded;
    convsel_cost_source flat = {0};
    flat.conv_ms = flat_conv;
    flat.reorder_ms = flat_reorder;
    convsel_status st = convsel_select(network, &opts, &flat, plan);
    free(excluded);
    return st;
}

/* Declared in internal.h. */
convsel_status convsel_probe_run(const convsel_plan *plan, double max_time_s, int min_runs, uint64_t seed,
                                 convsel_runner **runner)
{
    *runner = NULL;
    if (min_runs < 1 || min_runs > 50)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "convsel_probe_run: min_runs %d is not in 1..50", min_runs);
    convsel_status st = convsel_runner_create(plan, seed, runner);
    for (int k = 0; k < 2 && st == CONVSEL_OK; k++)
        st = convsel_runner_run(*runner);
    if (st == CONVSEL_OK) {
        convsel_runner_time_layers(*runner, 1);
        double t0 = convsel_now();
        for (int k = 0; k < 50 && st == CONVSEL_OK && (k < min_runs || convsel_now() - t0 < max_time_s); k++)
            st = convsel_runner_run(*runner);
    }
    return st;
}

/* Gives layer i of plan the allowed primitive whose input layout differs from
 * what layer i-1 writes, choosing the layout pair timed least so far (ties:
 * the catalogue order rotated by i, so that neighbouring layers vary).
 * Leaves the layer as it is when no allowed primitive changes the layout. */
static void choose_layer(convsel_plan *plan, size_t i, const unsigned char *allowed,
                         int pair_count[CONVSEL_LAYOUT_COUNT][CONVSEL_LAYOUT_COUNT])
{
    convsel_plan_layer *l = &plan->layers[i];
    const size_t n = convsel_primitive_count();
    const convsel_layout prev = i > 0 && l->connected ? plan->layers[i - 1].dst_layout : (convsel_layout)-1;
    int best_count = 0;
    size_t best = SIZE_MAX;
    convsel_layout best_src = CONVSEL_LAYOUT_NCHW, best_dst = CONVSEL_LAYOUT_NCHW;
    for (size_t k = 0; k < n; k++) {
        size_t p = (k + i) % n;
        convsel_layout src, dst;
        if (!allowed[p] || convsel_primitive_layouts_for(p, &l->problem, plan->threads, &src, &dst) != CONVSEL_OK)
            continue;
        int changes = (int)prev >= 0 && src != prev;
        int count = changes ? pair_count[prev][src] : 1 << 30;
        if (best == SIZE_MAX || count < best_count) {
            best = p;
            best_count = count;
            best_src = src;
            best_dst = dst;
        }
    }
    if (best == SIZE_MAX)
        return;
    snprintf(l->primitive, sizeof l->primitive, "%s", convsel_primitive_name(best));
    l->src_layout = best_src;
    l->dst_layout = best_dst;
    if ((int)prev >= 0 && best_src != prev)
        pair_count[prev][best_src]++;
}

static int push_sample(convsel_reorder_sample **samples, size_t *n, const convsel_reorder_sample *s)
{
    convsel_reorder_sample *grown = realloc(*samples, (*n + 1) * sizeof *grown); /* a few hundred at most */
    if (!grown)
        return -1;
    *samples = grown;
    grown[(*n)++] = *s;
    return 0;
}

static convsel_status probe_network(const convsel_network *network, int threads, const unsigned char *allowed,
                                    double max_time_s, uint64_t seed, convsel_reorder_sample **samples,
                                    size_t *n_samples)
{
    convsel_plan *plan = NULL;
    convsel_status st = convsel_probe_skeleton(network, threads, allowed, &plan);
    if (st != CONVSEL_OK)
        return st;

    int pair_count[CONVSEL_LAYOUT_COUNT][CONVSEL_LAYOUT_COUNT] = {{0}};
    for (size_t i = 0; i < plan->n_layers; i++)
        choose_layer(plan, i, allowed, pair_count);

    convsel_runner *runner = NULL;
    st = convsel_probe_run(plan, max_time_s, CONVSEL_PROBE_MIN_RUNS, seed, &runner);
    /* Only the reorders between connected layers, each the one reorder
     * charged to its layer: not into the first layer, out of the last, or
     * across an unconnected boundary (entry and exit are charged together). */
    for (size_t i = 1; st == CONVSEL_OK && i + 1 < plan->n_layers; i++) {
        const convsel_plan_layer *l = &plan->layers[i], *p = &plan->layers[i - 1];
        if (!l->connected || !plan->layers[i + 1].connected || p->dst_layout == l->src_layout)
            continue;
        double conv_ms, reorder_ms;
        if ((st = convsel_runner_layer_ms(runner, i, &conv_ms, &reorder_ms)) != CONVSEL_OK)
            break;
        if (!(reorder_ms > 0))
            continue;
        convsel_reorder_sample s = {l->problem.mb, l->problem.ic, l->problem.ih, l->problem.iw,
                                    p->dst_layout,  l->src_layout, threads,      reorder_ms};
        if (push_sample(samples, n_samples, &s))
            st = convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    }
    convsel_runner_destroy(runner);
    convsel_plan_destroy(plan);
    return st;
}

convsel_status convsel_reorder_probe(const convsel_network *network, int threads, const unsigned char *allowed,
                                     double max_time_s, uint64_t seed, convsel_reorder_sample **samples,
                                     size_t *n_samples)
{
    if (!network || !allowed || !samples || !n_samples || threads < 1 || !(max_time_s > 0))
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "convsel_reorder_probe: bad arguments");
    convsel_status st = probe_network(network, threads, allowed, max_time_s, seed, samples, n_samples);
    /* A network's reorders all move large tensors, from which no fixed cost
     * per reorder can be told apart from the per-MB line; the small copy's
     * move a few KB, where that cost is most of the time. */
    convsel_network *small = NULL;
    if (st == CONVSEL_OK)
        st = convsel_network_shrunk(network, CONVSEL_REORDER_PROBE_SHRINK, &small);
    if (st == CONVSEL_OK && convsel_network_size(small) > 1) {
        /* A shrunk layer no allowed primitive computes costs only the small
         * samples, not the network's. */
        st = probe_network(small, threads, allowed, max_time_s, seed, samples, n_samples);
        if (st != CONVSEL_OK && st != CONVSEL_OUT_OF_MEMORY) {
            convsel_error_clear();
            st = CONVSEL_OK;
        }
    }
    convsel_network_destroy(small);
    return st;
}
