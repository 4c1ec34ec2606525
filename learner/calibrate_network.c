/* Pricing the weights of each primitive's convolutions inside networks on
 * the new CPU from layers timed there against alone (convsel_conv_probe): a
 * price per megabyte of weights per model primitive and thread slot, kept
 * with the calibration for that CPU. */
#include <math.h>
#include <string.h>

#include "internal.h"
#include "model.h"

/* A primitive's samples are weighed against this many megabytes of weights
 * read for free, so that a few small layers' timer noise prices nothing. */
#define NETWORK_PRIOR_MB 1.0
/* No price above this (1 GB/s, slower than any memory). */
#define NETWORK_MS_PER_MB_MAX 1.0

/* The plain weights of problem, in MB (what the price is per). */
static double weights_mb(const convsel_problem *problem)
{
    return (double)convsel_problem_weights_elems(problem) * sizeof(float) / 1e6;
}

double convsel_model_network_weights_ms(const convsel_model *model, const convsel_fingerprint *cpu, size_t j,
                                        const convsel_problem *problem, int threads)
{
    if (!model || !cpu || !problem || j >= CONVSEL_NETWORK_PRIMITIVES)
        return 0.0;
    const convsel_calibration *cal = convsel_calibration_find(model, cpu);
    if (!cal || cal->network_samples == 0)
        return 0.0;
    return cal->network_ms_per_mb[j][convsel_reorder_thread_slot(threads)] * weights_mb(problem);
}

convsel_status convsel_model_calibrate_network(convsel_model *model, const convsel_fingerprint *cpu,
                                               const convsel_conv_sample *samples, size_t n)
{
    if (!model || !cpu || (n && !samples))
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "convsel_model_calibrate_network: NULL argument");
    convsel_calibration *cal = convsel_calibration_find(model, cpu);
    if (!cal)
        return convsel_error(CONVSEL_NOT_FOUND, "the model has no calibration for %s to add weights prices to",
                             cpu->model_name);
    for (size_t i = 0; i < n; i++) {
        const convsel_conv_sample *s = &samples[i];
        if (s->primitive >= convsel_primitive_count() || s->threads < 1 || !(s->network_ms > 0) ||
            !(s->alone_ms > 0) || !isfinite(s->network_ms) || !isfinite(s->alone_ms) ||
            convsel_problem_validate(&s->problem) != CONVSEL_OK)
            return convsel_error(CONVSEL_INVALID_ARGUMENT, "convolution sample %zu is not a timed layer", i + 1);
    }
    /* Per primitive and thread slot, all its samples' excess over all their
     * megabytes: a layer of large weights counts for more than one of small
     * weights, whose excess is mostly timer noise or what its activations
     * cost. */
    enum { P = CONVSEL_NETWORK_PRIMITIVES, T = CONVSEL_REORDER_MODEL_THREADS };
    double excess[P][T], megabytes[P][T];
    size_t count[P][T], used = 0;
    memset(excess, 0, sizeof excess);
    memset(megabytes, 0, sizeof megabytes);
    memset(count, 0, sizeof count);
    for (size_t i = 0; i < n; i++) {
        const convsel_conv_sample *s = &samples[i];
        size_t j;
        if (convsel_model_primitive_find(model, convsel_primitive_name(s->primitive), &j) != CONVSEL_OK || j >= P)
            continue;
        int t = convsel_reorder_thread_slot(s->threads);
        cal->threads_mask |= convsel_threads_bit(s->threads);
        excess[j][t] += s->network_ms - s->alone_ms;
        megabytes[j][t] += weights_mb(&s->problem);
        count[j][t]++;
        used++;
    }
    memset(cal->network_ms_per_mb, 0, sizeof cal->network_ms_per_mb);
    for (size_t j = 0; j < P; j++)
        for (int t = 0; t < T; t++) {
            if (!count[j][t])
                continue;
            cal->network_ms_per_mb[j][t] =
                convsel_price_per_mb(excess[j][t], megabytes[j][t], NETWORK_PRIOR_MB, NETWORK_MS_PER_MB_MAX);
        }
    cal->network_samples = used;
    return CONVSEL_OK;
}
