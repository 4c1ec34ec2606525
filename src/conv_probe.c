/* Convolutions timed where a network runs them: each primitive in turn on
 * every layer it computes, inside a plan run end to end, against the same
 * convolution repeated alone; in passes, each primitive keeping the one its
 * layers took least time in. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convsel.h"
#include "internal.h"

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

/* Primitive p on every layer of plan it computes (marked in on), run end to
 * end and each such layer then alone, timings times each: its samples into
 * out (room for the plan's layers), *n_out counting them, and their summed
 * times (in the network and alone) into *total_ms. */
static convsel_status time_pass(convsel_plan *plan, const unsigned char *on, size_t p, double max_time_s,
                                int timings, uint64_t seed, convsel_conv_sample *out, size_t *n_out, double *total_ms)
{
    convsel_runner *runner = NULL;
    convsel_status st = convsel_probe_run(plan, max_time_s, timings, seed, &runner);
    *n_out = 0;
    *total_ms = 0.0;
    for (size_t i = 0; i < plan->n_layers && st == CONVSEL_OK; i++) {
        if (!on[i])
            continue;
        convsel_conv_sample s = {p, plan->threads, 0.0, 0.0, plan->layers[i].problem, 0};
        double reorder_ms;
        if ((st = convsel_runner_layer_ms(runner, i, &s.network_ms, &reorder_ms)) == CONVSEL_OK &&
            (st = convsel_runner_layer_weights_bytes(runner, i, &s.weights_bytes)) == CONVSEL_OK &&
            (st = convsel_runner_layer_alone_ms(runner, i, timings, &s.alone_ms)) == CONVSEL_OK &&
            s.network_ms > 0 && s.alone_ms > 0) {
            out[(*n_out)++] = s;
            *total_ms += s.network_ms + s.alone_ms;
        }
    }
    convsel_runner_destroy(runner);
    return st;
}

/* Declared in internal.h. */
convsel_status convsel_conv_keep_pass(convsel_conv_kept *kept, const convsel_conv_sample *pass, size_t n,
                                      double total_ms, convsel_conv_sample **samples, size_t *n_samples)
{
    if (n == 0)
        return CONVSEL_OK;
    if (kept->count == 0) {
        convsel_conv_sample *grown = realloc(*samples, (*n_samples + n) * sizeof *grown); /* hundreds at most */
        if (!grown)
            return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
        *samples = grown;
        memcpy(grown + *n_samples, pass, n * sizeof *grown);
        *kept = (convsel_conv_kept){*n_samples, n, total_ms};
        *n_samples += n;
    } else if (n == kept->count && total_ms < kept->total_ms) {
        memcpy(*samples + kept->first, pass, n * sizeof *pass);
        kept->total_ms = total_ms;
    }
    return CONVSEL_OK;
}

/* Declared in internal.h. */
convsel_status convsel_conv_probe_passes(const convsel_network *network, int threads, const unsigned char *allowed,
                                         double max_time_s, int passes, int timings, uint64_t seed,
                                         convsel_conv_sample **samples, size_t *n_samples)
{
    if (!network || !allowed || !samples || !n_samples || threads < 1 || !(max_time_s > 0) || passes < 1 ||
        passes > 16 || timings < 1 || timings > 50)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "convsel_conv_probe: bad arguments");
    const size_t n_prims = convsel_primitive_count();
    size_t n_allowed = 0;
    for (size_t p = 0; p < n_prims; p++)
        n_allowed += allowed[p] && !convsel_primitive_is_reference(p);
    convsel_plan *skeleton = NULL, *plan = NULL;
    convsel_status st = convsel_probe_skeleton(network, threads, allowed, &skeleton);
    if (st == CONVSEL_OK)
        st = convsel_probe_skeleton(network, threads, allowed, &plan);
    unsigned char *on = NULL;
    convsel_conv_sample *pass_samples = NULL;
    convsel_conv_kept *kept = NULL;
    if (st == CONVSEL_OK) {
        on = malloc(plan->n_layers);
        pass_samples = malloc(plan->n_layers * sizeof *pass_samples);
        kept = calloc(n_prims, sizeof *kept);
        if (!on || !pass_samples || !kept)
            st = convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    }
    /* The primitives in the same order each pass, so that a primitive's
     * passes lie a whole pass apart. Another process slows whatever part of
     * a pass it overlaps, in the network or alone, so the pass that took
     * least time in all is the one kept; keeping the one of least excess
     * would favour a pass whose times alone were slowed. */
    for (int pass = 0; pass < passes && st == CONVSEL_OK; pass++)
        for (size_t p = 0; p < n_prims && st == CONVSEL_OK; p++) {
            if (!allowed[p] || convsel_primitive_is_reference(p))
                continue;
            for (size_t i = 0; i < plan->n_layers; i++)
                plan->layers[i] = skeleton->layers[i];
            if (put_everywhere(plan, p, on) == 0)
                continue;
            size_t n = 0;
            double total_ms = 0.0;
            st = time_pass(plan, on, p, max_time_s / (double)n_allowed / passes, timings, seed, pass_samples, &n,
                           &total_ms);
            if (st == CONVSEL_OK)
                st = convsel_conv_keep_pass(&kept[p], pass_samples, n, total_ms, samples, n_samples);
        }
    free(kept);
    free(pass_samples);
    free(on);
    convsel_plan_destroy(plan);
    convsel_plan_destroy(skeleton);
    return st;
}

convsel_status convsel_conv_probe(const convsel_network *network, int threads, const unsigned char *allowed,
                                  double max_time_s, uint64_t seed, convsel_conv_sample **samples, size_t *n_samples)
{
    return convsel_conv_probe_passes(network, threads, allowed, max_time_s, CONVSEL_CONV_PROBE_PASSES,
                                     CONVSEL_CONV_PROBE_TIMINGS, seed, samples, n_samples);
}
