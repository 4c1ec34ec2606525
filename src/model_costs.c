/* The learned model as a cost source for the selector. */
#include "internal.h"

static convsel_status model_conv(void *ctx, const convsel_problem *problem, int threads, size_t primitive, double *ms)
{
    const convsel_model_costs *mc = ctx;
    return convsel_model_predict_ms(mc->model, problem, threads, primitive, &mc->cpu, ms);
}

static convsel_status model_reorder(void *ctx, int64_t mb, int64_t c, int64_t h, int64_t w, convsel_layout from,
                                    convsel_layout to, int threads, double *ms)
{
    const convsel_model_costs *mc = ctx;
    const convsel_reorder_model *rm = mc->reorders ? mc->reorders : convsel_model_reorders(mc->model);
    *ms = convsel_reorder_model_predict(rm, mb, c, h, w, from, to, threads);
    return CONVSEL_OK;
}

convsel_cost_source convsel_model_costs_source(convsel_model_costs *costs)
{
    convsel_cost_source source = {model_conv, model_reorder, costs, convsel_model_id(costs->model)};
    return source;
}
