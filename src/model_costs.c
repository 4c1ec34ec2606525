/* The learned model as a cost source for the selector. */
#include <stdlib.h>

#include "internal.h"

/* The model learned each kernel's times on the CPU it was trained on, where
 * a library may have chosen another kernel (oneDNN's AVX2 code falls back to
 * im2col + sgemm on shapes its AVX-512 code has a direct kernel for), so a
 * primitive is priced as the kernel it will run. The query shares the
 * layouts' cache. */
size_t convsel_model_costs_priced_as(const convsel_model_costs *mc, const convsel_problem *problem, int threads,
                                     size_t primitive)
{
    size_t as, j;
    if (mc->ignore_runs_as || convsel_primitive_runs_as(primitive, problem, threads, &as) != CONVSEL_OK)
        return primitive;
    /* A library's reference loops: no model prices them (the selector
     * leaves such candidates out where it can). */
    if (as != primitive &&
        (convsel_primitive_is_reference(as) ||
         convsel_model_primitive_find(mc->model, convsel_primitive_name(as), &j) != CONVSEL_OK))
        return primitive;
    return as;
}

/* A prediction alone as a network pays it: plus the layer's weights read
 * from memory, where the model's calibration for the CPU priced them. */
static double in_network_ms(const convsel_model_costs *mc, const convsel_problem *problem, int threads, size_t j,
                            double alone_ms)
{
    return alone_ms + convsel_model_network_weights_ms(mc->model, &mc->cpu, j, problem, threads);
}

static convsel_status model_conv(void *ctx, const convsel_problem *problem, int threads, size_t primitive, double *ms)
{
    const convsel_model_costs *mc = ctx;
    size_t as = convsel_model_costs_priced_as(mc, problem, threads, primitive), j;
    convsel_status st = convsel_model_predict_ms(mc->model, problem, threads, as, &mc->cpu, ms);
    if (st == CONVSEL_OK && convsel_model_primitive_find(mc->model, convsel_primitive_name(as), &j) == CONVSEL_OK)
        *ms = in_network_ms(mc, problem, threads, j, *ms);
    return st;
}

static convsel_status model_reorder(void *ctx, int64_t mb, int64_t c, int64_t h, int64_t w, convsel_layout from,
                                    convsel_layout to, int threads, double *ms)
{
    const convsel_model_costs *mc = ctx;
    /* The model's own lines carry its calibration for the CPU, if any. */
    if (mc->reorders)
        *ms = convsel_reorder_model_predict(mc->reorders, mb, c, h, w, from, to, threads);
    else
        *ms = convsel_model_reorder_ms(mc->model, &mc->cpu, mb, c, h, w, from, to, threads);
    return CONVSEL_OK;
}

static convsel_status model_cold(void *ctx, int64_t mb, int64_t c, int64_t h, int64_t w, convsel_layout layout,
                                 int threads, double *ms)
{
    const convsel_model_costs *mc = ctx;
    *ms = convsel_model_cold_read_ms(mc->model, &mc->cpu, mb, c, h, w, layout, threads);
    return CONVSEL_OK;
}

/* model_conv for many queries, through the model's batch prediction. */
static convsel_status model_conv_batch(void *ctx, size_t n, const convsel_problem *const *problems, int threads,
                                       const size_t *primitives, double *ms, convsel_status *status)
{
    const convsel_model_costs *mc = ctx;
    convsel_model_query *queries = malloc((n ? n : 1) * sizeof *queries);
    size_t *slot = malloc((n ? n : 1) * sizeof *slot);
    double *out = malloc((n ? n : 1) * sizeof *out);
    if (!queries || !slot || !out) {
        free(queries);
        free(slot);
        free(out);
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    }
    size_t m = 0;
    for (size_t k = 0; k < n; k++) {
        size_t j, as = convsel_model_costs_priced_as(mc, problems[k], threads, primitives[k]);
        convsel_status st = convsel_model_primitive_find(mc->model, convsel_primitive_name(as), &j);
        status[k] = st;
        if (st != CONVSEL_OK)
            continue;
        queries[m] = (convsel_model_query){problems[k], threads, j, &mc->cpu};
        slot[m++] = k;
    }
    convsel_status st = m ? convsel_model_predict_batch(mc->model, queries, m, out) : CONVSEL_OK;
    for (size_t i = 0; st == CONVSEL_OK && i < m; i++)
        ms[slot[i]] = in_network_ms(mc, problems[slot[i]], threads, queries[i].primitive, out[i]);
    free(queries);
    free(slot);
    free(out);
    return st;
}

convsel_cost_source convsel_model_costs_source(convsel_model_costs *costs)
{
    convsel_cost_source source = {model_conv, model_reorder, costs, convsel_model_id(costs->model),
                                  model_conv_batch, convsel_model_params(costs->model)->statistic, model_cold};
    return source;
}
