/* Pricing cold reads on the new CPU from layers timed inside networks
 * against alone (convsel_cold_probe): a price per megabyte per thread slot,
 * kept with the calibration for that CPU. */
#include <math.h>
#include <string.h>

#include "internal.h"
#include "model.h"

/* No cold read is priced above this (1 GB/s, slower than any memory). */
#define COLD_MS_PER_MB_MAX 1.0

static double input_mb(int64_t mb, int64_t c, int64_t h, int64_t w, convsel_layout layout)
{
    return (double)convsel_layout_elems(layout, mb, c, h, w) * sizeof(float) / 1e6;
}

double convsel_model_cold_read_ms(const convsel_model *model, const convsel_fingerprint *cpu, int64_t mb, int64_t c,
                                  int64_t h, int64_t w, convsel_layout layout, int threads)
{
    if (!model || !cpu || (int)layout < 0 || layout >= CONVSEL_LAYOUT_COUNT || mb < 1 || c < 1 || h < 1 || w < 1)
        return 0.0;
    const convsel_calibration *cal = convsel_calibration_find(model, cpu);
    if (!cal || cal->cold_samples == 0)
        return 0.0;
    return cal->cold_ms_per_mb[convsel_reorder_thread_slot(threads)] * input_mb(mb, c, h, w, layout);
}

convsel_status convsel_model_calibrate_cold(convsel_model *model, const convsel_fingerprint *cpu,
                                            const convsel_cold_sample *samples, size_t n)
{
    if (!model || !cpu || (n && !samples))
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "convsel_model_calibrate_cold: NULL argument");
    convsel_calibration *cal = convsel_calibration_find(model, cpu);
    if (!cal)
        return convsel_error(CONVSEL_NOT_FOUND, "the model has no calibration for %s to add cold reads to",
                             cpu->model_name);
    for (size_t i = 0; i < n; i++) {
        const convsel_cold_sample *s = &samples[i];
        if ((int)s->layout < 0 || (int)s->layout >= CONVSEL_LAYOUT_COUNT || s->mb < 1 || s->c < 1 || s->h < 1 ||
            s->w < 1 || s->threads < 1 || !isfinite(s->excess_ms))
            return convsel_error(CONVSEL_INVALID_ARGUMENT, "cold-read sample %zu is not a timed reorder", i + 1);
    }
    /* Per thread slot, all its samples' excess over all their megabytes:
     * a large tensor counts for more than a small one, whose excess is
     * mostly timer noise. */
    enum { T = CONVSEL_REORDER_MODEL_THREADS };
    double excess[T] = {0}, megabytes[T] = {0};
    size_t used[T] = {0};
    for (size_t i = 0; i < n; i++) {
        const convsel_cold_sample *s = &samples[i];
        int t = convsel_reorder_thread_slot(s->threads);
        cal->threads_mask |= convsel_threads_bit(s->threads);
        excess[t] += s->excess_ms;
        megabytes[t] += input_mb(s->mb, s->c, s->h, s->w, s->layout);
        used[t]++;
    }
    cal->cold_samples = 0;
    for (int t = 0; t < T; t++) {
        cal->cold_ms_per_mb[t] = 0.0;
        if (!used[t])
            continue;
        cal->cold_ms_per_mb[t] = convsel_price_per_mb(excess[t], megabytes[t], 0.0, COLD_MS_PER_MB_MAX);
        cal->cold_samples += used[t];
    }
    return CONVSEL_OK;
}
