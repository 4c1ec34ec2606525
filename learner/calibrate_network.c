/* Pricing each primitive's convolutions inside networks on the new CPU from
 * layers timed there against alone (convsel_conv_probe): per model primitive
 * and thread slot, a factor on the time alone and a price per megabyte of
 * weights, kept with the calibration for that CPU. */
#include <math.h>
#include <string.h>

#include "internal.h"
#include "model.h"

/* How many samples' worth of "no change" (a factor of 1, no price) a
 * primitive's own samples are weighed against. */
#define NETWORK_PRIOR_SAMPLES 3.0
/* The factor is kept within [NETWORK_FACTOR_MIN, NETWORK_FACTOR_MAX], the
 * price within [0, NETWORK_MS_PER_MB_MAX] (1 GB/s, slower than any memory). */
#define NETWORK_FACTOR_MIN 0.5
#define NETWORK_FACTOR_MAX 4.0
#define NETWORK_MS_PER_MB_MAX 1.0

/* The plain weights of problem, in MB (what the price is per). */
static double weights_mb(const convsel_problem *problem)
{
    return (double)convsel_problem_weights_elems(problem) * sizeof(float) / 1e6;
}

static const convsel_calibration *network_calibration(const convsel_model *model, const convsel_fingerprint *cpu,
                                                      size_t j)
{
    if (!model || !cpu || j >= CONVSEL_NETWORK_PRIMITIVES)
        return NULL;
    const convsel_calibration *cal = convsel_calibration_find(model, cpu);
    return cal && cal->network_samples > 0 ? cal : NULL;
}

double convsel_model_network_factor(const convsel_model *model, const convsel_fingerprint *cpu, size_t j, int threads)
{
    const convsel_calibration *cal = network_calibration(model, cpu, j);
    double f = cal ? cal->network_factor[j][convsel_reorder_thread_slot(threads)] : 0.0;
    return f > 0 ? f : 1.0;
}

double convsel_model_network_weights_ms(const convsel_model *model, const convsel_fingerprint *cpu, size_t j,
                                        const convsel_problem *problem, int threads)
{
    const convsel_calibration *cal = network_calibration(model, cpu, j);
    if (!cal || !problem)
        return 0.0;
    return cal->network_ms_per_mb[j][convsel_reorder_thread_slot(threads)] * weights_mb(problem);
}

/* Sums of the least-squares fit network = factor × alone + price × weights. */
typedef struct {
    double aa, aw, ww, an, wn; /* Σ alone², alone·w, w², alone·network, w·network */
    size_t n;
} network_sums;

static double clamp(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* Solves for (factor, price) with NETWORK_PRIOR_SAMPLES average samples
 * pulling them towards (1, 0) (ridge), then within bounds: a negative price
 * is refitted as none, a factor out of bounds is clamped and the price
 * refitted with it. */
static void network_solve(const network_sums *s, double *factor, double *price)
{
    const double k = NETWORK_PRIOR_SAMPLES, n = (double)s->n;
    const double ra = k * s->aa / n, rw = k * s->ww / n; /* the prior's weight on each */
    const double aa = s->aa + ra, ww = s->ww + rw, an = s->an + ra, wn = s->wn;
    const double det = aa * ww - s->aw * s->aw;
    double f = det > 0 ? (an * ww - wn * s->aw) / det : an / aa;
    double p = det > 0 ? (aa * wn - s->aw * an) / det : 0.0;
    if (!(p > 0)) {
        p = 0.0;
        f = an / aa;
    }
    if (f < NETWORK_FACTOR_MIN || f > NETWORK_FACTOR_MAX) {
        f = clamp(f, NETWORK_FACTOR_MIN, NETWORK_FACTOR_MAX);
        p = ww > 0 ? (wn - f * s->aw) / ww : 0.0;
    }
    *factor = f;
    *price = clamp(p, 0.0, NETWORK_MS_PER_MB_MAX);
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
            !(s->alone_ms > 0) || !isfinite(s->network_ms) || !isfinite(s->alone_ms) ||
            convsel_problem_validate(&s->problem) != CONVSEL_OK)
            return convsel_error(CONVSEL_INVALID_ARGUMENT, "convolution sample %zu is not a timed layer", i + 1);
    }
    enum { P = CONVSEL_NETWORK_PRIMITIVES, T = CONVSEL_REORDER_MODEL_THREADS };
    network_sums sums[P][T];
    size_t used = 0;
    memset(sums, 0, sizeof sums);
    for (size_t i = 0; i < n; i++) {
        const convsel_conv_sample *s = &samples[i];
        size_t j;
        if (convsel_model_primitive_find(model, convsel_primitive_name(s->primitive), &j) != CONVSEL_OK || j >= P)
            continue;
        network_sums *sum = &sums[j][convsel_reorder_thread_slot(s->threads)];
        const double a = s->alone_ms, w = weights_mb(&s->problem), y = s->network_ms;
        sum->aa += a * a;
        sum->aw += a * w;
        sum->ww += w * w;
        sum->an += a * y;
        sum->wn += w * y;
        sum->n++;
        used++;
    }
    memset(cal->network_factor, 0, sizeof cal->network_factor);
    memset(cal->network_ms_per_mb, 0, sizeof cal->network_ms_per_mb);
    for (size_t j = 0; j < P; j++)
        for (int t = 0; t < T; t++)
            if (sums[j][t].n)
                network_solve(&sums[j][t], &cal->network_factor[j][t], &cal->network_ms_per_mb[j][t]);
    cal->network_samples = used;
    return CONVSEL_OK;
}
