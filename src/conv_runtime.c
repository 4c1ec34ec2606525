/* Learned dispatch for one convolution at a time. */
#include <float.h>
#include <stdlib.h>

#include "internal.h"

struct convsel_selector {
    convsel_model_costs costs;
};

struct convsel_conv {
    convsel_instance *instance;
    size_t primitive;
    double predicted_ms;
};

convsel_status convsel_selector_create(const convsel_model *model, convsel_selector **selector)
{
    if (!model || !selector)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "convsel_selector_create: model and selector are required");
    convsel_selector *s = calloc(1, sizeof *s);
    if (!s)
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    s->costs.model = model;
    convsel_status st = convsel_fingerprint_get(&s->costs.cpu);
    if (st != CONVSEL_OK) {
        free(s);
        return st;
    }
    *selector = s;
    return CONVSEL_OK;
}

void convsel_selector_destroy(convsel_selector *selector)
{
    free(selector);
}

convsel_status convsel_conv_create(convsel_selector *selector, const convsel_problem *problem, int threads,
                                   const float *weights, convsel_conv **conv)
{
    if (!selector || !problem || !weights || !conv)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "convsel_conv_create: missing arguments");
    *conv = NULL;
    convsel_status st = convsel_problem_validate(problem);
    if (st != CONVSEL_OK)
        return st;
    convsel_cost_source source = convsel_model_costs_source(&selector->costs);
    size_t best = SIZE_MAX;
    double best_ms = DBL_MAX;
    for (size_t i = 0; i < convsel_primitive_count(); i++) {
        double ms;
        if (convsel_primitive_is_reference(i) || !convsel_primitive_applicable(i, problem, NULL, 0))
            continue;
        if (source.conv_ms(source.ctx, problem, threads, i, &ms) == CONVSEL_OK && ms < best_ms) {
            best_ms = ms;
            best = i;
        }
    }
    if (best == SIZE_MAX)
        return convsel_error(CONVSEL_NOT_APPLICABLE, "'%s': no primitive the model knows computes this layer",
                             problem->name);
    convsel_conv *c = calloc(1, sizeof *c);
    if (!c)
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    st = convsel_instance_create(best, problem, threads, weights, &c->instance);
    if (st != CONVSEL_OK) {
        free(c);
        return st;
    }
    c->primitive = best;
    c->predicted_ms = best_ms;
    *conv = c;
    return CONVSEL_OK;
}

convsel_status convsel_conv_run(convsel_conv *conv, const float *src, float *dst)
{
    if (!conv)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "conv is NULL");
    return convsel_instance_run(conv->instance, src, dst);
}

void convsel_conv_destroy(convsel_conv *conv)
{
    if (!conv)
        return;
    convsel_instance_destroy(conv->instance);
    free(conv);
}

const char *convsel_conv_primitive(const convsel_conv *conv)
{
    return convsel_primitive_name(conv->primitive);
}

convsel_layout convsel_conv_src_layout(const convsel_conv *conv)
{
    return convsel_instance_src_layout(conv->instance);
}

convsel_layout convsel_conv_dst_layout(const convsel_conv *conv)
{
    return convsel_instance_dst_layout(conv->instance);
}

double convsel_conv_predicted_ms(const convsel_conv *conv)
{
    return conv->predicted_ms;
}
