/* Calibrating the model's reorder lines to reorders timed inside networks on
 * the new CPU (convsel_reorder_probe): a factor per layout pair and thread
 * slot, kept with the calibration for that CPU. */
#include <math.h>
#include <string.h>

#include "internal.h"
#include "model.h"

/* How many samples' worth of its thread slot's scale a pair's own scale
 * starts from: a pair timed once moves a quarter of the way to its sample. */
#define PAIR_PRIOR_SAMPLES 3.0
/* The factor is kept within [1/REORDER_SCALE_MAX, REORDER_SCALE_MAX]. */
#define REORDER_SCALE_MAX 50.0

static double clamp_scale(double log_scale)
{
    double bound = log(REORDER_SCALE_MAX);
    return exp(log_scale < -bound ? -bound : log_scale > bound ? bound : log_scale);
}

double convsel_calibration_reorder_scale(const convsel_model *model, const convsel_fingerprint *cpu,
                                         convsel_layout from, convsel_layout to, int threads)
{
    if (!model || !cpu || (int)from < 0 || from >= CONVSEL_LAYOUT_COUNT || (int)to < 0 || to >= CONVSEL_LAYOUT_COUNT)
        return 1.0;
    const convsel_calibration *cal = convsel_calibration_find(model, cpu);
    if (!cal || cal->reorder_samples == 0)
        return 1.0;
    double s = cal->reorder_scale[from][to][convsel_reorder_thread_slot(threads)];
    return s > 0 ? s : 1.0;
}

double convsel_model_reorder_ms(const convsel_model *model, const convsel_fingerprint *cpu, int64_t mb, int64_t c,
                                int64_t h, int64_t w, convsel_layout from, convsel_layout to, int threads)
{
    return convsel_reorder_model_predict(model ? model->reorders : NULL, mb, c, h, w, from, to, threads) *
           convsel_calibration_reorder_scale(model, cpu, from, to, threads);
}

convsel_status convsel_model_calibrate_reorders(convsel_model *model, const convsel_fingerprint *cpu,
                                                const convsel_reorder_sample *samples, size_t n)
{
    if (!model || !cpu || (n && !samples))
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "convsel_model_calibrate_reorders: NULL argument");
    convsel_calibration *cal = convsel_calibration_find(model, cpu);
    if (!cal)
        return convsel_error(CONVSEL_NOT_FOUND, "the model has no calibration for %s to add reorders to",
                             cpu->model_name);
    enum { L = CONVSEL_LAYOUT_COUNT, T = CONVSEL_REORDER_MODEL_THREADS };
    double slot_sum[T] = {0}, pair_sum[L][L][T];
    size_t slot_n[T] = {0}, pair_n[L][L][T], used = 0;
    memset(pair_sum, 0, sizeof pair_sum);
    memset(pair_n, 0, sizeof pair_n);
    for (size_t i = 0; i < n; i++) {
        const convsel_reorder_sample *s = &samples[i];
        if ((int)s->from < 0 || (int)s->from >= L || (int)s->to < 0 || (int)s->to >= L || s->from == s->to ||
            s->mb < 1 || s->c < 1 || s->h < 1 || s->w < 1 || s->threads < 1 || !(s->ms > 0) || !isfinite(s->ms))
            return convsel_error(CONVSEL_INVALID_ARGUMENT, "reorder sample %zu is not a timed reorder", i + 1);
        double line = convsel_reorder_model_predict(model->reorders, s->mb, s->c, s->h, s->w, s->from, s->to,
                                                    s->threads);
        if (!(line > 0))
            continue;
        double r = log(s->ms / line);
        int t = convsel_reorder_thread_slot(s->threads);
        slot_sum[t] += r;
        slot_n[t]++;
        pair_sum[s->from][s->to][t] += r;
        pair_n[s->from][s->to][t]++;
        used++;
    }
    /* A thread slot's pairs scale by their own samples, shrunk towards the
     * slot's mean (pairs never timed take the slot's mean itself); slots
     * never timed keep the lines as they are. */
    memset(cal->reorder_scale, 0, sizeof cal->reorder_scale);
    for (int t = 0; t < T; t++) {
        cal->reorder_by_threads[t] = 0.0;
        if (!slot_n[t])
            continue;
        double slot_mean = slot_sum[t] / (double)slot_n[t];
        cal->reorder_by_threads[t] = clamp_scale(slot_mean);
        for (int f = 0; f < L; f++)
            for (int g = 0; g < L; g++)
                if (f != g)
                    cal->reorder_scale[f][g][t] = clamp_scale((pair_sum[f][g][t] + PAIR_PRIOR_SAMPLES * slot_mean) /
                                                              ((double)pair_n[f][g][t] + PAIR_PRIOR_SAMPLES));
    }
    cal->reorder_samples = used;
    return CONVSEL_OK;
}
