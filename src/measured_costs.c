/* Costs by measurement: the oracle that exhaustive profiling gives. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct conv_entry {
    char key[300];
    int threads;
    convsel_measurement *results; /* convsel_primitive_count() entries */
};

struct reorder_entry {
    int64_t mb, c, h, w;
    convsel_layout from, to;
    int threads;
    double ms;
};

struct convsel_measured_costs {
    convsel_timing_options opts;
    struct conv_entry *convs;
    size_t n_convs, cap_convs;
    struct reorder_entry *reorders;
    size_t n_reorders, cap_reorders;
    double seconds;
};

convsel_status convsel_measured_costs_create(const convsel_timing_options *opts, convsel_measured_costs **out)
{
    if (!out)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "out-parameter is NULL");
    convsel_measured_costs *mc = calloc(1, sizeof *mc);
    if (!mc)
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    if (opts)
        mc->opts = *opts;
    else
        convsel_timing_options_default(&mc->opts);
    *out = mc;
    return CONVSEL_OK;
}

void convsel_measured_costs_destroy(convsel_measured_costs *mc)
{
    if (!mc)
        return;
    for (size_t i = 0; i < mc->n_convs; i++)
        free(mc->convs[i].results);
    free(mc->convs);
    free(mc->reorders);
    free(mc);
}

double convsel_measured_costs_seconds(const convsel_measured_costs *mc)
{
    return mc ? mc->seconds : 0.0;
}

static void problem_key(const convsel_problem *problem, char *key, size_t size)
{
    convsel_problem copy = *problem;
    copy.name[0] = '\0';
    copy.repeat = 1;
    convsel_problem_format(&copy, key, size);
}

static convsel_status measured_conv(void *ctx, const convsel_problem *problem, int threads, size_t primitive,
                                    double *ms)
{
    convsel_measured_costs *mc = ctx;
    char key[300];
    problem_key(problem, key, sizeof key);
    struct conv_entry *hit = NULL;
    for (size_t i = 0; i < mc->n_convs && !hit; i++)
        if (mc->convs[i].threads == threads && strcmp(mc->convs[i].key, key) == 0)
            hit = &mc->convs[i];
    if (!hit) {
        struct conv_entry *grown = convsel_grow(mc->convs, mc->n_convs, &mc->cap_convs, 32, sizeof *grown);
        if (!grown)
            return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
        mc->convs = grown;
        convsel_measurement *results = calloc(convsel_primitive_count(), sizeof *results);
        if (!results)
            return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
        double t0 = convsel_now();
        convsel_status st = convsel_measure_problem(problem, threads, NULL, &mc->opts, results);
        mc->seconds += convsel_now() - t0;
        if (st != CONVSEL_OK) {
            free(results);
            return st;
        }
        hit = &mc->convs[mc->n_convs++];
        snprintf(hit->key, sizeof hit->key, "%s", key);
        hit->threads = threads;
        hit->results = results;
    }
    if (primitive >= convsel_primitive_count() || !hit->results[primitive].applicable)
        return CONVSEL_NOT_APPLICABLE;
    *ms = hit->results[primitive].timing.median_ms;
    return CONVSEL_OK;
}

struct reorder_run {
    convsel_reorder *reorder;
    const float *src;
    float *dst;
};

static convsel_status reorder_run_once(void *ctx)
{
    struct reorder_run *r = ctx;
    return convsel_reorder_run(r->reorder, r->src, r->dst);
}

static convsel_status measured_reorder(void *ctx, int64_t mb, int64_t c, int64_t h, int64_t w, convsel_layout from,
                                       convsel_layout to, int threads, double *ms)
{
    convsel_measured_costs *mc = ctx;
    for (size_t i = 0; i < mc->n_reorders; i++) {
        const struct reorder_entry *e = &mc->reorders[i];
        if (e->mb == mb && e->c == c && e->h == h && e->w == w && e->from == from && e->to == to &&
            e->threads == threads) {
            *ms = e->ms;
            return CONVSEL_OK;
        }
    }
    struct reorder_entry *grown = convsel_grow(mc->reorders, mc->n_reorders, &mc->cap_reorders, 64, sizeof *grown);
    if (!grown)
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    mc->reorders = grown;
    double t0 = convsel_now();
    size_t in_elems = convsel_layout_elems(from, mb, c, h, w), out_elems = convsel_layout_elems(to, mb, c, h, w);
    struct reorder_run run = {NULL, NULL, NULL};
    float *src = convsel_alloc(in_elems * sizeof(float));
    run.dst = convsel_alloc(out_elems * sizeof(float));
    convsel_status st = (src && run.dst) ? CONVSEL_OK : convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    if (st == CONVSEL_OK) {
        memset(src, 0, in_elems * sizeof(float));
        memset(run.dst, 0, out_elems * sizeof(float));
        run.src = src;
        st = convsel_reorder_create(mb, c, h, w, from, to, threads, &run.reorder);
    }
    convsel_timing timing;
    if (st == CONVSEL_OK) {
        convsel_timed_fn fn = reorder_run_once;
        void *ctxs[1] = {&run};
        st = convsel_time_interleaved(1, &fn, ctxs, &mc->opts, &timing);
    }
    convsel_reorder_destroy(run.reorder);
    convsel_free(src);
    convsel_free(run.dst);
    mc->seconds += convsel_now() - t0;
    if (st != CONVSEL_OK)
        return st;
    struct reorder_entry *e = &mc->reorders[mc->n_reorders++];
    *e = (struct reorder_entry){mb, c, h, w, from, to, threads, timing.median_ms};
    *ms = e->ms;
    return CONVSEL_OK;
}

convsel_cost_source convsel_measured_costs_source(convsel_measured_costs *mc)
{
    convsel_cost_source source = {measured_conv, measured_reorder, mc, "measured", NULL, CONVSEL_STAT_MEDIAN, NULL};
    return source;
}
