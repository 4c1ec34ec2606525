/* Pricing each primitive's convolutions inside networks on the new CPU from
 * layers timed there against alone (convsel_conv_probe): a factor per model
 * primitive and thread slot, kept with the calibration for that CPU. */
#include <math.h>
#include <string.h>

#include "internal.h"
#include "model.h"

/* How many samples' worth of "no change" (a factor of 1) a primitive's own
 * samples are weighed against. */
#define NETWORK_PRIOR_SAMPLES 3.0
/* The factor is kept within [NETWORK_FACTOR_MIN, NETWORK_FACTOR_MAX]. */
#define NETWORK_FACTOR_MIN 0.5
#define NETWORK_FACTOR_MAX 4.0

double convsel_model_network_factor(const convsel_model *model, const convsel_fingerprint *cpu, size_t j, int threads)
{
    if (!model || !cpu || j >= CONVSEL_NETWORK_PRIMITIVES)
        return 1.0;
    const convsel_calibration *cal = convsel_calibration_find(model, cpu);
    if (!cal || cal->network_samples == 0)
        return 1.0;
    double f = cal->network_factor[j][convsel_reorder_thread_slot(threads)];
    return f > 0 ? f : 1.0;
}

convsel_status convsel_model_calibrate_network(convsel_model *model, const convsel_fingerprint *cpu,
                                               const convsel_conv_sample *samples, size_t n)
{
    if (!model || !cpu || (n && !samples))
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "convsel_model_calibrate_network: NULL argument");
    convsel_calibration *cal = convsel_calibration_find(model, cpu);
    if (!cal)
        return convsel_error(CONVSEL_NOT_FOUND, "the model has no calibration for %s to add network factors to",
                             cpu->model_name);
    for (size_t i = 0; i < n; i++) {
        const convsel_conv_sample *s = &samples[i];
        if (s->primitive >= convsel_primitive_count() || s->threads < 1 || !(s->network_ms > 0) ||
            !(s->alone_ms > 0) || !isfinite(s->network_ms) || !isfinite(s->alone_ms))
            return convsel_error(CONVSEL_INVALID_ARGUMENT, "convolution sample %zu is not a timed layer", i + 1);
    }
    enum { P = CONVSEL_NETWORK_PRIMITIVES, T = CONVSEL_REORDER_MODEL_THREADS };
    double log_sum[P][T];
    size_t count[P][T], used = 0;
    memset(log_sum, 0, sizeof log_sum);
    memset(count, 0, sizeof count);
    for (size_t i = 0; i < n; i++) {
        size_t j;
        if (convsel_model_primitive_find(model, convsel_primitive_name(samples[i].primitive), &j) != CONVSEL_OK ||
            j >= P)
            continue;
        int t = convsel_reorder_thread_slot(samples[i].threads);
        log_sum[j][t] += log(samples[i].network_ms / samples[i].alone_ms);
        count[j][t]++;
        used++;
    }
    memset(cal->network_factor, 0, sizeof cal->network_factor);
    const double lo = log(NETWORK_FACTOR_MIN), hi = log(NETWORK_FACTOR_MAX);
    for (size_t j = 0; j < P; j++)
        for (int t = 0; t < T; t++) {
            if (!count[j][t])
                continue;
            double f = log_sum[j][t] / ((double)count[j][t] + NETWORK_PRIOR_SAMPLES);
            cal->network_factor[j][t] = exp(f < lo ? lo : f > hi ? hi : f);
        }
    cal->network_samples = used;
    return CONVSEL_OK;
}
