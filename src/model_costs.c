/* The learned model as a cost source for the selector. */
#include "internal.h"

static convsel_status model_conv(void *ctx, const convsel_problem *problem, int threads, size_t primitive, double *ms)
{
    const convsel_model_costs *mc = ctx;
    /* A primitive whose library would run another primitive's kernel here
     * costs what that kernel costs: the model learned each kernel's times from
     * the CPU it was trained on, where the library may have chosen otherwise
     * (oneDNN's AVX2 code falls back to im2col + sgemm on shapes its AVX-512
     * code has a direct kernel for). The query shares the layouts' cache. */
    size_t as = primitive;
    if (convsel_primitive_runs_as(primitive, problem, threads, &as) != CONVSEL_OK || mc->ignore_runs_as)
        as = primitive;
    convsel_status st = convsel_model_predict_ms(mc->model, problem, threads, as, &mc->cpu, ms);
    if (st == CONVSEL_NOT_FOUND && as != primitive) /* the model lacks the other one */
        st = convsel_model_predict_ms(mc->model, problem, threads, primitive, &mc->cpu, ms);
    return st;
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
