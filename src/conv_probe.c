/* Convolutions timed where a network runs them: each primitive in turn on
 * every layer it computes, inside a plan run end to end, against the same
 * convolution repeated alone. */
#include <stdio.h>
#include <stdlib.h>

#include "convsel.h"
#include "internal.h"

/* Repetitions of a layer alone; the median is kept (5: the fit sums hundreds of layers). */
#define ALONE_REPS 5

/* Puts primitive p on every layer of plan it computes with a kernel of its
 * own (not a library's reference loops), marking them in on; returns how
 * many. */
static size_t put_everywhere(convsel_plan *plan, size_t p, unsigned char *on)
{
    size_t n = 0;
    for (size_t i = 0; i < plan->n_layers; i++) {
        convsel_plan_layer *l = &plan->layers[i];
        convsel_layout src, dst;
        on[i] = convsel_primitive_applicable(p, &l->problem, NULL, 0) &&
                !convsel_select_runs_naive(p, &l->problem, plan->threads) &&
                convsel_primitive_layouts_for(p, &l->problem, plan->threads, &src, &dst) == CONVSEL_OK;
        if (!on[i])
            continue;
        snprintf(l->primitive, sizeof l->primitive, "%s", convsel_primitive_name(p));
        l->src_layout = src;
        l->dst_layout = dst;
        n++;
    }
    return n;
}

static convsel_status push_sample(convsel_conv_sample **samples, size_t *n, const convsel_conv_sample *s)
{
    convsel_conv_sample *grown = realloc(*samples, (*n + 1) * sizeof *grown); /* hundreds at most */
    if (!grown)
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    *samples = grown;
    grown[(*n)++] = *s;
    return CONVSEL_OK;
}

convsel_status convsel_conv_probe(const convsel_network *network, int threads, const unsigned char *allowed,
                                  double max_time_s, uint64_t seed, convsel_conv_sample **samples, size_t *n_samples)
{
    if (!network || !allowed || !samples || !n_samples || threads < 1 || !(max_time_s > 0))
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "convsel_conv_probe: bad arguments");
    const size_t n_prims = convsel_primitive_count();
    size_t n_allowed = 0;
    for (size_t p = 0; p < n_prims; p++)
        n_allowed += allowed[p] && !convsel_primitive_is_reference(p);
    convsel_plan *skeleton = NULL, *plan = NULL;
    convsel_status st = convsel_probe_skeleton(network, threads, allowed, &skeleton);
    if (st == CONVSEL_OK)
        st = convsel_probe_skeleton(network, threads, allowed, &plan);
    unsigned char *on = st == CONVSEL_OK ? malloc(plan->n_layers) : NULL;
    if (st == CONVSEL_OK && !on)
        st = convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    for (size_t p = 0; p < n_prims && st == CONVSEL_OK; p++) {
        if (!allowed[p] || convsel_primitive_is_reference(p))
            continue;
        for (size_t i = 0; i < plan->n_layers; i++)
            plan->layers[i] = skeleton->layers[i];
        if (put_everywhere(plan, p, on) == 0)
            continue;
        convsel_runner *runner = NULL;
        st = convsel_probe_run(plan, max_time_s / (double)n_allowed, seed, &runner);
        for (size_t i = 0; i < plan->n_layers && st == CONVSEL_OK; i++) {
            if (!on[i])
                continue;
            convsel_conv_sample s = {p, threads, 0.0, 0.0, plan->layers[i].problem};
            double reorder_ms;
            if ((st = convsel_runner_layer_ms(runner, i, &s.network_ms, &reorder_ms)) == CONVSEL_OK &&
                (st = convsel_runner_layer_alone_ms(runner, i, ALONE_REPS, &s.alone_ms)) == CONVSEL_OK &&
                s.network_ms > 0 && s.alone_ms > 0)
                st = push_sample(samples, n_samples, &s);
        }
        convsel_runner_destroy(runner);
    }
    free(on);
    convsel_plan_destroy(plan);
    convsel_plan_destroy(skeleton);
    return st;
}
